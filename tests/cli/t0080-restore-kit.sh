#!/bin/sh
# envlock restore LOCK --kit DIR|FILE (issue 15): a restore with no network
# from an offline kit. The kit is written by tests/kit/mkkit.py from the
# kit format (not by envlock pack), of real archives: .tar.bz2 and .conda
# conda packages with info/index.json, wheels built by the real pip. pip is
# the real one, in venvs made by python3 -m venv. There is no conda:
# envlock links the kit's archives itself (--no-conda, and no conda on
# PATH; tests/cli/t0110 compares what it links with cph's own extraction).
# The restores run in a network namespace of their own
# (unshare -n: only a loopback, down). A kit that disagrees with its
# manifest or with the lock is refused before anything runs.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
# pip reads no configuration of this machine: no index, no links but the kit's
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
MKKIT=$top/tests/kit/mkkit.py

if ! command -v zstd >/dev/null 2>&1; then
	skip "restore --kit" "no zstd program here to make the .conda archive (Debian: zstd)"
	exit 0
fi
if ! /usr/bin/python3 -m venv A >venv.err 2>&1 || ! A/bin/python -m pip --version >/dev/null 2>&1; then
	skip "restore --kit" "python3 -m venv with pip is not available here ($(head -n 1 venv.err); Debian: python3-venv)"
	exit 0
fi
if ! "$PYTHON" "$MKKIT" sources S >mk.err 2>&1; then
	not_ok "tests/kit/mkkit.py made the archives, wheels and environment"
	sed 's/^/#   /' mk.err
	exit 1
