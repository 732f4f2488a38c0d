/*
 * The search: every torch wheel variant of the knowledge, newest first;
 * for each that the machine runs, every mmcv release with a prebuilt
 * wheel for it (or that the machine's nvcc can build), newest first; for
 * each, the newest release of every codebase asked for whose own guard
 * accepts that mmcv, with mmengine's ranges meeting. The best choice of
 * each torch release is kept; the releases are then ranked.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "solve.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/version.h"
#include "util/xalloc.h"

/* How far a candidate got before it failed: a deeper failure is closer to fitting. */
enum { D_SPEC = 1, D_MODE, D_PYTHON, D_GPU, D_DRIVER, D_CODE, D_GLIBC, D_MMCV, D_GUARD, D_ENGINE };

void sv_fail_set(sv_fail *f, const char *constraint, int depth, const char *source, const char *fmt, ...)
{
	va_list ap;
	char *why;

	if (!f)
		return;
	va_start(ap, fmt);
	why = el_xvasprintf(fmt, ap);
	va_end(ap);
	free(f->why);
	f->constraint = constraint;
	f->depth = depth;
	f->why = why;
	f->source = source;
}

void sv_fail_release(sv_fail *f)
{
	free(f->why);
	memset(f, 0, sizeof(*f));
}

void sv_pythons_build(sv_problem *p)
{
	size_t n, cap = 0;
	const el_kb_torch_python *rows = el_kb_torch_pythons(p->kb, &n);

	for (size_t i = 0; i < n; i++) {
		long major = el_version_major(rows[i].python_min);
		const char *lo = strchr(rows[i].python_min, '.'), *hi = strchr(rows[i].python_max, '.');

		if (!lo || !hi || major != el_version_major(rows[i].python_max))
			continue;
		for (long minor = atol(lo + 1); minor <= atol(hi + 1) && minor < 100; minor++) {
			char *v = el_xasprintf("%ld.%ld", major, minor);
			size_t k = 0;

			while (k < p->npythons && envlock_version_cmp(p->pythons[k], v) < 0)
				k++;
			if (k < p->npythons && strcmp(p->pythons[k], v) == 0) {
				free(v);
				continue;
			}
			if (p->npythons + 1 >= cap)
				p->pythons = el_grow_array(p->pythons, &cap, p->npythons + 2, sizeof(*p->pythons));
			memmove(&p->pythons[k + 1], &p->pythons[k], (p->npythons - k) * sizeof(*p->pythons));
			p->pythons[k] = v;
			p->npythons++;
		}
	}
}

/* The requests of a kind allow v (every one of them). */
static const sv_request *refused_by(const sv_problem *p, sv_kind kind, const char *v)
{
	for (size_t i = 0; i < p->nreq; i++)
		if (p->req[i].kind == kind && !sv_request_allows(&p->req[i], v))
			return &p->req[i];
	return NULL;
}

/* Is Python release py in the row's range? */
static bool python_in(const el_kb_torch_python *row, const char *py)
{
	return envlock_version_cmp(py, row->python_min) >= 0 && envlock_version_cmp(py, row->python_max) <= 0;
}

/* The Python for torch wheel w: the one asked for; else the machine's when torch has wheels for it; else the newest. */
static const char *choose_python(const sv_problem *p, const el_kb_torch_wheel *w, sv_fail *f)
{
	const el_kb_torch_python *row = el_kb_torch_python_of(p->kb, w->torch);
	char *mine;

	if (!row) {
		sv_fail_set(f, "python", D_PYTHON, NULL, "envlock has no record of the Python releases torch %s has wheels for", w->torch);
		return NULL;
	}
	if (p->opts->python) {
		if (!python_in(row, p->opts->python)) {
			sv_fail_set(f, "python", D_PYTHON, row->source, "torch %s has wheels for Python %s to %s; the plan is for Python %s (%s)",
				    w->torch, row->python_min, row->python_max, p->opts->python, sv_opt(p, "python"));
			return NULL;
		}
		return p->opts->python;
	}
	mine = p->m.python ? el_version_prefix(p->m.python, 2) : NULL;
	for (size_t i = p->npythons; i-- > 0;) {
		const char *py = p->pythons[i];

		if (mine && strcmp(py, mine) == 0 && python_in(row, py) && !refused_by(p, SV_PYTHON, py)) {
			free(mine);
			return py;
		}
	}
	free(mine);
	for (size_t i = p->npythons; i-- > 0;)
		if (python_in(row, p->pythons[i]) && !refused_by(p, SV_PYTHON, p->pythons[i]))
			return p->pythons[i];
	sv_fail_set(f, "python", D_PYTHON, row->source, "torch %s has wheels for Python %s to %s, none of which the plan allows",
		    w->torch, row->python_min, row->python_max);
	return NULL;
}

