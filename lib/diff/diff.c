/* Two locks compared item by item, and the rule findings B has that A has not. */
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/xalloc.h"

static const char *const change_names[] = { "same", "added", "removed", "changed", "finding", "resolved" };

const char *envlock_diff_change_name(envlock_diff_change c)
{
	return c >= ENVLOCK_DIFF_SAME && c <= ENVLOCK_DIFF_RESOLVED ? change_names[c] : "changed";
}

static el_diff_row *push(envlock_diff *d, int section, envlock_diff_change change)
{
	el_diff_row *x;

	EL_GROW(d->v, d->n + 1, d->cap);
	x = &d->v[d->n++];
	memset(x, 0, sizeof(*x));
	x->section = section;
	x->e.section = el_diff_sections[section];
	x->e.change = change;
	return x;
}

/*
 * A view's conda packages by name: save writes them sorted, so the view's
 * own array is used as it is; a lock that is not sorted (edited, made by
 * another tool) gets a sorted index, built once per diff, so that a lookup
 * stays a binary search (a scan per changed package was quadratic).
 */
typedef struct {
	const el_conda_package *const *by_name; /* NULL: the view's array is sorted */
	const el_conda_package *packages;
	size_t n;
} conda_index;

static int conda_by_name(const void *x, const void *y)
{
	const el_conda_package *a = *(const el_conda_package *const *)x, *b = *(const el_conda_package *const *)y;

	int c = !a->name || !b->name ? !a->name - !b->name : strcmp(a->name, b->name);

	/* the same name twice: the first in the lock's order, as a scan would find it */
	return c ? c : (a > b) - (a < b);
}

static void conda_index_init(conda_index *ix, const el_view *v)
{
	const el_conda_package **by_name;
	size_t i;

	ix->by_name = NULL;
	ix->packages = v->conda.packages;
	ix->n = v->conda.npackages;
	for (i = 1; i < ix->n; i++)
		if (!ix->packages[i - 1].name || !ix->packages[i].name ||
		    strcmp(ix->packages[i - 1].name, ix->packages[i].name) > 0)
			break;
	if (i >= ix->n)
		return;
	by_name = el_xcalloc(ix->n, sizeof(*by_name));
	for (i = 0; i < ix->n; i++)
		by_name[i] = &ix->packages[i];
	qsort(by_name, ix->n, sizeof(*by_name), conda_by_name);
	ix->by_name = by_name;
}

static void conda_index_release(conda_index *ix)
{
	free((void *)ix->by_name);
}

/* The conda package of that name, or NULL (the first of that name, if a lock has two). */
static const el_conda_package *conda_package(const conda_index *ix, const char *name)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const el_conda_package *p = ix->by_name ? ix->by_name[mid] : &ix->packages[mid];
		int c = p->name ? strcmp(p->name, name) : -1;

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n) {
		const el_conda_package *p = ix->by_name ? ix->by_name[lo] : &ix->packages[lo];

		if (p->name && strcmp(p->name, name) == 0)
			return p;
	}
	return NULL;
}

/*
 * A conda package is the same package when its archive is: the same name,
 * version and build, and the same md5 (else sha256) on both sides. Where it
 * was fetched from is provenance, not content: a package restored from an
 * offline kit (`envlock restore --kit`, a file:// URL) or a mirror folder
 * is the one the lock names, though conda records the folder as its channel.
 */
static bool same_conda_archive(const conda_index *ia, const conda_index *ib, const char *name)
{
	const el_conda_package *a = conda_package(ia, name), *b = conda_package(ib, name);

	if (!a || !b || !a->version || !b->version || strcmp(a->version, b->version) != 0 ||
	    strcmp(a->build ? a->build : "", b->build ? b->build : "") != 0)
		return false;
	if (a->md5 && b->md5)
		return strcmp(a->md5, b->md5) == 0;
	return a->sha256 && b->sha256 && strcmp(a->sha256, b->sha256) == 0;
}

