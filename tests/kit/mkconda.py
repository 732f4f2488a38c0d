#!/usr/bin/env python3
"""Real conda packages for envlock's link step, made at test time with
Debian's conda-package-handling (cph), and the independent checks of what
envlock linked.

  mkconda.py pkgs OUT PLACEHOLDER
      package folders under OUT/src and their archives under OUT/pkgs:
        python       this machine's python3 wrapped as `venv --copies` does
                     (bin/python a copy, pyvenv.cfg's home its folder), .conda
        elc-lib      a text file and an ELF program with PLACEHOLDER (its
                     RUNPATH and a string), a soft link, a no_link file, .conda
        elc-noarch   noarch: python with an entry point; made .tar.bz2, then
                     `cph transmute`d to .conda
        elc-old      info/files and info/has_prefix only (the standard
                     placeholder), .tar.bz2
  mkconda.py bad OUT KIND PLACEHOLDER
      one hostile package elc-bad (KIND: escape, outlink, longph, truncated)
  mkconda.py env ENV CHANNEL ARCHIVE...
      the machine a lock is saved on: each archive `cph extract`ed into ENV
      and its conda-meta record (channel, url, md5, sha256, files)
  mkconda.py check PREFIX XY ARCHIVE...
      each archive `cph extract`ed again and compared with PREFIX: bytes
      after conda's documented replacement (computed here), modes, link
      targets; prints one line per difference, nothing when all agree
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

PH_STD = "/opt/anaconda1anaconda2anaconda3"


def cph(*args):
    subprocess.run(["cph"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.chmod(path, mode)


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def finish(root, name, version, build, extra=None, has_prefix=None, paths=None, old=False):
    """info/index.json, and info/paths.json (or info/files) from the folder itself."""
    index = {"name": name, "version": version, "build": build, "build_number": int(build.rsplit("_", 1)[-1]),
             "subdir": "linux-64", "depends": [], "license": "MIT", "timestamp": 1700000000000}
    index.update(extra or {})
    write(os.path.join(root, "info/index.json"), json.dumps(index, indent=2, sort_keys=True))
    files = []
    for d, dirs, fs in os.walk(root):
        dirs.sort()
        for f in sorted(fs + [x for x in dirs if os.path.islink(os.path.join(d, x))]):
            rel = os.path.relpath(os.path.join(d, f), root)
            if not rel.startswith("info/"):
                files.append(rel)
    files.sort()
    if old:
        write(os.path.join(root, "info/files"), "".join(f + "\n" for f in files))
        write(os.path.join(root, "info/has_prefix"), "".join(f + "\n" for f in has_prefix or []))
        return
    entries = []
    for rel in files:
        p = os.path.join(root, rel)
        e = {"_path": rel}
        if os.path.islink(p):
            e["path_type"] = "softlink"
        else:
            e.update(path_type="hardlink", sha256=sha(p), size_in_bytes=os.path.getsize(p))
        e.update((paths or {}).get(rel, {}))
        entries.append(e)
    write(os.path.join(root, "info/paths.json"), json.dumps({"paths": entries, "paths_version": 1}, indent=2))


def pkgs(out, ph):
    src, dst = os.path.join(out, "src"), os.path.join(out, "pkgs")
    os.makedirs(dst, exist_ok=True)
    py = os.path.realpath("/usr/bin/python3")
    xy = "%d.%d" % sys.version_info[:2] if os.path.realpath(sys.executable) == py else \
        subprocess.check_output([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], text=True).strip()
    pyver = subprocess.check_output([py, "-c", "import platform; print(platform.python_version())"], text=True).strip()

    # python: `python3 -m venv --copies` of this machine's python3
    r = os.path.join(src, "python")
    write(os.path.join(r, "bin/python"), open(py, "rb").read(), 0o755)
    os.symlink("python", os.path.join(r, "bin/python3"))
    write(os.path.join(r, "pyvenv.cfg"), "home = %s\ninclude-system-site-packages = false\nversion = %s\n" % (os.path.dirname(py), pyver))
    write(os.path.join(r, "lib/python%s/site-packages/README.txt" % xy), "the environment's site-packages\n")
    finish(r, "python", pyver, "h0_0")
    cph("create", r, "python-%s-h0_0.conda" % pyver, "--out-folder", dst)

    # elc-lib: a text file and an ELF program with the placeholder, a soft link, a no_link file
    r = os.path.join(src, "elc-lib")
    write(os.path.join(r, "etc/elc.conf"), "prefix=%s\nlibdir=%s/lib\ntwice=%s:%s\n" % (ph, ph, ph, ph))
    c = os.path.join(out, "hello.c")
    write(c, '#include <stdio.h>\nstatic const char where[] = "%s/share/elc";\n'
             'int main(void) { printf("elc-hello %%s\\n", where); return 0; }\n' % ph)
    os.makedirs(os.path.join(r, "bin"), exist_ok=True)
    subprocess.run(["cc", "-O0", "-o", os.path.join(r, "bin/elc-hello"), c, "-Wl,-rpath," + ph + "/lib",
                    "-Wl,--enable-new-dtags"], check=True)
    write(os.path.join(r, "lib/libelc.so.1"), b"\x7fELF not really, but the placeholder: " + ph.encode() + b"/lib\0rest\0", 0o755)
    os.symlink("libelc.so.1", os.path.join(r, "lib/libelc.so"))
    write(os.path.join(r, "share/elc/no-link.dat"), "copied, never linked\n")
    write(os.path.join(r, "share/elc/plain.txt"), "hard linked\n")
    # a script whose shebang outgrows the kernel's 127 bytes in a long prefix
    write(os.path.join(r, "bin/elc-tool"), "#!%s/bin/python\nimport sys\nprint('elc-tool', sys.prefix)\n" % ph, 0o755)
    # a license past ASCII: the record writes it as conda's json.dumps does (\uXXXX)
    finish(r, "elc-lib", "1.2.0", "h1a2b3c_0", extra={"license": "MIT (\u00a9 elc, \U0001d53c)"}, paths={
        "bin/elc-tool": {"prefix_placeholder": ph, "file_mode": "text"},
        "etc/elc.conf": {"prefix_placeholder": ph, "file_mode": "text"},
        "bin/elc-hello": {"prefix_placeholder": ph, "file_mode": "binary"},
        "lib/libelc.so.1": {"prefix_placeholder": ph, "file_mode": "binary"},
        "share/elc/no-link.dat": {"no_link": True}})
    cph("create", r, "elc-lib-1.2.0-h1a2b3c_0.conda", "--out-folder", dst)

    # elc-noarch: noarch python, an entry point; .tar.bz2 transmuted to .conda
    r = os.path.join(src, "elc-noarch")
    write(os.path.join(r, "site-packages/elcmod/__init__.py"), "def main():\n    print('elc-entry ok', __file__)\n    return 0\n")
    write(os.path.join(r, "site-packages/elcmod/data.txt"), "data\n")
    write(os.path.join(r, "info/link.json"), json.dumps({"noarch": {"type": "python", "entry_points": ["elc-entry = elcmod:main"]},
                                                        "package_metadata_version": 1}))
    finish(r, "elc-noarch", "0.3", "pyh0_0", extra={"noarch": "python", "subdir": "noarch"})
    tmp = tempfile.mkdtemp(dir=out)
    cph("create", r, "elc-noarch-0.3-pyh0_0.tar.bz2", "--out-folder", tmp)
    cph("transmute", os.path.join(tmp, "elc-noarch-0.3-pyh0_0.tar.bz2"), ".conda", "--out-folder", dst)
    shutil.rmtree(tmp)

    # elc-old: info/files and info/has_prefix only
    r = os.path.join(src, "elc-old")
    write(os.path.join(r, "bin/elc-old"), "#!/bin/sh\n# made in %s\necho %s/bin\n" % (PH_STD, PH_STD), 0o755)
    write(os.path.join(r, "share/elc-old.txt"), "%s is left as it is: not in has_prefix\n" % PH_STD)
    finish(r, "elc-old", "0.9", "0", old=True, has_prefix=["bin/elc-old"])
    cph("create", r, "elc-old-0.9-0.tar.bz2", "--out-folder", dst)


def bad(out, kind, ph):
    r = os.path.join(out, "src", "elc-bad-" + kind)
    dst = os.path.join(out, "pkgs")
    os.makedirs(dst, exist_ok=True)
    write(os.path.join(r, "share/ok.txt"), "fine\n")
    paths = {}
    if kind == "outlink":
        os.symlink("/etc/passwd", os.path.join(r, "share/passwd"))
    if kind == "longph":
        write(os.path.join(r, "etc/x.conf"), "x\n")
        paths["etc/x.conf"] = {"prefix_placeholder": "/" + "q" * 2047, "file_mode": "text"}
    finish(r, "elc-bad", "1.0", "0", paths=paths)
    if kind == "escape":
        pj = os.path.join(r, "info/paths.json")
        d = json.load(open(pj))
        d["paths"][0]["_path"] = "../../escaped.txt"
        write(pj, json.dumps(d))
    fn = "elc-bad-1.0-0.conda"
    cph("create", r, fn, "--out-folder", dst)
    if kind == "truncated":
        p = os.path.join(dst, fn)
        data = open(p, "rb").read()
        open(p, "wb").write(data[: len(data) // 2])


def env(prefix, channel, archives):
    os.makedirs(os.path.join(prefix, "conda-meta"), exist_ok=True)
    for a in archives:
        fn = os.path.basename(a)
        dist = fn[: -len(".conda")] if fn.endswith(".conda") else fn[: -len(".tar.bz2")]
        tmp = tempfile.mkdtemp()
        try:
            cph("extract", a, "--dest", tmp)
            index = json.load(open(os.path.join(tmp, "info/index.json")))
        except (subprocess.CalledProcessError, OSError):
            # a damaged archive: recorded all the same, as a cache that kept it would be
            name, version, build = fn.rsplit(".", 1)[0].rsplit("-", 2)
            index = {"name": name, "version": version, "build": build, "build_number": 0, "subdir": "linux-64"}
        files = []
        for d, dirs, fs in os.walk(tmp):
            for f in fs + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
                rel = os.path.relpath(os.path.join(d, f), tmp)
                if rel.startswith("info/"):
                    continue
                files.append(rel)
                t = os.path.join(prefix, rel)
                os.makedirs(os.path.dirname(t), exist_ok=True)
                if os.path.lexists(t):
                    os.unlink(t)
                if os.path.islink(os.path.join(d, f)):
                    os.symlink(os.readlink(os.path.join(d, f)), t)
                else:
                    shutil.copy2(os.path.join(d, f), t)
        shutil.rmtree(tmp)
        data = open(a, "rb").read()
        rec = dict(index, channel=channel, url="%s/%s/%s" % (channel, index.get("subdir", "linux-64"), fn), fn=fn,
                   md5=hashlib.md5(data).hexdigest(), sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                   files=sorted(files))
        json.dump(rec, open(os.path.join(prefix, "conda-meta", dist + ".json"), "w"), indent=2, sort_keys=True)


def binary_replace(data, a, b):
    """conda/core/portability.py binary_replace, as documented: within each C string, padded with NULs."""
    def sub(m):
        occ = m.group().count(a)
        pad = (len(a) - len(b)) * occ
        assert pad >= 0
        return m.group().replace(a, b) + b"\0" * pad
    return re.sub(re.escape(a) + b"([^\0]*?)\0", sub, data)


# conda/core/portability.py SHEBANG_REGEX and replace_long_shebang (MAX_SHEBANG_LENGTH 127 on Linux)
SHEBANG_REGEX = rb"^(#!(?:[ ]*)(/(?:\\ |[^ \n\r\t])*)(.*))$"


def long_shebang(data):
    m = re.match(SHEBANG_REGEX, data, re.MULTILINE)
    if m:
        whole, exe, opts = m.groups()
        folder, name = exe.rsplit(b"/", 1)
        if len(whole) > 127 or b"\\ " in folder:
            data = data.replace(whole, b"#!/usr/bin/env " + name + opts)
    return data


def check(prefix, xy, archives):
    problems = []
    for a in archives:
        tmp = tempfile.mkdtemp()
        cph("extract", a, "--dest", tmp)
        index = json.load(open(os.path.join(tmp, "info/index.json")))
        noarch = index.get("noarch") == "python"
        pj = os.path.join(tmp, "info/paths.json")
        if os.path.exists(pj):
            entries = json.load(open(pj))["paths"]
        else:
            hp = {}
            if os.path.exists(os.path.join(tmp, "info/has_prefix")):
                for line in open(os.path.join(tmp, "info/has_prefix")).read().split("\n"):
                    parts = line.split()
                    if len(parts) == 1:
                        hp[parts[0]] = (PH_STD, "text")
                    elif len(parts) == 3:
                        hp[parts[2]] = (parts[0], parts[1])
            entries = []
            for f in open(os.path.join(tmp, "info/files")).read().split():
                e = {"_path": f}
                if f in hp:
                    e.update(prefix_placeholder=hp[f][0], file_mode=hp[f][1])
                entries.append(e)
        for e in entries:
            rel = e["_path"]
            dest = rel
            if noarch and rel.startswith("site-packages/"):
                dest = "lib/python%s/site-packages/%s" % (xy, rel[len("site-packages/"):])
            src, got = os.path.join(tmp, rel), os.path.join(prefix, dest)
            if os.path.islink(src):
                if not os.path.islink(got) or os.readlink(got) != os.readlink(src):
                    problems.append("%s: %s: link target differs" % (os.path.basename(a), dest))
                continue
            want = open(src, "rb").read()
            ph = e.get("prefix_placeholder")
            if ph:
                if e.get("file_mode") == "binary":
                    want = binary_replace(want, ph.encode(), prefix.encode())
                else:
                    want = long_shebang(want.replace(ph.encode(), prefix.encode()))
            if not os.path.isfile(got) or os.path.islink(got):
                problems.append("%s: %s: missing" % (os.path.basename(a), dest))
            elif open(got, "rb").read() != want:
                problems.append("%s: %s: bytes differ" % (os.path.basename(a), dest))
            elif os.stat(got).st_mode & 0o777 != os.stat(src).st_mode & 0o777:
                problems.append("%s: %s: mode %o, the archive's %o" % (os.path.basename(a), dest,
                                                                       os.stat(got).st_mode & 0o777, os.stat(src).st_mode & 0o777))
        shutil.rmtree(tmp)
    print("\n".join(problems))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "pkgs":
        pkgs(sys.argv[2], sys.argv[3])
    elif cmd == "bad":
        bad(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "env":
        env(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit("mkconda.py: no command %r" % cmd)
