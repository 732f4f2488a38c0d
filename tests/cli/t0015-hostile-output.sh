#!/bin/sh
# A lock is untrusted input: show, check and diff print its strings with
# every control character (C0, DEL, C1), bidi control and byte that is not
# UTF-8 escaped (\x1b, \u202e, \xff), never raw. Loading a lock validates it
# against the schema, so the hostile text goes where the schema lets it in:
# fields of any text, and the one-word versions (^\S+$), which control
# characters and U+202E satisfy. In the driver's version, whose pattern is
# strict, the same text gets the lock refused by every command, with one
# line on stderr that names the field and shows the value escaped.
# python3-jsonschema confirms which lock is valid and which is not. And show
# groups a hundred thousand GPUs in well under its time limit.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
good=$GOLDEN/ubuntu1604-mmdet.lock.json
# OSC "set the window title" ended by BEL, a colour CSI, DEL, the C1 CSI (U+009B)
# and RIGHT-TO-LEFT OVERRIDE (U+202E); the invalid byte is added to the raw file below.
# H has no white space, so the ^\S+$ versions (glibc, the CUDA toolkit, mmcv) take
# it; the driver's version (^[0-9]+(\.[0-9]+){1,2}$) does not: the hostile lock
# has a plain old driver, so that a rule quotes the hostile CUDA version beside
# it, and bad-driver.lock.json is the same lock with H in the driver's version.
# Python's json cannot read a byte that is not UTF-8: each file with one gets a
# twin, *-utf8.lock.json, with U+FFFD for it, for the schema checks below.
"$PYTHON" - "$good" hostile.lock.json bad-driver.lock.json bad-driver-ff.lock.json <<'PY'
import json, sys
H = '\x1b]0;owned\x07\x1b[31m\x7f\u009b2J\u202egnp'
d = json.load(open(sys.argv[1]))
d['host']['hostname'] = 'node' + H
d['system']['glibc']['version'] = '2.23' + H
d['gpu']['driver']['version'] = '390.144'
next(t for t in d['cuda']['toolkits'] if t['home'] == '/usr/local/cuda-10.2')['version'] = '10.2.89' + H
for dev in d['gpu']['devices']:
    dev['name'] = 'TeslaXX' + H
d['conda']['packages'][0]['name'] = 'pkg' + H
d['pip']['distributions'][0]['name'] = 'dist' + H
d['frameworks']['mmcv']['version'] = '1.2.0' + H
d['checks']['findings'][0]['subject'] = 'subject' + H
d['warnings'] = ['warning' + H]
dump = lambda d: json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False).encode()
def write(path, raw):
    open(path, 'wb').write(raw)
    open(path.replace('.lock.json', '-utf8.lock.json'), 'wb').write(raw.decode('utf-8', 'replace').encode())
# a byte that is not UTF-8 inside each GPU name (cJSON keeps it as it is)
write(sys.argv[2], dump(d).replace(b'"TeslaXX', b'"Tesla\xff', 2))
d['gpu']['driver']['version'] = '390.144' + H
open(sys.argv[3], 'wb').write(dump(d))
# and one in the driver's version
d['gpu']['driver']['version'] = '390.144XX'
write(sys.argv[4], dump(d).replace(b'"390.144XX"', b'"390.144\xff"', 1))
PY


