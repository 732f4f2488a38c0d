#!/bin/sh
# Every real CUDA layout, and the driver's user-space (issue 14), on a tree of
# Debian 12's own non-free packages: nvidia-cuda-toolkit 11.8 (nvcc in
# /usr/lib/nvidia-cuda-toolkit, /usr/bin/nvcc a wrapper, /usr/lib/cuda),
# libcudart11.0, libcuda1, libnvidia-ml1 and nvidia-smi 535, fetched with
# apt-get download (tests/loader/fetch.sh) and laid out with dpkg -x. Only
# the files this test reads are taken from nvidia-cuda-toolkit (84 MB
# packed, 170 MB laid out): its nvcc, the wrapper, nvcc.profile and
# /usr/lib/cuda. A vendor CUDA 13.0 beside it is generated, with a real ELF
# nvcc and libcudart built by gcc. Expected versions are read from the
# packages with dpkg-deb at test time.
. "$(dirname "$0")/lib.sh"

build=${BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
cache=$build/loader/debs
pkgs="nvidia-cuda-toolkit libcudart11.0 libcuda1 libnvidia-ml1 nvidia-smi"
for tool in dpkg-deb tar gcc; do
	command -v "$tool" >/dev/null 2>&1 || { skip "CUDA layouts on Debian 12's NVIDIA packages" "no $tool"; exit 0; }
done
# shellcheck disable=SC2086
setup_or_skip "tests/loader/fetch.sh fetched $pkgs" \
	"CUDA layouts on Debian 12's NVIDIA packages (make deps enables non-free: tools/non-free.sh)" \
	sh "$top/tests/loader/fetch.sh" "$cache" $pkgs
deb() { ls "$cache/${1}_"*.deb | head -n 1; }
# a Debian version's upstream part: 11.8.89~11.8.0-5~deb12u1 -> 11.8.89, 535.261.03-1 -> 535.261.03
upstream() { dpkg-deb -f "$(deb "$1")" Version | sed 's/^[0-9]*://; s/[~-].*$//'; }
tk_version=$(upstream nvidia-cuda-toolkit)
rt_version=$(upstream libcudart11.0)
drv_version=$(upstream libcuda1)

tree=$scratch/debian
mkdir -p "$tree"
for p in libcudart11.0 libcuda1 libnvidia-ml1 nvidia-smi; do
	dpkg -x "$(deb "$p")" "$tree" || { not_ok "dpkg -x $p"; exit 1; }
done
dpkg-deb --fsys-tarfile "$(deb nvidia-cuda-toolkit)" | tar -x -C "$tree" ./usr/bin/nvcc \
	./usr/lib/nvidia-cuda-toolkit/bin/nvcc ./usr/lib/nvidia-cuda-toolkit/bin/nvcc.profile \
	./etc/nvcc.profile ./usr/lib/cuda || { not_ok "laid out nvidia-cuda-toolkit's nvcc and /usr/lib/cuda"; exit 1; }
# Debian 12 is merged-/usr
ln -s usr/bin "$tree/bin"
ln -s usr/lib "$tree/lib"

# j LOCK EXPR: a value of the lock, by a Python expression on d
j() { "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1; }
save() { "$ENVLOCK" save --root "$1" -o "$2" >save.out 2>&1 || { not_ok "save --root $1"; sed 's/^/#   /' save.out; }; }

save "$tree" deb.lock
tk='[t for t in d["cuda"]["toolkits"] if t["home"] == "/usr/lib/nvidia-cuda-toolkit"][0]'
check_eq "Debian's nvidia-cuda-toolkit is a toolkit, laid out its way" "debian" "$(j deb.lock "$tk[\"layout\"]")"
check_eq "its version is nvcc's own, the package's $tk_version" "$tk_version" "$(j deb.lock "$tk[\"version\"]")"
check_eq "read from the nvcc binary" "/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$(j deb.lock "$tk[\"version_source\"]")"
check_eq "nvcc is /usr/bin/nvcc, a wrapper into the package's folder" \
	"/usr/bin/nvcc /usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$(j deb.lock "$tk[\"nvcc\"][\"path\"] + \" \" + $tk[\"nvcc\"][\"binary\"]")"
check_eq "its libraries are in the multiarch folder: libcudart $rt_version" \
	"/usr/lib/x86_64-linux-gnu/libcudart.so.$rt_version libcudart.so.11.0" \
	"$(j deb.lock "\" \".join(x for l in $tk[\"libraries\"] if l[\"name\"].startswith(\"libcudart\") for x in (l[\"path\"], l[\"soname\"]))")"
check_eq "/usr/lib/cuda is the same toolkit" "['/usr/lib/cuda']" "$(j deb.lock "$tk[\"aliases\"]")"
check_eq "it is the default: the nvcc PATH finds (no PATH: /bin:/usr/bin)" \
	"/usr/lib/nvidia-cuda-toolkit PATH" "$(j deb.lock 'd["cuda"]["default"] + " " + d["cuda"]["default_by"]')"

us='d["gpu"]["driver"]["user_space"]'
check_eq "the driver's user-space is libcuda1's $drv_version" "$drv_version" "$(j deb.lock "$us[\"version\"]")"
check_eq "each file with its version: libcuda, libnvidia-ml, and nvidia-smi's own string" \
	"libcuda:$drv_version libnvidia-ml:$drv_version nvidia-smi:$drv_version" \
	"$(j deb.lock "\" \".join(sorted(f[\"kind\"] + \":\" + f.get(\"version\", \"?\") for f in $us[\"files\"]))")"
