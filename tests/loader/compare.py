#!/usr/bin/env python3
"""Compare `envlock ldd --json` with `ld.so --list` of the same file.
compare.py ENVLOCK_JSON LDSO_LIST_OUTPUT: prints each disagreement, exits 1 if any."""
import json, re, sys

sys.setrecursionlimit(20000)  # a 1000-deep chain nests 1000 levels

doc = json.load(open(sys.argv[1]))
edges, found, missing = set(), set(), set()

def walk(needs):
    for n in needs:
        if n["path"] is None:
            missing.add(n["soname"])
        else:
            edges.add((n["soname"], n["path"]))
            if n["found_by"] != "interpreter":
                found.add(n["path"])
        walk(n.get("needed", []))

walk(doc["needed"])
ld_found, ld_missing, bad = set(), set(), []
for line in open(sys.argv[2]):
    m = re.match(r"\t(\S+) => not found$", line)
    if m:
        ld_missing.add(m.group(1))
        continue
    m = re.match(r"\t([^/\s]\S*/\S+) \(0x[0-9a-f]+\)$", line)
    if m:  # a needed name with a slash, relative: ld.so prints it as it is, envlock from "/"
        ld_found.add("/" + m.group(1))
        continue
    m = re.match(r"\t(\S+) => (\S+) \(0x[0-9a-f]+\)$", line)
    if m:
        ld_found.add(m.group(2))
        if (m.group(1), m.group(2)) not in edges:
            bad.append("ld.so: %s => %s; envlock has no such need" % m.groups())
for p in sorted(found - ld_found):
    bad.append("envlock loads %s, ld.so does not" % p)
for p in sorted(ld_found - found):
    bad.append("ld.so loads %s, envlock does not" % p)
if missing != ld_missing:
    bad.append("not found: envlock %s, ld.so %s" % (sorted(missing), sorted(ld_missing)))
for b in bad:
    print(b)
print("%d found, %d not found" % (len(found), len(missing)))
sys.exit(1 if bad else 0)
