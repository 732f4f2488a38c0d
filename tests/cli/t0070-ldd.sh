#!/bin/sh
# envlock ldd against the real glibc loader, run in a chroot of the same tree:
# a tree of Debian 12's own packages (tests/loader/mktree.sh), a copy with a
# library deleted, and libraries the real gcc builds for what Debian cannot
# show (tests/loader/mkfixtures.sh): RUNPATH not applying to transitive needs,
# an LD_LIBRARY_PATH shadow, GLIBC_2.29 against a libc that stops at 2.23,
# hostile files and a 1000-deep chain. The judge is
#   chroot TREE /lib64/ld-linux-x86-64.so.2 --list FILE
. "$(dirname "$0")/lib.sh"

# 0. near misses: a need not found, and in a folder searched for it the same library
# under another name. Built here with cc, needing nothing else (-nostdlib); the judges
# are the real loader (ld.so --list, after the printed command ran) and the real
# ldconfig -r (does it make the link the output says it makes?).
near_misses() {
	nm=$scratch/nm
	mkdir -p "$nm/src" && cd "$nm/src" || return 1
	printf 'int nm_foo(void) { return 8; }\n' >foo.c
	printf 'int nm_foo(void);\nint nm_mod(void) { return nm_foo(); }\n' >mod.c
	so() { cc -shared -fPIC -nostdlib -Wl,-soname,"$1" -o "$2" foo.c; } # so SONAME FILE
	so libnmfoo.so.8 libnmfoo.so.8.2.1 && so libnmfoo.so.8.1 libnmfoo.so.8.1 &&
		so libnmfoo.so.9 libnmfoo.so.9 && so libnmfoo.so.10 libnmfoo.so.10 &&
		so libnmfoox.so.8 libnmfoox.so.8 &&
		cc -shared -fPIC -nostdlib -o mod.so mod.c libnmfoo.so.8.2.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib' ||
		return 1
	# the same library with its ELF class byte made 32-bit: the loader passes it over
	"$PYTHON" -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[4] = 1; open(sys.argv[2], "wb").write(d)' \
		libnmfoo.so.8.2.1 libnmfoo.so.8.3 || return 1
	cd "$scratch" || return 1
}
# nm_tree NAME FILE...: $nm/NAME, a root with /opt/nm/bin/mod.so (DT_RUNPATH $ORIGIN/../lib,
# needs libnmfoo.so.8) and the files named from $nm/src in /opt/nm/lib
nm_tree() {
	t=$nm/$1
	shift
	mkdir -p "$t/opt/nm/bin" "$t/opt/nm/lib" "$t/etc" && cp "$nm/src/mod.so" "$t/opt/nm/bin/" || return 1
	for f in "$@"; do cp "$nm/src/$f" "$t/opt/nm/lib/" || return 1; done
}
ldso_list() { /lib64/ld-linux-x86-64.so.2 --list "$1" >ldso.out 2>&1; }
LDCONFIG=$(command -v ldconfig || echo /sbin/ldconfig)
if ! command -v cc >/dev/null 2>&1 || ! near_misses >nm.out 2>&1; then
	skip "envlock ldd names near misses" "no cc here to build the libraries: $(tail -n 1 nm.out 2>/dev/null)"
else
	# a: libnmfoo.so.8.2.1 whose soname is libnmfoo.so.8, its development link, no soname link;
	# /opt/nm/lib is in the tree's ld.so.conf (through an include relative to /etc)
	nm_tree soname libnmfoo.so.8.2.1 libnmfoo.so.8.3 && ln -s libnmfoo.so.8.2.1 "$t/opt/nm/lib/libnmfoo.so"
	mkdir -p "$t/etc/ld.so.conf.d" && echo 'include ld.so.conf.d/*.conf' >"$t/etc/ld.so.conf" &&
		printf '# cuDNN, copied by hand\n/opt/nm/lib/\n' >"$t/etc/ld.so.conf.d/nm.conf"
	"$ENVLOCK" ldd --root "$t" /opt/nm/bin/mod.so >ldd.txt 2>ldd.err
	check_status "a missing soname link" 1 $?
	cat >expected <<'EOF2'
/opt/nm/bin/mod.so
└── libnmfoo.so.8 not found
near misses for libnmfoo.so.8 (needed by /opt/nm/bin/mod.so):
  /opt/nm/bin/../lib/libnmfoo.so.8.2.1 has the soname libnmfoo.so.8, but no link of that name leads to it; this makes the link:
    ln -s libnmfoo.so.8.2.1 /opt/nm/bin/../lib/libnmfoo.so.8 && ldconfig
    ldconfig alone makes the link too: it scans that folder
