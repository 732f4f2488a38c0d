/*
 * What a stack says about itself: each layer and why it was chosen, the
 * first constraint that rules out the next newer choice of each layer
 * (the other layers as they are), notes a user must know; and, when
 * nothing fits, the binding constraint and the smallest change.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "solve.h"
#include "util/error.h"
#include "util/version.h"
#include "util/xalloc.h"

static sv_layer *add_layer(sv_stack *s, const char *name, char *version, const char *variant, char *source,
			   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static sv_layer *add_layer(sv_stack *s, const char *name, char *version, const char *variant, char *source,
			   const char *fmt, ...)
{
	sv_layer *l = &s->layers[s->nlayers++];
	va_list ap;

	l->name = name;
	l->version = version;
	l->variant = variant;
	l->source = source;
	va_start(ap, fmt);
	l->why = el_xvasprintf(fmt, ap);
	va_end(ap);
	return l;
}

static void add_note(sv_stack *s, char *note)
{
	if (s->nnotes < sizeof(s->notes) / sizeof(s->notes[0]))
		s->notes[s->nnotes++] = note;
	else
		free(note);
}

static void add_ruled(sv_stack *s, const char *layer, char *candidate, sv_fail *f)
{
	sv_ruled *r = &s->ruled[s->nruled++];

	r->layer = layer;
	r->candidate = candidate;
	r->constraint = f->constraint;
	r->why = f->why;
	r->source = f->source;
	f->why = NULL;
}

/* Sources joined with "; " (NULLs skipped); malloc'd. */
static char *sources(const char *a, const char *b, const char *c, const char *d)
{
	const char *v[] = { a, b, c, d };
	el_buf buf = EL_BUF_FITS(EL_BUF_JOIN_MAX, "four sources and the separators between them");

	for (size_t i = 0; i < 4; i++)
		if (v[i] && *v[i])
			el_buf_addf(&buf, "%s%s", buf.len ? "; " : "", v[i]);
	return el_buf_detach(&buf);
}

static const sv_request *python_request(const sv_problem *p)
{
	for (size_t i = 0; i < p->nreq; i++)
		if (p->req[i].kind == SV_PYTHON)
			return &p->req[i];
	return NULL;
}

static void python_layer(sv_stack *s, const sv_problem *p)
{
	const el_kb_torch_python *row = el_kb_torch_python_of(p->kb, s->c.torch->torch);
	char *mine = p->m.python ? el_version_prefix(p->m.python, 2) : NULL;
	const char *src = row ? row->source : NULL;

	if (p->opts->python)
		add_layer(s, "python", el_xstrdup(s->c.python), NULL, sources(src, NULL, NULL, NULL),
			  "asked for (%s)", sv_opt(p, "python"));
	else if (mine && strcmp(mine, s->c.python) == 0)
		add_layer(s, "python", el_xstrdup(s->c.python), NULL, sources(src, NULL, NULL, NULL),
			  "the Python this machine has (%s); torch %s has wheels for %s to %s", p->m.python,
			  s->c.torch->torch, row->python_min, row->python_max);
	else
		add_layer(s, "python", el_xstrdup(s->c.python), NULL, sources(src, NULL, NULL, NULL),
			  "the newest Python torch %s has wheels for (%s to %s)%s", s->c.torch->torch,
			  row ? row->python_min : "?", row ? row->python_max : "?",
			  python_request(p) ? " that the plan allows" : "");
	free(mine);
}

