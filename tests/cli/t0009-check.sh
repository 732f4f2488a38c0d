#!/bin/sh
# envlock check: the acceptance scenarios, on variants of the fixture locks
# made here, against the shipped rules and their sourced facts.
. "$(dirname "$0")/lib.sh"

base=$GOLDEN/ubuntu1604-mmdet.lock.json
# variant NAME PYTHON-STATEMENTS: a copy of the 16.04 box with changes applied to d
variant() {
	"$PYTHON" - "$base" "$scratch/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
}
# finding FILE RULE FIELD: FIELD of the first finding of RULE in check --json
finding() {
	"$ENVLOCK" check --json "$1" | "$PYTHON" -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    if f["rule"] == sys.argv[1]:
        print(f[sys.argv[2]]); break' "$2" "$3"
}

variant driver390 'd["gpu"]["driver"]["version"] = "390.144"'
"$ENVLOCK" check "$scratch/driver390.json" >"$scratch/out"
check_status "driver 390 with CUDA 10.2" 1 $?
check_eq "driver too old: breaking" "breaking" "$(finding "$scratch/driver390.json" driver-too-old-for-cuda severity)"
check_eq "driver too old: names the minimum" \
	"CUDA 10.2.89 needs NVIDIA driver 440.33 or newer; this machine has 390.144" \
	"$(finding "$scratch/driver390.json" driver-too-old-for-cuda message)"
check_grep "driver too old: cites NVIDIA's table" "CUDA Toolkit" "$scratch/out"

variant gcc9 'd["compilers"]["default"]["version"] = "9.4.0"'
check_eq "gcc 9 with nvcc 10.2: breaking" "breaking" "$(finding "$scratch/gcc9.json" gcc-too-new-for-nvcc severity)"
finding "$scratch/gcc9.json" gcc-too-new-for-nvcc fix >"$scratch/fix"
check_grep "gcc 9: the fix names gcc-8" "gcc-8" "$scratch/fix"

variant mmcv_old 'd["frameworks"]["mmcv"]["version"] = "1.2.0"'
check_eq "mmdet 2.25.1 with mmcv-full 1.2.0: breaking" "breaking" "$(finding "$scratch/mmcv_old.json" mmcv-outside-mmdet-range severity)"
check_eq "mmcv range taken from mmdet 2.25.1's own __init__.py" \
	"mmdet 2.25.1's /home/alice/mmdetection/mmdet/__init__.py asserts 1.3.17 <= mmcv <= 1.7.0, but mmcv-full 1.2.0 is installed: importing mmdet fails its version assertion" \
	"$(finding "$scratch/mmcv_old.json" mmcv-outside-mmdet-range message)"
# a lock that records no range from the file (an older envlock's): the knowledge's row of 2.25.1,
# what the v2.25.1 tag's own __init__.py asserts (<= 1.7.0, not the FAQ page's 1.6.0)
variant mmcv_old_table 'd["frameworks"]["mmcv"]["version"] = "1.2.0"; del d["frameworks"]["mmdet"]["mmcv_range"]'
check_eq "no recorded range: the knowledge's row of the release judges" \
	"mmdet 2.25.1's __init__.py (at its release tag) asserts 1.3.17 <= mmcv <= 1.7.0, but mmcv-full 1.2.0 is installed: importing mmdet fails its version assertion" \
	"$(finding "$scratch/mmcv_old_table.json" mmcv-outside-mmdet-range message)"
check_eq "its fix: the newest mmcv-full that mmdet 2.25.1 accepts, as the wheel for this torch and CUDA" \
	"pip install mmcv-full==1.7.0 -f https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html" \
	"$(finding "$scratch/mmcv_old_table.json" mmcv-outside-mmdet-range fix | sed 's/; or keep it.*//')"
finding "$scratch/mmcv_old_table.json" mmcv-outside-mmdet-range source >"$scratch/src"
check_grep "its source: the tag's own file" "open-mmlab/mmdetection mmdet/__init__.py @ v2.25.1" "$scratch/src"

