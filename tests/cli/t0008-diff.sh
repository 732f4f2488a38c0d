#!/bin/sh
# envlock diff: two locks (severities, order, filters, JSON), a fleet's
# drift table, bad input, colour.
. "$(dirname "$0")/lib.sh"

A=$GOLDEN/ubuntu1604-mmdet.lock.json
B=$GOLDEN/mmpose-container.lock.json
BROKEN=$GOLDEN/broken.lock.json

# a lock against itself: nothing but the verdict
"$ENVLOCK" diff "$A" "$A" >"$scratch/out" 2>"$scratch/err"
check_status "diff of a lock with itself" 0 $?
check_eq "identical: the verdict only" "identical" "$(cat "$scratch/out")"
check_eq "identical: nothing on stderr" "" "$(cat "$scratch/err")"

# two real machines: core changes first, every risky line before the info lines of its section
"$ENVLOCK" diff "$A" "$B" >"$scratch/out" 2>"$scratch/err"
check_status "diff of two machines" 1 $?
check_eq "first section: gpu" "gpu" "$(sed -n 1p "$scratch/out")"
check_eq "first line: the driver major changed" "  driver          450.142.00               → 535.129.03                 risky" "$(sed -n 2p "$scratch/out")"
check_eq "the ten core changes are risky, in this order (torchvision and mmcv's ops run in torch's process: their CUDA runtime is core)" \
"gpu driver 450.142.00 535.129.03
cuda version 10.2.89 11.8.89
cudnn version 8.2.1 8.9.7
compilers gcc 5.4.0 11.4.0
python version 3.7.16 3.10.12
frameworks mmcv 1.7.5 2.1.0
frameworks mmdet 2.25.1 3.2.0
frameworks torch 1.10.0+cu102 2.1.2+cu118
loads mmcv libcudart /usr/local/cuda-10.2/lib64/libcudart.so.10.2.89
loads torchvision libcudart /usr/local/cuda-10.2/lib64/libcudart.so.10.2.89" \
"$(awk '/^[a-z]/ { s = $1 } / risky$/ && $1 !~ /^\// { print s, $1, $2, $4 }' "$scratch/out")"
check_eq "within each section, nothing less severe comes before a risky line" "" \
	"$(awk '/^[a-z]/ { info = 0; next } / info$/ { info = 1 } / risky$/ && info { print }' "$scratch/out")"
check_eq "sections with a risky change come before info-only ones" "gpu cuda cudnn compilers python frameworks loads system conda pip env" \
	"$(grep '^[a-z]' "$scratch/out" | tr '\n' ' ' | sed 's/ $//')"
verdict=$(tail -n 1 "$scratch/out")
case "$verdict" in
# the ten core changes, and B's finding that mmcv's ops load another CUDA runtime than torch
"0 breaking, 11 risky, "*" info differences: core parts changed, B may not run what A runs") ok "verdict counts and says what it means" ;;
*) not_ok "verdict counts and says what it means"; echo "#   got: $verdict" ;;
esac
check_grep "conda and pip kept apart: conda numpy" "^  numpy  *1.21.6 py37h976b520_0 conda-forge  *→ (none)  *info$" "$scratch/out"
check_grep "conda and pip kept apart: pip numpy" "^  numpy  *1.21.6 (conda)  *→ 1.26.3  *info$" "$scratch/out"
check_grep "library digests shortened for reading" "libcublas.so.10.2.2.89 sha256:9ea4bf8f0747… " "$scratch/out"
if grep -q "hostname\|vision-gpu07\|created" "$scratch/out"; then not_ok "hostname and created are not compared"; else ok "hostname and created are not compared"; fi

# breaking: a rule that fails on B and not on A comes first, with its fix
"$ENVLOCK" diff "$A" "$BROKEN" >"$scratch/out"
check_status "diff towards a broken machine" 1 $?
check_eq "breaking section first" "cudnn" "$(sed -n 1p "$scratch/out")"
check_grep "the finding names its rule and severity" "^  /usr/local/cuda-11.3/lib64/libcudnn.so.8.2.0  *new: rule soname-link-missing  *breaking$" "$scratch/out"
check_eq "its message, fix and source follow" \
"      libcudnn.so.8.2.0 has soname libcudnn.so.8, but /usr/local/cuda-11.3/lib64/libcudnn.so.8 does not exist: programs fail with \"libcudnn.so.8: cannot open shared object file\"
      fix: ln -s libcudnn.so.8.2.0 /usr/local/cuda-11.3/lib64/libcudnn.so.8 && ldconfig" "$(sed -n 3,4p "$scratch/out")"
