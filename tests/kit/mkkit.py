#!/usr/bin/python3
"""Fixture kits for `envlock restore --kit` (tests/cli/t0080-restore-kit.sh).

  mkkit.py sources OUT
      Real package files and the environment they were installed from:
      OUT/archives/  two conda packages, one .tar.bz2 and one .conda (a zip
                     of metadata.json and info-/pkg- .tar.zst members, made
                     with the zstd program), each with info/index.json and
                     info/files as conda-build writes them
      OUT/wheels/    two wheels built by the real pip (`pip wheel --no-deps
                     --no-build-isolation`) from tiny local projects
      OUT/env/       a conda environment as conda leaves it after installing
                     those two packages from conda-forge: their files, and
                     conda-meta/*.json with the https URL, channel, md5, sha256

  mkkit.py kit LOCK ARCHIVES WHEELS KIT
      The kit `envlock pack LOCK -o KIT` writes (the format is fixed by
      issue 15): envlock.lock (a byte copy of LOCK), conda/<file name of the
      lock's URL>, wheels/<wheel>, envlock.kit.json with each file's size,
      sha256 (and md5 for conda); what is not in ARCHIVES or WHEELS is
      listed under "missing".

envlock's own pack is not used here: the kit is written from the format,
so a bug in one cannot hide one in the other.
"""
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

CHANNEL = "https://conda.anaconda.org/conda-forge"
SUBDIR = "linux-64"
PY = "/usr/bin/python3"

# name, version, build, format, {path in the prefix: content}
CONDA_PKGS = [
    ("elconda-tool", "1.0", "h1a2b3c_0", "tar.bz2",
     {"bin/elconda-tool": "#!/bin/sh\necho elconda-tool 1.0\n", "share/elconda-tool/README": "a tool\n"}),
    ("elconda-lib", "2.1.3", "h4d5e6f_1", "conda",
     {"lib/libelconda.so.2": "not really an ELF file\n", "include/elconda.h": "#define ELCONDA 213\n"}),
]
WHEELS = [("elkit-alpha", "1.0"), ("elkit_beta", "2.0.1")]


