#!/bin/sh
# A lock is untrusted input: show, check and diff print its strings with
# every control character (C0, DEL, C1), bidi control and byte that is not
# UTF-8 escaped (\x1b, \u202e, \xff), never raw. And show groups a
# hundred thousand GPUs in well under its time limit.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
good=$GOLDEN/ubuntu1604-mmdet.lock.json
# OSC "set the window title" ended by BEL, a colour CSI, DEL, the C1 CSI (U+009B)
# and RIGHT-TO-LEFT OVERRIDE (U+202E); the invalid byte is added to the raw file below
"$PYTHON" - "$good" hostile.lock.json <<'PY'
import json, sys
H = '\x1b]0;owned\x07\x1b[31m\x7f\u009b2J\u202egnp'
d = json.load(open(sys.argv[1]))
d['host']['hostname'] = 'node' + H
d['system']['glibc']['version'] = '2.23' + H
d['gpu']['driver']['version'] = '390.144' + H
for dev in d['gpu']['devices']:
    dev['name'] = 'TeslaXX' + H
d['conda']['packages'][0]['name'] = 'pkg' + H
d['pip']['distributions'][0]['name'] = 'dist' + H
d['frameworks']['mmcv']['version'] = '1.2.0' + H
d['checks']['findings'][0]['subject'] = 'subject' + H
d['warnings'] = ['warning' + H]
raw = json.dumps(d, indent=2, sort_keys=True, ensure_ascii=False).encode()
# a byte that is not UTF-8 inside each GPU name (cJSON keeps it as it is)
raw = raw.replace(b'"TeslaXX', b'"Tesla\xff', 2)
open(sys.argv[2], 'wb').write(raw)
PY

# clean FILE: "clean" when FILE is UTF-8 with no control character but
# newline, no C1 control, no bidi control; else what it found
clean() {
	"$PYTHON" - "$1" <<'PY'
import sys
raw = open(sys.argv[1], 'rb').read()
try:
    s = raw.decode('utf-8')
except UnicodeDecodeError as e:
    sys.exit(print('not UTF-8: %s' % e))
bad = sorted({'U+%04X' % ord(c) for c in s if (ord(c) < 0x20 and c != '\n') or 0x7f <= ord(c) < 0xa0
              or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069})
print('clean' if not bad else ' '.join(bad))
PY
}

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
# the escaped form of H, as a grep pattern (\ [ ] are literal)
esc='\\x1b\]0;owned\\x07\\x1b\[31m\\x7f\\xc2\\x9b2J\\u202egnp'

# --- show
"$ENVLOCK" show hostile.lock.json >show.txt 2>err
check_status "show of the hostile lock" 0 $?
check_eq "show: nothing raw reaches the terminal" clean "$(clean show.txt)"
check_grep "show: glibc's version, escaped" "^glibc       2.23$esc\$" show.txt
check_grep "show: the host name, escaped" " on node$esc\$" show.txt
check_grep "show: the driver version, escaped" "^driver      390.144$esc (proprietary)" show.txt
check_grep "show: the GPU name with its invalid byte, escaped and grouped" "^GPUs        2 x Tesla\\\\xff$esc\$" show.txt
check_grep "show: mmcv's version, escaped" "^mmcv-full   1.2.0$esc (ops)" show.txt
check_grep "show: a saved finding's subject, escaped" "^  - breaking: subject$esc\$" show.txt
check_grep "show: a warning, escaped" "^  - warning$esc\$" show.txt

# --- check: the rules quote the lock's values in their findings
"$ENVLOCK" check hostile.lock.json >check.txt 2>err
check_status "check of the hostile lock" 1 $?
check_eq "check: nothing raw reaches the terminal" clean "$(clean check.txt)"
check_grep "check: the subject quotes the driver, escaped" "^breaking  gpu        driver 390.144$esc / CUDA 10.2.89\$" check.txt
check_grep "check: the message quotes it, escaped" "this machine has 390.144$esc\$" check.txt
check_grep "check: the fix quotes mmcv's version, escaped" "fix: .*matches mmcv 1.2.0$esc\$" check.txt
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
check_grep "diff: a finding's subject, escaped" "^  driver 390.144$esc / CUDA 10.2.89  new: rule driver-too-old-for-cuda" diff.txt
"$ENVLOCK" diff "$good" hostile.lock.json "$good" >drift.txt 2>err
check_status "drift table with the hostile lock" 1 $?
check_eq "drift: nothing raw reaches the terminal" clean "$(clean drift.txt)"
check_grep "drift: the odd value, escaped" "hostile.lock.json: 2.23$esc\$" drift.txt

# --- a hundred thousand GPUs: grouped by sorting, not by comparing every pair
"$PYTHON" - "$good" big.lock.json expected.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = ['NVIDIA A100-SXM4-80GB', 'Tesla V100-SXM2-32GB', 'NVIDIA H100 80GB HBM3']
devs = [{'name': names[(i * i) % 3] if i % 1000 else 'GPU %d' % (i // 1000)} for i in range(100000)]
devs[99999] = {}
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
timeout 20 "$ENVLOCK" show big.lock.json >big.txt
check_status "show of 100000 GPUs within 20 s" 0 $?
sed -n '/^GPUs /,/^CUDA /p' big.txt | sed '$d' >big-gpus.txt
check_diff "show: 100000 GPUs grouped, in order of first appearance" expected.txt big-gpus.txt
a100=$(grep ' x NVIDIA A100-SXM4-80GB$' expected.txt)
check_eq "show: the A100s' count line" "$a100" "$(grep ' x NVIDIA A100-SXM4-80GB$' big.txt)"
check_eq "show: the A100 count is the lock's" \
	"$("$PYTHON" -c 'import json, sys; print(sum(x.get("name") == "NVIDIA A100-SXM4-80GB" for x in json.load(open(sys.argv[1]))["gpu"]["devices"]))' big.lock.json)" \
	"$(echo "$a100" | sed 's/^ *\([0-9]*\) x .*/\1/')"