/* "sm_86 code runs on the NVIDIA GeForce RTX 4070 (8.9)", for each GPU; malloc'd, NULL on a CPU plan. */
static char *code_text(const sv_problem *p, const el_kb_torch_wheel *w, const char **source)
{
	const el_kb_torch_arch *a = w->cuda ? el_kb_torch_arch_of(p->kb, w->torch, w->cuda) : NULL;
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a sentence per GPU of the lock, round its name and compute capability");
	bool ptx;

	*source = a ? a->source : NULL;
	for (size_t i = 0; a && i < p->m.ngpus; i++) {
		const sv_gpu *g = &p->m.gpus[i];
		const char *run = g->cc ? el_kb_code_runs_on(&a->sm, &a->ptx, g->cc, &ptx) : NULL;
		bool told = false;

		for (size_t k = 0; k < i; k++)
			told = told || (p->m.gpus[k].cc && g->cc && strcmp(p->m.gpus[k].cc, g->cc) == 0);
		if (!run || told)
			continue;
		el_buf_addf(&b, "%sits %s code for compute capability %s runs on the %s (%s)", b.len ? "; " : "",
			      ptx ? "PTX" : "cubin", run, g->name, g->cc);
	}
	if (!b.len) {
		el_buf_release(&b);
		return NULL;
	}
	return el_buf_detach(&b);
}

static void torch_layers(sv_stack *s, const sv_problem *p)
{
	const el_kb_torch_wheel *w = s->c.torch;
	const el_kb_cuda_driver *d = w->cuda ? el_kb_cuda_driver_of(p->kb, w->cuda) : NULL;
	const el_kb_torch_glibc *g = el_kb_torch_glibc_of(p->kb, w->torch, w->variant);
	const char *code_src = NULL;
	char *code = code_text(p, w, &code_src), *driver, *glibc;
	const char *drv = p->m.driver_branch > 0 ? "the upgraded driver" : p->m.driver;

	if (!d)
		driver = el_xstrdup("the CPU build");
	else if (s->c.driver_fit == 2)
		driver = el_xasprintf("built for CUDA %s, which driver %s runs (it needs %s)", w->cuda, drv, d->min_driver);
	else
		driver = el_xasprintf("built for CUDA %s, which driver %s runs only through minor-version compatibility "
				      "(CUDA %ld.x needs %s; the %s toolkit's own driver is %s)",
				      w->cuda, drv, el_version_major(w->cuda), d->minor_compat_driver, w->cuda, d->min_driver);
	if (g && p->m.glibc && !p->m.any_glibc)
		glibc = el_xasprintf("its wheels need glibc %s, this machine has %s", g->glibc, p->m.glibc);
	else if (g)
		glibc = el_xasprintf("its wheels need glibc %s", g->glibc);
	else
		glibc = NULL;
	add_layer(s, "torch", el_xstrdup(sv_pin_version(w->torch_pin)), w->variant,
		  sources(w->source, d ? d->source : NULL, code_src, g ? g->source : NULL), "%s%s%s%s%s", driver,
		  code ? "; " : "", code ? code : "", glibc ? "; " : "", glibc ? glibc : "");
	add_layer(s, "torchvision", el_xstrdup(sv_pin_version(w->vision_pin)), w->variant, sources(w->source, NULL, NULL, NULL),
		  "the release the install command of torch %s pairs with it", w->torch);
	if (s->c.driver_fit == 1)
		add_note(s, el_xasprintf("CUDA %s runs on driver %s only through minor-version compatibility, with a limited "
					 "feature set (no PTX JIT of newer code); driver %s or newer runs it natively",
					 w->cuda, drv, d->min_driver));
	free(code);
	free(driver);
	free(glibc);
}

/* "mmdet 2.25.1 (1.3.17 <= mmcv <= 1.7.0)" for each codebase of the stack; malloc'd. */
static char *accepting(const sv_stack *s, const sv_problem *p, char **srcs)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a codebase's name, version and range per request");
	el_buf src = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a codebase's source per request");
	size_t n = 0;

	for (size_t i = 0; i < p->nreq; i++) {
		const el_kb_guard *g = s->c.codebase[i];
		char *range;

		if (!g)
			continue;
		range = el_kb_guard_range(g);
		el_buf_addf(&b, "%s%s %s (%s)", n++ ? " and " : "", p->req[i].codebase->distribution, g->version, range);
		el_buf_addf(&src, "%s%s", src.len ? "; " : "", g->source);
		free(range);
	}
	*srcs = el_buf_detach(&src);
	if (!n) {
		el_buf_release(&b);
		return NULL;
	}
	return el_buf_detach(&b);
}

