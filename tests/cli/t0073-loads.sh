#!/bin/sh
# The loader's answer, recorded by save and used by check, show and report:
# on Debian 12's own packages (tests/loader/mktree.sh) the python the lock
# records resolves as the real loader resolves it in a chroot of the tree;
# on gcc-built fixtures over copies of that tree (tests/loader/mkloads.sh)
# `envlock save --root` then `envlock check` on the lock predicts the seed
# story's two errors, an LD_LIBRARY_PATH cuDNN shadowing torch's own, and
# mmcv's ops on another CUDA runtime than torch's, naming the exact files.
. "$(dirname "$0")/lib.sh"

debian_tree "the loads section on Debian 12's packages"
loads=$build/loads
if ! sh "$top/tests/loader/mkloads.sh" "$tree" "$loads" >mk.out 2>&1; then
	not_ok "tests/loader/mkloads.sh built the fixtures"; sed 's/^/#   /' mk.out | tail -n 20
	exit 1
fi
site=/usr/local/lib/python3.11/dist-packages
ext=cpython-311-x86_64-linux-gnu.so
save() { "$ENVLOCK" save --root "$1" --python /usr/bin/python3.11 -o "$2" 2>save.err; }

# 1. Debian's python: the lock's resolution is the real loader's
save "$tree" debian.lock.json
check_status "save of the Debian tree" 0 $?
check_eq "the python module is recorded" "python /usr/bin/python3.11" \
	"$(jget debian.lock.json loads.modules.0.framework) $(jget debian.lock.json loads.modules.0.path)"
check_eq "libc.so.6 found by ld.so.cache" "/lib/x86_64-linux-gnu/libc.so.6 ld.so.cache" \
	"$("$PYTHON" -c 'import json, sys
for e in json.load(open(sys.argv[1]))["loads"]["modules"][0]["needed"]:
    if e["soname"] == "libc.so.6": print(e["path"], e["found_by"])' debian.lock.json)"
"$PYTHON" - debian.lock.json >lock.paths <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["loads"]["modules"][0]
for e in m["needed"]:
    if e["found_by"] not in ("interpreter", "loaded"):
        print(e["soname"], e.get("path", "not found"))
PY
if [ "$can_chroot" = yes ]; then
	chroot "$tree" /lib64/ld-linux-x86-64.so.2 --list /usr/bin/python3.11 >ldso.out 2>&1
	# "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x...)": the names ld.so searched and what it found
	sed -n 's/^[[:space:]]*\([^ ]*\) => \([^ ]*\).*/\1 \2/p' ldso.out >ldso.paths
	sort lock.paths >a; sort ldso.paths >b
	check_diff "the recorded python resolves as ld.so --list in a chroot ($(wc -l <b) libraries)" b a
else
	skip "the recorded python resolves as ld.so --list in a chroot" "chroot needs root, and a loader the tree can run"
fi
check_eq "no LD_LIBRARY_PATH recorded, none used" "" "$(jget debian.lock.json loads.library_path)"

# 2. libcudnn.so.8: cannot open shared object file
save "$loads/cudnn" cudnn.lock.json
check_status "save of the cudnn tree" 0 $?
"$ENVLOCK" check cudnn.lock.json >check.out 2>&1
check_status "check predicts a breaking load" 1 $?
check_grep "  names the file that needs libcudnn.so.8 and the error" \
	"$site/torch/lib/libtorch_cuda.so needs libcudnn.so.8, which the loader does not find (it looked in $site/torch/lib, ld.so.cache, /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /lib, /usr/lib): torch fails with 'libcudnn.so.8: cannot open shared object file" check.out
check_grep "  and the fix" "fix: install the package that provides libcudnn.so.8" check.out
if [ "$can_chroot" = yes ]; then
	chroot "$loads/cudnn" /lib64/ld-linux-x86-64.so.2 --list "$site/torch/_C.$ext" >ldso.out 2>&1
	check_grep "  the real loader stops at the same name" \
		"error while loading shared libraries: libcudnn.so.8: cannot open shared object file" ldso.out
else
	skip "  the real loader agrees" "no chroot here"
fi

