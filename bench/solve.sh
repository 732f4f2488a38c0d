#!/bin/sh
# Benchmark envlock solve on a saved lock against the start-up any
# Python-based resolver pays (python3 -m pip --version), in the same run,
# taking turns (bench/median.py): the 16.04 box's lock, planning
#   envlock solve LOCK --for mmdet==2.25.1 --python-version 3.7 --json
# (one plan: three stacks explained, or the smallest change when none fits),
# a plan for two codebases on the RTX 4070 machine, and a --check --stack.
# Writes bench/out/solve.txt; bench/RESULTS.md quotes it.
set -eu
cd "$(dirname "$0")/.."
ENVLOCK=${ENVLOCK:-build/envlock}
N=${N:-31}
[ -x "$ENVLOCK" ] || make -s all
make -s fixtures >/dev/null
out=bench/out/solve
mkdir -p "$out"
"$ENVLOCK" save --root tests/fixtures/roots/ubuntu1604-mmdet --no-repo -o "$out/box.lock.json" 2>/dev/null
python3 tests/fixtures/mkroots.py --machine "$out/rtx" host=rtx-desk os=jammy glibc=2.35 driver=535.129.03 \
	"gpu=NVIDIA GeForce RTX 4070" gcc=11.4.0 python=3.10.12
"$ENVLOCK" save --root "$out/rtx" --no-repo -o "$out/rtx.lock.json" 2>/dev/null
MEDIAN_OK="0 1" python3 bench/median.py "$N" \
	"envlock solve (16.04 box, mmdet==2.25.1)" -- "$ENVLOCK" solve "$out/box.lock.json" --for mmdet==2.25.1 --python-version 3.7 --json --- \
	"envlock solve (RTX 4070, mmpose + mmpretrain)" -- "$ENVLOCK" solve "$out/rtx.lock.json" --for mmpose==1.3.2 --for mmpretrain --json --- \
	"envlock solve --check --stack" -- "$ENVLOCK" solve "$out/box.lock.json" --check --stack 'python==3.7 torch==1.10.0+cu102 mmcv-full==1.7.5 mmdet==2.25.1' --- \
	"python3 -m pip --version" -- python3 -m pip --version | tee bench/out/solve.txt
python3 - bench/out/solve.txt <<'PY' | tee -a bench/out/solve.txt
import re, sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.rstrip("\n").split("\t")
    if len(parts) == 4:
        rows[parts[0]] = float(parts[1])
pip = rows.pop("python3 -m pip --version")
for k, v in rows.items():
    print("ratio %-45s / pip --version  %.3f  (target <= 0.1; median ms, min, max above)" % (k, v / pip))
PY
