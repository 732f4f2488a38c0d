#!/bin/sh
# envlock import: real pip freeze output (a venv made here, with pinned,
# legacy-versioned, URL, editable and editable-git installs) and conda's
# explicit lists, round trips through export, partial locks against the
# schema, and diff of a full lock with a partial one.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
validate_ok() { # WHAT FILE
	if validate "$2" >v 2>&1; then ok "$1"; else not_ok "$1"; sed 's/^/#   /' v; fi
}

# ---- pip freeze, from a real pip
if "$PYTHON" -m venv venv >venv.log 2>&1 && venv/bin/pip --version >/dev/null 2>&1; then
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
	"$PYTHON" "$top/tests/export/mkwheel.py" wh alpha==1.0 Beta_Pkg==2.0.post1 gamma==3.1 legacy===1.0ubuntu1 >/dev/null
	mkdir proj gitproj
	printf 'from setuptools import setup\nsetup(name="localproj", version="0.3", py_modules=[])\n' >proj/setup.py
	printf 'from setuptools import setup\nsetup(name="git-proj", version="1.2", py_modules=[])\n' >gitproj/setup.py
	(cd gitproj && git init -q && git add . && git -c user.email=t@example.com -c user.name=t commit -qm init &&
		git remote add origin https://example.com/org/git-proj.git)
	# setup.py develop before the legacy version is installed: pkg_resources refuses to load it
	venv/bin/pip install -q --no-index --no-use-pep517 -e proj -e gitproj >pip.log 2>&1 &&
		venv/bin/pip install -q --no-index --find-links wh alpha==1.0 Beta_Pkg==2.0.post1 'legacy===1.0ubuntu1' \
			"$scratch/wh/gamma-3.1-py3-none-any.whl" >>pip.log 2>&1
	check_status "pip installs the test environment" 0 $?
	venv/bin/pip freeze --all >freeze.txt
	check_grep "pip freeze wrote an editable git line" "^-e git+https://example.com/org/git-proj.git@[0-9a-f]\{40\}#egg=git_proj$" freeze.txt
	"$ENVLOCK" import freeze.txt -o freeze.lock.json >out 2>err
	check_status "import of pip freeze output" 0 $?
	check_grep "it says what it read" "partial lock from pip freeze output" out
	validate_ok "the partial lock is valid against the lock schema" freeze.lock.json
	check_eq "marked partial, from pip freeze" "pip-freeze" "$(jget freeze.lock.json partial.from)"
	"$ENVLOCK" export freeze.lock.json --format requirements -o again.txt 2>/dev/null
	check_diff "import -> export gives pip freeze's lines back" freeze.txt "$(sed 1,2d again.txt >again.body && echo again.body)"
	check_eq "the editable tree keeps its version from pip's comment" "0.3" \
		"$("$PYTHON" -c 'import json; print([d for d in json.load(open("freeze.lock.json"))["pip"]["distributions"] if d["name"]=="localproj"][0]["version"])')"
else
	skip "import of real pip freeze output" "no python3 -m venv with pip here"
fi

# ---- a lock's own export, imported, compared with the lock by diff
"$ENVLOCK" export "$GOLDEN/no-nvidia.lock.json" --format requirements -o nn.txt 2>/dev/null
"$ENVLOCK" import nn.txt -o nn.lock.json >/dev/null 2>&1
"$ENVLOCK" diff "$GOLDEN/no-nvidia.lock.json" nn.lock.json --only pip >out 2>err
check_status "diff --only pip of a lock and the import of its export" 0 $?
check_eq "identical" "identical" "$(cat out)"
sed 's/^sympy==1.12$/sympy==1.13/' nn.txt >nn2.txt
"$ENVLOCK" import nn2.txt -o nn2.lock.json >/dev/null 2>&1
"$ENVLOCK" diff "$GOLDEN/no-nvidia.lock.json" nn2.lock.json --only pip --json >out 2>err
check_status "a colleague's different version" 1 $?
check_eq "diff names it" "sympy 1.12 1.13" \
	"$("$PYTHON" -c 'import json,sys; d=json.load(open("out")); print(" ".join(" ".join((e["key"], e["a"], e["b"])) for e in d["differences"]))' 2>&1)"

# ---- conda list --explicit
"$ENVLOCK" export "$GOLDEN/ubuntu1604-mmdet.lock.json" --format conda-explicit -o explicit.txt 2>/dev/null
"$ENVLOCK" import explicit.txt -o conda.lock.json >out 2>err
check_status "import of a conda explicit list" 0 $?
validate_ok "the conda partial lock is valid against the lock schema" conda.lock.json
"$ENVLOCK" export conda.lock.json --format conda-explicit -o explicit2.txt 2>/dev/null
check_eq "import -> export: the same URL lines" "$(grep -v '^#' explicit.txt)" "$(grep -v '^#' explicit2.txt)"
"$ENVLOCK" diff "$GOLDEN/ubuntu1604-mmdet.lock.json" conda.lock.json --only conda --json >out 2>/dev/null
check_eq "diff --only conda: every package the same (only the env name and prefix, which the list lacks)" "env prefix" \
	"$("$PYTHON" -c 'import json; print(" ".join(e["key"] for e in json.load(open("out"))["differences"]))')"
"$ENVLOCK" diff "$GOLDEN/ubuntu1604-mmdet.lock.json" conda.lock.json --json >out 2>/dev/null
check_eq "diff without --only: only the sections the partial lock holds" "conda:env conda:prefix" \
	"$("$PYTHON" -c 'import json; print(" ".join(e["section"] + ":" + e["key"] for e in json.load(open("out"))["differences"]))')"
"$ENVLOCK" show conda.lock.json >out 2>&1
check_eq "show of a partial lock: what it is, and only what it holds" \
	"partial     made by envlock import from conda-explicit output; it records nothing else of the machine|conda env   (unnamed): $(jget conda.lock.json conda.package_count) packages" \
	"$(sed 1d out | tr '\n' '|' | sed 's/|$//')"
# hashes as conda --sha256 and CEP 23 write them, and credentials that must not reach the lock
cat >sha.txt <<'EOF'
# platform: linux-64
@EXPLICIT
https://conda.anaconda.org/conda-forge/linux-64/zlib-1.2.13-hd590300_5.conda#68c34ec6149623be41a1933ab996a209e2f7f0f41ee05c41a2d09d1cd3d9d9c5
https://user:secret@conda.example.com/t/tk-0123456789abcdef/main/noarch/tzdata-2024a-h0c530f3_0.conda#sha256:7b2b69c54ec62a243eb6fba2391b5e443421608c3ae5dbff938ad33ca8db5122
EOF
"$ENVLOCK" import sha.txt -o sha.lock.json >/dev/null 2>err
check_status "import of --sha256 and sha256: lines" 0 $?
check_eq "both sha256 forms are recorded" "68c34ec6149623be41a1933ab996a209e2f7f0f41ee05c41a2d09d1cd3d9d9c5 7b2b69c54ec62a243eb6fba2391b5e443421608c3ae5dbff938ad33ca8db5122" \
	"$(jget sha.lock.json conda.packages.1.sha256) $(jget sha.lock.json conda.packages.0.sha256)"
check_eq "name, version, build from the file name" "tzdata 2024a h0c530f3_0 noarch" \
	"$(jget sha.lock.json conda.packages.0.name) $(jget sha.lock.json conda.packages.0.version) $(jget sha.lock.json conda.packages.0.build) $(jget sha.lock.json conda.packages.0.subdir)"
if grep -q 'secret\|tk-0123' sha.lock.json; then not_ok "credentials and tokens are not in the lock"; else ok "credentials and tokens are not in the lock"; fi

# ---- the schema tells partial locks from full ones
"$PYTHON" - "$GOLDEN/no-nvidia.lock.json" nn.lock.json "$top/schemas/envlock.lock.schema.json" >check.out 2>&1 <<'PY'
import json, sys, jsonschema
full, part, schema = (json.load(open(p)) for p in sys.argv[1:])
v = jsonschema.Draft202012Validator(schema)
def valid(d): return not list(v.iter_errors(d))
bad_full = json.loads(json.dumps(full)); del bad_full["gpu"]
req_in_full = json.loads(json.dumps(full)); req_in_full["pip"]["distributions"][0] = {"name": "x", "kind": "requirement", "editable": False}
empty_part = json.loads(json.dumps(part)); del empty_part["pip"]
print(valid(full), valid(part), valid(bad_full), valid(req_in_full), valid(empty_part))
PY
check_eq "schema: full ok, partial ok, full without gpu no, a requirement in a full lock no, a partial with nothing no" \
	"True True False False False" "$(cat check.out)"

# ---- index options: where the CUDA builds come from, as the file says
cat >idx.txt <<'TXT'
--extra-index-url https://user:secret@download.pytorch.org/whl/cu102
-f https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html
--find-links=/srv/wheelhouse
--trusted-host download.pytorch.org
torch==1.10.0+cu102
mmcv-full==1.7.5
TXT
"$ENVLOCK" import idx.txt -o idx.lock.json >/dev/null 2>&1
check_status "import of a file with index options" 0 $?
check_eq "pip.index_options: each option in the file's order, credentials stripped, from the file" \
	"extra-index-url https://download.pytorch.org/whl/cu102 idx.txt
find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html idx.txt
find-links file:///srv/wheelhouse idx.txt" \
	"$("$PYTHON" -c 'import json,sys; [print(o["option"], o["url"], o["from"]) for o in json.load(open(sys.argv[1]))["pip"]["index_options"]]' idx.lock.json)"
validate_ok "the partial lock with index options is valid against the lock schema" idx.lock.json
"$ENVLOCK" export idx.lock.json --format requirements >idx.req
check_eq "export writes them back for pip" \
	"--extra-index-url https://download.pytorch.org/whl/cu102
--find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html
--find-links file:///srv/wheelhouse" "$(grep '^--' idx.req)"
printf -- '-f ./wheels\ntorch==1.0\n' >rel.txt
"$ENVLOCK" import rel.txt -o rel.lock.json 2>err >/dev/null
check_status "a relative --find-links: refused" 1 $?
check_eq "in one line naming the file, the line and the path" \
	"envlock: rel.txt:1: --find-links './wheels': a relative path (give a URL or an absolute path)" "$(cat err)"
printf -- '-i ftp://mirror/simple\ntorch==1.0\n' >ftp.txt
"$ENVLOCK" import ftp.txt -o ftp.lock.json 2>err >/dev/null
check_status "an index that is not http(s) or file: refused" 1 $?
check_grep "naming it" "^envlock: ftp.txt:1: --index-url 'ftp://mirror/simple': " err
if [ -e rel.lock.json ] || [ -e ftp.lock.json ]; then not_ok "nothing written on a refused file"; else ok "nothing written on a refused file"; fi

# ---- an imported list is judged by the same rules as a saved lock: a colleague's pip freeze
# against the 16.04 box's lock (torch 1.10.0+cu102, mmcv-full 1.7.5, mmdet 2.25.1, a V100)
W=$GOLDEN/ubuntu1604-mmdet.lock.json
"$PYTHON" - "$W" >colleague.txt <<'PY'
import json, sys
for d in json.load(open(sys.argv[1]))["pip"]["distributions"]:
    v = {"torch": "1.10.0+cu113", "torchvision": "0.11.1+cu113", "mmcv-full": "1.4.0"}.get(d["name"], d["version"])
    print("%s==%s" % (d["name"], v))
PY
"$ENVLOCK" import colleague.txt -o colleague.lock.json >/dev/null 2>&1
"$ENVLOCK" diff "$W" colleague.lock.json --json >out 2>err
check_status "diff of the box's lock and the colleague's pip freeze: differences" 1 $?
diffrow() { # KEY FIELD: of the diff's entry for KEY in out
	"$PYTHON" -c 'import json, sys
for d in json.load(open("out"))["differences"]:
    if d["key"] == sys.argv[1]: print(d[sys.argv[2]]); break' "$1" "$2"
}
check_eq "torch cu102 -> cu113: risky" "risky" "$(diffrow torch severity)"
check_eq "with its reason: another CUDA runtime under torch" \
	"torch's build cu102 → cu113: another CUDA runtime under torch, and extensions built against the old one (mmcv-full's ops) need rebuilding" \
	"$(diffrow torch reason)"
check_eq "mmcv-full 1.7.5 -> 1.4.0: risky, as mmcv in a saved lock's frameworks" "risky mmcv 1.7.5 → 1.4.0" \
	"$(diffrow mmcv-full severity) $(diffrow mmcv-full reason)"
check_eq "no longer 'no core part changed'" "0 breaking, 2 risky" \
	"$("$PYTHON" -c 'import json; c = json.load(open("out"))["counts"]; print("%d breaking, %d risky" % (c["breaking"], c["risky"]))')"
sed 's/^torch==.*/torch==1.10.0+cpu/' colleague.txt >cpu.txt
"$ENVLOCK" import cpu.txt -o cpu.lock.json >/dev/null 2>&1
"$ENVLOCK" diff "$W" cpu.lock.json --json >out 2>err
check_eq "torch cu102 -> cpu, where A records a GPU: breaking" "breaking" "$(diffrow torch severity)"
sed 's/^mmcv-full==.*/mmcv-full==1.7.5/' colleague.txt >bad.txt
"$ENVLOCK" import bad.txt -o bad.lock.json >/dev/null 2>&1
"$ENVLOCK" check bad.lock.json --json >out 2>err
check_status "check of an imported list whose mmdet refuses its mmcv-full" 1 $?
check_eq "mmdet 2.25.1 with mmcv-full 1.7.5: breaking, as check of the saved lock says" \
	"mmcv-outside-mmdet-range breaking mmdet 2.25.1 / mmcv-full 1.7.5" \
	"$("$PYTHON" -c 'import json
for f in json.load(open("out"))["findings"]: print(f["rule"], f["severity"], f["subject"])')"
"$ENVLOCK" check colleague.lock.json >out 2>err
check_status "the colleague's own list (mmcv-full 1.4.0, inside mmdet 2.25.1's range): no finding" 0 $?

# conda's explicit lists: pytorch's build string names its build
for b in cuda10.2_cudnn7.6.5_0 cpu_0; do
	printf '@EXPLICIT\nhttps://conda.anaconda.org/pytorch/linux-64/pytorch-1.10.0-py3.7_%s.tar.bz2#0123456789abcdef0123456789abcdef\n' "$b" >"pt-$b.txt"
	"$ENVLOCK" import "pt-$b.txt" -o "pt-$b.lock.json" >/dev/null 2>&1
done
"$ENVLOCK" diff pt-cuda10.2_cudnn7.6.5_0.lock.json pt-cpu_0.lock.json --json >out 2>err
check_eq "conda: pytorch cuda10.2 -> cpu (no GPU recorded): risky, with the builds" \
	"risky torch's build cuda10.2 → cpu: torch changes between CPU-only and CUDA" "$(diffrow pytorch severity) $(diffrow pytorch reason)"
