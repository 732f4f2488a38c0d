/* PyTorch's knowledge: each release's wheels, Python range, GPU code, glibc and cuDNN. */
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "internal.h"
#include "lock/model.h"
#include "util/version.h"
#include "util/xalloc.h"

/* The pin of package among a row's pins ("torch==1.10.0+cu102"), or a fatal line. */
static const char *pin_of(const el_kb_list *pins, const char *package, const char *torch)
{
	size_t n = strlen(package);

	for (size_t i = 0; i < pins->n; i++)
		if (strncmp(pins->v[i], package, n) == 0 && strncmp(pins->v[i] + n, "==", 2) == 0)
			return pins->v[i];
	el_kb_fatal("torch_wheels: torch %s has no %s pin", torch, package);
}

/* Newest release first; within one, newest CUDA first and CPU last. */
static int wheel_order(const void *a, const void *b)
{
	const el_kb_torch_wheel *x = a, *y = b;
	int c = envlock_version_cmp(y->torch, x->torch);

	if (c)
		return c;
	if (!x->cuda || !y->cuda)
		return (x->cuda == NULL) - (y->cuda == NULL);
	return envlock_version_cmp(y->cuda, x->cuda);
}

static bool wheels_built;

static void build_wheels(el_kb *kb)
{
	const cJSON *t, *row;

	kb->wheels = el_kb_rows(kb, "torch_wheels", sizeof(*kb->wheels), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_torch_wheel *w = &kb->wheels[kb->nwheels++];
		el_kb_list pins = el_kb_strings(row, "pins", "torch_wheels");

		w->torch = el_kb_need_str(row, "torch", "torch_wheels");
		w->variant = el_kb_need_str(row, "variant", "torch_wheels");
		w->cuda = el_jget_str(row, "cuda");
		w->torch_pin = pin_of(&pins, "torch", w->torch);
		w->vision_pin = pin_of(&pins, "torchvision", w->torch);
		w->index_option = el_jget_str(row, "index_option");
		w->index_url = el_jget_str(row, "index_url");
		w->source = el_kb_row_source(t, row);
		if ((strcmp(w->variant, "cpu") == 0) != (w->cuda == NULL))
			el_kb_fatal("torch_wheels: torch %s %s: a cpu variant has no cuda, every other one has", w->torch, w->variant);
		if (!w->index_option != !w->index_url)
			el_kb_fatal("torch_wheels: torch %s %s: index_option and index_url go together", w->torch, w->variant);
		free((void *)pins.v);
	}
	qsort(kb->wheels, kb->nwheels, sizeof(*kb->wheels), wheel_order);
}

static bool pythons_built;

static void build_pythons(el_kb *kb)
{
	const cJSON *t, *row;

	kb->pythons = el_kb_rows(kb, "torch_python", sizeof(*kb->pythons), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_torch_python *p = &kb->pythons[kb->npythons++];

		p->torch = el_kb_need_str(row, "torch", "torch_python");
		p->python_min = el_kb_need_str(row, "python_min", "torch_python");
		p->python_max = el_kb_need_str(row, "python_max", "torch_python");
		p->source = el_kb_row_source(t, row);
	}
}

static bool archs_built;

static void build_archs(el_kb *kb)
{
	const cJSON *t, *row;

	kb->archs = el_kb_rows(kb, "torch_arch", sizeof(*kb->archs), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_torch_arch *a = &kb->archs[kb->narchs++];

		a->torch = el_kb_need_str(row, "torch", "torch_arch");
		a->cuda = el_kb_strings(row, "cuda", "torch_arch");
		a->sm = el_kb_strings(row, "sm", "torch_arch");
		a->ptx = el_kb_strings(row, "ptx", "torch_arch");
		a->source = el_kb_row_source(t, row);
	}
}

static bool glibcs_built;

static void build_glibcs(el_kb *kb)
{
	const cJSON *t, *row;

	kb->glibcs = el_kb_rows(kb, "torch_glibc", sizeof(*kb->glibcs), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_torch_glibc *g = &kb->glibcs[kb->nglibcs++];

		g->torch = el_kb_need_str(row, "torch", "torch_glibc");
		g->variants = el_kb_strings(row, "variants", "torch_glibc");
		g->glibc = el_kb_need_str(row, "glibc", "torch_glibc");
		g->tag = el_jget_str(row, "tag");
		g->source = el_kb_row_source(t, row);
	}
}

static bool cudnns_built;

