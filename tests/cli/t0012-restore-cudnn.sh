#!/bin/sh
# envlock restore, cuDNN step, for real: a library with soname libcudnn.so.8
# (cudnnGetVersion() = 8201) installed without its links in a sandbox
# toolkit; restore makes the links, the ld.so.conf.d entry and the loader
# cache (the real ldconfig -r), and a program then loads it by soname.
# The same from an NVIDIA-shaped archive, and an archive whose library is
# not the locked one is refused.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
if [ "$(id -u)" != 0 ]; then
	skip "cuDNN relink in a sandbox" "ldconfig -r needs root (it chroots into the sandbox)"
	exit 0
fi
LDCONFIG=$(command -v ldconfig || echo /sbin/ldconfig)
TK=/usr/local/cuda-10.2

cat >fake.c <<'EOF'
#include <stddef.h>
size_t cudnnGetVersion(void) { return 8201; }
EOF
cat >load.c <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen("libcudnn.so.8", RTLD_NOW);
	size_t (*get)(void);

	if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
	get = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
	printf("%zu\n", get ? get() : 0);
	return 0;
}
EOF
cc -shared -fPIC -Wl,-soname,libcudnn.so.8 -o libcudnn.so.8.2.1 fake.c &&
	cc -o load load.c -ldl || { not_ok "build the stand-in library"; exit 1; }
printf '#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 2\n#define CUDNN_PATCHLEVEL 1\n' >cudnn_version.h

# toolkit skeleton ROOT [with-cudnn]
mk_root() {
	mkdir -p "$1$TK/lib64" "$1$TK/include" "$1/etc/ld.so.conf.d"
	echo "CUDA Version 10.2.89" >"$1$TK/version.txt"
	ln -s cuda-10.2 "$1/usr/local/cuda"
	echo 'include /etc/ld.so.conf.d/*.conf' >"$1/etc/ld.so.conf"
}

# machine A: cuDNN installed properly; its lock
mk_root A
cp libcudnn.so.8.2.1 "A$TK/lib64/" && ln -s libcudnn.so.8.2.1 "A$TK/lib64/libcudnn.so.8" && ln -s libcudnn.so.8 "A$TK/lib64/libcudnn.so"
cp cudnn_version.h "A$TK/include/"
echo "$TK/lib64" >A/etc/ld.so.conf.d/cuda.conf
"$LDCONFIG" -r "$PWD/A"
"$ENVLOCK" save --root A -o A.lock 2>/dev/null
check_eq "the lock has the library's digest" "$(sha256sum libcudnn.so.8.2.1 | cut -d' ' -f1)" "$(jget A.lock cudnn.libraries.0.sha256)"

# machine B: the library copied by hand, no links, no loader entry, no cache
mk_root B
cp libcudnn.so.8.2.1 "B$TK/lib64/" && cp cudnn_version.h "B$TK/include/"
LD_LIBRARY_PATH="$PWD/B$TK/lib64" ./load >before
check_grep "before: libcudnn.so.8 cannot be loaded" "cannot open shared object file" before

"$ENVLOCK" restore A.lock --root B --only cudnn --dry-run >plan
check_status "dry run with something to do" 1 $?
check_grep "plan: the soname link" "do      link libcudnn.so.8 -> libcudnn.so.8.2.1 in $TK/lib64" plan
check_grep "plan: the loader entry" "add $TK/lib64 to /etc/ld.so.conf.d/envlock-cudnn.conf" plan
check_grep "plan: ldconfig -r" "refresh the loader cache (ldconfig -r $PWD/B)" plan
check_eq "a dry run changes nothing" "" "$(find B -type l -name 'libcudnn.so*')"
"$ENVLOCK" restore A.lock --root B --only cudnn --dry-run --json >plan.json
check_eq "--json: the steps and their states" "driver:skipped cuda:skipped compilers:skipped cudnn:do conda:skipped repos:skipped pip:skipped configs:skipped checkpoints:skipped verify:skipped" \
	"$("$PYTHON" -c "import json; print(' '.join(s['step'] + ':' + s['state'] for s in json.load(open('plan.json'))['steps']))")"
check_eq "--json: ldconfig's argv (the same program as this machine's ldconfig)" "[\"$(readlink -f "$LDCONFIG")\", \"-r\", \"$PWD/B\"]" \
	"$("$PYTHON" -c "import json, os; a = [i['argv'] for s in json.load(open('plan.json'))['steps'] for i in s['items'] if 'argv' in i][0]; print(json.dumps([os.path.realpath(a[0])] + a[1:]))")"

"$ENVLOCK" restore A.lock --root B --only cudnn --yes >out 2>err
check_status "restore" 0 $?
check_eq "soname link" "libcudnn.so.8.2.1" "$(readlink "B$TK/lib64/libcudnn.so.8")"
check_eq "development link" "libcudnn.so.8" "$(readlink "B$TK/lib64/libcudnn.so")"
check_eq "ld.so.conf.d entry" "$TK/lib64" "$(cat B/etc/ld.so.conf.d/envlock-cudnn.conf)"
"$LDCONFIG" -p -C B/etc/ld.so.cache >ldcache.out
check_grep "the loader cache built by ldconfig -r lists the soname" "libcudnn.so.8 (libc6,x86-64) => $TK/lib64/libcudnn.so.8" ldcache.out
check_eq "a program loads libcudnn.so.8 from there and gets 8201" "8201" "$(LD_LIBRARY_PATH="$PWD/B$TK/lib64" ./load)"
check_grep "the log has ldconfig's argv" "'-r' '$PWD/B'" .envlock/restore-*.log
check_grep "the journal ends complete" "complete sha256:" .envlock/restore-*.journal
check_grep "the result is compared with the lock" "this machine against the lock: identical" out

