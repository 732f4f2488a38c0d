#!/bin/sh
# Benchmark `envlock diff`: two generated locks with 1,000 packages each
# (target: median <= 10 ms) and a drift table over 256 generated locks
# (target: <= 1 s), plus heavier variants; medians of N runs after one
# warm-up, in one run. Locks come from bench/gen_locks.py (a golden lock,
# standard-library Python). Writes bench/out/diff.tsv; RESULTS.md quotes it.
set -eu
cd "$(dirname "$0")/.."
N=${N:-21}
out=bench/out
gen=$out/diff-locks
ENVLOCK=${ENVLOCK:-build/envlock}
[ -x "$ENVLOCK" ] || make -s all
rm -rf "$gen"
/usr/bin/python3 bench/gen_locks.py pair "$gen/pair"                        # 500 conda + 500 pip each
/usr/bin/python3 bench/gen_locks.py pair "$gen/pair2000" --packages 2000    # 1000 + 1000 each
/usr/bin/python3 bench/gen_locks.py fleet "$gen/fleet"                      # 256 x the golden machine
/usr/bin/python3 bench/gen_locks.py fleet "$gen/fleet1000" --packages 1000  # 256 x 1,000 packages

# Like bench/median.py, but exit status 1 ("different") is a success here.
/usr/bin/python3 - "$N" "$ENVLOCK" "$gen" >"$out/diff.tsv" <<'PY'
import glob, os, resource, statistics, subprocess, sys, time

runs, envlock, gen = int(sys.argv[1]), sys.argv[2], sys.argv[3]
fleet = sorted(glob.glob(gen + "/fleet/node*.json"))
fleet1000 = sorted(glob.glob(gen + "/fleet1000/node*.json"))
jobs = [
    ("diff A B, 1,000 packages each", [envlock, "diff", gen + "/pair/a.json", gen + "/pair/b.json"], runs),
    ("diff --json A B, 1,000 packages each", [envlock, "diff", "--json", gen + "/pair/a.json", gen + "/pair/b.json"], runs),
    ("diff A B, 2,000 packages each", [envlock, "diff", gen + "/pair2000/a.json", gen + "/pair2000/b.json"], runs),
    ("diff A A (identical), 1,000 packages", [envlock, "diff", gen + "/pair/a.json", gen + "/pair/a.json"], runs),
    ("drift table, 256 locks of the golden machine", [envlock, "diff"] + fleet, max(5, runs // 2)),
    ("drift --json, 256 locks of the golden machine", [envlock, "diff", "--json"] + fleet, max(5, runs // 2)),
    ("drift table, 256 locks of 1,000 packages", [envlock, "diff"] + fleet1000, 5),
]
for label, cmd, n in jobs:
    times = []
    for i in range(n + 1):
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        if rc not in (0, 1):
            sys.exit("%s: exit status %d" % (label, rc))
        if i:
            times.append((time.perf_counter() - t0) * 1000)
    # peak RSS of one more run (ru_maxrss of children is a running maximum: measured alone)
    rss = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True).stderr.strip().splitlines()[-1]
    print("%s\t%.2f\t%.2f\t%.2f\t%s\t%d" % (label, statistics.median(times), min(times), max(times), rss, n))
PY
python3 - "$out/diff.tsv" <<'PY'
import sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
print("%-48s %10s %10s %10s %12s %5s" % ("command", "median ms", "min", "max", "max RSS KiB", "runs"))
for r in rows:
    print("%-48s %10s %10s %10s %12s %5s" % tuple(r))
med = {r[0]: float(r[1]) for r in rows}
print("diff of two 1,000-package locks: median %.2f ms (target <= 10)" % med["diff A B, 1,000 packages each"])
print("drift table over 256 locks: median %.2f ms (target <= 1000)" % med["drift table, 256 locks of the golden machine"])
PY