static void build_cudnns(el_kb *kb)
{
	const cJSON *t, *row;

	kb->cudnns = el_kb_rows(kb, "torch_cudnn", sizeof(*kb->cudnns), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_torch_cudnn *c = &kb->cudnns[kb->ncudnns++];

		c->torch = el_kb_need_str(row, "torch", "torch_cudnn");
		c->cuda = el_kb_need_str(row, "cuda", "torch_cudnn");
		c->cudnn = el_kb_need_str(row, "cudnn", "torch_cudnn");
		c->source = el_kb_row_source(t, row);
	}
}

const el_kb_torch_wheel *el_kb_torch_wheels(const el_kb *kb, size_t *n)
{
	kb = el_kb_ready(kb, &wheels_built, build_wheels);
	*n = kb->nwheels;
	return kb->wheels;
}

const el_kb_torch_wheel *el_kb_torch_wheel_find(const el_kb *kb, const char *torch, const char *variant)
{
	kb = el_kb_ready(kb, &wheels_built, build_wheels);
	for (size_t i = 0; torch && variant && i < kb->nwheels; i++)
		if (strcmp(kb->wheels[i].variant, variant) == 0 && envlock_version_cmp(kb->wheels[i].torch, torch) == 0)
			return &kb->wheels[i];
	return NULL;
}

const el_kb_torch_python *el_kb_torch_pythons(const el_kb *kb, size_t *n)
{
	kb = el_kb_ready(kb, &pythons_built, build_pythons);
	*n = kb->npythons;
	return kb->pythons;
}

const el_kb_torch_python *el_kb_torch_python_of(const el_kb *kb, const char *torch)
{
	kb = el_kb_ready(kb, &pythons_built, build_pythons);
	for (size_t i = 0; torch && i < kb->npythons; i++)
		if (el_version_in_release(torch, kb->pythons[i].torch))
			return &kb->pythons[i];
	return NULL;
}

/* Is release (a CUDA "11.3") in the list, compared by release? */
static bool list_has_release(const el_kb_list *l, const char *v)
{
	for (size_t i = 0; i < l->n; i++)
		if (el_version_in_release(v, l->v[i]))
			return true;
	return false;
}

const el_kb_torch_arch *el_kb_torch_arch_of(const el_kb *kb, const char *torch, const char *cuda)
{
	kb = el_kb_ready(kb, &archs_built, build_archs);
	for (size_t i = 0; torch && cuda && i < kb->narchs; i++)
		if (el_version_in_release(torch, kb->archs[i].torch) && list_has_release(&kb->archs[i].cuda, cuda))
			return &kb->archs[i];
	return NULL;
}

const el_kb_torch_glibc *el_kb_torch_glibc_of(const el_kb *kb, const char *torch, const char *variant)
{
	const el_kb_torch_glibc *any = NULL;

	kb = el_kb_ready(kb, &glibcs_built, build_glibcs);
	for (size_t i = 0; torch && i < kb->nglibcs; i++) {
		const el_kb_torch_glibc *g = &kb->glibcs[i];

		if (!el_version_in_release(torch, g->torch))
			continue;
		if (!g->variants.n) {
			any = any ? any : g;
			continue;
		}
		for (size_t k = 0; variant && k < g->variants.n; k++)
			if (strcmp(g->variants.v[k], variant) == 0)
				return g;
	}
	return any;
}

const el_kb_torch_cudnn *el_kb_torch_cudnn_of(const el_kb *kb, const char *torch, const char *cuda)
{
	kb = el_kb_ready(kb, &cudnns_built, build_cudnns);
	for (size_t i = 0; torch && cuda && i < kb->ncudnns; i++)
		if (el_version_in_release(torch, kb->cudnns[i].torch) && el_version_in_release(cuda, kb->cudnns[i].cuda))
			return &kb->cudnns[i];
	return NULL;
}

void el_kb_torch_sources(const el_kb *kb, const char **pip_host, const char **conda_package)
{
	const cJSON *row = cJSON_GetArrayItem(el_jget(el_kb_need_table(kb, "torch_sources"), "rows"), 0);

	*pip_host = el_jget_str(row, "pip_host");
	*conda_package = el_jget_str(row, "conda_package");
}

char *el_kb_torch_index_url(const el_kb *kb, const char *variant, const char **source)
{
	const cJSON *t = el_kb_need_table(kb, "torch_sources"), *row = cJSON_GetArrayItem(el_jget(t, "rows"), 0);
	const char *tmpl = el_kb_need_str(row, "pip_index", "torch_sources"), *at = strstr(tmpl, "{variant}");

	if (source)
		*source = el_kb_row_source(t, row);
	if (!at)
		return el_xstrdup(tmpl);
	return el_xasprintf("%.*s%s%s", (int)(at - tmpl), tmpl, variant, at + strlen("{variant}"));
}
