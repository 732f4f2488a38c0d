#!/bin/sh
# Benchmark checkpoint hashing: envlock save --checkpoint against sha256sum
# and openssl dgst on the same files, page cache warm, in one run.
# Writes bench/out/hash.txt; bench/RESULTS.md quotes it.
set -eu
cd "$(dirname "$0")/.."
ENVLOCK=${ENVLOCK:-build/envlock}
[ -x "$ENVLOCK" ] || make -s all
[ -d tests/fixtures/roots/no-nvidia ] || make -s fixtures
out=$PWD/bench/out
mkdir -p "$out/ckpt"
export XDG_CACHE_HOME="$out/cache-hash"
root=tests/fixtures/roots/no-nvidia   # a small system, so the save is all hashing
one=$out/ckpt/one-2g.pth a=$out/ckpt/two-a-1g.pth b=$out/ckpt/two-b-1g.pth
[ -f "$one" ] || head -c 2147483648 /dev/urandom >"$one"
[ -f "$a" ] || head -c 1073741824 /dev/urandom >"$a"
[ -f "$b" ] || head -c 1073741824 /dev/urandom >"$b"
cat "$one" "$a" "$b" >/dev/null   # warm the page cache

# seconds and peak RSS (KiB) of one command
run() { /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -n 1; }
median3() { printf '%s\n%s\n%s\n' "$1" "$2" "$3" | sort -n | sed -n 2p; }
best() { # median wall seconds of 3 runs, and the peak RSS seen
	r1=$(run "$@"); r2=$(run "$@"); r3=$(run "$@")
	echo "$(median3 "${r1% *}" "${r2% *}" "${r3% *}") $(median3 "${r1#* }" "${r2#* }" "${r3#* }")"
}
save="$ENVLOCK save -q --no-repo --root $root -o /dev/null"

e1=$(best $save --no-cache --checkpoint "$one")
s1=$(best sha256sum "$one")
o1=$(best openssl dgst -sha256 "$one")
e2=$(best $save --no-cache --checkpoint "$a" --checkpoint "$b")
$save --checkpoint "$one" >/dev/null 2>&1 # fill the cache
c1=$(best $save --checkpoint "$one")
cached_ms=$(/usr/bin/python3 bench/median.py 21 cached -- $save --checkpoint "$one" | cut -f2)
base_ms=$(/usr/bin/python3 bench/median.py 21 base -- $save | cut -f2)
# what this machine's cores can do together: OpenSSL's own one-process and two-process rates
ossl1=$(openssl speed -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null | awk '/^sha256/ {print $2}')
ossl2=$(openssl speed -multi 2 -evp sha256 -bytes 1048576 -seconds 2 2>/dev/null | awk '/^sha256/ {print $2}')

{
	echo "files: 1 x 2 GiB and 2 x 1 GiB of random data, page cache warm; median of 3 runs"
	echo "command	seconds	GB/s	peak RSS KiB"
	rate() { awk -v s="$1" 'BEGIN { printf "%.2f", 2147483648 / s / 1e9 }'; }
	echo "envlock save --no-cache --checkpoint 2GiB	${e1% *}	$(rate "${e1% *}")	${e1#* }"
	echo "sha256sum 2GiB	${s1% *}	$(rate "${s1% *}")	${s1#* }"
	echo "openssl dgst -sha256 2GiB	${o1% *}	$(rate "${o1% *}")	${o1#* }"
	echo "envlock save --no-cache --checkpoint 1GiB --checkpoint 1GiB	${e2% *}	$(rate "${e2% *}")	${e2#* }"
	echo "envlock save --checkpoint 2GiB (digest cache warm)	${cached_ms} ms (median of 21)	-	${c1#* }"
	echo "envlock save (same root, no checkpoint)	${base_ms} ms (median of 21)	-	-"
	awk -v a="${e1% *}" -v b="${e2% *}" 'BEGIN { printf "two files / one file rate = %.2f (target >= 1.7)\n", a / b }'
	echo "openssl speed -evp sha256 (1 MiB blocks): one process ${ossl1}, two processes together ${ossl2}"
} | tee "$out/hash.txt"
