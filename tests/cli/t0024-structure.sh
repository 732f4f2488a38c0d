#!/bin/sh
# The shape issue 13 asks for, checked on the tree itself: no consumer
# reads a lock's JSON (only its typed view, lib/lock/view.h), and no two
# files of one library folder call each other in a cycle, in every folder
# of lib/ (the floors between folders are t0109's).
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
sh "$top/tools/lock-reads.sh" "$top" >reads 2>&1
check_status "no consumer reads lock JSON outside the files named with what they read" 0 $?
check_eq "and says nothing" "" "$(cat reads)"

# the check can fail: a read added to a consumer is named with its line, a stale allow entry too
mkdir -p copy && cp -R "$top/cmd" "$top/lib" "$top/tools" copy/
printf 'static const char *sneak(const cJSON *d) { return el_jget_str(d, "id"); }\n' >>copy/lib/show/show.c
sh copy/tools/lock-reads.sh "$PWD/copy" >reads 2>&1
check_status "a lock read added to show.c" 1 $?
check_grep "it is named, file and line" "^lib/show/show.c:[0-9]*: static const char \*sneak(const cJSON \*d) { return el_jget_str(d, \"id\"); }$" reads
check_grep "and counted" "^1 JSON reads in consumers: read the lock through lib/lock/view.h$" reads
printf 'lib/show/show.c # nothing\n' >>copy/tools/lock-reads.allow
sed -i '$d' copy/lib/show/show.c
sh copy/tools/lock-reads.sh "$PWD/copy" >reads 2>&1
check_status "an allowed file that reads no JSON any more" 1 $?
check_eq "the stale entry is named" "tools/lock-reads.allow: no JSON read left in lib/show/show.c" "$(cat reads)"

# the call graph between files, from the objects this suite's envlock was built from
case ${BUILD:=build} in /*) ;; *) BUILD=$top/$BUILD ;; esac
nfolders=$(for d in "$top"/lib/*/; do ls "$d" | grep -q '\.c$' && echo "$d"; done | wc -l)
python3 "$top/tools/file-cycles.py" -b "$BUILD" -s "$top/lib" -a "$top/tools/file-cycles.allow" >cycles 2>&1
check_status "no unexplained call cycle between the files of a folder" 0 $?
check_grep "in every folder of lib/, counted from the tree" "^file-cycles: every cycle in the $nfolders folders of $top/lib is explained\$" cycles
check_eq "and every cycle it finds is one tools/file-cycles.allow explains" "" "$(grep -v '(explained)$' cycles | grep -v '^file-cycles: ')"
sh "$top/tools/file-cycles.test.sh" >selftest 2>&1
check_status "the cycle finder finds cycles (its self-test)" 0 $?
check_eq "every case of the self-test" "0" "$(grep -c '^not ok' selftest)"
