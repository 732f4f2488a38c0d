#!/bin/sh
# Run envlock's test suite: the cmocka unit binaries given as arguments,
# then every tests/cli/t*.sh, then a check that none of them wrote into the
# tree. Prints each result and, last, the plain summary line "N passed, N failed".
# Env: ENVLOCK (the CLI to test), BUILD (build dir).
set -u
passed=0
failed=0
skipped=0
top=$(cd "$(dirname "$0")/.." && pwd)
export ENVLOCK="${ENVLOCK:-build/envlock}"
case "$ENVLOCK" in /*) ;; *) ENVLOCK="$top/$ENVLOCK" ;; esac
log=$(mktemp)
stamp=$(mktemp)
trap 'rm -f "$log" "$stamp"' EXIT

# What is in the tree, so that what the suite writes there shows: git's view
# (new, changed and removed files) where the tree is a git checkout, and
# every file and folder newer than $stamp (also a file rewritten with the
# same bytes). build/ (or the folder make check's BUILD names, for a second
# build beside it), the generated fixture roots and bench/out/ are the
# suite's to write.
built=${BUILD:-build}
case $built in "$top"/*) built=${built#"$top"/} ;; /*) built=build ;; esac
built=${built%/}
built_re=$(printf '%s' "$built" | sed 's/[].[*^$\\]/\\&/g')
in_git=0
[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$top" && pwd -P)" ] && in_git=1
tree_status() {
	[ "$in_git" = 1 ] || return 0
	git -C "$top" status --porcelain --ignored 2>/dev/null | cut -c4- |
		grep -v -e '^build/' -e "^$built_re/" -e '^tests/fixtures/roots/' -e '^bench/out/'
}
tree_newer() {
	(cd "$top" && find . \( -path ./.git -o -path ./build -o -path "./$built" -o -path ./tests/fixtures/roots -o -path ./bench/out \) \
		-prune -o -newer "$stamp" \( -type d -printf '%p/\n' -o -printf '%p\n' \)) | sed '/^\.\/$/!s|^\./||'
}
before=$(tree_status)

for bin in "$@"; do
	"$bin" >"$log" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	p=${p:-0}; f=${f:-0}; s=${s:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed before its summary
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
		cat "$log"
		echo "FAIL $(basename "$bin"): $p passed, $f failed"
	else
		grep -i 'skipped:' "$log" | sed 's/^/  /'
		echo "ok   $(basename "$bin"): $p passed${s:+, $s skipped}"
	fi
done

for t in "$top"/tests/cli/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	sh "$t" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$log")
	f=$(grep -c '^not ok ' "$log")
	s=$(grep -c '^ok .*# SKIP' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $(basename "$t") exited $rc" >>"$log"
	fi
	passed=$((passed + p - s))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [ "$f" -ne 0 ]; then
		cat "$log"
		echo "FAIL $(basename "$t"): $((p - s)) passed, $f failed"
	else
		grep '# SKIP' "$log" | sed 's/^/  /'
		echo "ok   $(basename "$t"): $((p - s)) passed"
	fi
done

# what appeared, changed or went away in the tree meanwhile
wrote=$( {
	printf '%s\n' "$before" "$(tree_status)" | sort | uniq -u
	tree_newer
} | grep -v '^$' | sort -u | tr '\n' ' ' | sed 's/ $//')
if [ -n "$wrote" ]; then
	echo "not ok - the suite wrote into the tree: $wrote"
	failed=$((failed + 1))
else
	echo "ok   the suite wrote nothing into the tree"
	passed=$((passed + 1))
fi

if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
