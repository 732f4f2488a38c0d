#!/bin/sh
# Benchmark envlock pack against tar + zstd of the same files (which checks
# nothing): a generated conda install with many archives in its package
# cache (already compressed, as real ones are) and pip distributions whose
# wheels are in a --wheels folder. Median of N runs, ratio to tar.
# SCALE multiplies every file's size; OUT is where the environment goes;
# PACK_GEN_ONLY=1 only makes it (bench/restore.sh's 800-package one:
# ARCHIVES=500 WHEELS=300 SCALE=0.35). The wheels are real, installable
# ones (a module and a blob, with a RECORD of their sha256s).
set -eu
cd "$(dirname "$0")/.."
ENVLOCK=${ENVLOCK:-build/envlock}
N=${N:-3}
ARCHIVES=${ARCHIVES:-150}
WHEELS=${WHEELS:-40}
SCALE=${SCALE:-1}
[ -x "$ENVLOCK" ] || make -s all
out=${OUT:-$PWD/bench/out/pack}
mkdir -p "$out"
env=$out/env
if [ ! -f "$out/env.lock" ]; then
	rm -rf "$env" "$out/wheels"
	/usr/bin/python3 -m venv --without-pip "$env"
	/usr/bin/python3 - "$env" "$out/wheels" "$ARCHIVES" "$WHEELS" "$SCALE" <<'PY'
import base64, hashlib, json, os, random, sys, sysconfig, zipfile
env, wheels, na, nw, scale = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
rnd = random.Random(15)
for d in ("conda-meta", "pkgs", "condabin"):
    os.makedirs(os.path.join(env, d), exist_ok=True)
os.makedirs(wheels, exist_ok=True)
chan = "https://repo.anaconda.com/pkgs/main/linux-64"
for i in range(na):
    name, ver, build = "pkg%03d" % i, "1.%d" % i, "h%07x_0" % i
    fn = "%s-%s-%s%s" % (name, ver, build, ".conda" if i % 3 == 0 else ".tar.bz2")
    # sizes spread like a real cache: many small, a few large (cudatoolkit, mkl)
    size = int(rnd.choice([64 << 10, 512 << 10, 2 << 20, 4 << 20, 40 << 20]) * scale)
    data = rnd.randbytes(size)
    open(os.path.join(env, "pkgs", fn), "wb").write(data)
    rec = {"name": name, "version": ver, "build": build, "build_number": 0, "channel": chan,
           "subdir": "linux-64", "fn": fn, "url": "%s/%s" % (chan, fn),
           "md5": hashlib.md5(data).hexdigest(), "sha256": hashlib.sha256(data).hexdigest(),
           "files": [], "depends": []}
    json.dump(rec, open(os.path.join(env, "conda-meta", fn.rsplit(".conda", 1)[0].rsplit(".tar.bz2", 1)[0] + ".json"), "w"))
# the venv's own site-packages (Debian's default scheme would put them under local/, where no python looks)
site = sysconfig.get_paths("posix_prefix", vars={"base": env, "platbase": env})["purelib"]
os.makedirs(site, exist_ok=True)
for i in range(nw):
    name, ver = "whl_%03d" % i, "2.%d" % i
    di = "%s-%s.dist-info" % (name, ver)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver)
    wheel = "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = [("%s/__init__.py" % name, ("VERSION = %r\n\ndef f%d(x):\n    return x + %d\n" % (ver, i, i)).encode()),
             ("%s/blob.bin" % name, rnd.randbytes(int(rnd.choice([256 << 10, 2 << 20, 8 << 20]) * scale))),
             (di + "/METADATA", meta.encode()), (di + "/WHEEL", wheel.encode())]
    record = "".join("%s,sha256=%s,%d\n" % (f, base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode(), len(b))
                     for f, b in files) + di + "/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(wheels, "%s-%s-py3-none-any.whl" % (name, ver)), "w") as z:
        for f, b in files:
            z.writestr(f, b)
        z.writestr(di + "/RECORD", record)
    os.makedirs(os.path.join(site, di), exist_ok=True)
    for f, t in (("METADATA", meta), ("WHEEL", wheel), ("INSTALLER", "pip\n"), ("RECORD", "")):
        open(os.path.join(site, di, f), "w").write(t)
