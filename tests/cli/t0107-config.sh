#!/bin/sh
# envlock config: an OpenMMLab config's effective value printed as Python
# (run here by python3 with only the dict builtin, and compared with the
# value mmcv gives: the one written by hand from mmcv's merge rules, and the reference
# values of ../shared/data/configs), floats and strings as Python's repr
# writes them, a key that was not evaluated as a comment where it would
# be, --json, --diff by key path (A with B, A with its first base, a
# read_base() import, a package base through --site), the exit statuses,
# and bad input refused in one line naming the file.
. "$(dirname "$0")/lib.sh"

CFG=$top/tests/fixtures/configs
R50=$CFG/configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py
R101=$CFG/configs/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py
CORPUS=$top/../shared/data/configs

# pyvalue FILE: what the Python text in FILE gives, as JSON (tuples become lists), or the error:
# the names it binds, or the value of the one {...} mapping it holds
pyvalue() {
	"$PYTHON" - "$1" <<'PY'
import json, sys
src = open(sys.argv[1], encoding='utf-8').read()
code = [l for l in src.split('\n') if l.strip() and not l.lstrip().startswith('#')]
ns = {}
try:
    if code and code[0] == '{':
        ns = eval(src, {'__builtins__': {}, 'dict': dict})
    else:
        exec(src, {'__builtins__': {}, 'dict': dict}, ns)
except Exception as e:
    sys.exit(print('not valid Python: %s: %s' % (type(e).__name__, e)))
print(json.dumps(ns, sort_keys=True))
PY
}

# same WANT HAVE: "same" when the JSON texts are equal values as Python compares them (1 == 1.0:
# envlock's value does not tell a float with no fraction from an integer), else the first place they differ
same() {
	"$PYTHON" - "$1" "$2" <<'PY'
import json, sys
def first(a, b, at):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return '%s.%s: only in %s' % (at, k, 'the expected' if k in a else 'the actual')
            d = first(a[k], b[k], '%s.%s' % (at, k))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first(x, y, '%s[%d]' % (at, i))
            if d:
                return d
        return None
    if a == b and isinstance(a, bool) == isinstance(b, bool) and (a is None) == (b is None):
        return None
    return '%s: expected %r, got %r' % (at, a, b)
try:
    a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
except ValueError as e:
    sys.exit(print('not JSON: %s: %s' % (e, sys.argv[2][:200])))
print(first(a, b, '') or 'same')
PY
}

# jsonvalue FILE [KEY]: FILE's JSON (its KEY), the same way
jsonvalue() {
	"$PYTHON" -c 'import json, sys
v = json.load(open(sys.argv[1]))
print(json.dumps(v[sys.argv[2]] if len(sys.argv) > 2 else v, sort_keys=True))' "$@"
}

# --- mmdetection 2.25's faster_rcnn chain kept in tests/, with its value written by hand from mmcv's merge rules ---
"$ENVLOCK" config "$R50" --format py >r50.py 2>r50.err
check_status "config faster_rcnn_r50 --format py" 0 $?
check_eq "nothing on stderr" "" "$(cat r50.err)"
check_eq "it is Python that gives mmcv's value" same "$(same "$(jsonvalue "$CFG/expected/faster_rcnn_r50_fpn_1x_coco.json" effective)" "$(pyvalue r50.py)")"
check_eq "keys in the source's order, a line each at the top" \
	"model dataset_type data_root img_norm_cfg train_pipeline" "$(grep -o '^[a-z_]* = ' r50.py | sed 's/ = $//' | head -n 5 | tr '\n' ' ' | sed 's/ $//')"
check_grep "a short dict on one line" "^optimizer = dict(type='SGD', lr=0.02, momentum=0.9, weight_decay=0.0001)$" r50.py
check_grep "a long one an item a line, 4 spaces in" "^    backbone=dict($" r50.py
check_grep "nested 8 in" "^        init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet50'),$" r50.py
check_eq "--format py fits 79 columns here (no scalar is longer)" "" "$(awk 'length > 79' r50.py)"
check_grep "tuples are lists" "^workflow = \[\['train', 1\]\]$" r50.py

