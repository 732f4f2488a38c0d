#!/bin/sh
# Benchmark `envlock save` against `python3 -m pip freeze` (which records far
# less: only name==version of one environment) and PyTorch's collect_env.py
# (the environment report its bug template asks for), in one run, medians of N.
# Writes the table to bench/out/save.tsv; bench/RESULTS.md quotes it.
set -eu
cd "$(dirname "$0")/.."
N=${N:-21}
out=bench/out
mkdir -p "$out"
ENVLOCK=${ENVLOCK:-build/envlock}
[ -x "$ENVLOCK" ] || make -s all
bench_root=$out/bench-800
/usr/bin/python3 tests/fixtures/mkroots.py --bench "$bench_root" >/dev/null

# one cold save (empty digest cache: every CUDA and cuDNN library is hashed)
export XDG_CACHE_HOME="$PWD/$out/cache"
rm -rf "$XDG_CACHE_HOME"
cold=$( { /usr/bin/time -f '%e %M' "$ENVLOCK" save -q -o /dev/null ; } 2>&1 | tail -n 1)

# The machine probe is measured from a folder outside any git repository:
# pip freeze records no code, and save records the repository holding the
# current directory; the same save inside this repository is measured too.
ENVLOCK_ABS=$(cd "$(dirname "$ENVLOCK")" && pwd)/$(basename "$ENVLOCK")
bench_root_abs=$(cd "$bench_root" && pwd)
away=$(mktemp -d)
here=$PWD
cd "$away"
/usr/bin/python3 "$here/bench/median.py" "$N" \
	"envlock save -o /dev/null (this machine, digest cache warm)" -- "$ENVLOCK_ABS" save -q -o /dev/null --- \
	"python3 -m pip freeze" -- python3 -m pip freeze --- \
	"python3 -m torch.utils.collect_env (PyTorch's, in Debian's python3-torch)" -- /usr/bin/python3 -m torch.utils.collect_env --- \
	"envlock save --root bench-800 -o /dev/null (500 conda + 300 pip)" -- "$ENVLOCK_ABS" save -q --root "$bench_root_abs" -o /dev/null \
	>"$here/$out/save.tsv"
cd "$here"
rmdir "$away"
/usr/bin/python3 bench/median.py "$N" \
	"envlock save -o /dev/null inside this git repository (records it too)" -- "$ENVLOCK" save -q -o /dev/null \
	>>"$out/save.tsv"

# the static musl binary (make static) beside the dynamic one, in the same run: start-up
# (--version) and the 800-package save, where dynamic loading of 33 objects is a visible share
STATIC=${STATIC:-build/static/envlock}
if [ -x "$STATIC" ]; then
	STATIC_ABS=$(cd "$(dirname "$STATIC")" && pwd)/$(basename "$STATIC")
	away=$(mktemp -d)
	cd "$away"
	/usr/bin/python3 "$here/bench/median.py" "$N" \
		"dynamic envlock --version" -- "$ENVLOCK_ABS" --version --- \
		"static envlock --version" -- "$STATIC_ABS" --version --- \
		"dynamic envlock save --root bench-800" -- "$ENVLOCK_ABS" save -q --root "$bench_root_abs" -o /dev/null --- \
		"static envlock save --root bench-800" -- "$STATIC_ABS" save -q --root "$bench_root_abs" -o /dev/null --- \
		"dynamic envlock save (this machine)" -- "$ENVLOCK_ABS" save -q -o /dev/null --- \
		"static envlock save (this machine)" -- "$STATIC_ABS" save -q -o /dev/null \
		>"$here/$out/save-static.tsv"
	cd "$here"
	rmdir "$away"
	echo "static binary: $(stat -c %s "$STATIC") bytes; dynamic: $(stat -c %s "$ENVLOCK") bytes" >>"$out/save-static.tsv"
fi

echo "cold save (s, max RSS KiB): $cold" >>"$out/save.tsv"
/usr/bin/time -f 'warm save max RSS KiB: %M' "$ENVLOCK" save -q -o /dev/null 2>>"$out/save.tsv"
/usr/bin/time -f 'bench-800 save max RSS KiB: %M' "$ENVLOCK" save -q --root "$bench_root" -o /dev/null 2>>"$out/save.tsv"
python3 - "$out/save.tsv" <<'PY'
import sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if '\t' in l]
med = {r[0]: float(r[1]) for r in rows}
print("%-70s %10s %10s %10s" % ("command", "median ms", "min", "max"))
for r in rows:
    print("%-70s %10s %10s %10s" % tuple(r))
live = med["envlock save -o /dev/null (this machine, digest cache warm)"]
pip = med["python3 -m pip freeze"]
print("live save / pip freeze = %.3f (target <= 0.050)" % (live / pip))
print("bench-800 save median = %.2f ms (target <= 20)" % med["envlock save --root bench-800 -o /dev/null (500 conda + 300 pip)"])
PY
grep -v '	' "$out/save.tsv"
if [ -f "$out/save-static.tsv" ]; then
	python3 - "$out/save-static.tsv" <<'PY'
import sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if '\t' in l]
med = {r[0]: float(r[1]) for r in rows}
for r in rows:
    print("%-70s %10s %10s %10s" % tuple(r))
sv, dv = med["static envlock --version"], med["dynamic envlock --version"]
print("static --version = %.2f ms (target <= 1), static/dynamic = %.2f (target <= 0.5)" % (sv, sv / dv))
print("static save --root bench-800 = %.2f ms (target <= 15)" % med["static envlock save --root bench-800"])
PY
	grep -v '	' "$out/save-static.tsv"
fi
