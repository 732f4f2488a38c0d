/*
 * A kit's conda archives: each of the lock's conda packages from the
 * package caches (<root_prefix>/pkgs, $CONDA_PKGS_DIRS, --conda-pkgs),
 * by the file name of its url, used only when its sha256 is the lock's (a
 * cache can hold a truncated download or a rebuilt package). md5 costs
 * twice what sha256 does here (the SHA extensions), and the same bytes
 * have the same md5: it is read, and checked, only where the lock records
 * no sha256; otherwise the kit carries the lock's.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/pool.h"
#include "util/progress.h"
#include "util/root.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* The caches, in the order conda itself searches them: the install's, then the variable's, then ours. */
static void cache_dirs(pk_pack *p, el_strvec *dirs)
{
	const char *env = getenv("CONDA_PKGS_DIRS");

	if (p->v->conda.root_prefix) {
		char *d = el_path_join(p->v->conda.root_prefix, "pkgs");

		el_strvec_push_owned(dirs, d);
	}
	/* conda splits CONDA_PKGS_DIRS at commas */
	while (env && *env) {
		const char *end = strchr(env, ',');
		size_t n = end ? (size_t)(end - env) : strlen(env);

		if (n) {
			char *e = el_xstrndup(env, n), *d = pk_abs(e);

			free(e);
			if (!el_strvec_has(dirs, d))
				el_strvec_push_owned(dirs, d);
			else
				free(d);
		}
		env = end ? end + 1 : NULL;
	}
	for (size_t i = 0; i < p->opts->conda_pkgs_count; i++) {
		char *d = pk_abs(p->opts->conda_pkgs[i]);

		if (!el_strvec_has(dirs, d))
			el_strvec_push_owned(dirs, d);
		else
			free(d);
	}
}

/* A conda file name from the lock that can be a file in conda/: a package archive's, nothing else. */
static bool safe_fn(const char *fn)
{
	if (!*fn || strcmp(fn, ".") == 0 || strcmp(fn, "..") == 0 || fn[0] == '.')
		return false;
	for (const char *c = fn; *c; c++)
		if ((unsigned char)*c < 0x21 || *c == '/' || *c == '\\' || (unsigned char)*c >= 0x7f)
			return false;
	return el_ends_with(fn, ".conda") || el_ends_with(fn, ".tar.bz2");
}

static char *fetch_command(const el_conda_package *pkg, const char *fn)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a command of fixed words round the lock's url, name and digests, quoted");

	/* a url whose file name is no package's (a hostile lock's "..") gets no curl -o of it */
	if (pkg->url && safe_fn(fn)) {
		el_buf_adds(&b, "curl -fLo ");
		pk_shell_word(&b, fn);
		el_buf_addc(&b, ' ');
		pk_shell_word(&b, pkg->url);
		if (pkg->md5) {
			el_buf_addf(&b, " && echo '%s  '", pkg->md5);
			pk_shell_word(&b, fn);
			el_buf_adds(&b, " | md5sum -c -");
		} else if (pkg->sha256) {
			el_buf_addf(&b, " && echo '%s  '", pkg->sha256);
			pk_shell_word(&b, fn);
			el_buf_adds(&b, " | sha256sum -c -");
		}
	} else {
		char *spec = el_xasprintf("%s%s%s=%s=%s", pkg->channel ? pkg->channel : "",
					  pkg->channel ? "::" : "", pkg->name, pkg->version ? pkg->version : "*",
					  pkg->build ? pkg->build : "*");

		el_buf_adds(&b, "conda create --download-only --no-deps --yes -n envlock-kit-fetch ");
		pk_shell_word(&b, spec);
		free(spec);
	}
	return el_buf_detach(&b);
}

