#!/bin/sh
# No probe reads JSON it wrote: not the lock it is building, nor an object
# it built itself; what a later probe needs of an earlier one is handed
# over typed on the probe context. The only JSON a probe reads is other
# JSON it parses, each named with why in tools/probe-reads.allow. Checked
# on the tree itself, then shown to fail on a copy with a read added.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
sh "$top/tools/probe-reads.sh" "$top" >reads 2>&1
check_status "no probe reads JSON it wrote" 0 $?
check_eq "and says nothing" "" "$(cat reads)"

mkdir -p copy && cp -R "$top/lib" "$top/tools" copy/
count='JSON reads in probes that parse no other JSON: keep what a probe wrote in C, hand it over typed (lib/probe/probe.h)'

printf 'static const char *sneak(const cJSON *d) { return el_jget_str(el_jget(d, "conda"), "prefix"); }\n' >>copy/lib/probe/pip.c
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "a read of the conda section added to pip.c" 1 $?
check_grep "it is named, file and line" '^lib/probe/pip.c:[0-9]*: static const char \*sneak(const cJSON \*d) { return el_jget_str(el_jget(d, "conda"), "prefix"); }$' reads
check_grep "and counted" "^1 $count\$" reads
sed -i '$d' copy/lib/probe/pip.c

printf 'static void sneak2(el_probe *p) { el_view_free(el_view_new(p->sec[EL_SEC_PIP])); }\n' >>copy/lib/probe/cudnn.c
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "a typed view of a section built in cudnn.c" 1 $?
check_grep "it is named" '^lib/probe/cudnn.c:[0-9]*: static void sneak2' reads
sed -i '$d' copy/lib/probe/cudnn.c

printf 'static int sneak3(el_probe *p) { return cJSON_GetArraySize(el_probe_section(p, EL_SEC_CONDA)); }\n' >>copy/lib/probe/envcuda.c
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "a section read back through el_probe_section" 1 $?
check_grep "it is named" '^lib/probe/envcuda.c:[0-9]*: static int sneak3' reads
sed -i '$d' copy/lib/probe/envcuda.c

# a probe's own object read back: no section's name, no lock, still a read of what it wrote
printf 'static const char *sneak4(const cJSON *tk) { return el_jget_str(tk, "home"); }\n' >>copy/lib/probe/cuda.c
printf 'static int sneak5(cJSON *libs) { int n = 0; for (cJSON *l = libs->child; l; l = l->next) n++; return n; }\n' >>copy/lib/probe/libraries.c
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "a toolkit's entry read back in cuda.c, a walk of the libraries written" 1 $?
check_grep "the read is named" '^lib/probe/cuda.c:[0-9]*: static const char \*sneak4(const cJSON \*tk) { return el_jget_str(tk, "home"); }$' reads
check_grep "and the walk" '^lib/probe/libraries.c:[0-9]*: static int sneak5' reads
check_grep "both counted" "^2 $count\$" reads
sed -i '$d' copy/lib/probe/cuda.c
sed -i '$d' copy/lib/probe/libraries.c

# in a function the list allows (version.json's parse), a read of the lock is still named
sed -i '/^	item = el_jget(doc, "cuda");$/a\
	el_jget(el_probe_section(p, EL_SEC_CUDA), "toolkits");' copy/lib/probe/cuda.c
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "a section read inside version_json" 1 $?
check_eq "it alone is named" "lib/probe/cuda.c:$(grep -n 'el_probe_section(p, EL_SEC_CUDA), "toolkits"' copy/lib/probe/cuda.c | cut -d: -f1): el_jget(el_probe_section(p, EL_SEC_CUDA), \"toolkits\");
1 $count" "$(cat reads)"
cp "$top/lib/probe/cuda.c" copy/lib/probe/cuda.c

# the list is what lets a parse of other JSON through
grep -v '^lib/probe/cuda.c version_json()' "$top/tools/probe-reads.allow" >copy/tools/probe-reads.allow
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "version.json's parse without its entry" 1 $?
check_grep "its reads are named" '^lib/probe/cuda.c:[0-9]*: item = el_jget(doc, "cuda");$' reads
check_eq "all of them, in version_json only" "$(sed -n '/^static bool version_json(/,/^}/p' "$top/lib/probe/cuda.c" |
	grep -cE 'el_jget|cJSON_ArrayForEach')" "$(grep -c '^lib/probe/cuda.c:' reads)"
cp "$top/tools/probe-reads.allow" copy/tools/probe-reads.allow

printf 'lib/probe/os.c el_jget(doc, "system") # nothing\nlib/probe/os.c os_json() # nothing either\n' >>copy/tools/probe-reads.allow
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "allowed reads that are not there" 1 $?
check_eq "each stale entry is named" 'tools/probe-reads.allow: no JSON read left there: lib/probe/os.c el_jget(doc, "system")
tools/probe-reads.allow: no JSON read left there: lib/probe/os.c os_json()' "$(cat reads)"
cp "$top/tools/probe-reads.allow" copy/tools/probe-reads.allow

sed -i 's|^lib/probe/git.c is_envlock_lock() #.*|lib/probe/git.c is_envlock_lock()|' copy/tools/probe-reads.allow
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "an entry that says not why" 1 $?
check_grep "it is named, with its line" '^tools/probe-reads.allow:[0-9]*: says not why: lib/probe/git.c is_envlock_lock()$' reads
