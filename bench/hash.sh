#!/bin/sh
# Benchmark checkpoint hashing: envlock save --checkpoint against sha256sum
# and openssl dgst on the same files, page cache warm, in one run; a new
# checkpoint (touched before each run) with the libraries' digests cached,
# live and --root; the same save from a build whose I/O buffers are
# deliberately 16 bytes past a page boundary (-DEL_IO_MISALIGN=16, in
# build/misaligned), to show what page alignment gains.
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
mis=build/misaligned/envlock
make -s -j2 BUILD=build/misaligned EXTRA_CFLAGS=-DEL_IO_MISALIGN=16 "$mis" >/dev/null
# best_new CMD...: like best, with the checkpoint touched before each run, so only its digest is new
best_new() {
	touch "$one"; r1=$(run "$@"); touch "$one"; r2=$(run "$@"); touch "$one"; r3=$(run "$@")
	echo "$(median3 "${r1% *}" "${r2% *}" "${r3% *}") $(median3 "${r1#* }" "${r2#* }" "${r3#* }")"
}
$save --checkpoint "$one" >/dev/null 2>&1 # the libraries' digests into the cache
$mis save -q --no-repo --root $root -o /dev/null --checkpoint "$one" >/dev/null 2>&1
"$ENVLOCK" save -q --no-repo -o /dev/null --checkpoint "$one" >/dev/null 2>&1
n_root=$(best_new $save --checkpoint "$one")
n_mis=$(best_new $mis save -q --no-repo --root $root -o /dev/null --checkpoint "$one")
n_live=$(best_new "$ENVLOCK" save -q --no-repo -o /dev/null --checkpoint "$one")
ossl16=$(openssl speed -evp sha256 -bytes 16384 -seconds 3 2>/dev/null | awk '/^sha256/ {print $2}')

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
	echo "new 2 GiB checkpoint, libraries' digests cached (touched before each run):"
	echo "envlock save --root --checkpoint 2GiB (page-aligned buffers)	${n_root% *}	$(rate "${n_root% *}")	${n_root#* }"
	echo "envlock save --root --checkpoint 2GiB (buffers misaligned by 16 bytes)	${n_mis% *}	$(rate "${n_mis% *}")	${n_mis#* }"
	echo "envlock save --checkpoint 2GiB, live	${n_live% *}	$(rate "${n_live% *}")	${n_live#* }"
	awk -v a="${n_root% *}" -v m="${n_mis% *}" -v l="${n_live% *}" -v o="${o1% *}" 'BEGIN {
		printf "ratios to openssl dgst: --root %.2f, live %.2f, misaligned build %.2f (target <= 0.95)\n", a / o, l / o, m / o
		printf "aligned / misaligned = %.2f\n", a / m }'
	awk -v e="${e1% *}" -v o="$ossl16" 'BEGIN {
		r = 2147483648 / e / 1000; printf "one file rate / openssl speed -bytes 16384 one process (%s kB/s) = %.2f (target >= 0.9)\n", o, r / o }'
	awk -v a="${e1% *}" -v b="${e2% *}" 'BEGIN { printf "2 x 1 GiB time / one 2 GiB file time = %.2f (target <= 0.55)\n", b / a }'
} | tee "$out/hash.txt"