PY
	PIP_CONFIG_FILE=/dev/null "$ENVLOCK" save -q --conda-prefix "$env" --python "$env/bin/python" -o "$out/env.lock"
fi
[ "${PACK_GEN_ONLY:-0}" = 1 ] && exit 0
cat "$env"/pkgs/* "$out"/wheels/* >/dev/null # warm the page cache
bytes=$(cat "$env"/pkgs/* "$out"/wheels/* | wc -c)

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timeit() { # label, command...: median seconds over N runs (the output removed before each)
	label=$1; shift
	: >"$out/t"
	for i in $(seq "$N"); do
		rm -rf "$out/kit" "$out/kit.tar.zst" "$out/tar.tar.zst"
		/usr/bin/time -f '%e' "$@" >/dev/null 2>>"$out/t" || true
	done
	printf '%s\t%s\n' "$label" "$(median <"$out/t")"
}
rm -rf "$out/kitdir" && "$ENVLOCK" pack "$out/env.lock" -o "$out/kitdir" --link --wheels "$out/wheels" >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/load.txt"
{
	echo "command	median s"
	timeit "tar -I 'zstd -T0' -cf (the same files)" sh -c "cd '$out' && tar -I 'zstd -T0' -cf tar.tar.zst env.lock env/pkgs wheels"
	# envlock fsyncs the archive before renaming it into place (the bundle writer); the same durability for tar
	timeit "tar -I 'zstd -T0' -cf, then sync FILE" sh -c "cd '$out' && tar -I 'zstd -T0' -cf tar.tar.zst env.lock env/pkgs wheels && sync tar.tar.zst"
	timeit "envlock bundle of the kit folder alone" "$ENVLOCK" bundle -q "$out/kitdir" --lock "$out/env.lock" -o "$out/kit.tar.zst"
	timeit "envlock pack -o kit.tar.zst" "$ENVLOCK" pack "$out/env.lock" -o "$out/kit.tar.zst" --wheels "$out/wheels"
	timeit "envlock pack -o DIR (copies, hashed)" "$ENVLOCK" pack "$out/env.lock" -o "$out/kit" --wheels "$out/wheels"
	timeit "cp -r of the same files" sh -c "mkdir -p '$out/kit' && cp -r '$env/pkgs' '$out/wheels' '$out/kit/'"
	timeit "envlock pack -o DIR --link" "$ENVLOCK" pack "$out/env.lock" -o "$out/kit" --link --wheels "$out/wheels"
} | tee "$out/pack.tsv"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
awk -F'\t' -v bytes="$bytes" -v na="$ARCHIVES" -v nw="$WHEELS" '
	/^tar .*-cf \(/ { tar = $2 }
	/then sync FILE/ { tarsync = $2 }
	/kit folder alone/ { bundle = $2 }
	/kit.tar.zst/ { zst = $2 }
	/copies, hashed/ { dir = $2 }
	/^cp -r/ { cp = $2 }
	END {
		printf "%d conda archives, %d wheels, %.0f MB\n", na, nw, bytes / 1e6
		printf "pack -o .tar.zst / tar+zstd: %.2f; / (tar+zstd, then sync): %.2f\n", zst / tar, zst / tarsync
		printf "bundle writer alone / (tar+zstd, then sync): %.2f\n", bundle / tarsync
		printf "pack -o DIR / cp -r: %.2f\n", dir / cp
	}' "$out/pack.tsv" | tee -a "$out/pack.tsv"
cat "$out/load.txt" | tee -a "$out/pack.tsv"