# 3. version `GLIBC_2.29' not found (required by .../mmcv/_ext...so)
save "$loads/glibc" glibc.lock.json
check_status "save of the glibc 2.23 tree" 0 $?
"$ENVLOCK" check glibc.lock.json >check.out 2>&1
check_status "check predicts a breaking load" 1 $?
check_grep "  names mmcv's _ext, GLIBC_2.29 and the libc that lacks it" \
	"$site/mmcv/_ext.$ext needs GLIBC_2.29 from libc.so.6, but /lib/x86_64-linux-gnu/libc.so.6 (libc.so.6) does not define it: mmcv fails with \"version 'GLIBC_2.29' not found (required by $site/mmcv/_ext.$ext)\"" check.out
check_eq "  the lock records the missing version" "GLIBC_2.29 libc.so.6 /lib/x86_64-linux-gnu/libc.so.6" \
	"$("$PYTHON" -c 'import json, sys
for m in json.load(open(sys.argv[1]))["loads"]["modules"]:
    if m["framework"] == "mmcv":
        x = m["missing_versions"][0]; print(x["version"], x["library"], x["library_path"])' glibc.lock.json)"
if [ "$can_chroot" = yes ]; then
	chroot "$loads/glibc" /lib64/ld-linux-x86-64.so.2 --list "$site/mmcv/_ext.$ext" >ldso.out 2>&1
	check_grep "  the real loader agrees" "version \`GLIBC_2.29' not found (required by $site/mmcv/_ext.$ext)" ldso.out
else
	skip "  the real loader agrees" "no chroot here"
fi

# 4. an LD_LIBRARY_PATH cuDNN ahead of torch's own; mmcv on another cudart
save "$loads/shadow" shadow.lock.json
check_status "save of the shadow tree" 0 $?
check_eq "the recorded LD_LIBRARY_PATH is the one used" "/opt/cudnn-8.2/lib" "$(jget shadow.lock.json loads.library_path)"
"$ENVLOCK" check shadow.lock.json >check.out 2>&1
check_grep "check names both cuDNN versions" \
	"LD_LIBRARY_PATH (/opt/cudnn-8.2/lib) makes torch load /opt/cudnn-8.2/lib/libcudnn.so.8.2.1 (cuDNN 8.2.1) instead of $site/torch/lib/libcudnn.so.8.9.2 (cuDNN 8.9.2)" check.out
check_grep "check names both CUDA runtimes" \
	"$site/mmcv/_ext.$ext loads the CUDA runtime /usr/local/cuda-11.7/lib64/libcudart.so.11.7.99, but torch loads $site/torch/lib/libcudart-d0da41ae.so.11.0" check.out
if [ "$can_chroot" = yes ]; then
	chroot "$loads/shadow" /lib64/ld-linux-x86-64.so.2 --library-path /opt/cudnn-8.2/lib --list "$site/torch/_C.$ext" >ldso.out 2>&1
	check_grep "  the real loader loads the LD_LIBRARY_PATH cuDNN" "libcudnn.so.8 => /opt/cudnn-8.2/lib/libcudnn.so.8" ldso.out
else
	skip "  the real loader loads the LD_LIBRARY_PATH cuDNN" "no chroot here"
fi
"$ENVLOCK" show shadow.lock.json >show.out 2>&1
check_grep "show names the cuDNN torch loads" "torch loads cuDNN 8.2.1: /opt/cudnn-8.2/lib/libcudnn.so.8.2.1" show.out
check_grep "show names the CUDA runtime torch loads: its own copy, of torch.version.cuda" "torch loads CUDA runtime 11.7: $site/torch/lib/libcudart-d0da41ae.so.11.0" show.out
"$ENVLOCK" report shadow.lock.json >report.out 2>&1
check_grep "report names the cuDNN torch loads" "cuDNN (torch)  8.2.1 *torch loads /opt/cudnn-8.2/lib/libcudnn.so.8.2.1" report.out
check_grep "report names the CUDA runtime torch loads" "CUDA runtime   11.7 *torch loads $site/torch/lib/libcudart-d0da41ae.so.11.0" report.out

# 5. a lock without the section (an older envlock's) still loads and checks
"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1])); d.pop("loads"); d.pop("id")
json.dump(d, open(sys.argv[2], "w"))' cudnn.lock.json old.lock.json
"$ENVLOCK" check old.lock.json >check.out 2>&1
check_eq "a lock without loads: no load findings" "0" "$(grep -c "which the loader does not find" check.out)"
echo "1..$n"