/* "mmpose 1.3.2 (0.6.0 <= mmengine <= 1.0.0) and mmcv 2.2.0 (mmengine >= 0.3.0)": who bounds mmengine; malloc'd. */
static char *engine_needs(const sv_stack *s, const sv_problem *p)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a codebase's name, version and mmengine bounds per request");
	const char *min;

	for (size_t i = 0; i < p->nreq; i++) {
		const el_kb_guard *g = s->c.codebase[i];

		if (!g || (!g->mmengine_min && !g->mmengine_max))
			continue;
		el_buf_addf(&b, "%s%s %s (", b.len ? " and " : "", p->req[i].codebase->distribution, g->version);
		if (g->mmengine_min)
			el_buf_addf(&b, "%s <= ", g->mmengine_min);
		el_buf_adds(&b, "mmengine");
		if (g->mmengine_max)
			el_buf_addf(&b, " %s %s", g->mmengine_max_inclusive ? "<=" : "<", g->mmengine_max);
		el_buf_addc(&b, ')');
	}
	if ((min = el_kb_mmcv_mmengine_min(p->kb, s->c.mmcv->version, NULL)) != NULL)
		el_buf_addf(&b, "%s%s %s (mmengine >= %s)", b.len ? " and " : "", s->c.mmcv->package, s->c.mmcv->version, min);
	return el_buf_detach(&b);
}

static void mmcv_layers(sv_stack *s, const sv_problem *p)
{
	const el_kb_mmcv *m = s->c.mmcv;
	const el_kb_torch_wheel *w = s->c.torch;
	char *gsrc, *who = accepting(s, p, &gsrc), *rel = el_kb_release(w->torch), *built;

	if (s->c.prebuilt)
		built = w->cuda ? el_xasprintf("with a prebuilt wheel for CUDA %s and torch %s", w->cuda, rel)
				: el_xasprintf("with a prebuilt CPU wheel for torch %s", rel);
	else if (w->cuda)
		built = el_xasprintf("it has no prebuilt wheel for CUDA %s and torch %s: pip builds it with this machine's nvcc %s%s%s",
				     w->cuda, rel, s->c.build_nvcc, p->m.gcc ? " and gcc " : "", p->m.gcc ? p->m.gcc : "");
	else
		built = el_xasprintf("it has no prebuilt CPU wheel for torch %s: pip builds it with this machine's gcc", rel);
	if (who)
		add_layer(s, m->package, el_xstrdup(m->version), NULL, sources(m->source, gsrc, NULL, NULL),
			  "the newest %s that %s accept%s, %s", m->package, who, strstr(who, " and ") ? "" : "s", built);
	else
		add_layer(s, m->package, el_xstrdup(m->version), NULL, sources(m->source, NULL, NULL, NULL),
			  "the newest %s %s", m->package, built);
	if (!s->c.prebuilt && w->cuda)
		add_note(s, el_xasprintf("%s %s is built from source (minutes to an hour): the commands set MMCV_WITH_OPS=1 "
					 "FORCE_CUDA=1 so that its CUDA ops are compiled", m->package, m->version));
	if (s->c.engine_lo || s->c.engine_hi) {
		el_buf v = EL_BUF_FITS(EL_BUF_JOIN_MAX, "two bounds of the knowledge's rows");
		char *needs = engine_needs(s, p);

		if (s->c.engine_lo)
			el_buf_addf(&v, ">=%s", s->c.engine_lo);
		if (s->c.engine_hi)
			el_buf_addf(&v, "%s%s%s", v.len ? "," : "", s->c.engine_hi_incl ? "<=" : "<", s->c.engine_hi);
		add_layer(s, "mmengine", el_buf_detach(&v), NULL, sources(s->c.engine_lo_from, s->c.engine_hi_from, NULL, NULL),
			  "what %s need%s; pip takes the newest mmengine in that range", needs, strstr(needs, " and ") ? " together" : "s");
		free(needs);
	}
	free(who);
	free(gsrc);
	free(rel);
	free(built);
}

