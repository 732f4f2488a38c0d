# Helpers for envlock's CLI tests (sourced). Each check prints "ok N - what"
# or "not ok N - what" with the evidence; a skip prints "ok N - what # SKIP why".
# A test starts in its scratch folder ($scratch, removed at exit) and writes
# only there: the tree is read, never written (tests/run.sh checks).
set -u
LANG=C
LC_ALL=C
TZ=UTC
# what envlock prints for a person is not wrapped unless a test asks for a width
# (piped output otherwise wraps at 100, t0106 tests that; COLUMNS=0, envlock's
# "never", would make pip and conda, which read it too, print nothing)
COLUMNS=10000
export LANG LC_ALL TZ COLUMNS
top=$(cd "$(dirname "$0")/../.." && pwd)
ENVLOCK=${ENVLOCK:-$top/build/envlock}
FIXTURES=${FIXTURES:-$top/tests/fixtures/roots}
GOLDEN=$top/tests/golden
PYTHON=/usr/bin/python3
scratch=$(mktemp -d /tmp/envlock-cli.XXXXXX)
trap 'chmod -R u+rwX "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
HOME=$scratch/home
XDG_CACHE_HOME=$scratch/cache
export HOME XDG_CACHE_HOME
mkdir -p "$HOME"
# paths given relative to where the test was started still work from $scratch
case $ENVLOCK in /*) ;; */*) ENVLOCK=$PWD/$ENVLOCK ;; esac
case $FIXTURES in /*) ;; *) FIXTURES=$PWD/$FIXTURES ;; esac
# every lock a command loads is checked by the generated validator and by the
# schema interpreter as well, a difference in verdict or words aborting, when
# the build made envlock-crosscheck beside envlock and it is not older than
# envlock (make check does; tests/schema/crosscheck.c)
if [ -x "$ENVLOCK-crosscheck" ] && ! [ "$ENVLOCK" -nt "$ENVLOCK-crosscheck" ]; then
	ENVLOCK=$ENVLOCK-crosscheck
fi
cd "$scratch" || exit 1
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# Run a set-up command that exits 3 when it cannot run on this machine (no
# apt-get, no network): then the suite is skipped, saying WHAT and why; on
# any other failure it fails as LABEL. Its output is left in $why.
#   setup_or_skip LABEL WHAT COMMAND...
setup_or_skip() {
	_label=$1 _what=$2
	shift 2
	why=$("$@" 2>&1)
	_st=$?
	if [ "$_st" = 3 ]; then
		skip "$_what" "$why"
		exit 0
	elif [ "$_st" != 0 ]; then
		not_ok "$_label"
		echo "#   $why"
		exit 1
	fi
}

# debian_tree WHAT: tests/loader/mktree.sh's tree of Debian 12's own packages, made once
# into $build/loader (skipping the suite, with the reason, when it cannot be made here);
# sets build, work and tree, and can_chroot=yes when the real loader can be run in it.
debian_tree() {
	build=${BUILD:-build}
	case $build in /*) ;; *) build=$top/$build ;; esac
	work=$build/loader
	tree=$work/tree
	setup_or_skip "tests/loader/mktree.sh made the Debian tree" "$1" \
		sh "$top/tests/loader/mktree.sh" "$work/debs" "$tree"
	can_chroot=no
	if [ "$(id -u)" = 0 ] && chroot "$tree" /lib64/ld-linux-x86-64.so.2 --list /usr/bin/python3.11 >/dev/null 2>&1; then
		can_chroot=yes
	fi
}

# chroot_tree DIR: DIR made a copy of debian_tree's tree (a real Debian 12 python3.11
# and its libraries) with tests/restore/standin.py in it as /opt/envlock-test/standin.py,
# run by the tree's own python3.11, and its roles there as links (conda, python3.7):
# what `restore --root DIR --chroot` runs inside the tree. The rest of the suite is
# skipped, with the reason, when such a tree cannot be made or chroot'ed into here.
chroot_tree() {
	if [ -z "${can_chroot:-}" ]; then
		debian_tree "restore --chroot into a tree with its own python3.11"
	fi
	if [ "$can_chroot" != yes ]; then
		skip "restore --chroot into a tree with its own python3.11" "chroot needs root and a tree that runs here"
		exit 0
	fi
	mkdir -p "$1" && cp -a "$tree/." "$1/" && mkdir -p "$1/opt/envlock-test" || return 1
	sed '1s|^#!.*|#!/usr/bin/python3.11|' "$top/tests/restore/standin.py" >"$1/opt/envlock-test/standin.py"
	chmod 755 "$1/opt/envlock-test/standin.py"
	# as a Debian system's (mktree.sh leaves it empty for the loader tests)
	echo 'include /etc/ld.so.conf.d/*.conf' >"$1/etc/ld.so.conf"
	ln -s standin.py "$1/opt/envlock-test/conda"
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1"; echo "#   expected: '$2'"; echo "#   actual:   '$3'"; fi
}

# check_diff WHAT EXPECTED_FILE ACTUAL_FILE
check_diff() {
	if diff -u "$2" "$3" >"$scratch/diff.out" 2>&1; then ok "$1"; else not_ok "$1"; sed 's/^/#   /' "$scratch/diff.out" | head -n 60; fi
}

# check_grep WHAT PATTERN FILE
check_grep() {
	if grep -q -- "$2" "$3"; then ok "$1"; else not_ok "$1"; echo "#   no '$2' in:"; sed 's/^/#   /' "$3" | head -n 20; fi
}

# check_status WHAT EXPECTED_STATUS ACTUAL_STATUS
check_status() { check_eq "$1 (exit status)" "$2" "$3"; }

# findings FILE.json: check --json's findings, "severity rule" a line
findings() {
	"$PYTHON" -c 'import json,sys
for f in json.load(open(sys.argv[1]))["findings"]: print(f["severity"], f["rule"])' "$1"
}

# message FILE.json RULE [FIELD]: the first finding of RULE's message (or its FIELD: fix, source, ...)
message() {
	"$PYTHON" -c 'import json,sys
m=[f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"]==sys.argv[2]]
print(m[0][sys.argv[3] if len(sys.argv)>3 else "message"] if m else "")' "$@"
}

# has WHAT NAME "severity rule": NAME.list (findings' lines) holds that finding
has() {
	check_grep "$1" "^$3\$" "$2.list"
}

# lacks WHAT NAME RULE: NAME.list holds no finding of RULE
lacks() {
	if grep -q " $3\$" "$2.list"; then not_ok "$1"; sed 's/^/#   /' "$2.list"; else ok "$1"; fi
}


# jq-like read of a lockfile value by dotted path, with Python's json module
jget() {
	"$PYTHON" - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'):
    if isinstance(v, list):
        v = v[int(k)]
    else:
        v = v.get(k) if isinstance(v, dict) else None
    if v is None:
        break
print('' if v is None else (json.dumps(v) if isinstance(v, (dict, list, bool)) else v))
PY
}

# cd_golden: into a copy of tests/golden's lockfiles in $scratch, where they
# have the relative names they have in the tree ("broken.lock.json",
# "report/paper.lock.json")
cd_golden() {
	mkdir -p "$scratch/golden/report" &&
		cp "$GOLDEN"/*.lock.json "$scratch/golden/" &&
		cp "$GOLDEN"/report/*.lock.json "$scratch/golden/report/" &&
		cd "$scratch/golden"
}

# validate a lockfile against the schema
validate() {
	"$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.lock.schema.json" "$1"
}

# clean FILE: "clean" when FILE is UTF-8 with no control character but
# newline, no DEL or C1 control, no bidi control (the embeddings, overrides
# and isolates, LRM, RLM and ALM); else the code points it holds raw
clean() {
	"$PYTHON" - "$1" <<'PY'
import sys
raw = open(sys.argv[1], 'rb').read()
try:
    s = raw.decode('utf-8')
except UnicodeDecodeError as e:
    sys.exit(print('not UTF-8: %s' % e))
bad = sorted({'U+%04X' % ord(c) for c in s if (ord(c) < 0x20 and c != '\n') or 0x7f <= ord(c) < 0xa0
              or ord(c) in (0x61c, 0x200e, 0x200f) or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069})
print('clean' if not bad else ' '.join(bad))
PY
}

# schema_errors FILE: "valid"; or each place the schema's checker finds in error, and its
# status (an older python3-jsonschema also calls a field that fails its own
# check an unevaluated property of its object: that is the same place)
schema_errors() {
	validate "$1" >schema.out 2>&1
	set -- $?
	if [ "$1" = 0 ]; then echo valid; else
		sed -e "s|^[^:]*: \([^:]*\): Unevaluated properties are not allowed ('\([^']*\)' was unexpected)\$|\1/\2|" \
			-e 's/^[^:]*: \([^:]*\):.*/\1/' schema.out | sort -u
		echo "status $1"
	fi
}

# refused WHAT WHY CMD ARG...: envlock CMD ARG... exits 2, prints nothing on
# stdout, and on stderr exactly the line "envlock: CMD: WHY", with nothing raw
refused() {
	what=$1 why=$2
	shift 2
	"$ENVLOCK" "$@" >refused.out 2>refused.err
	check_status "$what" 2 $?
	check_eq "$what: nothing on stdout" 0 "$(wc -c <refused.out | tr -d ' ')"
	check_eq "$what: one line that names the field and shows the value escaped" \
		"$(printf 'envlock: %s: %s\n.' "$1" "$why")" "$(cat refused.err; printf .)"
	check_eq "$what: nothing raw reaches the terminal" clean "$(clean refused.err)"
}
