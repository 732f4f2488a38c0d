"""Does any stack fit? A brute-force enumeration over envlock's knowledge
files (knowledge/*/*.json), written apart from lib/solve: every torch wheel,
every mmcv release, every combination of the codebases' releases, each
judged by the constraints as the knowledge states them. The solve tests
compare its verdict with solve's: wherever this finds a stack, solve must
find one too (no false "impossible"), and the other way round.
"""
import itertools
import json
import os
import re


def vkey(v):
    v = v.split("+")[0]
    m = re.match(r"^(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?", v)
    rel = tuple(int(x) for x in m.group(1).split("."))
    rel = rel + (0,) * (5 - len(rel))
    pre = ({"a": 0, "b": 1, "rc": 2}[m.group(2)], int(m.group(3))) if m.group(2) else (3, 0)
    return rel + pre


def is_pre(v):
    return bool(re.search(r"\d(a|b|rc)\d", v))


def release(v):
    return ".".join(v.split("+")[0].split(".")[:2])


def spec_allows(spec, v):
    """PEP 440 for the specifiers the tests use; a pre-release only when the spec names one."""
    if is_pre(v) and not is_pre(spec):
        return False
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        m = re.match(r"^(==|!=|<=|>=|<|>)\s*(.+)$", clause)
        op, want = m.group(1), m.group(2)
        a, b = vkey(v), vkey(want)
        ok = {"==": a == b, "!=": a != b, "<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b}[op]
        if not ok:
            return False
    return True


class Brute:
    def __init__(self, knowledge_dir):
        t = {}
        for part in sorted(os.listdir(knowledge_dir)):
            d = os.path.join(knowledge_dir, part)
            for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if f.endswith(".json"):
                    doc = json.load(open(os.path.join(d, f)))
                    t[doc["table"]] = doc
        rows = lambda n: t[n]["rows"]
        self.wheels = rows("torch_wheels")
        self.python = {r["torch"]: (r["python_min"], r["python_max"]) for r in rows("torch_python")}
        self.arch = rows("torch_arch")
        self.glibc = rows("torch_glibc")
        self.driver = {}
        for r in rows("cuda_driver"):
            self.driver.setdefault(r["cuda"], r)  # the release's first toolkit
        self.nvcc_gcc = {r["cuda"]: r["max_gcc"] for r in rows("nvcc_gcc")}
        self.archs = rows("gpu_architectures")
        self.guards = rows("openmmlab_guards")
        self.mmcv = rows("mmcv_releases")
        self.packages = rows("mmcv_packages")
        self.engine_min = {r["mmcv"]: r["mmengine_min"] for r in rows("mmcv_requires_mmengine")}
        self.codebases = rows("openmmlab_codebases")
        self.pythons = sorted({"3.%d" % m for lo, hi in self.python.values()
                               for m in range(int(lo.split(".")[1]), int(hi.split(".")[1]) + 1)}, key=vkey)

    def codebase(self, name):
        for c in self.codebases:
            if name in (c["package"], c["distribution"]) or name in c["aliases"]:
                return c["package"]
        return None

    def driver_ok(self, m, cuda):
        r = self.driver.get(cuda)
        if not r:
            return False
        d = vkey(m["driver"])
        return d >= vkey(r["min_driver"]) or bool(r.get("minor_compat_driver")) and d >= vkey(r["minor_compat_driver"])

    def gpus_run_on_driver(self, m):
        branch = int(m["driver"].split(".")[0])
        for cc in m["ccs"]:
            for a in self.archs:
                if cc in a["compute_capabilities"]:
                    if branch < a["first_driver_branch"] or (a["last_driver_branch"] and branch > a["last_driver_branch"]):
                        return False
        return True

    def code_ok(self, torch, cuda, ccs):
        row = None
        for r in self.arch:
            if r["torch"] == release(torch) and cuda in r["cuda"]:
                row = r
                break
        for cc in ccs:
            if row is None:
                return False
            c = tuple(int(x) for x in cc.split("."))
            cub = any(int(s.split(".")[0]) == c[0] and tuple(int(x) for x in s.split(".")) <= c for s in row["sm"])
            ptx = any(tuple(int(x) for x in s.split(".")) <= c for s in row["ptx"])
            if not (cub or ptx):
                return False
        return True

    def glibc_ok(self, w, glibc):
        if not glibc:
            return True
        rel = release(w["torch"])
        rows = [r for r in self.glibc if r["torch"] == rel]
        own = [r for r in rows if r["variants"] and w["variant"] in r["variants"]]
        row = (own or [r for r in rows if not r["variants"]] or [None])[0]
        return row is None or vkey(row["glibc"]) <= vkey(glibc)

    def ops(self, v):
        for r in self.packages:
            if (r["from"] is None or vkey(v) >= vkey(r["from"])) and (r["until"] is None or vkey(v) < vkey(r["until"])):
                return r["ops"]
        return False

    def mmcv_ok(self, m, w, rel, gpu):
        cuda = w["cuda"]
        if release(w["torch"]) + ".x" in rel["wheels"].get(cuda or "cpu", []):
            return True
        if not gpu:
            return True  # a CPU build needs only the compiler
        for nv in m["nvcc"]:
            if release(nv) == cuda and (not m["gcc"] or int(m["gcc"].split(".")[0]) <= self.nvcc_gcc.get(cuda, 99)):
                return True
        return False

    def codebases_ok(self, mm, cbs):
        """Some release of each codebase (spec-allowed, guarded) accepts mm, with mmengine's ranges meeting."""
        choices = []
        for pkg, spec in cbs:
            opts = []
            for g in self.guards:
                if g["package"] != pkg or not spec_allows(spec, g["version"]) or (g["mmcv_min"] is None and g["mmcv_max"] is None):
                    continue
                lo, hi = g["mmcv_min"], g["mmcv_max"]
                if lo and vkey(mm) < vkey(lo):
                    continue
                if hi and (vkey(mm) > vkey(hi) if g["mmcv_max_inclusive"] else vkey(mm) >= vkey(hi)):
                    continue
                opts.append(g)
            if not opts:
                return False
            choices.append(opts)
        for combo in itertools.islice(itertools.product(*choices), 20000):
            lo, hi = self.engine_min.get(mm), None
            ok = True
            for g in combo:
                if g["mmengine_min"] and (lo is None or vkey(g["mmengine_min"]) > vkey(lo)):
                    lo = g["mmengine_min"]
                if g["mmengine_max"]:
                    h = (vkey(g["mmengine_max"]), bool(g["mmengine_max_inclusive"]))
                    if hi is None or h[0] < hi[0] or (h[0] == hi[0] and not h[1]):
                        hi = h
            if lo and hi and (vkey(lo) > hi[0] or (vkey(lo) == hi[0] and not hi[1])):
                ok = False
            if ok:
                return True
        return False

    def feasible(self, m, requests, cpu=False, python=None):
        """m: {'driver', 'ccs', 'glibc', 'gcc', 'nvcc', 'python'}; requests: [(name, spec)]."""
        gpu = bool(m["driver"]) and not cpu
        torch_spec = ",".join(s for n, s in requests if n == "torch")
        cbs = [(self.codebase(n), s) for n, s in requests if self.codebase(n)]
        mmcv_spec = [(n, s) for n, s in requests if n in ("mmcv", "mmcv-full")]
        needs_mmcv = bool(cbs or mmcv_spec)
        for w in self.wheels:
            if (w["cuda"] is not None) != gpu:
                continue
            if torch_spec and not spec_allows(torch_spec, w["torch"]):
                continue
            lo, hi = self.python.get(release(w["torch"]), (None, None))
            if lo is None:
                continue
            if python:
                if not (vkey(lo) <= vkey(python) <= vkey(hi)):
                    continue
            if gpu and not (self.gpus_run_on_driver(m) and self.driver_ok(m, w["cuda"]) and
                            self.code_ok(w["torch"], w["cuda"], m["ccs"])):
                continue
            if not self.glibc_ok(w, m["glibc"]):
                continue
            if not needs_mmcv:
                return True
            for rel in self.mmcv:
                v = rel["version"]
                if not self.ops(v) or any(not spec_allows(s, v) or rel["package"] != n for n, s in mmcv_spec):
                    continue
                if is_pre(v) and not any(is_pre(s) for n, s in mmcv_spec):
                    continue
                if not self.mmcv_ok(m, w, rel, gpu):
                    continue
                if self.codebases_ok(v, cbs):
                    return True
        return False