/* "torch==1.10.0+cu102", or the release with its variant for a PyPI build ("1.7.1+cu102"): what a spec with a local part meets. */
static char *torch_full(const el_kb_torch_wheel *w)
{
	const char *v = sv_pin_version(w->torch_pin);

	return strchr(v, '+') ? el_xstrdup(v) : el_xasprintf("%s+%s", v, w->variant);
}

/* Does the machine's driver run the GPUs at all (its branch against each architecture's first and last)? */
static bool driver_runs_gpus(const sv_problem *p, sv_fail *f)
{
	long branch = p->m.driver_branch > 0 ? p->m.driver_branch : el_version_major(p->m.driver);

	for (size_t i = 0; i < p->m.ngpus; i++) {
		const el_kb_gpu_arch *a = p->m.gpus[i].arch;

		if (!a)
			continue;
		if (branch < a->first_branch) {
			sv_fail_set(f, "driver", D_GPU, a->source, "%s (%s, compute capability %s) needs an NVIDIA driver of the R%ld branch or later; this machine has %s",
				    p->m.gpus[i].name, a->name, p->m.gpus[i].cc, a->first_branch, p->m.driver);
			return false;
		}
		if (a->last_branch > 0 && branch > a->last_branch) {
			sv_fail_set(f, "driver", D_GPU, a->source, "%s (%s) is supported up to the R%ld driver branch; driver %s is newer and does not run it",
				    p->m.gpus[i].name, a->name, a->last_branch, p->m.driver);
			return false;
		}
	}
	return true;
}

/* The GPU code of w runs on every GPU whose compute capability is known. */
static bool code_runs(const sv_problem *p, const el_kb_torch_wheel *w, sv_fail *f)
{
	const el_kb_torch_arch *a = el_kb_torch_arch_of(p->kb, w->torch, w->cuda);
	bool ptx;

	for (size_t i = 0; i < p->m.ngpus; i++) {
		const sv_gpu *g = &p->m.gpus[i];
		el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the knowledge's GPU code list of one wheel");

		if (!g->cc)
			continue;
		if (!a) {
			sv_fail_set(f, "gpu-code", D_CODE, NULL, "envlock has no record of the GPU code in torch %s %s wheels, so it cannot tell whether they run on %s",
				    w->torch, w->variant, g->name);
			return false;
		}
		if (el_kb_code_runs_on(&a->sm, &a->ptx, g->cc, &ptx))
			continue;
		for (size_t k = 0; k < a->sm.n; k++)
			el_buf_addf(&b, "%s%s", k ? ", " : "", a->sm.v[k]);
		sv_fail_set(f, "gpu-code", D_CODE, a->source, "torch %s %s carries GPU code for compute capability %s only, none of which runs on %s (%s): "
			    "\"CUDA capability sm_%c%s is not compatible with the current PyTorch installation\"",
			    w->torch, w->variant, el_buf_cstr(&b), g->name, g->cc, g->cc[0],
			    strchr(g->cc, '.') ? strchr(g->cc, '.') + 1 : "");
		el_buf_release(&b);
		return false;
	}
	return true;
}

