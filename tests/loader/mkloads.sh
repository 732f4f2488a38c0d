#!/bin/sh
# Trees for the loads probe (tests/cli/t0073-loads.sh): copies of
# mktree.sh's Debian 12 tree, each with a fake torch (and mmcv) in
# /usr/local/lib/python3.11/dist-packages whose modules are real ELF files
# built here with gcc, linked the way the wheels are:
#   cudnn/   torch/lib/libtorch_cuda.so needs libcudnn.so.8, which no folder holds
#   glibc/   mmcv/_ext.*.so needs GLIBC_2.29 (posix_spawn_file_actions_addchdir_np);
#            the tree's libc.so.6 is replaced by one whose versions stop at
#            GLIBC_2.23 (a version script, as mkfixtures.sh builds it)
#   shadow/  torch brings torch/lib/libcudnn.so.8.9.2 (RUNPATH $ORIGIN), and the
#            recorded LD_LIBRARY_PATH=/opt/cudnn-8.2/lib holds libcudnn.so.8.2.1;
#            mmcv's ops link the system libcudart.so.11.0, torch its own copy
#   mkloads.sh TREE OUT
set -eu
. "$(dirname "$0")/oldlibc.sh"
mkdir -p "$2"
tree=$(cd "$1" && pwd)
out=$(cd "$2" && pwd)
src=$(mktemp -d /tmp/envlock-loads.XXXXXX)
trap 'rm -rf "$src"' EXIT
site=usr/local/lib/python3.11/dist-packages
ext=cpython-311-x86_64-linux-gnu.so
cd "$src"
printf 'int f(void) { return 0; }\n' >f.c
printf 'int g(void) { return 1; }\n' >g.c
# a shared library named $2 with soname $3, needing the rest (-l:NAME from this folder)
lib() {
	dir=$1; name=$2; soname=$3; shift 3
	needs=""
	for n in "$@"; do needs="$needs -l:$n"; done
	# shellcheck disable=SC2086
	cc -shared -fPIC -o "$dir/$name" -Wl,-soname,"$soname" f.c -L. -L"$dir" -Wl,-rpath-link,.:"$dir" -Wl,--no-as-needed $needs $LDEXTRA
}
stub() { cc -shared -fPIC -o "$1" -Wl,-soname,"$2" g.c; }
stub libcudnn.so.8 libcudnn.so.8
stub libcudart.so.11.0 libcudart.so.11.0
stub libcudart-d0da41ae.so.11.0 libcudart-d0da41ae.so.11.0
torch_py() {
	mkdir -p "$1/$site/torch/lib"
	printf '__version__ = %s\ncuda = %s\n' "'2.0.1+cu117'" "'11.7'" >"$1/$site/torch/version.py"
	: >"$1/$site/torch/__init__.py"
}
# the tree's environment, as mkroots.py writes it: /etc/environment, one KEY=VALUE a line
# (removed first: the tree is hard links to mktree's, and a write would change that one too)
environ() { d=$1; shift; mkdir -p "$d/etc"; rm -f "$d/etc/environment"; printf '%s\n' "$@" >"$d/etc/environment"; }
fresh() {
	rm -rf "$out/$1"
	mkdir -p "$out"
	cp -al "$tree" "$out/$1"
	environ "$out/$1" PATH=/usr/bin:/bin
}

# cudnn: the seed story's "libcudnn.so.8: cannot open shared object file"
fresh cudnn
t=$out/cudnn
torch_py "$t"
LDEXTRA="-Wl,--enable-new-dtags,-rpath,\$ORIGIN"
lib . libtorch_cuda.so libtorch_cuda.so libcudnn.so.8 libcudart-d0da41ae.so.11.0
cp libtorch_cuda.so "$t/$site/torch/lib/"
cp libcudart-d0da41ae.so.11.0 "$t/$site/torch/lib/"
lib . libtorch_python.so libtorch_python.so libtorch_cuda.so
cp libtorch_python.so "$t/$site/torch/lib/"
LDEXTRA="-Wl,--disable-new-dtags,-rpath,\$ORIGIN/lib"
lib "$t/$site/torch" "_C.$ext" "_C.$ext" libtorch_python.so

# glibc: the seed story's "version `GLIBC_2.29' not found (required by .../mmcv/_ext...so)"
fresh glibc
t=$out/glibc
mkdir -p "$t/$site/mmcv"
printf '__version__ = %s\n' "'1.7.1'" >"$t/$site/mmcv/version.py"
: >"$t/$site/mmcv/__init__.py"
glibc229_module "$t/$site/mmcv/_ext.$ext" "_ext.$ext"
old_libc "$t/usr/lib/x86_64-linux-gnu/libc.so.6"

# shadow: an LD_LIBRARY_PATH cuDNN ahead of torch's own, and mmcv on another cudart
fresh shadow
t=$out/shadow
torch_py "$t"
stub "$t/$site/torch/lib/libcudnn.so.8.9.2" libcudnn.so.8
ln -s libcudnn.so.8.9.2 "$t/$site/torch/lib/libcudnn.so.8"
mkdir -p "$t/opt/cudnn-8.2/lib" "$t/usr/local/cuda-11.7/lib64"
stub "$t/opt/cudnn-8.2/lib/libcudnn.so.8.2.1" libcudnn.so.8
ln -s libcudnn.so.8.2.1 "$t/opt/cudnn-8.2/lib/libcudnn.so.8"
cp libcudart-d0da41ae.so.11.0 "$t/$site/torch/lib/"
stub "$t/usr/local/cuda-11.7/lib64/libcudart.so.11.7.99" libcudart.so.11.0
ln -s libcudart.so.11.7.99 "$t/usr/local/cuda-11.7/lib64/libcudart.so.11.0"
LDEXTRA="-Wl,--enable-new-dtags,-rpath,\$ORIGIN"
lib "$t/$site/torch/lib" libtorch_cuda.so libtorch_cuda.so libcudnn.so.8 libcudart-d0da41ae.so.11.0
LDEXTRA="-Wl,--disable-new-dtags,-rpath,\$ORIGIN/lib"
lib "$t/$site/torch" "_C.$ext" "_C.$ext" libtorch_cuda.so
mkdir -p "$t/$site/mmcv"
printf '__version__ = %s\n' "'1.7.1'" >"$t/$site/mmcv/version.py"
: >"$t/$site/mmcv/__init__.py"
LDEXTRA="-Wl,--disable-new-dtags,-rpath,/usr/local/cuda-11.7/lib64"
lib "$t/$site/mmcv" "_ext.$ext" "_ext.$ext" libcudart.so.11.0
environ "$t" PATH=/usr/bin:/bin LD_LIBRARY_PATH=/opt/cudnn-8.2/lib
