#!/bin/sh
# Numbers in locks and in what envlock prints are exact: a float by the
# shortest text that reads back as the same double (lr 0.005, not
# 0.0050000000000000001; 1e-05), an integer by its digits up to the
# 64-bit limits (a seed of 2**60 + 1 is 1152921504606846977, not
# 1.152921504606847e+18), through save, load, diff and the lock's id; an
# integer past 64 bits is named as not evaluated, never rounded to a
# double. A lock an earlier envlock wrote
# (an integer past 2^53 as the double's text) keeps its id. With
# ENVLOCK_OLD set to an earlier envlock binary, a lock it saves is
# checked too.
. "$(dirname "$0")/lib.sh"

MM=$FIXTURES/ubuntu1604-mmdet
TINY=$top/tests/fixtures/configs/checks/configs/det/faster_rcnn_r50_fpn_1x_tiny3.py

# the mmdetection 2.25 chain (optimizer.lr = 0.02) and a seed past 2^53, written two ways
cat >cfg.py <<EOF
_base_ = '$TINY'
seed = 2**60 + 1
randomness = dict(seed=1152921504606846977, eps=1e-05, low=-(2**62) * 2)
EOF

"$ENVLOCK" save -q --root "$MM" --config cfg.py -o a.lock >save.out 2>&1
check_status "save of a config with a seed of 2**60 + 1" 0 $?
"$ENVLOCK" save -q --root "$MM" --config cfg.py --cfg-options optimizer.lr=0.005 randomness.seed=1152921504606846978 \
	big=9223372036854775807 small=-9223372036854775808 huge=18446744073709551616 -o b.lock >save.out 2>&1
check_status "save with --cfg-options of the 64-bit limits and past them" 0 $?

# the lock's text: each number as the config has it
check_eq "2**60 + 1 is written as its digits" 2 "$(grep -c '^ *"seed": 1152921504606846977,\{0,1\}$' a.lock)"
check_grep "the lr as the config writes it" '^ *"lr": 0.02,$' a.lock
check_grep "1e-05 as 1e-05" '^ *"eps": 1e-05,$' a.lock
check_grep "-(2**62) * 2 is int64's minimum" '^ *"low": -9223372036854775808,\{0,1\}$' a.lock
check_grep "0.005 as 0.005" '^ *"lr": 0.005,$' b.lock
check_grep "int64's maximum, exactly" '^ *"big": 9223372036854775807,$' b.lock
check_grep "int64's minimum, exactly" '^ *"small": -9223372036854775808,\{0,1\}$' b.lock
check_eq "past 64 bits: not in the value, named by its key" "absent huge" \
	"$("$PYTHON" -c 'import json,sys; e=json.load(open(sys.argv[1]))["configs"]["files"][0]["effective"]; print("huge" in e["value"] and "present" or "absent", " ".join(n["key"] for n in e["not_evaluated"] if "64 bits" in n["what"]))' b.lock)"
# Python reads integers exactly: the lock is what the config computed
check_eq "Python reads the seed as 2**60 + 1" "$((1 << 60)) 1" \
	"$("$PYTHON" -c 'import json,sys; v=json.load(open(sys.argv[1]))["configs"]["files"][0]["effective"]["value"]; print(2**60, v["seed"] - 2**60)' a.lock)"
if validate b.lock >val.out 2>&1; then ok "the lock validates against the schema"; else not_ok "the lock validates against the schema"; sed 's/^/#   /' val.out; fi

# diff shows each value as the config writes it
"$ENVLOCK" diff a.lock b.lock --only configs >diff.out 2>&1
check_status "diff of the two locks" 1 $?
check_grep "diff: optimizer.lr 0.02 → 0.005" "cfg.py: optimizer.lr  *0.02  *→ 0.005  " diff.out
check_grep "diff: the seed's digits" "cfg.py: randomness.seed  *1152921504606846977  *→ 1152921504606846978  " diff.out
check_grep "diff: int64's maximum" "cfg.py: big  *(none)  *→ 9223372036854775807  " diff.out
check_grep "diff: int64's minimum" "cfg.py: small  *(none)  *→ -9223372036854775808  " diff.out
check_eq "diff: nothing else of the config changed" 4 "$(grep -c '^  cfg.py: [a-z_.]*  .*→' diff.out)"
"$ENVLOCK" diff a.lock b.lock --only configs --json >diff.json 2>&1
check_eq "diff --json: the same text" "0.02 0.005" \
	"$("$PYTHON" -c 'import json,sys
for d in json.load(open(sys.argv[1]))["differences"]:
    if d["key"] == "cfg.py: optimizer.lr" and d["change"] == "changed": print(d["a"], d["b"])' diff.json 2>&1)"
"$ENVLOCK" diff a.lock a.lock >same.out 2>&1
check_status "a lock with big integers is the same as itself" 0 $?

# ids: saved, loaded, verified: from the text, and from the document
for l in a.lock b.lock; do
	check_eq "$l: show gives the stored id" "envlock $(jget $l id)" "$("$ENVLOCK" show $l 2>/dev/null | sed -n 1p)"
	"$ENVLOCK" check $l >check.out 2>&1
	check_eq "$l: its id is its content's" 0 "$(grep -c 'edited after it was saved' check.out)"
done
# keys in another order: the text is not the writer's, so the id comes from the document
"$PYTHON" - b.lock shuffled.lock <<'PY'
import json, sys
def rev(v):
    if isinstance(v, dict):
        return {k: rev(v[k]) for k in sorted(v, reverse=True)}
    return [rev(x) for x in v] if isinstance(v, list) else v