case "$(tail -n 1 "$scratch/out")" in
"2 breaking, "*": B cannot run what A runs") ok "verdict: B cannot run what A runs" ;;
*) not_ok "verdict: B cannot run what A runs"; tail -n 1 "$scratch/out" | sed 's/^/#   /' ;;
esac

# --only, --ignore
"$ENVLOCK" diff --only cuda "$A" "$B" >"$scratch/out"
check_status "--only cuda" 1 $?
check_eq "--only cuda: one section" "cuda" "$(grep '^[a-z]' "$scratch/out")"
check_eq "--only cuda: its lines (the environment's own CUDA too)" "16" "$(grep -c '^  ' "$scratch/out")"
check_eq "--only cuda: verdict" "0 breaking, 1 risky, 15 info differences: core parts changed, B may not run what A runs" "$(tail -n 1 "$scratch/out")"
"$ENVLOCK" diff "$A" "$B" --only cuda --only python >"$scratch/out"
check_eq "--only twice, after the files" "cuda python" "$(grep '^[a-z]' "$scratch/out" | tr '\n' ' ' | sed 's/ $//')"
"$ENVLOCK" diff --ignore pip --ignore conda --ignore env "$A" "$B" >"$scratch/out"
if grep -q '^pip$\|^conda$\|^env$' "$scratch/out"; then not_ok "--ignore drops sections"; else ok "--ignore drops sections"; fi
check_grep "--ignore keeps the rest" "^cuda$" "$scratch/out"
"$PYTHON" - "$A" "$scratch/numpy.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["pip"]["distributions"]:
    if p["name"] == "numpy":
        p["version"] = "1.21.5"
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" diff --ignore pip "$A" "$scratch/numpy.json" >"$scratch/out"
check_status "identical once the differing section is ignored" 0 $?
check_eq "identical after filters: the verdict only" "identical" "$(cat "$scratch/out")"
"$ENVLOCK" diff "$A" "$scratch/numpy.json" >"$scratch/out"
check_eq "one pip change, exactly" "pip
  numpy  1.21.6 (conda) → 1.21.5 (conda)  info
0 breaking, 0 risky, 1 info difference: no core part changed" "$(cat "$scratch/out")"
"$ENVLOCK" diff --only cudaa "$A" "$B" >"$scratch/out" 2>"$scratch/err"
check_status "--only an unknown section" 2 $?
check_eq "unknown section: one line with the choices" "envlock: diff: --only 'cudaa': not a section (sections: system, gpu, cuda, cudnn, compilers, python, conda, pip, frameworks, loads, repos, configs, checkpoints, env)" "$(cat "$scratch/err")"
"$ENVLOCK" diff --all "$A" "$scratch/numpy.json" >"$scratch/out"
check_grep "--all lists identical items" "^  torch  *1.10.0+cu102$" "$scratch/out"
check_eq "--all: same verdict" "0 breaking, 0 risky, 1 info difference: no core part changed" "$(tail -n 1 "$scratch/out")"

# --json: the same data
"$ENVLOCK" diff "$A" "$B" >"$scratch/human"
"$ENVLOCK" diff --json "$A" "$B" >"$scratch/out.json"
check_status "--json" 1 $?
check_eq "--json parses and agrees with the human output" "ok" "$("$PYTHON" - "$scratch/out.json" "$scratch/human" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
human = open(sys.argv[2]).read().splitlines()
c = d["counts"]
want = "%d breaking, %d risky, %d info differences" % (c["breaking"], c["risky"], c["info"])
lines = [l for l in human if re.match(r"^  \S", l)]
problems = []
if not human[-1].startswith(want): problems.append("counts %s vs %s" % (want, human[-1]))
if d["verdict"] != human[-1]: problems.append("verdict")
if len(d["differences"]) != c["breaking"] + c["risky"] + c["info"]: problems.append("list length")
if len(d["differences"]) != len(lines): problems.append("%d entries vs %d lines" % (len(d["differences"]), len(lines)))
if d["identical"] or d["a"]["hostname"] != "vision-gpu07" or not d["b"]["id"].startswith("sha256:"): problems.append("header")
first = d["differences"][0]
if (first["section"], first["key"], first["a"], first["b"], first["severity"], first["change"]) != \
   ("gpu", "driver", "450.142.00", "535.129.03", "risky", "changed"): problems.append("first %r" % first)
