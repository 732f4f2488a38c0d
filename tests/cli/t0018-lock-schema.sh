#!/bin/sh
# Loading a lock validates it against schemas/envlock.lock.schema.json (compiled
# into envlock): 200 mutations of the golden locks (a value of another type, a
# member deleted, an unexpected member, a string with shell and bidi characters),
# each judged by Debian's python3-jsonschema, must get the same verdict from
# envlock, and envlock's one-line error must name a field jsonschema names too.
# Every command that reads a lock refuses a schema-invalid one the same way.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
mkdir mut
"$PYTHON" "$top/tests/lock/mutate.py" "$top/schemas/envlock.lock.schema.json" mut "$GOLDEN"/*.lock.json
check_status "mutations of the golden locks, judged by jsonschema" 0 $?
check_eq "200 mutations" "200" "$(wc -l <mut/verdicts.tsv | tr -d ' ')"
invalid=$(cut -f2 mut/verdicts.tsv | grep -c '^invalid$')
if [ "$invalid" -ge 100 ] && [ "$invalid" -lt 200 ]; then
	ok "both verdicts occur ($invalid invalid, $((200 - invalid)) valid)"
else
	not_ok "both verdicts occur ($invalid invalid)"
fi

disagree=0 unnamed=0
tab=$(printf '\t')
while IFS=$tab read -r f verdict where what; do
	"$ENVLOCK" show "mut/$f" >/dev/null 2>err
	if [ $? = 0 ]; then mine=valid; else mine=invalid; fi
	if [ "$mine" != "$verdict" ]; then
		disagree=$((disagree + 1))
		echo "#   $f ($what): jsonschema says $verdict, envlock $mine: $(cat err)"
		continue
	fi
	[ "$mine" = invalid ] || continue
	# the format version is checked before the schema, with its own message
	grep -q "^envlock: show: 'mut/$f': not an envlock lockfile (no \"envlock\" version)$" err && continue
	p=$(sed -n "s/^envlock: show: 'mut\/$f': not a valid lockfile: \([^:]*\): .*/\1/p" err)
	case " $where " in
	*" $p "*) ;;
	*)
		unnamed=$((unnamed + 1))
		echo "#   $f ($what): envlock names '$p', jsonschema names: $where; $(cat err)"
		;;
	esac
done <mut/verdicts.tsv
check_eq "envlock and jsonschema agree on every mutation" "0" "$disagree"
check_eq "envlock names a field jsonschema names, in one line" "0" "$unnamed"

# the example of the issue: a section of the wrong type
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["frameworks"] = "oops"
json.dump(d, open("oops.lock.json", "w"), indent=2)
d = json.load(open(sys.argv[1]))
d["conda"]["packages"][3]["name"] = 7
json.dump(d, open("name.lock.json", "w"), indent=2)
PY
want="'oops.lock.json': not a valid lockfile: frameworks: expected an object, got a string"
"$ENVLOCK" keygen -o k >/dev/null 2>&1
mkdir wd && printf 'x\n' >wd/a.py
for cmd in "show" "check" "report" "export --format requirements" "restore --dry-run" "sign --key k.key.pem" \
	"verify-sig --pub k.pub.pem" "verify --cpu-only" "diff $GOLDEN/ubuntu1604-mmdet.lock.json"; do
	# shellcheck disable=SC2086
	"$ENVLOCK" $cmd oops.lock.json >out 2>err
	rc=$?
	name=${cmd%% *}
	if [ "$rc" != 0 ] && [ "$(wc -l <err)" = 1 ] && grep -q "^envlock: .*$want$" err; then
		ok "$name refuses a lock whose frameworks is a string, naming the file and the field (exit $rc)"
	else
		not_ok "$name refuses a lock whose frameworks is a string, naming the file and the field"
		echo "#   exit $rc, stderr: $(cat err)"
	fi
done
"$ENVLOCK" bundle wd --lock oops.lock.json -o wd.tar.zst >out 2>err
check_status "bundle --lock refuses it" 2 $?
check_grep "naming the field" "$want" err
check_eq "and writes no archive" "no" "$(test -e wd.tar.zst && echo yes || echo no)"
"$ENVLOCK" check name.lock.json >out 2>err
check_grep "a package name that is a number: the path to it" \
	"'name.lock.json': not a valid lockfile: conda.packages\[3\].name: expected a string, got a number" err

# uniqueItems over a hostile 200,000-name list: sorted, not compared pair by pair (which took minutes)
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pip"]["conda_and_pip"] = ["p%06d" % i for i in range(200000)]
json.dump(d, open("many.lock.json", "w"))
d["pip"]["conda_and_pip"][199999] = "p000001"
json.dump(d, open("many-dup.lock.json", "w"))
PY
start=$(date +%s)
"$ENVLOCK" show many.lock.json >/dev/null 2>err
check_status "200,000 distinct names in pip.conda_and_pip load" 0 $?
"$ENVLOCK" show many-dup.lock.json >/dev/null 2>err
check_status "one of them twice" 2 $?
check_eq "refused, naming the list" "envlock: show: 'many-dup.lock.json': not a valid lockfile: pip.conda_and_pip: an item appears twice" "$(cat err)"
check_eq "both in seconds, not minutes" "fast" "$([ $(($(date +%s) - start)) -le 10 ] && echo fast || echo slow)"
