#!/bin/sh
# The installed files decide before the rules' tables (issue 14): torch's
# compiled module (its wheel's tags, its Requires-Python) says which Python
# it runs on, an OpenMMLab codebase's own __init__.py which mmcv it
# accepts. Copies of the fixture roots, edited as users edit them, are
# saved and checked; a table answers only where the files say nothing.
. "$(dirname "$0")/lib.sh"

# finding LOCK RULE FIELD: FIELD of RULE's first finding in check --json, "" when none
finding() {
	"$ENVLOCK" check --json "$1" 2>/dev/null | "$PYTHON" -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    if f["rule"] == sys.argv[1]:
        print(f[sys.argv[2]]); break' "$2" "$3"
}
# without LOCK OUT KEY...: LOCK with those members of the frameworks removed ("torch.python_tags")
without() {
	_in=$1 _out=$2
	shift 2
	"$PYTHON" - "$_in" "$_out" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[3:]:
    fw, key = k.split(".")
    d["frameworks"][fw].pop(key, None)
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
}
save() { SOURCE_DATE_EPOCH=0 "$ENVLOCK" save --root "$1" -o "$2" 2>"$2.err"; }

# torch on Debian 12's Python 3.11 (the no-nvidia root), its version.py
# saying 1.13.1: PyTorch's table gives torch 1.13 Python 3.7 to 3.10
cp -a "$FIXTURES/no-nvidia" deb
site=deb/usr/local/lib/python3.11/dist-packages
sed -i "s/^__version__ = .*/__version__ = '1.13.1'/" "$site/torch/version.py"
save deb torch311.json
check_status "save: torch with _C.cpython-311 on Python 3.11" 0 $?
check_eq "the lock is valid" valid "$(schema_errors torch311.json)"
check_eq "torch's Python, from its compiled module" \
	"3.11 /usr/local/lib/python3.11/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so" \
	"$(jget torch311.json frameworks.torch.python_tags.0) $(jget torch311.json frameworks.torch.python_tags_source)"
check_eq "and its Requires-Python, from its METADATA" \
	">=3.8.0 /usr/local/lib/python3.11/dist-packages/torch-2.1.0+cpu.dist-info/METADATA" \
	"$(jget torch311.json frameworks.torch.requires_python) $(jget torch311.json frameworks.torch.requires_python_source)"
check_eq "built for 3.11, on 3.11: no finding" "" "$(finding torch311.json torch-python-unsupported message)"
without torch311.json torch311-bare.json torch.python_tags torch.python_tags_source torch.requires_python torch.requires_python_source
check_eq "the same lock without what the files say: the table would find one" \
	"torch 1.13.1 supports Python 3.7 to 3.10; this environment has Python 3.11.2" \
	"$(finding torch311-bare.json torch-python-unsupported message)"

# a module built for 3.8 where Python is 3.11: CPython does not import it
mv "$site/torch/_C.cpython-311-x86_64-linux-gnu.so" "$site/torch/_C.cpython-38-x86_64-linux-gnu.so"
save deb torch38.json
check_eq "torch with _C.cpython-38 on Python 3.11: breaking" breaking "$(finding torch38.json torch-python-unsupported severity)"
check_eq "the finding names the module" \
	"torch 1.13.1 is built for Python 3.8 (/usr/local/lib/python3.11/dist-packages/torch/_C.cpython-38-x86_64-linux-gnu.so); this environment has Python 3.11.2" \
	"$(finding torch38.json torch-python-unsupported message)"
check_eq "its fix" "install a torch built for Python 3.11 (its wheels are tagged cp311), or run this torch with Python 3.8" \
	"$(finding torch38.json torch-python-unsupported fix)"
# item SECTION KEY A B: the difference envlock diff --json gives KEY of SECTION between A and B, "a -> b"
item() {
	"$ENVLOCK" diff --json "$3" "$4" 2>/dev/null | "$PYTHON" -c '
import json, sys
for e in json.load(sys.stdin)["differences"]:
    if e["section"] == sys.argv[1] and e["key"] == sys.argv[2]:
        print("%s -> %s" % (e["a"], e["b"]))' "$1" "$2"
}
check_eq "diff: the Python torch is built for is an item" "3.11 -> 3.8" "$(item frameworks "torch python" torch311.json torch38.json)"

# no module, a pure-Python WHEEL tag, no Requires-Python: nothing says, the table does
rm "$site/torch/_C.cpython-38-x86_64-linux-gnu.so"
sed -i 's/^Tag: .*/Tag: py3-none-any/' "$site/torch-2.1.0+cpu.dist-info/WHEEL"
sed -i '/^Requires-Python:/d' "$site/torch-2.1.0+cpu.dist-info/METADATA"
save deb torch-none.json
check_eq "no evidence in the files: none recorded" "" \
	"$(jget torch-none.json frameworks.torch.python_tags)$(jget torch-none.json frameworks.torch.requires_python)"