EOF2
	check_diff "  names the file with its soname, the command, and that ldconfig alone makes it" expected ldd.txt
	check_grep "  the command is a line of its own" '^    ln -s libnmfoo\.so\.8\.2\.1 /opt/nm/bin/\.\./lib/libnmfoo\.so\.8 && ldconfig$' ldd.txt
	"$ENVLOCK" ldd --root "$t" --json /opt/nm/bin/mod.so >ldd.json 2>ldd.err
	check_eq "  --json: the near miss, once for the file and its development link, not the 32-bit one" \
		'[{"fix": "ln -s libnmfoo.so.8.2.1 /opt/nm/bin/../lib/libnmfoo.so.8 && ldconfig", "path": "/opt/nm/bin/../lib/libnmfoo.so.8.2.1", "soname": "libnmfoo.so.8"}]' \
		"$(jget ldd.json needed.0.near)"
	check_eq "  --json: the rest as it was" "libnmfoo.so.8   [\"libnmfoo.so.8\"]" \
		"$(jget ldd.json needed.0.soname) $(jget ldd.json needed.0.path) $(jget ldd.json needed.0.found_by) $(jget ldd.json not_found)"
	if [ -x "$LDCONFIG" ]; then
		cp -a "$t" "$nm/soname-ldconfig" && "$LDCONFIG" -r "$nm/soname-ldconfig" 2>ldconfig.err
		check_eq "  the real ldconfig -r makes that very link" "libnmfoo.so.8.2.1" \
			"$(readlink "$nm/soname-ldconfig/opt/nm/lib/libnmfoo.so.8")"
	else
		skip "  the real ldconfig -r makes that very link" "no ldconfig here"
	fi

	# b: the same on this machine's own root, where the printed command runs as it is
	# (without its ldconfig: this machine's cache is not the test's to change)
	"$ENVLOCK" ldd --json "$t/opt/nm/bin/mod.so" >ldd.json 2>ldd.err
	check_status "  on this machine's root" 1 $?
	fix=$(jget ldd.json needed.0.near.0.fix)
	check_eq "  the command names the folder as searched" \
		"ln -s libnmfoo.so.8.2.1 $t/opt/nm/bin/../lib/libnmfoo.so.8 && ldconfig" "$fix"
	if [ -x /lib64/ld-linux-x86-64.so.2 ]; then
		ldso_list "$t/opt/nm/bin/mod.so"
		check_grep "  ld.so says not found before" "error while loading shared libraries: libnmfoo.so.8: cannot open shared object file" ldso.out
		sh -c "${fix% && ldconfig}"
		ldso_list "$t/opt/nm/bin/mod.so"
		check_grep "  ld.so finds it after the printed command" "libnmfoo.so.8 => $t/opt/nm/bin/../lib/libnmfoo.so.8 " ldso.out
	else
		skip "  ld.so agrees before and after the printed command" "no /lib64/ld-linux-x86-64.so.2 here"
	fi
	"$ENVLOCK" ldd "$t/opt/nm/bin/mod.so" >ldd.txt 2>ldd.err
	check_eq "  envlock finds it too, and names no near miss" "0 0" "$? $(grep -c 'near misses' ldd.txt)"

	# c: the same without ld.so.conf: the command, but no word of ldconfig alone
	nm_tree noconf libnmfoo.so.8.2.1
	"$ENVLOCK" ldd --root "$t" /opt/nm/bin/mod.so >ldd.txt 2>ldd.err
	check_eq "a folder ldconfig does not scan: the command, and nothing of ldconfig alone" \
		"1 1 0" "$? $(grep -c '^    ln -s libnmfoo.so.8.2.1 /opt/nm/bin/../lib/libnmfoo.so.8 && ldconfig$' ldd.txt) $(grep -c 'ldconfig alone' ldd.txt)"
	if [ -x "$LDCONFIG" ]; then
		"$LDCONFIG" -r "$t" 2>ldconfig.err
		check_eq "  the real ldconfig -r makes no link there" "absent" \
			"$(if [ -e "$t/opt/nm/lib/libnmfoo.so.8" ] || [ -L "$t/opt/nm/lib/libnmfoo.so.8" ]; then echo there; else echo absent; fi)"
	else
		skip "  the real ldconfig -r makes no link there" "no ldconfig here"
	fi

	# d: only another major version
	nm_tree major libnmfoo.so.9
	"$ENVLOCK" ldd --root "$t" /opt/nm/bin/mod.so >ldd.txt 2>ldd.err
	check_status "only another major version" 1 $?
	cat >expected <<'EOF2'
/opt/nm/bin/mod.so
└── libnmfoo.so.8 not found
near misses for libnmfoo.so.8 (needed by /opt/nm/bin/mod.so):
  another version: /opt/nm/bin/../lib/libnmfoo.so.9 (soname libnmfoo.so.9)
  install the library that provides libnmfoo.so.8
