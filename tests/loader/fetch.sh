#!/bin/sh
# Debian 12's own packages into a cache later runs reuse, for the trees the
# tests lay out with dpkg -x (mktree.sh, t0071, t0072, t0074): each PACKAGE
# not there yet (CACHE/PACKAGE_*.deb) is fetched with apt-get download.
#   fetch.sh CACHE PACKAGE...
# Exits 0 with every package in CACHE; 3 (and one line saying why) when
# they cannot be fetched here: no apt-get or dpkg, no network, or no
# package list naming them (the NVIDIA ones need non-free: tools/non-free.sh).
set -u
cache=$1
shift
for tool in apt-get dpkg dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 || { echo "fetch: no $tool on this machine"; exit 3; }
done
mkdir -p "$cache" || exit 1
missing=""
for p in "$@"; do
	ls "$cache/${p}_"*.deb >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
# apt's sandbox user cannot write into a folder only root can: download as root
# shellcheck disable=SC2086
if ! (cd "$cache" && timeout 300 apt-get download -q $missing >download.log 2>&1); then
	echo "fetch: apt-get download$missing failed (no network or no package lists?): $(tail -n 1 "$cache/download.log")"
	exit 3
fi
exit 0
