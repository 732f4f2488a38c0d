#!/bin/sh
# envlock verify on a machine with an NVIDIA GPU: build envlock from this
# tree, run `envlock verify --json`, and keep what it says beside what
# nvidia-smi (the tool people check a GPU with today) says of the same
# GPU. Meant for a GPU box with no network: the CUDA toolkit, the driver
# and a C build environment; nothing is downloaded or installed.
#
#   sh bench/gpu-verify.sh            # from the repository root
#   OUT=/some/dir sh bench/gpu-verify.sh
#   RUNS=3 sh bench/gpu-verify.sh     # repeat verify (each run compiles again)
#
# Files (in $OUT, else bench/out/gpu-verify/): verify-N.json (each run),
# verify.txt (the text report of the last run), nvidia-smi.csv,
# nvcc-version.txt, build.log. Exit status: verify's (0: every stage
# passed), or 2 when envlock cannot be built or no GPU is visible.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
out=${OUT:-$top/bench/out/gpu-verify}
runs=${RUNS:-1}
mkdir -p "$out" || exit 2
say() { printf 'gpu-verify: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

# the GPU, as the driver and nvidia-smi see it
[ -e /proc/driver/nvidia/version ] || die "no NVIDIA driver loaded (/proc/driver/nvidia/version is missing): this script is for a GPU machine"
head -n 1 /proc/driver/nvidia/version >&2
if command -v nvidia-smi >/dev/null 2>&1; then
	nvidia-smi --query-gpu=index,name,driver_version,compute_cap,memory.total,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max \
		--format=csv >"$out/nvidia-smi.csv" 2>&1 || say "nvidia-smi --query-gpu failed (see $out/nvidia-smi.csv)"
	cat "$out/nvidia-smi.csv" >&2
else
	say "no nvidia-smi in PATH; the driver's own files will have to do"
fi
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ -x "$nvcc" ]; then
	"$nvcc" --version >"$out/nvcc-version.txt" 2>&1
	tail -n 2 "$out/nvcc-version.txt" >&2
else
	say "no $nvcc: verify will look for another nvcc (lockfile, PATH) and report what it finds"
fi

# the build: every library envlock links, or a clear list of what is missing
missing=
for tool in cc make pkg-config; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -z "$missing" ]; then
	for pc in libcjson:libcjson-dev libcrypto:libssl-dev libgit2:libgit2-dev libarchive:libarchive-dev libzstd:libzstd-dev; do
		pkg-config --exists "${pc%%:*}" 2>/dev/null || missing="$missing ${pc#*:}"
	done
fi
bin=$top/build/gpu/envlock
if [ -n "$missing" ]; then
	# a binary built beforehand from this tree, whose libraries this machine has, will do
	if [ -x "$top/build/envlock" ] && ! ldd "$top/build/envlock" 2>&1 | grep -q 'not found'; then
		say "cannot build here (missing:$missing); using the envlock already built in build/"
		bin=$top/build/envlock
	else
		die "cannot build envlock here: missing$missing (Debian names); there is no network to install them. Install them, or build envlock on a machine with the same libraries and copy build/ here, then run this again."
	fi
else
	say "building envlock (build/gpu)"
	if ! make -j"$(nproc 2>/dev/null || echo 2)" BUILD=build/gpu build/gpu/envlock >"$out/build.log" 2>&1; then
		tail -n 20 "$out/build.log" >&2
		die "the build failed (the whole log: $out/build.log)"
	fi
fi
"$bin" --version >&2

# verify, RUNS times; each run compiles, trains and measures again
status=0
i=1
while [ "$i" -le "$runs" ]; do
	say "run $i of $runs: envlock verify --json"
	start=$(date +%s.%N)
	"$bin" verify --json >"$out/verify-$i.json" 2>"$out/verify-$i.err"
	status=$?
	end=$(date +%s.%N)
	say "exit status $status, $(echo "$end - $start" | bc 2>/dev/null || echo '?') s"
	# the figures bench/RESULTS.md quotes, straight from the JSON (one key per line)
	grep -E '"(gpu_steps_per_s|h2d_gb_per_s|h2d_gb_per_s_best|gpu_max_rel_deviation|gpu_first_loss|gpu_last_loss|seconds|architectures|runtime_version|driver_cuda_version|library_version|max_abs_error|status)"' \
		"$out/verify-$i.json" | sed 's/^ */  /' >&2
	i=$((i + 1))
done
"$bin" verify >"$out/verify.txt" 2>&1
cat "$out/verify.txt" >&2
say "files in $out"
exit "$status"
