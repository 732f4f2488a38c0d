#!/usr/bin/env python3
"""Build the hostile-archive corpus for `envlock bundle extract`.

usage: mkhostile.py OUTDIR [NAME...]
       mkhostile.py --tree DIR

Writes OUTDIR/<name>.tar.zst for every case below (or only the NAMEs
given). Each hostile archive starts with a well-formed bundle head (the
lockfile, then a MANIFEST.json that lists the hostile entry with its true
digest), so the only reason to refuse it is the hostile entry itself.

Also written: absolute.path (the absolute path absolute.tar.zst tries to
create) and valid.tree (what extracting valid.tar.zst must give, in the
form --tree prints: one line per path with its type, mode, mtime and
digest or symlink target).

Python 3 standard library only, plus the `zstd` command.
"""
import hashlib
import io
import json
import os
import random
import stat
import subprocess
import sys
import tarfile

MTIME = 1700000000
LOCK = b"{}\n"
GiB = 1 << 30


class Zeros(io.RawIOBase):
    """size zero bytes, read in pieces: a 1 GiB entry never sits in memory."""

    def __init__(self, size):
        self.left = size
        self.chunk = bytes(1 << 20)

    def readable(self):
        return True

    def read(self, n=-1):
        n = self.left if n is None or n < 0 else min(n, self.left)
        self.left -= n
        return self.chunk[:n] if n <= len(self.chunk) else bytes(n)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def zeros_sha256(size):
    h = hashlib.sha256()
    chunk = bytes(1 << 20)
    while size:
        n = min(size, len(chunk))
        h.update(chunk[:n])
        size -= n
    return h.hexdigest()


