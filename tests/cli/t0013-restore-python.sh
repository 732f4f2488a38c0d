#!/bin/sh
# envlock restore, pip and conda steps: pip for real (wheels built here,
# venvs made with python3 -m venv, the real pip installing with hashes);
# conda through a stand-in (tests/restore/standin.py: no conda can be
# installed on this kind of machine) that checks the explicit spec
# strictly; an apply killed in the middle, then run again.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
STANDIN=$top/tests/restore/standin.py
chmod +x "$STANDIN" 2>/dev/null

# --- pip, for real -----------------------------------------------------
mkdir wheels
"$PYTHON" - wheels <<'EOF'
import base64, hashlib, sys, zipfile
def wheel(name, ver, dest, extra=""):
    esc = name.replace("-", "_")  # PEP 427: the file and dist-info names escape '-'
    dist = "%s-%s.dist-info" % (esc, ver)
    files = {"%s/__init__.py" % esc: "VERSION = '%s'\n%s" % (ver, extra),
             dist + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver),
             dist + "/WHEEL": "Wheel-Version: 1.0\nGenerator: envlock-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    rec = ""
    for k, v in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode()
        rec += "%s,sha256=%s,%d\n" % (k, h, len(v))
    files[dist + "/RECORD"] = rec + dist + "/RECORD,,\n"
    with zipfile.ZipFile("%s/%s-%s-py3-none-any.whl" % (dest, esc, ver), "w") as z:
        for k, v in files.items():
            z.writestr(zipfile.ZipInfo(k, (2020, 1, 1, 0, 0, 0)), v)
wheel("elpkg_alpha", "1.0", sys.argv[1])
wheel("elpkg-beta", "2.0.1", sys.argv[1])
EOF
VENV_PY=$(command -v python3)
if ! "$VENV_PY" -m venv A >venv.err 2>&1 || ! A/bin/python -m pip --version >/dev/null 2>&1; then
	skip "pip restore into a venv" "python3 -m venv with pip is not available here ($(head -n 1 venv.err))"
