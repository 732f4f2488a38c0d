#!/bin/sh
# The command line: exit statuses, one-line errors naming the file, atomic
# writes, stdout handling.
. "$(dirname "$0")/lib.sh"

root=$FIXTURES/no-nvidia
"$ENVLOCK" --help >"$scratch/help" 2>&1
check_status "--help" 0 $?
check_grep "--help lists save" "  save" "$scratch/help"
"$ENVLOCK" frobnicate 2>"$scratch/err"
check_status "unknown command" 2 $?
check_eq "unknown command: one line" "envlock: 'frobnicate' is not an envlock command; see 'envlock --help'" "$(cat "$scratch/err")"
"$ENVLOCK" save --bogus 2>"$scratch/err" >/dev/null
check_status "unknown option" 2 $?
check_grep "unknown option named" "envlock: save: unknown or incomplete option '--bogus'" "$scratch/err"
"$ENVLOCK" save --root "$scratch/nope" -o "$scratch/x.json" 2>"$scratch/err"
check_status "--root of a missing directory" 2 $?
check_eq "missing root: one line naming it" "envlock: save: '$scratch/nope': no such file or directory" "$(cat "$scratch/err")"
"$ENVLOCK" save --root "$root" --conda-prefix relative/env -o "$scratch/x.json" 2>"$scratch/err"
check_status "relative --conda-prefix" 2 $?
"$ENVLOCK" save --root "$root" --conda-prefix /usr -o "$scratch/x.json" 2>"$scratch/err"
check_status "--conda-prefix of a folder that is no conda environment" 0 $?
check_grep "--conda-prefix of no conda environment: the warning names it" \
	"^envlock: warning: '/usr': the conda prefix asked for has no conda-meta: not a conda environment$" "$scratch/err"
check_eq "--conda-prefix of no conda environment: no conda section" "absent" \
	"$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["conda"]["status"])' "$scratch/x.json")"

# -o into a missing folder fails and names the file; an existing lock survives a failed write
"$ENVLOCK" save -q --root "$root" -o "$scratch/keep.json"
cp "$scratch/keep.json" "$scratch/keep.orig"
"$ENVLOCK" save -q --root "$root" -o "$scratch/missing/dir/l.json" 2>"$scratch/err"
check_status "-o into a missing folder" 1 $?
check_grep "error names the file" "'$scratch/missing/dir/l.json'" "$scratch/err"
check_eq "error is one line" "1" "$(wc -l <"$scratch/err")"
chmod 555 "$scratch" 2>/dev/null
if [ "$(id -u)" != 0 ]; then
	"$ENVLOCK" save -q --root "$root" -o "$scratch/keep.json" 2>/dev/null
	check_status "write into a read-only folder" 1 $?
	if cmp -s "$scratch/keep.json" "$scratch/keep.orig"; then ok "old lockfile untouched after a failed write"; else not_ok "old lockfile untouched after a failed write"; fi
else
	skip "old lockfile untouched after a failed write" "root ignores folder permissions"
fi
chmod 755 "$scratch"
check_eq "no temporary file left behind" "" "$(ls -A "$scratch" | grep '^\.' || true)"

# a device or a link as the output: written into, never replaced
"$ENVLOCK" save -q --root "$root" -o /dev/null
check_status "-o /dev/null" 0 $?
if [ -c /dev/null ]; then ok "/dev/null is still a character device"; else not_ok "/dev/null is still a character device"; fi
mkdir -p "$scratch/locks" && : >"$scratch/locks/real.json" && ln -s locks/real.json "$scratch/link.json"
"$ENVLOCK" save -q --root "$root" -o "$scratch/link.json"
if [ -L "$scratch/link.json" ]; then ok "-o through a symlink keeps the link"; else not_ok "-o through a symlink keeps the link"; fi
check_eq "-o through a symlink writes the file it names" "1" "$(jget "$scratch/locks/real.json" envlock)"
rm -rf "$scratch/locks" "$scratch/link.json"

# -o - writes the lock to stdout; --json prints a summary
"$ENVLOCK" save -q --root "$root" -o - >"$scratch/stdout.json"
check_status "-o -" 0 $?
check_eq "-o - gives a lockfile" "1" "$(jget "$scratch/stdout.json" envlock)"
"$ENVLOCK" save -q --root "$root" -o "$scratch/j.json" --json >"$scratch/summary"
check_eq "--json summary has the id" "$(jget "$scratch/j.json" id)" "$(jget "$scratch/summary" id)"
# an -o path that is not UTF-8: the summary is still JSON, the bad byte a U+FFFD
bad=$(printf '\377.json')
(cd "$scratch" && "$ENVLOCK" save -q --root "$root" -o "$bad" --json) >"$scratch/summary8"
check_status "save -o <not UTF-8> --json" 0 $?
check_eq "the summary of a non-UTF-8 path parses as JSON" "$(printf '\357\277\275.json')" "$(jget "$scratch/summary8" path)"
check_eq "and names the lock written" "$(jget "$scratch/$bad" id)" "$(jget "$scratch/summary8" id)"
rm -f "$scratch/$bad"
"$ENVLOCK" save -q --root "$root" -o - >/dev/full 2>"$scratch/err"
check_status "a full disk on stdout is an error" 1 $?

# show: bad input gets one line naming the file
printf 'not json' >"$scratch/bad.json"
"$ENVLOCK" show "$scratch/bad.json" 2>"$scratch/err"
check_status "show of non-JSON" 2 $?
check_eq "non-JSON: one line" "envlock: show: '$scratch/bad.json': not valid JSON (line 1)" "$(cat "$scratch/err")"
printf '{"a": 1}\n' >"$scratch/other.json"
"$ENVLOCK" show "$scratch/other.json" 2>"$scratch/err"
check_status "show of JSON that is not a lock" 2 $?
check_grep "not a lockfile" "not an envlock lockfile" "$scratch/err"
printf '{"envlock": 7}\n' >"$scratch/v7.json"
"$ENVLOCK" show "$scratch/v7.json" 2>"$scratch/err"
check_status "show of a future format" 2 $?
check_grep "future format named" "lockfile format 7 is not supported" "$scratch/err"
"$ENVLOCK" show "$scratch/none.json" 2>"$scratch/err"
check_status "show of a missing file" 2 $?
check_eq "missing file: one line" "envlock: show: '$scratch/none.json': no such file" "$(cat "$scratch/err")"
head -c 70000000 /dev/zero >"$scratch/huge.json"
"$ENVLOCK" show "$scratch/huge.json" 2>"$scratch/err"
check_status "show of a 70 MB file" 2 $?
check_grep "size limit named" "larger than 64 MiB" "$scratch/err"
rm -f "$scratch/huge.json"

# an edited lock is called out by show
"$PYTHON" - "$scratch/keep.json" >"$scratch/edited.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["hostname"] = "edited"
print(json.dumps(d, indent=2, sort_keys=True))
PY
"$ENVLOCK" show "$scratch/edited.json" >"$scratch/out"
check_grep "show flags an edited lock" "edited after it was saved" "$scratch/out"
"$ENVLOCK" show "$scratch/keep.json" >"$scratch/out"
if grep -q "edited after" "$scratch/out"; then not_ok "an untouched lock is not flagged"; else ok "an untouched lock is not flagged"; fi
