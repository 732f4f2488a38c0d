/*
 * solve --check --stack: a proposed stack (a tutorial's table, a
 * colleague's advice) judged on a machine, layer by layer, against the
 * same knowledge the search uses. Each problem is a finding with its
 * source: a release that does not exist, a guard it breaks, a missing
 * prebuilt wheel, a driver, glibc, Python or GPU architecture it cannot use.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "rules/rules.h"
#include "solve.h"
#include "util/error.h"
#include "util/text.h"
#include "util/version.h"
#include "util/xalloc.h"

typedef struct {
	sv_problem *p;
	envlock_findings *f;
	const char *python;           /* the stack's pins, NULL where it has none */
	const char *torch, *vision, *mmcv, *mmcv_package, *engine;
	const el_kb_torch_wheel *w;   /* the torch wheel the pin names, when envlock knows it */
	const el_kb_mmcv *m;
	struct {
		const el_kb_codebase *cb;
		const char *version;
		const el_kb_guard *g;
	} cbs[SV_MAX_REQUESTS];
	size_t ncbs;
	char *fix;                    /* the envlock solve that plans a stack for the same codebases */
} judge;

static void add(judge *j, const char *rule, envlock_severity sev, const char *section, const char *subject,
		const char *source, const char *fix, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

static void add(judge *j, const char *rule, envlock_severity sev, const char *section, const char *subject,
		const char *source, const char *fix, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = el_xvasprintf(fmt, ap);
	va_end(ap);
	el_finding_push(j->f, rule, sev, section, subject, msg, fix ? fix : j->fix, source);
	free(msg);
}

/* Split the stack into its pins; a part that is no NAME==VERSION is refused naming it. */
static int parse_stack(judge *j, envlock_ctx *ctx, char *text)
{
	const el_kb *kb = j->p->kb;

	for (char *s = text, *tok; (tok = strsep(&s, " \t\n,")) != NULL;) {
		char *eq = strstr(tok, "=="), *name;
		const char *ver, *package;
		const el_kb_codebase *cb;
		sv_kind kind;

		if (!*tok)
			continue;
		if (!eq || eq == tok || !isdigit((unsigned char)eq[2]))
			return el_error_set(ctx, ENVLOCK_EINVAL, "%s: '%s' is not a pin (NAME==VERSION: torch==1.10.0+cu102)", sv_opt(j->p, "stack"), tok);
		*eq = '\0';
		ver = eq + 2;
		name = el_pep503_name(tok);
		if (!sv_layer_of(kb, name, &kind, &package, &cb) || (kind == SV_CODEBASE && j->ncbs == SV_MAX_REQUESTS)) {
			free(name);
			return el_error_set(ctx, ENVLOCK_EINVAL, "%s: envlock does not judge '%s' (it knows python, torch, torchvision, mmcv, mmcv-full, mmengine and the OpenMMLab codebases)",
					    sv_opt(j->p, "stack"), tok);
		}
		free(name);
		switch (kind) {
		case SV_PYTHON:
			j->python = ver;
			break;
		case SV_TORCH:
			j->torch = ver;
			break;
		case SV_TORCHVISION:
			j->vision = ver;
			break;
		case SV_MMCV:
			j->mmcv = ver, j->mmcv_package = package;
			break;
		case SV_MMENGINE:
			j->engine = ver;
			break;
		case SV_CODEBASE:
			j->cbs[j->ncbs].cb = cb;
			j->cbs[j->ncbs++].version = ver;
			break;
		}
	}
	if (!j->python && !j->torch && !j->mmcv && !j->ncbs)
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s: no pins (give them as 'python==3.7 torch==1.10.0+cu102 mmcv-full==1.7.0 mmdet==2.25.1')",
				    sv_opt(j->p, "stack"));
	return 0;
}

/* "envlock solve --for mmdet==2.25.1 --python-version 3.7 plans a stack that fits this machine"; malloc'd. */
static char *solve_fix(const judge *j, bool with_python)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "an option per pin of the stack judged");

	el_buf_adds(&b, "envlock solve");
	for (size_t i = 0; i < j->ncbs; i++)
		el_buf_addf(&b, " --for %s==%s", j->cbs[i].cb->distribution, j->cbs[i].version);
	/* no codebase to plan for: the torch release, any variant */
	if (!j->ncbs)
		el_buf_addf(&b, " --for torch%s%.*s", j->torch ? "==" : "", j->torch ? (int)strcspn(j->torch, "+") : 0,
			      j->torch ? j->torch : "");
	if (j->python && with_python)
		el_buf_addf(&b, " --python-version %s", j->python);
	el_buf_adds(&b, " plans a stack that fits this machine");
	return el_buf_detach(&b);
}

