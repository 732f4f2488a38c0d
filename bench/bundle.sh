#!/bin/sh
# Benchmark envlock bundle against tar + zstd (which computes no digests)
# on one generated work_dir: one 512 MiB incompressible checkpoint and about
# 100 MB of training logs. Median of N runs; peak RSS from /usr/bin/time.
set -eu
cd "$(dirname "$0")/.."
ENVLOCK=${ENVLOCK:-build/envlock}
N=${N:-5}
[ -x "$ENVLOCK" ] || make -s all
out=$PWD/bench/out/bundle
mkdir -p "$out"
wd=$out/exp_bench
if [ ! -f "$wd/epoch_12.pth" ]; then
	mkdir -p "$wd"
	head -c 536870912 /dev/urandom >"$wd/epoch_12.pth"
	# ~100 MB of mmdetection-style logs (compressible text)
	/usr/bin/python3 - "$wd" <<'PY'
import json, os, sys
d = sys.argv[1]
with open(os.path.join(d, "20261130_120000.log"), "w") as f:
    for i in range(700000):
        f.write("2026-11-30 12:%02d:%02d,000 - mmdet - INFO - Epoch [%d][%d/7330]\tlr: 2.000e-02, eta: 1 day, 2:03:04, time: 0.412, data_time: 0.011, memory: 8123, loss_rpn_cls: 0.%04d, loss_bbox: 0.%04d\n" % (i // 60 % 60, i % 60, i // 7330 + 1, i % 7330, i % 9973, i % 7919))
with open(os.path.join(d, "20261130_120000.log.json"), "w") as f:
    for i in range(250000):
        f.write(json.dumps({"mode": "train", "epoch": i // 7330 + 1, "iter": i % 7330, "lr": 0.02, "loss": (i % 997) / 997.0}) + "\n")
PY
	ln -sf epoch_12.pth "$wd/latest.pth"
fi
cat "$wd"/* >/dev/null # warm the page cache
export XDG_CACHE_HOME="$out/cache"
lock=tests/golden/ubuntu1604-mmdet.lock.json

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timeit() { # label, command...: median seconds and max peak RSS over N runs
	label=$1; shift
	: >"$out/t"
	for i in $(seq "$N"); do
		/usr/bin/time -f '%e %M' "$@" >/dev/null 2>>"$out/t"
	done
	printf '%s\t%s\t%s\n' "$label" "$(awk '{print $1}' "$out/t" | median)" "$(awk '{print $2}' "$out/t" | sort -n | tail -n 1)"
}
rm -rf "$XDG_CACHE_HOME"
# the machine is shared: say how busy it was, before and after
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/load.txt"
{
	echo "command	median s	peak RSS KiB"
	timeit "tar -I 'zstd -T0 -3' -cf" tar -I 'zstd -T0 -3' -cf "$out/tar.tar.zst" -C "$out" exp_bench
	# envlock fsyncs the bundle before renaming it into place; the same durability for tar
	timeit "tar -I 'zstd -T0 -3' -cf, then sync FILE" sh -c "tar -I 'zstd -T0 -3' -cf '$out/tar.tar.zst' -C '$out' exp_bench && sync '$out/tar.tar.zst'"
	timeit "envlock bundle (digest cache warm after the first run)" "$ENVLOCK" bundle -q "$wd" --lock "$lock" -o "$out/b.tar.zst"
	rm -rf "$XDG_CACHE_HOME"
	timeit "envlock bundle (digest cache emptied before the first run)" sh -c "rm -rf '$XDG_CACHE_HOME'; exec '$ENVLOCK' bundle -q '$wd' --lock '$lock' -o '$out/b.tar.zst'"
	timeit "envlock bundle verify" "$ENVLOCK" bundle verify "$out/b.tar.zst"
	timeit "sha256sum of the same files" sha256sum "$wd/epoch_12.pth" "$wd/20261130_120000.log" "$wd/20261130_120000.log.json"
} | tee "$out/bundle.tsv"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"
ls -l "$out/tar.tar.zst" "$out/b.tar.zst" | awk '{print $5, $9}' | tee -a "$out/bundle.tsv"
du -b "$wd" | tee -a "$out/bundle.tsv"
# single-core SHA-256 rate of this machine's OpenSSL, for verify's target (>= 0.8x of it)
rate=$(openssl speed -seconds 3 -evp sha256 -bytes 1048576 2>/dev/null | awk '$1 == "sha256" { sub(/k$/, "", $2); print $2 * 1000 }')
bytes=$(du -b "$wd" | cut -f1)
awk -F'\t' -v rate="$rate" -v bytes="$bytes" '
	/^tar .*-cf\t/ { tar = $2 }
	/then sync FILE/ { tarsync = $2 }
	/cache warm/ { warm = $2 }
	/cache emptied/ { cold = $2 }
	/bundle verify/ { verify = $2 }
	END {
		printf "openssl speed -evp sha256 (1 MiB blocks): %.0f MB/s\n", rate / 1e6
		printf "create / tar+zstd: warm %.2f, cold %.2f\n", warm / tar, cold / tar
		printf "create / (tar+zstd, then sync): warm %.2f, cold %.2f\n", warm / tarsync, cold / tarsync
		printf "verify: %.0f MB/s = %.2f of OpenSSL single-core SHA-256\n", bytes / verify / 1e6, bytes / verify / rate
	}' "$out/bundle.tsv" | tee -a "$out/bundle.tsv"
cat "$out/load.txt" | tee -a "$out/bundle.tsv"
