#!/bin/sh
# make dist: the release folder a user downloads. Its checksums and their
# signature check out the way the README tells users to check them (with
# envlock, with openssl, with sha256sum), a tampered binary is caught, and
# the source tarball builds as a packager builds it: outside git, so
# without -Werror, with the packager's CFLAGS.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$top/build/static/envlock" ]; then
	skip "make dist" "build/static/envlock is not built (make static; CI builds it first)"
	exit 0
fi
if ! git -C "$top" rev-parse HEAD >/dev/null 2>&1; then
	skip "make dist" "not a git checkout: the source tarball is git archive of HEAD"
	exit 0
fi
cd "$scratch" || exit 1
make -s -C "$top" dist DIST_ROOT="$scratch/dist" DIST_KEY="$scratch/keys/release.key.pem" >make.out 2>&1
check_status "make dist" 0 $?
version=$("$top/build/static/envlock" --version | sed -n '1s/^envlock //p')
d=$scratch/dist/envlock-$version
check_eq "the release folder's files" \
	"SHA256SUMS SHA256SUMS.sig envlock-$version-x86_64-linux envlock-$version.tar.gz envlock-release.pub.pem" \
	"$(ls "$d" | tr '\n' ' ' | sed 's/ $//')"
check_grep "a new release key was made and named" "made a new release key, $scratch/keys/release.key.pem" make.out

# what the README tells a user to run
(cd "$d" && sha256sum -c SHA256SUMS) >sums.out 2>&1
check_status "sha256sum -c SHA256SUMS" 0 $?
"$ENVLOCK" verify-sig --file "$d/SHA256SUMS" --pub "$d/envlock-release.pub.pem" >v.out 2>&1
check_status "envlock verify-sig --file SHA256SUMS" 0 $?
"$PYTHON" -c 'import base64,json,sys; open("sig.bin","wb").write(base64.b64decode(json.load(open(sys.argv[1]))["signature"]))' "$d/SHA256SUMS.sig"
openssl pkeyutl -verify -pubin -inkey "$d/envlock-release.pub.pem" -rawin -in "$d/SHA256SUMS" -sigfile sig.bin >o.out 2>&1
check_status "openssl pkeyutl -verify -rawin, for a user without envlock" 0 $?
bin=$d/envlock-$version-x86_64-linux
check_eq "the released binary is static" "0 0" \
	"$(readelf -lW "$bin" | grep -c INTERP) $(readelf -dW "$bin" | grep -c '(NEEDED)')"
check_eq "and has no debug info left" "0" "$(readelf -SW "$bin" | grep -c '\.debug_')"
check_eq "it runs and says its version" "envlock $version" "$("$bin" --version | head -n 1)"

# a tampered binary: sha256sum -c catches it, and a re-made SHA256SUMS fails the signature
cp -r "$d" bad
printf 'x' >>"bad/envlock-$version-x86_64-linux"
(cd bad && sha256sum -c SHA256SUMS) >/dev/null 2>&1
check_status "a changed binary fails sha256sum -c" 1 $?
(cd bad && sha256sum "envlock-$version-x86_64-linux" "envlock-$version.tar.gz" >SHA256SUMS)
"$ENVLOCK" verify-sig --file bad/SHA256SUMS --pub bad/envlock-release.pub.pem >/dev/null 2>err
check_status "and checksums made again fail the signature" 1 $?

# a second make dist with the same key: the same signature over the same checksums
cp "$d/SHA256SUMS.sig" first.sig
make -s -C "$top" dist DIST_ROOT="$scratch/dist" DIST_KEY="$scratch/keys/release.key.pem" >make2.out 2>&1
check_status "make dist again" 0 $?
check_eq "the same key is used, not a new one" "" "$(grep 'new release key' make2.out)"
if cmp -s first.sig "$d/SHA256SUMS.sig"; then ok "same bytes, same signature (the build is reproducible)"; else not_ok "same bytes, same signature (the build is reproducible)"; fi

# the source tarball, built as a packager would: no .git, so no -Werror, and their CFLAGS
mkdir src && tar -xzf "$d/envlock-$version.tar.gz" -C src
check_eq "the tarball holds one folder" "envlock-$version" "$(ls src)"
check_eq "and no .git" "no" "$(test -e "src/envlock-$version/.git" && echo yes || echo no)"
# a packager's make starts afresh: nothing of the make running this suite (BUILD=…, DEVELOPER=…)
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u BUILD -u EXTRA_CFLAGS make -s -C "src/envlock-$version" \
	CFLAGS="-O2 -g -Wno-error=unused-variable -DPACKAGER_FLAG" >build.out 2>&1
check_status "the tarball builds with a packager's CFLAGS" 0 $?
check_grep "their CFLAGS reach the compiler" "DPACKAGER_FLAG" "src/envlock-$version/build/CFLAGS"
check_eq "without -Werror outside git (DEVELOPER=0)" "0" "$(grep -c -- '-Werror' "src/envlock-$version/build/CFLAGS")"
check_eq "what it built runs" "envlock $version" "$("src/envlock-$version/build/envlock" --version | head -n 1)"
