#!/bin/sh
# Self-test of tools/file-cycles.py on a made-up folder: a.c and b.c call
# each other, b.c -> c.c -> a.c closes a second cycle, d.c only calls in.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib/x" "$tmp/build/lib/x"
cd "$tmp"
printf 'int b(void);\nint a(void) { return b(); }\n' >lib/x/a.c
printf 'int a(void); int c(void);\nint b(void) { return a() + c(); }\n' >lib/x/b.c
printf 'int a(void);\nint c(void) { return a(); }\n' >lib/x/c.c
printf 'int a(void);\nint d(void) { return a(); }\n' >lib/x/d.c
for f in a b c d; do ${CC:-cc} -c -o build/lib/x/$f.o lib/x/$f.c; done
# a stale object of a removed source is not read
printf 'int a(void);\nint e(void) { return a(); }\nint f(void) { return e(); }\n' >e.c
${CC:-cc} -c -o build/lib/x/e.o e.c
fc() { python3 "$top/tools/file-cycles.py" -b build -s lib "$@"; }
fail() { echo "not ok - $*"; exit 1; }

rc=0; fc -a none x >out 2>err || rc=$?
[ "$rc" = 1 ] || fail "unexplained cycles exit $rc, not 1"
printf 'x: a.c -> b.c -> a.c\nx: a.c -> b.c -> c.c -> a.c\n' | diff -u - out || fail "cycle list"
grep -q '^file-cycles: 2 unexplained cycles' err || fail "summary on stderr"
echo "ok - two cycles, unexplained"

printf '# comment\nx: a.c b.c  # they are one parser\n' >allow
rc=0; fc -a allow x >out 2>err || rc=$?
[ "$rc" = 1 ] || fail "one unexplained cycle exits $rc, not 1"
grep -qx 'x: a.c -> b.c -> a.c (explained)' out || fail "explained 2-cycle"
grep -qx 'x: a.c -> b.c -> c.c -> a.c' out || fail "a line naming a.c b.c explains the 3-cycle"
echo "ok - a line explains only the cycles whose files it names"

printf 'x: a.c b.c c.c  # one parser\n' >allow
fc -a allow -v x >out || fail "all explained exits non-zero"
grep -qx '    b.c -> c.c: c' out || fail "-v names the symbols of an edge"
echo "ok - all explained, exit 0"

printf 'x: a.c b.c\n' >allow
rc=0; fc -a allow x >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "line 1: want" err || fail "a line without a why is an error"
echo "ok - a line without its why is refused"

# without a folder, every folder of lib that holds a .c file: one added later is guarded too
mkdir -p lib/y lib/notes build/lib/y
printf 'int y(void) { return 0; }\n' >lib/y/y.c
${CC:-cc} -c -o build/lib/y/y.o lib/y/y.c
printf 'x: a.c b.c c.c  # one parser\n' >allow
fc -a allow >out 2>err || fail "every folder, all explained, exits non-zero"
grep -qx 'file-cycles: every cycle in the 2 folders of lib is explained' err || fail "the folders counted from the tree"
printf 'int b(void);\nint z(void) { return b(); }\n' >lib/y/z.c
rc=0; fc -a allow >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "'build/lib/y/z.o': not built" err || fail "a new file of a new folder is looked at"
echo "ok - without a folder, every folder of lib"
