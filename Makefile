# envlock — one Makefile: library, CLI, tests, sanitizer run, benchmarks.

CC      ?= cc
PKGS    := libcjson libcrypto libgit2 libarchive libzstd
DEBS    := build-essential pkg-config libgit2-dev libssl-dev libcjson-dev \
           libarchive-dev libzstd-dev libcmocka-dev python3 python3-jsonschema python3-yaml \
           libacl1-dev liblz4-dev python3-torch zstd python3-venv \
           python3-pip python3-setuptools python3-wheel conda-package-handling \
           clang-14 libclang-rt-14-dev
# For the report tests only (tests/cli/t004*): pdflatex with booktabs, pdftotext,
# headless Chromium and GitHub's Markdown renderer. Large (~450 MB), so a failed
# install is reported and those tests skip, saying why.
# make static (musl, Debian's source packages unpacked by dpkg-source, CMake for
# libgit2 and libarchive), the install test (mandoc, zsh) and the fleet test (Slurm)
STATIC_DEBS := musl-tools musl-dev linux-libc-dev dpkg-dev cmake g++
TOOL_DEBS   := mandoc zsh bash-completion slurm-wlm munge
REPORT_DEBS := texlive-latex-base texlive-latex-recommended poppler-utils chromium cmark-gfm
BUILD   ?= build

# Warnings are errors for developers and CI (git's DEVELOPER=1 habit): on in
# a git checkout, off in a release tarball, so a packager's newer compiler
# cannot fail the build over a new warning. Override with DEVELOPER=0 or 1.
DEVELOPER ?= $(if $(wildcard .git),1,0)
WARN    := -std=c11 -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
           -Wshadow -Wwrite-strings -Wvla $(if $(filter 1,$(DEVELOPER)),-Werror)
# CPPFLAGS, CFLAGS and LDFLAGS are the packager's (dpkg-buildflags sets all three)
CFLAGS  ?= -O2 -g
# the libraries' flags; `make static` gives its own prefix's instead (mk/static.mk)
PKG_CFLAGS ?= $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   ?= $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS = $(WARN) $(CPPFLAGS) $(CFLAGS) -D_GNU_SOURCE -fvisibility=hidden -Iinclude -Ilib \
           $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LIBS    = $(LDFLAGS) $(PKG_LIBS) -lpthread -lm

