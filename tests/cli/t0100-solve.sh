#!/bin/sh
# envlock solve: which stack a machine can run, and how to install it. The
# two stories on their machines (the 16.04 mmdetection box, an RTX 4070 on
# driver 535, a GTX 1080 Ti on driver 390), judged against the reference
# data in ../shared/data/matrix (tests/solve/shared_check.py), a proposed
# stack judged with --check, this machine's plan, the script and the
# requirements file (read by the real sh and pip), and bad input.
. "$(dirname "$0")/lib.sh"

MATRIX=$top/../shared/data/matrix
mkroot() { "$PYTHON" "$top/tests/fixtures/mkroots.py" --machine "$@"; }
# judge FILE: the stacks of a --json plan against the reference data, one problem a line ("" when none)
judge() {
	"$PYTHON" - "$MATRIX" "$1" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["top"], "tests", "solve"))
from shared_check import StackJudge
j, plan = StackJudge(sys.argv[1]), json.load(open(sys.argv[2]))
m = {"driver": plan["machine"]["driver"], "gpus": plan["machine"]["gpus"], "glibc": plan["machine"]["glibc"]}
for st in plan["stacks"]:
    for p in j.judge(st, m):
        print("stack %d: %s" % (st["rank"], p))
PY
}
export top

# --- the 16.04 box: driver 450.142, two V100s, glibc 2.23, gcc 5.4, CUDA 10.2 -------------
box=$FIXTURES/ubuntu1604-mmdet
"$ENVLOCK" solve --root "$box" --for mmdet==2.25.1 --python-version 3.7 --json >box.json 2>box.err
check_status "16.04 box, mmdet==2.25.1 on Python 3.7: stacks" 0 $?
"$PYTHON" - box.json >box.facts <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for st in d["stacks"]:
    L = {l["name"]: l for l in st["layers"]}
    print(st["rank"], L["python"]["version"], L["torch"]["version"], L["torch"]["variant"], L["mmcv-full"]["version"],
          L["mmdet"]["version"], "compat" if any("minor-version compatibility" in n for n in st["notes"]) else "native",
          "prebuilt" if any("download.openmmlab.com/mmcv/dist/" in c for c in st["commands"]) else "build")
PY
check_eq "three stacks, each Python 3.7, mmcv-full <= 1.7.0 (the v2.25.1 tag's own bound) with its prebuilt wheel, mmdet 2.25.1" \
	"1 3.7 1.13.1+cu117 cu117 1.7.0 2.25.1 compat prebuilt
2 3.7 1.12.1+cu102 cu102 1.7.0 2.25.1 native prebuilt
3 3.7 1.11.0+cu102 cu102 1.7.0 2.25.1 native prebuilt" "$(cat box.facts)"
if [ -d "$MATRIX" ]; then
	check_eq "every stack satisfies the reference data (guards, wheels, commands, driver, GPU code, Python)" "" "$(judge box.json)"
else
	skip "every stack satisfies the reference data" "$MATRIX is not on this machine"
fi
check_grep "the CUDA 11.x stack says it relies on minor-version compatibility" \
	'"CUDA 11.7 runs on driver 450.142.00 only through minor-version compatibility' box.json
check_grep "its wheels need no glibc newer than 2.23" '"built for CUDA 10.2, which driver 450.142.00 runs (it needs 440.33); its cubin code for compute capability 7.0 runs on the Tesla V100-PCIE-16GB (7.0); its wheels need glibc 2.17, this machine has 2.23"' box.json
check_grep "what rules out a newer torch: Python 3.7" '"why": "torch 2.0.0 has wheels for Python 3.8 to 3.11; the plan is for Python 3.7 (--python-version)"' box.json
check_grep "what rules out mmcv-full 1.7.1: mmdet 2.25.1's own guard" '"why": "mmdet 2.25.1 asserts 1.3.17 <= mmcv <= 1.7.0 in its __init__.py"' box.json
check_grep "each layer cites its source: the tag's __init__.py" '"source": "open-mmlab/mmdetection mmdet/__init__.py @ v2.25.1 (3b72b12fe9b1)' box.json
check_grep "the commands: pip with the index of that era" '"pip install torch==1.12.1+cu102 torchvision==0.13.1+cu102 --extra-index-url https://download.pytorch.org/whl/cu102"' box.json
check_grep "and mmcv-full's own wheel index" '"pip install mmcv-full==1.7.0 -f https://download.openmmlab.com/mmcv/dist/cu102/torch1.12/index.html"' box.json

