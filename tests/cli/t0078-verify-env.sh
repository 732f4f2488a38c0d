#!/bin/sh
# envlock verify inside the locked Python environment: the environment's
# own python imports torch (Debian's python3-torch, a real torch), runs a
# convolution forward and backward, and the stages report what it really
# loads; the failures users meet are named with the exception's last line
# and the likely cause: no torch in the environment, a torch whose import
# raises, a CPU-only torch where the lock's had CUDA, mmcv without its
# compiled ops, a crash inside an import. Every expected value is read at
# test time from the python itself.
. "$(dirname "$0")/lib.sh"

py=/usr/bin/python3
if ! "$py" -c 'import torch' >/dev/null 2>&1; then
	skip "envlock verify inside the Python environment" "$py cannot import torch (make deps installs python3-torch)"
	exit 0
fi
TMPDIR=$scratch/tmp
export TMPDIR
mkdir -p "$TMPDIR"
torch_version=$("$py" -c 'import torch; print(torch.__version__)')
torch_cuda=$("$py" -c 'import torch; print(torch.version.cuda)')
torch_file=$("$py" -c 'import torch; print(torch.__file__)')
if [ -e /proc/driver/nvidia/version ]; then gpu=yes; else gpu=no; fi

# stage FILE NAME FIELD: a stage's field of verify --json (figures.X for a figure)
stage() {
	"$PYTHON" - "$1" "$2" "$3" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = next(x for x in doc["stages"] if x["stage"] == sys.argv[2])
for k in sys.argv[3].split("."):
    s = s.get(k) if isinstance(s, dict) else None
print("" if s is None else json.dumps(s) if isinstance(s, bool) or s is None else s)
PY
}

# a lock whose Python environment is Debian's python3 (with its torch)
"$ENVLOCK" save -q --no-repo --python "$py" -o L.json 2>save.err
check_status "save --python $py" 0 $?
check_eq "the lock records the torch python imports" "$torch_version" "$(jget L.json frameworks.torch.version)"

"$ENVLOCK" verify L.json --json >v.json 2>v.err
st=$?
check_eq "stages in order" "toolchain runtime training cudnn torch conv mmcv openmmlab lock" \
	"$("$PYTHON" -c 'import json, sys; print(" ".join(s["stage"] for s in json.load(open(sys.argv[1]))["stages"]))' v.json)"
if [ "$gpu" = no ]; then
	check_status "verify with Debian's torch and no GPU: no GPU, every stage that could run passed" 3 "$st"
fi
check_eq "torch: passes" "pass" "$(stage v.json torch status)"
check_eq "torch: the python run is the lock's" "$(jget L.json python.executable)" "$(stage v.json torch figures.python)"
check_eq "torch: version = what python says at test time" "$torch_version" "$(stage v.json torch figures.version)"
check_eq "torch: the file imported" "$torch_file" "$(stage v.json torch figures.file)"
check_eq "torch: torch.version.cuda is None" "$torch_cuda" "$(stage v.json torch figures.cuda | sed 's/^$/None/')"
stage v.json torch reason >r.txt
check_grep "torch: reported as a CPU-only build" "a CPU-only build (torch.version.cuda is None)" r.txt
check_grep "torch: matches the lock" "matches L.json$" r.txt
check_eq "torch: cuDNN torch loads = torch.backends.cudnn.version() (None)" \
	"$("$py" -c 'import torch; print(torch.backends.cudnn.version())')" "$(stage v.json torch figures.cudnn | sed 's/^$/None/')"
check_eq "conv: the CPU part ran" "ran" "$(stage v.json conv figures.cpu)"
if [ "$gpu" = no ]; then
	check_eq "conv: skipped" "skipped" "$(stage v.json conv status)"
	stage v.json conv reason >r.txt
	check_grep "conv: no GPU, the CPU convolution ran" "^no GPU: the convolution forward and backward ran on the CPU (float64); the GPU part was not run$" r.txt
	check_eq "torch: cuda not available" "false" "$(stage v.json torch figures.cuda_available)"
else
	stage v.json conv reason >r.txt
	check_grep "conv: a CPU-only torch cannot use this machine's GPU" "^torch cannot use the GPU" r.txt
fi
check_eq "mmcv: skipped without mmcv in the lock" "L.json has no mmcv" "$(stage v.json mmcv reason)"
check_eq "openmmlab: skipped without a codebase in the lock" \
	"L.json has no OpenMMLab codebase (mmdet, mmpose, mmpretrain, ...)" "$(stage v.json openmmlab reason)"
check_eq "nothing left in TMPDIR" "" "$(ls -A "$TMPDIR")"
check_eq "no .pyc written into the environment by verify" "" \
	"$(find "$(dirname "$torch_file")" -newer L.json -name '*.pyc' 2>/dev/null | head -n 1)"

