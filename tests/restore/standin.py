#!/usr/bin/python3
"""Stand-ins for the programs `envlock restore` runs that cannot be
installed on the machines the test suite runs on: conda (no conda
package in Debian, and no network to fetch packages), NVIDIA's CUDA
runfile (a multi-GB download) and the pip of a Python 3.7 conda
environment captured in a fixture. Each checks its command line and
input as strictly as the real program would need them, then does what
the real one would have done by copying from a fixture tree.

With `create --offline` and an explicit spec of file:// URLs (a restore
from `envlock pack`'s kit) the conda role really installs: it checks each
archive's md5 or sha256 from the URL's fragment, unpacks .tar.bz2 and
.conda archives (zip + pkg-*.tar.zst, through the zstd program) into the
prefix and writes conda-meta/<name>-<version>-<build>.json from the
archive's info/index.json, as conda does. It never opens a network
connection: an http(s) URL under --offline is refused.

The role is the name it is run by (a symlink "conda", "python3.7") or,
for the runfile (run as `sh RUNFILE ...`), the first argument "runfile".

Environment:
  STANDIN_LOG         file each call is appended to (argv), for the tests
  STANDIN_EXPECT      conda: file with the exact package lines expected, in order
  STANDIN_FIXTURE_ENV conda/python: a captured environment to copy files from
  STANDIN_TOOLKIT     runfile: a captured CUDA toolkit to copy (without cuDNN)
  STANDIN_KILL_AFTER  conda: after writing this many records, kill the caller (a crash)
  STANDIN_FORBID      conda/python: a path that must not appear in the arguments or
                      in the files read (this machine's path to a tree it runs in)

What conda and pip would leave in the environment about how they were run
is written there too: conda-meta/history's "# cmd:" line (as conda does), and
site-packages/standin-pip.txt (the prefix and the requirements file pip saw).
"""
import hashlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import urllib.parse
import zipfile

URL_LINE = re.compile(r"^(https?://\S+)/([^/#\s]+)-([^-/#\s]+)-([^-/#\s]+)\.(conda|tar\.bz2)#([0-9a-f]{32}|[0-9a-f]{64})$")
FILE_LINE = re.compile(r"^file://(/[^#\s]*)/([^/#\s]+)-([^-/#\s]+)-([^-/#\s]+)\.(conda|tar\.bz2)#([0-9a-f]{32}|[0-9a-f]{64})$")


def fail(msg):
    sys.stderr.write("standin: %s\n" % msg)
    sys.exit(2)


