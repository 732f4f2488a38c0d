#!/bin/sh
# Build every library envlock links, from Debian's own source packages, as
# static x86_64 musl archives under one prefix, for `make static`.
#
#   tools/static-deps.sh DIR
#
# DIR/dl holds what `apt-get source --download-only` fetched (.dsc and
# tarballs: a rebuild, or a machine whose mirror has since moved on to a
# newer version, reuses them), DIR/src the unpacked trees with Debian's
# patches applied, DIR/prefix the result: lib/*.a, include/, and
# versions.txt, one "package version" line per source package, which
# `envlock --version` prints. Each package is built once; its stamp in
# DIR/prefix/.stamps names the version (and the recipe's revision, where it
# changed), so a changed version or recipe rebuilds it.
# Nothing comes from anywhere but the machine's Debian mirror.
set -eu

dir=${1:?usage: tools/static-deps.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
dl=$dir/dl src=$dir/src pfx=$dir/prefix
mkdir -p "$dl" "$src" "$pfx/lib" "$pfx/include" "$pfx/.stamps"
jobs=$(nproc 2>/dev/null || echo 2)
CC=${MUSL_CC:-musl-gcc}
command -v "$CC" >/dev/null || { echo "static-deps: no $CC (apt-get install musl-tools; make deps does)" >&2; exit 1; }
command -v dpkg-source >/dev/null || { echo "static-deps: no dpkg-source (apt-get install dpkg-dev; make deps does)" >&2; exit 1; }
# position-independent, so the static binary can be static-pie if wanted; -O2 as Debian builds
DEP_CFLAGS="-O2 -fPIC -ffunction-sections -fdata-sections"

# musl-gcc does not see the host's kernel headers; OpenSSL's mem_sec.c needs <linux/mman.h>
kinc=$dir/kernel-headers
if [ ! -d "$kinc" ]; then
	mkdir -p "$kinc.new"
	ln -s /usr/include/linux "$kinc.new/linux"
	ln -s /usr/include/asm-generic "$kinc.new/asm-generic"
	ln -s "/usr/include/$(gcc -dumpmachine)/asm" "$kinc.new/asm"
	mv "$kinc.new" "$kinc"
fi

# fetch PKG: the newest .dsc of PKG in DIR/dl, downloading it when there is none
fetch() {
	if ! ls "$dl/$1"_*.dsc >/dev/null 2>&1; then
		echo "  SOURCE  $1 (apt-get source)" >&2
		(cd "$dl" && apt-get source -qq --download-only "$1" >"$dl/$1.log" 2>&1) || {
			echo "static-deps: 'apt-get source $1' failed; make deps adds the deb-src entry it needs:" >&2
			tail -n 3 "$dl/$1.log" >&2
			exit 1
		}
	fi
	ls "$dl/$1"_*.dsc | sort -V | tail -n 1
}

# unpack PKG DSC: the source tree with Debian's patches, in DIR/src/PKG; prints its path
unpack() {
	rm -rf "$src/$1"
	dpkg-source --no-copy -x "$2" "$src/$1" >"$src/$1.log" 2>&1 || {
		echo "static-deps: dpkg-source -x '$2' failed:" >&2
		tail -n 3 "$src/$1.log" >&2
		exit 1
	}
	echo "$src/$1"
}

# A CMake toolchain that sees only the prefix: the host's glibc libraries stay out
tc=$dir/musl.cmake
cat >"$tc.new" <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER $CC)
set(CMAKE_FIND_ROOT_PATH $pfx)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(CMAKE_C_FLAGS_INIT "$DEP_CFLAGS")
EOF
mv "$tc.new" "$tc"
cmake_build() { # SRCDIR BUILDDIR TARGET CMAKE-ARGS...
	s=$1 b=$2 t=$3
	shift 3
	cmake -S "$s" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$tc" -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="$pfx" -DBUILD_SHARED_LIBS=OFF "$@" >"$b.log" 2>&1 ||
		{ tail -n 20 "$b.log" >&2; exit 1; }
	cmake --build "$b" --target "$t" -j "$jobs" >>"$b.log" 2>&1 || { tail -n 20 "$b.log" >&2; exit 1; }
}

build_zlib() {
	(cd "$1" && CC=$CC CFLAGS="$DEP_CFLAGS" ./configure --static --prefix="$pfx" &&
		make -j "$jobs" libz.a && make install) >"$1.build.log" 2>&1
}

build_libzstd() {
	# -mt: the static library is single-threaded by default, and bundle compresses on every core
	make -C "$1/lib" -j "$jobs" CC="$CC" CFLAGS="$DEP_CFLAGS" libzstd.a-mt >"$1.build.log" 2>&1
	cp "$1/lib/libzstd.a" "$pfx/lib/"
	cp "$1/lib/zstd.h" "$1/lib/zdict.h" "$1/lib/zstd_errors.h" "$pfx/include/"
}

build_openssl() {
	# the options of ../shared/notes/static-build.md but -static: given to Configure, it also
	# means no-threads, and envlock hashes on several threads (diff's loads, checkpoints), where
	# a libcrypto without locks or atomic reference counts crashes or spins; no-shared alone
	# builds the archives, and envlock's own link is -static. OPENSSLDIR /etc/ssl is where Debian
	# and Ubuntu keep cert.pem and the hashed certs/ (envlock also sets libgit2's locations itself)
	(cd "$1" && CC="$CC -isystem $kinc" ./Configure linux-x86_64 no-shared threads no-module no-afalgeng \
		no-tests no-engine no-dso no-legacy --prefix="$pfx" --libdir=lib --openssldir=/etc/ssl \
		$DEP_CFLAGS && make -j "$jobs" build_libs && make install_dev) >"$1.build.log" 2>&1
}