"$ENVLOCK" config "$R101" --json >r101.json 2>&1
check_status "config faster_rcnn_r101 --json" 0 $?
check_eq "--json: effective is the value" same "$(same "$(jsonvalue "$CFG/expected/faster_rcnn_r101_fpn_1x_coco.json" effective)" "$(jsonvalue r101.json effective)")"
check_eq "--json: nothing left out, no import" "[] []" "$(jsonvalue r101.json not_evaluated) $(jsonvalue r101.json imports)"

# the text output fits the terminal's width and is Python all the same
COLUMNS=60 "$ENVLOCK" config "$R50" >r50.txt
check_status "config faster_rcnn_r50 at 60 columns" 0 $?
check_eq "no line past 60 columns but a string that is longer itself" "" "$(awk "length > 60 && !/^ *[a-z_]*='[^']*',\$/" r50.txt)"
check_grep "such as this one" "^        ann_file='data/coco/annotations/instances_train2017.json',$" r50.txt
check_eq "the same value" "$(pyvalue r50.py)" "$(pyvalue r50.txt)"
COLUMNS=10000 "$ENVLOCK" config "$R50" >wide.txt
check_grep "at 10000 columns a top-level value is one line" "^model = dict(type='FasterRCNN', backbone=dict(type='ResNet', depth=50, " wide.txt
check_eq "one line a top-level key" "$(grep -c ' = ' r50.py | tr -d ' ')" "$(wc -l <wide.txt | tr -d ' ')"

# --- --diff: r101 against its first base, r50 ---
"$ENVLOCK" config --diff "$R101" >d.out 2>d.err
check_status "config --diff r101 (its base)" 1 $?
cat >d.want <<EOF
--- $R50
+++ $R101
~ model.backbone.depth: 50 -> 101
~ model.backbone.init_cfg.checkpoint: 'torchvision://resnet50' -> 'torchvision://resnet101'
EOF
check_diff "what r101 changes over r50, by key path" d.want d.out
(cd "$CFG/configs" && "$ENVLOCK" config --diff faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py) >rel.out
check_status "--diff A B" 1 $?
check_eq "files under the current directory are shown relative to it" \
	"--- faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py|+++ faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py" "$(head -n 2 rel.out | paste -sd'|')"
COLUMNS=70 "$ENVLOCK" config --diff "$R101" >narrow.out
check_eq "at 70 columns the line wraps between values, never inside one" \
	"~ model.backbone.init_cfg.checkpoint: 'torchvision://resnet50'|    -> 'torchvision://resnet101'" "$(tail -n 2 narrow.out | paste -sd'|')"
COLUMNS=40 "$ENVLOCK" config --diff "$R101" >narrow.out
check_eq "at 40, a value a line" \
	"~ model.backbone.init_cfg.checkpoint:|    'torchvision://resnet50'|    -> 'torchvision://resnet101'" "$(tail -n 3 narrow.out | paste -sd'|')"
"$ENVLOCK" config --diff "$R101" --json >d.json
check_status "--diff --json" 1 $?
check_eq "--diff --json: the changes" \
	'[{"a": 50, "b": 101, "keys": ["model", "backbone", "depth"], "op": "changed", "path": "model.backbone.depth"}, {"a": "torchvision://resnet50", "b": "torchvision://resnet101", "keys": ["model", "backbone", "init_cfg", "checkpoint"], "op": "changed", "path": "model.backbone.init_cfg.checkpoint"}]' \
	"$(jsonvalue d.json changes)"
check_eq "--diff --json: a, b, identical" "\"$R50\" \"$R101\" false" "$(jsonvalue d.json a) $(jsonvalue d.json b) $(jsonvalue d.json identical)"
"$ENVLOCK" config --diff "$R50" "$R50" >same.out
check_status "--diff of a config with itself" 0 $?
check_eq "identical" "identical" "$(tail -n 1 same.out)"
"$ENVLOCK" config --diff "$R50" "$R50" --cfg-options optimizer.lr=0.01 'data.train.pipeline.2.img_scale=(640,640)' >opt.out
check_status "--diff A A --cfg-options: what the options change" 1 $?
check_eq "the options apply to the second" \
	"~ data.train.pipeline[2].img_scale[0]: 1333 -> 640|~ data.train.pipeline[2].img_scale[1]: 800 -> 640|~ optimizer.lr: 0.02 -> 0.01" \
	"$(tail -n +3 opt.out | sort | paste -sd'|')"