def log(role, args):
    path = os.environ.get("STANDIN_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps([role] + args) + "\n")
    forbid(" ".join(args), "the arguments")


def forbid(text, where):
    bad = os.environ.get("STANDIN_FORBID")
    if bad and bad in text:
        fail("%s name %s, a path outside the tree this runs in" % (where, bad))


def read_input(path):
    with open(path) as f:
        text = f.read()
    forbid(text, path)
    return text.splitlines()


def conda(argv):
    offline = argv[2:3] == ["--offline"]
    args = argv[:2] + argv[3:] if offline else argv
    if len(args) != 6 or args[:3] != ["create", "--yes", "--prefix"] or args[4] != "--file":
        fail("unexpected arguments: %r" % args)
    prefix, spec = args[3], args[5]
    lines = read_input(spec)
    body = [l for l in lines if l and not l.startswith("#")]
    if not body or body[0] != "@EXPLICIT":
        fail("%s: the first line that is not a comment must be @EXPLICIT" % spec)
    pkgs = body[1:]
    files = [l for l in pkgs if FILE_LINE.match(l)]
    for l in pkgs:
        if offline and re.match(r"^https?://", l):
            fail("%s: %r: an http(s) URL under --offline (no network)" % (spec, l))
        if not URL_LINE.match(l) and not FILE_LINE.match(l):
            fail("%s: not an explicit package line: %r" % (spec, l))
    if files:
        if len(files) != len(pkgs):
            fail("%s: file:// and http(s) URLs mixed" % spec)
        install_files(prefix, pkgs, argv)
        return
    expect = os.environ.get("STANDIN_EXPECT")
    if expect:
        with open(expect) as f:
            want = [l.rstrip("\n") for l in f if l.strip()]
        if want != pkgs:
            fail("%s: package lines differ from the expected ones (order or digests)" % spec)
    if os.path.exists(prefix):
        fail("%s: exists" % prefix)
    meta = os.path.join(prefix, "conda-meta")
    os.makedirs(meta)
    src = os.environ.get("STANDIN_FIXTURE_ENV")
    if src:
        copy_env(src, prefix)
    kill_after = int(os.environ.get("STANDIN_KILL_AFTER", "0"))
    for i, l in enumerate(pkgs):
        m = URL_LINE.match(l)
        url, name, version, build, ext, digest = m.groups()
        rec = {"name": name, "version": version, "build": build, "build_number": 0,
               "url": "%s/%s-%s-%s.%s" % (url, name, version, build, ext),
               "channel": url.rsplit("/", 1)[0], "subdir": url.rsplit("/", 1)[1], "files": []}
        rec["md5" if len(digest) == 32 else "sha256"] = digest
        with open(os.path.join(meta, "%s-%s-%s.json" % (name, version, build)), "w") as f:
            json.dump(rec, f)
        if kill_after and i + 1 == kill_after:
            os.kill(os.getppid(), signal.SIGKILL)
            sys.exit(1)
    with open(os.path.join(meta, "history"), "w") as f:
        f.write("==> created by the envlock test stand-in <==\n")
        f.write("# cmd: %s %s\n" % (sys.argv[0], " ".join(args)))


def digest_ok(path, digest):
    h = hashlib.md5() if len(digest) == 32 else hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest() == digest


def safe_members(tar, where):
    """The archive's members, refusing what would land outside the prefix."""
    out = []
    for m in tar.getmembers():
        n = m.name
        if n.startswith("/") or ".." in n.split("/") or not (m.isfile() or m.isdir() or m.issym()):
            fail("%s: unsafe member %r" % (where, n))
        if m.issym() and (m.linkname.startswith("/") or ".." in m.linkname.split("/")):
            fail("%s: link %r leads outside" % (where, n))
        out.append(m)
    return out


def zstd_tar(data, where):
    """A .tar.zst member of a .conda archive, as a tarfile (the zstd program, else python's zstandard)."""
    try:
        raw = subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        try:
            import zstandard
        except ImportError:
            fail("%s: no zstd program or python zstandard module to read it" % where)
        raw = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return tarfile.open(fileobj=io.BytesIO(raw), mode="r:")


def unpack(path, prefix):
    """The package's files into prefix; its info/ (index.json, files) returned as a dict of bytes."""
    info = {}
    if path.endswith(".tar.bz2"):
        tars = [tarfile.open(path, "r:bz2")]
    else:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            if "metadata.json" not in names:
                fail("%s: no metadata.json: not a .conda archive" % path)
            tars = [zstd_tar(z.read(n), path) for n in names if n.endswith(".tar.zst") and n.startswith(("info-", "pkg-"))]
    for t in tars:
        for m in safe_members(t, path):
            if m.name.startswith("info/"):
                if m.isfile():
                    info[m.name[5:]] = t.extractfile(m).read()
                continue
            dest = os.path.join(prefix, m.name)
            if m.isdir():
                os.makedirs(dest, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if m.issym():
                os.symlink(m.linkname, dest)
            else:
                with open(dest, "wb") as f:
                    f.write(t.extractfile(m).read())
                os.chmod(dest, m.mode & 0o777)
        t.close()
    if "index.json" not in info:
        fail("%s: no info/index.json" % path)
    return info


def package_files(info):
    """What conda records as a package's files: info/paths.json's paths (conda >= 4.3 packages), else info/files."""
    if "paths.json" in info:
        return sorted(p["_path"] for p in json.loads(info["paths.json"]).get("paths", []))
    return [l for l in info.get("files", b"").decode().splitlines() if l]


def install_files(prefix, pkgs, argv):
    """conda create from the archives themselves: check, unpack, record each one."""
    if os.path.exists(prefix):
        fail("%s: exists" % prefix)
    checked = []
    for l in pkgs:
        m = FILE_LINE.match(l)
        url = l.split("#")[0]
        path = urllib.parse.unquote(url[len("file://"):])
        forbid(path, "the spec")
        digest = m.group(6)
        if not os.path.isfile(path):
            fail("%s: no such archive" % path)
        if not digest_ok(path, digest):
            fail("%s: %s does not match" % (path, "md5" if len(digest) == 32 else "sha256"))
        checked.append((url, path, digest))
    meta = os.path.join(prefix, "conda-meta")
    os.makedirs(meta)
    for url, path, digest in checked:
        info = unpack(path, prefix)
        index = json.loads(info["index.json"])
        fn = os.path.basename(path)
        with open(path, "rb") as f:
            data = f.read()
        rec = {k: index[k] for k in ("name", "version", "build", "build_number", "subdir", "depends", "license")
               if k in index}
        rec.update({"fn": fn, "url": url, "md5": hashlib.md5(data).hexdigest(),
                    "sha256": hashlib.sha256(data).hexdigest(),
                    # conda names a file URL's channel by the folder the archive is in
                    "channel": url.rsplit("/", 1)[0],
                    "files": package_files(info)})
        with open(os.path.join(meta, "%s-%s-%s.json" % (rec["name"], rec["version"], rec["build"])), "w") as f:
            json.dump(rec, f, indent=1, sort_keys=True)
    with open(os.path.join(meta, "history"), "w") as f:
        f.write("==> created by the envlock test stand-in <==\n")
        f.write("# cmd: %s %s\n" % (sys.argv[0], " ".join(argv)))


def installer_of(distinfo):
    try:
        with open(os.path.join(distinfo, "INSTALLER")) as f:
            return f.readline().strip()
    except OSError:
        return ""


def copy_env(src, prefix):
    """The environment's files, without what pip installed (the pip step's job)."""
    for top, dirs, files in os.walk(src):
        rel = os.path.relpath(top, src)
        if rel.split(os.sep)[0] == "conda-meta":
            continue
        keep = []
        for d in dirs:
            p = os.path.join(top, d)
            if d.endswith((".dist-info", ".egg-info")) and installer_of(p) not in ("conda", ""):
                continue
            keep.append(d)
        dirs[:] = keep
        os.makedirs(os.path.join(prefix, rel), exist_ok=True)
        for name in files:
            if name.endswith(".egg-link") or name == "easy-install.pth":
                continue
            s = os.path.join(top, name)
            d = os.path.join(prefix, rel, name)
            if os.path.islink(s):
                os.symlink(os.readlink(s), d)
            else:
                shutil.copy2(s, d)
    # its Python is the pip stand-in: a copy of this file, so that the
    # environment's bin/ holds its Python as a real one does
    for exe in ("python3.7",):
        p = os.path.join(prefix, "bin", exe)
        if os.path.lexists(p):
            os.unlink(p)
        shutil.copy2(os.path.abspath(__file__), p)


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pip(args):
    if args[:6] != ["-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check"]:
        fail("unexpected arguments: %r" % args)
    rest = args[6:]
    if rest[:1] == ["--require-hashes"]:
        rest = rest[1:]
    links = None
    if rest[:2] == ["--no-index", "--find-links"]:
        links = rest[2]
        rest = rest[3:]
    # mmcv-full from OpenMMLab's page: a pre-built wheel only
    if rest[:1] == ["--only-binary"] and len(rest) > 1 and re.match(r"^[A-Za-z0-9._-]+$", rest[1]):
        rest = rest[2:]
    # the lock's index options after the requirements file: each a known option and an http(s) or file URL
    while len(rest) > 2 and rest[-2] in ("--index-url", "--extra-index-url", "--find-links") \
            and re.match(r"^(https?|file)://\S+$", rest[-1]):
        rest = rest[:-2]
    if len(rest) != 2 or rest[0] != "-r":
        fail("unexpected arguments: %r" % args)
    src = os.environ.get("STANDIN_FIXTURE_ENV", "/nonexistent")
    site_src = os.path.join(src, "lib", "python3.7", "site-packages")
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0])))
    site = os.path.join(prefix, "lib", "python3.7", "site-packages")
    reqs = [l.strip() for l in read_input(rest[1]) if l.strip()]
    with open(os.path.join(site, "standin-pip.txt"), "a") as f:
        f.write("prefix: %s\nrequirements: %s\n" % (prefix, rest[1]))
    for r in reqs:
        m = re.match(r"^([A-Za-z0-9._-]+)==([A-Za-z0-9.+!_-]+)( --hash=sha256:[0-9a-f]{64})?$", r)
        if m and links and m.group(3):
            # pip's --require-hashes from a folder of wheels (a kit's): the file's hash, then its contents
            install_wheel(links, site, m.group(1), m.group(2), m.group(3).split(":")[1])
            continue
        if m:
            name, version = m.group(1), m.group(2)
            found = [d for d in os.listdir(site_src) if d.endswith(".dist-info")
                     and norm(d[:-10].rsplit("-", 1)[0]) == norm(name) and d[:-10].rsplit("-", 1)[1] == version]
            if not found:
                fail("no distribution %s==%s to install" % (name, version))
            shutil.copytree(os.path.join(site_src, found[0]), os.path.join(site, found[0]))
            continue
        m = re.match(r"^-e (/\S+)$", r)
        if m:
            # pip stops on an editable source that is not there (an order that clones it later)
            if not os.path.isfile(os.path.join(m.group(1), "setup.py")):
                fail("%s does not appear to be a Python project: no setup.py" % m.group(1))
            for d in os.listdir(site_src):
                if d.endswith(".egg-link"):
                    with open(os.path.join(site_src, d)) as f:
                        if m.group(1).endswith(f.readline().strip()):
                            shutil.copy2(os.path.join(site_src, d), os.path.join(site, d))
                            break
            else:
                fail("no editable install from %s" % m.group(1))
            continue
        fail("%s: not a pinned requirement: %r" % (rest[1], r))


