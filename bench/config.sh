#!/bin/sh
# Benchmark the effective config (lib/config): evaluating and merging the
# mmdet 2.25 Faster R-CNN r101 chain (6 files) against what the cheapest
# Python step costs, python3 parsing the same files with ast.parse (no
# mmcv here, nothing run); medians of N runs after one warm-up (median.py).
# A small driver linked with build/libenvlock.a does the evaluation; it
# also times 1,000 evaluations in one process, without process start-up.
# Writes bench/out/config.tsv.
set -eu
cd "$(dirname "$0")/.."
N=${N:-21}
out=bench/out
mkdir -p "$out"
[ -f build/libenvlock.a ] || make -s build/libenvlock.a
dir=tests/fixtures/configs/configs
top=$dir/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py
files="$top $dir/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py $dir/_base_/models/faster_rcnn_r50_fpn.py
$dir/_base_/datasets/coco_detection.py $dir/_base_/schedules/schedule_1x.py $dir/_base_/default_runtime.py"
cat >"$out/config-eval.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "envlock/envlock.h"
#include "config/config.h"
int main(int argc, char **argv)
{
	int loops = argc > 2 ? atoi(argv[2]) : 1;
	envlock_ctx *ctx;
	struct timespec a, b;
	cJSON *out = NULL;

	if (envlock_ctx_new(&ctx))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < loops; i++) {
		if (el_config_effective(&out, ctx, argv[1], NULL, 0)) {
			fprintf(stderr, "%s\n", envlock_error_last(ctx));
			return 1;
		}
		cJSON_Delete(out);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (loops > 1)
		printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / loops / 1e3);
	envlock_ctx_free(ctx);
	return 0;
}
C
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib $(pkg-config --cflags libcjson) -o "$out/config-eval" \
	"$out/config-eval.c" build/libenvlock.a \
	$(pkg-config --libs libcjson libcrypto libgit2 libarchive libzstd) -lpthread -lm
# shellcheck disable=SC2086
/usr/bin/python3 bench/median.py "$N" \
	"envlock effective config of the chain (evaluate + merge, 6 files)" -- "$out/config-eval" "$top" --- \
	"python3 ast.parse of the 6 files" -- /usr/bin/python3 -c \
	"import ast, sys; [ast.parse(open(f).read()) for f in sys.argv[1:]]" $files --- \
	"python3 -c pass (interpreter start alone)" -- /usr/bin/python3 -c pass >"$out/config.tsv"
printf 'one evaluation in-process, microseconds (median of 5 x 1,000)\t%s\n' \
	"$(for i in 1 2 3 4 5; do "$out/config-eval" "$top" 1000; done | sort -n | sed -n 3p)" >>"$out/config.tsv"
cat "$out/config.tsv"
