#!/bin/sh
# Benchmark the COCO categories reader (lib/config/coco.c), which
# check --config and save --config run on the training set's annotation
# file, against what users run today to read the same number: Python's
# json.load of the whole file (pycocotools' COCO() does exactly that),
# then len(categories). The file is made here in COCO's own layout
# (info, licenses, images, annotations, then categories last, as in
# instances_train2017.json), SIZE_MB large (default 256). Medians of N
# runs after one warm-up (median.py). Writes bench/out/coco.tsv.
set -eu
cd "$(dirname "$0")/.."
N=${N:-5}
SIZE_MB=${SIZE_MB:-256}
out=bench/out
mkdir -p "$out"
[ -f build/libenvlock.a ] || make -s build/libenvlock.a
ann=$out/coco-instances.json
if [ ! -f "$ann" ] || [ "$(($(stat -c %s "$ann") >> 20))" -lt "$SIZE_MB" ]; then
	/usr/bin/python3 - "$ann" "$SIZE_MB" <<'PY'
import json, random, sys
random.seed(2017)
path, mb = sys.argv[1], int(sys.argv[2])
with open(path, 'w') as f:
    f.write('{"info": {"description": "COCO-style benchmark file", "version": "1.0", "year": 2017}, ')
    f.write('"licenses": [{"url": "http://creativecommons.org/licenses/by-nc-sa/2.0/", "id": 1, "name": "BY-NC-SA"}], ')
    f.write('"images": [')
    n = 0
    while f.tell() < mb * 1024 * 1024 * 0.2:
        f.write((', ' if n else '') + json.dumps({"license": 1, "file_name": "%012d.jpg" % n, "height": 480,
                 "width": 640, "date_captured": "2013-11-14 17:02:52", "id": n}))
        n += 1
    f.write('], "annotations": [')
    k = 0
    while f.tell() < mb * 1024 * 1024:
        seg = [round(random.uniform(0, 640), 2) for _ in range(random.randint(8, 40))]
        f.write((', ' if k else '') + json.dumps({"segmentation": [seg], "area": round(random.uniform(10, 9e4), 4),
                 "iscrowd": 0, "image_id": random.randrange(n), "bbox": seg[:4],
                 "category_id": random.randint(1, 80), "id": k}))
        k += 1
    cats = [{"supercategory": "thing", "id": i, "name": "class %d" % i} for i in range(1, 81)]
    f.write('], "categories": ' + json.dumps(cats) + '}')
PY
fi
cat >"$out/coco-count.c" <<'C'
#include <stdio.h>
#include "envlock/envlock.h"
#include "config/facts.h"
int main(int argc, char **argv)
{
	envlock_ctx *ctx;
	long long n;

	if (argc < 2 || envlock_ctx_new(&ctx))
		return 2;
	if (el_coco_categories(ctx, argv[1], &n, NULL, 0)) {
		fprintf(stderr, "%s\n", envlock_error_last(ctx));
		return 1;
	}
	printf("%lld\n", n);
	envlock_ctx_free(ctx);
	return 0;
}
C
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Ilib $(pkg-config --cflags libcjson) -o "$out/coco-count" \
	"$out/coco-count.c" build/libenvlock.a \
	$(pkg-config --libs libcjson libcrypto libgit2 libarchive libzstd) -lpthread -lm
ours=$("$out/coco-count" "$ann")
theirs=$(/usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["categories"]))' "$ann")
[ "$ours" = "$theirs" ] || { echo "coco.sh: envlock counts $ours categories, Python $theirs" >&2; exit 1; }
printf 'file\t%s MiB, %s categories\n' "$(($(stat -c %s "$ann") >> 20))" "$ours" >"$out/coco.tsv"
/usr/bin/python3 bench/median.py "$N" \
	"envlock COCO categories (streamed)" -- "$out/coco-count" "$ann" --- \
	"python3 json.load + len(categories)" -- /usr/bin/python3 -c \
	'import json, sys; len(json.load(open(sys.argv[1]))["categories"])' "$ann" --- \
	"cat FILE >/dev/null (reading it)" -- /bin/sh -c 'cat "$1" >/dev/null' sh "$ann" >>"$out/coco.tsv"
/usr/bin/python3 - "$out/coco.tsv" >>"$out/coco.tsv" <<'PY'
import sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
t = {r[0]: float(r[1]) for r in rows[1:]}
ours = t['envlock COCO categories (streamed)']
print('ratio envlock / python json.load\t%.4f' % (ours / t['python3 json.load + len(categories)']))
PY
cat "$out/coco.tsv"