def install_wheel(links, site, name, version, sha):
    forbid(links, "the wheel folder")
    found = [w for w in sorted(os.listdir(links)) if w.endswith(".whl")
             and norm(w.split("-")[0]) == norm(name) and w.split("-")[1] == version]
    if not found:
        fail("%s: no wheel of %s==%s" % (links, name, version))
    path = os.path.join(links, found[0])
    with open(path, "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != sha:
            fail("%s: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE" % path)
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            if n.startswith("/") or ".." in n.split("/"):
                fail("%s: unsafe member %r" % (path, n))
        z.extractall(site)


def runfile(args):
    if len(args) != 4 or args[0:2] != ["--silent", "--toolkit"] or not args[2].startswith("--toolkitpath=") \
            or args[3] != "--override":
        fail("unexpected arguments: %r" % args)
    dest = args[2][len("--toolkitpath="):]
    src = os.environ["STANDIN_TOOLKIT"]
    shutil.copytree(src, dest, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n.startswith(("libcudnn", "cudnn"))])


def main():
    role = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    if role == "standin.py" and args[:1] == ["runfile"]:
        role, args = "runfile", args[1:]
    log(role, args)
    if role == "conda":
        conda(args)
    elif role.startswith("python"):
        pip(args)
    elif role == "runfile":
        runfile(args)
    else:
        fail("unknown role %r" % role)


if __name__ == "__main__":
    main()
