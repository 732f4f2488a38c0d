#!/bin/sh
# What `envlock verify` costs beyond the compile it cannot avoid: medians of
# N runs of the bare nvcc command that builds the same program (what a
# person checking a toolkit by hand runs), of `envlock verify`, and of
# `envlock verify --cpu-only`, and verify without its Python stages, in
# turns (bench/median.py). On a machine without a GPU, verify exits 3;
# that is counted as a normal run. Writes bench/out/verify.tsv and
# bench/out/verify.json (one verify --json); bench/RESULTS.md quotes them.
# The GPU figures come from bench/gpu-verify.sh, on a GPU machine.
set -eu
cd "$(dirname "$0")/.."
N=${N:-5}
out=bench/out
mkdir -p "$out"
ENVLOCK=${ENVLOCK:-build/envlock}
[ -x "$ENVLOCK" ] || make -s all
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ ! -x "$nvcc" ]; then
	echo "bench/verify.sh: no $nvcc; nothing to measure" >&2
	exit 0
fi
export XDG_CACHE_HOME="$PWD/$out/cache" # the probe's digest cache, warm after the first run

# the program's sources and the very nvcc command verify ran (from its JSON)
"$ENVLOCK" verify --json >"$out/verify.json" || [ $? -eq 3 ]
src=$(mktemp -d)
cp lib/verify/mlp.cu lib/verify/mlp.h "$src/"
cmd=$(/usr/bin/python3 - "$out/verify.json" "$src" <<'PY'
import json, shlex, sys
doc = json.load(open(sys.argv[1]))
argv = shlex.split(doc["stages"][0]["figures"]["command"])
# the same flags, on the copied sources
argv[argv.index("-o") + 1] = sys.argv[2] + "/mlp"
argv[-2] = sys.argv[2] + "/mlp.cu"
print(shlex.join(argv))
PY
)
echo "nvcc command: $cmd" >"$out/verify.tsv"
# verify's own exit status is 3 without a GPU: a normal run here
ok03='"$0" verify "$@" >/dev/null 2>&1; s=$?; [ $s -eq 0 ] || [ $s -eq 3 ]'
# and 1 with --python /bin/false, whose torch stage fails
ok013='"$0" verify "$@" >/dev/null 2>&1; s=$?; [ $s -le 1 ] || [ $s -eq 3 ]'
/usr/bin/python3 bench/median.py "$N" \
	"nvcc alone (the same command, by hand)" -- sh -c "$cmd" --- \
	"envlock verify" -- sh -c "$ok03" "$ENVLOCK" --- \
	"envlock verify --cpu-only" -- sh -c "$ok03" "$ENVLOCK" --cpu-only --- \
	"envlock verify --python /bin/false (no Python stages)" -- sh -c "$ok013" "$ENVLOCK" --python /bin/false \
	>>"$out/verify.tsv"
rm -rf "$src"
/usr/bin/python3 - "$out/verify.tsv" "$out/verify.json" <<'PY'
import json, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if '\t' in l]
med = {r[0]: float(r[1]) for r in rows}
print("%-45s %10s %10s %10s" % ("command", "median ms", "min", "max"))
for r in rows:
    print("%-45s %10s %10s %10s" % tuple(r))
nv, ve = med["nvcc alone (the same command, by hand)"], med["envlock verify"]
print("envlock verify / nvcc alone = %.2f (+%.0f ms: probe, program run, CPU reference, cuDNN load)" % (ve / nv, ve - nv))
st = {s["stage"]: s for s in json.load(open(sys.argv[2]))["stages"]}
f = st["training"]["figures"]
print("CPU reference: %d steps in %.3g s; loss %.4g -> %.4g" % (f["steps"], f["cpu_seconds"], f["cpu_first_loss"], f["cpu_last_loss"]))
print("compile in verify: %.2f s (%s)" % (st["toolchain"]["figures"]["seconds"], st["toolchain"]["figures"]["architectures"]))
for s in st.values():
    print("%-10s %-8s %s" % (s["stage"], s["status"], s["reason"][:110]))
PY
