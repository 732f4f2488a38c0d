#!/usr/bin/env python3
"""The floors of lib/: every include and call between folders points down.

  tools/layers.py [-C TOP] [-r README] [-b BUILD]

README (default TOP/lib/README.md) gives the floors in a table under its
"## Floors" heading, one row a floor:

  | 3 | cfgview, probe, rules | what they hold | floors below |

The last column is "nothing", "floors below", optionally followed by
"; beside: a, b" (folders of the same floor that this floor's folders may
include too), or "only a, b": of the folders below, it includes those
alone (its calls, through the public API, may go to any floor below:
cmd includes only util and calls every capability). Every folder of TOP/lib must have a floor, and every folder a
row names must exist (cmd is TOP/cmd).

Each '#include "folder/x.h"' in TOP/lib/<folder>/*.[ch] and TOP/cmd/*.[ch]
whose folder is on a floor is checked: its floor must be below the
including folder's (or the folder itself, or one allowed beside it).
With -b, the objects BUILD/lib/<folder>/*.o and BUILD/cmd/*.o are read
too (nm): a call from one folder to a symbol another defines is checked
the same way, so a call through a public header (include/envlock/*.h,
which any floor may include) is seen.

Each violation is one line, file and line first:

  lib/probe/os.c:5: #include "restore/plan.h": probe (floor 3) may not include restore (floor 9)
  lib/save/save.o: calls envlock_bundle_create (lib/bundle/write.o): save (floor 7) may not call bundle (floor 8)

Exit 0 when all point down, 1 when one does not, 2 on error.
"""

import argparse
import os
import re
import sys

