#!/bin/sh
# Benchmark envlock ldd against the real loader: the file with the deepest
# tree in tests/loader/mktree.sh's Debian 12 tree, resolved N times by
#   envlock ldd --root TREE --json FILE
# and listed N times by
#   chroot TREE /lib64/ld-linux-x86-64.so.2 --list FILE
# side by side (alternating), medians and their ratio. Needs root (chroot).
# Writes bench/out/ldd.txt; bench/RESULTS.md quotes it.
set -eu
cd "$(dirname "$0")/.."
ENVLOCK=${ENVLOCK:-build/envlock}
N=${N:-51}
[ -x "$ENVLOCK" ] || make -s all
# TREE and FILE name another tree and file (t0075's wheel tree: torch's _C with NVIDIA's cuDNN and cudart)
tree=${TREE:-build/loader/tree}
sh tests/loader/mktree.sh build/loader/debs build/loader/tree || exit 0
mkdir -p bench/out
# the deepest: the most objects loaded, among the tree's libraries and extension modules
file=${FILE:-$(cd "$tree" && for f in usr/lib/x86_64-linux-gnu/*.so.* usr/lib/python3.11/lib-dynload/*.so usr/bin/python3.11; do
	[ -L "$f" ] && continue
	n=$("$OLDPWD/$ENVLOCK" ldd --root . --json "/$f" 2>/dev/null | grep -c '"path": "/') || true
	echo "$n /$f"
done | sort -n | tail -n 1 | cut -d' ' -f2)}
python3 - "$ENVLOCK" "$tree" "$file" "$N" <<'PY' | tee bench/out/ldd.txt
import statistics, subprocess, sys, time
envlock, tree, f, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
a = [envlock, "ldd", "--root", tree, "--json", f]
b = ["chroot", tree, "/lib64/ld-linux-x86-64.so.2", "--list", f]
ta, tb = [], []
for _ in range(n):
    for cmd, t in ((a, ta), (b, tb)):
        s = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        t.append(time.perf_counter() - s)
ma, mb = statistics.median(ta), statistics.median(tb)
print("file: %s (%s)" % (f, tree))
print("runs: %d each, alternating" % n)
print("envlock ldd --json       median %.2f ms  (min %.2f, max %.2f)" % (ma * 1e3, min(ta) * 1e3, max(ta) * 1e3))
print("chroot ld.so --list      median %.2f ms  (min %.2f, max %.2f)" % (mb * 1e3, min(tb) * 1e3, max(tb) * 1e3))
print("ratio envlock / ld.so    %.2f" % (ma / mb))
PY
