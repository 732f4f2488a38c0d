#!/usr/bin/env python3
"""Write envlock's fuzz seed corpora, tests/fuzz/corpus/<target>/, from the fixture roots.

usage: mkseeds.py ENVLOCK FIXTURE_ROOTS OUTDIR

Every seed is a real file of a fixture root (or a lock envlock saved of
one), joined with the separator the harnesses split at (tests/fuzz/fuzz.h)
where a harness reads several files, in the order of its paths. Seeds
larger than 256 KiB are left out: libFuzzer mutates small inputs faster.
"""
import glob
import hashlib
import os
import subprocess
import sys
import tempfile

SEP = b"\n@@@@\n"
LIMIT = 256 << 10


def main():
    envlock, roots, out = sys.argv[1:4]
    seeds = {}

    def add(target, data):
        if data is None or len(data) > LIMIT:
            return
        seeds.setdefault(target, set()).add(data)

    def read(path):
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None

    def each(root, pattern):
        return sorted(glob.glob(os.path.join(root, pattern), recursive=True))

    def join(*parts):
        return SEP.join(p or b"" for p in parts)

    names = sorted(n for n in os.listdir(roots) if os.path.isdir(os.path.join(roots, n)))
    with tempfile.TemporaryDirectory() as tmp:
        locks = []
        for n in names:
            lock = os.path.join(tmp, n + ".lock.json")
            env = dict(os.environ, HOME=tmp, LANG="C", TZ="UTC", SOURCE_DATE_EPOCH="1700000000")
            subprocess.run([envlock, "save", "--root", os.path.join(roots, n), "--no-cache", "-o", lock],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if os.path.exists(lock):
                locks.append(read(lock))
        for lock in locks:
            add("lock", lock)
            add("rules", join(read("rules/envlock.rules.json"), lock))
        if len(locks) > 1:
            add("lock", join(locks[0], locks[1]))
        for f in each("tests/golden", "*.lock.json"):
            add("lock", read(f))

        # import: real `conda list --explicit` and `pip freeze` text, from the exports of the golden locks
        for f in each("tests/golden/export", "*.conda-explicit") + each("tests/golden/export", "*.requirements*"):
            add("import", read(f))

        # a signature file and its public key, made by envlock itself
        key = os.path.join(tmp, "k")
        data = os.path.join(tmp, "SHA256SUMS")
        with open(data, "wb") as f:
            f.write(b"signed bytes\n")
        r = subprocess.run([envlock, "keygen", "-o", key], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            pubs = [key + ".pub.pem"]
            subprocess.run([envlock, "sign", "--file", data, "--key", key + ".key.pem", "-o", data + ".sig"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if pubs and os.path.exists(data + ".sig"):
                add("sig", join(read(data + ".sig"), read(pubs[0])))
                add("sig", join(read(data + ".sig"), read(key + ".key.pem")))

        # bundles: the hostile corpus of tests/bundle, and a real bundle
        hostile = os.path.join(tmp, "hostile")
        subprocess.run([sys.executable, "tests/bundle/mkhostile.py", hostile],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for f in each(hostile, "*.tar.zst"):
            # the 1 GiB bomb takes 1.5 s a run (verify and list hash all of it): tests/cli covers it
            if not f.endswith("/bomb.tar.zst"):
                add("bundle", read(f))

    for n in names:
        root = os.path.join(roots, n)
        for f in each(root, "**/*.py"):
            if "configs" in f.split(os.sep):
                add("config", read(f))
        for f in each(root, "**/__init__.py"):
            text = read(f)
            if text and b"mmcv" in text:
                add("pysource", text)
        for f in each(root, "etc/ld.so.cache"):
            add("ldcache", read(f))
        for f in each(root, "**/lib*.so*"):
            if os.path.isfile(f) and not os.path.islink(f):
                add("elf", read(f))
        add("os", join(read(root + "/etc/os-release") or read(root + "/usr/lib/os-release"),
                       read(root + "/usr/lib/os-release"), read(root + "/proc/sys/kernel/osrelease"),
                       read(root + "/etc/hostname"), read(root + "/etc/debian_version")))
        infos = each(root, "proc/driver/nvidia/gpus/*/information")
        if os.path.exists(root + "/proc/driver/nvidia/version"):
            add("driver", join(read(root + "/proc/driver/nvidia/version"), read(infos[0]) if infos else b""))
        for home in each(root, "usr/local/cuda-*"):
            j, t = read(home + "/version.json"), read(home + "/version.txt")
            h = read(home + "/include/cuda_runtime_api.h")
            add("cuda", join(j, t, h))
            for lib in each(home, "lib64/libcudnn.so.*"):
                if not os.path.islink(lib):
                    add("cudnn", join(t or b"CUDA Version 11.3.109\n", read(home + "/include/cudnn_version.h"),
                                      read(lib), read(home + "/include/cudnn.h")))
        for meta in each(root, "**/conda-meta"):
            recs = [read(f) for f in each(meta, "*.json")]
            for i in range(0, len(recs), 2):
                add("conda", join(recs[i], read(meta + "/history"), recs[i + 1] if i + 1 < len(recs) else b""))
        for d in each(root, "**/*.dist-info"):
            add("pip", join(read(d + "/METADATA"), read(d + "/RECORD"), read(d + "/WHEEL"),
                            read(d + "/direct_url.json"), read(d + "/INSTALLER")))
        for e in each(root, "**/PKG-INFO"):
            add("pip", join(b"", b"", b"", b"", b"", read(e)))
        for e in each(root, "**/*.egg-link"):
            add("pip", join(b"", b"", b"", b"", b"", b"", read(e)))
        for site in each(root, "**/site-packages") + each(root, "**/dist-packages"):
            parts = [read(site + "/torch/version.py"), read(site + "/mmcv/version.py"), read(site + "/mmdet/__init__.py")]
            if any(parts):
                add("frameworks", join(*parts))
    # the fixtures' ELF files are all of one generator's shape: real ones of this Debian
    # besides, with symbol versions needed and defined, PT_INTERP and notes
    for f in ["/lib/x86_64-linux-gnu/libdl.so.2", "/lib/x86_64-linux-gnu/librt.so.1",
              "/lib/x86_64-linux-gnu/libBrokenLocale.so.1", "/lib/x86_64-linux-gnu/libnss_dns.so.2",
              "/usr/bin/true"]:
        add("elf", read(f))
        add("cudnn", join(b"CUDA Version 11.3.109\n", b"#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 2\n#define CUDNN_PATCHLEVEL 0\n",
                          read(f)))
    for d in each("tests/fixtures/configs", "**/*.py"):
        add("config", read(d))

    # the journal and the digest cache, in the forms envlock writes them
    add("journal", b"2026-01-01T00:00:00Z begin sha256:" + b"a" * 64 + b"\n"
        b"2026-01-01T00:00:01Z start conda\n2026-01-01T00:00:01Z creating /opt/conda/envs/mmdet\n"
        b"2026-01-01T00:00:09Z created /opt/conda/envs/mmdet\n2026-01-01T00:00:09Z end conda ok\n"
        b"2026-01-01T00:00:09Z start pip\n2026-01-01T00:00:10Z aside /x /x.envlock-bak-1\n")
    add("hashcache", b"envlock-hashes 1\n66306 1234 19 1700000000000000000 1700000000000000000 " + b"0" * 64 + b"\n")

    for target, datas in seeds.items():
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for data in datas:
            with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
                f.write(data)
        print(f"{target}: {len(datas)} seeds")


main()
