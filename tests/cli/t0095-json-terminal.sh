#!/bin/sh
# Terminal-safe JSON: the --json output of every command writes C1 controls
# (U+0080-U+009F) and bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E,
# U+2066-U+2069) as \uXXXX, so printing it on a terminal cannot move the
# cursor or reorder what a reader sees; parsed, every value is the lock's,
# byte for byte. The lock's canonical form, what its id is the SHA-256 of,
# keeps raw UTF-8, so ids do not change. A hostile bundle manifest is listed
# escaped too, as text and as JSON.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
good=$GOLDEN/ubuntu1604-mmdet.lock.json
# ESC (C0, always \u001b in JSON), DEL, the C1 CSI and NEL, RIGHT-TO-LEFT OVERRIDE, LRM,
# RLM, ARABIC LETTER MARK, LRI ... PDI; the ^\S+$ versions take all of them
"$PYTHON" - "$good" hostile.lock.json <<'PY'
import json, sys
H = '\x1b[31m\x7f\u009b2J\u0085\u202egnp\u200e\u200f\u061c\u2066x\u2069'
d = json.load(open(sys.argv[1]))
d['host']['hostname'] = 'node' + H
d['system']['glibc']['version'] = '2.23' + H
next(t for t in d['cuda']['toolkits'] if t['home'] == '/usr/local/cuda-10.2')['version'] = '10.2.89' + H
d['frameworks']['mmcv']['version'] = '1.2.0' + H
d['conda']['packages'][0]['name'] = 'pkg' + H
open(sys.argv[2], 'wb').write(json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False).encode())
PY
H=$("$PYTHON" -c 'import sys; sys.stdout.buffer.write("\x1b[31m\x7f\u009b2J\u0085\u202egnp\u200e\u200f\u061c\u2066x\u2069".encode())')

# json_has FILE PYEXPR: evaluates PYEXPR on the parsed JSON as d with H the hostile text; prints its value
json_has() {
	"$PYTHON" - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
H = '\x1b[31m\x7f\u009b2J\u0085\u202egnp\u200e\u200f\u061c\u2066x\u2069'
def strings(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, str):
        yield v
print(eval(sys.argv[2]))
PY
}
# the hostile text as --json writes it
esc='\\u001b\[31m\\u007f\\u009b2J\\u0085\\u202egnp\\u200e\\u200f\\u061c\\u2066x\\u2069'

check_eq "the hostile lock holds its controls raw (ESC is \\u001b in any JSON)" "U+007F U+0085 U+009B U+061C U+200E U+200F U+202E U+2066 U+2069" \
	"$(clean hostile.lock.json)"

# --- check --json: findings quote the CUDA and mmcv versions
"$ENVLOCK" check --json hostile.lock.json >check.json 2>err
check_status "check --json of the hostile lock" 1 $?
check_eq "check --json: nothing raw reaches the terminal" clean "$(clean check.json)"
check_grep "check --json: mmcv's version, escaped" "\"subject\": \"mmdet 2.25.1 / mmcv-full 1.2.0$esc\"" check.json
check_eq "check --json: parsed, the subject holds the lock's text byte for byte" True \
	"$(json_has check.json 'any(f["subject"] == "mmdet 2.25.1 / mmcv-full 1.2.0" + H for f in d["findings"])')"

# --- diff --json, and the drift table of three
"$ENVLOCK" diff --json "$good" hostile.lock.json >diff.json 2>err
check_status "diff --json against the hostile lock" 1 $?
check_eq "diff --json: nothing raw reaches the terminal" clean "$(clean diff.json)"
check_grep "diff --json: glibc's new value, escaped" "\"2.23$esc\"" diff.json
check_eq "diff --json: parsed, glibc's new value is the lock's" True "$(json_has diff.json '("2.23" + H) in strings(d)')"
"$ENVLOCK" diff --json "$good" hostile.lock.json "$good" >drift.json 2>err
check_status "diff --json of three (drift)" 1 $?
check_eq "drift --json: nothing raw reaches the terminal" clean "$(clean drift.json)"
check_grep "drift --json: the odd value, escaped" "2.23$esc" drift.json

# --- report --format json, alone and --against
"$ENVLOCK" report hostile.lock.json --format json >report.json 2>err
check_status "report --format json of the hostile lock" 0 $?
check_eq "report json: nothing raw reaches the terminal" clean "$(clean report.json)"
check_grep "report json: glibc's version, escaped" "2.23$esc" report.json
check_eq "report json: parsed, the rows hold the lock's versions" True \
	"$(json_has report.json 'any(r["version"] == "1.2.0" + H for r in d["rows"])')"
"$ENVLOCK" report "$good" --against hostile.lock.json --format json >against.json 2>err
check_status "report --against --format json" 0 $?
check_eq "report --against json: nothing raw reaches the terminal" clean "$(clean against.json)"

# --- the id is of raw UTF-8: the canonical form keeps the controls as they are
check_eq "the hostile lock's id is the SHA-256 of its canonical form with raw UTF-8" \
	"$("$PYTHON" - hostile.lock.json <<'PY'
import hashlib, json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
for k in ('id', 'created', 'verify'):
    d.pop(k, None)
