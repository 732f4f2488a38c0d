#!/bin/sh
# Benchmark `envlock restore --dry-run` (the planner: a full probe of the
# machine plus the comparison with the lock) on the 800-package benchmark
# root (500 conda + 300 pip), against the probe alone (`envlock save`) and
# the check users run by hand today (`python3 -m pip freeze`, which sees
# one environment's pip names only). Medians of N, one run.
# Writes bench/out/restore.tsv; bench/RESULTS.md quotes it.
set -eu
cd "$(dirname "$0")/.."
N=${N:-21}
out=bench/out
mkdir -p "$out"
ENVLOCK=${ENVLOCK:-build/envlock}
[ -x "$ENVLOCK" ] || make -s all
bench_root=$out/bench-800
/usr/bin/python3 tests/fixtures/mkroots.py --bench "$bench_root" >/dev/null
export XDG_CACHE_HOME="$PWD/$out/cache"
"$ENVLOCK" save -q --root "$bench_root" -o "$out/bench-800.lock.json"
mkdir -p "$out/empty-root"
state=$(mktemp -d)
packages=$(/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['conda']['package_count'] + d['pip']['count'])" "$out/bench-800.lock.json")
MEDIAN_OK="0 1" /usr/bin/python3 bench/median.py "$N" \
	"envlock restore --dry-run, $packages-package lock, empty sandbox (everything to plan)" -- \
		"$ENVLOCK" restore "$out/bench-800.lock.json" --root "$out/empty-root" --state-dir "$state" --dry-run --- \
	"envlock restore --dry-run, $packages-package lock, restored sandbox (nothing to do)" -- \
		"$ENVLOCK" restore "$out/bench-800.lock.json" --root "$bench_root" --state-dir "$state" --dry-run --- \
	"envlock save --root (the probe alone)" -- "$ENVLOCK" save -q --root "$bench_root" -o /dev/null --- \
	"python3 -m pip freeze" -- python3 -m pip freeze \
	>"$out/restore.tsv"
rm -rf "$state"
# the second run of a restore on a restored sandbox must report nothing to do
"$ENVLOCK" restore "$out/bench-800.lock.json" --root "$bench_root" --dry-run --state-dir "$out/state" | tail -n 1 >>"$out/restore.tsv"
cat "$out/restore.tsv"
