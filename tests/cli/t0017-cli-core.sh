#!/bin/sh
# The command core: every command refuses a missing or malformed lockfile the
# same way (exit 2, one line "envlock: <cmd>: '<file>': <why>"), answers an
# unknown option with envlock's own line and its usage (never getopt's), and
# prints its usage for --help; bundle's verbs too.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
good=$GOLDEN/no-nvidia.lock.json
printf 'not json\n' >bad.json
mkdir wd && printf 'x\n' >wd/a.py
"$ENVLOCK" keygen -o k >/dev/null 2>&1

# one_line WHAT WANT_STATUS WANT_LINE: the last command's status and its only stderr line (in err)
one_line() {
	st=$?
	if [ "$st" = "$2" ] && [ "$(wc -l <err)" = 1 ] && [ "$(cat err)" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1"
		echo "#   expected exit $2 and: $3"
		echo "#   got exit $st and: $(cat err)"
	fi
}

# every command that reads a lockfile; @ stands for the file
for spec in "show @" "check @" "diff $good @" "diff @ $good" "restore @ --dry-run" "verify @ --cpu-only" \
	"report @" "report $good --against @" "export @ --format requirements" "sign @ --key k.key.pem" \
	"verify-sig @ --pub k.pub.pem" "bundle wd --lock @ -o wd.tar.zst"; do
	name=${spec%% *}
	for f in missing.json bad.json; do
		case $f in
		missing.json) why="no such file" ;;
		bad.json) why="not valid JSON (line 1)" ;;
		esac
		# shellcheck disable=SC2086
		"$ENVLOCK" $(echo "$spec" | sed "s|@|$f|") >out 2>err
		one_line "$spec: $f" 2 "envlock: $name: '$f': $why"
	done
done
check_eq "bundle wrote no archive for a bad --lock" "no" "$(test -e wd.tar.zst && echo yes || echo no)"

# import reads conda or pip output, not a lock, but a file it cannot read is refused alike
"$ENVLOCK" import missing.txt >out 2>err
one_line "import of a missing file" 2 "envlock: import: 'missing.txt': no such file"
"$ENVLOCK" import wd >out 2>err
one_line "import of a folder" 2 "envlock: import: 'wd': not a regular file"

# unknown options and --help: every command envlock --help lists, and bundle's verbs
cmds=$("$ENVLOCK" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
verbs=$("$ENVLOCK" bundle --help | sed -n 's/^.*envlock bundle \([a-z][a-z]*\) ARCHIVE.*/\1/p')
if [ "$(echo $cmds | wc -w)" -ge 13 ] && [ "$(echo $verbs | wc -w)" = 3 ]; then
	ok "the commands ($(echo $cmds)) and bundle's verbs ($(echo $verbs))"
else
	not_ok "the commands and bundle's verbs"; echo "#   got: '$cmds' and '$verbs'"
fi
for c in $cmds $(for v in $verbs; do echo "bundle:$v"; done); do
	c=$(echo "$c" | tr ':' ' ')
	top_cmd=${c%% *}
	# shellcheck disable=SC2086
	"$ENVLOCK" $c --bogus >out 2>err
	st=$?
	if [ "$st" = 2 ] && [ "$(head -n 1 err)" = "envlock: $c: unknown or incomplete option '--bogus'" ] &&
		grep -q "^usage: envlock $top_cmd" err && ! grep -q "unrecognized option" err && [ ! -s out ]; then
		ok "$c --bogus: envlock's own line, then the usage, on stderr"
	else
		not_ok "$c --bogus: envlock's own line, then the usage, on stderr"
		echo "#   exit $st, stderr:"; sed 's/^/#   /' err | head -n 3
	fi
	# shellcheck disable=SC2086
	"$ENVLOCK" $c --help >out 2>err
	st=$?
	if [ "$st" = 0 ] && grep -q "^usage: envlock $top_cmd" out && [ ! -s err ]; then
		ok "$c --help: the usage on stdout, exit 0"
	else
		not_ok "$c --help: the usage on stdout, exit 0"
		echo "#   exit $st, stdout: $(head -n 1 out), stderr: $(cat err)"
	fi
done

# a short option inside a cluster is named by its letter
"$ENVLOCK" bundle -qZ wd >out 2>err
check_eq "bundle -qZ names '-Z'" "envlock: bundle: unknown or incomplete option '-Z'" "$(head -n 1 err)"
# an option that wants a value and has none
"$ENVLOCK" show --root >out 2>err
check_eq "show --root without DIR" "envlock: show: unknown or incomplete option '--root'" "$(head -n 1 err)"

# bundle list takes its options before or after the archive
"$ENVLOCK" bundle -q wd --lock "$good" -o wd.tar.zst >/dev/null 2>err
check_status "bundle with a good --lock" 0 $?
"$ENVLOCK" bundle list wd.tar.zst --json >after.json 2>err
check_status "bundle list ARCHIVE --json" 0 $?
"$ENVLOCK" bundle list --json wd.tar.zst >before.json 2>err
check_status "bundle list --json ARCHIVE" 0 $?
check_diff "the same listing either way" after.json before.json
"$ENVLOCK" bundle list >out 2>err
check_status "bundle list without ARCHIVE" 2 $?
check_eq "bundle list without ARCHIVE: why" "envlock: bundle list: expected one ARCHIVE" "$(head -n 1 err)"
"$ENVLOCK" bundle verify a b >out 2>err
check_status "bundle verify of two archives" 2 $?

# restore names a missing file it was given, strerror in lowercase as everywhere
"$ENVLOCK" restore "$good" --dry-run --cudnn-archive missing.tgz >out 2>err
one_line "restore --cudnn-archive of a missing file" 2 "envlock: restore: --cudnn-archive 'missing.tgz': no such file or directory"
# option conflicts and names are the command line's to judge, with its flags named
"$ENVLOCK" restore "$good" --dry-run --name x --prefix /opt/x >out 2>err
one_line "restore --name with --prefix" 2 "envlock: restore: give --name or --prefix, not both"
"$ENVLOCK" restore "$good" --dry-run --skip nothing >out 2>err
one_line "restore --skip of an unknown step" 2 "envlock: restore: --skip 'nothing': no such step (steps: driver, cuda, compilers, cudnn, conda, repos, pip, configs, checkpoints, verify)"
"$ENVLOCK" diff "$good" "$good" --ignore nothing >out 2>err
one_line "diff --ignore of an unknown section" 2 "envlock: diff: --ignore 'nothing': not a section (sections: system, gpu, cuda, cudnn, compilers, python, conda, pip, frameworks, loads, repos, configs, checkpoints, env)"
# keygen and bundle extract add the flag the library does not name
"$ENVLOCK" keygen -o k >out 2>err
one_line "keygen over an existing pair" 1 "envlock: keygen: 'k.key.pem' already exists; --force replaces the key pair"
mkdir target
"$ENVLOCK" bundle extract wd.tar.zst target >out 2>err
one_line "extract into an existing folder" 1 "envlock: bundle extract: 'target': already exists (use --force to extract into it)"
"$ENVLOCK" keygen -o '' >out 2>err
one_line "keygen -o ''" 1 "envlock: keygen: an empty prefix for the key files"