bool sv_torch_fits(const sv_problem *p, const el_kb_torch_wheel *w, const char **python, int *fit, sv_fail *f)
{
	char *full = torch_full(w);
	const sv_request *r = refused_by(p, SV_TORCH, full);
	const el_kb_torch_glibc *g;

	free(full);
	*fit = 0;
	if (r || (r = refused_by(p, SV_TORCHVISION, sv_pin_version(w->vision_pin))) != NULL) {
		sv_fail_set(f, "spec", D_SPEC, NULL, "%s does not meet %s", r->kind == SV_TORCH ? w->torch_pin : w->vision_pin, r->origin);
		return false;
	}
	if (p->gpu != (w->cuda != NULL)) {
		sv_fail_set(f, "mode", D_MODE, NULL, "torch %s %s is a %s build", w->torch, w->variant, w->cuda ? "CUDA" : "CPU");
		return false;
	}
	if (!(*python = choose_python(p, w, f)))
		return false;
	if (p->gpu) {
		const el_kb_cuda_driver *d = el_kb_cuda_driver_of(p->kb, w->cuda);

		if (!p->m.driver && p->m.driver_branch <= 0) {
			sv_fail_set(f, "driver", D_GPU, NULL, "the machine has no NVIDIA driver");
			return false;
		}
		if (!driver_runs_gpus(p, f))
			return false;
		if (!d) {
			sv_fail_set(f, "driver", D_DRIVER, NULL, "envlock has no record of the driver CUDA %s needs", w->cuda);
			return false;
		}
		if (sv_driver_meets(&p->m, d->min_driver))
			*fit = 2;
		else if (d->minor_compat_driver && sv_driver_meets(&p->m, d->minor_compat_driver))
			*fit = 1;
		else {
			if (d->minor_compat_driver)
				sv_fail_set(f, "driver", D_DRIVER, d->source, "torch %s %s is built for CUDA %s, which needs NVIDIA driver %s (or %s through minor-version compatibility); this machine has %s",
					    w->torch, w->variant, w->cuda, d->min_driver, d->minor_compat_driver, p->m.driver);
			else
				sv_fail_set(f, "driver", D_DRIVER, d->source, "torch %s %s is built for CUDA %s, which needs NVIDIA driver %s or newer; this machine has %s",
					    w->torch, w->variant, w->cuda, d->min_driver, p->m.driver);
			return false;
		}
		if (!code_runs(p, w, f))
			return false;
	}
	g = el_kb_torch_glibc_of(p->kb, w->torch, w->variant);
	if (g && p->m.glibc && !p->m.any_glibc && envlock_version_cmp(p->m.glibc, g->glibc) < 0) {
		sv_fail_set(f, "glibc", D_GLIBC, g->source, "torch %s %s wheels need glibc %s (%s); this machine has %s: \"GLIBC_%s not found\"",
			    w->torch, w->variant, g->glibc, g->tag ? g->tag : "their build platform", p->m.glibc, g->glibc);
		return false;
	}
	return true;
}

/* A toolkit of the machine whose nvcc builds for CUDA release cuda with the machine's gcc, or NULL. */
static const char *builder_nvcc(const sv_problem *p, const char *cuda)
{
	char *want = el_version_prefix(cuda, 2);
	const char *found = NULL;

	for (size_t i = 0; i < p->m.nnvcc && !found; i++) {
		char *rel = el_version_prefix(p->m.nvcc[i], 2);
		long max = el_kb_nvcc_max_gcc(p->kb, rel, NULL);

		if (strcmp(rel, want) == 0 && (!p->m.gcc || max < 0 || el_version_major(p->m.gcc) <= max))
			found = p->m.nvcc[i];
		free(rel);
	}
	free(want);
	return found;
}

/* Do the requests allow mmcv release mm, and has it the compiled ops? */
static bool mmcv_allowed(const sv_problem *p, const el_kb_mmcv *mm, sv_fail *f)
{
	bool ops = false;

	for (size_t i = 0; i < p->nreq; i++) {
		const sv_request *r = &p->req[i];

		if (r->kind == SV_MMCV && ((r->package && strcmp(r->package, mm->package) != 0) || !sv_request_allows(r, mm->version))) {
			sv_fail_set(f, "spec", D_SPEC, NULL, "%s %s does not meet %s", mm->package, mm->version, r->origin);
			return false;
		}
	}
	if (!el_kb_mmcv_package(p->kb, mm->version, &ops, NULL) || !ops) {
		sv_fail_set(f, "spec", D_SPEC, NULL, "%s %s has no compiled ops", mm->package, mm->version);
		return false;
	}
	return true;
}

void sv_problem_prepare(sv_problem *p)
{
	size_t n;
	const el_kb_mmcv *mm = el_kb_mmcv_releases(p->kb, &n);

	p->mmcv_allowed = el_xcalloc(n + 1, sizeof(*p->mmcv_allowed));
	for (size_t i = 0; i < n; i++)
		p->mmcv_allowed[i] = mmcv_allowed(p, &mm[i], NULL);
	for (size_t k = 0; k < p->nreq; k++) {
		const el_kb_guard *g;

		if (p->req[k].kind != SV_CODEBASE)
			continue;
		g = el_kb_guards(p->kb, p->req[k].codebase->package, &n);
		p->cands[k] = el_xcalloc(n + 1, sizeof(*p->cands[k]));
		for (size_t i = n; i-- > 0;)
			if ((g[i].mmcv_min || g[i].mmcv_max) && sv_request_allows(&p->req[k], g[i].version))
				p->cands[k][p->ncands[k]++] = &g[i];
	}
}