build_http_parser() {
	make -C "$1" CC="$CC" CFLAGS_FAST_EXTRA="$DEP_CFLAGS" package >"$1.build.log" 2>&1
	cp "$1/libhttp_parser.a" "$pfx/lib/"
	cp "$1/http_parser.h" "$pfx/include/"
}

build_libgit2() {
	# Debian's source has no bundled deps/: the system http-parser, musl's regcomp, no SSH/NTLM/GSSAPI
	cmake_build "$1" "$1/build" libgit2package -DBUILD_TESTS=OFF -DBUILD_CLI=OFF -DBUILD_EXAMPLES=OFF \
		-DBUILD_FUZZERS=OFF -DUSE_HTTP_PARSER=system -DREGEX_BACKEND=regcomp -DUSE_NTLMCLIENT=OFF \
		-DUSE_SSH=OFF -DUSE_GSSAPI=OFF -DUSE_ICONV=OFF -DUSE_HTTPS=OpenSSL -DUSE_SHA1=CollisionDetection \
		-DUSE_BUNDLED_ZLIB=OFF -DUSE_NSEC=ON
	cmake --install "$1/build" >>"$1/build.log" 2>&1
}

build_libarchive() {
	# only zlib and zstd: envlock's bundles are tar + zstd, and restore reads NVIDIA's .tgz
	cmake_build "$1" "$1/build" archive_static -DENABLE_ZLIB=ON -DENABLE_ZSTD=ON \
		-DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF -DENABLE_LIBB2=OFF \
		-DENABLE_LZ4=OFF -DENABLE_LZO=OFF -DENABLE_LZMA=OFF -DENABLE_BZip2=OFF -DENABLE_LIBXML2=OFF \
		-DENABLE_EXPAT=OFF -DENABLE_PCREPOSIX=OFF -DENABLE_LIBGCC=OFF -DENABLE_CNG=OFF -DENABLE_TAR=OFF \
		-DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_XATTR=OFF -DENABLE_ACL=OFF -DENABLE_ICONV=OFF \
		-DENABLE_TEST=OFF -DENABLE_WERROR=OFF -DREGEX_INCLUDE_DIR=/usr/include/x86_64-linux-musl
	cp "$1/build/libarchive/libarchive.a" "$pfx/lib/"
	cp "$1/libarchive/archive.h" "$1/libarchive/archive_entry.h" "$pfx/include/"
}

build_cjson() {
	# one file; envlock includes <cJSON.h> with cjson/ on the include path, as pkg-config gives it
	mkdir -p "$pfx/include/cjson"
	$CC $DEP_CFLAGS -std=c89 -c -o "$1/cJSON.o" "$1/cJSON.c"
	ar rcs "$pfx/lib/libcjson.a" "$1/cJSON.o"
	cp "$1/cJSON.h" "$pfx/include/cjson/"
}

build_mimalloc() {
	# musl's mallocng hands memory back to the kernel at once (an mmap, munmap and madvise every
	# few allocations: a fifth of save's time); mimalloc replaces malloc. Its one object file
	# (static.c, MI_OVERRIDE) is linked before libc.a, so libc.a's malloc is never pulled in
	cmake_build "$1" "$1/build" mimalloc-obj -DMI_OVERRIDE=ON -DMI_BUILD_OBJECT=ON \
		-DMI_BUILD_SHARED=OFF -DMI_BUILD_STATIC=OFF -DMI_BUILD_TESTS=OFF
	cp "$1/build/CMakeFiles/mimalloc-obj.dir/src/static.c.o" "$pfx/lib/mimalloc.o"
}

build_musl() {
	# musl's x86_64 memcpy is one rep movsq, slow for the few bytes the JSON writer and qsort copy
	# at a time; its portable C memcpy (and memmove, whose x86_64 one jumps into that memcpy) is
	# linked in place of libc.a's, with musl's own flags for them
	for f in memcpy memmove; do
		$CC $DEP_CFLAGS -ffreestanding -fno-tree-loop-distribute-patterns -c -o "$1/$f.o" "$1/src/string/$f.c"
	done
	$CC -nostdlib -r -o "$pfx/lib/musl-string.o" "$1/memcpy.o" "$1/memmove.o"
}

# set -e stops the script at a failed step; this says which package it was and shows its log
building=
trap 'rc=$?; if [ "$rc" -ne 0 ] && [ -n "$building" ]; then
	echo "static-deps: building $building failed; its logs are in $src/:" >&2
	tail -n 15 "$src"/*.build.log "$src"/*/build.log 2>/dev/null | tail -n 20 >&2
fi' EXIT

# in dependency order: libgit2 needs zlib, OpenSSL and http-parser; libarchive zlib and zstd;
# mimalloc and musl's string functions need nothing
: >"$pfx/versions.txt.new"
for pkg in zlib libzstd openssl http-parser libgit2 libarchive cjson mimalloc musl; do
	dsc=$(fetch "$pkg")
	ver=$(sed -n 's/^Version: //p' "$dsc" | head -n 1)
	echo "$pkg $ver" >>"$pfx/versions.txt.new"
	stamp="$pfx/.stamps/$pkg"
	# a recipe change that changes what is built bumps its revision: a cached build is redone
	case $pkg in openssl) want="$ver r2" ;; *) want=$ver ;; esac
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		continue
	fi
	echo "  BUILD   $pkg $ver (musl, static)"
	start=$(date +%s)
	tree=$(unpack "$pkg" "$dsc")
	building="$pkg $ver"
	"build_$(echo "$pkg" | tr - _)" "$tree"
	building=
	echo "$want" >"$stamp"
	echo "  DONE    $pkg in $(($(date +%s) - start)) s"
done
mv "$pfx/versions.txt.new" "$pfx/versions.txt"
