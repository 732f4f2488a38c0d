#!/bin/sh
# The instruction-count guard (make bench-check): the benchmarks' commands
# run once each under valgrind --tool=callgrind, whose counts repeat from
# run to run where wall times on this shared machine do not. Each count
# is compared with bench/callgrind.baseline; a command more than 5 % over
# its baseline fails the check. UPDATE=1 writes the baseline instead
# (after a change that is meant to cost more, or less: commit it with the
# change). Instruction counts are of envlock's process alone (children
# are not followed), with the digest cache empty and then warm.
set -eu
cd "$(dirname "$0")/.."
ENVLOCK=${ENVLOCK:-build/envlock}
BASE=bench/callgrind.baseline
LIMIT=${LIMIT:-5}
[ -x "$ENVLOCK" ] || make -s all
[ -d tests/fixtures/roots/ubuntu1604-mmdet ] || make -s fixtures
tmp=$(mktemp -d /tmp/envlock-callgrind.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache" HOME="$tmp/home" LANG=C LC_ALL=C TZ=UTC
mkdir -p "$HOME"
R=tests/fixtures/roots
CFG=tests/fixtures/configs

# count NAME CMD...: the instructions CMD executed
count() {
	name=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" >/dev/null 2>"$tmp/vg.err" || true
	n=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$tmp/vg.err" | tail -n 1)
	[ -n "$n" ] || { echo "callgrind.sh: $name: no count (valgrind said: $(tail -n 3 "$tmp/vg.err"))" >&2; exit 2; }
	printf '%s\t%s\n' "$name" "$n"
}

"$ENVLOCK" save -q --root "$R/ubuntu1604-mmdet" -o "$tmp/a.lock"
"$ENVLOCK" save -q --root "$R/mmpose-container" -o "$tmp/b.lock"
mkdir -p "$tmp/wd"
cp -r "$CFG/configs" "$tmp/wd/"
{
	count "save --root ubuntu1604-mmdet (cache empty)" "$ENVLOCK" save -q --no-cache --root "$R/ubuntu1604-mmdet" -o "$tmp/x.lock"
	count "save --root ubuntu1604-mmdet (cache warm)" "$ENVLOCK" save -q --root "$R/ubuntu1604-mmdet" -o "$tmp/x.lock"
	count "save --root mmpose-container --config ViTPose" "$ENVLOCK" save -q --root "$R/mmpose-container" \
		--config "$CFG/mmpose/configs/body_2d_keypoint/topdown_heatmap/coco/td-hm_ViTPose-small_8xb64-210e_coco-256x192.py" -o "$tmp/x.lock"
	count "check --root mmpose-container --config seed" "$ENVLOCK" check --root "$R/mmpose-container" \
		--config "$CFG/checks/configs/seed/td-hm_ViTPose-small_8xb64-210e_coco-256x192_seed.py"
	count "show a lock" "$ENVLOCK" show "$tmp/a.lock"
	count "check a lock" "$ENVLOCK" check "$tmp/a.lock"
	count "diff two locks" "$ENVLOCK" diff "$tmp/a.lock" "$tmp/b.lock"
	count "diff two locks --json" "$ENVLOCK" diff --json "$tmp/a.lock" "$tmp/b.lock"
	count "report --format latex" "$ENVLOCK" report "$tmp/a.lock" --format latex -o "$tmp/r.tex"
	count "bundle of a work_dir of configs" "$ENVLOCK" bundle "$tmp/wd" --lock "$tmp/a.lock" -o "$tmp/x.tar.zst" --quiet
} >"$tmp/counts"

if [ "${UPDATE:-0}" = 1 ]; then
	{
		echo "# instructions per command (bench/callgrind.sh; UPDATE=1 make bench-check rewrites it)"
		echo "# $(valgrind --version), $(uname -m), $(date -u +%Y-%m-%d)"
		cat "$tmp/counts"
	} >"$BASE"
	cat "$BASE"
	exit 0
fi
[ -f "$BASE" ] || { echo "callgrind.sh: no $BASE: run UPDATE=1 make bench-check first" >&2; exit 2; }
/usr/bin/python3 - "$BASE" "$tmp/counts" "$LIMIT" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        name, n = line.rstrip('\n').rsplit('\t', 1)
        out[name] = int(n)
    return out
base, now, limit = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
bad = 0
print('%-52s %15s %15s %8s' % ('command', 'baseline', 'now', 'change'))
for name, n in now.items():
    b = base.get(name)
    if b is None:
        print('%-52s %15s %15d %8s  (no baseline)' % (name, '-', n, '-'))
        continue
    ch = (n - b) * 100.0 / b
    flag = '  REGRESSION' if ch > limit else ''
    bad += ch > limit
    print('%-52s %15d %15d %+7.2f%%%s' % (name, b, n, ch, flag))
for name in base:
    if name not in now:
        print('%-52s no longer measured' % name)
if bad:
    sys.exit('bench-check: %d command(s) over their baseline by more than %g %%' % (bad, limit))
PY