fi
ok "tests/kit/mkkit.py made the archives, wheels and environment"
# the machine the lock is saved on: the conda environment S/env, the venv A with the wheels
A/bin/python -m pip install -q --no-deps --no-index S/wheels/*.whl
"$ENVLOCK" save -q --conda-prefix "$PWD/S/env" --python "$PWD/A/bin/python" -o L.lock 2>/dev/null
check_eq "the lock has the two conda packages, each with its md5 and sha256" \
	"elconda-lib 2.1.3 h4d5e6f_1 True True,elconda-tool 1.0 h1a2b3c_0 True True" \
	"$("$PYTHON" -c 'import json,sys; print(",".join("%s %s %s %s %s" % (p["name"], p["version"], p["build"], len(p.get("md5",""))==32, len(p.get("sha256",""))==64) for p in json.load(open(sys.argv[1]))["conda"]["packages"]))' L.lock)"
"$PYTHON" "$MKKIT" kit L.lock S/archives S/wheels KIT
check_eq "the kit: both archives, both wheels, the lock" \
	"conda/elconda-lib-2.1.3-h4d5e6f_1.conda conda/elconda-tool-1.0-h1a2b3c_0.tar.bz2 envlock.kit.json envlock.lock wheels/elkit_alpha-1.0-py3-none-any.whl wheels/elkit_beta-2.0.1-py3-none-any.whl" \
	"$(cd KIT && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ' | sed 's/ $//')"

# run CMD... with no network: a namespace of its own, or plainly where there is none to make
if unshare -n true 2>/dev/null; then
	offline() { env PATH=/usr/bin:/bin unshare -n "$@"; }
	# the namespace's interfaces (/proc/net/dev is the reader's namespace's), each up or down (SIOCGIFFLAGS)
	check_eq "the restores run with no network: a loopback only, down" "lo down" \
		"$(unshare -n "$PYTHON" -c 'import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for line in open("/proc/net/dev").read().splitlines()[2:]:
    name = line.split(":")[0].strip()
    flags = struct.unpack("H", fcntl.ioctl(s, 0x8913, struct.pack("256s", name.encode()))[16:18])[0]
    print(name, "up" if flags & 1 else "down")')"
else
	offline() { env PATH=/usr/bin:/bin "$@"; }
	skip "the restores run with no network" "unshare -n fails here (needs root or user namespaces): the restores run with this machine's network"
fi
# restore LOCK KIT PREFIX VENV [ARGS...]: a restore of the conda and pip steps into an empty sandbox
restore() {
	_lock=$1 _kit=$2 _prefix=$3 _venv=$4
	shift 4
	offline "$ENVLOCK" restore "$_lock" --kit "$_kit" --prefix "$PWD/$_prefix" --python "$PWD/$_venv/bin/python" \
		--no-conda --state-dir "$PWD/state" --skip verify "$@"
}
pip_elkit() { "$1/bin/python" -m pip list --format=freeze 2>/dev/null | grep -i '^elkit' | sort | tr '\n' ' ' | sed 's/ $//'; }

# --- a restore from the kit, offline ---------------------------------------
/usr/bin/python3 -m venv B
restore L.lock KIT P B --yes >out 2>err
check_status "restore --kit into an empty sandbox, offline" 0 $?
check_grep "conda: the kit's archives, linked by envlock, offline" \
	"done    create conda environment $scratch/P with envlock (2 packages, offline, linked from the kit's archives)" out
check_grep "pip: hash-checked, from the kit" "done    pip install 2 pinned distributions into $scratch/B/bin/python (hash-checked)" out
check_grep "and the plan says so" "offline from the kit's wheels, each checked by pip against the kit's sha256" out
log=$(ls state/restore-*.log)
check_grep "the log: what was linked" "linked 2 packages into '$scratch/P': 4 files" "$log"
check_grep "pip ran with the hashes, no index, the kit's wheels" \
	"'--require-hashes' '--no-index' '--find-links' '$scratch/KIT/wheels' '-r'" "$log"
check_eq "pip's requirements: each pin with the kit's sha256" \
	"elkit-alpha==1.0 --hash=sha256:$(sha256sum KIT/wheels/elkit_alpha-1.0-py3-none-any.whl | cut -d' ' -f1)
elkit-beta==2.0.1 --hash=sha256:$(sha256sum KIT/wheels/elkit_beta-2.0.1-py3-none-any.whl | cut -d' ' -f1)" \
	"$(grep -- '--hash=' state/restore-*.requirements.txt)"
check_eq "the .tar.bz2's and the .conda's files are in the prefix" \
	"bin/elconda-tool include/elconda.h lib/libelconda.so.2 share/elconda-tool/README" \
	"$(cd P && find bin include lib share -type f | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "with their contents" "#define ELCONDA 213" "$(cat P/include/elconda.h)"
check_eq "conda-meta: a record per package, from info/index.json, with the lock's url; the kit's file in link" \
	"elconda-lib 2.1.3 h4d5e6f_1 1 linux-64 elconda-lib-2.1.3-h4d5e6f_1.conda $(jget L.lock conda.packages.0.url) $scratch/KIT/conda/elconda-lib-2.1.3-h4d5e6f_1.conda include/elconda.h,lib/libelconda.so.2
elconda-tool 1.0 h1a2b3c_0 0 linux-64 elconda-tool-1.0-h1a2b3c_0.tar.bz2 $(jget L.lock conda.packages.1.url) $scratch/KIT/conda/elconda-tool-1.0-h1a2b3c_0.tar.bz2 bin/elconda-tool,share/elconda-tool/README" \
	"$("$PYTHON" -c 'import json,sys,glob
for f in sorted(glob.glob(sys.argv[1] + "/conda-meta/*.json")):
    r = json.load(open(f))
    print(r["name"], r["version"], r["build"], r["build_number"], r["subdir"], r["fn"], r["url"], r["link"]["source"], ",".join(sorted(r["files"])))' P)"
check_eq "pip installed the locked versions" "elkit-alpha==1.0 elkit-beta==2.0.1" "$(pip_elkit B)"

# what was restored, saved again, against the lock
"$ENVLOCK" save -q --conda-prefix "$PWD/P" --python "$PWD/B/bin/python" -o N.lock 2>/dev/null
"$ENVLOCK" diff L.lock N.lock --json >diff.json
st=$?
"$ENVLOCK" diff L.lock N.lock >diff.txt
check_status "diff of the lock and the restored machine: differences (the prefixes)" 1 $st
check_grep "nothing breaking, nothing risky" "^0 breaking, 0 risky, " diff.txt
# the conda records carry the lock's channel and url (the packages' origin)
# and the archives' md5 and sha256, so diff counts them the same packages
check_eq "no package difference: only the two prefixes" \
	"python prefix $scratch/A -> $scratch/B
conda prefix $scratch/S/env -> $scratch/P" \
	"$("$PYTHON" -c 'import json,sys
for d in json.load(open(sys.argv[1]))["differences"]:
    print(d["section"], d["key"], d.get("a") or "", "->", d.get("b") or "")' diff.json)"
"$ENVLOCK" diff --all L.lock N.lock --json >all.json
check_eq "diff --all: each conda package listed as the same" "same same" \
	"$("$PYTHON" -c 'import json,sys
print(" ".join(d["change"] for d in json.load(open(sys.argv[1]))["differences"] if d["section"] == "conda" and d["key"].startswith("elconda")))' all.json)"
restore L.lock KIT P B --dry-run >again 2>&1
check_status "a second run: nothing to do" 0 $?
check_grep "the environment as locked" "ok      conda environment $scratch/P: 2 packages as locked" again

# a kit in a folder whose name needs escaping in a URL
cp -R KIT "K S%"
restore L.lock "K S%" P3 B --only conda --yes >out 2>err
check_status "a kit folder named 'K S%'" 0 $?
check_eq "its archives linked from there" \
	"$scratch/K S%/conda/elconda-lib-2.1.3-h4d5e6f_1.conda" \
	"$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["link"]["source"])' P3/conda-meta/elconda-lib-2.1.3-h4d5e6f_1.json)"

# --- refused before anything runs ---------------------------------------------
/usr/bin/python3 -m venv C
# refused WHAT PATTERN KIT [LOCK]: restore exits 2 with one line on stderr matching PATTERN, nothing ran
refused_kit() {
	restore "${4:-L.lock}" "$3" Q C --yes >out 2>err
	check_status "$1: refused" 2 $?
	check_eq "$1: one line" "1" "$(wc -l <err | tr -d ' ')"
	check_grep "$1: naming what differs" "$2" err
	check_eq "$1: nothing ran, nothing installed" "no prefix, no staging folder, no pip install" \
		"$([ -e Q ] && echo "prefix made" || echo "no prefix"), $(ls -a | grep -q '\.envlock-link\.' && echo "staging folder" || echo "no staging folder"), $([ -n "$(pip_elkit C)" ] && echo "pip installed" || echo "no pip install")"
}
cp -R KIT T1
"$PYTHON" - T1/conda/elconda-tool-1.0-h1a2b3c_0.tar.bz2 <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x01
open(p, "wb").write(b)
EOF
refused_kit "one byte of a conda archive changed" \
	"^envlock: restore: 'L.lock': kit 'T1/conda/elconda-tool-1.0-h1a2b3c_0.tar.bz2': sha256 [0-9a-f]\{64\}, the manifest says $(sha256sum KIT/conda/elconda-tool-1.0-h1a2b3c_0.tar.bz2 | cut -d' ' -f1)$" T1

# what the steps that run do not use is not read: the pip step alone with
# that kit reads no conda archive (strace: not one open of T1/conda/), and
# installs from the wheels, checked
rm -rf B5 && /usr/bin/python3 -m venv B5
if command -v strace >/dev/null 2>&1; then
	# LeakSanitizer cannot run under ptrace (make asan): leaks are checked by the runs without strace
	offline env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=open,openat -o t1.trace "$ENVLOCK" restore L.lock --kit T1 --only pip \
		--python "$PWD/B5/bin/python" --state-dir "$PWD/state" --yes >out 2>err
	check_status "--only pip with a tampered conda archive: the pip step runs" 0 $?
	check_eq "and no conda archive of the kit was opened" "0" "$(grep -c 'T1/conda/' t1.trace)"
	check_eq "but each wheel was" "elkit_alpha-1.0-py3-none-any.whl elkit_beta-2.0.1-py3-none-any.whl" \
		"$(sed -n 's|.*T1/wheels/\([^"]*\.whl\)", O_RDONLY.*|\1|p' t1.trace | sort -u | tr '\n' ' ' | sed 's/ $//')"
else
	skip "--only pip reads no conda archive" "no strace here"
fi
check_eq "pip installed from the kit" "elkit-alpha==1.0 elkit-beta==2.0.1" "$(pip_elkit B5)"
restore L.lock T1 P6 B5 --only conda --dry-run >out 2>err
check_status "--only conda with that kit: refused" 2 $?

cp -R KIT T2
printf 'x' >>T2/wheels/elkit_beta-2.0.1-py3-none-any.whl
refused_kit "a wheel grown by a byte" "kit 'T2/wheels/elkit_beta-2.0.1-py3-none-any.whl': $(($(wc -c <KIT/wheels/elkit_beta-2.0.1-py3-none-any.whl) + 1)) bytes, the manifest says $(wc -c <KIT/wheels/elkit_beta-2.0.1-py3-none-any.whl | tr -d ' ')$" T2

# an archive consistent with its manifest, but not the one the lock recorded
mkdir other && "$PYTHON" - S/archives/elconda-tool-1.0-h1a2b3c_0.tar.bz2 other <<'EOF'
import bz2, sys
# the same archive, compressed again at another level: other bytes, same files
data = bz2.decompress(open(sys.argv[1], "rb").read())
open(sys.argv[2] + "/elconda-tool-1.0-h1a2b3c_0.tar.bz2", "wb").write(bz2.compress(data, 1))
EOF
cp S/archives/elconda-lib-2.1.3-h4d5e6f_1.conda other/
"$PYTHON" "$MKKIT" kit L.lock other S/wheels T3
refused_kit "an archive the manifest agrees with, but not the lock's" \
	"kit 'T3/conda/elconda-tool-1.0-h1a2b3c_0.tar.bz2': sha256 [0-9a-f]\{64\}, the lock's elconda-tool 1.0 h1a2b3c_0 has $(sha256sum KIT/conda/elconda-tool-1.0-h1a2b3c_0.tar.bz2 | cut -d' ' -f1)$" T3

# a kit for another lock
"$ENVLOCK" save -q --python "$PWD/A/bin/python" -o other.lock 2>/dev/null
refused_kit "a kit for another lock" \
	"kit 'KIT': it is a kit for the lock $(jget L.lock id), not for $(jget other.lock id) (the lock given)$" KIT other.lock

# edit_manifest KIT PYTHON-STATEMENT: change the manifest m (and its items) in place
edit_manifest() {
	cp -R KIT "$1"
	"$PYTHON" - "$1/envlock.kit.json" "$2" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(m, open(sys.argv[1], "w"), indent=2)
EOF
}
edit_manifest T4 'm["items"][1]["path"] = "conda/../envlock.lock"'
refused_kit "a manifest path with .." "kit 'T4/envlock.kit.json': the manifest's items\[1\]: path 'conda/../envlock.lock': " T4
edit_manifest T5 'm["items"][0]["path"] = "/etc/passwd"'
refused_kit "an absolute manifest path" "kit 'T5/envlock.kit.json': the manifest's items\[0\]: path '/etc/passwd': " T5
edit_manifest T6 'm["items"][2]["path"] = "wheels/sub/x.whl"'
refused_kit "a path below its kind's folder" "path 'wheels/sub/x.whl': a wheel item is one file name under wheels/$" T6
edit_manifest T7 'm["items"][0]["kind"] = "script"'
refused_kit "a kind that is none of the three" "items\[0\]: kind 'script' is none of conda, wheel, file$" T7
edit_manifest T15 'm["items"][0]["kind"] = "\x1b[2J\u202ehostile"'
refused_kit "a kind with terminal controls in it" "items\[0\]: kind '.*hostile' is none of conda, wheel, file$" T15
check_eq "... shown escaped: nothing raw reaches the terminal" clean "$(clean err)"
cp -R KIT T8
mv T8/wheels/elkit_alpha-1.0-py3-none-any.whl T8/alpha.whl && ln -s ../alpha.whl T8/wheels/elkit_alpha-1.0-py3-none-any.whl
refused_kit "a kit file that is a link" "kit 'T8/wheels/elkit_alpha-1.0-py3-none-any.whl': not a regular file (a link or a folder)$" T8
edit_manifest T9 'm["items"][3]["name"] = "elkit-gamma"'
refused_kit "a wheel the manifest names otherwise" "the manifest says elkit-gamma 2.0.1, the file name elkit_beta 2.0.1$" T9
edit_manifest T16 'import hashlib, os
w = m["items"][2]
os.rename("T16/" + w["path"], "T16/wheels/elkit_alpha-1.1-py3-none-any.whl")
w.update(path="wheels/elkit_alpha-1.1-py3-none-any.whl", version="1.1")'
refused_kit "a wheel of another version than the lock's" \
	"kit 'T16/wheels/elkit_alpha-1.1-py3-none-any.whl': version 1.1, the lock has elkit-alpha 1.0$" T16
cp -R KIT T17 && echo ' ' >>T17/envlock.lock
refused_kit "the kit's copy of the lock changed" "kit 'T17/envlock.lock': sha256 [0-9a-f]\{64\}, the manifest says $(sha256sum L.lock | cut -d' ' -f1)$" T17
cp -R KIT T10 && printf '{"format": "envlock-kit", "version": 1, "lock": ' >T10/envlock.kit.json &&
	head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >>T10/envlock.kit.json
refused_kit "a manifest over the size limit" "kit 'T10/envlock.kit.json': larger than 16 MiB$" T10

# --- what the kit does not have -------------------------------------------------
edit_manifest T11 'w = m["items"].pop(3); m["missing"].append({"kind": "wheel", "name": "elkit_beta", "version": "2.0.1", "reason": "no wheel in the caches", "fetch": "pip download --no-deps elkit_beta==2.0.1"})'
rm T11/wheels/elkit_beta-2.0.1-py3-none-any.whl
restore L.lock T11 Q C --dry-run >out 2>err
check_status "a wheel missing from the kit: manual" 1 $?
check_grep "naming it, and the kit's words on how to fetch it" \
	"manual  pip: 1 distribution is not in the kit T11$" out
check_grep "... the fetch command" "-> elkit-beta 2.0.1 (no wheel in the caches; fetch: pip download --no-deps elkit_beta==2.0.1)" out
check_grep "the rest still from the kit" "do      pip install 1 pinned distribution into $scratch/C/bin/python (hash-checked)" out

# --- a .tar.zst kit, as the bundle writer makes it ---------------------------------
"$ENVLOCK" bundle KIT -o kit.tar.zst --lock L.lock >/dev/null 2>bundle.err
check_status "the kit as a bundle" 0 $?
/usr/bin/python3 -m venv D
restore L.lock kit.tar.zst P2 D --yes >out 2>err
check_status "restore --kit kit.tar.zst, offline" 0 $?
check_eq "unpacked into the state folder, its one top folder the kit" "KIT" "$(ls state/kit-*/ | grep -v -e envlock.lock.json -e MANIFEST.json)"
check_eq "the same environment as from the folder" "$(cd P/conda-meta && ls)" "$(cd P2/conda-meta && ls)"
check_eq "the same pip distributions" "elkit-alpha==1.0 elkit-beta==2.0.1" "$(pip_elkit D)"
cp -R KIT T12 && "$PYTHON" - T12/conda/elconda-lib-2.1.3-h4d5e6f_1.conda <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[-1] ^= 0x01
open(p, "wb").write(b)
EOF
"$ENVLOCK" bundle T12 -o t12.tar.zst --lock L.lock >/dev/null 2>&1
restore L.lock t12.tar.zst Q C --yes >out 2>err
check_status "a bundled kit with a changed archive: refused" 2 $?
check_grep "naming the file in the archive" "kit 't12.tar.zst/T12/conda/elconda-lib-2.1.3-h4d5e6f_1.conda': sha256 " err

