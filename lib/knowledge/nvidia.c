/* NVIDIA's knowledge: CUDA -> driver, nvcc -> gcc, GPU -> compute capability and architecture, where code runs. */
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "internal.h"
#include "lock/model.h"
#include "util/version.h"
#include "util/xalloc.h"

static bool drivers_built;

static void build_drivers(el_kb *kb)
{
	const cJSON *t, *row;

	kb->drivers = el_kb_rows(kb, "cuda_driver", sizeof(*kb->drivers), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_cuda_driver *d = &kb->drivers[kb->ndrivers++];

		d->cuda = el_kb_need_str(row, "cuda", "cuda_driver");
		d->toolkit = el_jget_str(row, "toolkit");
		d->min_driver = el_kb_need_str(row, "min_driver", "cuda_driver");
		d->minor_compat_driver = el_jget_str(row, "minor_compat_driver");
		d->source = el_kb_row_source(t, row);
	}
}

static bool gpu_archs_built;

static void build_gpu_archs(el_kb *kb)
{
	const cJSON *t, *row;

	kb->gpu_archs = el_kb_rows(kb, "gpu_architectures", sizeof(*kb->gpu_archs), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_gpu_arch *a = &kb->gpu_archs[kb->ngpu_archs++];

		a->name = el_kb_need_str(row, "architecture", "gpu_architectures");
		a->compute_capabilities = el_kb_strings(row, "compute_capabilities", "gpu_architectures");
		a->first_branch = (long)el_jget_int(row, "first_driver_branch", -1);
		a->last_branch = (long)el_jget_int(row, "last_driver_branch", -1);
		a->source = el_kb_row_source(t, row);
		if (a->first_branch < 0)
			el_kb_fatal("gpu_architectures: %s has no first_driver_branch", a->name);
	}
}

const el_kb_cuda_driver *el_kb_cuda_driver_of(const el_kb *kb, const char *cuda)
{
	char *rel = cuda ? el_version_prefix(cuda, 2) : NULL;
	const el_kb_cuda_driver *found = NULL;

	kb = el_kb_ready(kb, &drivers_built, build_drivers);
	/* the first row of a release is its first toolkit: a build of the release needs no more */
	for (size_t i = 0; rel && i < kb->ndrivers && !found; i++)
		if (strcmp(kb->drivers[i].cuda, rel) == 0)
			found = &kb->drivers[i];
	free(rel);
	return found;
}

const char *el_kb_newest_driver(const el_kb *kb)
{
	const char *best = NULL;

	kb = el_kb_ready(kb, &drivers_built, build_drivers);
	for (size_t i = 0; i < kb->ndrivers; i++)
		if (!best || envlock_version_cmp(kb->drivers[i].min_driver, best) > 0)
			best = kb->drivers[i].min_driver;
	return best;
}

long el_kb_nvcc_max_gcc(const el_kb *kb, const char *cuda, const char **source)
{
	return el_kb_nvcc_max_gcc_in(el_kb_need_table(kb, "nvcc_gcc"), cuda, source);
}

long el_kb_nvcc_max_gcc_in(const cJSON *t, const char *cuda, const char **source)
{
	const cJSON *row;
	char *rel = cuda ? el_version_prefix(cuda, 2) : NULL;
	long max = -1;

	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		const cJSON *m = el_jget(row, "max_gcc");

		if (!rel || !el_jget_str(row, "cuda") || strcmp(el_jget_str(row, "cuda"), rel) != 0)
			continue;
		/* a gcc major from a rules file: in range before the cast */
		if (cJSON_IsNumber(m) && m->valuedouble >= 0 && m->valuedouble < 1000) {
			max = (long)m->valuedouble;
			if (source)
				*source = el_kb_row_source(t, row);
		}
		break;
	}
	free(rel);
	return max;
}

const char *el_kb_gpu_compute_capability(const el_kb *kb, const char *name, const char **source)
{
	return el_kb_gpu_cc_in(el_kb_need_table(kb, "gpu_compute_capability"), name, source);
}

const char *el_kb_gpu_cc_in(const cJSON *t, const char *name, const char **source)
{
	const cJSON *row, *best = NULL;
	size_t best_len = 0;

	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		const char *m = el_jget_str(row, "match");
		size_t n = m ? strlen(m) : 0;

		if (name && n > best_len && strstr(name, m)) {
			best = row;
			best_len = n;
		}
	}
	if (!best)
		return NULL;
	if (source)
		*source = el_kb_row_source(t, best);
	return el_jget_str(best, "compute_capability");
}

const el_kb_gpu_arch *el_kb_gpu_arch_of(const el_kb *kb, const char *cc)
{
	kb = el_kb_ready(kb, &gpu_archs_built, build_gpu_archs);
	for (size_t i = 0; cc && i < kb->ngpu_archs; i++)
		for (size_t k = 0; k < kb->gpu_archs[i].compute_capabilities.n; k++)
			if (envlock_version_cmp(kb->gpu_archs[i].compute_capabilities.v[k], cc) == 0)
				return &kb->gpu_archs[i];
	return NULL;
}

const char *el_kb_code_runs_on(const el_kb_list *sm, const el_kb_list *ptx, const char *cc, bool *is_ptx)
{
	const char *best = NULL;

	/* a cubin: the same major, the same or a lower minor; the highest such is what the driver loads */
	for (size_t i = 0; cc && i < sm->n; i++)
		if (el_version_major(sm->v[i]) == el_version_major(cc) && envlock_version_cmp(sm->v[i], cc) <= 0 &&
		    (!best || envlock_version_cmp(sm->v[i], best) > 0))
			best = sm->v[i];
	if (best) {
		*is_ptx = false;
		return best;
	}
	for (size_t i = 0; cc && ptx && i < ptx->n; i++)
		if (envlock_version_cmp(ptx->v[i], cc) <= 0 && (!best || envlock_version_cmp(ptx->v[i], best) > 0))
			best = ptx->v[i];
	*is_ptx = best != NULL;
	return best;
}

const char *el_kb_code_rule_source(const el_kb *kb, const char *code)
{
	const cJSON *t = el_kb_need_table(kb, "gpu_code_compatibility"), *row;

	cJSON_ArrayForEach(row, el_jget(t, "rows"))
		if (el_jget_str(row, "code") && strcmp(el_jget_str(row, "code"), code) == 0)
			return el_kb_row_source(t, row);
	return NULL;
}

const char *el_kb_nvidia_archive(const el_kb *kb, const char *product)
{
	const cJSON *row;

	cJSON_ArrayForEach(row, el_jget(el_kb_need_table(kb, "nvidia_archives"), "rows"))
		if (strcmp(el_jget_str(row, "product") ?: "", product) == 0)
			return el_jget_str(row, "url");
	return NULL;
}