check_eq "with no /proc/driver/nvidia the kernel module is absent" "absent" "$(j deb.lock 'd["gpu"]["driver"]["status"]')"
"$ENVLOCK" show deb.lock >show.out 2>&1
check_grep "show does not say 'no NVIDIA driver' of a user-space" "user-space $drv_version, no kernel module" show.out

# CUDA_HOME=/usr/lib/cuda names Debian's toolkit, with its nvcc and libraries
# a tree's environment is its own /etc/environment (never <root>/proc/self, which is envlock's)
mkdir -p "$tree/etc"
printf 'CUDA_HOME=/usr/lib/cuda\n' >"$tree/etc/environment"
save "$tree" home.lock
check_eq "CUDA_HOME=/usr/lib/cuda chooses Debian's $tk_version" "/usr/lib/nvidia-cuda-toolkit CUDA_HOME" \
	"$(j home.lock 'd["cuda"]["default"] + " " + d["cuda"]["default_by"]')"
check_eq "one toolkit, with nvcc and libraries, not '11.8, no nvcc, no libraries'" "1 $tk_version /usr/bin/nvcc True" \
	"$(j home.lock '" ".join(str(x) for x in (len(d["cuda"]["toolkits"]), d["cuda"]["toolkits"][0]["version"], d["cuda"]["toolkits"][0]["nvcc"]["path"], len(d["cuda"]["toolkits"][0]["libraries"]) > 0))')"
rm -f "$tree/etc/environment"

# a vendor 13.0 beside it: a real ELF nvcc carrying nvcc's --version text, and a libcudart
v=$tree/usr/local/cuda-13.0
mkdir -p "$v/bin" "$v/lib64"
cat >nvcc.c <<'C'
#include <stdio.h>
static const char banner[] = "Cuda compilation tools, release 13.0, V13.0.88";
int main(void) { puts(banner); return 0; }
C
gcc -o "$v/bin/nvcc" nvcc.c || not_ok "gcc built a stand-in nvcc"
echo 'int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }' >rt.c
gcc -shared -fPIC -Wl,-soname,libcudart.so.13 -o "$v/lib64/libcudart.so.13.0.96" rt.c || not_ok "gcc built libcudart"
ln -s libcudart.so.13.0.96 "$v/lib64/libcudart.so.13"
printf '{\n  "cuda": { "name": "CUDA SDK", "version": "13.0.2" },\n  "cuda_nvcc": { "name": "CUDA NVCC", "version": "13.0.88" }\n}\n' >"$v/version.json"
ln -s cuda-13.0 "$tree/usr/local/cuda"
save "$tree" two.lock
check_eq "Debian's 11.8 and the vendor 13.0 are both recorded" "/usr/lib/nvidia-cuda-toolkit $tk_version debian, /usr/local/cuda-13.0 13.0.88 vendor" \
	"$(j two.lock '", ".join(t["home"] + " " + t["version"] + " " + t["layout"] for t in d["cuda"]["toolkits"])')"
check_eq "the default is still the nvcc PATH finds, Debian's" "/usr/lib/nvidia-cuda-toolkit PATH" \
	"$(j two.lock 'd["cuda"]["default"] + " " + d["cuda"]["default_by"]')"
check_eq "each rule is named with what it finds" \
	"PATH=/bin/nvcc->/usr/lib/nvidia-cuda-toolkit /usr/local/cuda=/usr/local/cuda->/usr/local/cuda-13.0" \
	"$(j two.lock '" ".join(l["rule"] + "=" + l["value"] + "->" + l.get("toolkit", "-") for l in d["cuda"]["lookups"])')"
