#!/bin/sh
# envlock bundle: round trip of an mmdetection-shaped work_dir, determinism,
# --checkpoints hash, corruption and truncation, GNU tar compatibility.
. "$(dirname "$0")/lib.sh"

lock=$GOLDEN/ubuntu1604-mmdet.lock.json
cd "$scratch" || exit 1
mk_work_dir() { # an mmdetection 2.x run: config dump, logs, checkpoints, latest.pth link
	mkdir -p "$1"
	printf "_base_ = ['../_base_/default_runtime.py']\nlr = 0.02\n" >"$1/faster_rcnn_r50_fpn_1x_coco.py"
	seq 1 20000 | sed 's/^/2026-11-30 12:00:00,000 - mmdet - INFO - Epoch [1][/' >"$1/20261130_120000.log"
	seq 1 500 | sed 's/.*/{"mode": "train", "epoch": 1, "iter": &, "loss": 0.5}/' >"$1/20261130_120000.log.json"
	head -c 2000000 /dev/urandom >"$1/epoch_1.pth"
	head -c 1500000 /dev/urandom >"$1/epoch_2.pth"
	ln -s epoch_2.pth "$1/latest.pth"
	mkdir -p "$1/vis"
	printf 'png' >"$1/vis/0001.png"
}
mk_work_dir exp1

"$ENVLOCK" bundle -q exp1 --lock "$lock" >out
check_status "bundle create" 0 $?
check_eq "default output name, printed" "exp1.envlock.tar.zst" "$(cat out)"
"$ENVLOCK" bundle verify exp1.envlock.tar.zst >out
check_status "bundle verify" 0 $?
check_eq "verify says what it checked" "ok: 8 entries, every digest and the lock id match" "$(tail -n 1 out)"

# the entries, in order, as GNU tar sees them
tar -I zstd -tf exp1.envlock.tar.zst >entries
check_eq "lock first, manifest second, then sorted work_dir entries" \
	"envlock.lock.json MANIFEST.json exp1/20261130_120000.log exp1/20261130_120000.log.json exp1/epoch_1.pth exp1/epoch_2.pth exp1/faster_rcnn_r50_fpn_1x_coco.py exp1/latest.pth exp1/vis/ exp1/vis/0001.png" \
	"$(tr '\n' ' ' <entries | sed 's/ $//')"
tar -I zstd -tvf exp1.envlock.tar.zst | awk '{print $2}' | sort -u >owners
check_eq "every entry root-owned, no names" "0/0" "$(cat owners)"
mkdir gnu && tar -I zstd -xf exp1.envlock.tar.zst -C gnu
check_status "GNU tar extracts it" 0 $?
check_eq "GNU tar's copy of a checkpoint has the same digest" "$(sha256sum exp1/epoch_1.pth | cut -d' ' -f1)" "$(sha256sum gnu/exp1/epoch_1.pth | cut -d' ' -f1)"
check_eq "the symlink stays a symlink" "epoch_2.pth" "$(readlink gnu/exp1/latest.pth)"
check_eq "the bundled lock is the lock given" "$(jget "$lock" id)" "$(jget gnu/MANIFEST.json lock_id)"
if validate_manifest() { "$PYTHON" "$top/tests/validate.py" "$top/schemas/envlock.manifest.schema.json" "$1"; }; validate_manifest gnu/MANIFEST.json >v 2>&1; then
	ok "MANIFEST.json is valid against its schema"
else
	not_ok "MANIFEST.json is valid against its schema"; sed 's/^/#   /' v
fi
check_eq "manifest digests = sha256sum" "$(sha256sum exp1/epoch_2.pth | cut -d' ' -f1)" \
	"$("$PYTHON" -c 'import json; print([f["sha256"] for f in json.load(open("gnu/MANIFEST.json"))["files"] if f["path"] == "exp1/epoch_2.pth"][0])')"