else
	A/bin/python -m pip install -q --no-deps --no-index wheels/*.whl
	"$ENVLOCK" save --python "$PWD/A/bin/python" -o A.lock 2>/dev/null
	check_eq "the lock has the wheel's hash (pip's direct_url.json)" \
		"sha256=$(sha256sum wheels/elpkg_alpha-1.0-py3-none-any.whl | cut -d' ' -f1)" \
		"$("$PYTHON" -c "import json,sys; d=[x for x in json.load(open('A.lock'))['pip']['distributions'] if x['name']=='elpkg_alpha'][0]; print(d['direct_url']['archive_hash'])")"
	"$VENV_PY" -m venv B
	"$ENVLOCK" restore A.lock --python "$PWD/B/bin/python" --only pip --wheels wheels --yes >out 2>err
	check_status "pip restore into a fresh venv" 0 $?
	check_grep "hash-checked install" "done    pip install 2 pinned distributions into $PWD/B/bin/python (hash-checked)" out
	check_eq "both installed at the locked versions" "elpkg-beta==2.0.1 elpkg_alpha==1.0" \
		"$(B/bin/python -m pip list --format=freeze 2>/dev/null | grep elpkg | sort | tr '\n' ' ' | sed 's/ $//')"
	check_grep "pip ran with exact pins, no deps, the hashes and no index" "'--no-deps'.*'--require-hashes' '--no-index' '--find-links' 'wheels'" .envlock/restore-*.log
	check_eq "nothing went into the Python the venv points to" "" "$("$VENV_PY" -m pip list --format=freeze 2>/dev/null | grep elpkg)"
	"$ENVLOCK" restore A.lock --python "$PWD/B/bin/python" --only pip --wheels wheels --dry-run >again
	check_status "second run: nothing to do" 0 $?
	# no --python: the venv the lock names, and the comparison afterwards
	# reads that venv's Python, not the first python3 on PATH
	A/bin/python -m pip uninstall -q -y elpkg-beta
	"$ENVLOCK" restore A.lock --only pip --wheels wheels --yes >out 2>err
	check_status "pip restore into the locked venv" 0 $?
	check_grep "the missing one went back into the locked venv" "done    pip install 1 pinned distribution into $PWD/A/bin/python" out
	check_eq "a restore that matches the lock says so" "this machine against the lock: identical" "$(tail -n 1 out)"
	check_eq "and lists nothing as still different" "" "$(grep 'Still different' out)"

	# a venv without pip of its own: the pip of a python3 on PATH installs into it
	# (pip --python, pip 22.3 and later), else uv, else one line saying so
	"$VENV_PY" -m venv --without-pip NP
	mkdir -p pybin uvbin nobin
	ln -s "$VENV_PY" pybin/python3
	if ! pv=$("$VENV_PY" -m pip --version 2>/dev/null) || [ "$(printf '%s\n' "$pv" | cut -d' ' -f2 | awk -F. '{ print ($1 > 22 || ($1 == 22 && $2 >= 3)) }')" != 1 ]; then
		skip "a venv without pip" "$VENV_PY has no pip 22.3 or later (pip --python): ${pv:-no pip}"
	else
		# the locked environment had no pip either (as a uv venv has none)
		"$VENV_PY" -m venv --without-pip NA
		"$VENV_PY" -m pip --python "$PWD/NA/bin/python" install -q --no-deps --no-index wheels/*.whl
		"$ENVLOCK" save --python "$PWD/NA/bin/python" -o NA.lock 2>/dev/null
		check_eq "its lock has the two distributions and no pip" "elpkg-beta elpkg_alpha" \
			"$("$PYTHON" -c "import json; print(' '.join(sorted(d['name'] for d in json.load(open('NA.lock'))['pip']['distributions'])))")"
		PATH="$scratch/pybin:$PATH" "$ENVLOCK" restore NA.lock --python "$PWD/NP/bin/python" --only pip --wheels wheels --yes >out 2>err
		check_status "pip restore into a venv made --without-pip" 0 $?
		check_eq "both installed, by the other python's pip" "elpkg-beta==2.0.1 elpkg_alpha==1.0" \
			"$(PATH="$scratch/pybin:$PATH" python3 -m pip --python "$PWD/NP/bin/python" list --format=freeze 2>/dev/null | grep elpkg | sort | tr '\n' ' ' | sed 's/ $//')"
		check_grep "the log shows pip --python" "'$scratch/pybin/python3' '-m' 'pip' '--python' '$PWD/NP/bin/python' 'install' '--no-deps'" \
			"$(ls -t .envlock/restore-*.log | head -n 1)"
		check_eq "and the venv still has no pip of its own" "" "$(ls NP/lib/python3*/site-packages | grep -x pip)"
	fi
	# uv cannot be installed here (no PyPI): a stand-in that records its arguments, for the plan's command
	printf '#!/bin/sh\necho "$@" >>"%s/uv.args"\n' "$scratch" >uvbin/uv
	chmod +x uvbin/uv
	"$VENV_PY" -m venv --without-pip NU
	PATH="$scratch/uvbin:$scratch/nobin" "$ENVLOCK" restore NA.lock --python "$PWD/NU/bin/python" --only pip --wheels wheels --dry-run --json >uv.json 2>err
	check_eq "no python3 with pip on PATH, uv there: the plan runs uv pip with --python, without pip's own options" \
		"$scratch/uvbin/uv pip install --python $PWD/NU/bin/python --no-deps --require-hashes --no-index --find-links wheels -r .envlock/restore-$(jget NA.lock id | cut -c8-19).requirements.txt" \
		"$("$PYTHON" -c "import json; print(' '.join(' '.join(i['argv']) for s in json.load(open('uv.json'))['steps'] for i in s['items'] if i.get('argv')))")"
	PATH="$scratch/nobin" "$ENVLOCK" restore NA.lock --python "$PWD/NU/bin/python" --only pip --wheels wheels --dry-run >out 2>err
	check_status "neither: the plan has a manual step" 1 $?
	check_grep "one line saying what is missing" "^  manual  pip distributions: $PWD/NU/bin/python has no pip, and there is no other to run for it\$" out
	check_grep "and what to do" "give it one ($PWD/NU/bin/python -m ensurepip), or put uv, or a python3 whose pip is 22.3 or later (pip --python), on PATH" out

	# a wheel that is not the locked file
	mkdir bad && cp wheels/*.whl bad/
	"$PYTHON" - bad <<'EOF'
import sys, zipfile
p = sys.argv[1] + "/elpkg_alpha-1.0-py3-none-any.whl"
with zipfile.ZipFile(p, "a") as z:
    z.writestr("elpkg_alpha/extra.py", "x = 1\n")
EOF
	"$VENV_PY" -m venv C
	"$ENVLOCK" restore A.lock --python "$PWD/C/bin/python" --only pip --wheels bad --yes >out 2>err
	check_status "a wheel with another hash" 1 $?
	check_grep "refused before pip runs, naming the wheel" "elpkg_alpha-1.0-py3-none-any.whl has sha256 .*, the lock recorded" out
	check_eq "nothing installed" "" "$(C/bin/python -m pip list --format=freeze 2>/dev/null | grep elpkg)"
fi

# --- pip, where the lock says the seed stack comes from -----------------------
# The lock's index options go on pip's command line: PyPI has neither torch
# 1.10.0+cu102 nor a wheel of mmcv-full 1.7.5. Stand-in (no network here):
# a mirror laid out like PyTorch's cu102 index and OpenMMLab's page for
# cu102/torch1.10, the origins of a lock of the seed stack pointed at it
# (https://HOST/PATH -> file://$scratch/mirror/HOST/PATH), and an empty
# index for PyPI (a configured index-url) so that pip never reaches for the
# network.
if [ -x A/bin/python ]; then
	export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
	unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
	seed=$GOLDEN/ubuntu1604-mmdet.lock.json
	"$VENV_PY" -m venv R
	"$ENVLOCK" restore "$seed" --python "$PWD/R/bin/python" --only pip --dry-run --json >plan.json 2>/dev/null
	# what pip gets after its requirements file (-r FILE) in the plan's item for the pins
	argv_of() {
		"$PYTHON" - "$1" <<'PY'
import json, sys
items = [i for s in json.load(open(sys.argv[1]))["steps"] for i in s.get("items", []) if "argv" in i and "pinned" in i["what"]]
assert len(items) == 1, items
argv = items[0]["argv"]
print("after -r:", " ".join(argv[argv.index("-r") + 2:]))
PY
	}
	check_eq "the seed lock: pip gets OpenMMLab's page and PyTorch's index after its pins" \
		"after -r: --find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html --extra-index-url https://download.pytorch.org/whl/cu102" \
		"$(argv_of plan.json)"
	"$ENVLOCK" restore "$seed" --python "$PWD/R/bin/python" --only pip --dry-run >plan.txt 2>/dev/null
	check_grep "the plan says they are inferred, and for what" "(inferred for torch, torchvision)" plan.txt
	"$ENVLOCK" restore "$seed" --python "$PWD/R/bin/python" --only pip --wheels wheels --dry-run --json >plan.json 2>/dev/null
	check_eq "--wheels: offline, no index at all but the folder" "after -r: " "$(argv_of plan.json)"
	"$ENVLOCK" restore "$seed" --python "$PWD/R/bin/python" --only pip --wheels wheels --dry-run >plan.txt 2>/dev/null
	check_grep "and the plan says the lock's indexes are not used" "offline (--wheels): not the 2 index options the lock names" plan.txt

	M=$scratch/mirror
	"$PYTHON" "$top/tests/export/mkwheel.py" "$M/download.pytorch.org/whl/cu102" torch==1.10.0+cu102 torchvision==0.11.1+cu102 >/dev/null
	"$PYTHON" "$top/tests/export/mkindex.py" simple "$M/download.pytorch.org/whl/cu102" "$M"/download.pytorch.org/whl/cu102/*.whl
	page=$M/download.openmmlab.com/mmcv/dist/cu102/torch1.10
	"$PYTHON" "$top/tests/export/mkwheel.py" "$page" mmcv-full==1.7.5 >/dev/null
	"$PYTHON" "$top/tests/export/mkindex.py" links "$page/index.html" "$page"/*.whl
	"$PYTHON" "$top/tests/export/mkindex.py" simple "$M/pypi.org/simple"
	"$PYTHON" - "$seed" mirrored.lock "$M" <<'PY'
import json, sys
d, m = json.load(open(sys.argv[1])), sys.argv[3]
# the seed stack's three pip distributions, their origins on the mirror
d["pip"]["distributions"] = [x for x in d["pip"]["distributions"] if x["name"] in ("torch", "torchvision", "mmcv-full")]
for x in d["pip"]["distributions"]:
    if x["name"] == "mmcv-full":
        x["origin"] = {"kind": "inferred", "option": "find-links", "note": "inferred from torch 1.10 and CUDA 10.2",
                       "url": "file://%s/download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html" % m}
    else:
        x["origin"] = {"kind": "inferred", "option": "extra-index-url", "note": "inferred from +cu102",
                       "url": "file://%s/download.pytorch.org/whl/cu102" % m}
d["pip"]["index_options"] = [{"option": "index-url", "url": "file://" + m + "/pypi.org/simple", "from": "/etc/pip.conf"}]
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
	"$ENVLOCK" restore mirrored.lock --python "$PWD/R/bin/python" --only pip --yes >out 2>err
	check_status "pip restore of the seed stack through the mirror" 0 $?
	check_eq "torch, torchvision and mmcv-full at the locked versions" \
		"mmcv-full==1.7.5 torch==1.10.0+cu102 torchvision==0.11.1+cu102" \
		"$(R/bin/python -m pip list --format=freeze 2>/dev/null | grep -e '^torch' -e '^mmcv' | sort | tr '\n' ' ' | sed 's/ $//')"
	check_grep "pip ran with the configured index-url and the origins' index and page" \
		"'--index-url' 'file://$M/pypi.org/simple' '--find-links' 'file://$page/index.html' '--extra-index-url' 'file://$M/download.pytorch.org/whl/cu102'" \
		"$(ls -t .envlock/restore-*.log | head -n 1)"
	unset PIP_CONFIG_FILE
fi

# --- what check finds is a step to do, never "as locked" ---------------------
# the locked machine's own tree, once without mmcv's compiled ops, once with
# a CPU-only torch of the same version: pip would call both "already
# satisfied", so the plan installs them again with --force-reinstall
lock=$GOLDEN/ubuntu1604-mmdet.lock.json
cp -a "$FIXTURES/ubuntu1604-mmdet" noops && find noops -path '*site-packages/mmcv/_ext*' -delete
"$ENVLOCK" restore "$lock" --root noops --only pip --dry-run >noops.plan 2>&1
check_grep "mmcv-full without its ops is not counted as locked" "^  ok      23 distributions as locked$" noops.plan
check_grep "it is installed again, by name" "^  manual  pip install 1 pinned distribution into /home/alice/miniconda3/envs/mmdet/bin/python3.7: mmcv-full==1.7.5$" noops.plan
check_grep "with pip told to replace it, and why" \
	"-r /tmp/envlock-restore-[0-9a-f]*.requirements.txt --force-reinstall .*mmcv-full 1.7.5 is installed without its compiled ops: installed again (--force-reinstall)" noops.plan
cp -a "$FIXTURES/ubuntu1604-mmdet" cpu && sed -i "s/^cuda = '10.2'/cuda = None/" cpu/home/alice/miniconda3/envs/mmdet/lib/python3.7/site-packages/torch/version.py
"$ENVLOCK" restore "$lock" --root cpu --only pip --dry-run >cpu.plan 2>&1
check_grep "a CPU-only torch of the locked version is installed again" \
	"^  manual  pip install 1 pinned distribution into .*: torch==1.10.0+cu102$" cpu.plan
check_grep "from PyTorch's index, replacing the CPU build" \
	"--force-reinstall --extra-index-url https://download.pytorch.org/whl/cu102 .*torch 1.10.0+cu102 is installed as a CPU-only build" cpu.plan
"$ENVLOCK" restore "$lock" --root "$FIXTURES/ubuntu1604-mmdet" --only pip --dry-run >same.plan 2>&1
check_grep "the tree as locked: every distribution as locked" "^  ok      24 distributions as locked$" same.plan
check_eq "and nothing installed again" "" "$(grep -e '--force-reinstall' same.plan)"
rm -rf noops cpu

# --- conda, through the stand-in -----------------------------------------
lock=$GOLDEN/ubuntu1604-mmdet.lock.json
id12=$(jget "$lock" id | cut -c8-19)
# the lines a correct explicit spec has, in the lock's order
"$PYTHON" -c "
import json
for p in json.load(open('$lock'))['conda']['packages']:
    print('%s#%s' % (p['url'], p['md5']))" >expect

# under --root, without --chroot: the tree's conda and pip are not run from here
# (they would get this machine's path to the tree), and the plan says how instead
mkdir -p D/home/alice/miniconda3/bin D/opt/py/bin
ln -s "$STANDIN" D/home/alice/miniconda3/bin/conda
ln -s "$STANDIN" D/opt/py/bin/python3.7
"$ENVLOCK" restore "$lock" --root D --only conda --only pip --python /opt/py/bin/python3.7 --dry-run >plan 2>err
check_status "--root without --chroot: conda and pip are manual, nothing to do" 1 $?
check_grep "conda: manual, with the reason" "^  manual  create conda environment /home/alice/miniconda3/envs/mmdet with conda (29 packages" plan
check_grep "and the command to run inside the tree, by the tree's paths" \
	"rerun with --chroot as root, or run it inside the tree yourself: cp $scratch/.envlock/envlock-restore-$id12.conda-explicit.txt $scratch/D/tmp/envlock-restore-$id12.conda-explicit.txt && chroot $scratch/D /home/alice/miniconda3/bin/conda create --yes --prefix /home/alice/miniconda3/envs/mmdet --file /tmp/envlock-restore-$id12.conda-explicit.txt (the spec is what \`envlock export --format conda-explicit\` writes)" plan
check_eq "the file that command copies is there, the spec of the lock (the plan wrote it beside its journal)" \
	"$(cat expect)" "$(grep -v '^#\|^@\|^$' .envlock/envlock-restore-$id12.conda-explicit.txt)"
check_grep "pip: manual, with the tree's python by its path in the tree, naming the first ten pins and how many more" \
	"^  manual  pip install 23 pinned distributions into /opt/py/bin/python3.7: addict==2.4.0, cycler==0.11.0, .*, Pillow==9.5.0 and 13 more$" plan
check_grep "and its command" "bake this machine's path to the tree into the environment.*cp $scratch/.envlock/envlock-restore-$id12.requirements.txt $scratch/D/tmp/envlock-restore-$id12.requirements.txt && chroot $scratch/D /opt/py/bin/python3.7 -m pip install --no-deps .* -r /tmp/envlock-restore-$id12.requirements.txt" plan
check_eq "whose file lists the 23 pins" 23 "$(grep -c '==' .envlock/envlock-restore-$id12.requirements.txt)"
check_eq "0 to do" "0" "$(sed -n 's/^\([0-9]*\) to do,.*/\1/p' plan)"
STANDIN_LOG=$scratch/standin.log "$ENVLOCK" restore "$lock" --root D --only conda --only pip --python /opt/py/bin/python3.7 --yes >out 2>err
check_status "apply without --chroot: nothing to do, the manual items left" 1 $?
check_eq "nothing ran, nothing was written into the tree" "" "$(cat standin.log 2>/dev/null; ls -A D/home/alice/miniconda3 D/tmp 2>/dev/null | grep -v -e '^bin$' -e '^$' -e ':$')"
"$ENVLOCK" restore "$lock" --chroot --only conda --dry-run >out 2>err
check_status "--chroot without --root" 2 $?
check_grep "says why" "restore: --chroot runs the tree's programs inside it: give --root DIR too" err
# chroot(2) is root's: anyone else is told so before anything is read
if [ "$(id -u)" = 0 ]; then
	nobody_dir=$(mktemp -d /tmp/envlock-nobody.XXXXXX) && chmod 755 "$nobody_dir"
	cp "$ENVLOCK" "$nobody_dir/envlock" && cp "$lock" "$nobody_dir/lock.json" && chmod 644 "$nobody_dir/lock.json"
	(cd "$nobody_dir" && HOME=$nobody_dir setpriv --reuid=65534 --regid=65534 --clear-groups \
		./envlock restore lock.json --root "$nobody_dir" --chroot --dry-run) >out 2>err
	st=$?
	rm -rf "$nobody_dir"