json.dump(rev(json.load(open(sys.argv[1]))), open(sys.argv[2], "w"), indent=1)
PY
check_eq "the same lock with its keys reversed has the same id" "envlock $(jget b.lock id)" \
	"$("$ENVLOCK" show shuffled.lock 2>/dev/null | sed -n 1p)"
"$ENVLOCK" check shuffled.lock >check.out 2>&1
check_eq "and verifies" 0 "$(grep -c 'edited after it was saved' check.out)"

# a lock an earlier envlock wrote: 2**60 + 1 as the double's text, and the
# id that envlock computed for it (envlock show of the earlier binary)
cat >old.lock <<'EOF'
{
  "configs": {
    "files": [
      {
        "bases": [],
        "effective": {
          "imports": [],
          "not_evaluated": [],
          "value": {
            "n": 12345678901234568,
            "optimizer": {
              "lr": 0.005
            },
            "randomness": {
              "eps": 1e-05,
              "seed": 1.152921504606847e+18
            },
            "seed": 1.152921504606847e+18
          }
        },
        "path": "cfg.py",
        "requested": true,
        "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
        "size": 3,
        "text": "x=1"
      }
    ],
    "status": "present"
  },
  "created": "2024-01-01T00:00:00Z",
  "envlock": 1,
  "id": "sha256:28b1988bcf4df04eb2394e71ee5234c033606404ba6861047d603afd05eb8fe4",
  "partial": {
    "from": "pip-freeze"
  },
  "pip": {
    "status": "absent"
  }
}
EOF
"$ENVLOCK" show old.lock >show.out 2>&1
check_eq "an earlier envlock's lock keeps its id" "envlock sha256:28b1988bcf4df04eb2394e71ee5234c033606404ba6861047d603afd05eb8fe4" \
	"$(sed -n 1p show.out)"
check_eq "and is not said to be edited" 0 "$(grep -c 'edited after it was saved' show.out)"
sed 's/1\.152921504606847e+18/1152921504606846977/' old.lock >new.lock
"$ENVLOCK" diff old.lock new.lock --only configs >diff.out 2>/dev/null
check_grep "diff: the earlier double against the digits" "cfg.py: seed  *1.152921504606847e+18  *→ 1152921504606846977  " diff.out
check_eq "diff: the numbers that did not change do not differ" 2 "$(grep -c '→' diff.out)"

# the lockfiles of tests/golden, written by earlier envlocks, keep their ids
for g in "$GOLDEN"/*.lock.json; do
	name=$(basename "$g")
	check_eq "$name: its id is its content's" "envlock $(jget "$g" id)" "$("$ENVLOCK" show "$g" 2>/dev/null | sed -n 1p)"
done

# an earlier envlock binary, when given: its lock of the same config verifies here
if [ -n "${ENVLOCK_OLD:-}" ]; then
	"$ENVLOCK_OLD" save -q --root "$MM" --config cfg.py --cfg-options optimizer.lr=0.005 -o byold.lock >save.out 2>&1
	check_status "the earlier envlock saves the config" 0 $?
	check_grep "it wrote 2**60 + 1 as a double" '^ *"seed": 1.152921504606847e+18,\{0,1\}$' byold.lock
	"$ENVLOCK" check byold.lock >check.out 2>&1
	check_eq "its lock verifies here" 0 "$(grep -c 'edited after it was saved' check.out)"
	check_eq "with the id it wrote" "envlock $(jget byold.lock id)" "$("$ENVLOCK" show byold.lock 2>/dev/null | sed -n 1p)"
	"$ENVLOCK" diff byold.lock b.lock --only configs >diff.out 2>/dev/null
	check_grep "diff: the earlier seed against the exact one" "cfg.py: seed  *1.152921504606847e+18  *→ 1152921504606846977  " diff.out
	check_eq "diff: 0.005 the same on both sides" 0 "$(grep -c 'cfg.py: optimizer.lr ' diff.out)"
else
	skip "a lock an earlier envlock binary saves" "set ENVLOCK_OLD to one"
fi

# a secret that is a number past 2^53 is masked like any other
"$ENVLOCK" save -q --root "$MM" --config cfg.py --cfg-options log_config.hooks.0.api_key=1234567890123456789 \
	--redact -o r.lock >save.out 2>&1
check_status "save --redact of a config with a 19-digit api_key" 0 $?
check_eq "its value is masked" '"<secret>"' "$(grep -o '"api_key": *[^,}]*' r.lock | head -n 1 | sed 's/.*: *//')"
check_eq "and its digits are nowhere in the lock" 0 "$(grep -c 1234567890123456789 r.lock)"

# a bundle sealing a lock with such a number verifies and extracts (its id read the same way)
mkdir -p wd && printf 'lr = 0.005\n' >wd/train.py
"$ENVLOCK" bundle wd -o wd.tar.zst --lock b.lock -q >bundle.out 2>&1
check_status "bundle with the lock of 64-bit integers" 0 $?
"$ENVLOCK" bundle verify wd.tar.zst >verify.out 2>&1
check_status "it verifies: the lock's id is the manifest's" 0 $?
"$ENVLOCK" bundle extract wd.tar.zst wd.out >extract.out 2>&1
check_status "and extracts" 0 $?
check_eq "with the digits as saved" "$(grep -c 1152921504606846978 b.lock)" "$(grep -c 1152921504606846978 wd.out/envlock.lock.json)"
