#!/bin/sh
# What envlock prints for a person wraps: at COLUMNS when it is set, at the
# terminal's width on a terminal (a real pty, made by script(1)), at 100
# columns into a pipe or a file, never with COLUMNS=0; at spaces only, so a
# command to paste (pip install ... -f URL, cp ... && chroot ...) and a URL
# stay whole on one line. --json is never wrapped.
. "$(dirname "$0")/lib.sh"

L=$GOLDEN/ubuntu1604-mmdet.lock.json
M=$GOLDEN/mmpose-container.lock.json
CMD='pip install mmcv-full==1.7.0 -f https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html;'
# longest LIMIT FILE: the widest line of FILE not holding a command or a URL, nor
# a single word too long for the width (a path is never broken either), or 0
longest() {
	grep -v -e 'pip install' -e 'https://' -e 'chroot ' "$2" |
		awk -v m=0 '{ if (NF > 1 && length($0) > m) m = length($0) } END { print m }'
}

unset COLUMNS
"$ENVLOCK" check "$L" >piped.txt
check_eq "into a pipe: prose within 100 columns" yes "$([ "$(longest 100 piped.txt)" -le 100 ] && [ "$(longest 100 piped.txt)" -gt 80 ] && echo yes)"
check_grep "the fix's command whole on one line" "^                    fix: $CMD\$" piped.txt
check_eq "the message is the JSON's, cut at spaces only" \
	"$("$ENVLOCK" check "$L" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["findings"][0]["message"])')" \
	"$(sed -n '2,4p' piped.txt | sed 's/^ *//' | tr '\n' ' ' | sed 's/ $//')"
COLUMNS=60 "$ENVLOCK" check "$L" >c60.txt
check_eq "COLUMNS=60: within 60" yes "$([ "$(longest 60 c60.txt)" -le 60 ] && echo yes)"
check_grep "the command still whole" "^                    fix: $CMD\$" c60.txt
COLUMNS=0 "$ENVLOCK" check "$L" >c0.txt
check_eq "COLUMNS=0: never wrapped, the message, fix and source a line each" 3 "$(grep -c '^                    ' c0.txt)"
check_eq "(where a pipe gets 14)" 14 "$(grep -c '^                    ' piped.txt)"
if command -v script >/dev/null 2>&1 && script -qec "stty cols 70" /dev/null >/dev/null 2>&1; then
	script -qec "stty cols 70; '$ENVLOCK' check '$L'" /dev/null | tr -d '\r' >tty.txt
	check_eq "on a terminal of 70 columns: within 70" yes "$([ "$(longest 70 tty.txt)" -le 70 ] && [ "$(longest 70 tty.txt)" -gt 60 ] && echo yes)"
	check_grep "and the command whole" "fix: $CMD" tty.txt
else
	skip "on a terminal" "script(1) cannot make a pty here"
fi
"$ENVLOCK" check "$L" --json >j.json
check_eq "--json is not wrapped" 0 "$(grep -c '^ *[a-z].*[^,{}\[]$' j.json)"

# diff's findings and restore's plan wrap the same way
"$ENVLOCK" diff "$L" "$M" --only frameworks >diff.txt
check_eq "diff: a finding's reason within 100" yes "$([ "$(grep '^      ' diff.txt | grep -v -e 'https://' -e 'pip install' | awk -v m=0 '{ if (length($0) > m) m = length($0) } END { print m }')" -le 100 ] && echo yes)"
check_grep "diff: the fix whole" "^      fix: pip install mmcv==2.1.0 -f https://download.openmmlab.com/mmcv/dist/cu118/torch2.1/index.html\$" diff.txt
cp -a "$FIXTURES/ubuntu1604-mmdet" box
sed -i "s/^cuda = '10.2'/cuda = None/" box/home/alice/miniconda3/envs/mmdet/lib/python3.10/site-packages/torch/version.py 2>/dev/null ||
	sed -i "s/^cuda = '10.2'/cuda = None/" box/home/alice/miniconda3/envs/mmdet/lib/python3.7/site-packages/torch/version.py
"$ENVLOCK" restore "$L" --root box --only pip --dry-run >plan.txt 2>&1
check_eq "restore: its notes within 100" yes "$([ "$(longest 100 plan.txt)" -le 100 ] && echo yes)"
check_grep "and the command a person runs whole on one line" \
	"^             cp $scratch/.envlock/envlock-restore-[0-9a-f]*.requirements.txt $scratch/box/tmp/envlock-restore-[0-9a-f]*.requirements.txt && chroot $scratch/box /home/alice/miniconda3/envs/mmdet/bin/python3.7 -m pip install .* --extra-index-url https://download.pytorch.org/whl/cu102\$" plan.txt
