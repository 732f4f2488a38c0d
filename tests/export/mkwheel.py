#!/usr/bin/python3
"""Build tiny pure-Python wheels with the standard library only.

usage: mkwheel.py DIR NAME==VERSION...   writes DIR/<name>-<version>-py3-none-any.whl
and prints each file's path and sha256. A wheel is a zip with the project's
package, and a .dist-info with METADATA, WHEEL and RECORD (PEP 427, PEP 376).
"""
import base64
import hashlib
import os
import re
import sys
import zipfile


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def build(outdir, name, version):
    dist = re.sub(r"[-_.]+", "_", name)
    pkg = dist.lower()
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{pkg}/__init__.py": f"__version__ = {version!r}\n".encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: envlock-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},{record_hash(data)},{len(data)}\n" for path, data in files.items())
    record += f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()
    path = os.path.join(outdir, f"{dist}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name_, data in files.items():
            z.writestr(zipfile.ZipInfo(name_, date_time=(2020, 1, 1, 0, 0, 0)), data)
    with open(path, "rb") as f:
        print(path, hashlib.sha256(f.read()).hexdigest())


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for spec in sys.argv[2:]:
        name, version = spec.split("==", 1)
        build(outdir, name.strip(), version.strip().lstrip("="))


if __name__ == "__main__":
    main()
