#!/bin/sh
# Trees for the Python environment's own CUDA and cuDNN (tests/cli/t0075):
# copies of mktree.sh's Debian 12 tree, each with a torch whose modules are
# real ELF files built here with gcc and linked the way the real packages are:
#   wheel/  torch 2.x from PyPI: torch/lib/libtorch_cuda.so has RUNPATH
#           $ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cu13/lib and
#           needs libcudnn.so.9 and libcudart.so.13, which are NVIDIA's own
#           files: libcudnn.so.9, cudnn_version.h, libcudart.so.13 and the
#           nvidia_cudnn_cu13 / nvidia_cuda_runtime dist-info folders of the
#           wheels this machine's CUDA 13 toolkit was assembled from
#           ($CUDA_WHEELS, default /usr/local/cuda)
#   conda/  a conda env in /opt/conda with cudatoolkit 11.8.0 and cudnn
#           8.9.2.26 (conda-meta records as conda writes them), torch from
#           conda with RPATH $ORIGIN/../../../.. (the env's lib), and
#           LD_LIBRARY_PATH unset; the tree's ld.so.cache maps
#           libcudart.so.11.0 to Debian's own libcudart (libcudart11.0)
#   mkenvcuda.sh TREE OUT
# Exits 3 (and one line saying why) when the wheel files are not here.
set -eu
mkdir -p "$2"
tree=$(cd "$1" && pwd)
out=$(cd "$2" && pwd)
cw=${CUDA_WHEELS:-/usr/local/cuda}
cudnn_dist=$(ls -d "$cw"/dist-info/nvidia_cudnn_cu13-*.dist-info 2>/dev/null | head -n 1)
rt_dist=$(ls -d "$cw"/dist-info/nvidia_cuda_runtime-*.dist-info 2>/dev/null | head -n 1)
for f in "$cw/lib64/libcudnn.so.9" "$cw/lib64/libcudart.so.13" "$cw/include/cudnn_version.h" "$cudnn_dist" "$rt_dist"; do
	[ -n "$f" ] && [ -e "$f" ] || { echo "mkenvcuda: no NVIDIA wheel files in $cw (libcudnn.so.9, libcudart.so.13, dist-info)"; exit 3; }
done
src=$(mktemp -d /tmp/envlock-envcuda.XXXXXX)
trap 'rm -rf "$src"' EXIT
ext=cpython-311-x86_64-linux-gnu.so
cd "$src"
printf 'int f(void) { return 0; }\n' >f.c
stub() { cc -shared -fPIC -o "$1" -Wl,-soname,"$2" f.c; }
# lib FILE SONAME RPATH-FLAGS NEEDED... (each NEEDED a stub in this folder)
lib() {
	file=$1; soname=$2; rpath=$3; shift 3
	needs=""
	for n in "$@"; do needs="$needs -l:$n"; done
	# shellcheck disable=SC2086
	cc -shared -fPIC -o "$file" -Wl,-soname,"$soname" f.c -L. -Wl,--no-as-needed $rpath $needs
}
fresh() {
	rm -rf "$out/$1"
	cp -al "$tree" "$out/$1"
	rm -f "$out/$1/etc/environment"
	mkdir -p "$out/$1/etc"
	printf 'PATH=/usr/bin:/bin\n' >"$out/$1/etc/environment"
}
torch_py() { # DIR VERSION CUDA
	mkdir -p "$1/torch/lib"
	printf '__version__ = %s\ncuda = %s\n' "'$2'" "'$3'" >"$1/torch/version.py"
	: >"$1/torch/__init__.py"
}

# wheel: NVIDIA's files as pip lays them out
fresh wheel
t=$out/wheel
site=$t/usr/local/lib/python3.11/dist-packages
mkdir -p "$site/nvidia/cudnn/lib" "$site/nvidia/cudnn/include" "$site/nvidia/cu13/lib"
cp "$cw/lib64/libcudnn.so.9" "$site/nvidia/cudnn/lib/"
cp "$cw/include/cudnn_version.h" "$site/nvidia/cudnn/include/"
cp "$cw/lib64/libcudart.so.13" "$site/nvidia/cu13/lib/"
cp -r "$cudnn_dist" "$rt_dist" "$site/"
torch_py "$site" 2.9.0+cu130 13.0
stub libcudnn.so.9 libcudnn.so.9
stub libcudart.so.13 libcudart.so.13
lib libtorch_cuda.so libtorch_cuda.so \
	"-Wl,--enable-new-dtags,-rpath,\$ORIGIN/../../nvidia/cudnn/lib:\$ORIGIN/../../nvidia/cu13/lib" \
	libcudnn.so.9 libcudart.so.13
cp libtorch_cuda.so "$site/torch/lib/"
lib "$site/torch/_C.$ext" "_C.$ext" "-Wl,--disable-new-dtags,-rpath,\$ORIGIN/lib" libtorch_cuda.so

# conda: the env's own cudatoolkit and cudnn
fresh conda
t=$out/conda
p=$t/opt/conda
site=$p/lib/python3.11/site-packages
mkdir -p "$p/conda-meta" "$p/bin" "$p/include" "$site"
cp "$t/usr/bin/python3.11" "$p/bin/python3.11"
ln -s python3.11 "$p/bin/python"
record() { # NAME VERSION BUILD
	printf '{"name": "%s", "version": "%s", "build": "%s", "build_number": 0, "channel": "https://repo.anaconda.com/pkgs/main/linux-64", "subdir": "linux-64", "files": []}\n' \
		"$1" "$2" "$3" >"$p/conda-meta/$1-$2-$3.json"
}
record python 3.11.2 h7a1cb2a_0
record cudatoolkit 11.8.0 h6a678d5_0
record cudnn 8.9.2.26 cuda11_0
stub "$p/lib/libcudart.so.11.8.89" libcudart.so.11.0
ln -s libcudart.so.11.8.89 "$p/lib/libcudart.so.11.0"
stub "$p/lib/libcudnn.so.8.9.2" libcudnn.so.8
ln -s libcudnn.so.8.9.2 "$p/lib/libcudnn.so.8"
printf '#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 2\n' >"$p/include/cudnn_version.h"
torch_py "$site" 2.0.1 11.8
stub libcudnn.so.8 libcudnn.so.8
stub libcudart.so.11.0 libcudart.so.11.0
lib libtorch_cuda.so libtorch_cuda.so "-Wl,--disable-new-dtags,-rpath,\$ORIGIN/../../../.." libcudnn.so.8 libcudart.so.11.0
cp libtorch_cuda.so "$site/torch/lib/"
lib "$site/torch/_C.$ext" "_C.$ext" "-Wl,--disable-new-dtags,-rpath,\$ORIGIN/lib" libtorch_cuda.so