/* The torch wheel a pin names: "1.10.0+cu102" that variant; "1.7.1" the PyPI build of that release. */
static const el_kb_torch_wheel *torch_wheel(const el_kb *kb, const char *pin, bool *release_known)
{
	size_t n;
	const el_kb_torch_wheel *w = el_kb_torch_wheels(kb, &n);
	const char *plus = strchr(pin, '+');
	char *pub = el_xstrndup(pin, plus ? (size_t)(plus - pin) : strlen(pin));
	const el_kb_torch_wheel *found = NULL;

	*release_known = false;
	for (size_t i = 0; i < n && !found; i++) {
		if (envlock_version_cmp(w[i].torch, pub) != 0)
			continue;
		*release_known = true;
		if (plus ? strcmp(w[i].variant, plus + 1) == 0 : strcmp(sv_pin_version(w[i].torch_pin), pin) == 0)
			found = &w[i];
	}
	free(pub);
	return found;
}

static void judge_torch(judge *j)
{
	const sv_problem *p = j->p;
	bool known;
	const char *py;
	int fit;
	sv_fail fail = { 0 };
	sv_problem q = *p;
	envlock_solve_opts o = *p->opts;
	const el_kb_torch_python *py_row;
	bool clean = false;

	j->w = torch_wheel(p->kb, j->torch, &known);
	if (!j->w) {
		char *subject = el_xasprintf("torch %s", j->torch);

		if (known)
			add(j, "stack-release-unknown", ENVLOCK_SEV_BREAKING, "frameworks", subject, NULL, NULL,
			    "torch %s is not a build PyTorch's install commands give: that release has no such variant", j->torch);
		else
			add(j, "stack-release-unknown", ENVLOCK_SEV_RISKY, "frameworks", subject, NULL, NULL,
			    "torch %s is not a release envlock knows, so nothing else about it is checked", j->torch);
		free(subject);
		return;
	}
	/* the stack's Python against the release's range, in the stack's words; the search's checks judge the rest */
	if (j->python && (py_row = el_kb_torch_python_of(p->kb, j->w->torch)) != NULL &&
	    (envlock_version_cmp(j->python, py_row->python_min) < 0 || envlock_version_cmp(j->python, py_row->python_max) > 0)) {
		char *subject = el_xasprintf("torch %s / Python %s", j->torch, j->python), *fix = solve_fix(j, false);

		add(j, "stack-python", ENVLOCK_SEV_BREAKING, "python", subject, py_row->source, fix,
		    "torch %s has wheels for Python %s to %s, not for the stack's Python %s", j->w->torch, py_row->python_min,
		    py_row->python_max, j->python);
		free(subject);
		free(fix);
	}
	o.python = NULL;
	q.opts = &o;
	q.gpu = j->w->cuda != NULL;
	if (j->w->cuda && !p->m.driver && !p->m.ngpus) {
		char *subject = el_xasprintf("torch %s", j->torch);

		add(j, "stack-cuda-without-gpu", ENVLOCK_SEV_INFO, "gpu", subject, j->w->source, "",
		    "torch %s is a CUDA build, and %s: it runs on the CPU only", j->torch,
		    p->m.gpu_recorded ? "this machine has no NVIDIA driver" : "the lock records nothing of the GPU");
		free(subject);
		q.m.driver_branch = 100000; /* no driver to judge it by: only Python and glibc are */
	}
	if (!j->w->cuda && (p->m.driver || p->m.ngpus)) {
		char *subject = el_xasprintf("torch %s", j->torch);

		add(j, "stack-cpu-on-gpu", ENVLOCK_SEV_RISKY, "frameworks", subject, j->w->source, NULL,
		    "torch %s is a CPU build, and this machine has an NVIDIA GPU: torch.cuda.is_available() is False", j->torch);
		free(subject);
	}
	/* one finding per constraint: each found is set aside and the wheel judged again, a few times at most */
	for (int round = 0; round < 5 && !(clean = sv_torch_fits(&q, j->w, &py, &fit, &fail)); round++) {
		char *subject = el_xasprintf("torch %s", j->torch);
		const char *section = strcmp(fail.constraint, "glibc") == 0 ? "system" : "gpu";

		add(j, strcmp(fail.constraint, "glibc") == 0 ? "stack-glibc" : strcmp(fail.constraint, "gpu-code") == 0 ? "stack-gpu-code" : "stack-driver",
		    ENVLOCK_SEV_BREAKING, section, subject, fail.source, NULL, "%s", fail.why);
		free(subject);
		if (strcmp(fail.constraint, "driver") == 0 && q.m.driver_branch == 0)
			q.m.driver_branch = sv_newest_branch(&q.m, p->kb);
		else if (strcmp(fail.constraint, "gpu-code") == 0)
			q.m.ngpus = 0;
		else if (strcmp(fail.constraint, "glibc") == 0)
			q.m.any_glibc = true;
		else
			break;
	}
	sv_fail_release(&fail);
	if (clean && fit == 1 && q.m.driver_branch == 0) {
		const el_kb_cuda_driver *d = el_kb_cuda_driver_of(p->kb, j->w->cuda);
		char *subject = el_xasprintf("torch %s / driver %s", j->torch, p->m.driver);

		add(j, "stack-driver-minor-compat", ENVLOCK_SEV_INFO, "gpu", subject, d->source, "",
		    "CUDA %s runs on driver %s only through minor-version compatibility (CUDA %ld.x needs %s; %s's own toolkit driver is %s)",
		    j->w->cuda, p->m.driver, el_version_major(j->w->cuda), d->minor_compat_driver, j->w->cuda, d->min_driver);
		free(subject);
	}
	if (j->vision && strcmp(sv_pin_version(j->w->vision_pin), j->vision) != 0) {
		char *subject = el_xasprintf("torchvision %s / torch %s", j->vision, j->torch);

		add(j, "stack-torchvision-pair", ENVLOCK_SEV_BREAKING, "frameworks", subject, j->w->source, NULL,
		    "torch %s's install command pairs it with %s, not torchvision %s", j->torch, j->w->vision_pin, j->vision);
		free(subject);
	}
}