# text output: one line per stage, the GPU parts say why they did not run
"$ENVLOCK" verify L.json --cpu-only >t.out 2>t.err
check_status "verify --cpu-only" 3 $?
check_grep "text: the torch stage" "^torch      pass     torch $torch_version imports from '$torch_file'" t.out
check_grep "text: the conv stage with --cpu-only" "^conv       skipped  CPU parts only: the convolution forward and backward ran on the CPU" t.out

# save --verify: the lock's verify section has the new stages and stays valid
"$ENVLOCK" save -q --no-repo --python "$py" --verify -o LV.json 2>/dev/null
if validate LV.json >val.out 2>&1; then ok "a verify section with the environment's stages is valid"; else
	not_ok "a verify section with the environment's stages is valid"; sed 's/^/#   /' val.out | head; fi
check_eq "verify section: the torch stage" "torch pass" "$(jget LV.json verify.stages.4.stage) $(jget LV.json verify.stages.4.status)"
check_eq "verify section: torch's version" "$torch_version" "$(jget LV.json verify.stages.4.figures.version)"
"$ENVLOCK" show LV.json >show.out
check_grep "show lists the torch stage" "^  - torch: pass$" show.out

# the lock said torch had CUDA 10.2; this is Debian's CPU-only build
"$PYTHON" - L.json L102.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["frameworks"]["torch"]["cuda"] = "10.2"
d["frameworks"]["torch"]["cpu_only"] = False
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" verify L102.json >c.out 2>c.err
check_status "a CPU-only torch where the lock's had CUDA fails" 1 $?
check_grep "torch: names a CPU-only torch and the lock's CUDA" \
	"^torch      fail     a CPU-only torch: torch $torch_version has torch.version.cuda None, but L102.json's torch was built for CUDA 10.2$" c.out
check_grep "torch: the likely cause and the fix" "fix: likely cause: a CPU-only torch build .* install torch $torch_version built for CUDA 10.2 (a +cu102 wheel" c.out
check_grep "the verdict names the stage" "^failed: torch" c.out

# a version mismatch: the lock had another torch
"$PYTHON" - L.json Lv.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["frameworks"]["torch"]["version"] = "1.10.0"
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" verify Lv.json >m.out 2>m.err
check_status "another torch than the lock's fails" 1 $?
check_grep "torch: a version mismatch, both versions" \
	"^torch      fail     a version mismatch: torch $torch_version imports from '$torch_file', but Lv.json has torch 1.10.0$" m.out

# an environment without torch: the exact error line
"$py" -m venv --without-pip "$scratch/notorch"
"$ENVLOCK" verify L.json --python "$scratch/notorch/bin/python" --json >n.json 2>n.err
check_status "an environment without torch fails" 1 $?
check_eq "torch: the exception's last line" \
	"import torch with '$scratch/notorch/bin/python': ModuleNotFoundError: No module named 'torch'" "$(stage n.json torch reason)"
stage n.json torch fix >r.txt
check_grep "torch: the likely cause: not installed there" "^likely cause: torch is not installed in this environment" r.txt
check_eq "conv: not run without torch" "not run: torch did not import (the torch stage says why)" "$(stage n.json conv reason)"