# determinism: twice, another copy (other owner), other mtimes with SOURCE_DATE_EPOCH
"$ENVLOCK" bundle -q exp1 --lock "$lock" -o again.tar.zst >/dev/null
if cmp -s exp1.envlock.tar.zst again.tar.zst; then ok "two runs give byte-identical bundles"; else not_ok "two runs give byte-identical bundles"; fi
mkdir copy && cp -r exp1 copy/exp1 && touch copy/exp1/*.log && chown -R 65534:65534 copy 2>/dev/null
SOURCE_DATE_EPOCH=1700000000 "$ENVLOCK" bundle -q exp1 --lock "$lock" -o s1.tar.zst >/dev/null
SOURCE_DATE_EPOCH=1700000000 "$ENVLOCK" bundle -q copy/exp1 --lock "$lock" -o s2.tar.zst >/dev/null
if cmp -s s1.tar.zst s2.tar.zst; then ok "a copy with another owner and other mtimes gives the same bytes (SOURCE_DATE_EPOCH)"; else not_ok "a copy with another owner and other mtimes gives the same bytes (SOURCE_DATE_EPOCH)"; fi

# zstd's own decoder accepts the frames (the lock's, the manifest's raw-block frame, the files')
if zstd -tq exp1.envlock.tar.zst 2>err; then ok "zstd -t accepts the bundle"; else not_ok "zstd -t accepts the bundle"; sed 's/^/#   /' err; fi
# worker threads: other bytes than one thread, the same for any count
"$ENVLOCK" bundle -q exp1 --lock "$lock" --threads 2 -o t2.tar.zst >/dev/null
"$ENVLOCK" bundle -q exp1 --lock "$lock" --threads 3 -o t3.tar.zst >/dev/null
if cmp -s t2.tar.zst t3.tar.zst; then ok "--threads 2 and --threads 3 give the same bytes"; else not_ok "--threads 2 and --threads 3 give the same bytes"; fi
"$ENVLOCK" bundle verify t2.tar.zst >/dev/null
check_status "a bundle made on worker threads verifies" 0 $?
check_eq "... and holds what one thread's holds" "$(tar -I zstd -xOf exp1.envlock.tar.zst | sha256sum)" "$(tar -I zstd -xOf t2.tar.zst | sha256sum)"

# The zstd frames of a bundle, one line each: "raw N" when all N blocks are
# stored as they are, else "compressed N" (RFC 8878, 3.1.1: frame header,
# then blocks of a 3-byte header: Last_Block, Block_Type, Block_Size).
frames() {
	"$PYTHON" - "$1" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
pos = 0
while pos < len(d):
    assert int.from_bytes(d[pos:pos + 4], "little") == 0xFD2FB528, "not a zstd frame at %d" % pos
    fhd = d[pos + 4]
    pos += 5
    single, checksum, dict_flag, fcs_flag = fhd >> 5 & 1, fhd >> 2 & 1, fhd & 3, fhd >> 6
    pos += (0 if single else 1) + [0, 1, 2, 4][dict_flag] + [1 if single else 0, 2, 4, 8][fcs_flag]
    types = []
    while True:
        h = int.from_bytes(d[pos:pos + 3], "little")
        pos += 3
        types.append(h >> 1 & 3)
        pos += 1 if types[-1] == 1 else h >> 3
        if h & 1:
            break
    pos += 4 * checksum
    print(("raw" if set(types) == {0} else "compressed"), len(types))
PY
}

# many small files: a manifest over 128 KiB, stored compressed (the files go in aside and are copied behind it)
mkdir -p wide/runs
i=0
while [ $i -lt 1500 ]; do printf '%s\n' "$i" >"wide/runs/metric_$i.json"; i=$((i + 1)); done
"$ENVLOCK" bundle -q wide --lock "$lock" -o wide.tar.zst >/dev/null
check_status "bundle of 1,500 small files" 0 $?
tar -I zstd -xOf wide.tar.zst MANIFEST.json >wide.manifest
check_eq "its manifest is over 128 KiB" "yes" "$([ "$(wc -c <wide.manifest)" -gt 131072 ] && echo yes || echo no)"
check_eq "the manifest's frame is compressed" "compressed" "$(frames wide.tar.zst | sed -n 2p | cut -d' ' -f1)"
check_eq "so the bundle is smaller than its manifest" "yes" \
	"$([ "$(wc -c <wide.tar.zst)" -lt "$(wc -c <wide.manifest)" ] && echo yes || echo no)"
check_eq "GNU tar reads all 1,500 records from it" "1501" \
	"$("$PYTHON" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' wide.manifest)"
check_eq "GNU tar lists every entry" "1503" "$(tar -I zstd -tf wide.tar.zst | wc -l | tr -d ' ')"
"$ENVLOCK" bundle verify wide.tar.zst >out
check_status "verify of 1,500 files" 0 $?
check_eq "verify counts every entry" "ok: 1501 entries, every digest and the lock id match" "$(tail -n 1 out)"
"$ENVLOCK" bundle -q wide --lock "$lock" -o wide2.tar.zst >/dev/null
if cmp -s wide.tar.zst wide2.tar.zst; then ok "that layout is byte-identical from run to run"; else not_ok "that layout is byte-identical from run to run"; fi

# the same with 32 MiB of weights: the manifest goes in raw blocks, in room left before the files
head -c 33554432 /dev/urandom >wide/epoch_1.pth
"$ENVLOCK" bundle -q wide --lock "$lock" -o heavy.tar.zst >/dev/null
check_status "bundle of 1,500 small files and 32 MiB of weights" 0 $?
frames heavy.tar.zst >heavy.frames
check_eq "three frames: the lock compressed, the manifest raw, the files compressed" "compressed raw compressed" \
	"$(cut -d' ' -f1 heavy.frames | tr '\n' ' ' | sed 's/ $//')"
check_eq "the manifest's raw frame spans several 128 KiB blocks" "yes" \
	"$([ "$(sed -n 2p heavy.frames | cut -d' ' -f2)" -gt 1 ] && echo yes || echo no)"
check_eq "zstd decodes it to the tar GNU tar lists" "1504" "$(zstd -dcq heavy.tar.zst | tar -tf - | wc -l | tr -d ' ')"
"$ENVLOCK" bundle verify heavy.tar.zst >out
check_status "verify of the raw-manifest layout" 0 $?
check_eq "the weights' digest in that manifest = sha256sum" "$(sha256sum wide/epoch_1.pth | cut -d' ' -f1)" \
	"$(tar -I zstd -xOf heavy.tar.zst MANIFEST.json | "$PYTHON" -c 'import json,sys; print([f["sha256"] for f in json.load(sys.stdin)["files"] if f["path"] == "wide/epoch_1.pth"][0])')"
rm -rf wide wide*.tar.zst heavy.tar.zst

# --checkpoints hash: weights left out, digests kept
"$ENVLOCK" bundle -q exp1 --lock "$lock" --checkpoints hash -o small.tar.zst >/dev/null
check_eq "hash mode leaves the weights out" "" "$(tar -I zstd -tf small.tar.zst | grep '\.pth$' | grep -v latest)"
"$ENVLOCK" bundle verify small.tar.zst >/dev/null
check_status "a hash-only bundle verifies" 0 $?
check_eq "its manifest keeps the weights' digests" "$(sha256sum exp1/epoch_1.pth | cut -d' ' -f1) False" \
	"$(tar -I zstd -xOf small.tar.zst MANIFEST.json | "$PYTHON" -c 'import json,sys; f=[f for f in json.load(sys.stdin)["files"] if f["path"] == "exp1/epoch_1.pth"][0]; print(f["sha256"], f["stored"])')"

# --exclude
"$ENVLOCK" bundle -q exp1 --lock "$lock" --exclude '*.log' --exclude vis -o ex.tar.zst >/dev/null
check_eq "--exclude leaves out matching names and folders" "0" "$(tar -I zstd -tf ex.tar.zst | grep -c '\.log$\|vis')"

# corruption: one byte flipped inside a checkpoint's data names that file
"$PYTHON" - exp1.envlock.tar.zst flipped.tar.zst <<'PY'
import subprocess, sys, tarfile, io
raw = subprocess.run(["zstd", "-dcq", sys.argv[1]], capture_output=True, check=True).stdout
tf = tarfile.open(fileobj=io.BytesIO(raw))
m = tf.getmember("exp1/epoch_1.pth")
data = bytearray(raw)
data[m.offset_data + 1000] ^= 0xff
open(sys.argv[2], "wb").write(subprocess.run(["zstd", "-q", "-c"], input=bytes(data), capture_output=True, check=True).stdout)
PY
"$ENVLOCK" bundle verify flipped.tar.zst >out
check_status "verify of a flipped byte" 1 $?
check_eq "it names the file" "exp1/epoch_1.pth: content does not match its sha256 in the manifest" "$(head -n 1 out)"
head -c 1000000 exp1.envlock.tar.zst >cut.tar.zst
"$ENVLOCK" bundle verify cut.tar.zst >out 2>err
check_status "verify of a truncated bundle" 1 $?
check_eq "a truncated bundle: one line naming it" "1" "$(grep -c "'cut.tar.zst'" err)"
"$ENVLOCK" bundle verify missing.tar.zst 2>err
check_status "verify of a missing archive" 1 $?
check_eq "a missing archive: one line" "envlock: bundle verify: 'missing.tar.zst': no such file or directory" "$(cat err)"
printf 'not an archive' >junk.tar.zst
"$ENVLOCK" bundle verify junk.tar.zst >out 2>err
check_status "verify of a non-archive" 1 $?
check_grep "a non-archive is named" "'junk.tar.zst'" err

# a file that changes while it is bundled (a training job still writing) fails the bundle
mkdir -p live && head -c 100000000 /dev/urandom >live/epoch_1.pth
( while [ ! -e stop ]; do printf x >>live/epoch_1.pth; sleep 0.01; done ) &
writer=$!
"$ENVLOCK" bundle -q live --lock "$lock" -o live.tar.zst >out 2>err
st=$?
touch stop
wait "$writer"
check_status "bundle of a file being written" 1 "$st"
check_grep "the changing file is named" "live/epoch_1.pth': changed while being" err
if ls -A | grep -q 'live\.tar\.zst'; then not_ok "no archive left after a change"; else ok "no archive left after a change"; fi
rm -rf live stop

# bad input to create
"$ENVLOCK" bundle nowhere --lock "$lock" 2>err
check_status "bundle of a missing work_dir" 1 $?
check_grep "missing work_dir named" "envlock: bundle: 'nowhere'" err
if [ -e nowhere.envlock.tar.zst ]; then not_ok "nothing written for a missing work_dir"; else ok "nothing written for a missing work_dir"; fi
"$ENVLOCK" bundle exp1 --lock "$scratch/none.json" -o none.tar.zst 2>err
check_status "a missing --lock" 2 $?
check_eq "a missing --lock: one line naming it" "envlock: bundle: '$scratch/none.json': no such file" "$(cat err)"
check_eq "no partial archive left" "" "$(ls -A | grep 'none\.tar\.zst')"

# round trip through envlock's own extraction
if "$ENVLOCK" bundle extract exp1.envlock.tar.zst back >out 2>err; then
	ok "bundle extract"
	check_eq "extracted tree equals the work_dir" "" "$(diff -r exp1 back/exp1 2>&1)"
	check_eq "the symlink comes back as a symlink" "epoch_2.pth" "$(readlink back/exp1/latest.pth)"
	"$ENVLOCK" bundle extract exp1.envlock.tar.zst back 2>err
	check_status "extract into an existing folder without --force" 1 $?
	"$ENVLOCK" bundle extract --force exp1.envlock.tar.zst back 2>err
	check_status "extract into an existing folder with --force" 0 $?
else
	not_ok "bundle extract"; sed 's/^/#   /' err
fi

# bundle never writes what extract would refuse: it says so and leaves it out
mkdir -p odd/d && printf 'x' >odd/d/x && printf 'y' >"odd/bad
name" && ln -s ../d/../x odd/d/l && ln -s ../../../etc/passwd odd/d/out
"$ENVLOCK" bundle odd --lock "$lock" -o odd.tar.zst >out 2>err
check_status "a work_dir with entries extract would refuse" 0 $?
check_grep "a name with a control character: warned, not bundled" "control character in the name; not bundled" err
check_grep "a link with '..' after a name: warned, not bundled" "symlink to '../d/../x': symlink target has '..' after a name; not bundled" err
check_grep "a link out of the work_dir: warned, not bundled" "symlink to '../../../etc/passwd': symlink leads outside the target folder; not bundled" err
"$ENVLOCK" bundle extract odd.tar.zst oddx >out 2>err
check_status "what was bundled extracts" 0 $?
check_eq "and is the rest of the work_dir" "odd odd/d odd/d/x" "$(cd oddx && find odd | sort | tr '\n' ' ' | sed 's/ $//')"

# names outside ASCII, as training logs and checkpoints get them: stored as their UTF-8, whatever
# the locale (envlock runs in C's); GNU tar reads the same names back, and extract makes the same files
mkdir -p intl/日志 && printf 'loss 0.5\n' >"intl/日志/训练日志.log" && printf 'w' >"intl/épоch_12.pth" &&
	ln -s "日志/训练日志.log" "intl/последний.log"
"$ENVLOCK" bundle intl --lock "$lock" -o intl.tar.zst >out 2>err
check_status "bundle of a work_dir with names outside ASCII" 0 $?
check_eq "nothing warned" "" "$(cat err)"
"$ENVLOCK" bundle verify intl.tar.zst >out 2>err
check_status "verify reads the names back" 0 $?
if command -v zstd >/dev/null 2>&1; then
	check_eq "GNU tar lists the same names" "intl/épоch_12.pth intl/последний.log intl/日志/ intl/日志/训练日志.log" \
		"$(zstd -dc intl.tar.zst | LC_ALL=C.UTF-8 tar -t | grep '^intl/.' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
else
	skip "GNU tar lists the same names" "no zstd"
fi
"$ENVLOCK" bundle list --json intl.tar.zst >list.json 2>err
check_eq "list --json names them as UTF-8" "intl/épоch_12.pth intl/последний.log intl/日志 intl/日志/训练日志.log" \
	"$("$PYTHON" -c 'import json,sys; print(" ".join(sorted((f["path"] for f in json.load(open(sys.argv[1]))["files"]), key=lambda p: p.encode())))' list.json)"
"$ENVLOCK" bundle extract intl.tar.zst intlx >out 2>err
check_status "extract of them" 0 $?
check_eq "the extracted tree is the work_dir, byte for byte" "" "$(diff -r intl intlx/intl 2>&1)"
check_eq "the link comes back with its UTF-8 target" "日志/训练日志.log" "$(readlink "intlx/intl/последний.log")"
# a name that is not UTF-8 (Latin-1 é) cannot be stored as pax asks: one line naming it, no archive
mkdir -p latin1 && printf 'z' >"latin1/$(printf 'caf\351.log')"
"$ENVLOCK" bundle latin1 --lock "$lock" -o latin1.tar.zst >out 2>err
check_status "a name that is not UTF-8" 1 $?
check_eq "one line naming it" 1 "$(grep -c "latin1/caf.*\.log'" err)"
check_eq "no archive left" "" "$(ls -A | grep '^latin1\.tar\.zst')"
# a bundle read from a pipe (its size says nothing) is read as a large file is
cat intl.tar.zst | "$ENVLOCK" bundle verify /dev/stdin >out 2>err
check_status "verify of a bundle from a pipe" 0 $?
check_grep "every digest checked" "^ok: 4 entries, every digest and the lock id match" out