void sv_problem_release(sv_problem *p)
{
	free(p->mmcv_allowed);
	p->mmcv_allowed = NULL;
	for (size_t k = 0; k < SV_MAX_REQUESTS; k++) {
		free(p->cands[k]);
		p->cands[k] = NULL;
		p->ncands[k] = 0;
	}
}

bool sv_mmcv_fits(const sv_problem *p, const el_kb_torch_wheel *w, const el_kb_mmcv *mm, bool *prebuilt,
		  const char **nvcc, sv_fail *f)
{
	size_t n;
	const el_kb_mmcv *all = el_kb_mmcv_releases(p->kb, &n);
	char *rel;

	*nvcc = NULL;
	if (!p->mmcv_allowed[mm - all])
		return mmcv_allowed(p, mm, f); /* false, with the reason */
	*prebuilt = el_kb_mmcv_has_wheel(mm, w->torch, w->cuda);
	if (*prebuilt || !w->cuda)
		return true; /* a CPU build needs only the compiler */
	if (p->m.any_nvcc) {
		*nvcc = w->cuda;
		return true;
	}
	if ((*nvcc = builder_nvcc(p, w->cuda)) != NULL)
		return true;
	rel = el_kb_release(w->torch);
	sv_fail_set(f, "mmcv-wheel", D_MMCV, mm->source, "%s %s has no prebuilt wheel for CUDA %s and torch %s, and this machine has no nvcc of CUDA %s (with a gcc it accepts) to build it",
		    mm->package, mm->version, w->cuda, rel, w->cuda);
	free(rel);
	return false;
}

/* Narrow [*lo, *hi] by [lo2, hi2]: the bound that binds, with who set it. */
static void narrow(sv_choice *c, const char *lo, const char *hi, bool incl, const char *from)
{
	if (lo && (!c->engine_lo || envlock_version_cmp(lo, c->engine_lo) > 0)) {
		c->engine_lo = lo;
		c->engine_lo_from = from;
	}
	if (hi) {
		int cmp = c->engine_hi ? envlock_version_cmp(hi, c->engine_hi) : -1;

		if (cmp < 0 || (cmp == 0 && !incl)) {
			c->engine_hi = hi;
			c->engine_hi_incl = incl;
			c->engine_hi_from = from;
		}
	}
}

static bool engine_empty(const sv_choice *c)
{
	int cmp;

	if (!c->engine_lo || !c->engine_hi)
		return false;
	cmp = envlock_version_cmp(c->engine_lo, c->engine_hi);
	return cmp > 0 || (cmp == 0 && !c->engine_hi_incl);
}

/* Choose the codebase of request k and the rest after it, newest first, backtracking when mmengine's ranges do not meet. */
static bool choose_codebases(const sv_problem *p, sv_choice *c, size_t k, sv_fail *f, int *budget)
{
	const sv_request *r;

	while (k < p->nreq && p->req[k].kind != SV_CODEBASE)
		k++;
	if (k == p->nreq)
		return true;
	r = &p->req[k];
	for (size_t i = 0; i < p->ncands[k] && *budget > 0; i++) {
		const el_kb_guard *g = p->cands[k][i];
		sv_choice save = *c;

		if (!el_kb_guard_accepts_mmcv(g, c->mmcv->version))
			continue;
		(*budget)--;
		c->codebase[k] = g;
		narrow(c, g->mmengine_min, g->mmengine_max, g->mmengine_max_inclusive, g->source);
		if (engine_empty(c)) {
			sv_fail_set(f, "mmengine", D_ENGINE, g->source, "%s %s needs mmengine %s%s%s, which the rest of the stack excludes",
				    r->codebase->distribution, g->version, g->mmengine_min ? ">=" : "",
				    g->mmengine_min ? g->mmengine_min : "", g->mmengine_max ? " and below its maximum" : "");
			*c = save;
			continue;
		}
		if (choose_codebases(p, c, k + 1, f, budget))
			return true;
		*c = save;
	}
	if (!p->ncands[k]) {
		sv_fail_set(f, "spec", D_SPEC, NULL, "no %s release envlock knows meets %s with the version guard of its __init__.py", r->codebase->distribution, r->origin);
	} else if (!f || !f->why || f->depth < D_GUARD) {
		/* the newest release the spec allows, and the range it asserts */
		char *range = el_kb_guard_range(p->cands[k][0]);

		sv_fail_set(f, "guard", D_GUARD, p->cands[k][0]->source, "%s %s asserts %s in its __init__.py; %s %s is outside it%s",
			    r->codebase->distribution, p->cands[k][0]->version, range, c->mmcv->package, c->mmcv->version,
			    r->pinned ? "" : ", and every older release the spec allows refuses it too");
		free(range);
	}
	return false;
}

