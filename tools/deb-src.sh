#!/bin/sh
# Make Debian's source packages reachable for `make static` (apt-get source):
# a deb-src entry beside each of the machine's own Debian archive entries,
# with the same URI, suites and components. The security archive is left
# out: apt-get source takes the newest version it knows, and mirrors that
# carry the security binaries do not always carry their sources. Quiet and
# idempotent: nothing is written when an entry already exists.
#
#   tools/deb-src.sh [OUTPUT]   (default /etc/apt/sources.list.d/envlock-deb-src.sources)
set -eu
out=${1:-/etc/apt/sources.list.d/envlock-deb-src.sources}
[ -f "$out" ] && exit 0

# deb822 stanzas: one beside each "deb" entry for the Debian archive
stanzas=$(awk -v kind=deb-src -f "$(dirname "$0")/debian-entries.awk" /etc/apt/sources.list.d/*.sources 2>/dev/null || true)

# one-line sources.list entries: "deb [opts] URI suite comp..."
lines=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\/\?\)[[:space:]]\+\(.*\)$/deb-src \1\2 \3/p' \
	/etc/apt/sources.list 2>/dev/null | grep -v security || true)

if [ -z "$stanzas" ] && [ -z "$lines" ]; then
	echo "deb-src: no Debian archive entry in /etc/apt/sources.list or sources.list.d/*.sources to copy" >&2
	exit 1
fi
if [ -n "$lines" ]; then
	out=${out%.sources}.list
	[ -f "$out" ] && exit 0
	printf '# added by envlock make deps: Debian sources for make static\n%s\n' "$lines" >"$out.new"
else
	printf '# added by envlock make deps: Debian sources for make static\n%s\n' "$stanzas" >"$out.new"
fi
mv "$out.new" "$out"
echo "make deps: added Debian source entries in $out"