static void compare_items(envlock_diff *d, const el_view *va, const el_view *vb, int all)
{
	const el_diff_scene scene = {
		.gpu = va->gpu.ndevices > 0 || vb->gpu.ndevices > 0,
		.frameworks = (d->tab.mask & (1u << EL_SEC_FRAMEWORKS)) != 0,
	};
	el_strpool *pool = &d->tab.pool;
	conda_index ia, ib;
	bool indexed = false;

	for (size_t i = 0; i < d->tab.n; i++) {
		const el_item *it = &d->tab.items[i];
		uint32_t a = el_item_val(it, 0), b = el_item_val(it, 1);
		envlock_diff_change change = a == b ? ENVLOCK_DIFF_SAME
			: !a ? ENVLOCK_DIFF_ADDED : !b ? ENVLOCK_DIFF_REMOVED : ENVLOCK_DIFF_CHANGED;
		char *reason = NULL;
		el_diff_row *x;

		if (change == ENVLOCK_DIFF_CHANGED && it->section == EL_SEC_CONDA) {
			if (!indexed) {
				conda_index_init(&ia, va);
				conda_index_init(&ib, vb);
				indexed = true;
			}
			if (same_conda_archive(&ia, &ib, el_strpool_get(pool, it->key)))
				change = ENVLOCK_DIFF_SAME;
		}

		if (change == ENVLOCK_DIFF_SAME && !all)
			continue;
		x = push(d, (int)it->section, change);
		x->e.key = el_strpool_get(pool, it->key);
		x->e.a = el_strpool_get(pool, a);
		x->e.b = el_strpool_get(pool, b);
		if (change != ENVLOCK_DIFF_SAME) {
			x->e.severity = el_diff_classify(x->section, x->e.key, x->e.a, x->e.b, &scene, &reason);
			x->e.reason = el_strpool_str(pool, reason);
			free(reason);
		}
	}
	if (indexed) {
		conda_index_release(&ia);
		conda_index_release(&ib);
	}
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static int same_finding(const envlock_finding *x, const envlock_finding *y)
{
	return strcmp(or_empty(x->rule), or_empty(y->rule)) == 0 &&
	       strcmp(or_empty(x->subject), or_empty(y->subject)) == 0;
}

static int has_finding(const envlock_findings *f, const envlock_finding *x)
{
	for (size_t i = 0; i < envlock_findings_count(f); i++)
		if (same_finding(envlock_findings_get(f, i), x))
			return 1;
	return 0;
}

/* Findings of mine that other lacks, as entries of the given change. */
static void add_findings(envlock_diff *d, const envlock_findings *mine, const envlock_findings *other,
			 envlock_diff_change change)
{
	el_strpool *pool = &d->tab.pool;

	for (size_t i = 0; i < envlock_findings_count(mine); i++) {
		const envlock_finding *f = envlock_findings_get(mine, i);
		int section = el_diff_section_index(f->section);
		el_diff_row *x;

		if (section < 0)
			section = EL_SEC_SYSTEM;
		if (!(d->tab.mask & (1u << section)) || has_finding(other, f))
			continue;
		x = push(d, section, change);
		x->e.key = el_strpool_str(pool, or_empty(f->subject));
		x->e.severity = change == ENVLOCK_DIFF_FINDING && f->severity >= ENVLOCK_SEV_INFO &&
			f->severity <= ENVLOCK_SEV_BREAKING ? f->severity : ENVLOCK_SEV_INFO;
		x->e.reason = el_strpool_str(pool, or_empty(f->message));
		x->e.rule = el_strpool_str(pool, or_empty(f->rule));
		x->e.fix = el_strpool_str(pool, or_empty(f->fix));
		x->e.source = el_strpool_str(pool, or_empty(f->source));
	}
}

/* Run the rules on one lock, naming the file in an error. */
static int check_one(envlock_findings **out, envlock_ctx *ctx, const envlock_rules *rules,
		     const envlock_lock *lock, const char *name)
{
	int rc = envlock_check(out, ctx, rules, lock);

	if (rc != 0) {
		char *why = el_xstrdup(envlock_error_last(ctx));

		el_error_set(ctx, rc, "'%s': %s", name, why);
		free(why);
	}
	return rc;
}

static int compare_findings(envlock_diff *d, envlock_ctx *ctx, const envlock_rules *rules,
			    const envlock_lock *a, const envlock_lock *b)
{
	envlock_findings *fa = NULL, *fb = NULL;
	int rc;

	if ((rc = check_one(&fa, ctx, rules, a, d->a.name)) == 0 &&
	    (rc = check_one(&fb, ctx, rules, b, d->b.name)) == 0) {
		add_findings(d, fb, fa, ENVLOCK_DIFF_FINDING);
		add_findings(d, fa, fb, ENVLOCK_DIFF_RESOLVED);
	}
	envlock_findings_free(fa);
	envlock_findings_free(fb);
	return rc;
}

/* Rank for reading order: differences by severity, identical items last. */
static int rank(const el_diff_row *x)
{
	return x->e.change == ENVLOCK_DIFF_SAME ? -1 : (int)x->e.severity;
}

static int entry_cmp(const void *pa, const void *pb)
{
	const el_diff_row *x = pa, *y = pb;
	int c;

	if (x->section_rank != y->section_rank)
		return y->section_rank - x->section_rank;
	if (x->section != y->section)
		return x->section - y->section;
	if (rank(x) != rank(y))
		return rank(y) - rank(x);
	/* at one severity, what a rule says comes before plain changes */
	c = (y->e.rule != NULL) - (x->e.rule != NULL);
	return c ? c : strcmp(x->e.key, y->e.key);
}

static void sort_entries(envlock_diff *d)
{
	int worst[EL_SEC_COUNT];

	for (int s = 0; s < EL_SEC_COUNT; s++)
		worst[s] = -1;
	for (size_t i = 0; i < d->n; i++)
		if (rank(&d->v[i]) > worst[d->v[i].section])
			worst[d->v[i].section] = rank(&d->v[i]);
	for (size_t i = 0; i < d->n; i++)
		d->v[i].section_rank = worst[d->v[i].section];
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), entry_cmp);
}

