#!/usr/bin/python3
"""Generate lockfiles for the `envlock diff` benchmarks from a golden lock.

usage: gen_locks.py pair OUTDIR [--packages N] [--golden FILE]
       gen_locks.py fleet OUTDIR [--count N] [--packages N] [--golden FILE]

N packages: N/2 conda packages and N/2 pip distributions (a conda env with
pip on top), made up from the golden lock's own records.

pair:  OUTDIR/a.json and OUTDIR/b.json, each with N packages (default 1000);
       B bumps 5% of them, drops and adds 2%, and moves torch, CUDA and the
       driver, as an upgrade would.
fleet: OUTDIR/node001.json ... one lock per node (default 256), the golden
       machine with its own packages (or N made-up ones); a few nodes drift:
       node017 has another driver, node100-node103 another numpy, node200
       lacks yapf, node250 has CUDA_VISIBLE_DEVICES=0.
Standard library only; the output is the same for the same arguments.
"""
import argparse
import copy
import hashlib
import json
import os
import random

GOLDEN = os.path.join(os.path.dirname(__file__), '..', 'tests', 'golden', 'ubuntu1604-mmdet.lock.json')


def synthetic(base, total, rng):
    """Replace the conda and pip lists with total made-up packages, half each."""
    conda_tpl = base['conda']['packages'][3]
    pip_tpl = next(d for d in base['pip']['distributions'] if d['name'] == 'addict')
    site = os.path.dirname(pip_tpl['path'])
    conda, pip = [], []
    n = total // 2
    for i in range(total - n):
        ver = '%d.%d.%d' % (rng.randrange(1, 9), rng.randrange(0, 30), rng.randrange(0, 20))
        c = copy.deepcopy(conda_tpl)
        c['name'] = 'cpkg-%04d' % i
        c['version'] = ver
        c['build'] = 'py37h%07x_%d' % (rng.randrange(1 << 28), rng.randrange(3))
        c['md5'] = '%032x' % rng.randrange(1 << 128)
        c['sha256'] = '%064x' % rng.randrange(1 << 256)
        c['url'] = 'https://repo.anaconda.com/pkgs/main/linux-64/%s-%s-%s.conda' % (c['name'], ver, c['build'])
        if i < n:
            conda.append(c)
        p = copy.deepcopy(pip_tpl)
        p['name'] = 'ppkg-%04d' % i
        p['version'] = ver
        p['path'] = '%s/%s-%s.dist-info' % (site, p['name'].replace('-', '_'), ver)
        pip.append(p)
    base['conda']['packages'] = conda
    base['conda']['package_count'] = n
    base['pip']['distributions'] = pip
    base['pip']['count'] = len(pip)
    base['pip']['conda_and_pip'] = []


def bump(v):
    parts = v.split('.')
    parts[-1] = str(int(parts[-1]) + 1) if parts[-1].isdigit() else parts[-1] + '1'
    return '.'.join(parts)


def upgrade(a, rng):
    """B: what a machine looks like some months later."""
    b = copy.deepcopy(a)
    b['host']['hostname'] = 'other-host'
    for lst in (b['conda']['packages'], b['pip']['distributions']):
        n = len(lst)
        for i in rng.sample(range(n), n * 5 // 100):
            lst[i]['version'] = bump(lst[i]['version'])
        for i in sorted(rng.sample(range(n), n * 2 // 100), reverse=True):
            del lst[i]
        for j in range(n * 2 // 100):
            extra = copy.deepcopy(lst[0])
            extra['name'] = 'new-%04d' % j
            lst.append(extra)
    b['frameworks']['torch']['version'] = '1.11.0+cu113'
    b['cuda']['toolkits'][0]['version'] = '11.3.109'
    b['gpu']['driver']['version'] = '470.57.02'
    return b


def write(doc, path):
    # the id of the content, as envlock computes it: the canonical form without id, created and
    # verify (keys sorted, compact); every lock carries one, and loading checks the lock's shape
    body = {k: v for k, v in doc.items() if k not in ('id', 'created', 'verify')}
    canon = json.dumps(body, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode()
    doc = dict(doc, id='sha256:' + hashlib.sha256(canon).hexdigest())
    with open(path, 'w') as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write('\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('what', choices=['pair', 'fleet'])
    ap.add_argument('outdir')
    ap.add_argument('--packages', type=int, default=None)
    ap.add_argument('--count', type=int, default=256)
    ap.add_argument('--golden', default=GOLDEN)
    args = ap.parse_args()
    rng = random.Random(20240101)
    base = json.load(open(args.golden))
    os.makedirs(args.outdir, exist_ok=True)
    if args.what == 'pair':
        synthetic(base, args.packages or 1000, rng)
        write(base, os.path.join(args.outdir, 'a.json'))
        write(upgrade(base, rng), os.path.join(args.outdir, 'b.json'))
        return
    if args.packages:
        synthetic(base, args.packages, rng)
    dists = base['pip']['distributions']
    for i in range(1, args.count + 1):
        node = copy.deepcopy(base)
        node['host']['hostname'] = 'node%03d' % i
        if i == 17:
            node['gpu']['driver']['version'] = '470.57.02'
        if 100 <= i <= 103:
            for d in node['pip']['distributions']:
                if d['name'] in ('numpy', dists[0]['name']):
                    d['version'] = bump(d['version'])
        if i == 200:
            node['pip']['distributions'] = [d for d in node['pip']['distributions'] if d['name'] not in ('yapf', dists[-1]['name'])]
        if i == 250:
            node['env']['variables']['CUDA_VISIBLE_DEVICES'] = '0'
        write(node, os.path.join(args.outdir, 'node%03d.json' % i))


if __name__ == '__main__':
    main()
