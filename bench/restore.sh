#!/bin/sh
# Benchmark `envlock restore --dry-run` (the planner: a full probe of the
# machine plus the comparison with the lock) on the 800-package benchmark
# root (500 conda + 300 pip), against the probe alone (`envlock save`) and
# the check users run by hand today (`python3 -m pip freeze`, which sees
# one environment's pip names only). Medians of N, one run.
# Writes bench/out/restore.tsv; bench/RESULTS.md quotes it. DRY=0 leaves
# this part out. Then issue 15's two (below): bench/out/kit800.tsv.
set -eu
cd "$(dirname "$0")/.."
N=${N:-21}
out=bench/out
mkdir -p "$out"
ENVLOCK=${ENVLOCK:-build/envlock}
[ -x "$ENVLOCK" ] || make -s all
if [ "${DRY:-1}" = 1 ]; then
bench_root=$out/bench-800
/usr/bin/python3 tests/fixtures/mkroots.py --bench "$bench_root" >/dev/null
export XDG_CACHE_HOME="$PWD/$out/cache"
"$ENVLOCK" save -q --root "$bench_root" -o "$out/bench-800.lock.json"
mkdir -p "$out/empty-root"
state=$(mktemp -d)
packages=$(/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['conda']['package_count'] + d['pip']['count'])" "$out/bench-800.lock.json")
MEDIAN_OK="0 1" /usr/bin/python3 bench/median.py "$N" \
	"envlock restore --dry-run, $packages-package lock, empty sandbox (everything to plan)" -- \
		"$ENVLOCK" restore "$out/bench-800.lock.json" --root "$out/empty-root" --state-dir "$state" --dry-run --- \
	"envlock restore --dry-run, $packages-package lock, restored sandbox (nothing to do)" -- \
		"$ENVLOCK" restore "$out/bench-800.lock.json" --root "$bench_root" --state-dir "$state" --dry-run --- \
	"envlock save --root (the probe alone)" -- "$ENVLOCK" save -q --root "$bench_root" -o /dev/null --- \
	"python3 -m pip freeze" -- python3 -m pip freeze \
	>"$out/restore.tsv"
rm -rf "$state"
# the second run of a restore on a restored sandbox must report nothing to do
"$ENVLOCK" restore "$out/bench-800.lock.json" --root "$bench_root" --dry-run --state-dir "$out/state" | tail -n 1 >>"$out/restore.tsv"
cat "$out/restore.tsv"
fi

# --- issue 15: pack and restore --kit of an 800-package environment ------
# bench/pack.sh's generator at 500 conda archives + 300 wheels of random
# bytes (real archives are already compressed), sizes scaled to ~2 GB in
# all; the wheels are real ones pip installs. Each timed command writes
# outputs of its own (kit800/step.sh picks the next name, removing the
# last run's first), and every fresh venv is made before the timing starts. KIT_N runs (default 3)
# after median.py's warm-up. KIT=0 leaves this part out.
[ "${KIT:-1}" = 1 ] || exit 0
KIT_N=${KIT_N:-3}
kd=$PWD/$out/kit800
ARCHIVES=500 WHEELS=300 SCALE=0.35 OUT="$kd" PACK_GEN_ONLY=1 ENVLOCK="$ENVLOCK" sh bench/pack.sh
E=$(cd "$(dirname "$ENVLOCK")" && pwd)/$(basename "$ENVLOCK")
lock=$kd/env.lock
/usr/bin/python3 -c "import json,sys; print(' '.join('%s==%s' % (d['name'], d['version']) for d in json.load(open(sys.argv[1]))['pip']['distributions']))" "$lock" >"$kd/pins.txt"
# the pip part alone: a plain venv (no conda-meta, so no conda in its lock) that pip installed the 300 into
if [ ! -f "$kd/pip.lock" ]; then
	rm -rf "$kd/pipenv" && /usr/bin/python3 -m venv "$kd/pipenv"
	"$kd/pipenv/bin/python" -m pip install -q --no-index --find-links "$kd/wheels" $(cat "$kd/pins.txt")
	"$E" save -q --python "$kd/pipenv/bin/python" -o "$kd/pip.lock" 2>/dev/null
