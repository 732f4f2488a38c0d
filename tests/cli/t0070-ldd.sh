#!/bin/sh
# envlock ldd against the real glibc loader, run in a chroot of the same tree:
# a tree of Debian 12's own packages (tests/loader/mktree.sh), a copy with a
# library deleted, and libraries the real gcc builds for what Debian cannot
# show (tests/loader/mkfixtures.sh): RUNPATH not applying to transitive needs,
# an LD_LIBRARY_PATH shadow, GLIBC_2.29 against a libc that stops at 2.23,
# hostile files and a 1000-deep chain. The judge is
#   chroot TREE /lib64/ld-linux-x86-64.so.2 --list FILE
. "$(dirname "$0")/lib.sh"

debian_tree "envlock ldd agrees with the real loader on Debian 12's packages"
if [ "$can_chroot" != yes ]; then
	skip "envlock ldd agrees with the real loader in a chroot" "chroot needs root, and a loader the tree can run"
	exit 0
fi
ldso() { chroot "$1" /lib64/ld-linux-x86-64.so.2 "$@" 2>&1; }
judge() { # judge TREE FILE [LDSO OPTIONS]: the real loader's --list of FILE
	t=$1; f=$2; shift 2
	chroot "$t" /lib64/ld-linux-x86-64.so.2 "$@" --list "$f" >ldso.out 2>&1
}
# agree WHAT TREE FILE [--library-path P]: every path ld.so loads, envlock names alike, and no other
agree() {
	what=$1; t=$2; f=$3; shift 3
	"$ENVLOCK" ldd --root "$t" --json "$@" "$f" >ldd.json 2>ldd.err
	st=$?
	if [ $# -gt 0 ]; then judge "$t" "$f" --library-path "$2"; else judge "$t" "$f"; fi
	if "$PYTHON" "$top/tests/loader/compare.py" ldd.json ldso.out >cmp.out 2>&1 && [ "$st" = 0 ]; then
		ok "$what: $(tail -n 1 cmp.out), as ld.so --list"
	else
		not_ok "$what"; echo "#   envlock exit $st"; sed 's/^/#   /' cmp.out ldso.out ldd.err | head -n 30
	fi
}
# the first name envlock did not find (jget's json module cannot nest 1000 deep)
first_nf() { "$PYTHON" -c 'import json, sys; sys.setrecursionlimit(20000); print((json.load(open(sys.argv[1]))["not_found"] or [""])[0])' "$1"; }
# first_missing WHAT TREE FILE NAME: ld.so stops at NAME, the first of envlock's not_found
first_missing() {
	"$ENVLOCK" ldd --root "$2" --json "$3" >ldd.json 2>ldd.err
	st=$?
	judge "$2" "$3"
	ld=$(sed -n 's/.*error while loading shared libraries: \([^:]*\): cannot open shared object file.*/\1/p' ldso.out)
	check_eq "$1: ld.so stops at $4" "$4" "$ld"
	check_eq "$1: envlock's first not found" "$4 1" "$(first_nf ldd.json) $st"
}

# 1. Debian's own files
for f in /usr/bin/python3.11 /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 \
	/usr/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so \
	/usr/lib/python3.11/lib-dynload/_hashlib.cpython-311-x86_64-linux-gnu.so \
	/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so \
	/usr/lib/x86_64-linux-gnu/libgssapi_krb5.so.2 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
	agree "debian: $f" "$tree" "$f"
done
"$ENVLOCK" ldd --root "$tree" --json /usr/bin/python3.11 >ldd.json
check_eq "python3.11's libc comes from ld.so.cache" "/lib/x86_64-linux-gnu/libc.so.6 ld.so.cache" \
	"$(jget ldd.json needed.0.needed.0.path) $(jget ldd.json needed.0.needed.0.found_by)"
check_eq "the interpreter is the file's PT_INTERP" "/lib64/ld-linux-x86-64.so.2" "$(jget ldd.json interpreter)"

# 2. a library deleted from a copy of the tree (its ld.so.cache entry left stale)
rm -rf "$work/gone" && cp -al "$tree" "$work/gone" && rm "$work/gone/usr/lib/x86_64-linux-gnu/libexpat.so.1"
first_missing "libexpat.so.1 deleted" "$work/gone" /usr/bin/python3.11 libexpat.so.1
rm -rf "$work/gone" && cp -al "$tree" "$work/gone" && rm "$work/gone/usr/lib/x86_64-linux-gnu/libcrypto.so.3"
first_missing "libcrypto.so.3 deleted (a transitive need)" "$work/gone" \
	/usr/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so libcrypto.so.3
rm -rf "$work/gone"

# 3. gcc-built fixtures on a copy of the tree
fx=$work/fx
rm -rf "$fx" && cp -al "$tree" "$fx"
if ! sh "$top/tests/loader/mkfixtures.sh" "$fx" >mk.out 2>&1; then
	not_ok "tests/loader/mkfixtures.sh built the fixtures"; sed 's/^/#   /' mk.out | tail -n 20
	exit 1
fi
agree "DT_RPATH applies to liba's own need" "$fx" /opt/fx/bin/app-rpath
check_eq "  both found by rpath" "rpath rpath" "$(jget ldd.json needed.0.found_by) $(jget ldd.json needed.0.needed.0.found_by)"
first_missing "DT_RUNPATH does not apply to liba's need" "$fx" /opt/fx/bin/app-runpath libb.so
check_eq "  liba found by runpath" "/opt/fx/bin/../lib/liba.so runpath" "$(jget ldd.json needed.0.path) $(jget ldd.json needed.0.found_by)"
agree "LD_LIBRARY_PATH shadows DT_RUNPATH" "$fx" /opt/fx/bin/app-runpath --library-path /opt/fx/shadow:/opt/fx/lib
check_eq "  liba from the shadow" "/opt/fx/shadow/liba.so ld_library_path" "$(jget ldd.json needed.0.path) $(jget ldd.json needed.0.found_by)"
agree "DT_RPATH comes before LD_LIBRARY_PATH" "$fx" /opt/fx/bin/app-rpath --library-path /opt/fx/shadow
check_eq "  liba not from the shadow" "/opt/fx/bin/../lib/liba.so" "$(jget ldd.json needed.0.path)"
agree "a needed name with a slash" "$fx" /opt/fx/bin/app-slash
check_eq "  opened as it is" "opt/fx/lib/libslash.so /opt/fx/lib/libslash.so path" \
	"$(jget ldd.json needed.0.soname) $(jget ldd.json needed.0.path) $(jget ldd.json needed.0.found_by)"

"$ENVLOCK" ldd --root "$fx" --json /opt/fx/mod229.so >ldd.json 2>ldd.err
st=$?
judge "$fx" /opt/fx/mod229.so
check_eq "GLIBC_2.29 against a libc that stops at 2.23 (exit 1)" "1" "$st"
check_eq "  the missing versions, exactly" '[{"file": "/opt/fx/mod229.so", "library": "libc.so.6", "library_path": "/opt/fx/oldc/libc.so.6", "version": "GLIBC_2.29"}]' \
	"$(jget ldd.json missing_versions)"
check_grep "  ld.so says the same" "version \`GLIBC_2.29' not found (required by /opt/fx/mod229.so)" ldso.out
"$ENVLOCK" ldd --root "$fx" /opt/fx/mod229.so >ldd.txt 2>&1
check_grep "  the tree says it" "GLIBC_2.29 of libc.so.6 (/opt/fx/oldc/libc.so.6), needed by /opt/fx/mod229.so" ldd.txt

first_missing "a looping symlink ends the DT_RPATH list; the wrong class is passed over" "$fx" /opt/fx/bin/app-hostile liba.so
"$ENVLOCK" ldd --root "$fx" --json /opt/fx/bin/app-short >ldd.json 2>ldd.err
st=$?
judge "$fx" /opt/fx/bin/app-short
check_eq "a 40-byte liba stops the load (exit 1)" "1 '/opt/fx/short/liba.so': file too short" "$st $(jget ldd.json needed.0.error)"
check_grep "  ld.so says the same" "/opt/fx/short/liba.so: file too short" ldso.out
first_missing "a 1000-deep chain" "$fx" /opt/fx/bin/app-chain libchain1000.so
check_eq "  all 1000 found first" "1000" "$(grep -c '"path": "/opt/fx/chain/libchain' ldd.json)"

# 4. errors: one line, exit 2
"$ENVLOCK" ldd --root "$tree" /usr/lib/python3.11/os.py >out 2>err
check_eq "not ELF: exit 2, one line" "2 envlock: ldd: '/usr/lib/python3.11/os.py': not an ELF file (invalid ELF header)" "$? $(cat err)"
"$ENVLOCK" ldd --root "$tree" /nope >out 2>err
check_eq "no such file: exit 2, one line" "2 envlock: ldd: '/nope': no such file" "$? $(cat err)"
"$ENVLOCK" ldd >out 2>err
check_eq "no FILE: exit 2" "2 envlock: ldd: expected one FILE, got 0" "$? $(head -n 1 err)"
NO_COLOR= "$ENVLOCK" ldd --root "$tree" /usr/bin/python3.11 >out 2>&1
check_eq "no colour when stdout is no terminal" "0" "$(grep -c "$(printf '\033')" out)"
rm -rf "$fx"
