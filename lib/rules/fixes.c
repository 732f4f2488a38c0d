/*
 * Fixes a user can paste: commands made from envlock's knowledge for what
 * a lock has (its torch and CUDA, its mmcv family), never written in C.
 * Each returns a malloc'd line, or NULL when the knowledge has nothing
 * to say; the rule then falls back to its "fix_fallback" text.
 */
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "knowledge/knowledge.h"
#include "rules.h"
#include "util/buf.h"
#include "util/version.h"
#include "util/xalloc.h"

char *el_torch_cuda(const el_framework *t)
{
	return t->cuda ? el_xstrdup(t->cuda) : el_version_local_cuda(t->version);
}

/* torch's version without its local part ("1.10.0+cu102" -> "1.10.0"); malloc'd. */
static char *public_version(const char *v)
{
	return el_xstrndup(v, strcspn(v, "+"));
}

char *el_fix_mmcv_range(const el_view *v, const char *framework, const char *lo, const char *hi, bool incl)
{
	const el_kb *kb = el_kb_builtin();
	const el_framework *t = el_view_framework(v, "torch"), *mmcv = el_view_framework(v, "mmcv");
	const el_framework *fw = el_view_framework(v, framework);
	const el_kb_codebase *cb = el_kb_codebase_find(kb, framework);
	const char *torch = t && t->st.present ? t->version : NULL;
	char *cuda = torch ? el_torch_cuda(t) : NULL, *tv = torch ? public_version(torch) : NULL;
	const el_kb_mmcv *m = el_kb_mmcv_newest(kb, lo, hi, incl, tv, cuda);
	const el_kb_guard *other = NULL;
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a command and fixed words round the knowledge's and the lock's versions");

	/* no prebuilt wheel for this torch: the newest release in range, which pip builds */
	if (!m)
		m = el_kb_mmcv_newest(kb, lo, hi, incl, NULL, NULL);
	if (m) {
		char *cmd = el_kb_mmcv_pip(kb, m, tv, cuda);

		el_buf_adds(&b, cmd);
		if (tv && !el_kb_mmcv_has_wheel(m, tv, cuda))
			el_buf_addf(&b, " (no prebuilt %s wheel of that range for torch %s%s%s: pip builds it)", m->package,
				      tv, cuda ? " with CUDA " : "", cuda ? cuda : "");
		free(cmd);
	}
	if (cb && mmcv && mmcv->version && (other = el_kb_newest_accepting(kb, cb->package, mmcv->version)) != NULL &&
	    (!fw || !fw->version || envlock_version_cmp(other->version, fw->version) != 0))
		el_buf_addf(&b, "%spip install %s==%s, the newest %s that accepts %s %s (%s)", b.len ? "; or keep it and " : "",
			      cb->distribution, other->version, cb->package, mmcv->package ? mmcv->package : "mmcv",
			      mmcv->version, other->source);
	free(cuda);
	free(tv);
	if (!b.len) {
		el_buf_release(&b);
		return NULL;
	}
	return el_buf_detach(&b);
}

char *el_fix_mmcv_wheel(const char *package, const char *version, const char *torch, const char *cuda)
{
	const el_kb *kb = el_kb_builtin();
	const el_kb_mmcv *m = version && torch ? el_kb_mmcv_find(kb, package, version) : NULL;
	char *tv, *cmd;

	if (!m)
		return NULL;
	tv = public_version(torch);
	cmd = el_kb_mmcv_has_wheel(m, tv, cuda) ? el_kb_mmcv_pip(kb, m, tv, cuda) : NULL;
	free(tv);
	return cmd;
}

char *el_fix_mmcv_reinstall(const el_view *v)
{
	const el_framework *t = el_view_framework(v, "torch"), *mmcv = el_view_framework(v, "mmcv");
	char *cuda, *cmd;

	if (!t || !t->st.present || !t->version || !mmcv || !mmcv->st.present || !mmcv->version)
		return NULL;
	cuda = el_torch_cuda(t);
	cmd = el_fix_mmcv_wheel(NULL, mmcv->version, t->version, cuda);
	free(cuda);
	return cmd;
}

/* The driver meets a CUDA release: 2 natively, 1 through minor-version compatibility, 0 not, -1 unknown. */
static int driver_runs(const el_kb *kb, const char *driver, const char *cuda)
{
	const el_kb_cuda_driver *d = el_kb_cuda_driver_of(kb, cuda);

	if (!driver || !d)
		return -1;
	if (envlock_version_cmp(driver, d->min_driver) >= 0)
		return 2;
	return d->minor_compat_driver && envlock_version_cmp(driver, d->minor_compat_driver) >= 0;
}