# the checker itself catches each kind of raw byte it is meant to
# (echo in lib.sh reads backslashes, so the bytes are named, not quoted)
for what in ESC:033 BEL:007 DEL:177 C1-CSI:302233 RLO:342200256 LRI:342201246 0xFF:377; do
	printf "x$(echo "${what#*:}" | sed 's/\([0-7][0-7][0-7]\)/\\\1/g')y\n" >probe.txt
	if [ "$(clean probe.txt)" = clean ]; then not_ok "the checker flags a raw ${what%:*}"; else ok "the checker flags a raw ${what%:*}"; fi
done
check_eq "the hostile lock really holds raw ESC, BEL and U+202E in glibc's version" \
	"1b 7 1b 202e" "$("$PYTHON" -c '
import json, sys
v = json.load(open(sys.argv[1], encoding="utf-8", errors="surrogateescape"))["system"]["glibc"]["version"]
print(" ".join("%x" % ord(c) for c in v if ord(c) in (0x1b, 7, 0x202e)))' hostile.lock.json)"
check_eq "the hostile lock really holds the byte 0xff in both GPU names" "2" \
	"$(LC_ALL=C grep -c "$(printf '"Tesla\377')" hostile.lock.json)"

# --- the schema, read by python3-jsonschema: where the hostile text may go, and where not
# schema_errors FILE: "valid"; or each place the schema's checker finds in error, and its
# status (an older python3-jsonschema also calls a field that fails its own
# check an unevaluated property of its object: that is the same place)
check_eq "the hostile lock is valid by the schema (its UTF-8 twin: json cannot read the 0xff bytes)" \
	valid "$(schema_errors hostile-utf8.lock.json)"
check_eq "the same lock with the hostile text in the driver's version is not, for that field alone" \
	"gpu/driver/version
status 1" "$(schema_errors bad-driver.lock.json)"
check_eq "nor with a byte that is not UTF-8 there (its UTF-8 twin, with U+FFFD for the byte)" \
	"gpu/driver/version
status 1" "$(schema_errors bad-driver-ff-utf8.lock.json)"

# the escaped form of H, as a grep pattern (\ [ ] are literal)
esc='\\x1b\]0;owned\\x07\\x1b\[31m\\x7f\\xc2\\x9b2J\\u202egnp'

# --- show
"$ENVLOCK" show hostile.lock.json >show.txt 2>err
check_status "show of the hostile lock" 0 $?
check_eq "show: nothing raw reaches the terminal" clean "$(clean show.txt)"
check_grep "show: glibc's version, escaped" "^glibc       2.23$esc\$" show.txt
check_grep "show: the host name, escaped" " on node$esc\$" show.txt
check_grep "show: the CUDA toolkit's version, escaped" "^CUDA        10.2.89$esc at /usr/local/cuda-10.2 (default)\$" show.txt
check_grep "show: the GPU name with its invalid byte, escaped and grouped" "^GPUs        2 x Tesla\\\\xff$esc\$" show.txt
check_grep "show: mmcv's version, escaped" "^mmcv-full   1.2.0$esc (ops)" show.txt
check_grep "show: a saved finding's subject, escaped" "^  - breaking: subject$esc\$" show.txt
check_grep "show: a warning, escaped" "^  - warning$esc\$" show.txt

# --- check: the rules quote the lock's values in their findings
"$ENVLOCK" check hostile.lock.json >check.txt 2>err
check_status "check of the hostile lock" 1 $?
check_eq "check: nothing raw reaches the terminal" clean "$(clean check.txt)"
check_grep "check: the subject quotes the CUDA version, escaped" "^breaking  gpu        driver 390.144 / CUDA 10.2.89$esc\$" check.txt
check_grep "check: the message quotes it, escaped" "^ *CUDA 10.2.89$esc needs NVIDIA driver 440.33 or newer; this machine has 390.144\$" check.txt
check_grep "check: the fix quotes mmcv's version, escaped" "fix: .*accepts mmcv-full 1.2.0$esc (" check.txt
"$ENVLOCK" check --json hostile.lock.json >check.json 2>err
check_eq "check --json of a lock with a byte that is not UTF-8: still valid JSON" "ok" \
	"$("$PYTHON" -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8")); print("ok")' check.json 2>&1 | tail -n 1)"
NO_COLOR= "$ENVLOCK" check "$good" >good-check.txt
check_eq "check: a normal lock's findings are unchanged by the escaping" \
	"$("$PYTHON" -c '
import json, subprocess, sys
f = json.loads(subprocess.run([sys.argv[1], "check", "--json", sys.argv[2]], capture_output=True).stdout)["findings"]
print("\n".join("%-9s %-10s %s\n%20s%s\n%20ssource: %s" % (x["severity"], x["section"], x["subject"], "", x["message"], "", x["source"])
      if not x["fix"] else "%-9s %-10s %s\n%20s%s\n%20sfix: %s\n%20ssource: %s" % (x["severity"], x["section"], x["subject"], "", x["message"], "", x["fix"], "", x["source"]) for x in f))' "$ENVLOCK" "$good")" \
	"$(sed '$d' good-check.txt)"

