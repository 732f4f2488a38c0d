/*
 * A bundle archive from elsewhere: verify, list (text and JSON), then
 * extract into a fresh folder, and check that nothing was written outside
 * it (the scratch folder holds only the archive and that folder after).
 */
#include <dirent.h>
#include <stdbool.h>
#include <ftw.h>
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
	static const char *const inner[] = { "out", NULL };
	envlock_extract_opts opts = { 0 };
	envlock_bundle_report report;
	envlock_ctx *ctx = fz_ctx();
	char archive[4096], x[4096], out[4200];

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	snprintf(archive, sizeof(archive), "%s", fz_write("bundle.tar.zst", data, size));
	snprintf(x, sizeof(x), "%s/x", fz_dir());
	snprintf(out, sizeof(out), "%s/out", x);
	nftw(x, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(x, 0755);

	(void)envlock_bundle_verify(&report, ctx, archive, devnull);
	(void)envlock_bundle_list(ctx, archive, devnull, 0);
	(void)envlock_bundle_list(ctx, archive, devnull, 1);
	opts.max_total_bytes = 64u << 20;
	(void)envlock_bundle_extract(ctx, archive, out, &opts);
	only(fz_dir(), top);
	only(x, inner);
	envlock_ctx_free(ctx);
	return 0;
}
