/* envlock solve: the problem from a lock and the options, the search, the stacks, and writing one out. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "lock/model.h"
#include "solve.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/xalloc.h"


/* "3.7", "3.10": a Python release as the python option takes it. */
static bool python_release(const char *s)
{
	size_t a = strspn(s, "0123456789");

	return a > 0 && s[a] == '.' && strspn(s + a + 1, "0123456789") > 0 && s[a + 1 + strspn(s + a + 1, "0123456789")] == '\0';
}

/* Add a parsed request, merging it into an earlier one for the same package (both specs then apply). */
static void add_request(sv_problem *p, sv_request *r)
{
	for (size_t i = 0; i < p->nreq; i++) {
		sv_request *o = &p->req[i];
		char *spec;

		if (o->kind != r->kind || o->codebase != r->codebase || (r->kind == SV_MMCV && o->package != r->package))
			continue;
		spec = el_xasprintf("%s%s%s", o->spec, *o->spec && *r->spec ? "," : "", r->spec);
		free(o->spec);
		o->spec = spec;
		o->pinned = o->pinned || r->pinned;
		sv_request_release(r);
		return;
	}
	p->req[p->nreq++] = *r;
}

int sv_solution_init(envlock_solution *sol, envlock_ctx *ctx, const envlock_lock *lock)
{
	sv_problem *p = &sol->p;
	const envlock_solve_opts *o = p->opts;
	int rc;

	p->kb = el_kb_builtin();
	p->view = el_lock_view(lock);
	sv_machine_read(&p->m, p->view);
	sv_pythons_build(p);
	if (o->python) {
		bool known = false;

		if (!python_release(o->python))
			return el_error_set(ctx, ENVLOCK_EINVAL, "%s '%s': not a Python release (3.7, 3.10)", sv_opt(p, "python"), o->python);
		for (size_t i = 0; i < p->npythons; i++)
			known = known || strcmp(p->pythons[i], o->python) == 0;
		if (!known)
			return el_error_set(ctx, ENVLOCK_EINVAL, "%s %s: no torch release envlock knows has wheels for Python %s",
					    sv_opt(p, "python"), o->python, o->python);
	}
	for (size_t i = 0; i < o->nspecs; i++) {
		sv_request r;
		char *origin = el_xasprintf("%s %s", sv_opt(p, "specs"), o->specs[i]);

		if (p->nreq >= SV_MAX_REQUESTS) {
			free(origin);
			return el_error_set(ctx, ENVLOCK_ELIMIT, "more than %d packages to plan for", SV_MAX_REQUESTS);
		}
		rc = sv_request_parse(&r, ctx, p, o->specs[i], origin);
		free(origin);
		if (rc != 0) {
			sv_request_release(&r);
			return rc;
		}
		add_request(p, &r);
	}
	for (size_t i = 0; i < o->nconfigs; i++) {
		sv_request reqs[SV_MAX_REQUESTS];
		size_t n = 0;

		if ((rc = sv_config_requests(reqs, &n, ctx, p, o->configs[i])) != 0)
			return rc;
		for (size_t k = 0; k < n; k++) {
			if (p->nreq < SV_MAX_REQUESTS)
				add_request(p, &reqs[k]);
			else
				sv_request_release(&reqs[k]);
		}
	}
	for (size_t i = 0; i < p->nreq; i++)
		p->needs_mmcv = p->needs_mmcv || p->req[i].kind == SV_CODEBASE || p->req[i].kind == SV_MMCV ||
				p->req[i].kind == SV_MMENGINE;
	if (!p->m.gpu_recorded && !o->cpu)
		return el_error_set(ctx, ENVLOCK_EINVAL,
				    "the lock records nothing of the GPU (a partial lock made by envlock import?): solve needs the driver and GPUs of a saved lock, or %s for CPU stacks",
				    sv_opt(p, "cpu"));
	sv_problem_prepare(p);
	p->gpu = !o->cpu && (p->m.driver || p->m.ngpus);
	if (o->allow_driver_upgrade && p->gpu)
		p->m.driver_branch = sv_newest_branch(&p->m, p->kb);
	return 0;
}

int envlock_solve(envlock_solution **out, envlock_ctx *ctx, const envlock_lock *lock, const envlock_solve_opts *opts)
{
	envlock_solution *sol = el_xcalloc(1, sizeof(*sol));
	sv_result r;
	size_t max;
	int rc;

	*out = NULL;
	sol->opts = *opts;
	sol->p.opts = &sol->opts;
	if ((rc = sv_solution_init(sol, ctx, lock)) != 0) {
		envlock_solution_free(sol);
		return rc;
	}
	sol->from = sol->p.m.host ? sol->p.m.host : "this machine";
	sv_search(&sol->p, &r);
	max = opts->max_stacks ? opts->max_stacks : 3;
	sol->nstacks = r.n < max ? r.n : max;
	sol->stacks = el_xcalloc(sol->nstacks + 1, sizeof(*sol->stacks));
	for (size_t i = 0; i < sol->nstacks; i++)
		sv_stack_build(&sol->stacks[i], &sol->p, &r.v[i]);
	if (!r.n)
		sv_none_explain(&sol->none, &sol->p, &r);
	sv_result_release(&r);
	*out = sol;
	return 0;
}

size_t envlock_solution_count(const envlock_solution *s)
{
	return s ? s->nstacks : 0;
}

int envlock_solution_write(const envlock_solution *s, envlock_ctx *ctx, size_t pick, const char *format, const char *path)
{
	bool script = !format || strcmp(format, "script") == 0;
	char *text;
	int rc;

	if (!script && strcmp(format, "requirements") != 0)
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s '%s': script or requirements", sv_opt(&s->p, "format"), format);
	if (pick < 1 || pick > s->nstacks)
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s %zu: the plan has %zu stack%s", sv_opt(&s->p, "pick"), pick, s->nstacks,
				    s->nstacks == 1 ? "" : "s");
	text = script ? sv_script(&s->p, &s->stacks[pick - 1], pick, s->nstacks)
		      : sv_requirements(&s->p, &s->stacks[pick - 1], pick, s->nstacks);
	if (!text)
		return el_error_set(ctx, ENVLOCK_ELIMIT, "%s: the %s is longer than %zu bytes", path,
				    script ? "install script" : "requirements file", SV_SCRIPT_MAX);
	if (strcmp(path, "-") == 0)
		rc = el_write_output(ctx, path, text, strlen(text));
	else
		rc = el_write_atomic(ctx, path, text, strlen(text), script ? 0755 : 0644);
	free(text);
	return rc;
}

void envlock_solution_free(envlock_solution *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nstacks; i++)
		sv_stack_release(&s->stacks[i]);
	free(s->stacks);
	sv_none_release(&s->none);
	for (size_t i = 0; i < s->p.nreq; i++)
		sv_request_release(&s->p.req[i]);
	for (size_t i = 0; i < s->p.npythons; i++)
		free(s->p.pythons[i]);
	free(s->p.pythons);
	sv_machine_release(&s->p.m);
	sv_problem_release(&s->p);
	free(s);
}