# --- hand-written configs: what is not evaluated, Python's repr, lists in a diff ---
mkdir cfg
cat >cfg/base.py <<'EOF'
model = dict(type='M', backbone=dict(depth=50, frozen=open('f')), heads=[dict(x=open('b'))])
lr = 0.02
shared = dict(y=open('z'))
EOF
cat >cfg/child.py <<'EOF'
_base_ = './base.py'
model = dict(backbone=dict(depth=101))
work_dir = (lambda: 'work')()
open('log').close()
EOF
(cd cfg && "$ENVLOCK" config child.py --format py) >child.py.out
check_status "a config with keys not evaluated" 1 $?
cat >child.want <<'EOF'
# not evaluated, and left out of the value below:
#   a statement not evaluated: a call to open() (child.py:4)
#   model.heads.x: a call to open() (base.py:1)
model = dict(
    type='M',
    backbone=dict(
        depth=101,
        # frozen: not evaluated: a call to open() (base.py:1)
    ),
    heads=[dict()],
)
lr = 0.02
shared = dict(
    # y: not evaluated: a call to open() (base.py:3)
)
# work_dir: not evaluated: a call to (lambda: 'work')() (child.py:3)
EOF
check_diff "each left out where its key would be; through a list, or with no key, at the top" child.want child.py.out
check_eq "and it is Python: the value without those keys" \
	'{"lr": 0.02, "model": {"backbone": {"depth": 101}, "heads": [{}], "type": "M"}, "shared": {}}' "$(pyvalue child.py.out)"
(cd cfg && "$ENVLOCK" config child.py --json) >child.json
check_status "--json of it" 1 $?
check_eq "--json: not_evaluated, key by key" \
	'[["base.py", 1, "model.backbone.frozen"], ["base.py", 1, "model.heads.x"], ["base.py", 3, "shared.y"], ["child.py", 3, "work_dir"], ["child.py", 4, ""]]' \
	"$("$PYTHON" -c 'import json, sys
print(json.dumps(sorted([n["file"], n["line"], n["key"]] for n in json.load(open(sys.argv[1]))["not_evaluated"])))' child.json)"
(cd cfg && COLUMNS=40 "$ENVLOCK" config child.py) >child.40
check_grep "a comment wraps at the width, as comment lines" "^#     open() (child.py:4)$" child.40
check_eq "and stays Python" "$(pyvalue child.py.out)" "$(pyvalue child.40)"

# the diff: a key the new side did not evaluate is unknown, not removed; a shared base's note does not count
cat >cfg/other.py <<'EOF'
_base_ = './base.py'
model = dict(backbone=dict(depth=101, frozen=1), heads=[dict(x=1), dict(x=2)])
lr = open('q')
EOF
(cd cfg && "$ENVLOCK" config --diff child.py other.py) >cd.out
check_status "--diff with keys not evaluated" 1 $?
cat >cd.want <<'EOF'
--- child.py
+++ other.py
+ model.heads[1]: dict(x=2)
? (a statement with no key): not evaluated in the old config: a statement not evaluated: a call to open() (child.py:4)
? model.backbone.frozen: not evaluated in the old config: a call to open() (base.py:1)
? model.heads.x: not evaluated in the old config: a call to open() (base.py:1)
? shared.y: not evaluated on both sides: a call to open() (base.py:3)
? work_dir: not evaluated in the old config: a call to (lambda: 'work')() (child.py:3)
? lr: not evaluated in the new config: a call to open() (other.py:3)
EOF
check_diff "changes by path, then what is unknown, and on which side" cd.want cd.out
(cd cfg && "$ENVLOCK" config other.py --json) >other.json
check_eq "other.py sets the keys base.py left out: their notes are gone, lr's is its own" \
	'[["base.py", 3, "shared.y"], ["other.py", 3, "lr"]]' \
	"$("$PYTHON" -c 'import json, sys
print(json.dumps(sorted([n["file"], n["line"], n["key"]] for n in json.load(open(sys.argv[1]))["not_evaluated"])))' other.json)"
"$ENVLOCK" config cfg/base.py --cfg-options model.backbone.frozen=2 model.heads.0.x=1 shared.y=0 >/dev/null
check_status "a config whose keys not evaluated are all set by --cfg-options is complete" 0 $?
(cd cfg && "$ENVLOCK" config --diff child.py child.py) >cc.out
check_status "--diff of a config with itself, a base's note on both sides" 0 $?
check_eq "the same, but for what neither side evaluated" "the same, but for what neither side evaluated" "$(tail -n 1 cc.out)"