else
	"$ENVLOCK" restore "$lock" --root D --chroot --dry-run >out 2>err
	st=$?
fi
check_status "--chroot as another user than root" 2 $st
check_eq "refused with one line saying why" \
	"envlock: restore: --chroot needs root (chroot(2) is for root only): run envlock as root, or leave --chroot out and run the printed commands inside the tree yourself" "$(cat err)"

# with --chroot (root): the stand-in runs inside a tree with its own python3.11,
# by the tree's paths; none of this machine's reach it or the environment
chroot_tree S
cp expect S/expect
export STANDIN_LOG=/standin.log STANDIN_EXPECT=/expect STANDIN_FORBID=$scratch
C="--chroot --conda-exe /opt/envlock-test/conda"
"$ENVLOCK" restore "$lock" --root S --only conda $C --yes >out 2>err
check_status "conda step with the stand-in, inside the tree" 0 $?
check_grep "the plan says it runs inside the tree" "done    create conda environment /home/alice/miniconda3/envs/mmdet with conda (29 packages, explicit URLs and digests), inside the tree (chroot)" out
prefix=S/home/alice/miniconda3/envs/mmdet
check_eq "argv: create --yes --prefix P --file SPEC, all paths in the tree" \
	"[\"conda\", \"create\", \"--yes\", \"--prefix\", \"/home/alice/miniconda3/envs/mmdet\", \"--file\", \"/tmp/envlock-restore-$id12.conda-explicit.txt\"]" \
	"$(head -n 1 S/standin.log)"
