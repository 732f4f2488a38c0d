#!/bin/sh
# envlock restore's compilers step: the golden Ubuntu 16.04 lock (CUDA
# 10.2, whose nvcc takes gcc up to N, N read here from the rules file)
# against fixture machines. A gcc that is too new is "manual" with the
# commands for the machine's OS and the N of the rules table; an installed
# gcc-N that fits is named before one to install; a gcc that fits is ok;
# no toolkit with nvcc in the lock is ok, with a note.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
lock=$GOLDEN/ubuntu1604-mmdet.lock.json
# the lock's default toolkit, its release, and the table's limit for it
cuda=$("$PYTHON" -c "
import json, sys
c = json.load(open(sys.argv[1]))['cuda']
print(next(t['version'] for t in c['toolkits'] if t['home'] == c['default']))" "$lock")
rel=$(echo "$cuda" | cut -d. -f1-2)
N=$("$PYTHON" -c 'import json, sys
t = json.load(open(sys.argv[1]))["rows"]
print(next(r["max_gcc"] for r in t if r["cuda"] == sys.argv[2]))' "$top/knowledge/nvidia/nvcc_gcc.json" "$rel")
check_eq "the lock's default toolkit is CUDA 10.2 (with nvcc)" "10.2 True" \
	"$rel $("$PYTHON" -c "
import json, sys
c = json.load(open(sys.argv[1]))['cuda']
print(next('nvcc' in t for t in c['toolkits'] if t['home'] == c['default']))" "$lock")"

# plan ROOT: the compilers step alone, as text (out) and as JSON (plan.json); its status in $st
plan() {
	"$ENVLOCK" restore "$lock" --root "$1" --only compilers --dry-run >out 2>err
	st=$?
	"$ENVLOCK" restore "$lock" --root "$1" --only compilers --dry-run --json >plan.json 2>>err
}
# field state|what|note: of the compilers step's one item
field() {
	"$PYTHON" -c "
import json, sys
s = [s for s in json.load(open('plan.json'))['steps'] if s['step'] == 'compilers'][0]
print(len(s['items']) == 1 and s['items'][0].get(sys.argv[1]) or '(%d items)' % len(s['items']))" "$1"
}

# --- Debian 12 with gcc 12: too new for CUDA 10.2's nvcc ---------------------
nn=$FIXTURES/no-nvidia
"$ENVLOCK" save -q --root "$nn" -o nn.lock 2>/dev/null
gcc=$(jget nn.lock compilers.default.version)
check_eq "the fixture's default gcc is newer than nvcc of CUDA $rel takes ($N)" "yes" \
	"$([ "$(echo "$gcc" | cut -d. -f1)" -gt "$N" ] && echo yes || echo "no: $gcc")"
plan "$nn"
check_status "a gcc too new: manual" 1 "$st"
check_eq "it says why, with the rule's words and the table's N" \
	"gcc $gcc / nvcc $rel: nvcc of CUDA $rel accepts gcc up to $N, but the default gcc is $gcc: nvcc stops with \"unsupported GNU version\"" \
	"$(field what)"
check_eq "the exact commands for Debian, with N = $N" \
	"as root: apt-get install gcc-$N g++-$N, then update-alternatives --install /usr/bin/gcc gcc /usr/bin/gcc-$N 100 --slave /usr/bin/g++ g++ /usr/bin/g++-$N; or leave the default and build mmcv's ops with CC=gcc-$N CXX=g++-$N (nvcc: -ccbin g++-$N); any gcc up to $N works (rule gcc-too-new-for-nvcc)" \
	"$(field note)"
check_eq "nothing to run: envlock never installs a compiler" "manual" "$(field state)"
check_grep "the text plan names the step" "^compilers    manual$" out

# --- the same machine with a gcc-N that fits installed beside it -------------
cp -a "$nn" fit
mkdir -p "fit/usr/lib/gcc/x86_64-linux-gnu/$N"
printf '#!/bin/sh\n' >"fit/usr/bin/gcc-$N"
chmod 755 "fit/usr/bin/gcc-$N"
plan fit
check_status "a fitting gcc-$N without its g++: still manual" 1 "$st"
check_grep "... and gcc-$N is not offered alone: install both" "as root: apt-get install gcc-$N g++-$N, then" out
cp "fit/usr/bin/gcc-$N" "fit/usr/bin/g++-$N"
plan fit
check_status "gcc-$N and g++-$N installed, the default still too new: manual" 1 "$st"
check_eq "use the installed one rather than install one" \
	"gcc-$N is installed and nvcc of CUDA $rel accepts it: use it rather than install one: as root, update-alternatives --install /usr/bin/gcc gcc /usr/bin/gcc-$N 100 --slave /usr/bin/g++ g++ /usr/bin/g++-$N; or leave the default and build mmcv's ops with CC=gcc-$N CXX=g++-$N (nvcc: -ccbin g++-$N) (rule gcc-too-new-for-nvcc)" \
	"$(field note)"

# --- not Debian: no apt-get ---------------------------------------------------
cp -a "$nn" fedora
rm -f fedora/etc/os-release fedora/usr/lib/os-release
printf 'NAME="Fedora Linux"\nID=fedora\nVERSION_ID=39\n' >fedora/usr/lib/os-release
ln -s ../usr/lib/os-release fedora/etc/os-release
plan fedora
check_status "Fedora with gcc 12: manual" 1 "$st"
check_eq "what to install and how to build with it, no apt-get" \
	"install gcc and g++ $N or older (nvcc of CUDA $rel accepts up to $N) from your distribution, then build mmcv's ops with CC=<that gcc> CXX=<its g++> (nvcc: -ccbin <its g++>) (rule gcc-too-new-for-nvcc)" \
	"$(field note)"

# --- a gcc that fits ------------------------------------------------------------
old=$FIXTURES/cuda92-cudnn7
"$ENVLOCK" save -q --root "$old" -o old.lock 2>/dev/null
ogcc=$(jget old.lock compilers.default.version)
check_eq "the older desktop's gcc $ogcc is one nvcc of CUDA $rel takes" "yes" \
	"$([ "$(echo "$ogcc" | cut -d. -f1)" -le "$N" ] && echo yes || echo no)"
plan "$old"
check_status "a gcc that fits: ok" 0 "$st"
check_eq "it says so, with the limit" "ok: gcc $ogcc: nvcc of CUDA $rel accepts gcc up to $N" "$(field state): $(field what)"

# --- no gcc at all --------------------------------------------------------------
mkdir empty
plan empty
check_status "no gcc: manual" 1 "$st"
check_eq "it says nvcc needs one" "no default gcc here: nvcc of CUDA $rel needs a host gcc up to $N" "$(field what)"

# --- no toolkit with nvcc locked ------------------------------------------------
"$ENVLOCK" restore "$GOLDEN/no-nvidia.lock.json" --root "$nn" --only compilers --dry-run --json >plan.json 2>err
check_status "no CUDA toolkit in the lock: ok" 0 $?
check_eq "ok, saying there is nothing to check" \
	"ok: no CUDA toolkit with nvcc locked (nvcc's limit on the host gcc does not apply: the gcc here is not checked)" \
	"$(field state): $(field what) ($(field note))"

# --- a release the table does not know ---------------------------------------------
"$PYTHON" - "$lock" unknown.lock <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cuda"]
for t in c["toolkits"]:
    if t["home"] == c["default"]:
        t["version"] = "9.9.0"
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" restore unknown.lock --root "$nn" --only compilers --dry-run --json >plan.json 2>err
check_status "a CUDA release with no row in the table: ok" 0 $?
check_eq "ok, saying it is not checked" "ok: nvcc of CUDA 9.9.0: the rules give no gcc limit for it" "$(field state): $(field what)"