/*
 * The CUDA build of torch t's release that this driver runs (natively
 * before minor-version compatibility, newest CUDA first) and, when cc is
 * given, whose GPU code runs on compute capability cc.
 */
static char *same_release_cuda_build(const el_view *v, const el_framework *t, const char *cc)
{
	const el_kb *kb = el_kb_builtin();
	const char *driver = v->gpu.driver.st.present ? v->gpu.driver.version : NULL;
	char *tv = public_version(t->version);
	const el_kb_torch_wheel *best = NULL;
	int best_fit = -2;
	size_t n;
	const el_kb_torch_wheel *w = el_kb_torch_wheels(kb, &n);

	for (size_t i = 0; i < n; i++) {
		const el_kb_torch_arch *a;
		bool is_ptx;
		int fit;

		if (!w[i].cuda || envlock_version_cmp(w[i].torch, tv) != 0)
			continue;
		if (cc && (!(a = el_kb_torch_arch_of(kb, w[i].torch, w[i].cuda)) ||
			   !el_kb_code_runs_on(&a->sm, &a->ptx, cc, &is_ptx)))
			continue;
		fit = driver_runs(kb, driver, w[i].cuda);
		if (fit != 0 && fit > best_fit) {
			best = &w[i];
			best_fit = fit;
		}
	}
	free(tv);
	return best ? el_kb_torch_pip(best) : NULL;
}

char *el_fix_torch_build(const char *torch, const char *cuda)
{
	const el_kb *kb = el_kb_builtin();
	char *tv = public_version(torch);
	size_t n;
	const el_kb_torch_wheel *w = el_kb_torch_wheels(kb, &n), *hit = NULL;

	for (size_t i = 0; i < n && !hit; i++)
		if (w[i].cuda && envlock_version_cmp(w[i].torch, tv) == 0 && envlock_version_cmp(w[i].cuda, cuda) == 0)
			hit = &w[i];
	free(tv);
	return hit ? el_kb_torch_pip(hit) : NULL;
}

char *el_fix_torch_cpu(const el_view *v, const el_framework *t)
{
	return same_release_cuda_build(v, t, NULL);
}

char *el_fix_torch_arch(const el_view *v, const el_framework *t, const char *cc)
{
	char *cmd = same_release_cuda_build(v, t, cc);
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "an option per framework of the lock, and a compute capability");

	if (cmd)
		return cmd;
	/* no build of this release has code for the GPU: a plan of the whole stack, for what is installed */
	el_buf_adds(&b, "envlock solve");
	for (size_t i = 0; i < EL_FW_COUNT; i++) {
		const el_framework *fw = &v->frameworks[i];

		if ((fw->info->flags & EL_FW_OPENMMLAB) && strcmp(fw->info->key, "mmcv") != 0 &&
		    strcmp(fw->info->key, "mmengine") != 0 && fw->st.present && fw->version)
			el_buf_addf(&b, " --for %s==%s", fw->info->dists[0], fw->version);
	}
	if (strcmp(el_buf_cstr(&b), "envlock solve") == 0)
		el_buf_adds(&b, " --for torch");
	el_buf_addf(&b, " plans a torch whose wheels have code for compute capability %s", cc);
	return el_buf_detach(&b);
}

char *el_fix_codebase(const el_view *v, const char *distribution)
{
	const el_kb *kb = el_kb_builtin();
	const el_kb_codebase *cb = el_kb_codebase_find(kb, distribution);
	const el_framework *mmcv = el_view_framework(v, "mmcv");
	const el_kb_guard *g;
	size_t n;

	if (!cb || !el_kb_guards(kb, cb->package, &n))
		return NULL;
	if (!mmcv || !mmcv->st.present || !mmcv->version)
		return el_xasprintf("envlock solve --for %s plans the torch, mmcv and %s to install together", cb->distribution,
				    cb->distribution);
	if ((g = el_kb_newest_accepting(kb, cb->package, mmcv->version)) != NULL)
		return el_xasprintf("pip install %s==%s, the newest %s that accepts %s %s (%s)", cb->distribution, g->version,
				    cb->package, mmcv->package ? mmcv->package : "mmcv", mmcv->version, g->source);
	return el_xasprintf("no %s release accepts %s %s: envlock solve --for %s plans a stack that has it", cb->distribution,
			    mmcv->package ? mmcv->package : "mmcv", mmcv->version, cb->distribution);
}
