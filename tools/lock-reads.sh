#!/bin/sh
# Consumers read a lock through its typed view (lib/lock/view.h), never by
# walking the JSON document. This lists every JSON read in a consumer
# (cmd/ and lib/ except lib/lock, lib/probe and lib/util) that is not in a
# file tools/lock-reads.allow names with the JSON it reads instead (a
# rules file, a manifest, a journal). Exit 1 when there is one.
# Usage: tools/lock-reads.sh [TOP]
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2
allow=tools/lock-reads.allow
reads='el_jget|cJSON_GetObjectItem|cJSON_GetArrayItem|cJSON_ArrayForEach|el_present\(|cJSON_GetArraySize'
found=$(grep -nE "$reads" cmd/*.c $(ls -d lib/*/ | grep -vE '^lib/(lock|probe|util)/$' | sed 's|$|*.c|') 2>/dev/null |
	while IFS=: read -r file line text; do
		grep -q "^$file " "$allow" 2>/dev/null && continue
		echo "$file:$line: $(echo "$text" | sed 's/^[[:space:]]*//')"
	done)
# every allowed file must exist and still read JSON: the list does not rot
stale=$(sed -n 's/^\([^ #][^ ]*\) .*/\1/p' "$allow" | while read -r file; do
	[ -f "$file" ] && grep -qE "$reads" "$file" || echo "$file"
done)
if [ -n "$found" ]; then
	echo "$found"
	echo "$(echo "$found" | wc -l) JSON reads in consumers: read the lock through lib/lock/view.h"
fi
if [ -n "$stale" ]; then
	echo "$stale" | sed "s|^|$allow: no JSON read left in |"
fi
[ -z "$found" ] && [ -z "$stale" ]