def tar_bytes(files, mode="w:"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for name in sorted(files):
            data = files[name].encode() if isinstance(files[name], str) else files[name]
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mtime = 1577836800
            ti.mode = 0o755 if name.startswith("bin/") else 0o644
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def zstd(data):
    return subprocess.run(["zstd", "-q", "-c", "-19"], input=data, stdout=subprocess.PIPE, check=True).stdout


def conda_archive(out, name, version, build, fmt, files):
    index = {"name": name, "version": version, "build": build, "build_number": int(build.rsplit("_", 1)[1]),
             "subdir": SUBDIR, "depends": [], "license": "BSD-3-Clause", "timestamp": 1577836800000}
    info = {"info/index.json": json.dumps(index, indent=2, sort_keys=True),
            "info/files": "".join(p + "\n" for p in sorted(files))}
    stem = "%s-%s-%s" % (name, version, build)
    fn = "%s.%s" % (stem, fmt)
    path = os.path.join(out, fn)
    if fmt == "tar.bz2":
        with open(path, "wb") as f:
            f.write(tar_bytes(dict(files, **info), "w:bz2"))
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            z.writestr("metadata.json", json.dumps({"conda_pkg_format_version": 2}))
            z.writestr("pkg-%s.tar.zst" % stem, zstd(tar_bytes(files)))
            z.writestr("info-%s.tar.zst" % stem, zstd(tar_bytes(info)))
    return fn, index


def digest(path, algo):
    h = hashlib.new(algo)
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def project(src, name, version):
    mod = re.sub(r"[-.]+", "_", name)
    d = os.path.join(src, name)
    os.makedirs(os.path.join(d, mod))
    with open(os.path.join(d, mod, "__init__.py"), "w") as f:
        f.write("VERSION = %r\n" % version)
    with open(os.path.join(d, "setup.py"), "w") as f:
        f.write("from setuptools import setup\nsetup(name=%r, version=%r, packages=[%r])\n" % (name, version, mod))
    return d


def sources(out):
    arch, wheels, env, src = (os.path.join(out, d) for d in ("archives", "wheels", "env", "src"))
    for d in (arch, wheels, env, src):
        os.makedirs(d)
    meta = os.path.join(env, "conda-meta")
    os.makedirs(meta)
    for name, version, build, fmt, files in CONDA_PKGS:
        fn, index = conda_archive(arch, name, version, build, fmt, files)
        for rel, text in files.items():
            p = os.path.join(env, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        path = os.path.join(arch, fn)
        rec = dict(index, fn=fn, url="%s/%s/%s" % (CHANNEL, SUBDIR, fn), channel="%s/%s" % (CHANNEL, SUBDIR),
                   md5=digest(path, "md5"), sha256=digest(path, "sha256"), files=sorted(files))
        with open(os.path.join(meta, "%s-%s-%s.json" % (name, version, build)), "w") as f:
            json.dump(rec, f, indent=1, sort_keys=True)
    with open(os.path.join(meta, "history"), "w") as f:
        f.write("==> 2020-01-01 00:00:00 <==\n# cmd: conda create -p %s elconda-tool elconda-lib\n" % env)
    for name, version in WHEELS:
        d = project(src, name, version)
        subprocess.run([PY, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                        "--disable-pip-version-check", "-w", wheels, d], check=True,
                       stdout=subprocess.DEVNULL)


def pep503(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def kit(lock_path, arch, wheels, out):
    lock = json.load(open(lock_path))
    for d in ("conda", "wheels"):
        os.makedirs(os.path.join(out, d))
    shutil.copyfile(lock_path, os.path.join(out, "envlock.lock"))
    items, missing = [], []
    for p in lock.get("conda", {}).get("packages", []):
        fn = p["url"].rsplit("/", 1)[1]
        src = os.path.join(arch, fn)
        if not os.path.isfile(src):
            missing.append({"kind": "conda", "name": p["name"], "version": p["version"],
                            "reason": "not in the package cache", "fetch": "curl -LO %s" % p["url"]})
            continue
        shutil.copyfile(src, os.path.join(out, "conda", fn))
        dst = os.path.join(out, "conda", fn)
        items.append({"kind": "conda", "name": p["name"], "version": p["version"], "build": p["build"],
                      "path": "conda/" + fn, "size": os.path.getsize(dst), "sha256": digest(dst, "sha256"),
                      "md5": digest(dst, "md5"), "from": "pkgs-cache"})
    have = {}
    for w in os.listdir(wheels):
        if w.endswith(".whl"):
            n, v = w.split("-")[:2]
            have[(pep503(n), v)] = w
    for d in lock.get("pip", {}).get("distributions", []):
        if d.get("installer") == "conda" or d.get("editable"):
            continue
        w = have.get((pep503(d["name"]), d["version"]))
        if not w:
            missing.append({"kind": "wheel", "name": d["name"], "version": d["version"],
                            "reason": "no wheel in the caches", "fetch": "pip download --no-deps %s==%s" % (d["name"], d["version"])})
            continue
        dst = os.path.join(out, "wheels", w)
        shutil.copyfile(os.path.join(wheels, w), dst)
        items.append({"kind": "wheel", "name": d["name"], "version": d["version"], "path": "wheels/" + w,
                      "size": os.path.getsize(dst), "sha256": digest(dst, "sha256"), "from": "wheels-dir",
                      "source": os.path.join(wheels, w), "rebuilt_files": 0})
    manifest = {"format": "envlock-kit", "version": 1, "created_by": "envlock tests/kit/mkkit.py",
                "lock": {"path": "envlock.lock", "id": lock["id"], "sha256": digest(lock_path, "sha256")},
                "items": items, "missing": missing}
    with open(os.path.join(out, "envlock.kit.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["sources"] and len(sys.argv) == 3:
        sources(sys.argv[2])
    elif sys.argv[1:2] == ["kit"] and len(sys.argv) == 6:
        kit(*sys.argv[2:])
    else:
        sys.exit("usage: mkkit.py sources OUT | mkkit.py kit LOCK ARCHIVES WHEELS KIT")