# --- the kit's CUDA runfile and cuDNN archive are the flags' defaults ---------------
# the golden lock's CUDA 10.2 and cuDNN 8.2, which this machine does not have there
seed=$GOLDEN/ubuntu1604-mmdet.lock.json
mkdir empty
"$PYTHON" "$MKKIT" kit "$seed" empty empty T13
mkdir T13/files && printf 'not a real runfile\n' >T13/files/cuda_10.2.89_440.33.01_linux.run &&
	printf 'not a real archive\n' >T13/files/cudnn-10.2-linux-x64-v8.2.1.32.tgz
"$PYTHON" - T13 <<'PY'
import hashlib, json, os, sys
k = sys.argv[1]
m = json.load(open(k + "/envlock.kit.json"))
for role, b in (("cuda-runfile", "cuda_10.2.89_440.33.01_linux.run"), ("cudnn-archive", "cudnn-10.2-linux-x64-v8.2.1.32.tgz")):
    p = "%s/files/%s" % (k, b)
    m["items"].append({"kind": "file", "role": role, "path": "files/" + b, "size": os.path.getsize(p),
                       "sha256": hashlib.sha256(open(p, "rb").read()).hexdigest()})
json.dump(m, open(k + "/envlock.kit.json", "w"), indent=2)
PY
if [ -e /usr/local/cuda-10.2 ]; then
	skip "the kit's CUDA runfile is --cuda-runfile's default" "this machine has /usr/local/cuda-10.2"