def info(name, kind=tarfile.REGTYPE, size=0, mode=0o644, linkname=""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.size = size
    ti.mode = mode
    ti.mtime = MTIME
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    ti.linkname = linkname
    return ti


class Entry:
    """One archive entry and its manifest record (record None: not listed)."""

    def __init__(self, ti, data=b"", stream=None, record=True, sha=None):
        self.ti = ti
        self.data = data
        self.stream = stream
        self.record = record
        self.sha = sha


def f(name, data, mode=0o644, **kw):
    return Entry(info(name, size=len(data), mode=mode), data, **kw)


def d(name, **kw):
    return Entry(info(name, tarfile.DIRTYPE, mode=0o755), **kw)


def ln(name, target, **kw):
    return Entry(info(name, tarfile.SYMTYPE, mode=0o777, linkname=target), **kw)


def record(e):
    ti = e.ti
    path = ti.name.rstrip("/")
    if ti.type == tarfile.DIRTYPE:
        return {"path": path, "type": "dir", "mode": 0o755}
    if ti.type == tarfile.SYMTYPE:
        return {"path": path, "type": "symlink", "target": ti.linkname}
    return {"path": path, "type": "file", "mode": 0o755 if ti.mode & 0o111 else 0o644, "size": ti.size,
            "sha256": e.sha or sha256(e.data), "stored": True}


def manifest(entries, extra=()):
    files = [record(e) for e in entries if e.record] + list(extra)
    doc = {"envlock_manifest": 1, "tool": "mkhostile", "root": "w", "files": files}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


def write_tar(tf, entries):
    for e in entries:
        if e.stream is not None:
            tf.addfile(e.ti, e.stream)
        elif e.ti.type == tarfile.REGTYPE or e.ti.type == tarfile.AREGTYPE:
            tf.addfile(e.ti, io.BytesIO(e.data))
        else:
            tf.addfile(e.ti)


def tar_bytes(entries, extra=(), head=True):
    """An uncompressed pax tar: lockfile, MANIFEST.json, then entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        if head:
            write_tar(tf, [f("envlock.lock.json", LOCK, record=False),
                           f("MANIFEST.json", manifest(entries, extra), record=False)])
        write_tar(tf, entries)
    return buf.getvalue()


def zstd(data, path):
    with open(path, "wb") as out:
        subprocess.run(["zstd", "-q", "-c"], input=data, stdout=out, check=True)


def bundle(path, entries, extra=()):
    zstd(tar_bytes(entries, extra), path)


def streamed_bundle(path, entries):
    """Like bundle(), but piped into zstd as it is made (for the 1 GiB bomb)."""
    with open(path, "wb") as out:
        p = subprocess.Popen(["zstd", "-q", "-c"], stdin=subprocess.PIPE, stdout=out)
        with tarfile.open(fileobj=p.stdin, mode="w|", format=tarfile.PAX_FORMAT,
                          copybufsize=1 << 20) as tf:
            write_tar(tf, [f("envlock.lock.json", LOCK, record=False),
                           f("MANIFEST.json", manifest(entries), record=False)])
            write_tar(tf, entries)
        p.stdin.close()
        if p.wait() != 0:
            sys.exit("mkhostile: zstd failed")


def valid_entries(flip=None):
    rnd = random.Random(7)
    weights = rnd.randbytes(256 * 1024)
    files = [
        d("exp1"),
        f("exp1/config.py", b"model = dict(type='RetinaNet')\nlr = 0.01\n"),
        f("exp1/epoch_1.pth", weights),
        ln("exp1/latest.pth", "epoch_1.pth"),
        d("exp1/logs"),
        f("exp1/logs/train.log", b"epoch 1 loss 0.731\nepoch 1 mAP 0.362\n"),
        f("exp1/run.sh", b"#!/bin/sh\npython train.py config.py\n", mode=0o755),
    ]
    if flip:
        for e in files:
            if e.ti.name == flip:
                e.sha = sha256(e.data)
                e.data = bytes([e.data[0] ^ 1]) + e.data[1:]
    return files


# a checkpoint left out of the archive (--checkpoints hash): listed, not stored
HASH_ONLY = {"path": "exp1/epoch_0.pth", "type": "file", "mode": 0o644, "size": 3,
             "sha256": sha256(b"abc"), "stored": False}


def tree_of(entries):
    """What tree() must print for the extracted valid bundle."""
    lines = []
    for data, name in ((LOCK, "envlock.lock.json"), (manifest(entries, [HASH_ONLY]), "MANIFEST.json")):
        lines.append((name, f"f 644 {MTIME} {sha256(data)} {name}"))
    for e in entries:
        ti = e.ti
        if ti.type == tarfile.DIRTYPE:
            lines.append((ti.name, f"d 755 {MTIME} {ti.name}"))
        elif ti.type == tarfile.SYMTYPE:
            lines.append((ti.name, f"l {MTIME} {ti.name} -> {ti.linkname}"))
        else:
            mode = "755" if ti.mode & 0o111 else "644"
            lines.append((ti.name, f"f {mode} {MTIME} {sha256(e.data)} {ti.name}"))
    return "".join(line + "\n" for _, line in sorted(lines))


def tree(root):
    """Every path under root, sorted: type, mode, mtime, digest or target."""
    lines = []
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(top, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                lines.append((rel, f"l {int(st.st_mtime)} {rel} -> {os.readlink(p)}"))
            elif stat.S_ISDIR(st.st_mode):
                lines.append((rel, f"d {stat.S_IMODE(st.st_mode):o} {int(st.st_mtime)} {rel}"))
            else:
                with open(p, "rb") as fh:
                    digest = sha256(fh.read())
                lines.append((rel, f"f {stat.S_IMODE(st.st_mode):o} {int(st.st_mtime)} {digest} {rel}"))
    return "".join(line + "\n" for _, line in sorted(lines))


def make_valid(out):
    entries = valid_entries()
    bundle(os.path.join(out, "valid.tar.zst"), entries, [HASH_ONLY])
    with open(os.path.join(out, "valid.tree"), "w") as fh:
        fh.write(tree_of(entries))


def make_flipped(out):
    bundle(os.path.join(out, "flipped.tar.zst"), valid_entries(flip="exp1/logs/train.log"), [HASH_ONLY])


def make_truncated(out):
    path = os.path.join(out, "truncated.tar.zst")
    bundle(path, valid_entries(), [HASH_ONLY])
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(data[: len(data) // 2])


def make_dotdot(out):
    bundle(os.path.join(out, "dotdot.tar.zst"), [f("../evil", b"evil\n")])


def make_absolute(out):
    target = "/tmp/evil-%s" % os.urandom(6).hex()
    bundle(os.path.join(out, "absolute.tar.zst"), [f(target, b"evil\n")])
    with open(os.path.join(out, "absolute.path"), "w") as fh:
        fh.write(target + "\n")


def make_symlink_escape(out):
    bundle(os.path.join(out, "symlink_escape.tar.zst"),
           [d("w"), ln("w/link", "../../outside"), f("w/link/x", b"evil\n")])


def make_symlink_abs(out):
    bundle(os.path.join(out, "symlink_abs.tar.zst"), [d("w"), ln("w/l", "/etc")])


def make_through_symlink(out):
    # the link itself stays inside; writing through it is what is refused
    bundle(os.path.join(out, "through_symlink.tar.zst"),
           [d("w"), d("w/sub"), ln("w/link", "sub"), f("w/link/x", b"through\n")])


def make_symlink_chain(out):
    # "s" leads to w; "t" climbs from there: lexically inside, really two levels out
    bundle(os.path.join(out, "symlink_chain.tar.zst"),
           [d("w"), d("w/a"), d("w/a/b"), ln("w/a/b/s", "../.."), ln("w/a/b/t", "s/../../../..")])


def make_hardlink(out):
    h1 = Entry(info("w/h", tarfile.LNKTYPE, linkname="/etc/passwd"), sha=sha256(b""))
    h2 = Entry(info("w/h2", tarfile.LNKTYPE, linkname="../x"), sha=sha256(b""))
    bundle(os.path.join(out, "hardlink.tar.zst"), [d("w"), h1, h2])


def make_hardlink_inside(out):
    h = Entry(info("w/h", tarfile.LNKTYPE, linkname="w/f"), sha=sha256(b"data\n"))
    h.ti.size = 0
    bundle(os.path.join(out, "hardlink_inside.tar.zst"), [d("w"), f("w/f", b"data\n"), h])


def make_device(out):
    ti = info("w/null", tarfile.CHRTYPE)
    ti.devmajor, ti.devminor = 1, 3
    bundle(os.path.join(out, "device.tar.zst"), [d("w"), Entry(ti)])


def make_fifo(out):
    bundle(os.path.join(out, "fifo.tar.zst"), [d("w"), Entry(info("w/fifo", tarfile.FIFOTYPE))])


def make_bomb(out):
    zeros = Entry(info("w/zeros", size=GiB), stream=Zeros(GiB), sha=zeros_sha256(GiB))
    streamed_bundle(os.path.join(out, "bomb.tar.zst"), [d("w"), zeros])


def make_many(out):
    entries = [d("w")] + [f("w/f%06d" % i, b"x") for i in range(100000)]
    bundle(os.path.join(out, "many.tar.zst"), entries)


def make_not_tar(out):
    # a good zstd frame around bytes that are no tar
    zstd(random.Random(1).randbytes(65536), os.path.join(out, "not_tar.tar.zst"))


def make_random(out):
    with open(os.path.join(out, "random.tar.zst"), "wb") as fh:
        fh.write(random.Random(2).randbytes(65536))


def make_not_bundle(out):
    zstd(tar_bytes([d("w"), f("w/a.txt", b"a\n")], head=False), os.path.join(out, "not_bundle.tar.zst"))


def make_duplicate(out):
    entries = [d("w"), f("w/a.txt", b"same\n"), f("w/a.txt", b"same\n", record=False)]
    bundle(os.path.join(out, "duplicate.tar.zst"), entries)


CASES = {name[len("make_"):]: fn for name, fn in globals().items() if name.startswith("make_")}


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.exit("usage: mkhostile.py OUTDIR [NAME...] | --tree DIR\nnames: " + " ".join(sorted(CASES)))
    if argv[1] == "--tree" and len(argv) == 3:
        sys.stdout.write(tree(argv[2]))
        return
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name in argv[2:] or sorted(CASES):
        if name not in CASES:
            sys.exit("mkhostile: no case '%s'" % name)
        CASES[name](out)


if __name__ == "__main__":
    main(sys.argv)