# a torch whose import raises what a missing library makes it raise
"$py" -m venv --without-pip "$scratch/badtorch"
site=$("$scratch/badtorch/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/torch"
echo 'raise ImportError("libcudnn.so.8: cannot open shared object file: No such file or directory")' >"$site/torch/__init__.py"
"$ENVLOCK" verify L.json --python "$scratch/badtorch/bin/python" >b.out 2>b.err
check_status "a torch whose import raises" 1 $?
check_grep "torch: the ImportError's line" \
	"^torch      fail     import torch with '$scratch/badtorch/bin/python': ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory$" b.out
check_grep "torch: the likely cause: the loader's path" "fix: likely cause: a library a compiled module needs is not on the loader's path" b.out

# a python that dies inside import torch (a crash in a compiled module)
"$py" -m venv --without-pip "$scratch/crash"
site=$("$scratch/crash/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/torch"
printf 'import os, signal, sys\nsys.stderr.write("Segmentation fault in libtorch_cpu.so\\n")\nos.kill(os.getpid(), signal.SIGSEGV)\n' >"$site/torch/__init__.py"
"$ENVLOCK" verify L.json --python "$scratch/crash/bin/python" >k.out 2>k.err
check_status "a python killed inside import torch" 1 $?
check_grep "torch: the signal, the part and the last line it printed" \
	"^torch      fail     '$scratch/crash/bin/python' was killed by signal 11 (Segmentation fault) in the torch part: Segmentation fault in libtorch_cpu.so$" k.out
check_grep "conv: not reached" "^conv       skipped  not checked: the environment's python stopped in the torch part$" k.out

# mmcv without its compiled ops: a venv on Debian's torch with mmcv 1.7.5
# (its Python files only, as `pip install mmcv` gives) and mmdet 2.25.0,
# where the lock had mmcv-full with ops
"$py" -m venv --without-pip --system-site-packages "$scratch/lite"
site=$("$scratch/lite/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$site/mmcv" "$site/mmdet"
printf "__version__ = '1.7.5'\n" >"$site/mmcv/version.py"
printf 'import torch\nfrom .version import __version__\n' >"$site/mmcv/__init__.py"
printf "__version__ = '2.25.0'\n" >"$site/mmdet/version.py"
printf 'import mmcv\nfrom .version import __version__\n' >"$site/mmdet/__init__.py"
# where the probe looks is where that python imports from: its sys.path's
# package dirs, in order, for Debian's python3 and for a venv that includes
# the system's (pyvenv.cfg include-system-site-packages = true)
for exe in "$py" "$scratch/lite/bin/python"; do
	"$exe" -c 'import os, sys; print("\n".join(p for p in sys.path if p.endswith("-packages") and os.path.isdir(p)))' >want.txt
	"$ENVLOCK" save -q --python "$exe" -o sp.json
	"$PYTHON" -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["python"]["site_packages"]))' sp.json >got.txt
	check_diff "site dirs of $exe as its sys.path has them" want.txt got.txt
done
"$ENVLOCK" verify --python "$scratch/lite/bin/python" --cpu-only --json >ln.json 2>ln.err
check_eq "a --system-site-packages venv, no lock: Debian's torch is found" "$torch_version" "$(stage ln.json torch figures.version)"
"$PYTHON" - L.json Lm.json "$site" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
site = sys.argv[3]
d["frameworks"]["mmcv"] = {"status": "present", "version": "1.7.5", "package": "mmcv-full", "ops": True,
                           "path": site + "/mmcv/version.py",
                           "ops_files": [site + "/mmcv/_ext.cpython-311-x86_64-linux-gnu.so"]}
d["frameworks"]["mmdet"] = {"status": "present", "version": "2.25.0", "path": site + "/mmdet/version.py"}
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" verify Lm.json --python "$scratch/lite/bin/python" --json >l.json 2>l.err
check_status "mmcv without ops where the lock had them" 1 $?
check_eq "torch: Debian's, through --system-site-packages" "$torch_version" "$(stage l.json torch figures.version)"
check_eq "mmcv: fails" "fail" "$(stage l.json mmcv status)"
check_eq "mmcv: has no compiled ops, with the error" \
	"mmcv 1.7.5 has no compiled ops: import mmcv._ext: ModuleNotFoundError: No module named 'mmcv._ext'" "$(stage l.json mmcv reason)"
stage l.json mmcv fix >r.txt
check_eq "mmcv: the likely cause, and a command for mmcv-full 1.7.5 (no prebuilt wheel of it: a build with its ops)" \
	"likely cause: mmcv, not mmcv-full, or mmcv-full built without MMCV_WITH_OPS=1: install mmcv-full 1.7.5 with its ops: MMCV_WITH_OPS=1 FORCE_CUDA=1 pip install --no-build-isolation --force-reinstall --no-binary mmcv-full mmcv-full==1.7.5" \
	"$(cat r.txt)"
check_eq "mmcv: ops false in the figures" "false" "$(stage l.json mmcv figures.ops)"
check_eq "openmmlab: mmdet imports" "pass" "$(stage l.json openmmlab status)"
check_eq "openmmlab: its version" "mmdet 2.25.0 imports" "$(stage l.json openmmlab reason)"

# mmcv with ops (a stand-in _ext and an nms in plain torch): the CPU nms
# is compared with the reference; on no GPU, nms on CUDA says why it did not run.
# Of the 7 boxes, 1 and 2 overlap box 0 by IoU > 0.6, 5 and 6 overlap box 3;
# box 4 overlaps box 3 by 8.4 / 17.28 = 0.49 only: 0, 3 and 4 are kept
mkdir -p "$site/mmcv/ops"
echo '# stand-in for the compiled module' >"$site/mmcv/_ext.py"
cat >"$site/mmcv/ops/__init__.py" <<'PY'
import torch


def nms(boxes, scores, iou_threshold, offset=0):
    order = scores.argsort(descending=True).tolist()
    keep = []
    for i in order:
        ok = True
        for j in keep:
            x1 = max(boxes[i, 0], boxes[j, 0]); y1 = max(boxes[i, 1], boxes[j, 1])
            x2 = min(boxes[i, 2], boxes[j, 2]); y2 = min(boxes[i, 3], boxes[j, 3])
            inter = max(0.0, float(x2 - x1)) * max(0.0, float(y2 - y1))
            a = float((boxes[i, 2] - boxes[i, 0]) * (boxes[i, 3] - boxes[i, 1]))
            b = float((boxes[j, 2] - boxes[j, 0]) * (boxes[j, 3] - boxes[j, 1]))
            if inter / (a + b - inter) > iou_threshold:
                ok = False
                break
        if ok:
            keep.append(i)
    inds = torch.tensor(keep, dtype=torch.long)
    return torch.cat([boxes[inds], scores[inds][:, None]], 1), inds
PY
"$ENVLOCK" verify Lm.json --python "$scratch/lite/bin/python" --json >o.json 2>o.err
check_eq "mmcv with ops: the nms reference's boxes" "0,3,4" "$(stage o.json mmcv figures.nms_reference_keep)"
check_eq "mmcv with ops: nms on the CPU keeps the same" "0,3,4" "$(stage o.json mmcv figures.nms_cpu_keep)"
if [ "$gpu" = no ]; then
	check_eq "mmcv with ops, no GPU: nms on CUDA not run" \
		"no GPU: mmcv 1.7.5 has compiled ops (mmcv._ext imports); nms on the CPU keeps boxes 0,3,4 as the reference does; the GPU part was not run" \
		"$(stage o.json mmcv reason)"
fi

# a lock without torch, and a lock without a Python environment: skipped, saying why
"$PYTHON" - L.json Lnt.json Lnp.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["frameworks"]["torch"] = {"status": "absent"}
d["pip"]["distributions"] = [x for x in d["pip"].get("distributions", []) if x["name"] != "torch"]
d["pip"]["count"] = len(d["pip"]["distributions"])
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
d = json.load(open(sys.argv[1]))
d["python"] = {"status": "absent"}
json.dump(d, open(sys.argv[3], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" verify Lnt.json --json >s1.json 2>s1.err
check_eq "no torch in the lock: skipped" "skipped Lnt.json has no torch" "$(stage s1.json torch status) $(stage s1.json torch reason)"
check_eq "no torch in the lock: mmcv skipped too" "Lnt.json has no torch" "$(stage s1.json mmcv reason)"
"$ENVLOCK" verify Lnp.json --json >s2.json 2>s2.err
if [ -s s2.json ]; then
	check_eq "no Python environment in the lock: skipped" "skipped Lnp.json has no Python environment" \
		"$(stage s2.json torch status) $(stage s2.json torch reason)"
else
	not_ok "no Python environment in the lock: skipped"; sed 's/^/#   /' s2.err
fi

# --python must name an executable by its absolute path: a usage error otherwise, before any stage runs
refused "--python that does not exist" "the Python executable '$scratch/none/bin/python': no such file or directory" \
	verify --python "$scratch/none/bin/python"
refused "--python relative" "the Python executable 'notorch/bin/python': must be an absolute path" \
	verify L.json --python notorch/bin/python
refused "--python a folder" "the Python executable '$scratch/notorch': not an executable file" \
	verify --python "$scratch/notorch"

# a lockfile's python that this machine's probe does not know is never run
"$PYTHON" - L.json Lx.json "$scratch/notorch/bin/python" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["python"]["executable"] = sys.argv[3]
d["python"]["prefix"] = sys.argv[3].rsplit("/bin/", 1)[0]
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" verify Lx.json --json >x.json 2>x.err
check_eq "a lockfile's unknown python: skipped, not run" \
	"skipped Lx.json's python '$scratch/notorch/bin/python' is not one this machine's probe found (name it with --python to check it)" \
	"$(stage x.json torch status) $(stage x.json torch reason)"

# restore ends with verify, and verify runs the environment's stages with the restored python
mkdir -p rs && cd rs
"$ENVLOCK" restore ../L102.json --only verify --yes >out 2>err
check_status "restore --only verify with a CPU-only torch where the lock's had CUDA" 1 $?
check_grep "restore: the verify step fails on the torch stage" \
	"verify stage torch: a CPU-only torch: torch $torch_version has torch.version.cuda None, but the lock's torch was built for CUDA 10.2" out
"$ENVLOCK" restore ../L.json --only verify --yes >out2 2>err2
check_status "restore --only verify with the lock's own environment" 0 $?
cat .envlock/restore-*.log >log 2>/dev/null
log=$PWD/log
if [ -s "$log" ]; then
	check_grep "restore's log: the torch stage ran with the lock's python" "^torch      pass     torch $torch_version imports from '$torch_file'" "$log"
	check_grep "restore's log: the conv stage" "^conv       " "$log"
else
	not_ok "restore's log: the torch stage ran"; sed 's/^/#   /' out2
fi
cd "$scratch"

echo "1..$n"
