#!/bin/sh
# Fetch Debian packages into a cache that later runs reuse, with apt-get
# download (shared by mktree.sh and the tests that lay out more packages).
#   fetch.sh CACHE PKG...
# Exits 0 with CACHE/PKG_*.deb there for every PKG; 3 (and one line saying
# why) when they cannot be fetched here: no apt-get, or no network.
set -u
cache=$1
shift
command -v apt-get >/dev/null 2>&1 || { echo "fetch: no apt-get on this machine"; exit 3; }
mkdir -p "$cache" || exit 1
missing=""
for p in "$@"; do
	ls "$cache/${p}_"*.deb >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
# apt's sandbox user cannot write into a folder only root can: download as root
# shellcheck disable=SC2086
if ! (cd "$cache" && timeout 300 apt-get download -q $missing >download.log 2>&1); then
	echo "fetch: apt-get download failed (no network or no package lists?): $(tail -n 1 "$cache/download.log")"
	exit 3
fi
exit 0