"$ENVLOCK" restore A.lock --root B --only cudnn --dry-run >again
check_status "second run: nothing to do" 0 $?
check_grep "second run: all ok" "0 to do, 0 manual" again

# machine C: nothing of cuDNN; NVIDIA's archive layout (cudnn-linux-*-archive/{include,lib}/)
mk_root C
top_dir=cudnn-linux-x86_64-8.2.1.32_cuda10.2-archive
mkdir -p "$top_dir/include" "$top_dir/lib"
cp cudnn_version.h "$top_dir/include/" && cp libcudnn.so.8.2.1 "$top_dir/lib/"
ln -s libcudnn.so.8.2.1 "$top_dir/lib/libcudnn.so.8"
echo "NVIDIA license" >"$top_dir/LICENSE"
tar -cJf cudnn.tar.xz "$top_dir"

"$ENVLOCK" restore A.lock --root C --only cudnn --dry-run >plan
check_grep "without an archive: manual, with the instruction" "rerun with --cudnn-archive FILE" plan
check_grep "it names NVIDIA's archive page, from the knowledge (nvidia_archives)" "from NVIDIA (https://developer.nvidia.com/cudnn-archive)" plan
"$ENVLOCK" restore A.lock --root C --only cudnn --cudnn-archive cudnn.tar.xz --yes >out 2>err
check_status "restore from the archive" 0 $?
check_eq "the library unpacked, same digest" "$(sha256sum libcudnn.so.8.2.1 | cut -d' ' -f1)" "$(sha256sum "C$TK/lib64/libcudnn.so.8.2.1" | cut -d' ' -f1)"
check_eq "the header unpacked" "$(cat cudnn_version.h)" "$(cat "C$TK/include/cudnn_version.h")"
check_eq "the soname link made" "libcudnn.so.8.2.1" "$(readlink "C$TK/lib64/libcudnn.so.8")"
check_eq "nothing else from the archive" "" "$(ls "C$TK" | grep -v -e include -e lib64 -e version.txt)"
check_eq "loads from the archive's copy" "8201" "$(LD_LIBRARY_PATH="$PWD/C$TK/lib64" ./load)"

# machine D: an archive whose library is not the one locked
mk_root D
rm -rf "$top_dir" && mkdir -p "$top_dir/include" "$top_dir/lib"
cp cudnn_version.h "$top_dir/include/"
sed 's/8201/8202/' fake.c >other.c && cc -shared -fPIC -Wl,-soname,libcudnn.so.8 -o "$top_dir/lib/libcudnn.so.8.2.1" other.c
tar -czf other.tgz "$top_dir"
"$ENVLOCK" restore A.lock --root D --only cudnn --cudnn-archive other.tgz --yes >out 2>err
check_status "an archive with another library" 1 $?
check_grep "the failure names the file and the digests" "libcudnn.so.8.2.1 has sha256 .*, the lock recorded" out
check_eq "nothing installed from it" "" "$(ls "D$TK/lib64")"
check_eq "no temporary file left" "" "$(ls -A "D$TK/lib64" "D$TK/include" | grep envlock)"

# --json with an apply: stdout is one JSON document, the plan as applied
mk_root J
cp libcudnn.so.8.2.1 "J$TK/lib64/" && cp cudnn_version.h "J$TK/include/"
"$ENVLOCK" restore A.lock --root J --only cudnn --yes --json >applied.json 2>err
check_status "restore --json --yes" 0 $?
check_eq "stdout is one JSON document whose cudnn items are done" "done" \
	"$("$PYTHON" -c "import json; d = json.load(open('applied.json')); print(' '.join(sorted({i['state'] for s in d['steps'] if s['step'] == 'cudnn' for i in s['items'] if i['state'] != 'ok'})))")"
check_grep "the comparison with the lock went to stderr" "this machine against the lock: identical" err

# links as locked that name files not there yet: "in place" only beside the
# unpack that brings the files, and a step to do when nothing brings them
cp -a "$FIXTURES/ubuntu1604-mmdet" dang
rm -f dang/usr/local/cuda-10.2/lib64/libcudnn*.so.8.2.1
: >any.tar.xz
"$ENVLOCK" restore "$GOLDEN/ubuntu1604-mmdet.lock.json" --root dang --only cudnn --cudnn-archive any.tar.xz --dry-run >dang.plan 2>&1
check_grep "links to files the archive brings say so" "^  ok      14 soname links in place, to the files the unpack above puts there$" dang.plan
check_eq "none is counted in place as it stands" "" "$(grep '^  ok      [0-9]* soname links in place$' dang.plan)"
"$ENVLOCK" restore "$GOLDEN/ubuntu1604-mmdet.lock.json" --root "$FIXTURES/ubuntu1604-mmdet" --only cudnn --dry-run >whole.plan 2>&1
check_grep "the tree as locked: its links in place" "^  ok      14 soname links in place$" whole.plan