EOF2
	check_diff "  named as another version, with what the name wanted needs, and no link command" expected ldd.txt
	"$ENVLOCK" ldd --root "$t" --json /opt/nm/bin/mod.so >ldd.json 2>ldd.err
	check_eq "  --json: no fix" '[{"fix": null, "path": "/opt/nm/bin/../lib/libnmfoo.so.9", "soname": "libnmfoo.so.9"}]' \
		"$(jget ldd.json needed.0.near)"

	# e: nothing like it: another stem, a text file of the right name, the 32-bit one
	nm_tree nothing libnmfoox.so.8 libnmfoo.so.8.3 && echo 'not a library' >"$t/opt/nm/lib/libnmfoo.so.8.0"
	"$ENVLOCK" ldd --root "$t" /opt/nm/bin/mod.so >ldd.txt 2>ldd.err
	printf '/opt/nm/bin/mod.so\n\342\224\224\342\224\200\342\224\200 libnmfoo.so.8 not found\n' >expected
	check_diff "nothing similar: not found, and no near miss" expected ldd.txt
	"$ENVLOCK" ldd --root "$t" --json /opt/nm/bin/mod.so >ldd.json 2>ldd.err
	check_eq "  --json: near is empty" "[]" "$(jget ldd.json needed.0.near)"

	# f: nearest first, three at most: the soname wanted, the same major, then by name
	nm_tree order libnmfoo.so.9 libnmfoo.so.10 libnmfoo.so.8.1 libnmfoo.so.8.2.1
	"$ENVLOCK" ldd --root "$t" --json /opt/nm/bin/mod.so >ldd.json 2>ldd.err
	check_eq "nearest first, three at most" \
		"/opt/nm/bin/../lib/libnmfoo.so.8.2.1 /opt/nm/bin/../lib/libnmfoo.so.8.1 /opt/nm/bin/../lib/libnmfoo.so.10 " \
		"$("$PYTHON" -c 'import json, sys; print(" ".join(n["path"] for n in json.load(open(sys.argv[1]))["needed"][0]["near"]), "")' ldd.json)"
	"$ENVLOCK" ldd --root "$t" /opt/nm/bin/mod.so >ldd.txt 2>ldd.err
	check_eq "  a file with the soname wanted: no word of installing" "0 1" \
		"$(grep -c 'install the library' ldd.txt) $(grep -c '^  another version: /opt/nm/bin/../lib/libnmfoo.so.8.1 (soname libnmfoo.so.8.1)$' ldd.txt)"

	# g: a folder only ld.so.cache leads to
	if [ -x "$LDCONFIG" ]; then
		nm_tree cache && mkdir -p "$t/opt/other" && cp "$nm/src/libnmfoo.so.9" "$t/opt/other/" &&
			echo /opt/other >"$t/etc/ld.so.conf" && "$LDCONFIG" -r "$t" 2>ldconfig.err
		"$ENVLOCK" ldd --root "$t" --json /opt/nm/bin/mod.so >ldd.json 2>ldd.err
		check_eq "a folder of ld.so.cache's entries is searched too" \
			'[{"fix": null, "path": "/opt/other/libnmfoo.so.9", "soname": "libnmfoo.so.9"}]' "$(jget ldd.json needed.0.near)"
	else
		skip "a folder of ld.so.cache's entries is searched too" "no ldconfig here"
	fi

	# h: names no shell or terminal may take as they are
	nm_tree quote && cp "$nm/src/libnmfoo.so.8.2.1" "$t/opt/nm/lib/libnmfoo.so.8.2.1 it's \$(touch gotcha)"
	"$ENVLOCK" ldd --json "$t/opt/nm/bin/mod.so" >ldd.json 2>ldd.err
	fix=$(jget ldd.json needed.0.near.0.fix)
	check_eq "a name with a quote and a \$(...): quoted for the shell" \
		"ln -s 'libnmfoo.so.8.2.1 it'\\''s \$(touch gotcha)' $t/opt/nm/bin/../lib/libnmfoo.so.8 && ldconfig" "$fix"
	(cd "$t/opt/nm/lib" && sh -c "${fix% && ldconfig}")
	check_eq "  the command makes that link and runs nothing" "libnmfoo.so.8.2.1 it's \$(touch gotcha) absent" \
		"$(readlink "$t/opt/nm/lib/libnmfoo.so.8") $(if [ -e "$t/opt/nm/lib/gotcha" ] || [ -e gotcha ]; then echo there; else echo absent; fi)"
	nm_tree escape && cp "$nm/src/libnmfoo.so.8.2.1" "$t/opt/nm/lib/libnmfoo.so.8.2.1$(printf '\033')[2J"
	"$ENVLOCK" ldd --root "$t" /opt/nm/bin/mod.so >ldd.txt 2>ldd.err
	"$ENVLOCK" ldd --root "$t" --json /opt/nm/bin/mod.so >ldd.json 2>ldd.err
	check_eq "a name with an escape sequence: nothing raw reaches the terminal" "clean clean 1" \
		"$(clean ldd.txt) $(clean ldd.json) $(grep -c 'libnmfoo.so.8.2.1\\x1b\[2J has the soname' ldd.txt)"
fi

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
