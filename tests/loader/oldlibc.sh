# Sourced by mkfixtures.sh and mkloads.sh, in their scratch folder: the seed
# story's "version `GLIBC_2.29' not found" from real ELF files built with gcc.
#   glibc229_module FILE SONAME [LDFLAGS...]  a module needing GLIBC_2.29
#       (posix_spawn_file_actions_addchdir_np, new in glibc 2.29)
#   old_libc FILE  a libc.so.6 whose versions stop at GLIBC_2.23, as Ubuntu
#       16.04's glibc 2.23 (x86_64's version names), made by a version script
glibc229_module() {
	_f=$1 _so=$2
	shift 2
	cat >m.c <<'C'
#define _GNU_SOURCE
#include <spawn.h>
int m(posix_spawn_file_actions_t *fa) { return posix_spawn_file_actions_addchdir_np(fa, "/"); }
C
	cc -shared -fPIC -o "$_f" -Wl,-soname,"$_so" "$@" m.c
}
old_libc() {
	_prev=""
	: >oldc.map
	: >oldc.c
	for _v in 2.2.5 2.2.6 2.3 2.3.2 2.3.3 2.3.4 2.4 2.5 2.6 2.7 2.8 2.9 2.10 2.11 2.12 2.13 2.14 2.15 2.16 2.17 2.18 2.22 2.23; do
		echo "GLIBC_$_v { global: oldc_$(echo "$_v" | tr . _); }${_prev:+ $_prev};" >>oldc.map
		echo "int oldc_$(echo "$_v" | tr . _)(void) { return 0; }" >>oldc.c
		_prev=GLIBC_$_v
	done
	# removed first: a tree of hard links must not change the file it shares
	rm -f "$1"
	cc -shared -fPIC -nostdlib -o "$1" -Wl,-soname,libc.so.6 -Wl,--version-script=oldc.map oldc.c
}