static void codebase_layers(sv_stack *s, const sv_problem *p)
{
	for (size_t i = 0; i < p->nreq; i++) {
		const sv_request *r = &p->req[i];
		const el_kb_guard *g = s->c.codebase[i];
		char *range;

		if (!g)
			continue;
		range = el_kb_guard_range(g);
		if (r->pinned)
			add_layer(s, r->codebase->distribution, el_xstrdup(g->version), NULL, el_xstrdup(g->source),
				  "asked for (%s); its __init__.py asserts %s", r->origin, range);
		else
			add_layer(s, r->codebase->distribution, el_xstrdup(g->version), NULL, el_xstrdup(g->source),
				  "the newest %s%s%s that accepts %s %s (its __init__.py asserts %s)%s%s", r->codebase->distribution,
				  *r->spec ? " meeting " : "", r->spec, s->c.mmcv->package, s->c.mmcv->version, range,
				  r->from_config ? "; needed by " : "", r->from_config ? r->origin : "");
		free(range);
	}
}

/* The next newer torch release than the stack's, with the other layers as they are: the first none of whose variants fits, and why. */
static void ruled_torch(sv_stack *s, const sv_problem *p)
{
	size_t n, newer = 0;
	const el_kb_torch_wheel *w = el_kb_torch_wheels(p->kb, &n);

	/* newest first: the releases newer than the stack's are w[0..newer), the nearest at the end */
	while (newer < n && envlock_version_cmp(w[newer].torch, s->c.torch->torch) > 0)
		newer++;
	for (size_t end = newer; end > 0;) {
		size_t start = end;
		sv_fail best = { 0 };
		const el_kb_torch_wheel *best_w = NULL;
		bool fits = false;

		while (start > 0 && strcmp(w[start - 1].torch, w[end - 1].torch) == 0)
			start--;
		for (size_t i = start; i < end && !fits; i++) {
			sv_fail f = { 0 };
			const char *py, *nvcc;
			int fit;
			bool pre;

			if (p->gpu != (w[i].cuda != NULL))
				continue;
			fits = sv_torch_fits(p, &w[i], &py, &fit, &f) &&
			       (!s->c.mmcv || sv_mmcv_fits(p, &w[i], s->c.mmcv, &pre, &nvcc, &f));
			if (!fits && f.why && f.depth > best.depth) {
				sv_fail_release(&best);
				best = f;
				best_w = &w[i];
			} else {
				sv_fail_release(&f);
			}
		}
		if (!fits && best_w) {
			add_ruled(s, "torch", el_xasprintf("%s %s", best_w->torch, best_w->variant), &best);
			sv_fail_release(&best);
			return;
		}
		sv_fail_release(&best);
		end = start;
	}
}

/* The next newer mmcv release, with torch and the codebases as they are. */
static void ruled_mmcv(sv_stack *s, const sv_problem *p)
{
	size_t n;
	const el_kb_mmcv *m = el_kb_mmcv_releases(p->kb, &n);

	for (size_t i = 0; i < n; i++) {
		sv_fail f = { 0 };
		bool pre, ok = true;
		const char *nvcc;

		if (envlock_version_cmp(m[i].version, s->c.mmcv->version) <= 0 || el_version_is_prerelease(m[i].version))
			continue;
		for (size_t k = 0; k < p->nreq && ok; k++) {
			const el_kb_guard *g = s->c.codebase[k];

			if (g && !el_kb_guard_accepts_mmcv(g, m[i].version)) {
				char *range = el_kb_guard_range(g);

				sv_fail_set(&f, "guard", 0, g->source, "%s %s asserts %s in its __init__.py", p->req[k].codebase->distribution,
					    g->version, range);
				free(range);
				ok = false;
			}
		}
		if (ok && !sv_mmcv_fits(p, s->c.torch, &m[i], &pre, &nvcc, &f))
			ok = false;
		if (ok) {
			sv_fail_release(&f);
			continue;
		}
		add_ruled(s, m[i].package, el_xstrdup(m[i].version), &f);
		sv_fail_release(&f);
		return;
	}
}

