#!/bin/sh
# The CUDA and cuDNN a Python environment brings (lib/probe/envcuda.c):
# NVIDIA's wheels in site-packages/nvidia (with NVIDIA's own libcudnn.so.9,
# libcudart.so.13, cudnn_version.h and dist-info folders, copied from this
# machine's CUDA 13 toolkit), a conda env's cudatoolkit and cudnn, and the
# copies torch carries in torch/lib (tests/loader/mkloads.sh's shadow tree).
# Each is recorded with its version and the file that says it; the loader's
# answer for torch (checked against the real loader in a chroot) names them,
# show says which cuDNN and CUDA runtime torch loads, and the loader-cache
# rules leave them alone.
. "$(dirname "$0")/lib.sh"

debian_tree "the environment's CUDA on Debian 12's packages"
trees=$build/envcuda
setup_or_skip "tests/loader/mkenvcuda.sh built the trees" "the environment's CUDA from NVIDIA's wheel files" \
	sh "$top/tests/loader/mkenvcuda.sh" "$tree" "$trees"
cw=${CUDA_WHEELS:-/usr/local/cuda}
ext=cpython-311-x86_64-linux-gnu.so

# py LOCK EXPR: a Python expression over the lock as d
py() { "$PYTHON" -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

# judge TREE MODULE LOCK WHAT: the lock's torch module resolves as ld.so --list in a chroot of TREE
judge() {
	if [ "$can_chroot" != yes ]; then
		skip "$4" "chroot needs root, and a loader the tree can run"
		return
	fi
	chroot "$1" /lib64/ld-linux-x86-64.so.2 --list "$2" >ldso.out 2>&1
	sed -n 's/^[[:space:]]*\([^ ]*\) => \([^ ]*\).*/\1 \2/p' ldso.out | sort >b
	"$PYTHON" - "$3" "$2" <<'PY' | sort >a
import json, sys
for m in json.load(open(sys.argv[1]))["loads"]["modules"]:
    if m["path"] == sys.argv[2]:
        for e in m["needed"]:
            # ld.so --list prints itself without "=>"
            if e["found_by"] != "interpreter" and not e["soname"].startswith("ld-linux"):
                print(e["soname"], e.get("path", "not found"))
PY
	check_diff "$4 ($(wc -l <b) libraries)" b a
}

# 1. NVIDIA's wheels
site=/usr/local/lib/python3.11/dist-packages
"$ENVLOCK" save --root "$trees/wheel" --python /usr/bin/python3.11 -o wheel.lock.json 2>save.err
check_status "save of the wheel tree" 0 $?
rt=$(basename "$(ls -d "$cw"/dist-info/nvidia_cuda_runtime-*.dist-info | head -n 1)" .dist-info)
rt_version=${rt#nvidia_cuda_runtime-}
check_eq "the wheels are a toolkit: home, layout, the runtime wheel's version and its dist-info" \
	"$site/nvidia wheel $rt_version $site/$rt.dist-info" \
	"$(py wheel.lock.json '" ".join(str(t.get(k)) for t in d["cuda"]["toolkits"] for k in ("home", "layout", "version", "version_source"))')"
check_eq "each nvidia-* wheel but cuDNN's is a component" "{'nvidia-cuda-runtime': '$rt_version'}" \
	"$(py wheel.lock.json 'd["cuda"]["toolkits"][0]["components"]')"
sum=$(sha256sum "$cw/lib64/libcudart.so.13" | cut -d' ' -f1)
check_eq "libcudart.so.13 is recorded with its soname and sha256" \
	"$site/nvidia/cu13/lib/libcudart.so.13 libcudart.so.13 $sum" \
	"$(py wheel.lock.json '" ".join(" ".join((l["path"], l["soname"], l["sha256"])) for l in d["cuda"]["toolkits"][0]["libraries"])')"
h=$cw/include/cudnn_version.h
want=$(sed -n 's/^#define CUDNN_MAJOR \([0-9]*\).*/\1/p' "$h").$(sed -n 's/^#define CUDNN_MINOR \([0-9]*\).*/\1/p' "$h").$(sed -n 's/^#define CUDNN_PATCHLEVEL \([0-9]*\).*/\1/p' "$h")
check_eq "the wheel's cuDNN: its folder, layout, and the version its own header says" \
	"$site/nvidia/cudnn/lib wheel $want $site/nvidia/cudnn/include/cudnn_version.h" \
	"$(py wheel.lock.json '" ".join(str(i.get(k)) for i in d["cudnn"]["installs"] for k in ("home", "layout", "version", "version_source"))')"
check_eq "the system's cuDNN is still none" "absent 0" \
	"$(py wheel.lock.json 'd["cudnn"]["status"], len(d["cudnn"]["libraries"])' | tr -d "(),'")"
judge "$trees/wheel" "$site/torch/_C.$ext" wheel.lock.json "torch's modules resolve into the wheels as the real loader resolves them"
"$ENVLOCK" show wheel.lock.json >show.out 2>&1
check_grep "show: torch loads the wheel's cuDNN, with its version" \
	"torch loads cuDNN $want: $site/nvidia/cudnn/lib/libcudnn.so.9" show.out
check_grep "show: torch loads the wheel's CUDA runtime, with its version" \
	"torch loads CUDA runtime $rt_version: $site/nvidia/cu13/lib/libcudart.so.13" show.out
check_grep "show: the wheels' CUDA says where it comes from" \
	"$rt_version at $site/nvidia (pip wheels)" show.out

# without its header, the wheel's cuDNN version is the distribution's (cut to three parts)
rm "$trees/wheel$site/nvidia/cudnn/include/cudnn_version.h"
"$ENVLOCK" save --root "$trees/wheel" --python /usr/bin/python3.11 -o nohdr.lock.json 2>save.err
dist=$(basename "$(ls -d "$cw"/dist-info/nvidia_cudnn_cu13-*.dist-info | head -n 1)" .dist-info)
dv=$(echo "${dist#nvidia_cudnn_cu13-}" | cut -d. -f1-3)
check_eq "no header: the nvidia-cudnn distribution's version, and its dist-info" "$dv $site/$dist.dist-info" \
	"$(py nohdr.lock.json '" ".join((d["cudnn"]["installs"][0]["version"], d["cudnn"]["installs"][0]["version_source"]))')"

# 2. a conda env's cudatoolkit and cudnn
"$ENVLOCK" save --root "$trees/conda" --python /opt/conda/bin/python3.11 -o conda.lock.json 2>save.err
check_status "save of the conda tree" 0 $?
check_eq "cudatoolkit is the env's toolkit, its version from its conda-meta record" \
	"/opt/conda conda 11.8.0 /opt/conda/conda-meta/cudatoolkit-11.8.0-h6a678d5_0.json" \
	"$(py conda.lock.json '" ".join(str(t.get(k)) for t in d["cuda"]["toolkits"] for k in ("home", "layout", "version", "version_source"))')"
check_eq "conda's cudnn: the env's lib, the version from its header" \
	"/opt/conda/lib conda 8.9.2 /opt/conda/include/cudnn_version.h" \
	"$(py conda.lock.json '" ".join(str(i.get(k)) for i in d["cudnn"]["installs"] for k in ("home", "layout", "version", "version_source"))')"
judge "$trees/conda" /opt/conda/lib/python3.11/site-packages/torch/_C.$ext conda.lock.json \
	"conda's torch resolves into the env's lib as the real loader resolves it"
"$ENVLOCK" show conda.lock.json >show.out 2>&1
check_grep "show: torch loads conda's cuDNN" "torch loads cuDNN 8.9.2: /opt/conda/lib/libcudnn.so.8.9.2" show.out
check_grep "show: the cuDNN row names conda's, not 'not found'" "^cuDNN  *8.9.2 at /opt/conda/lib (conda env)" show.out
# the env's libraries are not the loader cache's: put another libcudart.so.11.0 in the cache
mkdir -p "$trees/conda/usr/local/cuda-11.8/lib64"
cp "$trees/conda/opt/conda/lib/libcudart.so.11.8.89" "$trees/conda/usr/local/cuda-11.8/lib64/"
ln -sf libcudart.so.11.8.89 "$trees/conda/usr/local/cuda-11.8/lib64/libcudart.so.11.0"
# (the tree is hard links to mktree's: remove before writing)
rm -f "$trees/conda/etc/ld.so.conf"
echo /usr/local/cuda-11.8/lib64 >"$trees/conda/etc/ld.so.conf"
if ldconfig -r "$trees/conda" 2>/dev/null; then
	"$ENVLOCK" save --root "$trees/conda" --python /opt/conda/bin/python3.11 -o cache.lock.json 2>save.err
	check_eq "the cache maps libcudart.so.11.0 elsewhere" "other" \
		"$(py cache.lock.json '[l for t in d["cuda"]["toolkits"] if t["layout"] == "conda" for l in t["libraries"]][0]["ld_cache"]')"
	"$ENVLOCK" check cache.lock.json >check.out 2>&1
	if grep -q "ld-cache.*/opt/conda/lib\|/opt/conda/lib.*ld.so.cache" check.out; then
		not_ok "no ld-cache finding for the env's own libcudart"; sed 's/^/#   /' check.out | head -n 20
	else
		ok "no ld-cache finding for the env's own libcudart"
	fi
else
	skip "the loader-cache rules leave the env's libraries alone" "ldconfig -r cannot write the tree's cache here"
fi

# 3. torch's own copies (mkloads.sh's shadow tree: torch/lib/libcudnn.so.8.9.2, libcudart-d0da41ae.so.11.0)
loads=$build/loads
if [ -d "$loads/shadow" ]; then
	"$ENVLOCK" save --root "$loads/shadow" --python /usr/bin/python3.11 -o shadow.lock.json 2>save.err
	check_eq "torch/lib's cudart is a bundled toolkit with torch.version.cuda" \
		"$site/torch/lib bundled 11.7 $site/torch/version.py" \
		"$(py shadow.lock.json '" ".join(str(t.get(k)) for t in d["cuda"]["toolkits"] if t["layout"] == "bundled" for k in ("home", "layout", "version", "version_source"))')"
	check_eq "torch/lib's cuDNN is a bundled install, the version from its file name" \
		"$site/torch/lib bundled 8.9.2 $site/torch/lib/libcudnn.so.8.9.2" \
		"$(py shadow.lock.json '" ".join(str(i.get(k)) for i in d["cudnn"]["installs"] for k in ("home", "layout", "version", "version_source"))')"
else
	skip "torch's own copies are recorded" "t0073 builds the shadow tree first ($loads/shadow is not there)"
fi

# 4. diff: the cuDNN and CUDA runtime torch loads are core parts, one item across a new major
"$ENVLOCK" diff conda.lock.json wheel.lock.json --only loads >diff.out 2>&1
check_grep "diff: the cuDNN torch loads changed major, a risky change of one item" \
	"torch libcudnn  *8.9.2 /opt/conda/lib/libcudnn.so.8.9.2 → $want $site/nvidia/cudnn/lib/libcudnn.so.9 .*risky" diff.out
check_grep "diff: so did the CUDA runtime" \
	"torch libcudart  *11.8.0 /opt/conda/lib/libcudart.so.11.8.89 → $rt_version $site/nvidia/cu13/lib/libcudart.so.13 .*risky" diff.out

# 5. CUDA_HOME naming the env makes its CUDA the default; restore leaves it to the env's own steps
rm -f "$trees/conda/etc/environment"
printf 'PATH=/usr/bin:/bin\nCUDA_HOME=/opt/conda\n' >"$trees/conda/etc/environment"
"$ENVLOCK" save --root "$trees/conda" --python /opt/conda/bin/python3.11 -o home.lock.json 2>save.err
check_eq "CUDA_HOME=/opt/conda: the env's toolkit is the default, by CUDA_HOME" "/opt/conda CUDA_HOME" \
	"$(py home.lock.json '" ".join((d["cuda"]["default"], d["cuda"]["default_by"]))')"
"$ENVLOCK" restore home.lock.json --root "$tree" --dry-run --only cuda >plan.out 2>&1
check_grep "restore: no runfile for the env's CUDA, the conda step brings it" \
	"CUDA 11.8.0 at /opt/conda comes with the environment" plan.out
check_grep "  and says which step" "the conda step installs its packages" plan.out
