#!/bin/sh
# envlock verify with this machine's real CUDA toolkit: nvcc really
# compiles the training program, the program really runs and says what
# the CUDA runtime finds, the CPU reference trains, and the real cuDNN
# is loaded and asked its version. Every expected value is read at test
# time from the machine's own tools and files (nvcc --version and
# --list-gpu-arch, cudnn_version.h, ldconfig). Two real nvcc compiles.
. "$(dirname "$0")/lib.sh"

nvcc=/usr/local/cuda/bin/nvcc
if [ ! -x "$nvcc" ]; then
	skip "envlock verify with the real toolkit" "no $nvcc on this machine"
	exit 0
fi
# a private TMPDIR, to see that verify leaves nothing in it; HOME must stay empty
TMPDIR=$scratch/tmp
export TMPDIR
mkdir -p "$TMPDIR"
unset CUDA_HOME

# the expected outcome: 3 (no GPU) here, 0 where a driver is loaded
if [ -e /proc/driver/nvidia/version ]; then want_status=0; else want_status=3; fi

"$ENVLOCK" verify --json >"$scratch/v.json" 2>"$scratch/v.err"
check_status "verify --json with the real nvcc" "$want_status" $?
if "$PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$scratch/v.json" 2>/dev/null; then
	ok "--json is one JSON document"
else
	not_ok "--json is one JSON document"; sed 's/^/#   /' "$scratch/v.json" | head -n 20
fi
# stage NAME FIELD: a stage's field (figures.X for a figure)
stage() {
	"$PYTHON" - "$scratch/v.json" "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = next(x for x in doc["stages"] if x["stage"] == sys.argv[2])
for k in sys.argv[3].split("."):
    s = s.get(k) if isinstance(s, dict) else None
print("" if s is None else s)
PY
}
check_eq "stages in order" "toolchain runtime training cudnn torch conv mmcv openmmlab lock" \
	"$("$PYTHON" -c 'import json, sys; print(" ".join(s["stage"] for s in json.load(open(sys.argv[1]))["stages"]))' "$scratch/v.json")"

# toolchain: passes, with the nvcc and the architecture the machine's tools say
check_eq "toolchain passes" "pass" "$(stage toolchain status)"
check_eq "nvcc version = nvcc --version's V number" \
	"$("$nvcc" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p')" "$(stage toolchain figures.nvcc_version)"
check_eq "host compiler = gcc -dumpfullversion" "gcc $(gcc -dumpfullversion -dumpversion)" "$(stage toolchain figures.host_compiler)"
lowest=$("$nvcc" --list-gpu-arch | sed -n 's/^compute_\([0-9]*\)$/\1/p' | sort -n | head -n 1)
if [ -e /proc/driver/nvidia/version ]; then
	skip "no GPU known: PTX for the lowest architecture" "this machine has an NVIDIA driver"
else
	check_grep "no GPU known: PTX for compute_$lowest, the lowest nvcc --list-gpu-arch lists" \
		"arch=compute_${lowest},code=compute_${lowest} " "$scratch/v.json"
fi

# runtime: the program ran and reported the runtime of the toolkit that built it
release=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
check_eq "the program reports CUDA runtime = nvcc's release" "$release" "$(stage runtime figures.runtime_version)"
if [ "$want_status" = 3 ]; then
	check_eq "runtime: skipped" "skipped" "$(stage runtime status)"
	stage runtime reason >"$scratch/r"
	check_grep "runtime: says there is no GPU, and why" "^no GPU: no NVIDIA driver is loaded (CUDA runtime $release; cudaGetDeviceCount: cudaErrorInsufficientDriver" "$scratch/r"
	check_eq "runtime: no devices" "0" "$(stage runtime figures.device_count)"
	check_eq "training: skipped" "skipped" "$(stage training status)"
	stage training reason >"$scratch/r"
	check_grep "training: the CPU reference trained alone" "^no GPU: the CPU reference trained alone: loss" "$scratch/r"
else
	check_eq "runtime passes" "pass" "$(stage runtime status)"
	check_eq "training passes" "pass" "$(stage training status)"