check_eq "one record per locked package" "$(jget "$lock" conda.package_count)" "$(ls $prefix/conda-meta/*.json | wc -l)"
check_eq "the environment's history names its prefix in the tree" \
	"# cmd: /opt/envlock-test/conda create --yes --prefix /home/alice/miniconda3/envs/mmdet --file /tmp/envlock-restore-$id12.conda-explicit.txt" \
	"$(grep '^# cmd:' $prefix/conda-meta/history)"
check_eq "no host path in the environment" "" "$(grep -rl "$scratch" S/home 2>/dev/null)"
check_grep "the spec was written into the tree for it" "wrote the explicit spec '$scratch/S/tmp/envlock-restore-$id12.conda-explicit.txt'" .envlock/restore-$id12.log
check_eq "and removed afterwards" "" "$(ls S/tmp)"
check_grep "the log says it ran inside the tree" "run inside the tree (chroot '$scratch/S', chdir /):" .envlock/restore-$id12.log
"$ENVLOCK" restore "$lock" --root S --only conda $C --dry-run >again
check_status "second run: the environment is as locked" 0 $?
check_grep "second run says so" "ok      conda environment /home/alice/miniconda3/envs/mmdet: 29 packages as locked" again

# an environment that differs is not replaced without --force
rm "$prefix"/conda-meta/numpy-*.json
"$ENVLOCK" restore "$lock" --root S --only conda $C --yes >out 2>err
check_status "a different environment is left alone" 1 $?
check_grep "manual, naming the difference" "differs: 1 of 29 locked packages missing or different (numpy" out
"$ENVLOCK" restore "$lock" --root S --only conda $C --force --yes >out 2>err
check_status "--force replaces it" 0 $?
check_eq "the old one moved aside, not deleted" "1" "$(ls -d S/home/alice/miniconda3/envs/mmdet.envlock-bak-* | wc -l)"
check_eq "the new one complete" "29" "$(ls $prefix/conda-meta/*.json | wc -l)"