sys.dont_write_bytecode = True  # the checks run in the tree: they leave nothing in it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from objsyms import symbols  # noqa: E402

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/[^"]+"')


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def read_floors(path):
    """({folder: floor}, {folder: set of folders beside it it may include}, {folder: the only ones, or None})."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        die(f"layers: '{path}': {e.strerror.lower()}")
    floor, beside, only = {}, {}, {}
    in_section = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            in_section = line.strip() == "## Floors"
            continue
        if not in_section or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4:
            die(f"layers: '{path}' line {n}: want '| floor | folders | holds | may include |'")
        if cells[0] == "floor" or set(cells[0]) <= set("-: "):
            continue
        if not cells[0].isdigit():
            die(f"layers: '{path}' line {n}: '{cells[0]}' is not a floor number")
        level = int(cells[0])
        names = [c.strip().strip("`").rstrip("/") for c in cells[1].split(",")]
        may = cells[3].strip("`")
        side, just = set(), None
        rule, _, rest = may.partition(";")
        if rule.startswith("only "):
            just = {f.strip().strip("`") for f in rule[5:].split(",")}
        elif rule.strip() not in ("nothing", "floors below"):
            die(f"layers: '{path}' line {n}: may include '{may}': want 'nothing', 'floors below' or 'only a, b'")
        if rest.strip():
            key, _, folders = rest.partition(":")
            if key.strip() != "beside" or not folders.strip():
                die(f"layers: '{path}' line {n}: want '; beside: a, b' after '{rule.strip()}'")
            side = {f.strip().strip("`") for f in folders.split(",")}
        for name in names:
            if not re.fullmatch(r"[a-z0-9_]+", name):
                die(f"layers: '{path}' line {n}: '{name}' is not a folder name")
            if name in floor:
                die(f"layers: '{path}' line {n}: {name} is on floors {floor[name]} and {level}")
            floor[name] = level
            beside[name] = side
            only[name] = just
    if not floor:
        die(f"layers: '{path}': no floors table under '## Floors'")
    for name, side in beside.items():
        for s in side:
            if floor.get(s) != floor[name]:
                die(f"layers: '{path}': {name} may include {s} beside it, but {s} is not on floor {floor[name]}")
        for s in only[name] or ():
            if s not in floor or floor[s] >= floor[name]:
                die(f"layers: '{path}': {name} may include only {s}, but {s} is not on a floor below {floor[name]}")
    return floor, beside, only


def sources(top):
    """[(folder, path relative to top)] of lib/<folder>/*.[ch] and cmd/*.[ch]."""
    out = []
    lib = os.path.join(top, "lib")
    for d in sorted(os.listdir(lib)):
        if os.path.isdir(os.path.join(lib, d)):
            for f in sorted(os.listdir(os.path.join(lib, d))):
                if f.endswith((".c", ".h")):
                    out.append((d, f"lib/{d}/{f}"))
    cmd = os.path.join(top, "cmd")
    if os.path.isdir(cmd):
        for f in sorted(os.listdir(cmd)):
            if f.endswith((".c", ".h")):
                out.append(("cmd", f"cmd/{f}"))
    return out


def allowed(floors, a, b, call=False):
    floor, beside, only = floors
    if a == b or b in beside[a]:
        return True
    return floor[b] < floor[a] and (call or only[a] is None or b in only[a])


def check_includes(top, floors):
    floor = floors[0]
    bad = []
    for folder, rel in sources(top):
        with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or m.group(1) not in floor:
                    continue
                to = m.group(1)
                if not allowed(floors, folder, to):
                    bad.append(f"{rel}:{n}: {line.strip()}: {folder} (floor {floor[folder]}) may not include "
                               f"{to} (floor {floor[to]})")
    return bad


def check_calls(top, build, floors):
    """Calls between folders, from the objects of the sources that exist."""
    floor = floors[0]
    objs = []
    for folder, rel in sources(top):
        if rel.endswith(".c"):
            obj = os.path.join(build, rel[:-2] + ".o")
            if not os.path.isfile(obj):
                die(f"layers: '{obj}': not built (run make first)")
            objs.append((folder, rel[:-2] + ".o", obj))
    owner, need = {}, []
    for folder, rel, obj in objs:
        defined, undefined = symbols(obj, "layers")
        for s in defined:
            owner.setdefault(s, (folder, rel))
        need.append((folder, rel, undefined))
    bad = []
    for folder, rel, undefined in need:
        for s in sorted(undefined):
            if s not in owner:
                continue
            to, where = owner[s]
            if not allowed(floors, folder, to, call=True):
                bad.append(f"{rel}: calls {s} ({where}): {folder} (floor {floor[folder]}) may not call "
                           f"{to} (floor {floor[to]})")
    return bad


def main():
    ap = argparse.ArgumentParser(description="every include and call between lib/ folders points down")
    ap.add_argument("-C", "--top", default=".", help="the source tree (default .)")
    ap.add_argument("-r", "--readme", help="the floors (default TOP/lib/README.md)")
    ap.add_argument("-b", "--build", help="also check the calls between the built objects of BUILD")
    args = ap.parse_args()
    readme = args.readme or os.path.join(args.top, "lib", "README.md")
    floors = read_floors(readme)
    floor = floors[0]

    lib = os.path.join(args.top, "lib")
    try:
        folders = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    except OSError as e:
        die(f"layers: '{lib}': {e.strerror.lower()}")
    bad = [f"lib/{d}: no floor in {readme}" for d in folders if d not in floor]
    bad += [f"{readme}: {d}: no such folder" for d in sorted(floor)
            if d not in folders and not (d == "cmd" and os.path.isdir(os.path.join(args.top, "cmd")))]
    if bad:
        print("\n".join(bad))
        return 1
    bad = check_includes(args.top, floors)
    if args.build:
        bad += check_calls(args.top, args.build, floors)
    if bad:
        print("\n".join(bad))
        print(f"layers: {len(bad)} arrow{'s' if len(bad) > 1 else ''} pointing up or sideways"
              f" (move what is needed down, or the folder up, in {readme})", file=sys.stderr)
        return 1
    what = "include and call" if args.build else "include"
    print(f"layers: {len(floor)} folders on {len(set(floor.values()))} floors, every {what} points down",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
