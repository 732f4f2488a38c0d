#!/bin/sh
# What envlock's knowledge (knowledge/, compiled in) costs the commands
# that read it on every run: check, save and diff of the 16.04 box's lock
# and the 800-package save of bench/save.sh, timed for two binaries in the
# same run, taking turns (bench/median.py).
# OLD is a build from before the knowledge (e.g. a worktree of an older
# commit: git worktree add /tmp/old REV && make -C /tmp/old); NEW is this
# tree's. Writes bench/out/knowledge-<build folder>.txt; bench/RESULTS.md quotes it.
#
#   OLD=/tmp/old/build/envlock N=31 sh bench/knowledge.sh
#   OLD=/tmp/old/build/static/envlock NEW=build/static/envlock N=31 sh bench/knowledge.sh
set -eu
cd "$(dirname "$0")/.."
NEW=${NEW:-build/envlock}
N=${N:-31}
[ -n "${OLD:-}" ] && [ -x "$OLD" ] || { echo "bench/knowledge.sh: OLD=<an envlock built before the knowledge> is needed" >&2; exit 2; }
[ -x "$NEW" ] || make -s all
make -s fixtures >/dev/null
out=bench/out/knowledge
mkdir -p "$out"
export XDG_CACHE_HOME="$PWD/$out/cache"
R=tests/fixtures/roots
/usr/bin/python3 tests/fixtures/mkroots.py --bench "$out/bench-800" >/dev/null
"$NEW" save -q --root "$R/ubuntu1604-mmdet" --no-repo -o "$out/a.lock"
"$NEW" save -q --root "$R/mmpose-container" --no-repo -o "$out/b.lock"
set --
for b in old new; do
	[ $b = old ] && e=$OLD || e=$NEW
	set -- "$@" "$b: check a lock" -- "$e" check "$out/a.lock" --- \
		"$b: save --root ubuntu1604-mmdet" -- "$e" save -q --root "$R/ubuntu1604-mmdet" --no-repo -o "$out/$b.lock" --- \
		"$b: diff two locks" -- "$e" diff "$out/a.lock" "$out/b.lock" --- \
		"$b: save --root bench-800" -- "$e" save -q --root "$out/bench-800" --no-repo -o "$out/$b.lock" ---
done
MEDIAN_OK="0 1" python3 bench/median.py "$N" "$@" | tee "bench/out/knowledge-$(basename "$(dirname "$NEW")").txt"
