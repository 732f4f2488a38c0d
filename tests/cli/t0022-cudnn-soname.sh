#!/bin/sh
# The cuDNN probe compares each libcudnn.so.* file's DT_SONAME with the
# header's major version. A soname shorter than "libcudnn.so." was read past
# its end (a 320-byte ELF with DT_SONAME "libcud" crashed save and restore's
# planning; found by fuzzing): now any soname that is not
# libcudnn.so.<major> is reported, and one with a longer major
# (libcudnn.so.81 for 8.2.0) no longer passes as a match.
. "$(dirname "$0")/lib.sh"

# tree SONAME: a root with CUDA 11.3's cuDNN 8.2.0 header and a libcudnn.so.8.2.0 whose soname is SONAME
tree() {
	r=$scratch/root-$2
	mkdir -p "$r/usr/local/cuda-11.3/include" "$r/usr/local/cuda-11.3/lib64"
	printf '#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 2\n#define CUDNN_PATCHLEVEL 0\n' \
		>"$r/usr/local/cuda-11.3/include/cudnn_version.h"
	printf 'int cudnnGetVersion(void) { return 8200; }\n' >"$scratch/c.c"
	cc -shared -fPIC -nostdlib -Wl,-soname,"$1" -o "$r/usr/local/cuda-11.3/lib64/libcudnn.so.8.2.0" "$scratch/c.c"
	echo "$r"
}

r=$(tree libcud short)
check_eq "the reproducer's soname is the short one" "libcud" \
	"$(readelf -dW "$r/usr/local/cuda-11.3/lib64/libcudnn.so.8.2.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
"$ENVLOCK" save --root "$r" -o short.json 2>err
check_status "save of a tree whose libcudnn has the soname libcud" 0 $?
check_grep "the mismatch is reported, not read past" \
	"libcudnn.so.8.2.0': soname libcud does not match the cuDNN 8.2.0 header" err
"$ENVLOCK" restore short.json --root "$r" --dry-run --only cudnn >plan 2>plan.err
rc=$?
if [ "$rc" -le 1 ]; then ok "restore plans against it (exit $rc)"; else not_ok "restore plans against it (exit $rc)"; cat plan.err; fi

r=$(tree libcudnn.so.81 long)
"$ENVLOCK" save --root "$r" -o long.json 2>err
check_status "save with the soname libcudnn.so.81" 0 $?
check_grep "a longer major is not the header's 8" \
	"soname libcudnn.so.81 does not match the cuDNN 8.2.0 header" err

r=$(tree libcudnn.so.8 good)
"$ENVLOCK" save --root "$r" -o good.json 2>err
check_status "save with the right soname" 0 $?
check_eq "no soname warning" "" "$(grep 'does not match the cuDNN' err)"
check_eq "the lock records the soname" "libcudnn.so.8" "$(jget good.json cudnn.libraries.0.soname)"
