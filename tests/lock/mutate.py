#!/usr/bin/python3
"""Mutations of real lockfiles, each judged by Debian's python3-jsonschema.

    mutate.py SCHEMA OUTDIR LOCK...

Writes OUTDIR/NNNN.json, one mutation of one lock each (deterministic: a
fixed seed), and OUTDIR/verdicts.tsv with a line per file: its name,
"valid" or "invalid" by jsonschema's Draft 2020-12 validator, the dotted
paths of every error it reports (as envlock names them: a.b[3].c, or
"the document"), and what was mutated. envlock's own validator must agree.
"""
import copy
import json
import os
import random
import sys

import jsonschema

schema_path, out = sys.argv[1], sys.argv[2]
schema = json.load(open(schema_path))
validator = jsonschema.Draft202012Validator(schema)
rng = random.Random(20261201)


def paths(node, prefix=()):
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, prefix + (i,))


def dotted(p):
    s = ""
    for part in p:
        s += "[%d]" % part if isinstance(part, int) else ("." if s else "") + str(part)
    return s or "the document"


def other_type(v):
    for cand in ("a string", 17, 1.5, True, None, [], {}):
        if type(cand) is not type(v) and not (isinstance(v, (int, float)) and isinstance(cand, (int, float)) and not isinstance(cand, bool)):
            return cand
    return "x"


def setp(doc, p, value):
    node = doc
    for part in p[:-1]:
        node = node[part]
    node[p[-1]] = value


def delp(doc, p):
    node = doc
    for part in p[:-1]:
        node = node[part]
    del node[p[-1]]


n = 0
lines = []
for lock_path in sys.argv[3:]:
    base = json.load(open(lock_path))
    all_paths = [p for p, _ in paths(base) if p and p[0] not in ("id",)]
    for _ in range(40):
        doc = copy.deepcopy(base)
        p = rng.choice(all_paths)
        node = doc
        for part in p:
            node = node[part]
        kind = rng.choice(["type", "delete", "unexpected", "string"])
        if kind == "type":
            setp(doc, p, other_type(node))
        elif kind == "delete" and isinstance(p[-1], str):
            delp(doc, p)
        elif kind == "unexpected" and isinstance(node, dict):
            node["zz_not_in_the_schema"] = 1
        elif kind == "string" and isinstance(node, str):
            setp(doc, p, node + " \u202e;$(x)")
        else:
            setp(doc, p, other_type(node))
            kind = "type"
        errors = list(validator.iter_errors(doc))
        name = "%04d.json" % n
        n += 1
        with open(os.path.join(out, name), "w") as f:
            json.dump(doc, f, indent=2, sort_keys=True)
        where = " ".join(sorted({dotted(list(e.absolute_path)) for e in errors})) or "-"
        lines.append("%s\t%s\t%s\t%s %s" % (name, "invalid" if errors else "valid", where, kind, dotted(p)))
with open(os.path.join(out, "verdicts.tsv"), "w") as f:
    f.write("\n".join(lines) + "\n")
