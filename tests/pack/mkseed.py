#!/usr/bin/python3
"""Build the environment `envlock pack` is tested on (tests/cli/t0079-pack.sh).

    /usr/bin/python3 tests/pack/mkseed.py OUT

OUT/env     a conda install (condabin/, conda-meta/ records as conda 4.12
            writes them, with url, md5, sha256, fn) that is also a venv, so
            real pip installs into its site-packages
OUT/env/pkgs  the package cache: real archives, two .tar.bz2 (info/index.json,
            info/paths.json, files) and one .conda (zip: metadata.json,
            info-<fn>.tar.zst, pkg-<fn>.tar.zst, by the zstd command)
OUT/pipcache  pip's cache as real pip filled it:
            wheels/  elpk-alpha, built by pip from its sdist at install
            http/    elpk-beta, downloaded by pip from a local HTTP server
OUT/pipcache-other  the HTTP cache of the other pip on PATH, if there is one
            (pyenv's 23.2.1 here), downloading elpk-beta the same way
OUT/wheels  elpk-delta's wheel (for --wheels)
OUT/facts.json  what was built, for the test's checks

Installed (by real pip, RECORD is pip's own): elpk-alpha, elpk-beta, elpk-gamma
(its wheel is deleted after the install: only a rebuild can give it; it has a
console script, a plain script and a data file), elpk-delta, elpk-zeta (from
its wheel file's path: its direct_url.json has the file's sha256; the wheel is
in OUT/zeta) and elpk-eps in editable mode.

Exits 3 (the test skips, saying why) when the machine lacks what it needs:
python3 -m venv, pip, setuptools with wheel, zstd.
"""

import functools
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile

PY = "/usr/bin/python3"
EPOCH = 1600000000


def cannot(why):
    print(why)
    sys.exit(3)


def run(*argv, **kw):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        sys.stderr.write("mkseed: %s failed:\n%s\n" % (" ".join(argv), p.stdout))
        sys.exit(1)
    return p.stdout


def tar_bytes(members, mode):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for name, data in sorted(members.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = EPOCH
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def conda_files(name, version, build, files):
    index = {"name": name, "version": version, "build": build, "build_number": 0,
             "depends": [], "license": "MIT", "subdir": "linux-64", "timestamp": EPOCH * 1000}
    paths = {"paths": [{"_path": f, "path_type": "hardlink",
                        "sha256": hashlib.sha256(d).hexdigest(), "size_in_bytes": len(d)}
                       for f, d in sorted(files.items())], "paths_version": 1}
    info = {"info/index.json": json.dumps(index, indent=2).encode(),
            "info/paths.json": json.dumps(paths, indent=2).encode()}
    return info, files


def tar_bz2_pkg(path, name, version, build, files):
    info, payload = conda_files(name, version, build, files)
    with open(path, "wb") as f:
        f.write(tar_bytes({**info, **payload}, "w:bz2"))


def conda_pkg(path, name, version, build, files, tmp):
    # the .conda format: an uncompressed zip of metadata.json and two zstd tars
    info, payload = conda_files(name, version, build, files)
    stem = os.path.basename(path)[:-len(".conda")]
    parts = {}
    for kind, members in (("info", info), ("pkg", payload)):
        raw = os.path.join(tmp, "%s-%s.tar" % (kind, stem))
        with open(raw, "wb") as f:
            f.write(tar_bytes(members, "w"))
        run("zstd", "-q", "-19", "-f", raw, "-o", raw + ".zst")
        with open(raw + ".zst", "rb") as f:
            parts["%s-%s.tar.zst" % (kind, stem)] = f.read()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(zipfile.ZipInfo("metadata.json", (2020, 1, 1, 0, 0, 0)),
                   json.dumps({"conda_pkg_format_version": 2}))
        for n, d in sorted(parts.items()):
            z.writestr(zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0)), d)


