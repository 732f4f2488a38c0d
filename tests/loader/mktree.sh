#!/bin/sh
# A tree of Debian 12's own files for the loader tests (tests/cli/t0070-ldd.sh)
# and bench/ldd.sh: the packages below, fetched with apt-get download into a
# cache that later runs reuse, laid out with dpkg -x, and its ld.so.cache
# made by the real ldconfig -r. About 14 MB of downloads, once.
#   mktree.sh CACHE TREE
# Exits 0 with TREE made; 3 (and one line saying why) when it cannot be made
# here: no apt-get, dpkg or ldconfig, or no network for a first download.
set -u
cache=$1
tree=$2
# libc, the C++ runtime, and python3.11 with its extension modules:
# _ssl.*.so -> libssl3 -> libcrypto, _ctypes -> libffi, pyexpat -> libexpat
pkgs="libc6 libgcc-s1 libstdc++6 zlib1g libexpat1 libffi8 libssl3 libbz2-1.0 liblzma5
libpython3.11-minimal libpython3.11-stdlib python3.11-minimal libpython3.11
libncursesw6 libtinfo6 libreadline8 libsqlite3-0 libuuid1 libnsl2 libtirpc3 libcrypt1
libdb5.3 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libcom-err2 libkrb5support0 libkeyutils1"
for tool in apt-get dpkg dpkg-deb ldconfig; do
	command -v "$tool" >/dev/null 2>&1 || { echo "mktree: no $tool on this machine"; exit 3; }
done
# shellcheck disable=SC2086
why=$(sh "$(dirname "$0")/fetch.sh" "$cache" $pkgs) || { st=$?; echo "mktree: $why"; exit "$st"; }
rm -rf "$tree"
mkdir -p "$tree" || exit 1
for p in $pkgs; do
	for deb in "$cache/${p}_"*.deb; do
		dpkg -x "$deb" "$tree" || { echo "mktree: dpkg -x '$deb' failed"; exit 1; }
	done
done
# Debian 12 is merged-/usr: /lib, /lib64, /bin and /sbin are links into /usr
# (usrmerge does this on a real system; dpkg -x lays out the packages' own paths)
for d in lib lib64 bin sbin; do
	if [ -d "$tree/$d" ] && [ ! -L "$tree/$d" ]; then
		mkdir -p "$tree/usr/$d"
		cp -a "$tree/$d/." "$tree/usr/$d/" && rm -rf "${tree:?}/$d"
	fi
	[ -e "$tree/$d" ] || ln -s "usr/$d" "$tree/$d"
done
mkdir -p "$tree/etc"
: >"$tree/etc/ld.so.conf"
ldconfig -r "$tree" || { echo "mktree: ldconfig -r failed"; exit 1; }
exit 0