# the write-up's stack, judged: mmcv-full 1.7.5 never existed, and mmdet 2.25.1 refuses it
"$ENVLOCK" solve --root "$box" --check --stack 'python==3.7 torch==1.10.0+cu102 mmcv-full==1.7.5 mmdet==2.25.1' >check.txt 2>&1
check_status "--check of the write-up's stack: breaking" 1 $?
check_grep "mmcv-full 1.7.5 was never released" "mmcv-full 1.7.5 was never released: the newest mmcv-full envlock knows is 1.7.2" check.txt
check_grep "mmdet 2.25.1's guard names it" "mmdet 2.25.1's __init__.py (at its release tag) asserts 1.3.17 <= mmcv <= 1.7.0; mmcv-full 1.7.5 fails it" check.txt
check_grep "the fix pins the mmcv-full that fits, for this torch and CUDA" \
	"fix: pip install mmcv-full==1.7.0 -f https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html" check.txt
check_eq "two breaking problems, nothing else" "2 breaking, 0 risky, 0 info" "$(tail -n 1 check.txt)"
"$ENVLOCK" solve --root "$box" --check --stack 'python==3.7 torch==1.10.0+cu102 mmcv-full==1.7.0 mmdet==2.25.1' --json >good.json
check_status "--check of the stack that fits: nothing breaking" 0 $?
check_eq "its findings" '{"findings": [], "worst": "none"}' "$("$PYTHON" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' good.json)"

# --- the ViTPose user: an RTX 4070 (8.9) on driver 535 --------------------------------------------
mkroot rtx host=rtx-desk os=jammy glibc=2.35 driver=535.129.03 "gpu=NVIDIA GeForce RTX 4070" gcc=11.4.0 python=3.10.12
"$ENVLOCK" solve --root rtx --for mmpose==1.3.2 --for mmpretrain --json >rtx.json
check_status "RTX 4070, mmpose 1.3.2 and mmpretrain: stacks" 0 $?
"$PYTHON" - rtx.json "$MATRIX" >rtx.facts <<'PY'
import csv, json, os, sys
d = json.load(open(sys.argv[1]))
for st in d["stacks"]:
    L = {l["name"]: l for l in st["layers"]}
    print(st["rank"], L["torch"]["version"], L["torch"]["variant"], L["mmcv"]["version"], L["mmpose"]["version"],
          L["mmpretrain"]["version"], L["mmengine"]["version"])
PY
check_eq "mmcv 2.x stacks both codebases accept, with mmengine's shared range" \
	"1 2.4.1 cu121 2.2.0 1.3.2 1.2.0 >=0.8.3,<1.0.0
2 2.3.1 cu121 2.2.0 1.3.2 1.2.0 >=0.8.3,<1.0.0
3 2.2.2 cu121 2.2.0 1.3.2 1.2.0 >=0.8.3,<1.0.0" "$(cat rtx.facts)"
if [ -d "$MATRIX" ]; then
	check_eq "every stack's torch build covers sm_89 (an 8.x cubin at or below 8.9, or PTX), by the builder's own lists" "" "$(judge rtx.json)"
else
	skip "every stack's torch build covers sm_89" "$MATRIX is not on this machine"
fi
check_grep "it says which code runs on the card" 'its cubin code for compute capability 8.6 runs on the NVIDIA GeForce RTX 4070 (8.9)' rtx.json
"$ENVLOCK" solve --root rtx --check --stack 'torch==1.10.0+cu102 mmcv-full==1.7.0 mmdet==2.25.1' >rtx-check.txt 2>&1
check_status "--check: a CUDA 10.2 torch on the RTX 4070" 1 $?
check_grep "the sm_89 error, predicted" 'none of which runs on NVIDIA GeForce RTX 4070 (8.9): "CUDA capability sm_89 is not compatible with the current PyTorch installation"' rtx-check.txt

# --- a GTX 1080 Ti on driver 390: no GPU stack, the driver binds ---------------------------------
mkroot gtx host=desk-1080ti os=bionic glibc=2.27 driver=390.144 "gpu=GeForce GTX 1080 Ti" gcc=7.5.0 python=3.6.9
"$ENVLOCK" solve --root gtx --for mmdet==2.25.1 >gtx.txt 2>&1
check_status "GTX 1080 Ti on driver 390, mmdet 2.25.1: nothing fits" 1 $?
check_grep "the binding constraint: the driver" "^nothing fits: driver" gtx.txt
check_grep "the smallest change: the driver CUDA 9.2 needs" \
	"smallest change: upgrade the NVIDIA driver to 396.26 or newer (what CUDA 9.2 needs) to run mmdet==2.25.1" gtx.txt
