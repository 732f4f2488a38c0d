#!/bin/sh
# A text envlock builds past its size cap is an error naming the input,
# never a text cut short: strings a config's evaluation makes
# (str.format, str.join, str(), a slice) and a module name it imports, and
# the plan solve prints for a lock with an over-long GPU name. Under the
# caps, the same texts come out whole.
. "$(dirname "$0")/lib.sh"

# run NAME ARGS...: envlock ARGS, stdout into NAME.out, stderr into NAME.err, status into NAME.rc
run() {
	name=$1
	shift
	"$ENVLOCK" "$@" >"$name.out" 2>"$name.err"
	echo $? >"$name.rc"
}
# one_line WHAT NAME: NAME.err is a single line
one_line() {
	check_eq "$1: one line on stderr" 1 "$(wc -l <"$2.err" | tr -d ' ')"
}

# --- config: strings the evaluation makes (the cap of one string is 1 MiB) ------------
printf 's = "x" * 1000000\nt = "{}{}".format(s, s)\n' >format.py
run format config format.py
check_status "format() of two 1 MB strings" 2 "$(cat format.rc)"
check_grep "format(): the file, the line and the cap" "^envlock: config: format.py:2: a string longer than 1048576 bytes$" format.err
one_line "format()" format
check_eq "format(): no value printed" 0 "$(wc -c <format.out | tr -d ' ')"

printf 's = "x" * 1000000\nt = "-".join([s, s])\n' >join.py
run join config join.py
check_status "join() of two 1 MB strings" 2 "$(cat join.rc)"
check_grep "join(): the file, the line and the cap" "^envlock: config: join.py:2: a string longer than 1048576 bytes$" join.err

printf 's = "x" * 1000000\nt = s.replace("x", "yy")\n' >replace.py
run replace config replace.py
check_status "replace() that doubles a 1 MB string" 2 "$(cat replace.rc)"
check_grep "replace(): the file, the line and the cap" "^envlock: config: replace.py:2: a string longer than 1048576 bytes$" replace.err

# just under the cap: the whole string
printf 's = "x" * 500000\nt = "{}{}".format(s, s)\nn = len(t)\n' >under.py
run under config under.py --json
check_status "format() under the cap" 0 "$(cat under.rc)"
check_eq "format() under the cap: the whole string" 1000000 \
	"$("$PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["effective"]["t"]))' under.out 2>&1)"

# a module name past 1 KiB is refused, not imported cut
"$PYTHON" -c 'import sys; open("module.py", "w").write("from mmengine.config import read_base\nwith read_base():\n    from .%s import *\nx = 1\n" % ("m" * 5000))'
run module config module.py
check_status "read_base() of a 5000-byte module name" 2 "$(cat module.rc)"
check_grep "module name: the file, the line and the cap" "^envlock: config: module.py:3: a module name longer than 1024 bytes$" module.err
one_line "module name" module

# --- solve: the plan of a lock whose GPU name is 5 MiB (the plan's cap is 4 MiB) -------
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for dev in d["gpu"]["devices"]:
    dev["name"] = "Tesla " + "X" * (5 << 20)
json.dump(d, open("gpu.lock.json", "w"), indent=2, sort_keys=True)
PY
run longgpu solve gpu.lock.json --for mmdet==2.25.1
check_status "solve on a lock with a 5 MiB GPU name" 2 "$(cat longgpu.rc)"
check_grep "solve: the plan's cap, and why" \
	"^envlock: solve: the plan is longer than 4194304 bytes (a recorded name or version is too long)$" longgpu.err
check_eq "solve: no cut plan on stdout" 0 "$(wc -c <longgpu.out | tr -d ' ')"

# the same lock with a long name that fits: the whole name in the plan
"$PYTHON" - "$GOLDEN/ubuntu1604-mmdet.lock.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for dev in d["gpu"]["devices"]:
    dev["name"] = "Tesla " + "X" * 20000
json.dump(d, open("gpu20k.lock.json", "w"), indent=2, sort_keys=True)
PY
run gpu20k solve gpu20k.lock.json --for mmdet==2.25.1
check_status "solve on a lock with a 20000-byte GPU name" 0 "$(cat gpu20k.rc)"
check_eq "solve: the whole 20000-byte name in the machine line" 20000 \
	"$("$PYTHON" -c 'import re,sys; m=re.search(r"machine .*? 2 x Tesla\s+(X+)", open(sys.argv[1]).read(), re.S); print(len(m.group(1)) if m else "no GPU name")' gpu20k.out)"
