#!/bin/sh
# Benchmark `envlock diff`: two generated locks with 1,000 packages each
# (target: median <= 10 ms) and a drift table over 256 generated locks
# (target: <= 1 s), plus heavier variants; medians of N runs after one
# warm-up, in one run. Locks come from bench/gen_locks.py (a golden lock,
# standard-library Python). Writes bench/out/diff.tsv; RESULTS.md quotes it;
# the peers (diff -u, json.load) are paired at the end (diff-peers.tsv).
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

# Issue 18: paired with the peers, in one run, envlock and peer alternating
# (medians of PAIRS rounds): diff of two 1,000-package locks and of two
# 50,000-package locks against GNU `diff -u` of the same files (targets
# <= 1.5 and <= 0.5), and the drift table over 1,024 locks of 1,000 packages
# against Python's json.load of the same files (target <= 0.2, and <= 1 s).
# Writes bench/out/diff-peers.tsv. PEERS=0 leaves it out.
[ "${PEERS:-1}" = 1 ] || exit 0
PAIRS=${PAIRS:-11}
/usr/bin/python3 bench/gen_locks.py pair "$gen/pair50k" --packages 50000
/usr/bin/python3 bench/gen_locks.py fleet "$gen/fleet1024" --count 1024 --packages 1000
# the 440 MB just written out first, and read once, so writeback does not fall on the timed runs
sync
cat "$gen"/pair50k/*.json "$gen"/fleet1024/*.json >/dev/null
/usr/bin/python3 - "$PAIRS" "$ENVLOCK" "$gen" >"$out/diff-peers.tsv" <<'PY'
import glob, statistics, subprocess, sys, time

rounds, envlock, gen = int(sys.argv[1]), sys.argv[2], sys.argv[3]
fleet = sorted(glob.glob(gen + "/fleet1024/node*.json"))
load = "import json,sys\nfor p in sys.argv[1:]:\n    with open(p, 'rb') as f: json.load(f)\n"
jobs = [
    ("diff A B, 1,000 packages each", [envlock, "diff", gen + "/pair/a.json", gen + "/pair/b.json"],
     "diff -u", ["diff", "-u", gen + "/pair/a.json", gen + "/pair/b.json"], rounds, 1.5),
    ("diff A B, 50,000 packages each", [envlock, "diff", gen + "/pair50k/a.json", gen + "/pair50k/b.json"],
     "diff -u", ["diff", "-u", gen + "/pair50k/a.json", gen + "/pair50k/b.json"], max(5, rounds // 2), 0.5),
    ("drift table, 1,024 locks of 1,000 packages", [envlock, "diff"] + fleet,
     "python3 json.load", ["/usr/bin/python3", "-c", load] + fleet, 5, 0.2),
]


def once(cmd):
    t0 = time.perf_counter()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if rc not in (0, 1):
        sys.exit("%s: exit status %d" % (cmd[0], rc))
    return (time.perf_counter() - t0) * 1000


for label, cmd, peer_label, peer, n, target in jobs:
    once(cmd), once(peer)
    mine, theirs = [], []
    for _ in range(n):
        mine.append(once(cmd))
        theirs.append(once(peer))
    a, b = statistics.median(mine), statistics.median(theirs)
    print("%s\t%.2f\t%s\t%.2f\t%.3f\t%.2f\t%d" % (label, a, peer_label, b, a / b, target, n))
PY
python3 - "$out/diff-peers.tsv" <<'PY'
import sys
print("%-44s %10s %-18s %10s %7s %7s %5s" % ("command", "median ms", "peer", "median ms", "ratio", "target", "runs"))
for r in (l.rstrip('\n').split('\t') for l in open(sys.argv[1])):
    print("%-44s %10s %-18s %10s %7s %7s %5s" % tuple(r))
PY
