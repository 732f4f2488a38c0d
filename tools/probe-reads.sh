#!/bin/sh
# The probes write their sections of a lock and hand what later probes
# need over typed, on the probe context (lib/probe/probe.h); none reads
# the lock document being built. This lists every line in lib/probe that
# reads a lock: the document (->doc), the typed view of a lock (el_view),
# a section object read back (el_probe_section, ->sec[] outside the two
# files that create and free them), or a member named like a section
# ("conda", "pip", "cuda", ...) read by key. A line tools/probe-reads.allow
# names (file, then text the line holds, then why) is a parse of other
# JSON. Exit 1 when there is one.
# Usage: tools/probe-reads.sh [TOP]
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2
allow=tools/probe-reads.allow
sections='env|host|system|gpu|python|conda|pip|frameworks|cuda|cudnn|compilers|loads|checkpoints|configs|repos'
jread='el_jget[a-z_]*|cJSON_GetObjectItem[A-Za-z]*|cJSON_HasObjectItem[A-Za-z]*|cJSON_GetArrayItem|cJSON_GetArraySize|cJSON_ArrayForEach'
reads="->doc\\b|\\bel_view\\b|el_view_|el_lock_view|($jread)\\([^;]*(el_probe_section|->sec\\[)|($jread)\\([^;]*\"($sections)\""
# allowed lines: "FILE TEXT # why"; TEXT is what the line holds
allowed() {
	[ -f "$allow" ] || return 1
	sed -n 's/^\([^ #][^ ]*\) \(.*[^ ]\) *#.*/\1\t\2/p' "$allow" | while IFS='	' read -r f t; do
		[ "$f" = "$1" ] && case $2 in *"$t"*) echo yes; break ;; esac
	done | grep -q yes
}
found=$( { grep -nE -- "$reads" lib/probe/*.c lib/probe/*.h
	  grep -n -- '->sec\[' lib/probe/*.c lib/probe/*.h | grep -vE '^lib/probe/(probe|lock)\.c:'; } 2>/dev/null | sort -t: -k1,1 -k2,2n -u |
	while IFS=: read -r file line text; do
		allowed "$file" "$text" && continue
		echo "$file:$line: $(echo "$text" | sed 's/^[[:space:]]*//')"
	done)
# every allowed line must still be there: the list does not rot
stale=$([ -f "$allow" ] && sed -n 's/^\([^ #][^ ]*\) \(.*[^ ]\) *#.*/\1\t\2/p' "$allow" | while IFS='	' read -r f t; do
	[ -f "$f" ] && grep -qF -- "$t" "$f" || echo "$f $t"
done)
if [ -n "$found" ]; then
	echo "$found"
	echo "$(echo "$found" | wc -l) lock reads in probes: hand the value over typed on the probe context (lib/probe/probe.h)"
fi
if [ -n "$stale" ]; then
	echo "$stale" | sed "s|^|$allow: no such line left: |"
fi
[ -z "$found" ] && [ -z "$stale" ]
