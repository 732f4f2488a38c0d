/*
 * Shared helpers for envlock's cmocka unit tests: scratch roots built
 * file by file, probing them, and reading values out of the lock.
 */
#ifndef ENVLOCK_UNIT_H
#define ENVLOCK_UNIT_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ftw.h>
#include <cmocka.h>

#include "envlock/envlock.h"
#include "lock/model.h"

/* A fresh scratch directory (malloc'd path). */
static inline char *unit_tmpdir(void)
{
	char tmpl[] = "/tmp/envlock-unit.XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

static inline void unit_mkdirs(const char *path)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(buf, 0755);
			*s = '/';
		}
	mkdir(buf, 0755);
}

/* Write root/rel with len bytes of data (len -1: strlen), creating folders. */
static inline void unit_write(const char *root, const char *rel, const char *data, long len)
{
	char path[4096], dir[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	unit_mkdirs(dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(data, 1, len < 0 ? strlen(data) : (size_t)len, f);
	fclose(f);
}

static inline void unit_symlink(const char *root, const char *rel, const char *target)
{
	char path[4096], dir[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	unit_mkdirs(dir);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
}

static inline int unit_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static inline void unit_rmtree(char *dir)
{
	nftw(dir, unit_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

/* Probe with opts (the digest cache always off) and return the lock; fails the test on error. */
/*
 * Write text as a new lockfile in dir (lock<N>.json, counting with *n) and
 * load it without the schema check: these are small hand-made documents for
 * one consumer (tests/cli/t0018 checks that every command validates).
 */
static inline envlock_lock *unit_load_text(const char *dir, int *n, const char *text)
{
	char name[64], path[4096];
	envlock_ctx *ctx;
	envlock_lock *lock = NULL;

	snprintf(name, sizeof(name), "lock%d.json", (*n)++);
	unit_write(dir, name, text, -1);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (el_lock_load(&lock, ctx, path, false) != 0)
		fail_msg("load: %s", envlock_error_last(ctx));
	envlock_ctx_free(ctx);
	return lock;
}

static inline envlock_lock *unit_probe_opts(const envlock_probe_opts *given)
{
	envlock_probe_opts opts = *given;
	envlock_ctx *ctx;
	envlock_lock *lock = NULL;

	opts.no_cache = 1;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_lock_probe(&lock, ctx, &opts), 0);
	envlock_ctx_free(ctx);
	return lock;
}

/* Probe root with an optional --conda-prefix and --python. */
static inline envlock_lock *unit_probe_with(const char *root, const char *conda_prefix,
					    const char *python)
{
	envlock_probe_opts opts;

	memset(&opts, 0, sizeof(opts));
	opts.root = root;
	opts.conda_prefix = conda_prefix;
	opts.python = python;
	return unit_probe_opts(&opts);
}

static inline envlock_lock *unit_probe(const char *root)
{
	return unit_probe_with(root, NULL, NULL);
}

/* Follow a dotted path ("gpu.driver.version", "cuda.toolkits.0.home") in the lock. */
static inline const cJSON *unit_get(const envlock_lock *lock, const char *path)
{
	const cJSON *cur = lock->doc;
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save)) {
		if (cJSON_IsArray(cur))
			cur = cJSON_GetArrayItem(cur, atoi(tok));
		else
			cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
	}
	return cur;
}

/* The string at path, or NULL. */
static inline const char *unit_str(const envlock_lock *lock, const char *path)
{
	const cJSON *v = unit_get(lock, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* How many warnings contain needle. */
static inline int unit_warnings_with(const envlock_lock *lock, const char *needle)
{
	int n = 0;

	for (size_t i = 0; i < envlock_lock_warning_count(lock); i++)
		n += strstr(envlock_lock_warning(lock, i), needle) != NULL;
	return n;
}

#endif