check_eq "no evidence: the table's finding, risky" \
	"risky torch 1.13.1 supports Python 3.7 to 3.10; this environment has Python 3.11.2" \
	"$(finding torch-none.json torch-python-unsupported severity) $(finding torch-none.json torch-python-unsupported message)"

# mmdet 2.25.1 on the 16.04 box, its __init__.py edited as users do to
# take a newer mmcv-full: the knowledge's row for 2.25.1 (its tag's own file) stops at 1.7.0
cp -a "$FIXTURES/ubuntu1604-mmdet" box
init=box/home/alice/mmdetection/mmdet/__init__.py
mmcv_version=box/home/alice/miniconda3/envs/mmdet/lib/python3.7/site-packages/mmcv/version.py
sed -i "s/^mmcv_maximum_version = .*/mmcv_maximum_version = '1.8.0'/" "$init"
save box edited.json
check_status "save: mmdet with mmcv_maximum_version = '1.8.0'" 0 $?
check_eq "the lock is valid" valid "$(schema_errors edited.json)"
check_eq "the range its __init__.py asserts" "1.3.17 1.8.0 true /home/alice/mmdetection/mmdet/__init__.py" \
	"$(jget edited.json frameworks.mmdet.mmcv_range.min) $(jget edited.json frameworks.mmdet.mmcv_range.max) $(jget edited.json frameworks.mmdet.mmcv_range.max_inclusive) $(jget edited.json frameworks.mmdet.mmcv_range.source)"
check_eq "mmcv-full $(jget edited.json frameworks.mmcv.version) inside it: no finding" "" \
	"$(finding edited.json mmcv-outside-mmdet-range message)"
without edited.json edited-bare.json mmdet.mmcv_range
check_eq "the same lock without the file's range: the knowledge would say breaking" \
	"mmdet 2.25.1's __init__.py (at its release tag) asserts 1.3.17 <= mmcv <= 1.7.0, but mmcv-full 1.7.5 is installed: importing mmdet fails its version assertion" \
	"$(finding edited-bare.json mmcv-outside-mmdet-range message)"

check_eq "diff: the range mmdet's __init__.py asserts is an item" \
	"1.3.17 <= mmcv <= 1.7.0 -> 1.3.17 <= mmcv <= 1.8.0" \
	"$(item frameworks "mmdet mmcv range" "$GOLDEN/ubuntu1604-mmdet.lock.json" edited.json)"

sed -i "s/^__version__ = .*/__version__ = '2.0.0'/" "$mmcv_version"
save box mmcv2.json
check_eq "mmcv 2.0.0 outside what the file asserts: the finding names the file" \
	"breaking mmdet 2.25.1's /home/alice/mmdetection/mmdet/__init__.py asserts 1.3.17 <= mmcv <= 1.8.0, but mmcv-full 2.0.0 is installed: importing mmdet fails its version assertion" \
	"$(finding mmcv2.json mmcv-outside-mmdet-range severity) $(finding mmcv2.json mmcv-outside-mmdet-range message)"

# a bound the file computes is no literal: no range is recorded, the knowledge judges
sed -i "s/^__version__ = .*/__version__ = '1.7.5'/" "$mmcv_version"
sed -i "s/^mmcv_maximum_version = .*/mmcv_maximum_version = '.'.join(['1', '8', '0'])/" "$init"
save box computed.json
check_eq "a computed bound: no range recorded" "" "$(jget computed.json frameworks.mmdet.mmcv_range)"
check_eq "no range: the knowledge's finding" \
	"mmdet 2.25.1's __init__.py (at its release tag) asserts 1.3.17 <= mmcv <= 1.7.0, but mmcv-full 1.7.5 is installed: importing mmdet fails its version assertion" \
	"$(finding computed.json mmcv-outside-mmdet-range message)"

# an __init__.py of 2 MB, and one of binary junk: the save goes on, with a warning, and records no range
"$PYTHON" -c 'import sys; open(sys.argv[1], "w").write("x = 1\n" * 350000)' "$init"
save box huge.json
check_status "save with a 2 MB __init__.py" 0 $?
check_eq "huge: no range, one warning naming the file" \
	" 1" "$(jget huge.json frameworks.mmdet.mmcv_range) $(grep -c "mmdet/__init__.py': larger than" huge.json.err)"
printf 'assert (\0\377\376 mmcv_version <= digit_version(' >"$init"
save box junk.json
check_status "save with a binary __init__.py" 0 $?
check_eq "junk: no range, the lock is valid" " valid" "$(jget junk.json frameworks.mmdet.mmcv_range) $(schema_errors junk.json)"
echo "1..$n"