/* The next newer release of each codebase not pinned, with mmcv as it is. */
static void ruled_codebases(sv_stack *s, const sv_problem *p)
{
	for (size_t k = 0; k < p->nreq; k++) {
		const sv_request *r = &p->req[k];
		const el_kb_guard *chosen = s->c.codebase[k], *g;
		size_t n;

		if (!chosen || r->pinned)
			continue;
		g = el_kb_guards(p->kb, r->codebase->package, &n);
		for (size_t i = 0; i < n; i++) {
			char *range;
			sv_fail f = { 0 };

			if (envlock_version_cmp(g[i].version, chosen->version) <= 0 || !sv_request_allows(r, g[i].version) ||
			    el_kb_guard_accepts_mmcv(&g[i], s->c.mmcv->version))
				continue;
			range = el_kb_guard_range(&g[i]);
			sv_fail_set(&f, "guard", 0, g[i].source, "it asserts %s in its __init__.py; this stack's %s is %s", range,
				    s->c.mmcv->package, s->c.mmcv->version);
			add_ruled(s, r->codebase->distribution, el_xstrdup(g[i].version), &f);
			free(range);
			break;
		}
	}
}

/* The next newer Python, when the machine's was chosen over it or torch stops below it. */
static void ruled_python(sv_stack *s, const sv_problem *p)
{
	const el_kb_torch_python *row = el_kb_torch_python_of(p->kb, s->c.torch->torch);

	if (p->opts->python || !row)
		return;
	for (size_t i = 0; i < p->npythons; i++) {
		sv_fail f = { 0 };

		if (envlock_version_cmp(p->pythons[i], s->c.python) <= 0)
			continue;
		if (envlock_version_cmp(p->pythons[i], row->python_max) <= 0)
			return; /* torch has it: the machine's own Python was preferred */
		sv_fail_set(&f, "python", 0, row->source, "torch %s has wheels for Python %s to %s", s->c.torch->torch,
			    row->python_min, row->python_max);
		add_ruled(s, "python", el_xstrdup(p->pythons[i]), &f);
		return;
	}
}

void sv_stack_build(sv_stack *s, const sv_problem *p, const sv_choice *c)
{
	memset(s, 0, sizeof(*s));
	s->c = *c;
	python_layer(s, p);
	torch_layers(s, p);
	if (c->mmcv) {
		mmcv_layers(s, p);
		codebase_layers(s, p);
	}
	ruled_python(s, p);
	ruled_torch(s, p);
	if (c->mmcv) {
		ruled_mmcv(s, p);
		ruled_codebases(s, p);
	}
	for (size_t i = 0; i < p->m.ngpus; i++)
		if (!p->m.gpus[i].cc && p->gpu) {
			add_note(s, el_xasprintf("envlock does not know the compute capability of the %s: torch's GPU code was not checked against it",
						 p->m.gpus[i].name));
			break;
		}
	if (!p->m.glibc)
		add_note(s, el_xstrdup("the lock records no glibc: the glibc the wheels need was not checked"));
	if (p->m.driver_branch > 0 && p->gpu)
		add_note(s, el_xasprintf("planned for an NVIDIA driver of the R%ld branch (%s); this machine has %s, and envlock never installs drivers",
					 p->m.driver_branch, sv_opt(p, "allow_driver_upgrade"), p->m.driver ? p->m.driver : "none"));
	sv_commands_build(s, p);
}

void sv_stack_release(sv_stack *s)
{
	for (size_t i = 0; i < s->nlayers; i++) {
		free(s->layers[i].version);
		free(s->layers[i].why);
		free(s->layers[i].source);
	}
	for (size_t i = 0; i < s->nruled; i++) {
		free(s->ruled[i].candidate);
		free(s->ruled[i].why);
	}
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	for (size_t i = 0; i < s->npins; i++)
		free(s->pins[i]);
	for (size_t i = 0; i < s->ncommands; i++)
		free(s->commands[i]);
	memset(s, 0, sizeof(*s));
}