fi
rm -rf "$kd/kit" "$kd/pipkit" "$kd/runs"
"$E" pack "$lock" -o "$kd/kit" --wheels "$kd/wheels" >/dev/null
"$E" pack "$kd/pip.lock" -o "$kd/pipkit" --wheels "$kd/wheels" >/dev/null
cat >"$kd/step.sh" <<STEP
#!/bin/sh
# step.sh WHAT: one run of WHAT into outputs of its own (\$RUNS/WHAT-K, K counting up;
# RUNS defaults to runs/)
set -e
cd '$kd'
R=\${RUNS:-runs}
k=\$(cat "\$R/\$1.count" 2>/dev/null || echo 0); echo \$((k + 1)) >"\$R/\$1.count"
r=\$R/\$1-\$k
# the run before's 2 GB go first (in the time, the same for every command): written
# and kept, they would fill the page cache's dirty limit and stall the runs after
rm -rf "\$R/\$1-"*
case \$1 in
tar) exec tar -I 'zstd -T0' -cf "\$r.tar.zst" env.lock env/pkgs wheels ;;
tar-sync) tar -I 'zstd -T0' -cf "\$r.tar.zst" env.lock env/pkgs wheels && exec sync "\$r.tar.zst" ;;
pack-dir) exec '$E' pack env.lock -o "\$r" --wheels wheels ;;
pack-zst) exec '$E' pack env.lock -o "\$r.tar.zst" --wheels wheels ;;
restore) exec '$E' restore env.lock --kit kit --only pip --python "\$PWD/venvs/\$1-\$k/bin/python" --yes --state-dir "\$r" ;;
pip) exec "venvs/\$1-\$k/bin/python" -m pip install --no-index --find-links kit/wheels \$(cat pins.txt) ;;
restore-pipkit) exec '$E' restore pip.lock --kit pipkit --only pip --python "\$PWD/venvs/\$1-\$k/bin/python" --yes --state-dir "\$r" ;;
pip-pipkit) exec "venvs/\$1-\$k/bin/python" -m pip install --no-index --find-links pipkit/wheels \$(cat pins.txt) ;;
esac
STEP
st="sh $kd/step.sh"
bytes=$(cat "$kd"/env/pkgs/* "$kd"/wheels/* | wc -c) # and warm the page cache
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/kit800.tsv"
printf '%s conda archives + %s wheels, %s bytes\n' "$(ls "$kd/env/pkgs" | wc -l)" "$(ls "$kd/wheels" | wc -l)" "$bytes" >>"$out/kit800.tsv"
# on the disk (ext4 mounted with discard here: removing the last run's fsynced
# 2 GB costs ~0.4 s, an unsynced one ~0.1 s), then with the outputs in
# /dev/shm (no disk: what the commands compute, fsync and sync are free)
# KIT_PACK=0 leaves the pack comparisons out
for where in disk shm; do
	[ "${KIT_PACK:-1}" = 1 ] || break
	if [ "$where" = shm ]; then
		[ -d /dev/shm ] && [ "$(df -k --output=avail /dev/shm | tail -n 1)" -gt 8000000 ] || continue
		export RUNS=/dev/shm/envlock-kit800-runs
	else
		export RUNS="$kd/runs"
	fi
	for what in tar tar-sync pack-dir pack-zst; do
		mkdir -p "$RUNS"
		/usr/bin/python3 bench/median.py "$KIT_N" "$where $what" -- $st "$what" >>"$out/kit800.tsv"
		rm -rf "$RUNS" # 2 GB a run
	done
done
unset RUNS

# the same pack's archive is a kit: checked once
if [ "${KIT_PACK:-1}" = 1 ]; then
	"$E" pack "$lock" -o "$kd/check.tar.zst" --wheels "$kd/wheels" >/dev/null &&
		"$E" bundle verify "$kd/check.tar.zst" | tail -n 1 >>"$out/kit800.tsv"
	rm -f "$kd/check.tar.zst"
fi
echo "load between: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/kit800.tsv"
# KIT_RESTORE=0 leaves the restore comparisons out
if [ "${KIT_RESTORE:-1}" = 1 ]; then
for what in restore pip restore-pipkit pip-pipkit; do
	mkdir -p "$kd/runs" "$kd/venvs"
	for k in $(seq 0 "$KIT_N"); do /usr/bin/python3 -m venv "$kd/venvs/$what-$k"; done
	/usr/bin/python3 bench/median.py "$KIT_N" "$what" -- $st "$what" >>"$out/kit800.tsv"
	# each run installed all 300
	[ "$(ls "$kd/venvs/$what-$KIT_N/lib/python3.11/site-packages" | grep -c '^whl_.*dist-info$')" = 300 ] ||
		echo "$what: not all 300 installed" >>"$out/kit800.tsv"
	rm -rf "$kd/runs" "$kd/venvs"
done
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/kit800.tsv"
awk -F'\t' '
	{ t[$1] = $2 }
	END {
		for (i = 0; i < 2; i++) {
			w = i ? "shm " : "disk "
			if (!t[w "tar"])
				continue
			printf "%spack -o DIR / tar+zstd: %.2f\n", w, t[w "pack-dir"] / t[w "tar"]
			printf "%spack -o KIT.tar.zst / tar+zstd: %.2f; / (tar+zstd, then sync): %.2f\n", w,
				t[w "pack-zst"] / t[w "tar"], t[w "pack-zst"] / t[w "tar-sync"]
		}
		if (t["pip"])
			printf "restore --kit (800-package kit, --only pip) / pip install: %.2f\n", t["restore"] / t["pip"]
		if (t["pip-pipkit"])
			printf "restore --kit (the pip-only kit) / pip install: %.2f\n", t["restore-pipkit"] / t["pip-pipkit"]
	}' "$out/kit800.tsv" >>"$out/kit800.tsv"
cat "$out/kit800.tsv"
