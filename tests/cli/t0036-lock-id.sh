#!/bin/sh
# A lockfile whose recorded id is not the id of its content (a value edited
# after it was saved) is said once by every command that reads a lockfile:
# on stderr by the command core (cmd_lock_load), or in show's and report's
# own output. An unedited lock gets no such line, and a lock restore and
# export refuse gets only their refusal.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
"$ENVLOCK" save -q --root "$FIXTURES/ubuntu1604-mmdet" -o keep.json >/dev/null 2>&1
"$PYTHON" - keep.json edited.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["hostname"] = "edited"
json.dump(d, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
stored=$(jget keep.json id)
content=$("$ENVLOCK" show edited.json 2>/dev/null | sed -n '1s/^envlock //p')
case $content in sha256:*) [ "$content" != "$stored" ] && ok "the edit changes the content's id" || not_ok "the edit changes the content's id" ;;
*) not_ok "show gives the content's id ($content)" ;; esac
"$ENVLOCK" keygen -o key >/dev/null 2>&1
mkdir -p wd && echo "lr = 0.02" >wd/cfg.py

# said: how many lines of the command's stdout and stderr say the lock was edited
said() { grep -c "edited after it was saved" out; }

# run LOCK ARGS...: envlock ARGS with the word LOCK in them replaced by LOCK, stdout and stderr into out
run() {
	lock=$1
	shift
	for a in "$@"; do
		[ "$a" = LOCK ] && a=$lock
		set -- "$@" "$a"
		shift
	done
	"$ENVLOCK" "$@" >out 2>&1
}

for cmd in show check diff restore export bundle verify report report-against sign verify-sig; do
	for lock in edited.json keep.json; do
		case $cmd in
		show) run "$lock" show LOCK ;;
		check) run "$lock" check LOCK ;;
		diff) run "$lock" diff keep.json LOCK ;;
		restore) run "$lock" restore LOCK --dry-run --root "$FIXTURES/ubuntu1604-mmdet" ;;
		export) run "$lock" export LOCK --format requirements -o req.txt ;;
		bundle) run "$lock" bundle wd --lock LOCK -o wd.tar.zst ;;
		verify) run "$lock" verify LOCK --cpu-only --steps 50 --cuda-home "$scratch/no-toolkit" ;;
		report) run "$lock" report LOCK -o report.txt ;;
		report-against) run "$lock" report keep.json --against LOCK --format html -o report.html ;;
		sign) run "$lock" sign LOCK --key key.key.pem -o lock.sig ;;
		verify-sig) "$ENVLOCK" sign keep.json --key key.key.pem -o keep.sig >/dev/null 2>&1
			run "$lock" verify-sig LOCK --sig keep.sig --pub key.pub.pem ;;
		esac
		if [ "$lock" = edited.json ]; then
			check_eq "$cmd: an edited lock is said once" 1 "$(said)"
		else
			check_eq "$cmd: an unedited lock is not flagged" 0 "$(said)"
		fi
	done
done

# the core's one line, in the words report uses
"$ENVLOCK" check edited.json >/dev/null 2>err
check_eq "check: the warning names the file and both ids" \
	"envlock: warning: 'edited.json': its stored id $stored does not match its content ($content): it was edited after it was saved" \
	"$(grep 'edited after' err)"
# diff of two edited locks: one line for each
cp edited.json edited2.json
"$ENVLOCK" diff edited.json edited2.json >out 2>&1
check_eq "diff: one line for each edited lock" 2 "$(said)"
check_eq "diff: naming each" "'edited.json' 'edited2.json'" \
	"$(sed -n "s/^envlock: warning: \('[^']*'\): its stored id.*/\1/p" out | sort | tr '\n' ' ' | sed 's/ $//')"
# an edited lock with a value restore and export refuse: the refusal, naming the field, is all it gets
"$PYTHON" - keep.json hostile.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pip"]["distributions"][0]["name"] = "x;reboot"
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
for cmd in export restore; do
	if [ $cmd = export ]; then "$ENVLOCK" export hostile.json --format requirements -o h.txt >/dev/null 2>err
	else "$ENVLOCK" restore hostile.json --dry-run >/dev/null 2>err; fi
	check_eq "$cmd: a hostile edited lock gets one line, the refusal" \
		"envlock: $cmd: 'hostile.json': pip.distributions[0].name 'x;reboot': contains a shell metacharacter or space" \
		"$(cat err)"
done
