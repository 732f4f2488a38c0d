/*
 * A bundle archive from elsewhere: verify, list (text and JSON), then
 * extract into a fresh folder, and check that nothing was written outside
 * it: the three folders above it and the scratch folder hold nothing new,
 * and the absolute paths the hostile seeds aim at do not exist.
 */
#include <dirent.h>
#include <stdbool.h>
#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Abort when dir holds anything but the names in keep (NULL-terminated). */
static void only(const char *dir, const char *const keep[])
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		abort();
	while ((e = readdir(d)) != NULL) {
		bool known = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;

		for (size_t i = 0; !known && keep[i]; i++)
			known = strcmp(e->d_name, keep[i]) == 0;
		if (!known) {
			fprintf(stderr, "bundle extract wrote '%s/%s', outside its folder\n", dir, e->d_name);
			abort();
		}
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	static const char *const top[] = { "bundle.tar.zst", "x", NULL };
	static const char *const level[][2] = { { "y", NULL }, { "z", NULL }, { "out", NULL } };
	envlock_extract_opts opts = { 0 };
	envlock_bundle_report report;
	envlock_ctx *ctx = fz_ctx();
	char archive[4096], dir[4][4200];
	glob_t evil;

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	snprintf(archive, sizeof(archive), "%s", fz_write("bundle.tar.zst", data, size));
	/* out is three levels down, so an entry that climbs out of it by up to three ".." lands where it shows */
	snprintf(dir[0], sizeof(dir[0]), "%s/x", fz_dir());
	nftw(dir[0], remove_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(dir[1], sizeof(dir[1]), "%s/x/y", fz_dir());
	snprintf(dir[2], sizeof(dir[2]), "%s/x/y/z", fz_dir());
	snprintf(dir[3], sizeof(dir[3]), "%s/x/y/z/out", fz_dir());
	for (int i = 0; i < 3; i++)
		mkdir(dir[i], 0755);

	(void)envlock_bundle_verify(&report, ctx, archive, devnull);
	(void)envlock_bundle_list(ctx, archive, devnull, 0);
	(void)envlock_bundle_list(ctx, archive, devnull, 1);
	opts.max_total_bytes = 64u << 20;
	(void)envlock_bundle_extract(ctx, archive, dir[3], &opts);
	only(fz_dir(), top);
	for (int i = 0; i < 3; i++)
		only(dir[i], level[i]);
	/* tests/bundle/mkhostile.py's absolute entries, kept in the seeds, aim at /tmp/evil-<hex> */
	if (glob("/tmp/evil-*", 0, NULL, &evil) == 0) {
		fprintf(stderr, "bundle extract wrote '%s', outside its folder\n", evil.gl_pathv[0]);
		abort();
	}
	globfree(&evil);
	envlock_ctx_free(ctx);
	return 0;
}