/* Does what was read match what the lock records? NULL, or why not (static text with the digests). */
static const char *mismatch(const el_conda_package *pkg, const pk_digest *d, char *why, size_t n)
{
	if (pkg->md5 && d->md5[0] && strcasecmp(pkg->md5, d->md5) != 0) {
		snprintf(why, n, "md5 %s is not the lock's %s", d->md5, pkg->md5);
		return why;
	}
	if (pkg->sha256 && strcasecmp(pkg->sha256, d->sha256) != 0) {
		snprintf(why, n, "sha256 %s is not the lock's %s", d->sha256, pkg->sha256);
		return why;
	}
	return NULL;
}

/* One package: found, copied and checked on a pool thread; reported in the lock's order after. */
typedef struct {
	const el_conda_package *pkg;
	const char *fn;   /* borrowed from the url */
	char *fetch;
	const char *early; /* missing before any cache is looked at: why (static text) */
	long long hint;    /* the size of the first candidate: the largest go first */
	/* the outcome */
	char *src;         /* the cache file copied, or NULL */
	char *reason;      /* why not, when src is NULL */
	el_strvec warnings;
	pk_digest d;
	el_bundle_item it; /* staged (a .tar.zst kit): the bundle writer reads and checks it */
} conda_job;

typedef struct {
	pk_pack *p;
	conda_job *jobs;
	size_t *order;
	const el_strvec *dirs;
} conda_batch;

static void copy_job(size_t k, void *data)
{
	conda_batch *b = data;
	conda_job *j = &b->jobs[b->order[k]];
	char *rel, *dst;
	envlock_ctx *ctx = NULL;

	if (j->early)
		return;
	if (envlock_ctx_new(&ctx) != 0)
		el_oom();
	rel = el_xasprintf("conda/%s", j->fn);
	dst = el_path_join(b->p->kit, rel);
	for (size_t i = 0; i < b->dirs->n && !j->src; i++) {
		char *src = el_path_join(b->dirs->v[i], j->fn);
		struct stat st;
		char why[256];
		const char *bad;

		if (stat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(src);
			continue;
		}
		/* staged, the cache file is read once, by the bundle writer, which checks it against the lock */
		if (b->p->staging ? pk_stage(ctx, src, 0, -1, !j->pkg->sha256, &j->it, &j->d) != 0
				  : pk_copy(ctx, src, 0, -1, dst, b->p->link, !j->pkg->sha256, &j->d, b->p->progress) != 0) {
			el_strvec_push(&j->warnings, envlock_error_last(ctx));
			free(j->reason);
			j->reason = el_xasprintf("'%s': %s", src, envlock_error_last(ctx));
			free(src);
			continue;
		}
		if (!b->p->staging && (bad = mismatch(j->pkg, &j->d, why, sizeof(why)))) {
			unlink(dst);
			el_strvec_push_owned(&j->warnings, el_xasprintf("'%s': %s: a corrupt cache, not used", src, bad));
			free(j->reason);
			j->reason = el_xasprintf("'%s' in the cache does not match the lock: %s", src, bad);
			free(src);
			continue;
		}
		j->src = src;
	}
	if (!j->src && !j->reason)
		j->reason = el_xasprintf("%s is in none of the package caches (%zu searched)", j->fn, b->dirs->n);
	free(rel);
	free(dst);
	envlock_ctx_free(ctx);
}

