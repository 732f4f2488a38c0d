#!/bin/sh
# --config: the mmdetection fixture tree recorded with its _base_ chain,
# paths as typed from the current directory, digests that sha256sum
# agrees with, and a missing config refused.
. "$(dirname "$0")/lib.sh"

# the fixture configs under the same relative path in a copy of the tree's top, in $scratch
src=$scratch/src
dir=tests/fixtures/configs/configs
mkdir -p "$src/${dir%/*}"
cp -R "$top/$dir" "$src/$dir"
cd "$src" || exit 1
r50=$dir/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py
r101=$dir/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py

# one line per recorded file: path, requested, size, sha256, bases joined by ','
files() {
	"$PYTHON" - "$1" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit('not a lockfile: ' + sys.argv[1])
for f in doc['configs']['files']:
    print(f['path'], str(f['requested']).lower(), f.get('size', '-'), f.get('sha256', f.get('error')),
          ','.join(f.get('bases', [])))
PY
}

# the same line computed from the files themselves with sha256sum and wc
expect() {
	path=$1 requested=$2
	shift 2
	bases=$(echo "$@" | tr ' ' ',')
	echo "$path $requested $(wc -c <"$path" | tr -d ' ') $(sha256sum "$path" | cut -d' ' -f1) $bases"
}

if ! "$ENVLOCK" save --help 2>&1 | grep -q -- '--config'; then
	skip "save --config" "this envlock has no --config option yet"
	exit 0
fi

"$ENVLOCK" save -q --config "$r50" -o - >"$scratch/r50.json" 2>"$scratch/err"
check_status "save --config from the top of the tree" 0 $?
check_eq "configs.status" "present" "$(jget "$scratch/r50.json" configs.status)"
{
	expect "$r50" true $dir/_base_/models/faster_rcnn_r50_fpn.py $dir/_base_/datasets/coco_detection.py \
		$dir/_base_/schedules/schedule_1x.py $dir/_base_/default_runtime.py
	expect $dir/_base_/models/faster_rcnn_r50_fpn.py false
	expect $dir/_base_/datasets/coco_detection.py false
	expect $dir/_base_/schedules/schedule_1x.py false
	expect $dir/_base_/default_runtime.py false
} >"$scratch/r50.want"
files "$scratch/r50.json" >"$scratch/r50.got"
check_diff "r50: paths, order, sizes and sha256sum digests of the chain" "$scratch/r50.want" "$scratch/r50.got"

# the text is the file, byte for byte
"$PYTHON" - "$scratch/r50.json" >"$scratch/text.out" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit('not a lockfile: ' + sys.argv[1])
for f in doc['configs']['files']:
    if f['text'].encode('utf-8') != open(f['path'], 'rb').read():
        print('differs:', f['path'])
PY
check_eq "each recorded text is the file's content" "" "$(cat "$scratch/text.out")"

# three levels, and the chain read from here even when the machine probed is a fixture root
"$ENVLOCK" save -q --root "$FIXTURES/no-nvidia" --config "$r101" -o "$scratch/r101.json"
check_status "save --root ... --config" 0 $?
{
	expect "$r101" true "$r50"
	expect "$r50" false $dir/_base_/models/faster_rcnn_r50_fpn.py $dir/_base_/datasets/coco_detection.py \
		$dir/_base_/schedules/schedule_1x.py $dir/_base_/default_runtime.py
	expect $dir/_base_/models/faster_rcnn_r50_fpn.py false
	expect $dir/_base_/datasets/coco_detection.py false
	expect $dir/_base_/schedules/schedule_1x.py false
	expect $dir/_base_/default_runtime.py false
} >"$scratch/r101.want"
files "$scratch/r101.json" >"$scratch/r101.got"
check_diff "r101 -> r50 -> four bases, depth-first" "$scratch/r101.want" "$scratch/r101.got"
if grep -q '"configs"' "$top/schemas/envlock.lock.schema.json"; then
	if validate "$scratch/r101.json" >"$scratch/v.out" 2>&1; then ok "lockfile with configs is valid against the schema"; else not_ok "lockfile with configs is valid against the schema"; sed 's/^/#   /' "$scratch/v.out"; fi
else
	skip "lockfile with configs is valid against the schema" "the schema has no \"configs\" section yet"
fi

# paths follow the current directory: relative inside it, absolute outside
(cd "$dir/faster_rcnn" && "$ENVLOCK" save -q --root "$FIXTURES/no-nvidia" \
	--config faster_rcnn_r101_fpn_1x_coco.py --config "$src/$r50" -o "$scratch/here.json")
check_status "save from the config's folder" 0 $?
check_eq "paths relative to the current directory" \
	"faster_rcnn_r101_fpn_1x_coco.py faster_rcnn_r50_fpn_1x_coco.py $src/$dir/_base_/models/faster_rcnn_r50_fpn.py" \
	"$(files "$scratch/here.json" | head -n 3 | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"
check_eq "a config named twice is recorded once, as requested" "6 true true" \
	"$(files "$scratch/here.json" | wc -l | tr -d ' ') $(files "$scratch/here.json" | head -n 2 | cut -d' ' -f2 | tr '\n' ' ' | sed 's/ $//')"

# a cycle is a warning, not a failure
mkdir -p "$scratch/cyc"
printf "_base_ = './b.py'\n" >"$scratch/cyc/a.py"
printf "_base_ = './a.py'\n" >"$scratch/cyc/b.py"
(cd "$scratch/cyc" && "$ENVLOCK" save --root "$FIXTURES/no-nvidia" --config a.py -o "$scratch/cyc.json" 2>"$scratch/err")
check_status "a _base_ cycle" 0 $?
check_eq "the cycle: one warning naming both files" \
	"envlock: warning: 'b.py': _base_ './a.py' makes a cycle (a.py -> b.py -> a.py)" "$(grep "a.py" "$scratch/err")"

# what was asked for and is not there: exit 1, one line naming it, nothing written
"$ENVLOCK" save -q --root "$FIXTURES/no-nvidia" --config "$dir/missing.py" -o "$scratch/missing.json" 2>"$scratch/err"
check_status "a missing config" 1 $?
check_eq "the missing config is named on one line" \
	"envlock: save: '$dir/missing.py': no such file" "$(grep "missing.py" "$scratch/err")"
if [ -e "$scratch/missing.json" ]; then not_ok "no lockfile written for a missing config"; else ok "no lockfile written for a missing config"; fi
printf '_base_ = "x.py"\n\000\001' >"$scratch/bin.py"
"$ENVLOCK" save -q --root "$FIXTURES/no-nvidia" --config "$scratch/bin.py" -o - >/dev/null 2>"$scratch/err"
check_status "a binary config" 1 $?
check_eq "the binary config is named with the reason" \
	"envlock: save: '$scratch/bin.py': binary data, not UTF-8 text" "$(grep "bin.py" "$scratch/err")"