if first["reason"] != "driver major 450 → 535": problems.append("reason")
cuda = [x for x in d["differences"] if x["section"] == "cuda" and x["key"] == "version"][0]
if cuda["reason"] != "CUDA release 10.2 → 11.8": problems.append("cuda reason")
print("; ".join(problems) or "ok")
PY
)"
"$ENVLOCK" diff --json "$A" "$A" >"$scratch/out.json"
check_status "--json of identical locks" 0 $?
check_eq "--json of identical locks" "True 0 identical" "$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["identical"], len(d["differences"]), d["verdict"])' "$scratch/out.json")"

# a fleet: three identical nodes and one that drifted
mkdir -p "$scratch/locks"
for node in node1 node2 node3; do cp "$A" "$scratch/locks/$node.json"; done
"$PYTHON" - "$A" "$scratch/locks/node4.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["hostname"] = "node4"
d["frameworks"]["torch"]["version"] = "1.10.1+cu102"
d["env"]["variables"]["CUDA_VISIBLE_DEVICES"] = "0"
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" diff "$scratch"/locks/node1.json "$scratch"/locks/node2.json "$scratch"/locks/node3.json "$scratch"/locks/node4.json >"$scratch/out" 2>"$scratch/err"
check_status "drift over four locks" 1 $?
check_eq "the drift table names the odd file and its value" \
"frameworks
  torch                 1.10.0+cu102  3 of 4  risky     node4.json: 1.10.1+cu102
env
  CUDA_VISIBLE_DEVICES  0,1           3 of 4  info      node4.json: 0" "$(sed '$d' "$scratch/out")"
case "$(tail -n 1 "$scratch/out")" in
"2 of "*" items drift across 1 of 4 files") ok "drift verdict" ;;
*) not_ok "drift verdict"; tail -n 1 "$scratch/out" | sed 's/^/#   /' ;;
esac
"$ENVLOCK" diff --json "$scratch"/locks/node*.json >"$scratch/out.json"
check_status "drift --json" 1 $?
check_eq "drift --json: the same data" "4 2 1 torch 1.10.0+cu102 3 $scratch/locks/node4.json=1.10.1+cu102" "$("$PYTHON" - "$scratch/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = [x for x in d["drift"] if x["key"] == "torch"][0]
print(len(d["files"]), d["drifting"], d["odd_files"], t["key"], t["majority"], t["majority_count"],
      " ".join("%s=%s" % (o["file"], o["value"]) for o in t["differs"]))
PY
)"
"$ENVLOCK" diff "$scratch"/locks/node1.json "$scratch"/locks/node2.json "$scratch"/locks/node3.json >"$scratch/out"
check_status "drift over identical locks" 0 $?
case "$(cat "$scratch/out")" in
"identical: "*" items the same in all 3 files") ok "drift of identical locks: the verdict only" ;;
*) not_ok "drift of identical locks: the verdict only"; sed 's/^/#   /' "$scratch/out" ;;
esac
"$ENVLOCK" diff --only frameworks "$scratch"/locks/node*.json >"$scratch/out"
check_eq "drift --only frameworks" "frameworks" "$(grep '^[a-z]' "$scratch/out")"