cat >cfg/pipe_a.py <<'EOF'
train_pipeline = [dict(type='Load'), dict(type='Flip'), dict(type='Resize', scale=(1333, 800), keep_ratio=True)]
optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='SGD', lr=0.02))
EOF
cat >cfg/pipe_b.py <<'EOF'
train_pipeline = [dict(type='Load'), dict(type='Flip'), dict(type='Resize', scale=(640, 640)), dict(type='Pack')]
optim_wrapper = dict(type='AmpOptimWrapper', optimizer=dict(type='SGD', lr=0.02), loss_scale='dynamic')
EOF
(cd cfg && "$ENVLOCK" config --diff pipe_a.py pipe_b.py) >pipe.out
cat >pipe.want <<'EOF'
--- pipe_a.py
+++ pipe_b.py
~ train_pipeline[2].scale[0]: 1333 -> 640
~ train_pipeline[2].scale[1]: 800 -> 640
- train_pipeline[2].keep_ratio: True
+ train_pipeline[3]: dict(type='Pack')
~ optim_wrapper.type: 'OptimWrapper' -> 'AmpOptimWrapper'
+ optim_wrapper.loss_scale: 'dynamic'
EOF
check_diff "lists item by item, the index in the path, in the source's key order" pipe.want pipe.out

# floats and strings as Python's repr writes them, integers exact, keys no keyword argument can be
"$PYTHON" - >cfg/reprs.py <<'PY'
import random
rng = random.Random(7)
# (1e15, a float with no fraction, is written 1000000000000000: the value does not say it was a float)
vals = [0.1, 1e-4, 1e-5, 1.5e16, 1e16, 123456789.123, 2.5, 1e300, 5e-324, 0.1 + 0.2, 2 / 3, -1.5e-07]
while len(vals) < 400:
    v = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
    if v != int(v):
        vals.append(v)
for i, v in enumerate(vals):
    print('f%d = %r' % (i, v))
strs = ["plain", "it's", 'say "hi"', "both ' and \"", "tab\there", "nl\nend", "back\\slash", "\x1b[31m red",
        "\u202e rtl", "\u00e9t\u00e9 \u4e2d\u6587 \U0001F600", "\xa0", "\u200b", "\u2028", "\x7f\x85"]
for i, s in enumerate(strs):
    print('s%d = %r' % (i, s))
print('big = 4611686018427387904')
print('top = 9223372036854775807')
PY
printf "odd = {'0': 1, 'a-b': 2, 'class': 3, 'ok': dict(x=1)}\n" >cfg/keys.py
"$ENVLOCK" config cfg/reprs.py --format py >reprs.out
check_status "config of floats, strings, big integers" 0 $?
"$PYTHON" - cfg/reprs.py reprs.out >reprs.cmp <<'PY'
import sys
ns = {}
exec(open(sys.argv[1], encoding='utf-8').read(), {'dict': dict}, ns)
want = ['%s = %r' % (k, v) for k, v in ns.items()]
have = open(sys.argv[2], encoding='utf-8').read().rstrip('\n').split('\n')
bad = [(w, h) for w, h in zip(want, have) if w != h]
print('%d lines, %d differ%s' % (len(have), len(bad) + abs(len(want) - len(have)), ''.join('\n  want %s\n  have %s' % b for b in bad[:5])))
PY
check_eq "every line is Python's own: key = repr(value)" "416 lines, 0 differ" "$(cat reprs.cmp)"
check_eq "nothing raw reaches the terminal" clean "$(clean reprs.out)"
"$ENVLOCK" config cfg/keys.py >keys.out
check_eq "a dict with a key that is no identifier, or a keyword, is a mapping" "odd = {'0': 1, 'a-b': 2, 'class': 3, 'ok': dict(x=1)}" "$(cat keys.out)"

# a top-level key no assignment can make (--cfg-options) turns the value into one mapping, as mmengine writes it
"$ENVLOCK" config "$R50" --format py --cfg-options 'a-b=1' >map.out
check_status "a top-level key that is not an identifier" 0 $?
check_eq "one {...} mapping" "{|}" "$(head -n 1 map.out)|$(tail -n 1 map.out)"
check_eq "with the same value and the new key" \
	"$("$PYTHON" -c 'import json,sys; v=json.loads(sys.argv[1]); v["a-b"]=1; print(json.dumps(v, sort_keys=True))' "$(pyvalue r50.py)")" \
	"$("$PYTHON" -c 'import json,sys; print(json.dumps(eval(open(sys.argv[1]).read(), {"dict": dict}), sort_keys=True))' map.out)"

