#!/usr/bin/env python3
"""Call cycles between the files of one lib/ folder, from the built objects.

  tools/file-cycles.py [-b BUILD] [-s SRC] [-a ALLOW] [-v] [FOLDER...]

For each FOLDER (SRC/FOLDER/*.c, SRC being lib; without FOLDER, every
folder of SRC that holds a .c file, so a new folder is guarded from its
first file), the "calls" graph has an
edge a.c -> b.c when BUILD/lib/FOLDER/a.o has an undefined symbol that b.o
defines (nm). Only the objects of sources that exist are read, so a stale
object of a removed file cannot report a cycle.
Each strongly connected component of more than one file is printed as its
elementary cycles, one a line, each from its smallest file:

  probe: git.c -> python.c -> git.c

-v adds the symbols behind each edge, indented below the cycle.

ALLOW (default tools/file-cycles.allow) explains cycles, one a line:

  <folder>: a.c b.c  # why

A cycle is explained by a line of its folder that names every file in it
(and has a why). An explained cycle is printed with "(explained)" after
it. Exit 0 when every cycle is explained, 1 when one is not, 2 on error.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # the checks run in the tree: they leave nothing in it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from objsyms import symbols  # noqa: E402

# The elementary cycles of one component are enumerated; a component with
# more than this many is reported as one line naming its files.
MAX_CYCLES = 200


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def graph(build, src, folder):
    """{file: {callee: sorted symbols}} for the objects of src/<folder>."""
    objdir = os.path.join(build, "lib", folder)
    srcdir = os.path.join(src, folder)
    if not os.path.isdir(srcdir):
        die(f"file-cycles: '{srcdir}': no such folder")
    files = sorted(f[:-2] + ".c" for f in os.listdir(srcdir) if f.endswith(".c"))
    syms = {}
    for c in files:
        obj = os.path.join(objdir, c[:-2] + ".o")
        if not os.path.isfile(obj):
            die(f"file-cycles: '{obj}': not built (run make first)")
        syms[c] = symbols(obj, "file-cycles")
    owner = {}
    for c in files:
        for s in syms[c][0]:
            owner.setdefault(s, c)
    edges = {c: {} for c in files}
    for c in files:
        for s in syms[c][1]:
            d = owner.get(s)
            if d and d != c:
                edges[c].setdefault(d, []).append(s)
    for c in edges:
        for d in edges[c]:
            edges[c][d].sort()
    return edges


def components(edges):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        onstack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    onstack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in onstack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def cycles(edges, comp):
    """The elementary cycles inside comp, each starting at its smallest file, or None if too many."""
    found = []
    nodes = sorted(comp)
    for i, start in enumerate(nodes):
        allowed = set(nodes[i:])
        path = [start]
        work = [iter(sorted(d for d in edges[start] if d in allowed))]
        while work:
            w = next(work[-1], None)
            if w is None:
                work.pop()
                path.pop()
                continue
            if w == start:
                found.append(path + [start])
                if len(found) > MAX_CYCLES:
                    return None
            elif w not in path:
                path.append(w)
                work.append(iter(sorted(d for d in edges[w] if d in allowed)))
    return sorted(found, key=lambda c: (len(c), c))


def read_allow(path):
    """{folder: [(set of files, why)]}; a missing file allows nothing."""
    allow = {}
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        return allow
    with f:
        for n, line in enumerate(f, 1):
            text, _, why = line.partition("#")
            if not text.strip():
                continue
            folder, sep, names = text.partition(":")
            files = set(names.split())
            if not sep or not folder.strip() or len(files) < 2 or not why.strip():
                die(f"file-cycles: '{path}' line {n}: want '<folder>: a.c b.c  # why'")
            allow.setdefault(folder.strip(), []).append((files, why.strip()))
    return allow


def main():
    ap = argparse.ArgumentParser(description="call cycles between the files of lib/ folders")
    ap.add_argument("-b", "--build", default="build", help="build folder (default build)")
    ap.add_argument("-s", "--src", default="lib", help="source folder (default lib)")
    ap.add_argument("-a", "--allow", default="tools/file-cycles.allow", help="allow-list")
    ap.add_argument("-v", "--verbose", action="store_true", help="show the symbols behind each edge")
    ap.add_argument("folders", nargs="*", metavar="FOLDER", help="default: every folder of SRC")
    args = ap.parse_args()
    every = not args.folders
    if every:
        try:
            args.folders = sorted(d for d in os.listdir(args.src)
                                  if os.path.isdir(os.path.join(args.src, d)) and
                                  any(f.endswith(".c") for f in os.listdir(os.path.join(args.src, d))))
        except OSError as e:
            die(f"file-cycles: '{args.src}': {e.strerror.lower()}")
        if not args.folders:
            die(f"file-cycles: '{args.src}': no folder holds a .c file")
    named = f"the {len(args.folders)} folders of {args.src}" if every else " ".join(args.folders)

    allow = read_allow(args.allow)

    def explained(folder, files):
        return any(set(files) <= names for names, _ in allow.get(folder, []))

    unexplained = total = 0
    for folder in args.folders:
        edges = graph(args.build, args.src, folder)
        for comp in components(edges):
            found = cycles(edges, comp)
            if found is None:
                print(f"{folder}: {len(comp)} files call each other in over {MAX_CYCLES} cycles: {' '.join(comp)}")
                unexplained += not explained(folder, comp)
                total += 1
                continue
            for cyc in found:
                ok = explained(folder, cyc)
                unexplained += not ok
                total += 1
                print(f"{folder}: {' -> '.join(cyc)}{' (explained)' if ok else ''}")
                if args.verbose:
                    for a, b in zip(cyc, cyc[1:]):
                        print(f"    {a} -> {b}: {' '.join(edges[a][b])}")
    if unexplained:
        print(f"file-cycles: {unexplained} unexplained cycle{'s' if unexplained > 1 else ''}"
              f" (break it, or explain it in {args.allow})", file=sys.stderr)
        return 1
    print(f"file-cycles: every cycle in {named} is explained" if total else
          f"file-cycles: no cycles in {named}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
