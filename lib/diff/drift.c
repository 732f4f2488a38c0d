/*
 * Drift across a fleet: every lock's items go into one table keyed by
 * (section, key), each item holding one interned value id per file, so a
 * fleet of n files costs one pass over each file and one over each item;
 * no two files are ever compared with each other.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/xalloc.h"

int envlock_drift_new(envlock_drift **out, envlock_ctx *ctx, const envlock_diff_opts *opts)
{
	envlock_drift *d;
	uint32_t mask;
	int rc;

	*out = NULL;
	if ((rc = el_diff_section_mask(&mask, ctx, opts)) != 0)
		return rc;
	d = el_xcalloc(1, sizeof(*d));
	pthread_mutex_init(&d->mu, NULL);
	el_itab_init(&d->tab, mask);
	d->rules = opts ? opts->rules : NULL;
	d->all = opts && opts->all;
	*out = d;
	return 0;
}

/* Each finding is an item of its section: present in the files it was found on (the drift's mutex held). */
static void add_findings(envlock_drift *d, const envlock_findings *f)
{
	el_buf key = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a finding's rule and subject");
	el_buf val = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a severity and a finding's message");

	for (size_t i = 0; i < envlock_findings_count(f); i++) {
		const envlock_finding *x = envlock_findings_get(f, i);
		int section = el_diff_section_index(x->section);
		el_item *it;

		el_buf_reset(&key);
		el_buf_reset(&val);
		el_buf_addf(&key, "%s: %s", x->rule ? x->rule : "", x->subject ? x->subject : "");
		el_buf_addf(&val, "%s: %s", envlock_severity_name(x->severity), x->message ? x->message : "");
		it = el_itab_set(&d->tab, section < 0 ? EL_SEC_SYSTEM : section,
				 el_buf_cstr(&key), el_buf_cstr(&val));
		if (it && x->severity >= ENVLOCK_SEV_INFO && x->severity <= ENVLOCK_SEV_BREAKING)
			it->finding = (uint32_t)x->severity + 1;
	}
	el_buf_release(&key);
	el_buf_release(&val);
}

int envlock_drift_expect(envlock_drift *d, envlock_ctx *ctx, const char *const *files, size_t n)
{
	if (d->finished)
		return el_error_set(ctx, ENVLOCK_EINVAL, "drift table already finished");
	if (n > UINT32_MAX - 1 - d->files.n)
		return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': too many files", n ? files[0] : "");
	EL_GROW(d->added, d->files.n + n, d->added_cap);
	memset(d->added + d->files.n, 0, n);
	for (size_t i = 0; i < n; i++)
		el_strvec_push(&d->files, files[i]);
	return 0;
}

/*
 * The work of a file, flattening its lock and running the rules, is done
 * on the calling thread; only the table's lookups hold the mutex.
 */
int envlock_drift_put(envlock_drift *d, envlock_ctx *ctx, const envlock_lock *lock, size_t i)
{
	envlock_findings *f = NULL;
	el_flat fl;
	int rc = 0;

	pthread_mutex_lock(&d->mu);
	if (d->finished)
		rc = el_error_set(ctx, ENVLOCK_EINVAL, "drift table already finished");
	else if (i >= d->files.n || d->added[i])
		rc = el_error_set(ctx, ENVLOCK_EINVAL, "drift table: file %zu %s", i,
				  i >= d->files.n ? "was not expected" : "was already added");
	else
		d->added[i] = 1;
	pthread_mutex_unlock(&d->mu);
	if (rc)
		return rc;
	if (d->rules && (rc = envlock_check(&f, ctx, d->rules, lock)) != 0) {
		char *why = el_xstrdup(envlock_error_last(ctx));

		el_error_set(ctx, rc, "'%s': %s", d->files.v[i], why);
		free(why);
		return rc;
	}
	el_flat_init(&fl, d->tab.mask);
	el_flat_view(&fl, el_lock_view(lock));
	pthread_mutex_lock(&d->mu);
	el_itab_add_flat(&d->tab, &fl, (uint32_t)i);
	if (f)
		add_findings(d, f);
	d->nadded++;
	pthread_mutex_unlock(&d->mu);
	el_flat_release(&fl);
	envlock_findings_free(f);
	return 0;
}