check_grep "and --cpu would give CPU stacks" "^  --cpu plans CPU stacks, which do fit this machine" gtx.txt
"$ENVLOCK" solve --root gtx --for mmdet==2.25.1 --cpu --json >gtx-cpu.json
check_status "--cpu on it: CPU stacks" 0 $?
check_eq "CPU variants only" "cpu cpu cpu" "$("$PYTHON" -c 'import json,sys; print(" ".join(s["layers"][1]["variant"] for s in json.load(open(sys.argv[1]))["stacks"]))' gtx-cpu.json)"
"$ENVLOCK" solve --root gtx --for mmdet==2.25.1 --allow-driver-upgrade --json >gtx-up.json
check_status "--allow-driver-upgrade: Pascal's newest branch (R580) plans GPU stacks" 0 $?
check_grep "and says so" "planned for an NVIDIA driver of the R580 branch (--allow-driver-upgrade); this machine has 390.144" gtx-up.json

# --- this machine: no GPU here (nor in CI), so CPU stacks, said plainly ------------------------
if [ -e /proc/driver/nvidia/version ]; then
	skip "this machine's plan is CPU stacks" "this machine has an NVIDIA driver"
else
	"$ENVLOCK" solve >live.txt 2>&1
	check_status "envlock solve on this machine" 0 $?
	check_grep "it says there is no GPU, so CPU stacks" "^plan     there is no NVIDIA GPU here, so these are CPU stacks" live.txt
	check_grep "a CPU torch with its install command" "pip install torch==.* torchvision==.* --index-url https://download.pytorch.org/whl/cpu" live.txt
fi

# --- the stack as a script and as a requirements file ---------------------------------------------
"$ENVLOCK" solve --root "$box" --for mmdet==2.25.1 --python-version 3.7 -o install.sh >/dev/null
check_status "-o install.sh" 0 $?
check_eq "the script is executable" "755" "$(stat -c %a install.sh)"
sh -n install.sh
check_status "sh reads the script" 0 $?
# run it with conda and pip stand-ins (no network here) that note their arguments: the order and the words
mkdir -p bin
printf '#!/bin/sh\necho "conda $*" >>"$LOG"\n[ "$1" = shell.posix ] && echo "conda() { echo \\"conda \\$*\\" >>\\"\\$LOG\\"; }"\nexit 0\n' >bin/conda
printf '#!/bin/sh\necho "pip $*" >>"$LOG"\n' >bin/pip
chmod +x bin/conda bin/pip
LOG=$scratch/ran PATH=$scratch/bin:$PATH sh install.sh
check_status "the script runs to its end" 0 $?
check_eq "it runs the commands the plan prints, in order" \
	"conda create -n mmdet python=3.7 -y
conda shell.posix hook
conda activate mmdet
pip install torch==1.13.1+cu117 torchvision==0.14.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117
pip install mmcv-full==1.7.0 -f https://download.openmmlab.com/mmcv/dist/cu117/torch1.13/index.html
pip install mmdet==2.25.1" "$(cat ran)"
check_grep "each reason is a comment" "^# mmcv-full 1.7.0: the newest mmcv-full that mmdet 2.25.1" install.sh
"$ENVLOCK" solve --root rtx --for mmpose==1.3.2 --for mmpretrain -o req.txt --format requirements --pick 2 >/dev/null
check_status "-o req.txt --format requirements --pick 2" 0 $?
check_eq "its index lines and pins (--index-url becomes --extra-index-url, so PyPI still serves the rest)" \
	"--extra-index-url https://download.pytorch.org/whl/cu121
--find-links https://download.openmmlab.com/mmcv/dist/cu121/torch2.3/index.html
torch==2.3.1
torchvision==0.18.1
mmcv==2.2.0
mmengine>=0.8.3,<1.0.0
mmpose==1.3.2
mmpretrain==1.2.0" "$(grep -v '^#' req.txt)"
# the real pip reads it: offline it stops at the first distribution it cannot fetch, after parsing every line
"$PYTHON" -m pip download --no-index -d dl -r req.txt >pip.out 2>&1
check_grep "pip parses the file and asks for torch==2.3.1" "satisfies the requirement torch==2.3.1" pip.out
"$ENVLOCK" solve --root "$box" --for mmdet==2.25.1 -o - >stdout.sh
check_grep "-o -: the script on stdout" "^pip install mmdet==2.25.1$" stdout.sh
# mmcv-full 1.5.0 has no wheel for torch 1.12: the box's nvcc 10.2 builds it, as mmcv_builds writes the command
"$ENVLOCK" solve --root "$box" --for torch==1.12.1 --for mmcv-full==1.5.0 -o - >build.sh
check_grep "an mmcv without a wheel: its build with the ops, against the torch installed" \
	"^MMCV_WITH_OPS=1 FORCE_CUDA=1 pip install --no-build-isolation --force-reinstall --no-binary mmcv-full mmcv-full==1.5.0$" build.sh