check_eq "the vendor nvcc's version is read from its file" "13.0.88" \
	"$(j two.lock '[t for t in d["cuda"]["toolkits"] if t["layout"] == "vendor"][0]["nvcc"]["version"]')"
printf 'PATH=/usr/local/cuda/bin:/usr/bin:/bin\n' >"$tree/etc/environment"
save "$tree" path.lock
check_eq "with /usr/local/cuda/bin first in PATH, 13.0 is the default" "/usr/local/cuda-13.0 PATH" \
	"$(j path.lock 'd["cuda"]["default"] + " " + d["cuda"]["default_by"]')"
# a wrapper script first in PATH, as /usr/local/bin/nvcc on this kind of machine:
# `exec /usr/local/cuda-13.0/bin/nvcc "$@"` names the toolkit; /usr/local is none
mkdir -p "$tree/usr/local/bin"
printf '#!/bin/sh\nexec /usr/local/cuda-13.0/bin/nvcc "$@"\n' >"$tree/usr/local/bin/nvcc"
chmod +x "$tree/usr/local/bin/nvcc"
printf 'PATH=/usr/local/bin:/usr/bin:/bin\n' >"$tree/etc/environment"
save "$tree" wrapper.lock
check_eq "a wrapper in PATH execing the vendor nvcc chooses 13.0" "/usr/local/bin/nvcc->/usr/local/cuda-13.0 /usr/local/cuda-13.0 PATH" \
	"$(j wrapper.lock '[l["value"] + "->" + l.get("toolkit", "-") for l in d["cuda"]["lookups"] if l["rule"] == "PATH"][0] + " " + d["cuda"]["default"] + " " + d["cuda"]["default_by"]')"
check_eq "the wrapper's folder above bin is not taken for a toolkit" "/usr/lib/nvidia-cuda-toolkit /usr/local/cuda-13.0" \
	"$(j wrapper.lock '" ".join(t["home"] for t in d["cuda"]["toolkits"])')"
printf '#!/bin/sh\nexec /opt/nowhere/bin/nvcc "$@"\n' >"$tree/usr/local/bin/nvcc"
save "$tree" dangling.lock
check_eq "a wrapper execing a missing nvcc names no toolkit by PATH" "/usr/local/bin/nvcc->- /usr/local/cuda-13.0 /usr/local/cuda" \
	"$(j dangling.lock '[l["value"] + "->" + l.get("toolkit", "-") for l in d["cuda"]["lookups"] if l["rule"] == "PATH"][0] + " " + d["cuda"]["default"] + " " + d["cuda"]["default_by"]')"
rm -rf "$tree/usr/local/bin"
rm -rf "$tree/proc" "$tree/etc/environment"

# the kernel module against the user-space: NVML's "Driver/library version mismatch"
mkdir -p "$tree/proc/driver/nvidia"
km() { printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Tue Jul  1 00:00:00 UTC 2025\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n' "$1" >"$tree/proc/driver/nvidia/version"; }
km 550.54.14
save "$tree" mismatch.lock
"$ENVLOCK" check mismatch.lock >check.out 2>&1
st=$?
check_eq "check fails when the kernel module is 550.54.14 and the user-space $drv_version" 1 "$st"
check_grep "the finding names both versions" "kernel module is 550.54.14 but its user-space .*libcuda.so.$drv_version is $drv_version" check.out
check_grep "and NVML's message" "Driver/library version mismatch" check.out
check_grep "and the fix" "reboot" check.out
km "$drv_version"
save "$tree" match.lock
"$ENVLOCK" check match.lock >check.out 2>&1
if grep -q "Driver/library version mismatch" check.out; then not_ok "no mismatch when both are $drv_version"; sed 's/^/#   /' check.out; else ok "no mismatch when both are $drv_version"; fi

# envlock diff says what changed between two of these trees: the rule that chose the default, and the user-space
"$ENVLOCK" diff deb.lock home.lock >diff.out 2>&1
check_grep "diff: which rule chose the default toolkit" "^  default by  *$(j deb.lock 'd["cuda"]["default_by"]') *→ CUDA_HOME  *info$" diff.out
"$ENVLOCK" diff --json "$GOLDEN/mmpose-container.lock.json" deb.lock >diff.json 2>&1
check_eq "diff: the driver's user-space is an item of its own (a container's 535.129.03 against this tree's)" \
	"gpu user-space 535.129.03 $drv_version" \
	"$("$PYTHON" -c 'import json,sys; print(" ".join("%s %s %s %s" % (e["section"], e["key"], e["a"], e["b"]) for e in json.load(open(sys.argv[1]))["differences"] if e["key"] == "user-space"))' diff.json)"
echo "1..$n"