# --- diff, and the drift table of three
"$ENVLOCK" diff "$good" hostile.lock.json >diff.txt 2>err
check_status "diff against the hostile lock" 1 $?
check_eq "diff: nothing raw reaches the terminal" clean "$(clean diff.txt)"
check_grep "diff: a conda package name as a key, escaped" "^  pkg$esc " diff.txt
check_grep "diff: glibc's new value, escaped" "2.23 *→ 2.23$esc " diff.txt
check_grep "diff: the GPU names, escaped" "→ 2 × Tesla\\\\xff$esc " diff.txt
check_grep "diff: a finding's subject, escaped" "^  driver 390.144 / CUDA 10.2.89$esc  new: rule driver-too-old-for-cuda" diff.txt
"$ENVLOCK" diff "$good" hostile.lock.json "$good" >drift.txt 2>err
check_status "drift table with the hostile lock" 1 $?
check_eq "drift: nothing raw reaches the terminal" clean "$(clean drift.txt)"
check_grep "drift: the odd value, escaped" "hostile.lock.json: 2.23$esc\$" drift.txt

# --- hostile text where the schema does not allow it: every command refuses the lock
why="'bad-driver.lock.json': not a valid lockfile: gpu.driver.version: \"390.144\\x1b]0;owned\\x07\\x1b[31m\\x7f\\xc2\\x9b2J\\u202egnp\" is not of the form ^[0-9]+(\\.[0-9]+){1,2}\$"
refused "show refuses hostile text in the driver's version" "$why" show bad-driver.lock.json
refused "check refuses it" "$why" check bad-driver.lock.json
refused "check --json refuses it" "$why" check --json bad-driver.lock.json
refused "diff refuses it" "$why" diff "$good" bad-driver.lock.json
refused "the drift table refuses it" "$why" diff "$good" bad-driver.lock.json "$good"
refused "report refuses it" "$why" report bad-driver.lock.json
why="'bad-driver-ff.lock.json': not a valid lockfile: gpu.driver.version: \"390.144\\xff\" is not of the form ^[0-9]+(\\.[0-9]+){1,2}\$"
refused "show refuses a byte that is not UTF-8 in the driver's version" "$why" show bad-driver-ff.lock.json
refused "check refuses it" "$why" check bad-driver-ff.lock.json
refused "diff refuses it" "$why" diff "$good" bad-driver-ff.lock.json
refused "report refuses it" "$why" report bad-driver-ff.lock.json

# --- a hundred thousand GPUs: grouped by sorting, not by comparing every pair
# (each device has the bus address the schema requires; the last one no name)
"$PYTHON" - "$good" big.lock.json expected.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = ['NVIDIA A100-SXM4-80GB', 'Tesla V100-SXM2-32GB', 'NVIDIA H100 80GB HBM3']
devs = [{'bus': '%08x:00:00.0' % i, 'name': names[(i * i) % 3] if i % 1000 else 'GPU %d' % (i // 1000)}
        for i in range(100000)]
devs[99999] = {'bus': '0001869f:00:00.0'}
d['gpu']['devices'] = devs
json.dump(d, open(sys.argv[2], 'w'))
# the lines show must print: each name once, in order of first appearance, with its count
counts = {}
for x in devs:
    n = x.get('name', 'unknown GPU')
    counts[n] = counts.get(n, 0) + 1
with open(sys.argv[3], 'w') as f:
    for i, (n, c) in enumerate(counts.items()):
        f.write('%-12s%d x %s\n' % ('GPUs' if i == 0 else '', c, n))
PY
check_eq "the lock of 100000 GPUs is valid by the schema" valid "$(schema_errors big.lock.json)"
timeout 20 "$ENVLOCK" show big.lock.json >big.txt
check_status "show of 100000 GPUs within 20 s" 0 $?
sed -n '/^GPUs /,/^CUDA /p' big.txt | sed '$d' >big-gpus.txt
check_diff "show: 100000 GPUs grouped, in order of first appearance" expected.txt big-gpus.txt
a100=$(grep ' x NVIDIA A100-SXM4-80GB$' expected.txt)
check_eq "show: the A100s' count line" "$a100" "$(grep ' x NVIDIA A100-SXM4-80GB$' big.txt)"
check_eq "show: the A100 count is the lock's" \
	"$("$PYTHON" -c 'import json, sys; print(sum(x.get("name") == "NVIDIA A100-SXM4-80GB" for x in json.load(open(sys.argv[1]))["gpu"]["devices"]))' big.lock.json)" \
	"$(echo "$a100" | sed 's/^ *\([0-9]*\) x .*/\1/')"