# mmpose: only releases the table has read are judged
mp=$GOLDEN/mmpose-container.lock.json
"$PYTHON" - "$mp" "$scratch/mmpose07.json" "$scratch/mmpose06.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["frameworks"]["mmpose"]["version"] = "0.7.0"
d["frameworks"]["mmcv"]["version"] = "1.3.0"
del d["frameworks"]["mmpose"]["mmcv_range"]
json.dump(d, open(sys.argv[2], "w"))
d["frameworks"]["mmpose"]["version"] = "0.6.0"
json.dump(d, open(sys.argv[3], "w"))
PY
check_eq "mmpose 0.7.0 with mmcv 1.3.0: breaking (its v0.7.0 __init__.py wants < 1.2)" "breaking" "$(finding "$scratch/mmpose07.json" mmcv-outside-mmpose-range severity)"
check_eq "mmpose 0.6.0, whose tag's __init__.py asserts no mmcv range: not judged" "" "$(finding "$scratch/mmpose06.json" mmcv-outside-mmpose-range severity)"
check_eq "mmpose 1.3.1 with mmcv 2.1.0, inside its __init__.py's 2.0.0rc4 <= mmcv <= 2.3.0: no finding" "" \
	"$(finding "$mp" mmcv-outside-mmpose-range severity)"
"$PYTHON" - "$mp" "$scratch/mmpose131.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["frameworks"]["mmpose"]["mmcv_range"]
json.dump(d, open(sys.argv[2], "w"))
PY
check_eq "mmpose 1.3.1 without a recorded range: its tag's range admits mmcv 2.1.0" "" \
	"$(finding "$scratch/mmpose131.json" mmcv-outside-mmpose-range severity)"

variant cpu 'd["frameworks"]["torch"]["version"] = "1.10.0+cpu"; d["frameworks"]["torch"]["cuda"] = None; d["frameworks"]["torch"]["cpu_only"] = True'
check_eq "torch 1.10.0+cpu on a GPU machine: breaking" "breaking" "$(finding "$scratch/cpu.json" torch-cpu-only-on-gpu severity)"
check_eq "its fix: the CUDA build of the same torch this driver runs, as PyTorch's own command of that era" \
	"pip install torch==1.10.0+cu102 torchvision==0.11.0+cu102 -f https://download.pytorch.org/whl/torch_stable.html" \
	"$(finding "$scratch/cpu.json" torch-cpu-only-on-gpu fix)"

variant cu113 'd["frameworks"]["torch"]["version"] = "1.10.0+cu113"; d["frameworks"]["torch"]["cuda"] = "11.3"; d["gpu"]["driver"]["version"] = "440.33.01"'
check_eq "torch built for cu113 on driver 440: breaking" "breaking" "$(finding "$scratch/cu113.json" torch-cuda-newer-than-driver severity)"

variant wheel228 'next(x for x in d["pip"]["distributions"] if x["name"].startswith("opencv"))["tags"] = ["cp37-cp37m-manylinux_2_28_x86_64"]'
check_eq "a manylinux_2_28 wheel on glibc 2.23: breaking" "breaking" "$(finding "$scratch/wheel228.json" wheel-needs-newer-glibc severity)"
finding "$scratch/wheel228.json" wheel-needs-newer-glibc message >"$scratch/m"
check_grep "names the glibc the wheel needs" "GLIBC_2.28 not found" "$scratch/m"

variant mmcv_cu11 'd["frameworks"]["mmcv"]["ops_cudart"] = "libcudart.so.11.0"'
check_eq "mmcv ops linked to CUDA 11 under a cu102 torch: breaking" "breaking" "$(finding "$scratch/mmcv_cu11.json" mmcv-cuda-differs-from-torch severity)"
variant mmcv_cu102 'd["frameworks"]["mmcv"]["ops_cudart"] = "libcudart.so.10.2"'
check_eq "mmcv ops linked to CUDA 10.2 under a cu102 torch: no finding" "" "$(finding "$scratch/mmcv_cu102.json" mmcv-cuda-differs-from-torch severity)"

"$ENVLOCK" check "$GOLDEN/broken.lock.json" >"$scratch/out"
check_status "the broken fixture" 1 $?
check_grep "missing soname link: the ln -s / ldconfig fix" \
	"fix: ln -s libcudnn.so.8.2.0 /usr/local/cuda-11.3/lib64/libcudnn.so.8 && ldconfig" "$scratch/out"

"$ENVLOCK" check "$GOLDEN/no-nvidia.lock.json" >"$scratch/out"
check_status "a consistent CPU machine" 0 $?
check_eq "its verdict" "no findings: every rule passed" "$(tail -n 1 "$scratch/out")"

# --json is valid and says the same
"$ENVLOCK" check --json "$scratch/driver390.json" >"$scratch/j"
check_eq "--json: worst severity" "breaking" "$(jget "$scratch/j" worst)"

# every shipped rule has a source, and the rules file matches its schema
if "$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.rules.schema.json" "$top/rules/envlock.rules.json" >"$scratch/v" 2>&1; then
	ok "rules/envlock.rules.json is valid against its schema"