else
	"$ENVLOCK" restore "$seed" --kit T13 --only cuda --dry-run >out 2>err
	check_status "the golden lock's CUDA, not here, with the kit's runfile: to do" 1 $?
	check_grep "the kit's runfile installs it" \
		"do      install CUDA 10.2.89 (toolkit only, no driver) into /usr/local/cuda-10.2 from $scratch/T13/files/cuda_10.2.89_440.33.01_linux.run" out
	"$ENVLOCK" restore "$seed" --kit T13 --cuda-runfile "$PWD/T13/files/cudnn-10.2-linux-x64-v8.2.1.32.tgz" --only cuda --dry-run >out 2>err
	check_grep "--cuda-runfile given wins over the kit's" "cudnn-10.2-linux-x64-v8.2.1.32.tgz" out
fi
"$ENVLOCK" restore "$seed" --kit T13 --only conda --only pip --prefix "$PWD/Q" --python "$PWD/C/bin/python" \
	--no-conda --state-dir "$PWD/state" --dry-run >out 2>err
check_status "a kit without the lock's conda packages and wheels: manual" 1 $?
check_grep "conda: how many are missing" \
	"manual  conda environment $scratch/Q: 29 of 29 locked packages are not in the kit T13" out
check_grep "... with the kit's fetch command" "-> _libgcc_mutex 0.1 main (not in the package cache; fetch: curl -LO https://repo.anaconda.com/pkgs/main/linux-64/_libgcc_mutex-0.1-main.conda); " out

