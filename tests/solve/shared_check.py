"""Judge the stacks `envlock solve --json` proposes against the reference
data in ../shared/data/matrix (the packages' own guards, mmcv's wheel lists,
PyTorch's install commands, build architecture lists and Python ranges,
NVIDIA's driver floors): each a copy of a primary source, read where it
lies and never through envlock's own knowledge files. Used by the solve
tests; every check names the stack and the row it broke.

    problems = StackJudge(matrix_dir).judge(stack, machine)   # [] when it fits
"""
import csv
import json
import os
import re


def vkey(v):
    """PEP 440-ish order for the versions the data has: 2.0.0rc4 < 2.0.0."""
    m = re.match(r"^(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?", v)
    rel = tuple(int(x) for x in m.group(1).split("."))
    rel = rel + (0,) * (4 - len(rel))
    pre = (0, int(m.group(3))) if m.group(2) else (1, 0)
    return rel + pre


def release(v):
    return ".".join(v.split("+")[0].split(".")[:2])


def cc_key(cc):
    major, minor = cc.split(".")
    return int(major), int(minor)


class StackJudge:
    def __init__(self, matrix):
        self.matrix = matrix
        load = lambda n: json.load(open(os.path.join(matrix, n)))
        self.guards = {}
        for r in load("openmmlab-guards.json")["rows"]:
            tag = r["tag"] or r["inferred_tag"]
            ver = r["version_py___version__"] or tag.lstrip("v")
            self.guards[(r["package"], ver)] = r
        self.wheels = set()
        for r in csv.DictReader(open(os.path.join(matrix, "mmcv-wheels", "flat.csv"))):
            if r["os"] == "Linux":
                self.wheels.add((r["package"], r["mmcv_version"], r["cuda"], r["torch"]))
        self.commands = {}
        for r in load("torch-install-commands.json")["rows"]:
            self.commands[(r["torch"], r["variant"])] = r
        self.arch = [r for r in load("torch-cuda-arch.json")["rows"]
                     if r["packaging"].startswith("linux-pip-wheel") and not r["torch"].startswith("main")]
        self.python = {}
        for r in load("torchvision-pairs.json")["rows"]:
            nums = re.findall(r"(>=|<=)\s*([\d.]+)", r["python"])
            if nums and re.match(r"^\d+\.\d+$", r["torch"]):
                self.python[r["torch"]] = ([n for o, n in nums if o == ">="][0], [n for o, n in nums if o == "<="][0])
        for r in load("torch-release-matrix.json")["rows"]:
            if r["source"]["repo"] == "pytorch/pytorch":
                nums = re.findall(r"(>=|<=)\s*([\d.]+)", r["python"])
                self.python[r["torch"]] = (nums[0][1], nums[1][1])
        nv = load("nvidia.json")
        self.cuda10 = {}
        for r in nv["cuda10_minimum_driver"]:
            self.cuda10[r["cuda_toolkit"].split()[1]] = r["linux_x86_64_minimum_driver"].split()[-1]
        for r in nv["toolkit_and_corresponding_driver_secondary"]:
            m = re.match(r"CUDA (\d+\.\d+)", r["cuda_toolkit"])
            drv = r["linux_x86_64_driver"].replace(">=", "").strip()
            if m and m.group(1) not in self.cuda10 and vkey(m.group(1)) < vkey("11.0"):
                self.cuda10.setdefault(m.group(1), drv)
        self.major_floor = {}
        for r in nv["minor_version_compatibility"]:
            major = int(re.match(r"CUDA (\d+)", r["cuda_toolkit"]).group(1))
            self.major_floor[major] = int(re.search(r"(\d+)", r["minimum_required_driver"]).group(1))
        self.counts = {"guard": 0, "wheel": 0, "command": 0, "arch": 0, "python": 0, "driver": 0,
                       "no_shared_row": 0}

    @staticmethod
    def layers(stack):
        return {l["name"]: l for l in stack["layers"]}

    def arch_row(self, torch, cuda):
        for r in self.arch:
            if r["torch"] != release(torch):
                continue
            for alt in r["cuda_case_pattern"].split("||"):
                rx = "^" + alt.strip().replace(".", r"\.").replace("*", ".*") + "$"
                if re.match(rx, cuda):
                    return r
        return None

    def judge(self, stack, machine):
        """The problems of one stack on machine ({'driver', 'gpus': [{'compute_capability'}], 'glibc'})."""
        problems = []
        L = self.layers(stack)
        torch = L["torch"]["version"]
        variant = L["torch"]["variant"]
        cuda = None if variant == "cpu" else "%s.%s" % (variant[2:-1], variant[-1])
        py = L["python"]["version"]
        # Python: the release's range (vision README for <= 1.11, RELEASE.md after)
        rng = self.python.get(release(torch))
        if rng:
            self.counts["python"] += 1
            if not (vkey(rng[0]) <= vkey(py) <= vkey(rng[1])):
                problems.append("torch %s has wheels for Python %s to %s, not %s" % (torch, rng[0], rng[1], py))
        else:
            self.counts["no_shared_row"] += 1
        # the torch and torchvision pins are those of the install command of that release and variant
        row = self.commands.get((torch.split("+")[0], variant))
        if row:
            self.counts["command"] += 1
            if ("torch==" + torch) not in row["commands"][0] or \
                    ("torchvision==" + L["torchvision"]["version"]) not in row["commands"][0]:
                problems.append("torch %s %s: the install command is %r" % (torch, variant, row["commands"][0]))
        elif vkey(torch) <= vkey("2.3.1"):
            problems.append("torch %s %s has no install command in the shared list" % (torch, variant))
        else:
            self.counts["no_shared_row"] += 1
        # the driver runs the CUDA: natively (CUDA 10.x's own floor) or within the major's floor (11 and later)
        if cuda and machine.get("driver"):
            major = int(cuda.split(".")[0])
            drv = machine["driver"]
            self.counts["driver"] += 1
            if major >= 11:
                if int(drv.split(".")[0]) < self.major_floor[major]:
                    problems.append("driver %s is below the CUDA %d.x floor %d" % (drv, major, self.major_floor[major]))
            elif cuda in self.cuda10:
                if vkey(drv) < vkey(self.cuda10[cuda]):
                    problems.append("driver %s is below CUDA %s's %s" % (drv, cuda, self.cuda10[cuda]))
            else:
                problems.append("CUDA %s has no driver row in the shared data" % cuda)
        # the GPU code of the variant runs on every GPU
        if cuda:
            arow = self.arch_row(torch, cuda)
            if arow:
                self.counts["arch"] += 1
                for g in machine.get("gpus", []):
                    cc = g.get("compute_capability")
                    if not cc:
                        continue
                    ok = False
                    for a in arow["arch_list"].split(";"):
                        ptx = a.endswith("+PTX")
                        a = a.replace("+PTX", "")
                        if (cc_key(a)[0] == cc_key(cc)[0] and cc_key(a) <= cc_key(cc)) or (ptx and cc_key(a) <= cc_key(cc)):
                            ok = True
                    if not ok:
                        problems.append("torch %s %s (%s) has no code for compute capability %s" % (torch, variant, arow["arch_list"], cc))
            else:
                self.counts["no_shared_row"] += 1
        # mmcv: a prebuilt wheel in mmcv's own lists, and inside every codebase's guard
        mm = [n for n in ("mmcv", "mmcv-full") if n in L]
        if mm:
            pkg = mm[0]
            ver = L[pkg]["version"]
            prebuilt = any("download.openmmlab.com" in c for c in stack["commands"])
            if prebuilt:
                self.counts["wheel"] += 1
                if (pkg, ver, cuda or "cpu", release(torch) + ".x") not in self.wheels:
                    problems.append("%s %s has no wheel for %s/torch %s in mmcv's lists" % (pkg, ver, cuda or "cpu", release(torch)))
            for name, layer in L.items():
                pkg_of = {"mmsegmentation": "mmseg"}.get(name, name)
                g = self.guards.get((pkg_of, layer["version"]))
                if name in ("python", "torch", "torchvision", "mmcv", "mmcv-full", "mmengine"):
                    continue
                if not g:
                    problems.append("%s %s is no release the shared guards know" % (name, layer["version"]))
                    continue
                self.counts["guard"] += 1
                lo, hi, incl = g["mmcv_min"], g["mmcv_max"], g["max_inclusive"]
                if lo is None and hi is None:
                    problems.append("%s %s asserts no mmcv range: never planned" % (name, layer["version"]))
                    continue
                if (lo and vkey(ver) < vkey(lo)) or (hi and (vkey(ver) > vkey(hi) if incl else vkey(ver) >= vkey(hi))):
                    problems.append("%s %s asserts %s..%s (%s); %s %s is outside" % (name, layer["version"], lo, hi,
                                                                                     "<=" if incl else "<", pkg, ver))
                # mmengine: the stack's range sits inside the guard's
                if "mmengine" in L and (g["mmengine_min"] or g["mmengine_max"]):
                    rng = L["mmengine"]["version"]
                    lo_e = re.search(r">=([\d.]+)", rng)
                    hi_e = re.search(r"(<=?)([\d.]+)", rng)
                    if g["mmengine_min"] and (not lo_e or vkey(lo_e.group(1)) < vkey(g["mmengine_min"])):
                        problems.append("mmengine %s admits releases below %s %s's %s" % (rng, name, layer["version"], g["mmengine_min"]))
                    if g["mmengine_max"] and (not hi_e or vkey(hi_e.group(2)) > vkey(g["mmengine_max"])):
                        problems.append("mmengine %s admits releases above %s %s's %s" % (rng, name, layer["version"], g["mmengine_max"]))
        return problems
