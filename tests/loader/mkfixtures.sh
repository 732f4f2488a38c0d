#!/bin/sh
# Libraries built with the real gcc for what Debian's packages cannot show,
# laid into TREE/opt/fx (TREE: a copy of mktree.sh's tree, whose libc they
# are linked against):
#   bin/app-runpath  DT_RUNPATH $ORIGIN/../lib; needs liba.so, which needs libb.so:
#                    RUNPATH is not used for liba's need, so libb is not found
#   bin/app-rpath    the same with DT_RPATH: libb is found through it
#   shadow/liba.so   another liba, for an LD_LIBRARY_PATH shadow
#   mod229.so        needs GLIBC_2.29 (posix_spawn_file_actions_addchdir_np) from
#                    oldc/libc.so.6, a fake libc whose versions stop at GLIBC_2.23
#   bin/app-hostile  RPATH /opt/fx/loop:/opt/fx/class:/opt/fx/lib: a looping symlink,
#                    then a liba of the wrong class, then the real one
#   bin/app-short    RPATH /opt/fx/short: a liba.so of 40 bytes
#   bin/app-slash    DT_NEEDED "opt/fx/lib/libslash.so", a name with a slash
#   chain/           libchain0000.so ... libchain0999.so, each needing the next;
#                    libchain1000.so does not exist (bin/app-chain needs the first)
#   mkfixtures.sh TREE
set -eu
. "$(dirname "$0")/oldlibc.sh"
tree=$1
fx=$tree/opt/fx
src=$(mktemp -d /tmp/envlock-fx.XXXXXX)
trap 'rm -rf "$src"' EXIT
mkdir -p "$fx/bin" "$fx/lib" "$fx/shadow" "$fx/oldc" "$fx/loop" "$fx/class" "$fx/short" "$fx/chain"
cd "$src"
printf 'int b(void) { return 2; }\n' >b.c
printf 'int b(void);\nint a(void) { return b() + 1; }\n' >a.c
printf 'int a(void);\nint main(void) { return a(); }\n' >app.c
cc -shared -fPIC -o "$fx/lib/libb.so" -Wl,-soname,libb.so b.c
cc -shared -fPIC -o "$fx/lib/liba.so" -Wl,-soname,liba.so a.c -L"$fx/lib" -lb
cc -shared -fPIC -o "$fx/shadow/liba.so" -Wl,-soname,liba.so a.c -L"$fx/lib" -lb
cc -Wl,-rpath-link,"$fx/lib" -o "$fx/bin/app-runpath" app.c -L"$fx/lib" -la -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib'
cc -Wl,-rpath-link,"$fx/lib" -o "$fx/bin/app-rpath" app.c -L"$fx/lib" -la -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../lib'
cc -Wl,-rpath-link,"$fx/lib" -o "$fx/bin/app-hostile" app.c -L"$fx/lib" -la -Wl,--disable-new-dtags,-rpath,/opt/fx/loop:/opt/fx/class:/opt/fx/lib
cc -Wl,-rpath-link,"$fx/lib" -o "$fx/bin/app-short" app.c -L"$fx/lib" -la -Wl,--disable-new-dtags,-rpath,/opt/fx/short:/opt/fx/lib
ln -s liba.so "$fx/loop/liba.so"
# the same library, its ELF class byte changed to 32-bit: ld.so passes it over
python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[4] = 1; open(sys.argv[2], "wb").write(d)' \
	"$fx/lib/liba.so" "$fx/class/liba.so"
head -c 40 "$fx/lib/liba.so" >"$fx/short/liba.so"
# a needed name with a slash: link against a library that has no soname, by a relative path
mkdir -p opt/fx/lib
cc -shared -fPIC -o opt/fx/lib/libslash.so b.c
cc -Wl,-rpath-link,"$fx/lib" -o "$fx/bin/app-slash" app.c -Wl,--no-as-needed opt/fx/lib/libslash.so -L"$fx/lib" -la -Wl,--disable-new-dtags,-rpath,/opt/fx/lib
cp opt/fx/lib/libslash.so "$fx/lib/libslash.so"
# GLIBC_2.29 against a libc that defines GLIBC_2.2.5 ... GLIBC_2.23 (x86_64's version names)
glibc229_module "$fx/mod229.so" mod229.so -Wl,--disable-new-dtags,-rpath,/opt/fx/oldc
old_libc "$fx/oldc/libc.so.6"
# a 1000-deep chain: one library built, its two 4-digit names rewritten in place
printf 'int z(void) { return 0; }\n' >z.c
cc -shared -fPIC -o libchain9999.so -Wl,-soname,libchain9999.so z.c
cc -shared -fPIC -o chain.so -Wl,-soname,libchain9998.so -Wl,--no-as-needed b.c -L. -l:libchain9999.so
python3 - chain.so "$fx/chain" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"libchain9998.so") == 1 and d.count(b"libchain9999.so") == 1
for i in range(1000):
    out = d.replace(b"libchain9998.so", b"libchain%04d.so" % i).replace(b"libchain9999.so", b"libchain%04d.so" % (i + 1))
    open("%s/libchain%04d.so" % (sys.argv[2], i), "wb").write(out)
PY
cc -Wl,-rpath-link,"$fx/lib" -o "$fx/bin/app-chain" app.c -L"$fx/lib" -la -Wl,--no-as-needed "$fx/chain/libchain0000.so" \
	-Wl,--disable-new-dtags,-rpath,/opt/fx/lib:/opt/fx/chain 2>/dev/null ||
	cc -Wl,-rpath-link,"$fx/lib" -o "$fx/bin/app-chain" app.c -Wl,--no-as-needed,--allow-shlib-undefined,--unresolved-symbols=ignore-all \
		-L"$fx/lib" -la "$fx/chain/libchain0000.so" -Wl,--disable-new-dtags,-rpath,/opt/fx/lib:/opt/fx/chain