/* --- when nothing fits ------------------------------------------------------- */

enum { R_DRIVER = 1, R_NVCC = 2, R_PYTHON = 4, R_GLIBC = 8 };

/* The relaxations, fewest layers first and, among as many, the driver before the toolkit, Python and the OS. */
static const unsigned relaxations[] = {
	R_DRIVER, R_NVCC, R_PYTHON, R_GLIBC,
	R_DRIVER | R_NVCC, R_DRIVER | R_PYTHON, R_DRIVER | R_GLIBC, R_NVCC | R_PYTHON, R_NVCC | R_GLIBC, R_PYTHON | R_GLIBC,
	R_DRIVER | R_NVCC | R_PYTHON, R_DRIVER | R_NVCC | R_GLIBC, R_DRIVER | R_PYTHON | R_GLIBC, R_NVCC | R_PYTHON | R_GLIBC,
	R_DRIVER | R_NVCC | R_PYTHON | R_GLIBC,
};

/* The driver stack c needs: what its CUDA needs (through minor-version compatibility where that is enough), and what its GPUs need. */
static char *driver_needed(const sv_problem *p, const sv_choice *c, const char **cuda)
{
	const el_kb_cuda_driver *d = el_kb_cuda_driver_of(p->kb, c->torch->cuda);
	const char *need = d ? (d->minor_compat_driver ? d->minor_compat_driver : d->min_driver) : NULL;
	long first = 0;

	*cuda = c->torch->cuda;
	for (size_t i = 0; i < p->m.ngpus; i++)
		if (p->m.gpus[i].arch && p->m.gpus[i].arch->first_branch > first)
			first = p->m.gpus[i].arch->first_branch;
	if (need && first <= el_version_major(need))
		return el_xstrdup(need);
	return first ? el_xasprintf("%ld", first) : NULL;
}

/*
 * The lowest driver any stack of the relaxed problem q needs, every
 * candidate counted (not only the best of each torch release); *w gets
 * the torch wheel that needs it.
 */
static char *lowest_driver(const sv_problem *q, const el_kb_torch_wheel **best_w)
{
	size_t nw, nm;
	const el_kb_torch_wheel *w = el_kb_torch_wheels(q->kb, &nw);
	const el_kb_mmcv *mm = el_kb_mmcv_releases(q->kb, &nm);
	char *low = NULL;

	*best_w = NULL;
	for (size_t i = 0; i < nw; i++) {
		sv_choice c;
		sv_fail f = { 0 };
		bool fits;
		const char *cuda;
		char *need;

		memset(&c, 0, sizeof(c));
		c.torch = &w[i];
		fits = sv_torch_fits(q, &w[i], &c.python, &c.driver_fit, &f);
		for (size_t k = nm; fits && q->needs_mmcv && k-- > 0;) {
			c.mmcv = &mm[k];
			if (sv_mmcv_fits(q, &w[i], &mm[k], &c.prebuilt, &c.build_nvcc, &f) && sv_codebases_fit(q, &c, &f))
				break;
			if (k == 0)
				fits = false;
		}
		sv_fail_release(&f);
		if (!fits || !(need = driver_needed(q, &c, &cuda)))
			continue;
		if (!low || envlock_version_cmp(need, low) < 0) {
			free(low);
			low = need;
			*best_w = &w[i];
		} else {
			free(need);
		}
	}
	return low;
}

