#!/usr/bin/python3
"""Time commands: run each N times (after one warm-up) and print the median
wall time in milliseconds. Output is discarded; a failing run aborts.

usage: median.py N LABEL -- CMD [ARG...] [--- LABEL -- CMD...]
"""
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
    for job in jobs:
        times = []
        for i in range(runs + 1):
            t0 = time.perf_counter()
            subprocess.run(job['cmd'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            if i:  # the first run warms caches
                times.append((time.perf_counter() - t0) * 1000)
        print(f"{job['label']}\t{statistics.median(times):.2f}\t{min(times):.2f}\t{max(times):.2f}")


if __name__ == '__main__':
    main()
