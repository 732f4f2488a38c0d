#!/bin/sh
# Benchmark envlock's own conda link step (restore --kit --no-conda) against
# the tools that unpack the same bytes: tar + zstd of one .tar.zst holding
# the same files (which checks and links nothing), and Debian's cph extract
# of the same archives. The kit holds ARCHIVES real .conda archives made at
# bench time with conda-package-handling's own writer (zstd level 3, as
# fast as cph gets; the bytes are random, sized like bench/pack.sh's:
# many small, a few large). From a warm cache, median of N runs each.
# Then the I/O of restoring from the kit as a .tar.zst: the bytes envlock
# read of the kit file (strace -y), against its size: one read.
# SCALE multiplies every file's size; OUT is where everything goes.
set -eu
cd "$(dirname "$0")/.."
ENVLOCK=${ENVLOCK:-$PWD/build/envlock}
N=${N:-5}
ARCHIVES=${ARCHIVES:-500}
SCALE=${SCALE:-0.1}
[ -x "$ENVLOCK" ] || make -s all
out=${OUT:-$PWD/bench/out/condalink}
mkdir -p "$out"
if [ ! -f "$out/L.lock" ]; then
	rm -rf "$out/src" "$out/pkgs" "$out/S" "$out/payload"
	/usr/bin/python3 - "$out" "$ARCHIVES" "$SCALE" <<'PY'
import hashlib, json, os, random, sys
import zstandard
from conda_package_handling.conda_fmt import CondaFormat_v2
out, na, scale = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rnd = random.Random(15)
chan = "https://repo.anaconda.com/pkgs/main"
pkgs, meta, payload = (os.path.join(out, d) for d in ("pkgs", "S/conda-meta", "payload"))
for d in (pkgs, meta, payload):
    os.makedirs(d, exist_ok=True)
for i in range(na):
    name, ver, build = "pkg%03d" % i, "1.%d" % i, "h%07x_0" % i
    src = os.path.join(out, "src", name)
    size = int(rnd.choice([64 << 10, 512 << 10, 2 << 20, 4 << 20, 40 << 20]) * scale)
    files = {"lib/%s/data.bin" % name: rnd.randbytes(size), "share/%s/README" % name: ("%s %s\n" % (name, ver)).encode()}
    paths = []
    for rel, data in files.items():
        for root in (src, payload):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            open(os.path.join(root, rel), "wb").write(data)
        paths.append({"_path": rel, "path_type": "hardlink", "sha256": hashlib.sha256(data).hexdigest(), "size_in_bytes": len(data)})
    os.makedirs(os.path.join(src, "info"), exist_ok=True)
    index = {"name": name, "version": ver, "build": build, "build_number": 0, "subdir": "linux-64", "depends": []}
    json.dump(index, open(os.path.join(src, "info/index.json"), "w"))
    json.dump({"paths": paths, "paths_version": 1}, open(os.path.join(src, "info/paths.json"), "w"))
    fn = "%s-%s-%s.conda" % (name, ver, build)
    CondaFormat_v2.create(src, ["info/index.json", "info/paths.json"] + sorted(files), fn, out_folder=pkgs,
                          compressor=lambda: zstandard.ZstdCompressor(level=3))
    data = open(os.path.join(pkgs, fn), "rb").read()
    rec = dict(index, channel=chan, url="%s/linux-64/%s" % (chan, fn), fn=fn, md5=hashlib.md5(data).hexdigest(),
               sha256=hashlib.sha256(data).hexdigest(), files=sorted(files))
    json.dump(rec, open(os.path.join(meta, fn[:-len(".conda")] + ".json"), "w"))
PY
	rm -rf "$out/src"
	"$ENVLOCK" save -q --conda-prefix "$out/S" -o "$out/L.lock" 2>/dev/null
	rm -rf "$out/KIT" "$out/kit.tar.zst"
	"$ENVLOCK" pack "$out/L.lock" -o "$out/KIT" --conda-pkgs "$out/pkgs" >/dev/null 2>&1
	"$ENVLOCK" pack "$out/L.lock" -o "$out/kit.tar.zst" --conda-pkgs "$out/pkgs" >/dev/null 2>&1
	(cd "$out/payload" && tar -I 'zstd -T0 -3' -cf "$out/payload.tar.zst" .)
