#!/bin/sh
# Make Debian's contrib and non-free components reachable for apt: the
# tests lay out NVIDIA's own Debian 12 packages (nvidia-cuda-toolkit,
# libcuda1, libnvidia-ml1, nvidia-smi, libcudart11.0), which live in
# non-free. One "deb" entry beside each of the machine's own Debian archive
# entries, same URI and suites, Components contrib non-free. Quiet and
# idempotent: nothing is written when the entry exists, or when the
# machine's entries already carry non-free.
#
#   tools/non-free.sh [OUTPUT]   (default /etc/apt/sources.list.d/envlock-non-free.sources)
set -eu
out=${1:-/etc/apt/sources.list.d/envlock-non-free.sources}
[ -f "$out" ] || [ -f "${out%.sources}.list" ] && exit 0

# deb822 stanzas: one beside each "deb" entry for the Debian archive
stanzas=$(awk -v kind=non-free -f "$(dirname "$0")/debian-entries.awk" /etc/apt/sources.list.d/*.sources 2>/dev/null || true)

# one-line sources.list entries: "deb [opts] URI suite comp..." without non-free
lines=$(sed -n '/^deb[[:space:]].*[[:space:]]non-free\([[:space:]]\|$\)/d
	s/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\/\?\)[[:space:]]\+\([^[:space:]]*\).*$/deb \1\2 \3 contrib non-free/p' \
	/etc/apt/sources.list 2>/dev/null || true)

[ -z "$stanzas" ] && [ -z "$lines" ] && exit 0
if [ -n "$lines" ]; then
	out=${out%.sources}.list
	printf '# added by envlock make deps: Debian non-free for the NVIDIA package tests\n%s\n' "$lines" >"$out.new"
else
	printf '# added by envlock make deps: Debian non-free for the NVIDIA package tests\n%s\n' "$stanzas" >"$out.new"
fi
mv "$out.new" "$out"
echo "make deps: added Debian contrib non-free entries in $out"