fi
check_eq "the CPU reference's loss fell at least 4 times" "yes" \
	"$("$PYTHON" -c 'import sys; print("yes" if float(sys.argv[1]) >= 4 * float(sys.argv[2]) else "no")' \
		"$(stage training figures.cpu_first_loss)" "$(stage training figures.cpu_last_loss)")"

# cuDNN: the real library, the version its own header states
hdr=/usr/local/cuda/include/cudnn_version.h
if [ -f "$hdr" ]; then
	want=$(awk '$1 == "#define" && $2 == "CUDNN_MAJOR" {M=$3} $1 == "#define" && $2 == "CUDNN_MINOR" {m=$3}
		$1 == "#define" && $2 == "CUDNN_PATCHLEVEL" {p=$3} END {print M "." m "." p}' "$hdr")
	check_eq "cudnn passes" "pass" "$(stage cudnn status)"
	check_eq "cudnnGetVersion() = cudnn_version.h's version" "$want" "$(stage cudnn figures.library_version)"
	# asked by the program envlock built with the host compiler: the number as cudnn_version.h defines CUDNN_VERSION
	number=$(awk '$1 == "#define" && $2 == "CUDNN_MAJOR" {M=$3} $1 == "#define" && $2 == "CUDNN_MINOR" {m=$3}
		$1 == "#define" && $2 == "CUDNN_PATCHLEVEL" {p=$3} END {print (M >= 9 ? M * 10000 : M * 1000) + m * 100 + p}' "$hdr")
	check_eq "cudnnGetVersion()'s number = CUDNN_VERSION" "$number" "$(stage cudnn figures.cudnnGetVersion)"
	check_eq "the program that loads cuDNN was built by the gcc in PATH" "$(command -v gcc)" "$(stage cudnn figures.compiler)"
	stage cudnn figures.built_with_cuda >"$scratch/r"
	check_grep "cudnnGetCudartVersion() is reported" "^[0-9][0-9]*\.[0-9][0-9]*$" "$scratch/r"
	cached=$(ldconfig -p | sed -n "s/^[[:space:]]*libcudnn.so.${want%%.*} (.*) => //p" | head -n 1)
	if [ -n "$cached" ]; then
		check_eq "the library loaded is the one ld.so.cache names" "$(readlink -f "$cached")" "$(stage cudnn figures.library)"
	else
		skip "the library loaded is the one ld.so.cache names" "ld.so.cache has no libcudnn.so.${want%%.*}"
	fi
else
	skip "cuDNN version from the library" "no $hdr"
fi
check_eq "lock: skipped without a lockfile" "no lockfile given" "$(stage lock reason)"

# envlock itself never loads a host library (DESIGN.md, one static binary):
# no dlopen, dlmopen, dlsym, dlvsym or dlinfo among its symbols, imported or its own
dlsyms() {
	if command -v nm >/dev/null 2>&1; then
		{ nm -D "$1" 2>/dev/null; nm "$1" 2>/dev/null; } | awk '{print $NF}'
	else
		objdump -T "$1" 2>/dev/null | awk '{print $NF}'
	fi | sed 's/@.*//' | grep -E '^(dlopen|dlmopen|dlsym|dlvsym|dlinfo)$' | sort -u | tr '\n' ' '
}
if command -v nm >/dev/null 2>&1 || command -v objdump >/dev/null 2>&1; then
	check_eq "envlock has no dlopen, dlsym or dlinfo symbol" "" "$(dlsyms "$ENVLOCK")"
	# the check itself sees them where they are: the program verify builds uses all three
	printf '#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <link.h>\nint main(void) { struct link_map *m; void *h = dlopen("x", RTLD_NOW); return dlsym(h, "y") != 0 || dlinfo(h, RTLD_DI_LINKMAP, &m) != 0; }\n' \
		>"$scratch/dl.c"
	if gcc -o "$scratch/dl" "$scratch/dl.c" -ldl 2>/dev/null; then
		check_eq "the symbol check finds them in a program that uses them" "dlinfo dlopen dlsym " "$(dlsyms "$scratch/dl")"
	else
		skip "the symbol check finds them in a program that uses them" "gcc cannot build it here"
	fi
else
	skip "envlock has no dlopen, dlsym or dlinfo symbol" "neither nm nor objdump is installed"
fi
check_eq "exit status in the JSON" "$want_status" "$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["exit_status"])' "$scratch/v.json")"
check_eq "the private folder is gone" "" "$(ls -A "$TMPDIR")"
check_eq "nothing written in HOME (no CUDA JIT cache, no nvcc cache)" "" "$(ls -A "$HOME")"

# save --verify: the second compile; the lockfile gains "verify", its id does not change
(cd "$scratch" && "$ENVLOCK" save -q --no-repo --verify -o "$scratch/verified.json")
check_status "save --verify" 0 $?
(cd "$scratch" && "$ENVLOCK" save -q --no-repo -o "$scratch/plain.json")
if validate "$scratch/verified.json" >"$scratch/val" 2>&1; then
	ok "a lockfile with a verify section is valid against the schema"
else
	not_ok "a lockfile with a verify section is valid against the schema"; sed 's/^/#   /' "$scratch/val"
fi
check_eq "verify section: result" "$([ "$want_status" = 3 ] && echo no-gpu || echo pass)" "$(jget "$scratch/verified.json" verify.result)"
check_eq "verify section: toolchain passed" "pass" "$(jget "$scratch/verified.json" verify.stages.0.status)"
check_eq "without --verify there is no verify section" "" "$(jget "$scratch/plain.json" verify)"
check_eq "the verify section is left out of the id" "$(jget "$scratch/plain.json" id)" "$(jget "$scratch/verified.json" id)"
"$ENVLOCK" show "$scratch/verified.json" >"$scratch/show.out"
check_grep "show: the verify result" "^verify      $(jget "$scratch/verified.json" verify.result) at save time" "$scratch/show.out"
check_grep "show: each stage's verdict" "^  - toolchain: pass$" "$scratch/show.out"

# a lockfile, --cpu-only, and a --cuda-home without nvcc: no compile; the other stages still run
mkdir -p "$scratch/empty-toolkit"
"$ENVLOCK" verify "$scratch/plain.json" --cuda-home "$scratch/empty-toolkit" --cpu-only >"$scratch/t.out" 2>"$scratch/t.err"
check_status "a toolkit without nvcc" 1 $?
check_grep "toolchain: names the missing nvcc" "^toolchain  fail     '$scratch/empty-toolkit/bin/nvcc': no such file" "$scratch/t.out"
check_grep "toolchain: the fix says what to name, not how to spell it" "^                    fix: name a CUDA toolkit folder to compile with: the one holding bin/nvcc$" "$scratch/t.out"
check_grep "runtime: --cpu-only" "^runtime    skipped  CPU parts only: the program was not run" "$scratch/t.out"
check_grep "training: the CPU reference still trains" "^training   skipped  CPU parts only: the CPU reference trained alone" "$scratch/t.out"
check_grep "lock: nothing breaking against this machine's own lock" "^lock       pass     nothing breaking against $scratch/plain.json" "$scratch/t.out"
check_eq "verdict" "failed: toolchain" "$(tail -n 1 "$scratch/t.out")"

# usage errors
"$ENVLOCK" verify --steps 10 2>"$scratch/err"
check_status "--steps 10" 2 $?
check_eq "--steps 10: one line" "envlock: verify: --steps '10': a number from 50 to 2000" "$(cat "$scratch/err")"
"$ENVLOCK" verify --cuda-home "$scratch/nowhere" 2>"$scratch/err"
check_status "--cuda-home of a missing folder" 2 $?
check_eq "--cuda-home: one line" "envlock: verify: the CUDA toolkit folder '$scratch/nowhere': no such file or directory" "$(cat "$scratch/err")"
"$ENVLOCK" verify a.json b.json 2>"$scratch/err"
check_status "two lockfiles" 2 $?
"$ENVLOCK" save --verify --root / -o "$scratch/x.json" 2>"$scratch/err"
check_status "save --verify --root" 2 $?
