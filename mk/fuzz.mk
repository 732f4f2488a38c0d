# Fuzzing (issue 17): one libFuzzer harness per parser of outside data in
# tests/fuzz/fuzz_<target>.c, each with its seed corpus in
# tests/fuzz/corpus/<target>/ (tests/fuzz/mkseeds.py, from the fixtures),
# what campaigns found that adds coverage in tests/fuzz/found/<target>/
# (libFuzzer -merge=1), its reproducers of past crashes in
# tests/fuzz/crashes/<target>/ and, where one helps, tests/fuzz/dict/<target>.dict.
#
#   make fuzz FUZZ_SECONDS=N   builds them with clang's libFuzzer, ASan and
#                              UBSan (build/fuzz) and runs each for N seconds,
#                              one at a time, at nice 10; new inputs go to
#                              build/fuzz/corpus/<target>, crashes to build/fuzz/crashes
#        FUZZ_RUNS=M           ends each target after M inputs instead, if
#                              that comes before the N seconds
#   make fuzz-replay           the same harnesses with a plain main (replay.c)
#                              under gcc's ASan and UBSan: what `make check`
#                              runs over the corpus and the crashes (t0095)

FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?= -1
FUZZ_CC      ?= clang
FUZZ_SAN     := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_HDR     := tests/fuzz/fuzz.h $(wildcard lib/*/*.h include/envlock/*.h)
# where a plain build keeps its sanitized library for the replay; a sanitized build (make asan) uses its own
REPLAY_BUILD := $(if $(findstring -fsanitize=address,$(EXTRA_CFLAGS)),$(BUILD),$(BUILD)/sanitized)

.PHONY: fuzz fuzz-build fuzz-bins fuzz-replay fuzz-replay-bins
.PRECIOUS: $(BUILD)/fuzz/fuzz_%.o

# the harnesses of this BUILD: libFuzzer's main (clang) or replay.c's
$(BUILD)/fuzz/common.o: tests/fuzz/common.c $(FUZZ_HDR) $(BUILD)/CFLAGS
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/replay.o: tests/fuzz/replay.c $(FUZZ_HDR) $(BUILD)/CFLAGS
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/fuzz_%.o: tests/fuzz/fuzz_%.c $(FUZZ_HDR) $(BUILD)/CFLAGS
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/fuzz/bin/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/common.o $(BUILD)/libenvlock.a
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	@$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/fuzz/common.o $(BUILD)/libenvlock.a $(LIBS)

$(BUILD)/fuzz/replay/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/common.o $(BUILD)/fuzz/replay.o $(BUILD)/libenvlock.a
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	@$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/fuzz/common.o $(BUILD)/fuzz/replay.o $(BUILD)/libenvlock.a $(LIBS)

fuzz-bins: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/bin/fuzz_%)
fuzz-replay-bins: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay/fuzz_%)

fuzz-build:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz: needs $(FUZZ_CC) and libclang-rt-14-dev (make deps)"; exit 2; }
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) \
	  EXTRA_CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" fuzz-bins

fuzz: fuzz-build
	@mkdir -p build/fuzz/crashes && : >build/fuzz/summary.tsv
	@failed=; for t in $(FUZZ_TARGETS); do \
	  mkdir -p build/fuzz/corpus/$$t; \
	  dict=; [ -f tests/fuzz/dict/$$t.dict ] && dict=-dict=tests/fuzz/dict/$$t.dict; \
	  echo "  FUZZ    $$t ($(FUZZ_SECONDS) s)"; \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp nice -n 10 build/fuzz/fuzz/bin/fuzz_$$t \
	    -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $$dict \
	    -artifact_prefix=build/fuzz/crashes/$$t- build/fuzz/corpus/$$t \
	    $$(for d in tests/fuzz/corpus/$$t tests/fuzz/found/$$t tests/fuzz/crashes/$$t; do [ -d $$d ] && echo $$d; done) \
	    >build/fuzz/$$t.log 2>&1 || { tail -n 40 build/fuzz/$$t.log; echo "make fuzz: $$t crashed (build/fuzz/$$t.log)"; failed="$$failed $$t"; }; \
	  printf '%s\t%s\t%s\t%s\n' $$t \
	    "$$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$$t.log)" \
	    "$$(sed -n 's/^stat::average_exec_per_sec: *//p' build/fuzz/$$t.log)" \
	    "$$(grep -o 'cov: [0-9]* ft: [0-9]*' build/fuzz/$$t.log | tail -n 1)" | tee -a build/fuzz/summary.tsv; \
	done; \
	if [ -n "$$failed" ]; then echo "make fuzz: crashes in$$failed: reproducers in build/fuzz/crashes"; exit 1; fi

# the replay binaries land in $(BUILD)/fuzz-replay/ whatever library they were linked with
fuzz-replay:
	@$(MAKE) --no-print-directory BUILD=$(REPLAY_BUILD) \
	  EXTRA_CFLAGS="$(if $(findstring -fsanitize=address,$(EXTRA_CFLAGS)),$(EXTRA_CFLAGS),$(FUZZ_SAN))" fuzz-replay-bins
	@mkdir -p $(BUILD)/fuzz-replay
	@for t in $(FUZZ_TARGETS); do cp -f $(REPLAY_BUILD)/fuzz/replay/fuzz_$$t $(BUILD)/fuzz-replay/fuzz_$$t.new && \
	  mv -f $(BUILD)/fuzz-replay/fuzz_$$t.new $(BUILD)/fuzz-replay/fuzz_$$t || exit 1; done
