#!/usr/bin/python3
"""The solver's properties over a sweep of made-up machines: drivers 390 to
580, GPUs from Kepler to Ada, glibc 2.17 to 2.39, gcc 4.8 to 14, each built
by tests/fixtures/mkroots.py --machine and saved into a lock once; then for
each of a set of requests:

  - every stack `envlock solve LOCK --json` proposes satisfies every
    constraint of the reference data in ../shared/data/matrix
    (shared_check.py);
  - wherever the brute-force enumeration over the same knowledge files
    (brute.py, independent of solve's search) finds a stack, solve finds
    one too: no false "impossible"; and solve finds none where it finds none.

usage: sweep.py ENVLOCK TOP SCRATCH [MATRIX]   prints TAP lines, exit 0 when all hold
"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brute import Brute  # noqa: E402
from shared_check import StackJudge  # noqa: E402

DRIVERS = ["390.144", "418.56", "440.33.01", "450.142.00", "470.57.02", "495.29.05", "510.47.03",
           "525.60.13", "535.129.03", "550.54.14", "570.86.10", "580.65.06"]
GPUS = ["Tesla K80", "Tesla K40m", "GeForce GTX 980", "GeForce GTX 1080 Ti", "Tesla V100-PCIE-16GB",
        "NVIDIA GeForce RTX 2080 Ti", "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 4070", "NVIDIA L4"]
GLIBC = ["2.17", "2.23", "2.27", "2.31", "2.35", "2.39"]
GCC = ["4.8.5", "5.4.0", "7.5.0", "9.4.0", "11.4.0", "14.2.0"]
PYTHON = ["3.6.9", "3.7.16", "3.8.10", "3.10.12", "3.12.3"]
REQUESTS = [
    ["mmdet==2.25.1"],
    ["mmpose==1.3.2", "mmpretrain"],
    ["mmdet"],
    ["torch"],
    ["mmsegmentation>=0.20,<1.0"],
    ["mmcls"],
]


def spec_parts(s):
    i = 0
    while i < len(s) and (s[i].isalnum() or s[i] in "._-"):
        i += 1
    return s[:i], s[i:]


def main():
    envlock, top, scratch = sys.argv[1:4]
    matrix = sys.argv[4] if len(sys.argv) > 4 else os.path.join(top, "..", "shared", "data", "matrix")
    n = 0
    failed = 0

    def ok(what):
        nonlocal n
        n += 1
        print("ok %d - %s" % (n, what))

    def not_ok(what, why):
        nonlocal n, failed
        n += 1
        failed += 1
        print("not ok %d - %s" % (n, what))
        for line in why:
            print("#   " + line)

    if not os.path.isdir(matrix):
        n += 1
        print("ok %d - the stacks against the reference data # SKIP %s is not on this machine" % (n, matrix))
        judge = None
    else:
        judge = StackJudge(matrix)
    brute = Brute(os.path.join(top, "knowledge"))
    rng = random.Random(27)
    machines = []
    for i in range(48):
        machines.append({"driver": DRIVERS[i % len(DRIVERS)], "gpu": GPUS[rng.randrange(len(GPUS))],
                         "glibc": GLIBC[rng.randrange(len(GLIBC))], "gcc": GCC[rng.randrange(len(GCC))],
                         "python": PYTHON[rng.randrange(len(PYTHON))]})
    machines.append({"driver": "none", "gpu": "", "glibc": "2.17", "gcc": "4.8.5", "python": "3.6.9"})
    machines.append({"driver": "none", "gpu": "", "glibc": "2.39", "gcc": "14.2.0", "python": "3.12.3"})

    mismatches, bad_stacks, stacks, runs = [], [], 0, 0
    verdicts = {True: 0, False: 0}
    for i, m in enumerate(machines):
        root = os.path.join(scratch, "m%02d" % i)
        facts = ["host=sweep%02d" % i, "os=jammy", "glibc=" + m["glibc"], "driver=" + m["driver"],
                 "gcc=" + m["gcc"], "python=" + m["python"]] + (["gpu=" + m["gpu"]] if m["gpu"] else [])
        subprocess.run([sys.executable, os.path.join(top, "tests/fixtures/mkroots.py"), "--machine", root] + facts, check=True)
        lock = root + ".lock.json"
        r = subprocess.run([envlock, "save", "--root", root, "--no-repo", "-o", lock], capture_output=True, text=True)
        if r.returncode != 0:
            not_ok("save of machine %d" % i, [r.stderr.strip()])
            continue
        for req in REQUESTS:
            args = [envlock, "solve", lock, "--json", "-n", "100"]
            for s in req:
                args += ["--for", s]
            r = subprocess.run(args, capture_output=True, text=True)
            runs += 1
            if r.returncode not in (0, 1):
                not_ok("solve %s on machine %d" % (" ".join(req), i), [r.stderr.strip()])
                continue
            out = json.loads(r.stdout)
            facts_m = {"driver": out["machine"]["driver"],
                       "gpus": out["machine"]["gpus"], "glibc": out["machine"]["glibc"]}
            for st in out["stacks"]:
                stacks += 1
                if judge:
                    for p in judge.judge(st, facts_m):
                        bad_stacks.append("machine %d %s, stack %d: %s" % (i, req, st["rank"], p))
            bm = {"driver": None if m["driver"] == "none" else m["driver"],
                  "ccs": [g["compute_capability"] for g in out["machine"]["gpus"] if g["compute_capability"]],
                  "glibc": m["glibc"], "gcc": m["gcc"], "nvcc": [], "python": m["python"]}
            want = brute.feasible(bm, [spec_parts(s) for s in req])
            got = bool(out["stacks"])
            verdicts[got] += 1
            if want != got:
                mismatches.append("machine %d (%s) %s: brute force %s, solve %s" % (
                    i, ", ".join("%s=%s" % kv for kv in m.items()), req, "finds a stack" if want else "finds none",
                    "finds %d" % len(out["stacks"]) if got else "finds none"))
    if bad_stacks:
        not_ok("every proposed stack (%d, in %d plans) satisfies the reference data" % (stacks, runs), bad_stacks[:30])
    elif judge:
        ok("every proposed stack (%d, in %d plans) satisfies the reference data (%s)" % (
            stacks, runs, ", ".join("%s %d" % kv for kv in sorted(judge.counts.items()))))
    if mismatches:
        not_ok("solve finds a stack exactly where the brute force finds one", mismatches[:30])
    else:
        ok("solve finds a stack exactly where the brute force finds one (%d plans, %d machines)" % (runs, len(machines)))
    # the sweep means something only if it meets both verdicts
    if verdicts[True] and verdicts[False]:
        ok("the sweep meets both verdicts: %d plans with stacks, %d without" % (verdicts[True], verdicts[False]))
    else:
        not_ok("the sweep meets both verdicts", ["%d plans with stacks, %d without" % (verdicts[True], verdicts[False])])
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
