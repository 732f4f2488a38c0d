# envlock's knowledge, compiled in: lib/knowledge/builtin.c includes every
# table file of knowledge/ through a list written here, with the digest of
# the files (their paths and bytes: what a lock's checks.rules covers), so
# a file added is compiled in without an edit and no process hashes the
# 330 KB again. Both are rewritten only when a file comes, goes or changes.

comma := ,
KB_FILES := $(sort $(wildcard knowledge/*/*.json))
# Tables only fix hints and install commands read (verify's hints, solve's
# commands, restore's notes): no finding of check depends on them, so they
# stay out of the digest a lock's checks.rules names, and a lock saved
# before one came names the same knowledge. A table check reads never
# goes here.
KB_HINTS := knowledge/openmmlab/mmcv_builds.json knowledge/pytorch/torch_sources.json \
	knowledge/nvidia/nvidia_archives.json
KB_DIGESTED := $(filter-out $(KB_HINTS),$(KB_FILES))

$(BUILD)/gen/knowledge_tables.h: FORCE
	@mkdir -p $(dir $@)
	@{ printf '%s\n' $(foreach f,$(KB_FILES),'EL_KB_TABLE($(word 2,$(subst /, ,$(f)))$(comma) $(basename $(notdir $(f)))$(comma) $(if $(filter $(f),$(KB_HINTS)),0,1))'); \
	  printf '#define EL_KB_DIGEST "%s"\n' "$$(for f in $(KB_DIGESTED); do printf '%s\000' $$f; cat $$f; done | sha256sum | cut -c1-64)"; \
	} >$@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else echo "  GEN     $@"; mv $@.new $@; fi

$(BUILD)/lib/knowledge/builtin.o: $(KB_FILES) $(BUILD)/gen/knowledge_tables.h
$(BUILD)/lib/knowledge/builtin.o: override EXTRA_CFLAGS += -I$(BUILD)/gen
