# The lockfile schema's validator in C, generated from the schema at build
# time (tools/schema-gen.py): loading a lock neither parses the 52 KB schema
# nor interprets it (bench/RESULTS.md, issue 13). The C goes into the build
# folder, never the tree; the interpreter it transcribes stays with the
# tests as the reference (tests/schema/, tests/unit/test_schema.c).

SCHEMA_GEN := tools/schema-gen.py

$(BUILD)/gen/lock_schema.c: schemas/envlock.lock.schema.json $(SCHEMA_GEN)
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@python3 $(SCHEMA_GEN) schemas/envlock.lock.schema.json el_schema_check_lock $@

$(BUILD)/gen/lock_schema.o: $(BUILD)/gen/lock_schema.c $(BUILD)/CFLAGS lib/lock/schema.h lib/lock/schema_rt.h
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libenvlock.a: $(BUILD)/gen/lock_schema.o