/* The newest mmcv the stack's codebases accept with a wheel for its torch, as a pin: the fix of an mmcv that does not fit. */
static char *mmcv_fix(const judge *j)
{
	const el_kb_mmcv *best = NULL;
	size_t n;
	const el_kb_mmcv *m = el_kb_mmcv_releases(j->p->kb, &n);

	for (size_t i = n; i-- > 0 && !best;) {
		bool ok = !el_version_is_prerelease(m[i].version) && (!j->w || el_kb_mmcv_has_wheel(&m[i], j->w->torch, j->w->cuda));

		for (size_t k = 0; k < j->ncbs && ok; k++)
			ok = !j->cbs[k].g || el_kb_guard_accepts_mmcv(j->cbs[k].g, m[i].version);
		if (ok && j->ncbs)
			best = &m[i];
	}
	if (!best)
		return NULL;
	return j->w ? el_kb_mmcv_pip(j->p->kb, best, j->w->torch, j->w->cuda) : el_xasprintf("pin %s==%s", best->package, best->version);
}

static void judge_mmcv(judge *j)
{
	const el_kb *kb = j->p->kb;
	char *subject = el_xasprintf("%s %s", j->mmcv_package, j->mmcv);
	const el_kb_mmcv *other;

	j->m = el_kb_mmcv_find(kb, j->mmcv_package, j->mmcv);
	if (!j->m) {
		char *fix = mmcv_fix(j);
		size_t n;
		const el_kb_mmcv *all = el_kb_mmcv_releases(kb, &n);
		const el_kb_mmcv *last = NULL;

		for (size_t i = 0; i < n; i++)
			if (strcmp(all[i].package, j->mmcv_package) == 0 && !el_version_is_prerelease(all[i].version))
				last = &all[i];
		if ((other = el_kb_mmcv_find(kb, NULL, j->mmcv)) != NULL)
			add(j, "stack-release-unknown", ENVLOCK_SEV_BREAKING, "frameworks", subject, other->source, fix,
			    "%s %s is published as %s%s", j->mmcv_package, j->mmcv, other->package,
			    strcmp(other->package, "mmcv-full") == 0 ? ": mmcv 1.x is the package without the compiled ops" : "");
		else
			add(j, "stack-release-unknown", ENVLOCK_SEV_BREAKING, "frameworks", subject, last ? last->source : NULL, fix,
			    "%s %s was never released: the newest %s envlock knows is %s (mmcv's tags and its wheel lists, docs/en/_static/version.json)",
			    j->mmcv_package, j->mmcv, j->mmcv_package, last ? last->version : "none");
		free(fix);
	} else if (j->w && !el_kb_mmcv_has_wheel(j->m, j->w->torch, j->w->cuda)) {
		char *rel = el_kb_release(j->w->torch), *fix = mmcv_fix(j);
		bool can = false;

		for (size_t i = 0; j->w->cuda && i < j->p->m.nnvcc; i++) {
			char *nv = el_version_prefix(j->p->m.nvcc[i], 2);

			can = can || strcmp(nv, j->w->cuda) == 0;
			free(nv);
		}
		add(j, "stack-mmcv-wheel", can || !j->w->cuda ? ENVLOCK_SEV_RISKY : ENVLOCK_SEV_BREAKING, "frameworks", subject,
		    j->m->source, fix, "%s %s has no prebuilt wheel for %s%s and torch %s: pip builds it from source%s", j->mmcv_package,
		    j->mmcv, j->w->cuda ? "CUDA " : "the CPU", j->w->cuda ? j->w->cuda : "", rel,
		    can || !j->w->cuda ? "" : ", which needs an nvcc of that CUDA this machine does not have");
		free(rel);
		free(fix);
	}
	free(subject);
}

