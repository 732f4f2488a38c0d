#!/bin/sh
# The probes write their sections of a lock and never read JSON they
# wrote: what a probe knows it keeps in C, and what later probes need of
# it is handed over typed on the probe context (lib/probe/probe.h). This
# names every JSON read in lib/probe (the reads tools/lock-reads.sh looks
# for, and a walk of an object's children) that tools/probe-reads.allow
# does not name as a parse of other JSON: a toolkit's version.json, a
# config's own text, a file of pip's. A read of the lock being built
# (->doc, el_view, a section read back through el_probe_section or
# ->sec[], ->sec[] outside the two files that create and free them) is
# named even where the list allows reads. Each allowed entry must still
# cover a read: the list does not rot. Exit 1 when anything is named.
# Usage: tools/probe-reads.sh [TOP]
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2
allow=tools/probe-reads.allow
w='[^A-Za-z0-9_]'
jread="el_jget|cJSON_GetObjectItem|cJSON_GetArrayItem|cJSON_ArrayForEach|el_present[(]|cJSON_GetArraySize|cJSON_HasObjectItem|->child($w|\$)"
lockread="->doc($w|\$)|(^|$w)el_view($w|\$)|el_view_|el_lock_view|($jread)[^;]*(el_probe_section|->sec[[])"

# Each line of lib/probe as FILE<tab>LINE<tab>FUNCTION<tab>TEXT, FUNCTION
# the definition it is in (kernel style: a definition's first line starts
# in column 0 and does not end with ';', its body ends with '}' in
# column 0), empty outside one.
lines() {
	for f in lib/probe/*.c lib/probe/*.h; do
		awk -v f="$f" '
		/^[A-Za-z_].*[(]/ && !/;[ \t]*$/ && !/^(typedef|struct|enum|union)[ \t]/ {
			s = $0
			sub(/[(].*/, "", s)
			n = split(s, word, /[^A-Za-z0-9_]+/)
			name = word[n]
		}
		{ print f "\t" NR "\t" name "\t" $0 }
		/^}/ { name = "" }' "$f"
	done
}

lines | awk -F '\t' -v allow="$allow" -v jread="$jread" -v lockread="$lockread" '
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
BEGIN {
	# FILE # why; FILE FUNCTION() # why; FILE TEXT # why
	while ((getline l < allow) > 0) {
		ln++
		if (l ~ /^[ \t]*(#|$)/)
			continue
		i = index(l, " # ")
		if (!i || trim(substr(l, i + 3)) == "") {
			bad[++nbad] = allow ":" ln ": says not why: " l
			continue
		}
		head = trim(substr(l, 1, i - 1))
		sp = index(head, " ")
		n++
		entry[n] = head
		file[n] = sp ? substr(head, 1, sp - 1) : head
		target[n] = sp ? trim(substr(head, sp + 1)) : ""
		kind[n] = target[n] == "" ? "file" : target[n] ~ /^[A-Za-z_][A-Za-z0-9_]*[(][)]$/ ? "function" : "line"
		if (kind[n] == "function")
			target[n] = substr(target[n], 1, length(target[n]) - 2)
	}
}
{
	text = $0
	sub(/^[^\t]*\t[^\t]*\t[^\t]*\t/, "", text)
	where = $1 ":" $2 ": " trim(text)
	if (text ~ lockread || (text ~ /->sec[[]/ && $1 !~ /^lib\/probe\/(probe|lock)[.]c$/)) {
		found[++nfound] = where
		next
	}
	if (text !~ jread)
		next
	ok = 0
	for (k = 1; k <= n; k++)
		if (file[k] == $1 && (kind[k] == "file" || (kind[k] == "function" && target[k] == $3) ||
				      (kind[k] == "line" && index(text, target[k])))) {
			used[k] = 1
			ok = 1
		}
	if (!ok)
		found[++nfound] = where
}
END {
	for (i = 1; i <= nfound; i++)
		print found[i]
	if (nfound)
		print nfound " JSON reads in probes that parse no other JSON: keep what a probe wrote in C, hand it over typed (lib/probe/probe.h)"
	stale = 0
	for (k = 1; k <= n; k++)
		if (!used[k]) {
			print allow ": no JSON read left there: " entry[k]
			stale++
		}
	for (i = 1; i <= nbad; i++)
		print bad[i]
	exit (nfound + stale + nbad > 0)
}'