LIB_SRC := $(sort $(wildcard lib/*/*.c))
CMD_SRC := $(sort $(wildcard cmd/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ := $(CMD_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
HEADERS := $(sort $(wildcard include/envlock/*.h))

.PHONY: FORCE all deps deps-install run test check asan bench bench-check clean fixtures header-test

all: $(BUILD)/envlock

# Install the Debian packages the build and tests need; quiet when all are there.
deps:
	@$(MAKE) --no-print-directory deps-install PKGS_WANTED="$(DEBS) $(STATIC_DEBS) $(TOOL_DEBS)"
	@if [ "$$(id -u)" = 0 ]; then sh tools/deb-src.sh && sh tools/non-free.sh && \
	  { apt-cache showsrc zlib 2>/dev/null | grep -q '^Package:' || apt-get update -qq; } && \
	  { apt-cache show nvidia-smi >/dev/null 2>&1 || apt-get update -qq; }; \
	else echo "make deps: not root; make static needs a deb-src entry (tools/deb-src.sh as root), t0072 non-free (tools/non-free.sh)"; fi
	@$(MAKE) --no-print-directory deps-install PKGS_WANTED="$(REPORT_DEBS)" || \
	  echo "make deps: could not install $(REPORT_DEBS); the report tests that need them will skip"

deps-install:
	@missing=""; for p in $(PKGS_WANTED); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# Objects are rebuilt when the flags change (git's GIT-CFLAGS): a tree built
# with DEVELOPER=0 is rebuilt, not reused, by `make check`.
$(BUILD)/CFLAGS: FORCE
	@mkdir -p $(BUILD)
	@echo '$(subst ','\'',$(CC) $(ALL_CFLAGS))' > $@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

$(BUILD)/%.o: %.c $(BUILD)/CFLAGS $(wildcard include/envlock/*.h lib/*/*.h cmd/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

# the rules and knowledge files (mk/knowledge.mk), the nvidia/cuda tag list and the Miniconda installers are compiled into the library
$(BUILD)/lib/rules/builtin.o: rules/envlock.rules.json
$(BUILD)/lib/export/cudatags.o: data/nvidia-cuda-tags.json
$(BUILD)/lib/export/dockerfile.o: data/miniconda-installers.json
$(BUILD)/lib/restore/runfiles.o: rules/cuda-runfiles.json
# and so is verify's CUDA training program (mlp.h is a dependency of every object already)
$(BUILD)/lib/verify/kernel.o: lib/verify/mlp.cu
$(BUILD)/lib/verify/cudnn.o: lib/verify/programs/cudnn_load.c
$(BUILD)/lib/verify/pyenv.o: lib/verify/programs/envcheck.py

$(BUILD)/libenvlock.a: $(LIB_OBJ)
	@rm -f $@
	@echo "  AR      $@"
	@ar rcs $@ $^

$(BUILD)/envlock: $(CMD_OBJ) $(BUILD)/libenvlock.a
	@echo "  LINK    $@"
	@$(CC) $(ALL_CFLAGS) -o $@ $(CMD_OBJ) $(BUILD)/libenvlock.a $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libenvlock.a
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	@$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes $$(pkg-config --cflags cmocka) -o $@ $< \
	  $(filter $(BUILD)/tests/schema/%.o,$^) $(BUILD)/libenvlock.a $(LIBS) $$(pkg-config --libs cmocka)

# The schema interpreter is the tests' reference for the lockfile validator
# generated at build time, not part of envlock: the unit test compares the
# two, and envlock-crosscheck (envlock's own objects, the interpreter and a
# wrapper of el_schema_check_lock put in by the linker) compares them on
# every lock the CLI suites load (tests/schema/).
SCHEMA_TEST_OBJ := $(BUILD)/tests/schema/schema.o
$(BUILD)/tests/schema/schema.o: schemas/envlock.lock.schema.json tests/schema/schema.h
$(BUILD)/tests/schema/crosscheck.o: tests/schema/schema.h
$(BUILD)/tests/test_schema: $(SCHEMA_TEST_OBJ)

# (after envlock: tests/cli/lib.sh takes it only when it is not older)
$(BUILD)/envlock-crosscheck: $(CMD_OBJ) $(BUILD)/tests/schema/crosscheck.o $(SCHEMA_TEST_OBJ) $(BUILD)/libenvlock.a $(BUILD)/envlock
	@echo "  LINK    $@"
	@$(CC) $(ALL_CFLAGS) -Wl,--wrap=el_schema_check_lock -o $@ $(CMD_OBJ) $(BUILD)/tests/schema/crosscheck.o \
	  $(SCHEMA_TEST_OBJ) $(BUILD)/libenvlock.a $(LIBS)

# Every public header must compile on its own.
header-test: $(HEADERS)
	@mkdir -p $(BUILD)/header-test
	@for h in $(HEADERS); do \
	  echo "#include \"envlock/$$(basename $$h)\"" > $(BUILD)/header-test/t.c; \
	  $(CC) $(WARN) -Iinclude -fsyntax-only $(BUILD)/header-test/t.c || { echo "header $$h does not compile alone"; exit 1; }; \
	done

fixtures: tests/fixtures/roots/.stamp

tests/fixtures/roots/.stamp: tests/fixtures/mkroots.py
	python3 tests/fixtures/mkroots.py tests/fixtures/roots
	@touch $@

run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/envlock save -o envlock.lock.json
	$(BUILD)/envlock show envlock.lock.json

test: deps
	@$(MAKE) --no-print-directory check

check: all $(BUILD)/envlock-crosscheck header-test $(UNIT_BIN) fixtures fuzz-replay
	@ENVLOCK=$(BUILD)/envlock BUILD=$(BUILD) sh tests/run.sh $(UNIT_BIN)

asan: deps
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) --no-print-directory check BUILD=build/asan \
	  EXTRA_CFLAGS="-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

# every benchmark; each writes bench/out/ and bench/RESULTS.md quotes them
bench: all fixtures
	sh bench/save.sh
	sh bench/hash.sh
	sh bench/diff.sh
	sh bench/bundle.sh
	sh bench/verify.sh

# the instruction-count guard: each benchmark command under callgrind against
# bench/callgrind.baseline, failing on a regression over 5 % (not in make test)
bench-check: all fixtures
	sh bench/callgrind.sh

clean:
	rm -rf build tests/fixtures/roots

# static build, install, release and fleet targets, one fragment each
include $(sort $(wildcard mk/*.mk))