print('sha256:' + hashlib.sha256(json.dumps(d, sort_keys=True, ensure_ascii=False, separators=(',', ':')).encode()).hexdigest())
PY
)" "$(json_has report.json 'd["id"]')"
# --- save --json: the path it names is the user's, escaped
out="out$H.lock.json"
"$ENVLOCK" save --root "$FIXTURES/ubuntu1604-mmdet" --no-cache -o "$out" --json >save.json 2>err
check_status "save --json to a file whose name holds the hostile text" 0 $?
check_eq "save --json: nothing raw reaches the terminal" clean "$(clean save.json)"
check_grep "save --json: the path, escaped" "\"path\": \"out$esc.lock.json\"" save.json
check_eq "save --json: parsed, the path is the file's name" True "$(json_has save.json 'd["path"] == "out" + H + ".lock.json"')"
check_eq "save --json: the lock is there under that name" 1 "$(ls | grep -c '^out.*\.lock\.json$')"

# --- ldd --json: a file whose name holds it
cp /bin/true "prog$H"
"$ENVLOCK" ldd --json "prog$H" >ldd.json 2>err
check_status "ldd --json of a program whose name holds the hostile text" 0 $?
check_eq "ldd --json: nothing raw reaches the terminal" clean "$(clean ldd.json)"
check_grep "ldd --json: the file, escaped" "prog$esc" ldd.json

# --- verify --json: the lock's versions beside this machine's (it compiles with nvcc: skipped without)
timeout 300 "$ENVLOCK" verify hostile.lock.json --cpu-only --json >verify.json 2>err
st=$?
if [ "$(json_has verify.json 'len(d["stages"])' 2>/dev/null)" != "" ] && grep -q '"a": "1.2.0' verify.json; then
	check_eq "verify --json (status $st): nothing raw reaches the terminal" clean "$(clean verify.json)"
	check_grep "verify --json: mmcv's version in the lock, escaped" "\"a\": \"1.2.0$esc\"" verify.json
else
	skip "verify --json of the hostile lock" "verify compared no lock here (status $st: $(tail -n 1 err))"
fi

# --- restore --json: the hostile lock is refused, on one clean line
"$ENVLOCK" restore hostile.lock.json --dry-run --json >plan.json 2>err
check_status "restore --dry-run --json refuses the hostile lock" 2 $?
check_eq "restore: one line on stderr" 1 "$(wc -l <err | tr -d ' ')"
check_eq "restore: the refusal shows the value escaped (LRM, RLM and ALM too)" clean "$(clean err)"
check_grep "restore: the refusal names the field" "cuda.toolkits\[1\].version .*\\\\u200e\\\\u200f\\\\u061c" err

# --- bundle list of a hostile archive: its manifest is untrusted
"$PYTHON" - "$good" hostile.tar <<'PY'
import io, json, sys, tarfile
H = '\x1b[31m\x7f\u009b2J\u0085\u202egnp\u200e\u200f\u061c\u2066x\u2069'
lock = open(sys.argv[1], 'rb').read()
m = {'envlock_manifest': 1, 'lock_id': 'sha256:' + '0' * 64 + H, 'files': [
    {'path': 'wd/a' + H + '.txt', 'type': 'file', 'mode': 420, 'size': 3, 'sha256': 'ab' * 32, 'stored': True},
    {'path': 'wd/l' + H, 'type': 'symlink', 'mode': 511, 'target': 't' + H},
    {'path': 'wd/d' + H, 'type': 'dir', 'mode': 493}]}
with tarfile.open(sys.argv[2], 'w', format=tarfile.PAX_FORMAT) as t:
    for name, data in (('envlock.lock.json', lock), ('MANIFEST.json', json.dumps(m, ensure_ascii=False).encode())):
        i = tarfile.TarInfo(name)
        i.size = len(data)
        t.addfile(i, io.BytesIO(data))
PY
zstd -q hostile.tar -o hostile.tar.zst
"$ENVLOCK" bundle list hostile.tar.zst >list.txt 2>err
check_status "bundle list of a hostile manifest" 0 $?
check_eq "bundle list: nothing raw reaches the terminal" clean "$(clean list.txt)"
check_grep "bundle list: a file's path, escaped" '^file *3  abababababab  wd/a\\x1b\[31m\\x7f\\xc2\\x9b2J\\xc2\\x85\\u202egnp\\u200e\\u200f\\u061c\\u2066x\\u2069\.txt$' list.txt
check_grep "bundle list: a symlink and its target, escaped" '^symlink .* wd/l\\x1b.*\\u2069 -> t\\x1b.*\\u2069$' list.txt
check_grep "bundle list: a folder, escaped" '^dir .* wd/d\\x1b.*\\u2069/$' list.txt
"$ENVLOCK" bundle list --json hostile.tar.zst >list.json 2>err
check_status "bundle list --json of a hostile manifest" 0 $?
check_eq "bundle list --json: nothing raw reaches the terminal" clean "$(clean list.json)"
check_eq "bundle list --json: parsed, the paths are the manifest's" True \
	"$(json_has list.json '[f["path"] for f in d["files"]] == ["wd/a" + H + ".txt", "wd/l" + H, "wd/d" + H]')"
