/*
 * Checkpoints: the weights a result came from. Each --checkpoint is a
 * file, a folder (its *.pth, *.pt, *.ckpt, *.safetensors, *.bin) or a glob,
 * on this machine as the user typed it. Every file is hashed with SHA-256
 * through the digest cache, several at once (one thread per core, largest
 * first), streaming through a fixed buffer, so a 20 GB file needs no more
 * memory than a small one and a re-save after training re-reads only what
 * changed.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lock/model.h"
#include "probe.h"
#include "util/pool.h"
#include "util/progress.h"
#include "util/text.h"
#include "util/userpath.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_MAX_CHECKPOINTS 100000

typedef struct {
	char *path;   /* absolute, resolved */
	uint64_t dev, ino;
	uint64_t size;
	struct timespec mtime;
	char hex[EL_SHA256_HEX];
	int rc, err_no;
} ckpt;

typedef struct {
	ckpt *v;
	size_t n, cap;
} ckpt_list;

typedef struct {
	el_hashcache *hashes;
	ckpt *files;
} hash_job;

/* Add the regular file at path (any form); false with a reason when it is not one. */
static bool add_file(ckpt_list *l, const char *path, const char **why)
{
	char *real = realpath(path, NULL);
	struct stat st;

	if (!real || stat(real, &st) != 0) {
		*why = errno == ENOENT ? "no such file or directory" : "cannot be read";
		free(real);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		free(real);
		return false;
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].dev == (uint64_t)st.st_dev && l->v[i].ino == (uint64_t)st.st_ino) {
			free(real); /* named twice: recorded once */
			return true;
		}
	if (l->n >= EL_MAX_CHECKPOINTS) {
		*why = "more than 100000 checkpoint files";
		free(real);
		return false;
	}
	EL_GROW(l->v, l->n + 1, l->cap);
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	l->v[l->n].path = real;
	l->v[l->n].dev = (uint64_t)st.st_dev;
	l->v[l->n].ino = (uint64_t)st.st_ino;
	l->v[l->n].size = (uint64_t)st.st_size;
	l->v[l->n].mtime = st.st_mtim;
	l->n++;
	return true;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One --checkpoint argument: a glob, a folder or a file. */
static void expand(el_probe *p, ckpt_list *l, const char *arg)
{
	const char *why = NULL;
	struct stat st;

	if (strpbrk(arg, "*?[")) {
		glob_t g;
		int rc = glob(arg, GLOB_ERR, NULL, &g);

		if (rc == GLOB_NOMATCH)
			el_probe_request_error(p, "'%s': matches no file", arg);
		else if (rc != 0)
			el_probe_request_error(p, "'%s': cannot be expanded", arg);
		for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++) {
			if (stat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode))
				continue; /* a glob names files; folders need their own --checkpoint */
			if (!add_file(l, g.gl_pathv[i], &why))
				el_probe_request_error(p, "'%s': %s", g.gl_pathv[i], why);
		}
		if (rc == 0)
			globfree(&g);
		return;
	}
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		el_root live = EL_ROOT_LIVE_INIT;
		char *real = realpath(arg, NULL), **names = NULL;
		size_t found = 0, count = 0;

		if (real && el_root_list(&live, real, &names, &count) == 0) {
			qsort(names, count, sizeof(*names), cmp_names);
			for (char **n = names; *n; n++) {
				char *full;

				if (!el_is_checkpoint_name(*n))
					continue;
				full = el_path_join(real, *n);
				if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && add_file(l, full, &why))
					found++;
				free(full);
			}
		}
		if (!found)
			el_probe_request_error(p, "'%s': no *.pth, *.pt, *.ckpt, *.safetensors or *.bin files in it", arg);
		el_strv_free(names);
		free(real);
		return;
	}
	if (!add_file(l, arg, &why))
		el_probe_request_error(p, "'%s': %s", arg, why);
}

static void hash_one(size_t i, void *data)
{
	hash_job *job = data;
	ckpt *c = &job->files[i];
	uint64_t size = 0;

	c->rc = el_hashcache_file(job->hashes, c->path, c->hex, &size, &c->err_no);
	if (c->rc == 0) {
		struct stat st;

		/* the digest is of the file as it is now: take its time from now too */
		c->size = size;
		if (stat(c->path, &st) == 0)
			c->mtime = st.st_mtim;
	}
}

static int by_size_desc(const void *a, const void *b)
{
	const ckpt *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return strcmp(x->path, y->path);
}

static int by_path(const void *a, const void *b)
{
	const ckpt *x = a, *y = b;
	return strcmp(x->path, y->path);
}

/* "2026-11-30T19:21:32.123456789Z" */
static void iso_time(const struct timespec *ts, char *buf, size_t n)
{
	struct tm tm;
	char secs[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(secs, sizeof(secs), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%09ldZ", secs, ts->tv_nsec);
}

void el_probe_checkpoints(el_probe *p)
{
	cJSON *sec = el_probe_section(p, EL_SEC_CHECKPOINTS), *files;
	ckpt_list l = { NULL, 0, 0 };
	uint64_t total = 0;

	for (size_t i = 0; i < p->opts->checkpoint_count; i++)
		expand(p, &l, p->opts->checkpoints[i]);
	if (l.n == 0) {
		el_jset_str(sec, "status", "absent");
		free(l.v);
		return;
	}
	for (size_t i = 0; i < l.n; i++)
		total += l.v[i].size;

	/* largest first, so the threads finish together */
	qsort(l.v, l.n, sizeof(*l.v), by_size_desc);
	{
		el_progress *bar = el_progress_start("hashing", total, p->opts->progress);
		hash_job job = { p->hashes, l.v };

		el_hashcache_set_progress(p->hashes, el_progress_add, bar);
		el_pool_run(l.n, el_pool_default_threads(), hash_one, &job);
		el_hashcache_set_progress(p->hashes, NULL, NULL);
		el_progress_finish(bar);
	}
	qsort(l.v, l.n, sizeof(*l.v), by_path);

	el_jset_str(sec, "status", "present");
	files = el_jset_arr(sec, "files");
	total = 0;
	for (size_t i = 0; i < l.n; i++) {
		ckpt *c = &l.v[i];
		cJSON *f = el_jpush_obj(files);
		char *shown = el_userpath_display(c->path), when[48];

		el_jset_str(f, "path", shown);
		el_jset_int(f, "size", (long long)c->size);
		iso_time(&c->mtime, when, sizeof(when));
		el_jset_str(f, "mtime", when);
		if (c->rc == 0) {
			el_jset_str(f, "sha256", c->hex);
		} else {
			const char *why = c->rc == ENVLOCK_ERROR ? "changed while being hashed; not recorded"
						 : el_root_reason(c->rc, c->err_no);

			el_jset_str(f, "error", why);
			el_probe_request_error(p, "'%s': %s", shown, why);
		}
		total += c->size;
		free(shown);
		free(c->path);
	}
	el_jset_int(sec, "count", (long long)l.n);
	el_jset_int(sec, "total_bytes", (long long)total);
	free(l.v);
}
