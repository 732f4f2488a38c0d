#!/bin/sh
# Benchmark `envlock save` at scale (issue 18): a conda environment of
# 20,000 packages with 12,000 pip distributions in it, against the same at
# 5,000 + 3,000 (tests/fixtures/mkroots.py --bench DIR NCONDA NPIP: records
# of the real layout, 16 KB each on average). Linear means the big save
# takes about 4x the small one. Medians of N wall times, and, with
# CALLGRIND=1, the instruction counts, which the machine's load does not move.
# Writes bench/out/save-scale.tsv; bench/RESULTS.md quotes it.
set -eu
cd "$(dirname "$0")/.."
N=${N:-7}
out=bench/out
mkdir -p "$out"
ENVLOCK=${ENVLOCK:-build/envlock}
[ -x "$ENVLOCK" ] || make -s all
small=$out/scale-5k
big=$out/scale-20k
[ -d "$small/opt/conda/envs/big/conda-meta" ] || /usr/bin/python3 tests/fixtures/mkroots.py --bench "$small" 5000 3000 >/dev/null
[ -d "$big/opt/conda/envs/big/conda-meta" ] || /usr/bin/python3 tests/fixtures/mkroots.py --bench "$big" 20000 12000 >/dev/null
# the trees are read from the page cache, as a second save reads them
find "$small" "$big" -type f -exec cat {} + >/dev/null
/usr/bin/python3 bench/median.py "$N" \
	"envlock save --root scale-5k (5,000 conda + 3,000 pip)" -- "$ENVLOCK" save -q --root "$small" -o /dev/null --- \
	"envlock save --root scale-20k (20,000 conda + 12,000 pip)" -- "$ENVLOCK" save -q --root "$big" -o /dev/null \
	>"$out/save-scale.tsv"
if [ "${CALLGRIND:-0}" = 1 ]; then
	for t in "$small" "$big"; do
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$ENVLOCK" save -q --root "$t" -o /dev/null 2>&1 |
			sed -n "s|.*Collected : \([0-9]*\)|instructions	$(basename "$t")	\1|p"
	done >>"$out/save-scale.tsv"
fi
cat "$out/save-scale.tsv"