int envlock_drift_add(envlock_drift *d, envlock_ctx *ctx, const envlock_lock *lock, const char *name)
{
	int rc = envlock_drift_expect(d, ctx, &name, 1);

	return rc ? rc : envlock_drift_put(d, ctx, lock, d->files.n - 1);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* Base names, unless two files share one: then the names as given. */
static void name_files(envlock_drift *d)
{
	el_strpool seen;
	int unique;

	el_strpool_init(&seen);
	for (size_t i = 0; i < d->files.n; i++)
		el_strpool_intern(&seen, base_name(d->files.v[i]));
	unique = seen.n - 1 == d->files.n;
	el_strpool_release(&seen);
	for (size_t i = 0; i < d->files.n; i++)
		el_strvec_push(&d->names, unique ? base_name(d->files.v[i]) : d->files.v[i]);
}

typedef struct {
	uint32_t val;
	size_t count;
} vcount;

/*
 * The majority value of an item: the most files; on a tie, the value of
 * the earliest file. Distinct values are few (two or three) in practice,
 * so a list beats a hash here.
 */
static uint32_t majority(const el_item *it, size_t nfiles, vcount **buf, size_t *bufcap, size_t *count)
{
	size_t nv = 0, best = 0;

	for (size_t f = 0; f < nfiles; f++) {
		uint32_t v = el_item_val(it, (uint32_t)f);
		size_t j = 0;

		while (j < nv && (*buf)[j].val != v)
			j++;
		if (j == nv) {
			EL_GROW(*buf, nv + 1, *bufcap);
			(*buf)[nv].val = v;
			(*buf)[nv++].count = 0;
		}
		(*buf)[j].count++;
	}
	for (size_t j = 1; j < nv; j++)
		if ((*buf)[j].count > (*buf)[best].count)
			best = j;
	*count = (*buf)[best].count;
	return (*buf)[best].val;
}

/* True when every file has the same value (the common case, checked first). */
static int uniform(const el_item *it, size_t nfiles)
{
	uint32_t v0 = el_item_val(it, 0);

	for (size_t f = 1; f < nfiles; f++)
		if (el_item_val(it, (uint32_t)f) != v0)
			return 0;
	return 1;
}

static int row_cmp(const void *pa, const void *pb)
{
	const el_drift_row *x = pa, *y = pb;

	if (x->section != y->section)
		return x->section - y->section;
	return strcmp(x->pub.key, y->pub.key);
}

static envlock_severity odd_severity(const el_item *it, const el_drift_row *r, const char *value)
{
	char *reason = NULL;
	envlock_severity s;

	if (it->finding)
		return value ? (envlock_severity)(it->finding - 1) : ENVLOCK_SEV_INFO;
	s = el_diff_classify(r->section, r->pub.key, r->pub.majority, value, NULL, &reason);
	free(reason);
	return s;
}

static void add_row(envlock_drift *d, const el_item *it, uint32_t maj, size_t maj_count,
		    unsigned char *odd_file, size_t *cap, size_t *oddcap)
{
	el_strpool *pool = &d->tab.pool;
	el_drift_row *r;

	EL_GROW(d->v, d->n + 1, *cap);
	r = &d->v[d->n++];
	memset(r, 0, sizeof(*r));
	r->section = (int)it->section;
	r->pub.section = el_diff_sections[it->section];
	r->pub.key = el_strpool_get(pool, it->key);
	r->pub.majority = el_strpool_get(pool, maj);
	r->pub.majority_count = maj_count;
	r->pub.severity = ENVLOCK_SEV_INFO;
	r->odd_start = d->nodd;
	for (size_t f = 0; f < d->files.n; f++) {
		uint32_t v = el_item_val(it, (uint32_t)f);
		envlock_drift_odd *o;
		envlock_severity s;

		if (v == maj)
			continue;
		EL_GROW(d->odd, d->nodd + 1, *oddcap);
		o = &d->odd[d->nodd++];
		o->file = d->files.v[f];
		o->name = d->names.v[f];
		o->value = el_strpool_get(pool, v);
		odd_file[f] = 1;
		s = odd_severity(it, r, o->value);
		if (s > r->pub.severity)
			r->pub.severity = s;
		r->pub.odd_count++;
	}
	if (r->pub.odd_count)
		d->drifting++;
}

int envlock_drift_finish(envlock_drift *d, envlock_ctx *ctx)
{
	vcount *buf = NULL;
	size_t bufcap = 0, cap = 0, oddcap = 0;
	unsigned char *odd_file;

	if (d->finished)
		return el_error_set(ctx, ENVLOCK_EINVAL, "drift table already finished");
	if (d->nadded != d->files.n)
		return el_error_set(ctx, ENVLOCK_EINVAL, "drift table: %zu of its %zu files were added",
				    d->nadded, d->files.n);
	d->finished = 1;
	name_files(d);
	odd_file = el_xcalloc(d->files.n ? d->files.n : 1, 1);
	for (size_t i = 0; i < d->tab.n; i++) {
		const el_item *it = &d->tab.items[i];
		size_t count = d->files.n;
		uint32_t maj;

		if (uniform(it, d->files.n)) {
			if (d->all)
				add_row(d, it, el_item_val(it, 0), count, odd_file, &cap, &oddcap);
			continue;
		}
		maj = majority(it, d->files.n, &buf, &bufcap, &count);
		add_row(d, it, maj, count, odd_file, &cap, &oddcap);
	}
	/* the odd array has stopped moving: point the rows into it */
	for (size_t i = 0; i < d->n; i++)
		d->v[i].pub.odd = d->v[i].pub.odd_count ? &d->odd[d->v[i].odd_start] : NULL;
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), row_cmp);
	for (size_t f = 0; f < d->files.n; f++)
		d->odd_files += odd_file[f];
	free(odd_file);
	free(buf);
	if (d->drifting)
		d->verdict = el_xasprintf("%zu of %zu items drift across %zu of %zu files",
					  d->drifting, d->tab.n, d->odd_files, d->files.n);
	else
		d->verdict = el_xasprintf("identical: %zu items the same in all %zu files",
					  d->tab.n, d->files.n);
	return 0;
}

size_t envlock_drift_count(const envlock_drift *d)
{
	return d ? d->n : 0;
}

const envlock_drift_item *envlock_drift_get(const envlock_drift *d, size_t i)
{
	return d && i < d->n ? &d->v[i].pub : NULL;
}

size_t envlock_drift_drifting(const envlock_drift *d)
{
	return d ? d->drifting : 0;
}

size_t envlock_drift_items(const envlock_drift *d)
{
	return d ? d->tab.n : 0;
}

size_t envlock_drift_files(const envlock_drift *d)
{
	return d ? d->files.n : 0;
}

size_t envlock_drift_odd_files(const envlock_drift *d)
{
	return d ? d->odd_files : 0;
}

const char *envlock_drift_verdict(const envlock_drift *d)
{
	return d && d->verdict ? d->verdict : "";
}

void envlock_drift_free(envlock_drift *d)
{
	if (!d)
		return;
	el_strvec_release(&d->files);
	el_strvec_release(&d->names);
	free(d->added);
	pthread_mutex_destroy(&d->mu);
	el_itab_release(&d->tab);
	free(d->v);
	free(d->odd);
	free(d->verdict);
	free(d);
}