"$ENVLOCK" config "$R50" --format py --cfg-options dict=1 >dict.out
check_eq "so does a top-level key named dict, which would hide the builtin" "{|}" "$(head -n 1 dict.out)|$(tail -n 1 dict.out)"
check_grep "its dicts are still dict(...)" "^    'optimizer': dict(type='SGD', lr=0.02, momentum=0.9, weight_decay=0.0001),$" dict.out

# --- package bases (--site) and mmengine's read_base() ---
mkdir -p site/mmdet/.mim/configs/det site/mmx/configs
printf "model = dict(depth=50)\nlr = 0.02\n" >site/mmdet/.mim/configs/det/base.py
printf "_base_ = 'mmdet::det/base.py'\nmodel = dict(depth=101)\n" >cfg/pkg.py
printf "q = 1\n" >site/mmx/configs/b.py
printf "from mmengine.config import read_base\n\nwith read_base():\n    from .pipe_a import *\n    from .other import *\n\nlr = 0.01\n" >cfg/engine.py
"$ENVLOCK" config cfg/pkg.py --site "$scratch/nowhere" --site site --format py >pkg.out 2>pkg.err
check_status "a package base found in the second --site" 0 $?
check_eq "its value" "model = dict(depth=101)|lr = 0.02" "$(paste -sd'|' pkg.out)"
"$ENVLOCK" config --diff cfg/pkg.py --site site >pkgd.out
check_status "--diff of a config with its package base" 1 $?
check_eq "the base as found" "--- site/mmdet/.mim/configs/det/base.py|+++ cfg/pkg.py|~ model.depth: 50 -> 101" "$(paste -sd'|' pkgd.out)"
refused "a package base without --site" \
	"cfg/pkg.py:1: the base 'mmdet::det/base.py' is a package's config, and no site-packages were given to find it in" \
	config cfg/pkg.py
"$ENVLOCK" config --diff cfg/engine.py >eng.out
check_status "--diff of a read_base() config with its first import" 1 $?
check_eq "the first module of the block is its base" "--- cfg/pipe_a.py|+++ cfg/engine.py" "$(head -n 2 eng.out | paste -sd'|')"
check_grep "and lr comes from engine.py itself" "^+ lr: 0.01$" eng.out

# --- bad input: one line naming the file, exit 2, nothing on stdout ---
refused "a missing config" "missing.py: no such file or directory" config missing.py
printf 'model = dict(\n  type="M",\n' >cfg/open.py
refused "a bracket left open" "cfg/open.py:1: a bracket that is not closed" config cfg/open.py
refused "--diff of a missing config" "missing.py: no such file or directory" config --diff missing.py
refused "--diff B missing" "missing.py: no such file or directory" config --diff "$R50" missing.py
refused "--diff of a config with no base" \
	"cfg/base.py: it has no _base_ to compare with; name the other config: envlock config --diff OTHER cfg/base.py" \
	config --diff cfg/base.py
printf "_base_ = ['./base.py'] + ['./pipe_a.py']\n" >cfg/computed.py
"$ENVLOCK" config cfg/computed.py >/dev/null 2>&1
check_status "a _base_ that is a sum of lists is evaluated" 1 $?
refused "but --diff does not follow it to a first base" \
	"cfg/computed.py: its _base_ is not a literal path or list of paths (['./base.py'] + ['./pipe_a.py'])" \
	config --diff cfg/computed.py
refused "an option that is not key=value" "--cfg-options 'lr': expected key=value" config "$R50" --cfg-options lr
refused "--format json" "--format 'json': not a format (formats: text, py)" config "$R50" --format json
refused "--json with --format" "give --json or --format, not both" config "$R50" --json --format py
"$ENVLOCK" config "$R50" --bogus >out 2>err
check_status "an unknown option" 2 $?
check_eq "envlock's own line, then the usage" "envlock: config: unknown or incomplete option '--bogus'|usage: envlock config FILE [--cfg-options K=V [K=V]...]... [--site DIR]... [--json | --format text|py]" \
	"$(head -n 2 err | paste -sd'|')"