def conda_record(env, fn, name, version, build, archive, files):
    with open(archive, "rb") as f:
        data = f.read()
    chan = "https://repo.anaconda.com/pkgs/main/linux-64"
    rec = {"build": build, "build_number": 0, "channel": chan, "depends": [],
           "extracted_package_dir": "%s/pkgs/%s" % (env, fn.rsplit(".conda", 1)[0].rsplit(".tar.bz2", 1)[0]),
           "files": sorted(files), "fn": fn, "license": "MIT",
           "md5": hashlib.md5(data).hexdigest(), "name": name,
           "package_tarball_full_path": "%s/pkgs/%s" % (env, fn),
           "paths_data": {"paths": [], "paths_version": 1}, "requested_spec": name,
           "sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "subdir": "linux-64",
           "timestamp": EPOCH * 1000, "url": "%s/%s" % (chan, fn), "version": version}
    stem = fn[:-len(".conda")] if fn.endswith(".conda") else fn[:-len(".tar.bz2")]
    with open(os.path.join(env, "conda-meta", stem + ".json"), "w") as f:
        json.dump(rec, f, indent=2, sort_keys=True)
    for rel, d in files.items():
        p = os.path.join(env, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(d)
    return rec


def project(src, name, version, extra_setup="", files=None):
    """A small setuptools project: a package, and what extra_setup adds."""
    mod = name.replace("-", "_")
    d = os.path.join(src, name)
    os.makedirs(os.path.join(d, mod), exist_ok=True)
    with open(os.path.join(d, mod, "__init__.py"), "w") as f:
        f.write("VERSION = %r\n\ndef main():\n    print(%r, VERSION)\n" % (version, name))
    with open(os.path.join(d, mod, "data.txt"), "w") as f:
        f.write("payload of %s %s\n" % (name, version) * 50)
    for rel, text in (files or {}).items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
        with open(os.path.join(d, rel), "w") as f:
            f.write(text)
    with open(os.path.join(d, "setup.py"), "w") as f:
        f.write("from setuptools import setup\n"
                "setup(name=%r, version=%r, packages=[%r], package_data={%r: ['data.txt']}%s)\n"
                % (name, version, mod, mod, extra_setup))
    return d


class CachingHandler(http.server.SimpleHTTPRequestHandler):
    """A file server whose answers pip's HTTP cache keeps (as PyPI's CDN says)."""

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=86400, public")
        super().end_headers()

    def log_message(self, *args):
        pass


def main():
    out = os.path.abspath(sys.argv[1])
    if shutil.which("zstd") is None:
        cannot("no zstd command to make a .conda archive")
    probe = subprocess.run([PY, "-c", "import setuptools, wheel"], capture_output=True)
    if probe.returncode != 0:
        cannot("%s has no setuptools with wheel: pip cannot build the test's projects" % PY)
    if subprocess.run([PY, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        cannot("%s has no pip" % PY)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = os.path.join(out, "env")
    if subprocess.run([PY, "-m", "venv", "--without-pip", env], capture_output=True).returncode != 0:
        cannot("%s -m venv does not work here" % PY)
    for d in ("condabin", "conda-meta", "pkgs", "envs"):
        os.makedirs(os.path.join(env, d), exist_ok=True)
    tmp = os.path.join(out, "tmp")
    os.makedirs(tmp)

    # conda: real archives in the cache, records of their install in conda-meta
    pkgs = os.path.join(env, "pkgs")
    facts = {"conda": {}, "pip": {}}
    specs = [("zlib", "1.2.13", "h5eee18b_0", ".tar.bz2", {"lib/zlib-fixture.txt": b"zlib " * 200}),
             ("xz", "5.4.2", "h5eee18b_0", ".tar.bz2", {"bin/xz-fixture": b"#!/bin/sh\necho xz\n"}),
             ("tzdata", "2023c", "h04d1e81_0", ".conda", {"share/zoneinfo/UTC-fixture": b"TZif2" * 100})]
    for name, version, build, ext, files in specs:
        fn = "%s-%s-%s%s" % (name, version, build, ext)
        path = os.path.join(pkgs, fn)
        if ext == ".conda":
            conda_pkg(path, name, version, build, files, tmp)
        else:
            tar_bz2_pkg(path, name, version, build, files)
        rec = conda_record(env, fn, name, version, build, path, files)
        facts["conda"][name] = {"fn": fn, "md5": rec["md5"], "sha256": rec["sha256"]}

    # pip: projects built and installed by the real pip
    src = os.path.join(out, "src")
    cache = os.path.join(out, "pipcache")
    pip = [PY, "-m", "pip", "--disable-pip-version-check", "--no-input", "--cache-dir", cache,
           "--python", os.path.join(env, "bin", "python")]
    penv = dict(os.environ, PIP_CONFIG_FILE="/dev/null")
    for k in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CACHE_DIR"):
        penv.pop(k, None)
    sdists = os.path.join(out, "sdists")
    os.makedirs(sdists)
    alpha = project(src, "elpk-alpha", "1.0")
    run(PY, "setup.py", "-q", "sdist", "-d", sdists, cwd=alpha)
    # an sdist pip builds at install: the wheel lands in pip's wheel cache; the build runs
    # under the env's python, which finds setuptools and wheel where Debian has them
    run(*pip, "install", "--no-index", "--no-build-isolation", "--find-links", sdists, "elpk-alpha==1.0",
        env=dict(penv, PYTHONPATH="/usr/lib/python3/dist-packages"))

    served = os.path.join(out, "served")
    os.makedirs(served)
    beta = project(src, "elpk-beta", "2.0.1")
    run(PY, "-m", "pip", "wheel", "-q", "--no-cache-dir", "--no-deps", "--no-build-isolation", "--no-index", "-w", served, beta, env=penv)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(CachingHandler, directory=served))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/" % httpd.server_address[1]
    # pip keeps http:// answers only from a trusted host (its caching adapter)
    run(*pip, "install", "--no-index", "--trusted-host", url[7:-1], "--find-links", url, "elpk-beta==2.0.1", env=penv)
    # another pip on PATH (pyenv's 23.2.1 here) fills a cache of its own, in its own version's format
    other = shutil.which("python3")
    facts["other_pip"] = None
    if other and os.path.realpath(other) != os.path.realpath(PY):
        ver = subprocess.run([other, "-m", "pip", "--version"], capture_output=True, text=True)
        if ver.returncode == 0:
            run(other, "-m", "pip", "--disable-pip-version-check", "--no-input", "download", "--no-deps",
                "--cache-dir", os.path.join(out, "pipcache-other"), "-d", os.path.join(tmp, "dl"),
                "--no-index", "--trusted-host", url[7:-1], "--find-links", url, "elpk-beta==2.0.1", env=penv)
            facts["other_pip"] = ver.stdout.split()[1]
    httpd.shutdown()

    gamma = project(src, "elpk-gamma", "0.3",
                    ", entry_points={'console_scripts': ['elpk-gamma = elpk_gamma:main']}"
                    ", scripts=['scripts/elpk-gamma-tool']"
                    ", data_files=[('share/elpk-gamma', ['share/notes.txt'])]",
                    {"scripts/elpk-gamma-tool": "#!/usr/bin/env python3\nprint('tool')\n",
                     "share/notes.txt": "installed under the prefix's share/\n"})
    built = os.path.join(out, "built")
    run(PY, "-m", "pip", "wheel", "-q", "--no-cache-dir", "--no-deps", "--no-build-isolation", "--no-index", "-w", built, gamma, env=penv)
    delta = project(src, "elpk-delta", "4.2")
    wheels = os.path.join(out, "wheels")
    run(PY, "-m", "pip", "wheel", "-q", "--no-cache-dir", "--no-deps", "--no-build-isolation", "--no-index", "-w", wheels, delta, env=penv)
    # local files: pip caches nothing of them
    run(*pip, "install", "--no-index", "--find-links", built, "--find-links", wheels,
        "elpk-gamma==0.3", "elpk-delta==4.2", env=penv)
    # an editable install (PEP 660): restore makes it from its repository, a kit has no wheel of it
    eps = project(src, "elpk-eps", "0.1")
    run(*pip, "install", "--no-index", "--no-build-isolation", "--no-deps", "-e", eps,
        env=dict(penv, PYTHONPATH="/usr/lib/python3/dist-packages"))
    # installed from the wheel file itself: pip's direct_url.json records its sha256
    zeta = project(src, "elpk-zeta", "1.1")
    zdir = os.path.join(out, "zeta")
    run(PY, "-m", "pip", "wheel", "-q", "--no-cache-dir", "--no-deps", "--no-build-isolation", "--no-index", "-w", zdir, zeta, env=penv)
    zwhl = os.path.join(zdir, sorted(os.listdir(zdir))[0])
    # pip records the hash only from the URL's fragment, as a requirements file with --hash gives it
    zsha = hashlib.sha256(open(zwhl, "rb").read()).hexdigest()
    run(*pip, "install", "--no-index", "--no-deps", "file://%s#sha256=%s" % (zwhl, zsha), env=penv)
    facts["pip"]["gamma_wheel"] = sorted(os.listdir(built))[0]
    shutil.rmtree(built)
    shutil.rmtree(tmp)
    facts["pip"]["beta_wheel"] = sorted(os.listdir(served))[0]
    facts["pip"]["delta_wheel"] = sorted(os.listdir(wheels))[0]
    facts["site"] = subprocess.run([os.path.join(env, "bin", "python"), "-c",
                                    "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True).stdout.strip()
    facts["http_url"] = url
    with open(os.path.join(out, "facts.json"), "w") as f:
        json.dump(facts, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