static char *change_text(const sv_problem *orig, const sv_problem *p, const sv_result *r, unsigned mask,
			 const el_kb_torch_wheel **why_w)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "four sentences round versions and the requests' text");
	const sv_choice *best = &r->v[0];
	char *req = sv_requests_text(orig);

	*why_w = best->torch;
	if (mask & R_DRIVER) {
		const el_kb_torch_wheel *w;
		char *low = lowest_driver(p, &w);

		if (low) {
			*why_w = w;
			el_buf_addf(&b, "upgrade the NVIDIA driver to %s%s or newer (what %s%s needs) to run %s; envlock never installs drivers",
				      strchr(low, '.') ? "" : "the R", low, w->cuda ? "CUDA " : "the GPU", w->cuda ? w->cuda : "", req);
		}
		free(low);
	}
	if (mask & R_NVCC)
		el_buf_addf(&b, "%sinstall the CUDA %s toolkit (nvcc) so that pip can build %s %s", b.len ? ", and " : "",
			      best->torch->cuda ? best->torch->cuda : "", best->mmcv ? best->mmcv->package : "mmcv",
			      best->mmcv ? best->mmcv->version : "");
	if (mask & R_PYTHON)
		el_buf_addf(&b, "%splan for Python %s instead of %s", b.len ? ", and " : "", best->python, orig->opts->python);
	if (mask & R_GLIBC) {
		const el_kb_torch_glibc *g = el_kb_torch_glibc_of(p->kb, best->torch->torch, best->torch->variant);

		el_buf_addf(&b, "%suse an OS with glibc %s or newer (torch %s wheels need it; this machine has %s)",
			      b.len ? ", and " : "", g ? g->glibc : "?", best->torch->torch, orig->m.glibc);
	}
	free(req);
	return el_buf_detach(&b);
}

void sv_none_explain(sv_none *n, const sv_problem *p, const sv_result *r)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < sizeof(relaxations) / sizeof(relaxations[0]) && !n->change; i++) {
		unsigned mask = relaxations[i];
		sv_problem q = *p;
		envlock_solve_opts o = *p->opts;
		sv_result rr;

		if (((mask & R_DRIVER) && (!p->gpu || p->m.driver_branch > 0)) || ((mask & R_NVCC) && !p->needs_mmcv) ||
		    ((mask & R_PYTHON) && !p->opts->python) || ((mask & R_GLIBC) && !p->m.glibc))
			continue;
		if (mask & R_DRIVER)
			q.m.driver_branch = sv_newest_branch(&p->m, p->kb);
		q.m.any_nvcc = q.m.any_nvcc || (mask & R_NVCC);
		q.m.any_glibc = q.m.any_glibc || (mask & R_GLIBC);
		if (mask & R_PYTHON) {
			o.python = NULL;
			q.opts = &o;
		}
		sv_search(&q, &rr);
		if (rr.n) {
			sv_fail f = { 0 };
			const char *py;
			int fit;
			bool pre;
			const char *nvcc;
			const el_kb_torch_wheel *w;

			n->change = change_text(p, &q, &rr, mask, &w);
			n->binding = mask & R_DRIVER ? "driver" : mask & R_NVCC ? "nvcc" : mask & R_PYTHON ? "python" : "glibc";
			/* why the stack the change makes fit does not fit the machine as it is */
			if (sv_torch_fits(p, w, &py, &fit, &f) && rr.v[0].mmcv)
				sv_mmcv_fits(p, w, rr.v[0].mmcv, &pre, &nvcc, &f);
			n->why = f.why ? f.why : el_xstrdup(r->deepest.why ? r->deepest.why : "");
			n->source = f.why ? f.source : r->deepest.source;
			f.why = NULL;
		}
		sv_result_release(&rr);
	}
	if (!n->change) {
		n->binding = r->deepest.constraint ? r->deepest.constraint : "knowledge";
		n->why = el_xstrdup(r->deepest.why ? r->deepest.why : "envlock knows no release that meets every request");
		n->source = r->deepest.source;
	}
	if (p->gpu) {
		sv_problem q = *p;
		sv_result rr;

		q.gpu = false;
		sv_search(&q, &rr);
		n->cpu_stacks = rr.n > 0;
		sv_result_release(&rr);
	}
}

void sv_none_release(sv_none *n)
{
	free(n->why);
	free(n->change);
	memset(n, 0, sizeof(*n));
}
