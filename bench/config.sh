#!/bin/sh
# Benchmark the effective config (lib/config): evaluating and merging the
# mmdet 2.25 Faster R-CNN r101 chain (6 files) against what the cheapest
# Python step costs, python3 parsing the same files with ast.parse (no
# mmcv here, nothing run); medians of N runs after one warm-up (median.py).
# A small driver linked with build/libenvlock.a does the evaluation; it
# also times 1,000 evaluations in one process, without process start-up.
# Then, when ../shared/data/configs is there, a config that loops and
# appends (mmpose's RTMW on 14 datasets, whose 16 training sets come from
# a for loop over the scenes) the same way, and every config of the three
# real trees there (2,072 files) evaluated in one process.
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
#include <string.h>
#include <time.h>
#include "envlock/envlock.h"
#include "config/config.h"
/* -l LIST SITE: every path of LIST evaluated once, in one process; prints the total in ms */
static int corpus(const char *list, const char *site)
{
	const char *sites[] = { site };
	el_config_sites s = { sites, 1 };
	char line[4096];
	FILE *f = fopen(list, "r");
	envlock_ctx *ctx;
	struct timespec a, b;
	int n = 0, refused = 0;

	if (!f || envlock_ctx_new(&ctx))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	while (fgets(line, sizeof(line), f)) {
		cJSON *out = NULL;

		line[strcspn(line, "\n")] = '\0';
		if (el_config_effective_in(&out, ctx, line, NULL, 0, &s, NULL))
			refused++;
		cJSON_Delete(out);
		n++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\t%d\t%d\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e6, n, refused);
	fclose(f);
	envlock_ctx_free(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	int loops = argc > 2 ? atoi(argv[2]) : 1;

	if (argc == 4 && !strcmp(argv[1], "-l"))
		return corpus(argv[2], argv[3]);
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
corpora=../shared/data/configs
if [ -d "$corpora" ]; then
	rtmw=$corpora/mmpose-1.3.2/configs/wholebody_2d_keypoint/rtmpose/cocktail14/rtmw-l_8xb320-270e_cocktail14-384x288.py
	rtmw_files="$rtmw $corpora/mmpose-1.3.2/configs/_base_/default_runtime.py"
	# shellcheck disable=SC2086
	/usr/bin/python3 bench/median.py "$N" \
		"envlock effective config of RTMW cocktail14 (loops, 2 files)" -- "$out/config-eval" "$rtmw" --- \
		"python3 ast.parse of its 2 files" -- /usr/bin/python3 -c \
		"import ast, sys; [ast.parse(open(f).read()) for f in sys.argv[1:]]" $rtmw_files >>"$out/config.tsv"
	printf 'RTMW cocktail14 in-process, microseconds (median of 5 x 100)\t%s\n' \
		"$(for i in 1 2 3 4 5; do "$out/config-eval" "$rtmw" 100; done | sort -n | sed -n 3p)" >>"$out/config.tsv"
	for c in mmdet-2.25.0 mmdet-3.3.0+ mmpose-1.3.2; do
		find "$corpora/$c" -name '*.py' | sort >"$out/config-list"
		printf '%s: every config in one process (ms, configs, refused)\t%s\n' "$c" \
			"$("$out/config-eval" -l "$out/config-list" "$corpora/$c")" >>"$out/config.tsv"
		printf '%s: python3 ast.parse of every config in one process (ms)\t%s\n' "$c" \
			"$(/usr/bin/python3 -c 'import ast, sys, time
files = [l.strip() for l in open(sys.argv[1])]
t = time.monotonic()
for f in files: ast.parse(open(f).read())
print("%.0f" % ((time.monotonic() - t) * 1000))' "$out/config-list")" >>"$out/config.tsv"
	done
fi
cat "$out/config.tsv"