# the tree's program that fails to start: failed, saying why
"$ENVLOCK" restore "$lock" --root S --only conda --chroot --conda-exe /opt/none/conda --prefix /home/x --yes >out 2>err
check_status "a conda that is not in the tree" 1 $?
check_grep "failed, saying where it looked" "'/opt/none/conda': cannot be started inside '$scratch/S': no such file or directory" out

# killed in the middle of creating the environment, then run again
chroot_tree K
cp expect K/expect
STANDIN_KILL_AFTER=10 "$ENVLOCK" restore "$lock" --root K --only conda $C --state-dir kstate --yes >out 2>err
check_status "the apply is killed" 137 $?
check_eq "half an environment left" "10" "$(ls K/home/alice/miniconda3/envs/mmdet/conda-meta/*.json | wc -l)"
"$ENVLOCK" restore "$lock" --root K --only conda $C --state-dir kstate --yes >out 2>err
check_status "run again" 0 $?
check_grep "it says where the last run stopped" "the last apply of this lock stopped during step 'conda'" err
check_eq "the same final state as an uninterrupted run" \
	"$(cd S/home/alice/miniconda3/envs/mmdet/conda-meta && ls)" "$(cd K/home/alice/miniconda3/envs/mmdet/conda-meta && ls)"
check_eq "the half-made one kept aside, nothing lost" "10" "$(ls K/home/alice/miniconda3/envs/mmdet.envlock-bak-*/conda-meta/*.json | wc -l)"

# not a terminal and no --yes: refused
mkdir N
"$ENVLOCK" restore "$lock" --root N --only conda $C </dev/null >out 2>err
check_status "no --yes without a terminal" 2 $?
check_grep "says why" "refusing to change this machine without --yes" err
check_eq "nothing created" "" "$(ls N)"

# --name: the same environment under another name in the locked install
chroot_tree M
cp expect M/expect
"$ENVLOCK" restore "$lock" --root M --only conda $C --name mmdet-copy --yes >out 2>err
check_status "--name" 0 $?
check_eq "created under envs/NAME" "29" "$(ls M/home/alice/miniconda3/envs/mmdet-copy/conda-meta/*.json | wc -l)"
"$ENVLOCK" restore "$lock" --root M --name 'x;y' --dry-run >out 2>err
check_status "--name with a shell metacharacter" 2 $?
check_eq "says why" "envlock: restore: '$lock': the conda environment name 'x;y': contains a shell metacharacter or space" "$(cat err)"
"$ENVLOCK" restore "$lock" --only nothing --dry-run >out 2>err
check_status "an unknown step" 2 $?
check_grep "names the steps" "--only 'nothing': no such step (steps: driver, cuda" err