fi
# time CMD...: seconds, to the millisecond (GNU date)
secs() { _s=$(date +%s.%N); "$@" >/dev/null 2>&1; _e=$(date +%s.%N); echo "$_s $_e" | awk '{printf "%.3f", $2 - $1}'; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
# every run starts with nothing dirty: the writeback of the last one's files is not timed
clean() { rm -rf "$out/P" "$out/T" "$out/X" "$out/state"; sync; }
link_kit() { "$ENVLOCK" restore "$out/L.lock" --kit "$out/KIT" --no-conda --prefix "$out/P" --only conda --state-dir "$out/state" --yes; }
tar_x() { mkdir -p "$out/T" && tar -I 'zstd -T0' -xf "$out/payload.tar.zst" -C "$out/T"; }
cph_x() { for a in "$out"/pkgs/*.conda; do b=${a##*/}; cph extract "$a" --dest "$out/X/${b%.conda}" || return 1; done; }
cph_api() {
	/usr/bin/python3 - "$out" <<'PY'
import glob, os, sys
from conda_package_handling import api
for a in sorted(glob.glob(sys.argv[1] + "/pkgs/*.conda")):
    api.extract(a, dest_dir=os.path.join(sys.argv[1], "X", os.path.basename(a)[:-6]))
PY
}
# warm the cache: every archive and the tar read once
cat "$out"/pkgs/* "$out/payload.tar.zst" "$out/kit.tar.zst" >/dev/null
L="" K="" T="" C="" A=""
for i in $(seq "$N"); do
	clean; L="$L $(secs link_kit)"
	# the link step alone, as the log times it (the rest: checking every byte of the kit, the plan)
	K="$K $(sed -n "s/.*linked $ARCHIVES packages into .*, in \([0-9.]*\) s$/\1/p" "$out"/state/restore-*.log | tail -n 1)"
	clean; T="$T $(secs tar_x)"
	clean; A="$A $(secs cph_api)"
done
clean; C=$(secs cph_x)
clean
l=$(echo "$L" | median) k=$(echo "$K" | median) t=$(echo "$T" | median) a=$(echo "$A" | median)
bytes=$(du -sb "$out/pkgs" | cut -f1)
files=$(find "$out/payload" -type f | wc -l)
# the kit as a .tar.zst: what envlock read of it (strace -y names each read's file)
rio=""
if command -v strace >/dev/null 2>&1; then
	strace -f -qq -y -e trace=read,pread64 -o "$out/io.trace" "$ENVLOCK" restore "$out/L.lock" --kit "$out/kit.tar.zst" \
		--no-conda --prefix "$out/P" --only conda --state-dir "$out/state" --yes >/dev/null 2>&1
	rio=$(grep -F "<$out/kit.tar.zst>" "$out/io.trace" | sed -n 's/.* = \([0-9][0-9]*\)$/\1/p' | awk '{s += $1} END {print s + 0}')
	rm -f "$out/io.trace"
	clean
fi
ksize=$(stat -c %s "$out/kit.tar.zst")
{
	echo "# envlock conda link: $ARCHIVES .conda archives, $files files, $bytes bytes of archives (SCALE=$SCALE), median of $N"
	echo "envlock restore --kit DIR --no-conda --only conda  ${l}s  (runs:$L)"
	echo "  of which the link step (unpack, link, records)    ${k}s  (runs:$K)"
	echo "tar -I 'zstd -T0' -xf one .tar.zst                 ${t}s  (runs:$T)"
	echo "cph extract, one process per archive                ${C}s  (one run)"
	echo "conda_package_handling api.extract, one process     ${a}s  (runs:$A)"
	echo "link step / tar: $(echo "$k $t" | awk '{printf "%.2f", $1 / $2}')   whole restore / tar: $(echo "$l $t" | awk '{printf "%.2f", $1 / $2}')"
	echo "whole restore / cph extract: $(echo "$l $C" | awk '{printf "%.3f", $1 / $2}')   whole restore / cph api: $(echo "$l $a" | awk '{printf "%.2f", $1 / $2}')"
	[ -n "$rio" ] && echo "restore --kit kit.tar.zst read $rio bytes of the kit file, its size $ksize: $(echo "$rio $ksize" | awk '{printf "%.3f", $1 / $2}') reads"
} | tee "$out/result.txt"
