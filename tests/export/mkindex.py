#!/usr/bin/python3
"""Lay out the pages pip reads to find files, with the standard library only.

usage: mkindex.py simple DIR FILE...   a PEP 503 simple index in DIR: DIR/<project>/index.html
                                       for each project, linking to its FILEs (#sha256=)
       mkindex.py links PAGE FILE...   one HTML page of links to the FILEs (what pip's
                                       --find-links reads, as OpenMMLab's index.html pages are)

Links are relative to the page and percent-escaped ('+' as %2B, as
download.pytorch.org writes torch-1.10.0%2Bcu102-...whl).
"""
import hashlib
import html
import os
import re
import sys
import urllib.parse


def project(path):
    """The PEP 503 name of a wheel's or sdist's project, from its file name."""
    base = os.path.basename(path)
    name = base.split("-")[0] if base.endswith(".whl") else base.rsplit("-", 1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def link(page_dir, path):
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    rel = os.path.relpath(path, page_dir)
    href = urllib.parse.quote(rel) + "#sha256=" + sha
    return '<a href="%s">%s</a><br/>\n' % (html.escape(href), html.escape(os.path.basename(path)))


def write_page(page, files, title):
    os.makedirs(os.path.dirname(page), exist_ok=True)
    with open(page, "w") as f:
        f.write("<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n" % html.escape(title))
        for path in files:
            f.write(link(os.path.dirname(page), path))
        f.write("</body></html>\n")


def main():
    mode, where, files = sys.argv[1], sys.argv[2], [os.path.abspath(p) for p in sys.argv[3:]]
    if mode == "links":
        write_page(os.path.abspath(where), files, "links")
        return
    by_project = {}
    for path in files:
        by_project.setdefault(project(path), []).append(path)
    root = os.path.abspath(where)
    for name, paths in sorted(by_project.items()):
        write_page(os.path.join(root, name, "index.html"), paths, "Links for " + name)
    write_page(os.path.join(root, "index.html"), [], "Simple index")


if __name__ == "__main__":
    main()