"$ENVLOCK" config >out 2>err
check_status "no FILE" 2 $?
check_eq "says so" "envlock: config: expected one config FILE, got 0" "$(head -n 1 err)"

# --- the real trees of ../shared/data/configs, against the values mmcv gave ---
if [ ! -d "$CORPUS/mmdet-2.25.0" ] || ! command -v zstd >/dev/null 2>&1; then
	skip "real mmdetection 2.25 configs against mmcv's values" "$CORPUS/mmdet-2.25.0 or zstd is missing"
	exit 0
fi
zstd -dc "$CORPUS/mmdet-2.25.0/expected.jsonl.zst" >expected.jsonl
# expect PATH: mmcv's value for the config at PATH of the corpus, as sorted JSON
expect() {
	"$PYTHON" -c 'import json, sys
for l in open("expected.jsonl"):
    e = json.loads(l)
    if e["path"] == sys.argv[1]:
        print(json.dumps(e["value"], sort_keys=True))' "$1"
}
cd "$CORPUS/mmdet-2.25.0" || exit 1
for c in configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py configs/ssd/ssd300_coco.py configs/retinanet/retinanet_r50_fpn_1x_coco.py; do
	"$ENVLOCK" config "$c" --format py >"$scratch/real.py" 2>"$scratch/real.err"
	check_status "$c --format py" 0 $?
	check_eq "$c: run by Python, mmcv's value" same "$(same "$(cd "$scratch" && expect "$c")" "$(pyvalue "$scratch/real.py")")"
done
"$ENVLOCK" config --diff configs/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py >"$scratch/real.diff"
check_status "--diff of the real faster_rcnn_r101" 1 $?
check_eq "the depth and the checkpoint change, nothing else" \
	"--- configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py|+++ configs/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py|~ model.backbone.depth: 50 -> 101|~ model.backbone.init_cfg.checkpoint: 'torchvision://resnet50' -> 'torchvision://resnet101'" \
	"$(paste -sd'|' "$scratch/real.diff")"
"$ENVLOCK" config --diff configs/ssd/ssd300_coco.py configs/ssd/ssd512_coco.py >"$scratch/ssd.diff"
check_status "--diff ssd300 ssd512" 1 $?
check_grep "a list item in the path" "^~ train_pipeline\[4\]\.img_scale\[0\]: 300 -> 512$" "$scratch/ssd.diff"
check_grep "an item added to a list" "^+ model.bbox_head.anchor_generator.strides\[6\]: 512$" "$scratch/ssd.diff"

# every config of the tree: what is printed, as text and as a file, is Python with the value --json gives
"$PYTHON" - "$ENVLOCK" >"$scratch/sweep.out" 2>&1 <<'PY'
import json, os, subprocess, sys
envlock, n, bad = sys.argv[1], 0, []
for dp, dn, fn in os.walk('configs'):
    dn.sort()
    for f in sorted(fn):
        if not f.endswith('.py'):
            continue
        p = os.path.join(dp, f)
        j = subprocess.run([envlock, 'config', p, '--json'], capture_output=True, text=True)
        if j.returncode not in (0, 1):
            bad.append('%s: --json exit %d: %s' % (p, j.returncode, j.stderr.strip()))
            continue
        want = json.loads(j.stdout)['effective']
        for args, cols in ((['--format', 'py'], '10000'), ([], '70')):
            r = subprocess.run([envlock, 'config', p] + args, capture_output=True, text=True, env=dict(os.environ, COLUMNS=cols))
            ns = {}
            try:
                exec(r.stdout, {'__builtins__': {}, 'dict': dict}, ns)
            except Exception as e:
                bad.append('%s %s: not Python: %s' % (p, args, e))
                continue
            if r.returncode != j.returncode or json.loads(json.dumps(ns)) != want:
                bad.append('%s %s: exit %d, or another value' % (p, args, r.returncode))
        n += 1
print('%d configs, %d bad' % (n, len(bad)))
for b in bad[:10]:
    print('  ' + b)
PY
check_eq "all 635 configs of mmdetection 2.25: the text and the file are Python with the value" "635 configs, 0 bad" "$(head -n 1 "$scratch/sweep.out")"
[ "$(head -n 1 "$scratch/sweep.out")" = "635 configs, 0 bad" ] || sed 's/^/#   /' "$scratch/sweep.out"
