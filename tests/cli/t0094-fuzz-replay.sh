#!/bin/sh
# The fuzz regression suite (issue 17): every harness of tests/fuzz runs
# once over its seed corpus, what campaigns found (tests/fuzz/found) and
# every reproducer of a past crash,
# under ASan and UBSan (make fuzz-replay, which make check builds). A
# crash, a sanitizer report or a leak fails the harness's check.
. "$(dirname "$0")/lib.sh"

build=${BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
bins=$build/fuzz-replay
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

if [ ! -d "$bins" ]; then
	skip "the corpus replays under the sanitizers" "no $bins: make fuzz-replay builds it (make check does)"
	exit 0
fi

for src in "$top"/tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	t=${t#fuzz_}
	corpus=$top/tests/fuzz/corpus/$t
	found=$top/tests/fuzz/found/$t
	crashes=$top/tests/fuzz/crashes/$t
	if [ ! -x "$bins/fuzz_$t" ]; then
		not_ok "$t: a replay binary is built"
		continue
	fi
	seeds=$(find "$corpus" -type f 2>/dev/null | wc -l)
	if [ "$seeds" -eq 0 ]; then
		not_ok "$t: has a seed corpus in tests/fuzz/corpus/$t"
		continue
	fi
	set -- "$corpus"
	[ -d "$found" ] && set -- "$@" "$found"
	[ -d "$crashes" ] && set -- "$@" "$crashes"
	# a hang (the config evaluator's ';' loop) fails the check instead of stalling the suite
	out=$(timeout 120 "$bins/fuzz_$t" "$@" 2>&1)
	st=$?
	want=$(find "$@" -type f ! -name '.*' | wc -l)
	if [ "$st" = 0 ] && [ "$(printf '%s\n' "$out" | tail -n 1)" = "replayed $want inputs" ]; then
		ok "$t: $want inputs replayed clean under ASan and UBSan"
	else
		not_ok "$t: $want inputs replayed clean under ASan and UBSan (exit $st)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/#   /'
	fi
done

# the reproducer of the cuDNN soname overflow is kept, and is what the harness reads
check_eq "the cuDNN soname reproducer is in the regression corpus" yes \
	"$([ -s "$top/tests/fuzz/crashes/cudnn/soname-shorter-than-prefix" ] && echo yes)"
# the replay binaries are sanitized: one that is not would pass everything
if nm "$bins/fuzz_lock" 2>/dev/null | grep -q '__asan_report_load'; then
	ok "the replay binaries are built with AddressSanitizer"
else
	not_ok "the replay binaries are built with AddressSanitizer"
fi
"$bins/fuzz_journal" "$scratch/missing" >/dev/null 2>&1
check_status "a replay of a missing input fails" 1 "$?"
