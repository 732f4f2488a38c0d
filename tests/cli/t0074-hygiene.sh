#!/bin/sh
# What a tree really holds, and nothing of the host (issue 14):
# - a distribution in two site dirs is recorded once, as the copy Python's
#   sys.path imports, the other as shadowed: Debian 12's own python3-six and
#   python3.11 (apt-get download + dpkg -x) with a pip-installed six over it
#   in /usr/local, judged by the tree's own interpreter in a chroot;
# - cuDNN copied with cp instead of cp -P (libraries the real gcc builds):
#   one finding per folder with the ln -sf commands, which applied in a copy
#   of the tree make ldconfig -r quiet and the next save clean; the real
#   ldconfig's own answer is "libcudnn.so.8 is not a symbolic link";
# - a toolkit library's loader-cache finding is filed under cuda, not cudnn;
# - under --root, neither <root>/proc/self/environ nor envlock's own
#   environment is the tree's, and a procfs mounted in the tree is the
#   running kernel's, not the tree's.
. "$(dirname "$0")/lib.sh"

build=${BUILD:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
work=$build/hygiene
debs=$build/loader/debs
mkdir -p "$work" || exit 1

# rule_findings RULE LOCK: the findings of RULE in LOCK's checks, one "section subject" a line
rule_findings() {
	"$ENVLOCK" check --json "$2" 2>/dev/null | "$PYTHON" -c '
import json, sys
for f in json.load(sys.stdin).get("findings", []):
    if f["rule"] == sys.argv[1]:
        print(f["section"], f["subject"])' "$1"
}
# fix_of RULE LOCK: the fix of RULE's (first) finding
fix_of() {
	"$ENVLOCK" check --json "$2" 2>/dev/null | "$PYTHON" -c '
import json, sys
print(next((f["fix"] for f in json.load(sys.stdin).get("findings", []) if f["rule"] == sys.argv[1]), ""))' "$1"
}

# --- no host leakage under --root
t=$scratch/leak
mkdir -p "$t/etc" "$t/proc/self"
printf 'PATH="/usr/local/cuda-11.8/bin:/usr/bin:/bin"\nCUDA_HOME=/usr/local/cuda-11.8\n' >"$t/etc/environment"
# a copy of a process's environ, as a mounted procfs would show envlock's own
printf 'CUDA_HOME=/poison/proc-cuda\0PATH=/poison/proc-bin\0' >"$t/proc/self/environ"
CUDA_HOME=/poison/live-cuda LD_LIBRARY_PATH=/poison/live-lib "$ENVLOCK" save --root "$t" -o leak.json 2>leak.err
check_status "save of a tree with a copied /proc/self/environ" 0 $?
check_eq "no poison from <root>/proc/self/environ or envlock's own environment" 0 "$(grep -c poison leak.json)"
check_eq "the tree's environment comes from its /etc/environment" "/etc/environment" "$(jget leak.json env.source)"
check_eq "CUDA_HOME is the tree's" "/usr/local/cuda-11.8" "$(jget leak.json env.variables.CUDA_HOME)"
check_eq "a quoted PATH is unquoted, as pam_env does" "/usr/local/cuda-11.8/bin:/usr/bin:/bin" "$(jget leak.json env.variables.PATH)"
rm "$t/etc/environment"
CUDA_HOME=/poison/live-cuda "$ENVLOCK" save --root "$t" -o leak2.json 2>/dev/null
check_eq "no /etc/environment: the env section is absent, not the host's" "absent" "$(jget leak2.json env.status)"
# a real procfs mounted in the tree (a private mount namespace, gone when it exits)
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
	unshare -m sh -c 'mount -t proc proc "$1/proc"' sh "$t" 2>/dev/null; then
	mkdir -p "$t/etc" && echo tree-host >"$t/etc/hostname"
	CUDA_HOME=/poison/live-cuda unshare -m sh -c 'mount -t proc proc "$1/proc" && exec "$2" save --root "$1" -o "$3"' \
		sh "$t" "$ENVLOCK" "$scratch/proc.json" 2>proc.err
	check_status "save of a tree with a procfs mounted in it" 0 $?
	check_eq "no poison through the mounted procfs" 0 "$(grep -c poison proc.json)"
	check_eq "the running kernel's CPU is not the tree's" "" "$(jget proc.json system.cpu)"
	check_eq "the running kernel's memory is not the tree's" "" "$(jget proc.json system.memory)"
	check_eq "the running kernel's release is not the tree's" "" "$(jget proc.json system.kernel)"
	check_eq "the host name is the tree's" "tree-host" "$(jget proc.json host.hostname)"
	check_grep "the save says why" "a mounted procfs describes the running kernel" proc.err
else
	skip "a procfs mounted in the tree is not recorded as the tree's" "mounting a procfs needs root and unshare -m here"
fi

# --- shadowing, on Debian 12's own packages
tree=$work/debian
why=$(sh "$top/tests/loader/mktree.sh" "$debs" "$tree" 2>&1)
st=$?
[ "$st" = 0 ] && { why=$(sh "$top/tests/loader/fetch.sh" "$debs" python3-minimal python3-six 2>&1); st=$?; }
if [ "$st" = 3 ]; then
	skip "a distribution in two site dirs is recorded once, as Python imports it" "$why"
elif [ "$st" != 0 ]; then
	not_ok "Debian 12's python3.11 and python3-six laid out"; echo "#   $why"
else
	for p in python3-minimal python3-six; do dpkg -x "$debs/${p}_"*.deb "$tree"; done
	"$ENVLOCK" save --root "$tree" -o debian.json 2>/dev/null
	check_eq "Debian's six alone: one six" "1.16.0" "$(jget debian.json pip.distributions.0.version)"
	check_eq "Debian's six alone shadows nothing" "" "$(jget debian.json pip.distributions.0.shadows)"
	local=$tree/usr/local/lib/python3.11/dist-packages
	mkdir -p "$local/six-1.17.0.dist-info"
	printf '__version__ = "1.17.0"\n' >"$local/six.py"
	printf 'Metadata-Version: 2.1\nName: six\nVersion: 1.17.0\n' >"$local/six-1.17.0.dist-info/METADATA"
	echo pip >"$local/six-1.17.0.dist-info/INSTALLER"
	"$ENVLOCK" save --root "$tree" -o shadow.json 2>/dev/null
	check_eq "six in two site dirs is recorded once" "1" "$(jget shadow.json pip.count)"
	check_eq "the recorded six is /usr/local's, first on Debian's sys.path" "1.17.0 /usr/local/lib/python3.11/dist-packages/six-1.17.0.dist-info" \
		"$(jget shadow.json pip.distributions.0.version) $(jget shadow.json pip.distributions.0.path)"
	check_eq "Debian's six is marked shadowed" "1.16.0 /usr/lib/python3/dist-packages/six-1.16.0.egg-info" \
		"$(jget shadow.json pip.distributions.0.shadows.0.version) $(jget shadow.json pip.distributions.0.shadows.0.path)"
	validate shadow.json >val.out 2>&1
	check_status "the lock with a shadow validates against the schema" 0 $?
	"$ENVLOCK" diff debian.json shadow.json >diff.out 2>&1
	check_grep "diff names the shadowed copy" "six shadows" diff.out
	if [ "$(id -u)" = 0 ] && chroot "$tree" /usr/bin/python3 -c 'import six' >/dev/null 2>&1; then
		check_eq "the tree's own python3.11 imports the one envlock records" "1.17.0" \
			"$(chroot "$tree" /usr/bin/python3 -c 'import six; print(six.__version__)' 2>&1)"
	else
		skip "the tree's own python3.11 imports the one envlock records" "chroot needs root"
	fi
fi

# --- cuDNN copied with cp, not cp -P
if ! command -v gcc >/dev/null 2>&1 || ! command -v ldconfig >/dev/null 2>&1; then
	skip "a copied cuDNN gets one finding with the ln -sf commands" "no gcc or ldconfig here"
	exit 0
fi
c=$scratch/copied
lib=$c/usr/local/cuda/lib64
mkdir -p stage "$lib" "$c/usr/local/cuda/include" "$c/etc"
echo 'int cudnn_stub(void) { return 8; }' >stub.c
for l in libcudnn libcudnn_ops_infer; do
	gcc -shared -fPIC -Wl,-soname,$l.so.8 -o stage/$l.so.8.9.7 stub.c &&
		ln -s $l.so.8.9.7 stage/$l.so.8 && ln -s $l.so.8 stage/$l.so || exit 1
done
cp stage/* "$lib/"	# the mistake: without -P every link becomes a copy
printf '#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n' >"$c/usr/local/cuda/include/cudnn_version.h"
echo '{"cuda": {"name": "CUDA SDK", "version": "12.2.2"}}' >"$c/usr/local/cuda/version.json"
echo /usr/local/cuda/lib64 >"$c/etc/ld.so.conf"
ldconfig -r "$c" -v >ldconfig.out 2>&1
check_grep "ldconfig's own answer to the copies" "libcudnn.so.8 is not a symbolic link" ldconfig.out
# a toolkit library the cache does not know yet
gcc -shared -fPIC -Wl,-soname,libcurand.so.10 -o "$lib/libcurand.so.10.3.3.141" stub.c && ln -s libcurand.so.10.3.3.141 "$lib/libcurand.so.10"
"$ENVLOCK" save --root "$c" -o copied.json 2>/dev/null
check_eq "the library's soname link is recorded as a copy" "copy libcudnn.so.8.9.7" \
	"$(jget copied.json cudnn.libraries.2.soname_link) $(jget copied.json cudnn.libraries.1.copy_of)"
check_eq "one finding for the folder, not one per file" "cudnn /usr/local/cuda/lib64" "$(rule_findings soname-link-copied copied.json)"
fix="ln -sf libcudnn.so.8 /usr/local/cuda/lib64/libcudnn.so && ln -sf libcudnn.so.8.9.7 /usr/local/cuda/lib64/libcudnn.so.8"
fix="$fix && ln -sf libcudnn_ops_infer.so.8 /usr/local/cuda/lib64/libcudnn_ops_infer.so"
fix="$fix && ln -sf libcudnn_ops_infer.so.8.9.7 /usr/local/cuda/lib64/libcudnn_ops_infer.so.8"
check_eq "the fix is the exact ln -sf commands" "$fix" "$(fix_of soname-link-copied copied.json)"
check_eq "no 'run ldconfig' for the copies" "" "$(rule_findings ld-cache-stale copied.json | grep cudnn)"
check_eq "libcurand's cache finding is filed under cuda" "cuda /usr/local/cuda/lib64/libcurand.so.10.3.3.141" \
	"$(rule_findings ld-cache-stale copied.json)"
# the fix, applied in a copy of the tree
cp -a "$c" fixed
rm "fixed/usr/local/cuda/lib64/libcurand"*
echo "$fix" | tr '&' '\n' | grep 'ln -sf' | while read -r _ _ target link; do
	ln -sf "$target" "fixed$link"
done
ldconfig -r "$scratch/fixed" -v >ldconfig2.out 2>&1
check_eq "after the fix ldconfig -r is quiet about links" 0 "$(grep -c 'is not a symbolic link' ldconfig2.out)"
"$ENVLOCK" save --root "$scratch/fixed" -o fixed.json 2>/dev/null
check_eq "after the fix the next save has no link or cache finding" "" \
	"$(rule_findings soname-link-copied fixed.json; rule_findings ld-cache-stale fixed.json)"
check_eq "after the fix the soname link leads to the library" "ok" "$(jget fixed.json cudnn.libraries.0.soname_link)"
