/* The scratch folder, split inputs and scratch roots of the fuzz harnesses (fuzz.h). */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "lock/model.h"
#include "util/vec.h"
#include "util/xalloc.h"

static char scratch[PATH_MAX];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_scratch(void)
{
	if (scratch[0])
		nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fz_dir(void)
{
	if (!scratch[0]) {
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

		snprintf(scratch, sizeof(scratch), "%s/envlock-fuzz-XXXXXX", base ? base : "/tmp");
		if (!mkdtemp(scratch)) {
			perror("envlock fuzz: scratch folder");
			abort();
		}
		atexit(remove_scratch);
	}
	return scratch;
}

static void make_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			perror(path);
			abort();
		}
		*s = '/';
	}
}

const char *fz_write(const char *name, const void *data, size_t len)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fz_dir(), name);
	make_parents(path);
	if (!(f = fopen(path, "wb")) || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
		perror(path);
		abort();
	}
	return path;
}

size_t fz_split(const uint8_t *data, size_t len, fz_part *parts, size_t max)
{
	const size_t seplen = sizeof(FZ_SEP) - 1;
	size_t n = 0;

	while (n + 1 < max) {
		const uint8_t *s = memmem(data, len, FZ_SEP, seplen);

		if (!s)
			break;
		parts[n].data = data;
		parts[n++].len = (size_t)(s - data);
		len -= (size_t)(s - data) + seplen;
		data = s + seplen;
	}
	parts[n].data = data;
	parts[n++].len = len;
	return n;
}

const char *fz_root(const char *const paths[], const uint8_t *data, size_t len)
{
	static char root[PATH_MAX];
	fz_part parts[16];
	size_t n, k;

	for (k = 0; paths[k]; k++)
		;
	n = fz_split(data, len, parts, k < 16 ? k : 16);
	snprintf(root, sizeof(root), "%s/root", fz_dir());
	for (size_t i = 0; i < k; i++) {
		char name[PATH_MAX];

		snprintf(name, sizeof(name), "root%s", paths[i]);
		if (i < n) {
			fz_write(name, parts[i].data, parts[i].len);
		} else {
			char host[PATH_MAX * 2];

			snprintf(host, sizeof(host), "%s/%s", fz_dir(), name);
			unlink(host);
		}
	}
	mkdir(root, 0755);
	return root;
}

void fz_probe_init(el_probe *p, envlock_ctx *ctx, const envlock_probe_opts *opts)
{
	char *warning = NULL;

	if (el_probe_init(p, ctx, opts) != 0) {
		fprintf(stderr, "envlock fuzz: root: %s\n", envlock_error_last(ctx));
		abort();
	}
	p->hashes = el_hashcache_open(1, &warning);
	free(warning);
}

void fz_probe_release(el_probe *p)
{
	el_probe_release(p);
}

void fz_probe_python(el_probe *p, const char *prefix, const char *site)
{
	p->py.prefix = el_xstrdup(prefix);
	p->py.kind = el_xstrdup("venv");
	p->py.version = el_xstrdup("3.8.18");
	p->py.site_dirs = el_xcalloc(2, sizeof(char *));
	p->py.site_dirs[0] = el_xstrdup(site);
}

envlock_ctx *fz_ctx(void)
{
	envlock_ctx *ctx = NULL;

	if (envlock_ctx_new(&ctx) != 0)
		abort();
	return ctx;
}
