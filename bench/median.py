#!/usr/bin/python3
"""Time commands: run each N times (after one warm-up) and print the median
wall time in milliseconds. The commands take turns, round by round, so a
change in the machine's load falls on all of them alike (paired runs). Output is discarded; a failing run aborts
(MEDIAN_OK="0 1" accepts those exit statuses, for commands like
`envlock restore --dry-run` whose status 1 means "something to do").

usage: median.py N LABEL -- CMD [ARG...] [--- LABEL -- CMD...]
"""
import os
import statistics
import subprocess
import sys
import time


def parse(argv):
    runs = int(argv[0])
    jobs, cur = [], None
    for a in argv[1:]:
        if a == '---':
            cur = None
            continue
        if cur is None:
            cur = {'label': a, 'cmd': []}
            jobs.append(cur)
        elif a == '--' and not cur['cmd']:
            continue
        else:
            cur['cmd'].append(a)
    return runs, jobs


def main():
    runs, jobs = parse(sys.argv[1:])
    ok = {int(x) for x in os.environ.get('MEDIAN_OK', '0').split()}
    times = {id(job): [] for job in jobs}
    for i in range(runs + 1):
        for job in jobs:
            t0 = time.perf_counter()
            rc = subprocess.run(job['cmd'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            if rc not in ok:
                sys.exit("median.py: %s exited %d" % (job['label'], rc))
            if i:  # the first round warms caches
                times[id(job)].append((time.perf_counter() - t0) * 1000)
    for job in jobs:
        t = times[id(job)]
        print(f"{job['label']}\t{statistics.median(t):.2f}\t{min(t):.2f}\t{max(t):.2f}")


if __name__ == '__main__':
    main()