# bad input: one line naming the file, exit 2, never a crash
bad() { # WHAT FILE EXPECTED_WHY
	"$ENVLOCK" diff "$A" "$2" >"$scratch/out" 2>"$scratch/err"
	check_status "$1" 2 $?
	check_eq "$1: one line naming the file" "envlock: diff: '$2': $3" "$(cat "$scratch/err")"
	check_eq "$1: nothing on stdout" "" "$(cat "$scratch/out")"
}
printf 'not json' >"$scratch/bad.json"
bad "not JSON" "$scratch/bad.json" "not valid JSON (line 1)"
printf '{"a": 1}\n' >"$scratch/other.json"
bad "JSON that is not a lockfile" "$scratch/other.json" 'not an envlock lockfile (no "envlock" version)'
printf '[1, 2]\n' >"$scratch/array.json"
bad "a JSON array" "$scratch/array.json" 'not an envlock lockfile (no "envlock" version)'
printf '{"envlock": 2, "pip": {}}\n' >"$scratch/v2.json"
bad "a newer format version" "$scratch/v2.json" "lockfile format 2 is not supported (this envlock reads 1)"
head -c 3000 "$A" >"$scratch/truncated.json"
bad "a truncated lockfile" "$scratch/truncated.json" "not valid JSON (line $(($(wc -l <"$scratch/truncated.json") + 1)))"
: >"$scratch/empty.json"
bad "an empty file" "$scratch/empty.json" "not valid JSON (line 1)"
bad "a missing file" "$scratch/none.json" "no such file"
"$PYTHON" -c 'import sys; sys.stdout.write("[" * 50000000)' >"$scratch/nested.json"
start=$(date +%s)
bad "50 MB of nested arrays" "$scratch/nested.json" "nested more than 1000 levels deep, not a lockfile"
check_eq "50 MB of nested arrays fails fast" "fast" "$([ $(($(date +%s) - start)) -le 3 ] && echo fast || echo slow)"
rm -f "$scratch/nested.json"
head -c 70000000 /dev/zero >"$scratch/huge.json"
bad "a 70 MB file" "$scratch/huge.json" "larger than 64 MiB, not a lockfile"
rm -f "$scratch/huge.json"
"$ENVLOCK" diff "$A" "$A" "$scratch/bad.json" >/dev/null 2>"$scratch/err"
check_status "drift with a bad file" 2 $?
check_eq "drift with a bad file: one line" "envlock: diff: '$scratch/bad.json': not valid JSON (line 1)" "$(cat "$scratch/err")"
# a fleet loaded on several threads says its files' warnings in their order, and the first bad file
mkdir -p "$scratch/fleet"
i=0
while [ $i -lt 40 ]; do cp "$A" "$scratch/fleet/n$i.json"; i=$((i + 1)); done
"$PYTHON" - "$A" "$scratch/fleet" <<'PY'
import json, sys
for n in (7, 8, 23):
    d = json.load(open(sys.argv[1]))
    d["host"]["hostname"] = "edited%d" % n
    json.dump(d, open("%s/n%d.json" % (sys.argv[2], n), "w"), indent=2, sort_keys=True)
PY
set --
i=0
while [ $i -lt 40 ]; do set -- "$@" "$scratch/fleet/n$i.json"; i=$((i + 1)); done
"$ENVLOCK" diff "$@" >/dev/null 2>"$scratch/err"
check_status "a fleet of 40 with three edited locks (the host is not compared)" 0 $?
check_eq "its warnings come in the files' order" "n7.json n8.json n23.json" \
	"$(sed -n "s|^envlock: warning: '$scratch/fleet/\(n[0-9]*\.json\)': its stored id .* it was edited after it was saved$|\1|p" "$scratch/err" | tr '\n' ' ' | sed 's/ $//')"
echo 'not json' >"$scratch/fleet/n30.json"
echo '[' >"$scratch/fleet/n35.json"
"$ENVLOCK" diff "$@" >/dev/null 2>"$scratch/err"
check_status "the fleet with two bad files" 2 $?
check_eq "the first bad file is named, after the warnings of the files before it" \
	"n7.json n8.json n23.json|envlock: diff: '$scratch/fleet/n30.json': not valid JSON (line 1)" \
	"$(sed -n "s|^envlock: warning: '$scratch/fleet/\(n[0-9]*\.json\)'.*|\1|p" "$scratch/err" | tr '\n' ' ' | sed 's/ $//')|$(grep -v warning "$scratch/err")"
set --
# deep but within cJSON's nesting limit, where a lock never nests: the schema refuses it at once
"$PYTHON" - "$scratch/deep.json" <<'PY'
import json, sys
deep = "[" * 900 + "]" * 900
open(sys.argv[1], "w").write('{"envlock": 1, "cuda": {"toolkits": %s}, "pip": {"status": "present", "distributions": [%s]},'
                             ' "frameworks": {"torch": %s}, "env": {"variables": {"X": %s}}}' % (deep, deep, deep, deep))
PY
"$ENVLOCK" diff "$scratch/deep.json" "$scratch/deep.json" >"$scratch/out" 2>"$scratch/err"
check_status "a deeply nested lock of the wrong shape" 2 $?
check_eq "refused in one line, naming the file and a field" "1 yes" \
	"$(wc -l <"$scratch/err" | tr -d ' ') $(grep -q "^envlock: diff: '$scratch/deep.json': not a valid lockfile: [a-z]" "$scratch/err" && echo yes || echo no)"