COLUMNS=80 "$ENVLOCK" solve --root "$box" --for mmdet==2.25.1 >wrapped.txt
check_eq "COLUMNS=80: prose wraps at 80 columns; only commands run longer" "" \
	"$("$PYTHON" -c 'import sys
for i, l in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    l = l.rstrip("\n")
    if len(l) > 80 and "pip install" not in l and "conda " not in l:
        print(i, l)' wrapped.txt)"

# --- bad input: one line naming the problem, exit 2, nothing written ------------------------------
bad() {
	_what=$1 _want=$2
	shift 2
	"$ENVLOCK" solve "$@" -o never.sh >/dev/null 2>bad.err
	_st=$?
	check_eq "$_what: exit 2, one line" "2 1" "$_st $(wc -l <bad.err)"
	check_grep "$_what: the line" "$_want" bad.err
	[ -e never.sh ] && not_ok "$_what: nothing written" || ok "$_what: nothing written"
}
bad "an unknown package" "envlock: solve: --for mmfoo==1.0: envlock does not plan 'mmfoo' (it plans python, torch" \
	--root "$box" --for mmfoo==1.0
bad "an impossible spec" "envlock: solve: --for mmdet==9.9: no mmdet release envlock knows meets '==9.9'" --root "$box" --for mmdet==9.9
bad "a spec pip cannot read" "envlock: solve: --for mmdet>>2: '>>2' is not a version specifier pip reads" --root "$box" --for 'mmdet>>2'
bad "mmcv 1.x asked as mmcv" "no mmcv release meets '==1.7.0': 1.x with the compiled ops is published as mmcv-full" --root "$box" --for mmcv==1.7.0
bad "a Python that is no release" "envlock: solve: --python-version 'three': not a Python release (3.7, 3.10)" --root "$box" --python-version three
"$ENVLOCK" solve --root "$box" --check --stack 'torch 1.10' >/dev/null 2>bad.err
check_eq "a malformed --stack: exit 2, one line naming the part" "2 envlock: solve: --stack: 'torch' is not a pin (NAME==VERSION: torch==1.10.0+cu102)" "$? $(cat bad.err)"
printf 'torch==1.10.0\nmmcv-full==1.7.0\n' >freeze.txt
"$ENVLOCK" import freeze.txt -o partial.lock.json >/dev/null 2>&1
"$ENVLOCK" solve partial.lock.json --for mmdet >/dev/null 2>bad.err
check_eq "a lock with no GPU facts: exit 2, one line" "2 1" "$? $(wc -l <bad.err)"
check_grep "it says what is missing, and --cpu" "the lock records nothing of the GPU (a partial lock made by envlock import?): solve needs the driver and GPUs of a saved lock, or --cpu for CPU stacks" bad.err
"$ENVLOCK" solve partial.lock.json --for mmdet --cpu >/dev/null 2>&1
check_status "the same lock with --cpu" 0 $?
"$ENVLOCK" solve --root "$box" -n 0 >/dev/null 2>bad.err
check_eq "-n 0" "2 envlock: solve: -n '0': a number of stacks from 1 to 100" "$? $(cat bad.err)"
"$ENVLOCK" solve --root "$box" --pick 2 >/dev/null 2>bad.err
check_eq "--pick without -o" "2 envlock: solve: --pick and --format choose what -o FILE writes: give -o" "$? $(cat bad.err)"
"$ENVLOCK" solve --root "$box" --for mmdet==2.25.1 -o x.sh --pick 9 >/dev/null 2>bad.err
check_eq "--pick past the stacks: exit 2, nothing written" "2 envlock: solve: --pick 9: the plan has 3 stacks absent" "$? $(cat bad.err) $([ -e x.sh ] && echo present || echo absent)"
"$ENVLOCK" solve --root gtx --for mmdet==2.25.1 -o none.sh >/dev/null 2>bad.err
check_eq "-o when nothing fits: exit 1, nothing written" "1 envlock: solve: no stack fits, so nothing was written to 'none.sh' absent" \
	"$? $(cat bad.err) $([ -e none.sh ] && echo present || echo absent)"