static void make_verdict(envlock_diff *d)
{
	size_t total;

	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].e.change != ENVLOCK_DIFF_SAME)
			d->tally[d->v[i].e.severity]++;
	total = d->tally[0] + d->tally[1] + d->tally[2];
	if (!total) {
		d->verdict = el_xstrdup("identical");
		return;
	}
	d->verdict = el_xasprintf("%zu breaking, %zu risky, %zu info difference%s: %s",
				  d->tally[ENVLOCK_SEV_BREAKING], d->tally[ENVLOCK_SEV_RISKY],
				  d->tally[ENVLOCK_SEV_INFO], total == 1 ? "" : "s",
				  d->tally[ENVLOCK_SEV_BREAKING] ? "B cannot run what A runs"
				  : d->tally[ENVLOCK_SEV_RISKY] ? "core parts changed, B may not run what A runs"
				  : "no core part changed");
}

static void describe(envlock_diff *d, el_diff_side *s, const el_view *v, const char *name)
{
	el_strpool *pool = &d->tab.pool;

	s->name = el_strpool_str(pool, name);
	/* the id the file states: diff need not recompute it */
	s->id = el_strpool_str(pool, v->id);
	s->hostname = el_strpool_str(pool, v->hostname);
	s->created = el_strpool_str(pool, v->created);
}

/*
 * The sections a lock can speak for: all of them, or for a partial lock
 * (envlock import of a conda or pip list) only those it holds. Comparing
 * a full lock with a partial one must not list every other item of the
 * full lock as removed.
 */
static uint32_t held_sections(const el_view *v)
{
	bool frameworks = false;
	uint32_t m = 0;

	if (!v->partial_from)
		return (1u << EL_SEC_COUNT) - 1;
	/* a lock that has the frameworks section has every framework's key (the schema says so) */
	for (size_t i = 0; i < EL_FW_COUNT; i++)
		frameworks |= v->frameworks[i].st.recorded;
	{
		const bool held[EL_SEC_COUNT] = {
			[EL_SEC_SYSTEM] = v->system.recorded, [EL_SEC_GPU] = v->gpu.st.recorded,
			[EL_SEC_CUDA] = v->cuda.st.recorded, [EL_SEC_CUDNN] = v->cudnn.st.recorded,
			[EL_SEC_COMPILERS] = v->compilers.st.recorded, [EL_SEC_PYTHON] = v->python.st.recorded,
			[EL_SEC_CONDA] = v->conda.st.recorded, [EL_SEC_PIP] = v->pip.st.recorded,
			[EL_SEC_FRAMEWORKS] = frameworks, [EL_SEC_REPOS] = v->repos.st.recorded,
			[EL_SEC_CONFIGS] = v->configs.st.recorded, [EL_SEC_CHECKPOINTS] = v->checkpoints.st.recorded,
			[EL_SEC_ENV] = v->env.st.recorded,
		};

		for (int i = 0; i < EL_SEC_COUNT; i++)
			if (held[i])
				m |= 1u << i;
	}
	return m;
}

int envlock_diff_locks(envlock_diff **out, envlock_ctx *ctx,
		       const envlock_lock *a, const char *name_a,
		       const envlock_lock *b, const char *name_b,
		       const envlock_diff_opts *opts)
{
	const el_view *va, *vb;
	envlock_diff *d;
	uint32_t mask;
	int rc;

	*out = NULL;
	if ((rc = el_diff_section_mask(&mask, ctx, opts)) != 0)
		return rc;
	va = el_lock_view(a);
	vb = el_lock_view(b);
	mask &= held_sections(va) & held_sections(vb);
	d = el_xcalloc(1, sizeof(*d));
	el_itab_init(&d->tab, mask);
	describe(d, &d->a, va, name_a ? name_a : "A");
	describe(d, &d->b, vb, name_b ? name_b : "B");
	el_itab_add_view(&d->tab, va, 0);
	el_itab_add_view(&d->tab, vb, 1);
	compare_items(d, va, vb, opts && opts->all);
	if (opts && opts->rules && (rc = compare_findings(d, ctx, opts->rules, a, b)) != 0) {
		envlock_diff_free(d);
		return rc;
	}
	sort_entries(d);
	make_verdict(d);
	*out = d;
	return 0;
}

size_t envlock_diff_count(const envlock_diff *d)
{
	return d ? d->n : 0;
}

const envlock_diff_entry *envlock_diff_get(const envlock_diff *d, size_t i)
{
	return d && i < d->n ? &d->v[i].e : NULL;
}

size_t envlock_diff_tally(const envlock_diff *d, envlock_severity s)
{
	return d && s >= ENVLOCK_SEV_INFO && s <= ENVLOCK_SEV_BREAKING ? d->tally[s] : 0;
}

int envlock_diff_identical(const envlock_diff *d)
{
	return d && d->tally[0] + d->tally[1] + d->tally[2] == 0;
}

const char *envlock_diff_verdict(const envlock_diff *d)
{
	return d ? d->verdict : "";
}

void envlock_diff_free(envlock_diff *d)
{
	if (!d)
		return;
	el_itab_release(&d->tab);
	free(d->v);
	free(d->verdict);
	free(d);
}