# and where a lock may hold any JSON (a verify stage's figures): loads, compares, no crash
"$PYTHON" - "$A" "$scratch/deepfig.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stages = [{"stage": s, "status": "skipped", "reason": "no GPU", "figures": {}} for s in ("toolchain", "runtime", "training", "cudnn", "lock")]
d["verify"] = {"envlock_verify": 1, "result": "no-gpu", "exit_status": 3, "steps": 200, "stages": stages}
text = json.dumps(d, indent=2, sort_keys=True)
# 900 levels of arrays inside the first stage's figures (Python's json cannot build them, so as text)
open(sys.argv[2], "w").write(text.replace('"figures": {}', '"figures": {"deep": ' + "[" * 900 + "]" * 900 + "}", 1))
PY
"$ENVLOCK" diff "$scratch/deepfig.json" "$scratch/deepfig.json" >"$scratch/out" 2>"$scratch/err"
check_status "a deeply nested (but valid) lock" 0 $?
"$ENVLOCK" diff "$A" "$scratch/deepfig.json" >/dev/null 2>"$scratch/err"
check_status "a deeply nested lock against a real one (verify is left out of the comparison)" 0 $?
"$ENVLOCK" diff "$A" 2>"$scratch/err" >/dev/null
check_status "one file only" 2 $?
check_eq "one file only: one line saying what it needs" "envlock: diff: expected two lockfiles (or more for a drift table), got 1" "$(cat "$scratch/err")"
"$ENVLOCK" diff --help >"$scratch/out"
check_status "--help" 0 $?
check_grep "--help lists the sections" "sections: system, gpu, cuda" "$scratch/out"

# a conda package is known by its archive: the same md5 from another channel
# (a kit's folder, a mirror) is the same package; another md5 is not
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" "$scratch/kitchan.json" "$scratch/rebuilt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["conda"]["packages"][0]
p["channel"] = "file:///srv/kit/conda"
p["url"] = "file:///srv/kit/conda/" + p["url"].rsplit("/", 1)[1]
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
p["md5"] = "0" * 32
json.dump(d, open(sys.argv[3], "w"), indent=2, sort_keys=True)
PY
"$ENVLOCK" diff --only conda "$GOLDEN/ubuntu1604-mmdet.lock.json" "$scratch/kitchan.json" >"$scratch/out" 2>/dev/null
check_status "conda: another channel, the same archive md5: no difference" 0 $?
"$ENVLOCK" diff --only conda "$GOLDEN/ubuntu1604-mmdet.lock.json" "$scratch/rebuilt.json" >"$scratch/out" 2>/dev/null
check_status "conda: another channel and another md5: a difference" 1 $?
check_grep "conda: shown with both channels, a local one by its path" "^  _libgcc_mutex  *0.1 main pkgs/main  *→ 0.1 main /srv/kit/conda  *info$" "$scratch/out"

# colour: never into a file or with NO_COLOR; on a terminal, red and yellow
esc=$(printf '\033')
"$ENVLOCK" diff "$A" "$BROKEN" >"$scratch/out"
if grep -q "$esc" "$scratch/out"; then not_ok "no escape codes when stdout is not a tty"; else ok "no escape codes when stdout is not a tty"; fi
if command -v script >/dev/null 2>&1 && script -qc true /dev/null >/dev/null 2>&1; then
	TERM=xterm script -qc "'$ENVLOCK' diff '$A' '$BROKEN'" /dev/null >"$scratch/tty" 2>&1
	check_grep "a terminal gets red for breaking" "${esc}\[31m" "$scratch/tty"
	check_grep "a terminal gets yellow for risky" "${esc}\[33m" "$scratch/tty"
	NO_COLOR=1 TERM=xterm script -qc "'$ENVLOCK' diff '$A' '$BROKEN'" /dev/null >"$scratch/tty" 2>&1
	if grep -q "$esc\[" "$scratch/tty"; then not_ok "NO_COLOR on a terminal: no colour"; else ok "NO_COLOR on a terminal: no colour"; fi
else
	skip "a terminal gets red for breaking" "no script(1) to make a pty"
	skip "a terminal gets yellow for risky" "no script(1) to make a pty"
	skip "NO_COLOR on a terminal: no colour" "no script(1) to make a pty"
fi