static void report_job(pk_pack *p, conda_job *j)
{
	const el_conda_package *pkg = j->pkg;
	cJSON *o;

	for (size_t i = 0; i < j->warnings.n; i++)
		pk_warn(p, "%s", j->warnings.v[i]);
	if (!j->src) {
		pk_missing(p, "conda", pkg->name, pkg->version, j->early ? j->early : j->reason, j->fetch);
		return;
	}
	o = cJSON_CreateObject();
	if (!o)
		el_oom();
	el_jset_str(o, "kind", "conda");
	el_jset_str(o, "name", pkg->name);
	el_jset_str(o, "version", pkg->version);
	el_jset_str(o, "build", pkg->build);
	{
		char *rel = el_xasprintf("conda/%s", j->fn);

		el_jset_str(o, "path", rel);
		el_jset_int(o, "size", j->d.size);
		el_jset_str(o, "sha256", j->d.sha256);
		/* the lock's md5 where its sha256 matched: the same bytes (md5 is read only where a lock has no sha256) */
		if (j->d.md5[0] || pkg->md5)
			el_jset_str(o, "md5", j->d.md5[0] ? j->d.md5 : pkg->md5);
		el_jset_str(o, "from", j->src);
		pk_entries_add(&p->items, o, "conda", rel, pkg->name, pkg->version);
		if (p->staging)
			pk_stage_add(p, &j->it, o, rel, pkg->sha256, pkg->md5);
		pk_say(p, "conda    %s  (%s)", rel, j->src);
		free(rel);
	}
}

static int hint_cmp(const void *a, const void *b, void *jobs)
{
	const conda_job *v = jobs;
	long long x = v[*(const size_t *)a].hint, y = v[*(const size_t *)b].hint;

	return x < y ? 1 : x > y ? -1 : 0;
}

void pk_conda(pk_pack *p)
{
	el_strvec dirs = EL_STRVEC_INIT;
	el_strvec seen = EL_STRVEC_INIT;
	conda_job *jobs;
	size_t *order, n = 0;
	conda_batch batch;

	if (!p->v->conda.st.present || p->v->conda.npackages == 0)
		return;
	cache_dirs(p, &dirs);
	jobs = el_xcalloc(p->v->conda.npackages, sizeof(*jobs));
	order = el_xcalloc(p->v->conda.npackages, sizeof(*order));
	for (size_t i = 0; i < p->v->conda.npackages; i++) {
		const el_conda_package *pkg = &p->v->conda.packages[i];
		conda_job *j = &jobs[n];

		if (!pkg->name)
			continue;
		/* one archive per file name: a lock lists each package once, a hand-made one may not */
		if (pkg->url && el_strvec_has(&seen, pkg->url))
			continue;
		if (pkg->url)
			el_strvec_push(&seen, pkg->url);
		j->pkg = pkg;
		j->fn = pkg->url ? el_path_base(pkg->url) : "";
		j->fetch = fetch_command(pkg, j->fn);
		if (!pkg->url)
			j->early = "the lock records no url for it";
		else if (!safe_fn(j->fn))
			j->early = "its url does not end in a package file name";
		else if (!pkg->md5 && !pkg->sha256)
			j->early = "the lock records no md5 or sha256 to check an archive against";
		for (size_t d = 0; !j->early && d < dirs.n; d++) {
			char *src = el_path_join(dirs.v[d], j->fn);
			struct stat st;

			if (stat(src, &st) == 0 && S_ISREG(st.st_mode)) {
				j->hint = (long long)st.st_size;
				free(src);
				break;
			}
			free(src);
		}
		order[n] = n;
		n++;
	}
	qsort_r(order, n, sizeof(*order), hint_cmp, jobs);
	batch.p = p;
	batch.jobs = jobs;
	batch.order = order;
	batch.dirs = &dirs;
	{
		uint64_t total = 0;

		for (size_t i = 0; i < n; i++)
			total += (uint64_t)jobs[i].hint;
		/* staged, nothing is read here: the bundle writer's bar shows the bytes */
		p->progress = el_progress_start("conda archives", total, p->opts->progress && !p->staging);
		el_pool_run(n, el_pool_default_threads(), copy_job, &batch);
		el_progress_finish(p->progress);
		p->progress = NULL;
	}
	for (size_t i = 0; i < n; i++) {
		report_job(p, &jobs[i]);
		free(jobs[i].fetch);
		free(jobs[i].src);
		free(jobs[i].reason);
		el_strvec_release(&jobs[i].warnings);
	}
	free(order);
	free(jobs);
	el_strvec_release(&seen);
	el_strvec_release(&dirs);
}
