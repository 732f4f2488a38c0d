#!/bin/sh
# The floors of lib/ (lib/README.md), checked on the tree itself: every
# include between folders, and every call between their built objects,
# points at a lower floor; and the check can fail, naming file and line.
. "$(dirname "$0")/lib.sh"

case ${BUILD:=build} in /*) ;; *) BUILD=$top/$BUILD ;; esac
layers() { python3 "$top/tools/layers.py" "$@"; }

nfolders=$(ls -d "$top"/lib/*/ | wc -l)
layers -C "$top" -b "$BUILD" >out 2>&1
check_status "every include and call between the folders of lib/ and cmd/ points down" 0 $?
check_grep "every folder of lib/, and cmd, on a floor" \
	"^layers: $((nfolders + 1)) folders on [0-9]* floors, every include and call points down\$" out

# the check can fail: an include of a higher floor, in a copy of the tree
mkdir -p copy && cp -R "$top/cmd" "$top/lib" copy/
cp copy/lib/probe/os.c os.c
sed -i '/^#include "lock\/model.h"$/a #include "restore/plan.h"' copy/lib/probe/os.c
line=$(grep -n '^#include "restore/plan.h"$' copy/lib/probe/os.c | cut -d: -f1)
layers -C copy >out 2>err
check_status "a probe that includes the restore planner" 1 $?
check_eq "is named, file and line, with both floors" \
	"lib/probe/os.c:$line: #include \"restore/plan.h\": probe (floor 3) may not include restore (floor 9)" "$(cat out)"
check_grep "and counted" "^layers: 1 arrow pointing up or sideways" err

# sideways: probe and rules share a floor, so neither includes the other unless the README says so
cp os.c copy/lib/probe/os.c
sed -i '/^#include "lock\/model.h"$/a #include "rules/rules.h"' copy/lib/probe/os.c
layers -C copy >out 2>&1
check_status "a probe that includes the rules engine, of its own floor" 1 $?
check_grep "is named too" "^lib/probe/os.c:[0-9]*: #include \"rules/rules.h\": probe (floor 3) may not include rules (floor 3)\$" out
sed -i 's/^\(| 3 | cfgview, probe, rules |.*| floors below\) |$/\1; beside: rules |/' copy/lib/README.md
layers -C copy >out 2>&1
check_status "allowed once the floor's row says '; beside: rules'" 0 $?
cp os.c copy/lib/probe/os.c

# cmd holds no logic: of the library's own folders it includes util alone
sed -i '/^#include "cmd.h"$/a #include "lock/view.h"' copy/cmd/main.c
layers -C copy >out 2>&1
check_status "a command that reads the lock's view itself" 1 $?
check_grep "is named" "^cmd/main.c:[0-9]*: #include \"lock/view.h\": cmd (floor 10) may not include lock (floor 1)\$" out
rm -rf copy/cmd && cp -R "$top/cmd" copy/

# a folder must have a floor, and a floor's folder must exist
mkdir copy/lib/newcap && printf 'int el_newcap(void);\n' >copy/lib/newcap/newcap.h
layers -C copy >out 2>&1
check_status "a folder lib/README.md does not place" 1 $?
check_grep "is named" "^lib/newcap: no floor in copy/lib/README.md\$" out
rm -r copy/lib/newcap copy/lib/sign
layers -C copy >out 2>&1
check_status "a floor's folder that is gone" 1 $?
check_grep "is named" "^copy/lib/README.md: sign: no such folder\$" out

# calls through the public API are seen in the objects: a low folder calls a high one, no include between them
mkdir -p mini/lib/low mini/lib/high mini/build/lib/low mini/build/lib/high
printf '# lib\n\n## Floors\n\n| floor | folders | holds | may include |\n|---|---|---|---|\n| 0 | low | l | nothing |\n| 1 | high | h | floors below |\n' >mini/lib/README.md
printf 'int envlock_high(void);\nint el_low(void) { return envlock_high(); }\n' >mini/lib/low/low.c
printf 'int envlock_high(void) { return 1; }\n' >mini/lib/high/high.c
${CC:-cc} -c -o mini/build/lib/low/low.o mini/lib/low/low.c
${CC:-cc} -c -o mini/build/lib/high/high.o mini/lib/high/high.c
layers -C mini >out 2>&1
check_status "without the objects, a call with no include is not seen" 0 $?
layers -C mini -b mini/build >out 2>&1
check_status "with them, a call up" 1 $?
check_grep "is named, object and symbol" "^lib/low/low.o: calls envlock_high (lib/high/high.o): low (floor 0) may not call high (floor 1)\$" out

# a README the tool cannot read as floors is an error, not a pass
printf '# lib\n\n## Floors\n\n| floor | folders | holds | may include |\n|---|---|---|---|\n| 0 | low | l | anything |\n' >mini/lib/README.md
layers -C mini >out 2>&1
check_status "a row whose 'may include' is not one the tool reads" 2 $?
check_grep "names the line" "^layers: 'mini/lib/README.md' line 7: may include 'anything'" out
