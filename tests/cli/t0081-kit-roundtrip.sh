#!/bin/sh
# The whole offline round trip (issue 15): envlock pack of a real
# environment, then envlock restore --kit of that kit with no network, then
# diff of the restored machine against the lock. The environment is
# tests/pack/mkseed.py's: a conda install with real .tar.bz2 and .conda
# archives in its package cache, distributions installed by Debian's real
# pip, whose wheel and HTTP caches that pip filled (one distribution has no
# wheel anywhere, so pack rebuilds it from its RECORD). pip is the real one
# in venvs made by python3 -m venv. There is no conda: envlock links the
# kit's archives itself (--no-conda, and no conda on PATH). The restores
# run under unshare -n (a loopback only).
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
setup_or_skip "tests/pack/mkseed.py built the environment" "the pack → restore --kit round trip" \
	"$PYTHON" "$top/tests/pack/mkseed.py" "$scratch/seed"
seed=$scratch/seed
unset CONDA_PKGS_DIRS PIP_CACHE_DIR PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
rm -rf "$XDG_CACHE_HOME/pip" && mkdir -p "$XDG_CACHE_HOME" && cp -R "$seed/pipcache" "$XDG_CACHE_HOME/pip"

if unshare -n true 2>/dev/null; then
	offline() { unshare -n "$@"; }
	check_eq "the restores run with no network: no interface but the loopback" "lo" \
		"$(unshare -n sed -n '3,$s/^ *\([^:]*\):.*/\1/p' /proc/net/dev | tr '\n' ' ' | sed 's/ $//')"
else
	offline() { "$@"; }
	skip "the restores run with no network" "unshare -n fails here (needs root or user namespaces): they run with this machine's network"
fi

# the machine before: save its lock, pack its kit (a folder, and a .tar.zst)
"$ENVLOCK" save -q --conda-prefix "$seed/env" --python "$seed/env/bin/python" -o L.lock 2>save.err
check_status "save of the environment" 0 $?
"$ENVLOCK" pack L.lock -o KIT --wheels "$seed/wheels" >pack.out 2>pack.err
check_status "pack: everything found (exit 0)" 0 $?
check_eq "pack: an item for each conda package and each pip distribution but the editable one" \
	"$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["conda"]["packages"]) + sum(1 for x in d["pip"]["distributions"] if not x["editable"]))' L.lock)" \
	"$("$PYTHON" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(sum(1 for i in m["items"] if i["kind"] in ("conda", "wheel")))' KIT/envlock.kit.json)"
check_eq "pack: the wheels no cache has, rebuilt from their RECORD" "elpk-gamma elpk-zeta" \
	"$("$PYTHON" -c 'import json,sys; print(" ".join(sorted(i["name"] for i in json.load(open(sys.argv[1]))["items"] if i.get("from") == "rebuilt")))' KIT/envlock.kit.json)"
"$ENVLOCK" pack L.lock -o kit.tar.zst --wheels "$seed/wheels" >/dev/null 2>&1
check_status "pack -o kit.tar.zst" 0 $?

# the machine after a reinstall: no environment, no caches, no network
rm -rf "$XDG_CACHE_HOME/pip" "$seed/pipcache" "$seed/wheels" "$seed/env/pkgs"
for kit in KIT kit.tar.zst; do
	rm -rf P B state N.lock
	/usr/bin/python3 -m venv B
	offline env PATH=/usr/bin:/bin "$ENVLOCK" restore L.lock --kit "$PWD/$kit" --prefix "$PWD/P" --python "$PWD/B/bin/python" \
		--no-conda --state-dir "$PWD/state" --skip verify --skip repos --yes >out 2>err
	st=$?
	check_status "$kit: restore --kit, offline" 0 $st
	[ $st = 0 ] || { sed 's/^/#   /' out err | head -n 40; continue; }
	check_grep "$kit: conda from the kit's archives" "^  done    create conda environment $scratch/P with envlock (3 packages, offline" out
	check_eq "$kit: each conda package's files, as the locked environment has them" "same" \
		"$("$PYTHON" -c 'import filecmp, glob, json, os, sys
def files(prefix):
    return {json.load(open(f))["name"]: json.load(open(f))["files"] for f in glob.glob(prefix + "/conda-meta/*.json")}
a, b = files(sys.argv[1]), files(sys.argv[2])
bad = [n for n in a if a[n] != b.get(n) or not a[n] or
       not all(filecmp.cmp(os.path.join(sys.argv[1], f), os.path.join(sys.argv[2], f), shallow=False) for f in a[n])]
print("differ: %s %s" % (bad, b) if bad or set(a) != set(b) else "same")' "$seed/env" P)"
	check_grep "$kit: pip hash-checked from the kit" "^  done    pip install .* into $scratch/B/bin/python (hash-checked)" out
	"$ENVLOCK" save -q --conda-prefix "$PWD/P" --python "$PWD/B/bin/python" -o N.lock 2>/dev/null
	"$ENVLOCK" diff L.lock N.lock --json >diff.json
	"$ENVLOCK" diff L.lock N.lock >diff.txt
	check_grep "$kit: diff: nothing breaking, nothing risky" "^0 breaking, 0 risky, " diff.txt
	# every locked package is there as locked; what differs is where it went
	# (the prefix and venv given to restore: another place, another kind and
	# env name) and the pip and setuptools that python3 -m venv put into the
	# new venv, which the locked environment (a venv made --without-pip) lacks
	check_eq "$kit: diff: no locked conda or pip package differs" \
		"conda env base -> 
conda prefix $seed/env -> $scratch/P
pip pip  -> $(B/bin/python -c 'import importlib.metadata as m; print(m.version("pip"))')
pip setuptools  -> $(B/bin/python -c 'import importlib.metadata as m; print(m.version("setuptools"))')
python kind conda -> venv
python prefix $seed/env -> $scratch/B" \
		"$("$PYTHON" -c 'import json,sys
print("\n".join(sorted("%s %s %s -> %s" % (d["section"], d["key"], d.get("a") or "", d.get("b") or "") for d in json.load(open(sys.argv[1]))["differences"])))' diff.json)"
	check_eq "$kit: pip list of the restored venv: the lock's distributions" \
		"$("$PYTHON" -c 'import json,sys; print(" ".join(sorted("%s==%s" % (x["name"].lower(), x["version"]) for x in json.load(open(sys.argv[1]))["pip"]["distributions"])))' L.lock)" \
		"$(B/bin/python -m pip list --format=freeze 2>/dev/null | tr 'A-Z' 'a-z' | grep -v -e '^pip==' -e '^setuptools==' | sort | tr '\n' ' ' | sed 's/ $//')"
done
