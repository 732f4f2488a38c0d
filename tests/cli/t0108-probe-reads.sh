#!/bin/sh
# No probe reads the lock it is building: what a later probe needs of an
# earlier one is handed over typed on the probe context. Checked on the
# tree itself, then shown to fail on a copy with a read added.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
sh "$top/tools/probe-reads.sh" "$top" >reads 2>&1
check_status "no probe reads the lock document" 0 $?
check_eq "and says nothing" "" "$(cat reads)"

mkdir -p copy && cp -R "$top/lib" "$top/tools" copy/
printf 'static const char *sneak(const cJSON *d) { return el_jget_str(el_jget(d, "conda"), "prefix"); }\n' >>copy/lib/probe/pip.c
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "a read of the conda section added to pip.c" 1 $?
check_grep "it is named, file and line" '^lib/probe/pip.c:[0-9]*: static const char \*sneak(const cJSON \*d) { return el_jget_str(el_jget(d, "conda"), "prefix"); }$' reads
check_grep "and counted" "^1 lock reads in probes: hand the value over typed on the probe context (lib/probe/probe.h)$" reads
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

printf 'lib/probe/os.c el_jget(doc, "system") # nothing\n' >>copy/tools/probe-reads.allow
sh copy/tools/probe-reads.sh "$PWD/copy" >reads 2>&1
check_status "an allowed line that is not there any more" 1 $?
check_eq "the stale entry is named" 'tools/probe-reads.allow: no such line left: lib/probe/os.c el_jget(doc, "system")' "$(cat reads)"
