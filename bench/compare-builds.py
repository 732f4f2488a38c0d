#!/usr/bin/env python3
# Medians of two builds (static and dynamic each) run in turn, round by round, so that
# both meet the same machine: on bench/diff.sh's locks (the default), or `save` of this
# machine and of bench/save.sh's 800-package root (JOBS=save), from a folder outside any
# git repository:
#   python3 bench/compare-builds.py OLD_TREE NEW_TREE [diff|save]
# (each tree built with make all static; for save, run bench/save.sh once first).
import subprocess, time, statistics, glob, sys, tempfile
import os
gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out', 'diff-locks')
# OLD and NEW build trees: their static and dynamic binaries
old, new = sys.argv[1], sys.argv[2]
bins = {'old-static': old + '/build/static/envlock', 'new-static': new + '/build/static/envlock',
        'old-dyn': old + '/build/envlock', 'new-dyn': new + '/build/envlock'}
fleet = sorted(glob.glob(gen + '/fleet/node*.json'))
fleet1000 = sorted(glob.glob(gen + '/fleet1000/node*.json'))
here = os.path.dirname(os.path.abspath(__file__))
bench800 = os.path.join(here, 'out', 'bench-800')
save_jobs = [
    ('save of this machine (digest cache warm)', ['save', '-q', '-o', '/dev/null'], 21),
    ('save --root bench-800 (500 conda + 300 pip)', ['save', '-q', '--root', bench800, '-o', '/dev/null'], 21),
]
diff_jobs = [
    ('diff A B, 1,000 packages each', ['diff', gen + '/pair/a.json', gen + '/pair/b.json'], 21),
    ('diff A B, 2,000 packages each', ['diff', gen + '/pair2000/a.json', gen + '/pair2000/b.json'], 21),
    ('diff A A (identical), 1,000 packages', ['diff', gen + '/pair/a.json', gen + '/pair/a.json'], 21),
    ('check A, 1,000 packages', ['check', gen + '/pair/a.json'], 21),
    ('show A, 1,000 packages', ['show', gen + '/pair/a.json'], 21),
    ('drift table, 256 locks of the golden machine', ['diff'] + fleet, 7),
    ('drift table, 256 locks of 1,000 packages', ['diff'] + fleet1000, 5),
]
jobs = save_jobs if len(sys.argv) > 3 and sys.argv[3] == 'save' else diff_jobs
os.chdir(tempfile.mkdtemp())
print('| command | ' + ' | '.join(bins) + ' | new/old static | new/old dynamic |')
print('|---|' + '---:|' * (len(bins) + 2))
for label, args, n in jobs:
    res = {}
    for rnd in range(n + 1):
        for k, b in bins.items():
            t0 = time.perf_counter()
            subprocess.run([b] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t = time.perf_counter() - t0
            if rnd:
                res.setdefault(k, []).append(t * 1000)
    m = {k: statistics.median(v) for k, v in res.items()}
    print('| %s | %s | %.2f | %.2f |' % (label, ' | '.join('%.2f' % m[k] for k in bins),
          m['new-static'] / m['old-static'], m['new-dyn'] / m['old-dyn']), flush=True)