static void judge_codebases(judge *j)
{
	for (size_t i = 0; i < j->ncbs; i++) {
		const el_kb_codebase *cb = j->cbs[i].cb;
		char *subject = el_xasprintf("%s %s", cb->distribution, j->cbs[i].version), *range;
		const el_kb_guard *g = j->cbs[i].g;

		if (!g) {
			add(j, "stack-release-unknown", ENVLOCK_SEV_RISKY, "frameworks", subject, NULL, NULL,
			    "%s %s is not a release envlock knows: its mmcv range is not checked", cb->distribution, j->cbs[i].version);
		} else if (j->mmcv && !el_kb_guard_accepts_mmcv(g, j->mmcv)) {
			char *fix = mmcv_fix(j);

			range = el_kb_guard_range(g);
			add(j, "stack-guard", ENVLOCK_SEV_BREAKING, "frameworks", subject, g->source, fix,
			    "%s %s's __init__.py (at its release tag) asserts %s; %s %s fails it, and importing %s stops there",
			    cb->distribution, g->version, range, j->mmcv_package, j->mmcv, cb->package);
			free(range);
			free(fix);
		} else if (j->mmcv && j->mmcv_package && strcmp(j->mmcv_package, "mmcv") == 0 && el_version_major(j->mmcv) == 1) {
			add(j, "stack-mmcv-ops", ENVLOCK_SEV_BREAKING, "frameworks", subject, NULL, NULL,
			    "mmcv %s is the 1.x package without the compiled ops; %s needs mmcv-full %s", j->mmcv, cb->distribution, j->mmcv);
		}
		if (g && j->engine &&
		    ((g->mmengine_min && envlock_version_cmp(j->engine, g->mmengine_min) < 0) ||
		     (g->mmengine_max && (g->mmengine_max_inclusive ? envlock_version_cmp(j->engine, g->mmengine_max) > 0
								     : envlock_version_cmp(j->engine, g->mmengine_max) >= 0))))
			add(j, "stack-mmengine", ENVLOCK_SEV_BREAKING, "frameworks", subject, g->source, NULL,
			    "%s %s asserts mmengine %s%s%s%s%s; the stack pins mmengine %s", cb->distribution, g->version,
			    g->mmengine_min ? ">= " : "", g->mmengine_min ? g->mmengine_min : "", g->mmengine_max ? ", " : "",
			    g->mmengine_max ? (g->mmengine_max_inclusive ? "<= " : "< ") : "", g->mmengine_max ? g->mmengine_max : "",
			    j->engine);
		free(subject);
	}
}

int envlock_solve_check(envlock_findings **out, envlock_ctx *ctx, const envlock_lock *lock, const char *stack,
			const envlock_solve_opts *opts)
{
	envlock_solution *sol = el_xcalloc(1, sizeof(*sol));
	judge j;
	char *text = el_xstrdup(stack);
	int rc;

	*out = NULL;
	/* the machine as solve reads it, with nothing asked for: the stack is the question */
	sol->opts = *opts;
	sol->opts.nspecs = sol->opts.nconfigs = 0;
	sol->opts.python = NULL;
	sol->opts.cpu = 1; /* a lock with no GPU facts is judged as a CPU machine */
	sol->p.opts = &sol->opts;
	if ((rc = sv_solution_init(sol, ctx, lock)) != 0) {
		envlock_solution_free(sol);
		free(text);
		return rc;
	}
	memset(&j, 0, sizeof(j));
	j.p = &sol->p;
	j.f = el_xcalloc(1, sizeof(*j.f));
	if ((rc = parse_stack(&j, ctx, text)) != 0) {
		free(j.f);
		envlock_solution_free(sol);
		free(text);
		return rc;
	}
	for (size_t i = 0; i < j.ncbs; i++)
		j.cbs[i].g = el_kb_guard_find(sol->p.kb, j.cbs[i].cb->package, j.cbs[i].version);
	j.fix = solve_fix(&j, true);
	if (j.torch)
		judge_torch(&j);
	if (j.mmcv)
		judge_mmcv(&j);
	judge_codebases(&j);
	el_findings_sort(j.f);
	*out = j.f;
	free(j.fix);
	envlock_solution_free(sol);
	free(text);
	return 0;
}