# --- mmcv-full ------------------------------------------------------------------------
# a tiny project named mmcv-full whose setup.py writes down the variables it was built with
mkdir -p mm/mmcv-full/mmcv
echo "__version__ = '1.7.5'" >mm/mmcv-full/mmcv/__init__.py
cat >mm/mmcv-full/setup.py <<PY
import os
from setuptools import setup
with open("$scratch/mmcv-build.env", "a") as f:
    for k in ("MMCV_WITH_OPS", "FORCE_CUDA", "CUDA_HOME", "CC", "CXX"):
        f.write("%s=%s\n" % (k, os.environ.get(k, "")))
setup(name="mmcv-full", version="1.7.5", packages=["mmcv"])
PY
mkdir mmwheels mmsdist
/usr/bin/python3 -m pip wheel -q --no-deps --no-build-isolation --no-index -w mmwheels mm/mmcv-full >/dev/null 2>&1
(cd mm/mmcv-full && /usr/bin/python3 setup.py -q sdist -d "$scratch/mmsdist" >/dev/null 2>&1)
rm -f mmcv-build.env
/usr/bin/python3 -m venv MA && MA/bin/python -m pip install -q --no-deps --no-index mmwheels/*.whl S/wheels/*.whl
"$ENVLOCK" save -q --python "$PWD/MA/bin/python" -o mm.lock 2>/dev/null
cp S/wheels/*.whl mmwheels/
"$PYTHON" "$MKKIT" kit mm.lock S/archives mmwheels MK
/usr/bin/python3 -m venv MB
"$ENVLOCK" restore mm.lock --kit MK --only pip --python "$PWD/MB/bin/python" --state-dir "$PWD/state" --dry-run >out 2>err
check_status "mmcv-full with a wheel in the kit: to do" 1 $?
check_grep "the plan shows the kit's wheel used" "mmcv-full 1.7.5 from the kit's wheels/mmcv_full-1.7.5-py3-none-any.whl" out
offline "$ENVLOCK" restore mm.lock --kit MK --only pip --python "$PWD/MB/bin/python" --state-dir "$PWD/state" --yes >out 2>err
check_status "and installs it offline" 0 $?
check_eq "mmcv-full from its wheel: nothing built" "mmcv-full==1.7.5 ," \
	"$(MB/bin/python -m pip list --format=freeze 2>/dev/null | grep '^mmcv') ,$(cat mmcv-build.env 2>/dev/null)"

# no kit, no page of pre-built wheels: a build of its own, its source from the lock's
# find-links (here a folder holding only its sdist), real pip offline
"$PYTHON" - mm.lock mmb.lock "$scratch/mmsdist" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pip"]["distributions"] = [x for x in d["pip"]["distributions"] if x["name"] in ("mmcv-full", "pip", "setuptools")]
for x in d["pip"]["distributions"]:
    x.pop("origin", None)
d["pip"]["index_options"] = [{"option": "find-links", "url": "file://" + sys.argv[3], "from": "/etc/pip.conf"}]
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
tk_home=$(jget mmb.lock cuda.default)
/usr/bin/python3 -m venv MC
"$ENVLOCK" restore mmb.lock --only pip --python "$PWD/MC/bin/python" --state-dir "$PWD/state" --dry-run >out 2>err
check_status "mmcv-full with no wheel and no page: to do" 1 $?
want_env="MMCV_WITH_OPS=1 FORCE_CUDA=1${tk_home:+ CUDA_HOME=$tk_home}"
check_grep "a build item of its own, with its ops and the locked nvcc" \
	"^  do      build mmcv-full 1.7.5 from source with pip: $want_env\$" out
check_grep "the plan shows exactly what runs" \
	"it runs: $want_env $scratch/MC/bin/python -m pip install --no-deps --no-input --disable-pip-version-check --no-build-isolation --no-binary mmcv-full mmcv-full==1.7.5 --find-links file://$scratch/mmsdist" out
offline "$ENVLOCK" restore mmb.lock --only pip --python "$PWD/MC/bin/python" --state-dir "$PWD/state" --yes >out 2>err
check_status "the build, by the real pip, offline" 0 $?
check_eq "mmcv-full installed" "mmcv-full==1.7.5" "$(MC/bin/python -m pip list --format=freeze 2>/dev/null | grep '^mmcv')"
check_eq "its setup.py saw the ops switched on, and the locked toolkit" \
	"MMCV_WITH_OPS=1 FORCE_CUDA=1 CUDA_HOME=${tk_home:-$(printenv CUDA_HOME)}" \
	"$(grep -e MMCV_WITH_OPS -e FORCE_CUDA -e CUDA_HOME mmcv-build.env | sort -u | sort -r | tr '\n' ' ' | sed 's/ $//')"

# with OpenMMLab's page recorded (the golden lock's mmcv-full): binary only, from the page
"$ENVLOCK" restore "$seed" --only pip --python "$PWD/C/bin/python" --dry-run --json >plan.json 2>/dev/null
check_eq "the page: --only-binary mmcv-full, and no build item" "--only-binary mmcv-full, builds: 0" \
	"$("$PYTHON" -c 'import json,sys
items = [i for s in json.load(open(sys.argv[1]))["steps"] for i in s["items"]]
a = [i["argv"] for i in items if "pinned" in i["what"]][0]
k = a.index("--only-binary")
print("%s %s, builds: %d" % (a[k], a[k + 1], sum("build mmcv" in i["what"] for i in items)))' plan.json)"

# CC and CXX: a gcc that is too new for the locked nvcc, and a gcc-N that fits, installed.
# compilers.c finds a gcc-N from /usr/lib/gcc/<triplet>/N and /usr/bin/gcc-N (and g++-N)
# under the root, never from PATH: a wrapper in PATH cannot fake one, so this is planned
# against a fixture tree (as t0026 does), the golden lock's CUDA 10.2 taking gcc up to N
if [ -d "$FIXTURES/no-nvidia" ]; then
	N=$("$PYTHON" -c 'import json, sys
t = json.load(open(sys.argv[1]))["rows"]
print(next(r["max_gcc"] for r in t if r["cuda"] == "10.2"))' "$top/knowledge/nvidia/nvcc_gcc.json")
	cp -a "$FIXTURES/no-nvidia" fit
	mkdir -p "fit/usr/lib/gcc/x86_64-linux-gnu/$N" fit/opt/py/bin
	printf '#!/bin/sh\n' >"fit/usr/bin/gcc-$N" && cp "fit/usr/bin/gcc-$N" "fit/usr/bin/g++-$N" &&
		cp "fit/usr/bin/gcc-$N" fit/opt/py/bin/python3.7
	chmod 755 "fit/usr/bin/gcc-$N" "fit/usr/bin/g++-$N" fit/opt/py/bin/python3.7
	"$PYTHON" - "$seed" nopage.lock <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for x in d["pip"]["distributions"]:
    if x["name"] == "mmcv-full":
        x.pop("origin", None)
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
	"$ENVLOCK" restore nopage.lock --root fit --only pip --python /opt/py/bin/python3.7 --dry-run >out 2>err
	check_grep "the build item names the gcc-$N that fits" \
		"build mmcv-full 1.7.5 from source with pip: MMCV_WITH_OPS=1 FORCE_CUDA=1 CUDA_HOME=/usr/local/cuda-10.2 CC=gcc-$N CXX=g++-$N$" out
	rm "fit/usr/bin/g++-$N"
	"$ENVLOCK" restore nopage.lock --root fit --only pip --python /opt/py/bin/python3.7 --dry-run >out 2>err
	check_grep "without its g++-$N: no CC" \
		"build mmcv-full 1.7.5 from source with pip: MMCV_WITH_OPS=1 FORCE_CUDA=1 CUDA_HOME=/usr/local/cuda-10.2$" out
else
	skip "the build item names the gcc-N that fits" "no fixture roots (make fixtures)"
fi

# --- under --root: envlock links the kit's archives into the tree from here ------------
# (with --chroot too: only noarch python's .pyc need the tree's python, and
# this environment has none). chroot_tree ends the suite with a skip where no
# tree can be chroot'ed into: last.
# the lock of an environment of the .tar.bz2 package alone (saved, so its id is its content's)
mkdir -p S1/env/conda-meta && cp -R S/env/bin S/env/share S1/env/ && cp S/env/conda-meta/elconda-tool-* S1/env/conda-meta/
"$ENVLOCK" save -q --conda-prefix "$PWD/S1/env" --python "$PWD/A/bin/python" -o one.lock 2>/dev/null
"$PYTHON" "$MKKIT" kit one.lock S/archives S/wheels KC
chroot_tree R
offline "$ENVLOCK" restore one.lock --kit KC --root R --chroot --only conda \
	--no-conda --prefix /opt/env --state-dir "$PWD/cstate" --yes >out 2>err
check_status "restore --kit --root --chroot --no-conda: linked into the tree" 0 $?
check_eq "the record: the lock's url, the tree's prefix nowhere but where it is" \
	"$(jget one.lock conda.packages.0.url)" \
	"$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' R/opt/env/conda-meta/elconda-tool-1.0-h1a2b3c_0.json)"
check_eq "its files in the environment in the tree" "a tool" "$(cat R/opt/env/share/elconda-tool/README)"
check_eq "nothing put into the tree's /tmp" "" "$(ls -A R/tmp 2>/dev/null)"

# and pip inside the tree: the kit's wheels put into the tree's /tmp for it (the pip
# stand-in there checks each wheel's hash against the requirements file, as pip does)
mkdir -p R/opt/py/bin R/opt/py/lib/python3.7/site-packages && ln -s /opt/envlock-test/standin.py R/opt/py/bin/python3.7
STANDIN_LOG=/standin.log STANDIN_FORBID=$scratch offline "$ENVLOCK" restore L.lock --kit KIT --root R --chroot --only pip \
	--python /opt/py/bin/python3.7 --state-dir "$PWD/cstate" --yes >out 2>err
check_status "pip inside the tree: the kit's two wheels done, pip and setuptools not in the kit (manual)" 1 $?
check_grep "pip ran inside the tree" "done    pip install 2 pinned distributions into /opt/py/bin/python3.7 (hash-checked), inside the tree (chroot)" out
check_eq "pip got the wheels where the kit was put in the tree" \
	"--find-links /tmp/envlock-restore-$(jget L.lock id | cut -c8-19).kit/wheels -r" \
	"$(tail -n 1 R/standin.log | "$PYTHON" -c 'import json,sys; a=json.load(sys.stdin); i=a.index("--find-links"); print(" ".join(a[i:i+3]))')"
check_eq "both wheels unpacked into the tree's site-packages" "elkit_alpha elkit_beta" \
	"$(cd R/opt/py/lib/python3.7/site-packages && ls -d elkit_alpha elkit_beta | tr '\n' ' ' | sed 's/ $//')"
check_eq "and the kit's files taken out of the tree's /tmp again" "" "$(ls -A R/tmp)"