else
	not_ok "rules/envlock.rules.json is valid against its schema"; sed 's/^/#   /' "$scratch/v"
fi
# envlock's knowledge: every table matches its schema, which makes every row cite a source (its own or its table's)
if "$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.knowledge.schema.json" "$top"/knowledge/*/*.json >"$scratch/v" 2>&1; then
	ok "knowledge/*/*.json is valid against its schema"
else
	not_ok "knowledge/*/*.json is valid against its schema"; sed 's/^/#   /' "$scratch/v"
fi
sed 's/"source": "[^"]*"/"source": ""/' "$top/knowledge/pytorch/torch_wheels.json" >"$scratch/nosource.json"
"$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.knowledge.schema.json" "$scratch/nosource.json" >"$scratch/v" 2>&1
check_status "a knowledge file whose rows lose their sources is refused by the schema" 1 $?
sed '0,/"[0-9]*\.[0-9]*\.x"/s//"1.10"/' "$top/knowledge/openmmlab/mmcv_releases.json" >"$scratch/badwheel.json"
"$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.knowledge.schema.json" "$scratch/badwheel.json" >"$scratch/v" 2>&1
check_status "a table's rows are checked by their table's shape (an mmcv wheel for torch 1.10, not 1.10.x)" 1 $?
check_eq "every table and every table-less rule cites a source" "ok" "$("$PYTHON" - "$top/rules/envlock.rules.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [n for n, t in r["tables"].items() if not t.get("source") or t["source"] == "pending"]
bad += [x["id"] for x in r["rules"] if "table" not in x and not x.get("source")]
print("ok" if not bad else "missing: " + ", ".join(bad))
PY
)"

# bad input: one line, exit 2
printf 'not json' >"$scratch/bad.json"
"$ENVLOCK" check "$scratch/bad.json" 2>"$scratch/err"
check_status "check of non-JSON" 2 $?
check_eq "non-JSON: one line" "envlock: check: '$scratch/bad.json': not valid JSON (line 1)" "$(cat "$scratch/err")"
printf '{"envlock_rules": 1, "rules": [], "tables": 5}' >"$scratch/rules.json"
"$ENVLOCK" check --rules "$scratch/rules.json" "$base" 2>"$scratch/err"
check_status "a malformed rules file" 2 $?
check_grep "malformed rules named" "'$scratch/rules.json': needs a \"rules\" list and a \"tables\" object" "$scratch/err"

# A lockfile is untrusted input: check, show and diff survive any shape
# of its values (strings where numbers were, objects where lists were,
# missing keys), 300 deterministic mutations of the golden locks.
mkdir -p "$scratch/mut"
"$PYTHON" - "$GOLDEN" "$scratch/mut" <<'PY'
import glob, json, os, random, sys
random.seed(7)
bases = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.lock.json")))]
def paths(o, p=()):
    yield p
    if isinstance(o, dict):
        for k, v in o.items():
            yield from paths(v, p + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from paths(v, p + (i,))
junk = [None, 7, -1, 1e308, "", "x" * 300, [], {}, [1, "a"], {"status": 5}, True, "../../etc/passwd", "\u0000\u001b[2J"]
for n in range(300):
    d = json.loads(json.dumps(random.choice(bases)))
    for _ in range(3):
        ps = [p for p in paths(d) if p]
        p = random.choice(ps)
        parent = d
        for k in p[:-1]:
            parent = parent[k]
        if random.random() < 0.3 and isinstance(parent, dict):
            del parent[p[-1]]
        else:
            parent[p[-1]] = random.choice(junk)
    json.dump(d, open(os.path.join(sys.argv[2], "m%03d.json" % n), "w"))
PY
crashed=0
for f in "$scratch"/mut/*.json; do
	for cmd in "check $f" "show $f" "diff $GOLDEN/ubuntu1604-mmdet.lock.json $f"; do
		$ENVLOCK $cmd >/dev/null 2>"$scratch/mut.err"
		st=$?
		if [ "$st" -gt 2 ]; then
			crashed=$((crashed + 1))
			echo "# envlock $cmd: exit $st"
		fi
	done
done
check_eq "300 mutated lockfiles: check, show and diff never crash" "0" "$crashed"

# options may follow the lockfile, as with every other command
"$ENVLOCK" check "$GOLDEN/ubuntu1604-mmdet.lock.json" --json >"$scratch/after.json"
check_status "check FILE --json" 1 $?
check_eq "--json after the file is honoured" "breaking" "$(jget "$scratch/after.json" worst)"