bool sv_codebases_fit(const sv_problem *p, sv_choice *c, sv_fail *f)
{
	int budget = 4096;
	const char *src;
	const char *min = el_kb_mmcv_mmengine_min(p->kb, c->mmcv->version, &src);

	c->engine_lo = c->engine_hi = c->engine_lo_from = c->engine_hi_from = NULL;
	c->engine_hi_incl = false;
	if (min)
		narrow(c, min, NULL, false, src);
	return choose_codebases(p, c, 0, f, &budget);
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return envlock_version_cmp(a, b);
}

int sv_choice_cmp(const sv_problem *p, const sv_choice *c, const sv_choice *d)
{
	int x;

	for (size_t i = 0; i < p->nreq; i++)
		if (c->codebase[i] && d->codebase[i] && (x = envlock_version_cmp(c->codebase[i]->version, d->codebase[i]->version)))
			return x;
	if (c->prebuilt != d->prebuilt)
		return c->prebuilt ? 1 : -1;
	if ((x = envlock_version_cmp(c->torch->torch, d->torch->torch)))
		return x;
	if (c->driver_fit != d->driver_fit)
		return c->driver_fit - d->driver_fit;
	if ((x = cmp_str(c->torch->cuda, d->torch->cuda)))
		return x;
	if ((x = cmp_str(c->mmcv ? c->mmcv->version : NULL, d->mmcv ? d->mmcv->version : NULL)))
		return x;
	return cmp_str(c->python, d->python);
}

/* Keep the better of c and the group's best of c's torch release. */
static void consider(const sv_problem *p, sv_result *r, const sv_choice *c, size_t *cap)
{
	char *rel = el_kb_release(c->torch->torch);

	for (size_t i = 0; i < r->n; i++) {
		char *other = el_kb_release(r->v[i].torch->torch);
		bool same = strcmp(rel, other) == 0;

		free(other);
		if (same) {
			if (sv_choice_cmp(p, c, &r->v[i]) > 0)
				r->v[i] = *c;
			free(rel);
			return;
		}
	}
	free(rel);
	if (r->n + 1 > *cap)
		r->v = el_grow_array(r->v, cap, r->n + 1, sizeof(*r->v));
	r->v[r->n++] = *c;
}

/* Keep the failure that came closest (the first, newest, of equal depth). */
static void note_fail(sv_result *r, sv_fail *f, const el_kb_torch_wheel *w)
{
	if (f->why && f->depth > r->deepest.depth) {
		sv_fail_release(&r->deepest);
		r->deepest = *f;
		r->deepest_torch = w;
		memset(f, 0, sizeof(*f));
	}
	sv_fail_release(f);
}

static int by_rank(const void *a, const void *b, void *p)
{
	return sv_choice_cmp(p, b, a);
}

void sv_search(const sv_problem *p, sv_result *r)
{
	size_t nw, nm, cap = 0;
	const el_kb_torch_wheel *w = el_kb_torch_wheels(p->kb, &nw);
	const el_kb_mmcv *mm = el_kb_mmcv_releases(p->kb, &nm);

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < nw; i++) {
		sv_choice c;
		sv_fail f = { 0 };

		memset(&c, 0, sizeof(c));
		c.torch = &w[i];
		if (!sv_torch_fits(p, &w[i], &c.python, &c.driver_fit, &f)) {
			note_fail(r, &f, &w[i]);
			continue;
		}
		if (!p->needs_mmcv) {
			consider(p, r, &c, &cap);
			continue;
		}
		for (size_t k = nm; k-- > 0;) {
			c.mmcv = &mm[k];
			if (!sv_mmcv_fits(p, &w[i], &mm[k], &c.prebuilt, &c.build_nvcc, &f) || !sv_codebases_fit(p, &c, &f)) {
				note_fail(r, &f, &w[i]);
				continue;
			}
			consider(p, r, &c, &cap);
		}
		sv_fail_release(&f);
	}
	if (r->n > 1) /* none found: r->v is NULL, which qsort_r may not be given */
		qsort_r(r->v, r->n, sizeof(*r->v), by_rank, (void *)p);
}

void sv_result_release(sv_result *r)
{
	free(r->v);
	sv_fail_release(&r->deepest);
	memset(r, 0, sizeof(*r));
}
