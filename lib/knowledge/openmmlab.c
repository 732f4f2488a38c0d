/* OpenMMLab's knowledge: codebases, the guards of their releases, mmcv's releases and wheels. */
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "internal.h"
#include "lock/model.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/version.h"
#include "util/xalloc.h"

static int guard_order(const void *a, const void *b)
{
	const el_kb_guard *x = a, *y = b;
	int c = strcmp(x->package, y->package);

	return c ? c : envlock_version_cmp(x->version, y->version);
}

static int mmcv_order(const void *a, const void *b)
{
	const el_kb_mmcv *x = a, *y = b;

	return envlock_version_cmp(x->version, y->version);
}

static bool opt_bool(const cJSON *row, const char *key)
{
	return cJSON_IsTrue(el_jget(row, key));
}

static bool codebases_built;

static void build_codebases(el_kb *kb)
{
	const cJSON *t, *row;

	kb->codebases = el_kb_rows(kb, "openmmlab_codebases", sizeof(*kb->codebases), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_codebase *c = &kb->codebases[kb->ncodebases++];

		c->package = el_kb_need_str(row, "package", "openmmlab_codebases");
		c->distribution = el_kb_need_str(row, "distribution", "openmmlab_codebases");
		c->aliases = el_kb_strings(row, "aliases", "openmmlab_codebases");
		c->source = el_kb_row_source(t, row);
	}
}

static bool guards_built;

static void build_guards(el_kb *kb)
{
	const cJSON *t, *row;

	kb->guards = el_kb_rows(kb, "openmmlab_guards", sizeof(*kb->guards), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_guard *g = &kb->guards[kb->nguards++];

		g->package = el_kb_need_str(row, "package", "openmmlab_guards");
		g->version = el_kb_need_str(row, "version", "openmmlab_guards");
		g->mmcv_min = el_jget_str(row, "mmcv_min");
		g->mmcv_max = el_jget_str(row, "mmcv_max");
		g->mmcv_max_inclusive = opt_bool(row, "mmcv_max_inclusive");
		g->mmengine_min = el_jget_str(row, "mmengine_min");
		g->mmengine_max = el_jget_str(row, "mmengine_max");
		g->mmengine_max_inclusive = opt_bool(row, "mmengine_max_inclusive");
		g->source = el_kb_row_source(t, row);
	}
	qsort(kb->guards, kb->nguards, sizeof(*kb->guards), guard_order);
}

static bool mmcv_built;

static void build_mmcv(el_kb *kb)
{
	const cJSON *t, *row, *w;
	size_t i;

	kb->mmcv = el_kb_rows(kb, "mmcv_releases", sizeof(*kb->mmcv), &t);
	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		el_kb_mmcv *m = &kb->mmcv[kb->nmmcv++];
		el_kb_wheel *wheels;

		m->package = el_kb_need_str(row, "package", "mmcv_releases");
		m->version = el_kb_need_str(row, "version", "mmcv_releases");
		m->source = el_kb_row_source(t, row);
		/* {"<cuda or cpu>": ["<torch>.x", ...], ...}: counted, then read in order */
		i = 0;
		cJSON_ArrayForEach(w, el_jget(row, "wheels"))
			i += (size_t)cJSON_GetArraySize(w);
		wheels = el_xcalloc(i + 1, sizeof(*wheels));
		i = 0;
		if (!cJSON_IsObject(el_jget(row, "wheels")))
			el_kb_fatal("mmcv_releases: the wheels of %s %s are not {cuda: [torch, ...]}", m->package, m->version);
		cJSON_ArrayForEach(w, el_jget(row, "wheels")) {
			const cJSON *tv;

			if (!cJSON_IsArray(w))
				el_kb_fatal("mmcv_releases: the wheels of %s %s for %s are not a list", m->package, m->version, w->string);
			cJSON_ArrayForEach(tv, w) {
				if (!cJSON_IsString(tv))
					el_kb_fatal("mmcv_releases: a wheel of %s %s for %s is not a torch release", m->package, m->version, w->string);
				wheels[i].cuda = w->string;
				wheels[i++].torch = tv->valuestring;
			}
		}
		m->wheels = wheels;
		m->nwheels = i;
	}
	qsort(kb->mmcv, kb->nmmcv, sizeof(*kb->mmcv), mmcv_order);
}

static bool name_is(const char *given, const char *name)
{
	char *a = el_pep503_name(given), *b = el_pep503_name(name);
	bool same = strcmp(a, b) == 0;

	free(a);
	free(b);
	return same;
}

const el_kb_codebase *el_kb_codebase_find(const el_kb *kb, const char *name)
{
	kb = el_kb_ready(kb, &codebases_built, build_codebases);
	for (size_t i = 0; name && i < kb->ncodebases; i++) {
		const el_kb_codebase *c = &kb->codebases[i];

		if (name_is(name, c->package) || name_is(name, c->distribution))
			return c;
		for (size_t k = 0; k < c->aliases.n; k++)
			if (name_is(name, c->aliases.v[k]))
				return c;
	}
	return NULL;
}

const el_kb_codebase *el_kb_codebases(const el_kb *kb, size_t *n)
{
	kb = el_kb_ready(kb, &codebases_built, build_codebases);
	*n = kb->ncodebases;
	return kb->codebases;
}

const el_kb_guard *el_kb_guards(const el_kb *kb, const char *package, size_t *n)
{
	size_t i = 0, k;

	kb = el_kb_ready(kb, &guards_built, build_guards);
	while (i < kb->nguards && strcmp(kb->guards[i].package, package) != 0)
		i++;
	for (k = i; k < kb->nguards && strcmp(kb->guards[k].package, package) == 0; k++)
		;
	*n = k - i;
	return *n ? &kb->guards[i] : NULL;
}

const el_kb_guard *el_kb_guard_find(const el_kb *kb, const char *package, const char *version)
{
	size_t n;
	const el_kb_guard *g = el_kb_guards(kb, package, &n);

	for (size_t i = 0; version && i < n; i++)
		if (envlock_version_cmp(g[i].version, version) == 0)
			return &g[i];
	return NULL;
}

char *el_kb_guard_range(const el_kb_guard *g)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "two of the knowledge's versions round fixed words");

	if (g->mmcv_min)
		el_buf_addf(&b, "%s <= ", g->mmcv_min);
	el_buf_adds(&b, "mmcv");
	if (g->mmcv_max)
		el_buf_addf(&b, " %s %s", g->mmcv_max_inclusive ? "<=" : "<", g->mmcv_max);
	return el_buf_detach(&b);
}

bool el_kb_guard_accepts_mmcv(const el_kb_guard *g, const char *v)
{
	int hi;

	if (g->mmcv_min && envlock_version_cmp(v, g->mmcv_min) < 0)
		return false;
	if (!g->mmcv_max)
		return true;
	hi = envlock_version_cmp(v, g->mmcv_max);
	return g->mmcv_max_inclusive ? hi <= 0 : hi < 0;
}

const el_kb_mmcv *el_kb_mmcv_releases(const el_kb *kb, size_t *n)
{
	kb = el_kb_ready(kb, &mmcv_built, build_mmcv);
	*n = kb->nmmcv;
	return kb->mmcv;
}

const el_kb_mmcv *el_kb_mmcv_find(const el_kb *kb, const char *package, const char *version)
{
	kb = el_kb_ready(kb, &mmcv_built, build_mmcv);
	for (size_t i = 0; version && i < kb->nmmcv; i++)
		if (envlock_version_cmp(kb->mmcv[i].version, version) == 0 &&
		    (!package || strcmp(kb->mmcv[i].package, package) == 0))
			return &kb->mmcv[i];
	return NULL;
}

const char *el_kb_mmcv_package(const el_kb *kb, const char *v, bool *ops, const char **source)
{
	const cJSON *t = el_kb_need_table(kb, "mmcv_packages"), *row;

	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		const char *from = el_jget_str(row, "from"), *until = el_jget_str(row, "until");

		if ((from && envlock_version_cmp(v, from) < 0) || (until && envlock_version_cmp(v, until) >= 0))
			continue;
		if (ops)
			*ops = opt_bool(row, "ops");
		if (source)
			*source = el_kb_row_source(t, row);
		return el_jget_str(row, "package");
	}
	return NULL;
}

bool el_kb_mmcv_has_wheel(const el_kb_mmcv *m, const char *torch, const char *cuda)
{
	char *rel = cuda ? el_version_prefix(cuda, 2) : NULL;
	bool found = false;

	for (size_t i = 0; i < m->nwheels && !found; i++) {
		const el_kb_wheel *w = &m->wheels[i];

		found = strcmp(w->cuda, rel ? rel : "cpu") == 0 && el_kb_in_release(torch, w->torch);
	}
	free(rel);
	return found;
}

/* "10.2" and "10.2.89" -> "cu102"; NULL -> "cpu". malloc'd. */
static char *cuda_dir(const char *cuda)
{
	el_buf b = EL_BUF_FITS(64, "cu and at most eight bytes of the version");
	int dots = 0;

	if (!cuda)
		return el_xstrdup("cpu");
	el_buf_adds(&b, "cu");
	for (const char *s = cuda; *s && (size_t)(s - cuda) < 8; s++) {
		if (*s == '.' && ++dots == 2)
			break; /* "10.2.89": the release only */
		if (*s != '.')
			el_buf_addc(&b, *s);
	}
	return el_buf_detach(&b);
}

char *el_kb_mmcv_index_url(const el_kb *kb, const char *torch, const char *cuda, const char **source)
{
	const cJSON *t = el_kb_need_table(kb, "mmcv_wheel_index"), *row = el_jget(t, "rows")->child;
	const char *tmpl = el_kb_need_str(row, "url", "mmcv_wheel_index");
	char *cu = cuda_dir(cuda), *rel = el_kb_release(torch);
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the knowledge's URL template with a CUDA folder and a torch release in it");

	for (const char *s = tmpl; *s; s++) {
		if (strncmp(s, "{cuda}", 6) == 0) {
			el_buf_adds(&b, cu);
			s += 5;
		} else if (strncmp(s, "{torch}", 7) == 0) {
			el_buf_addf(&b, "torch%s", rel);
			s += 6;
		} else {
			el_buf_addc(&b, *s);
		}
	}
	if (source)
		*source = el_kb_row_source(t, row);
	free(cu);
	free(rel);
	return el_buf_detach(&b);
}

const char *el_kb_mmcv_mmengine_min(const el_kb *kb, const char *v, const char **source)
{
	const cJSON *t = el_kb_need_table(kb, "mmcv_requires_mmengine"), *row;

	cJSON_ArrayForEach(row, el_jget(t, "rows"))
		if (el_jget_str(row, "mmcv") && envlock_version_cmp(el_jget_str(row, "mmcv"), v) == 0) {
			if (source)
				*source = el_kb_row_source(t, row);
			return el_jget_str(row, "mmengine_min");
		}
	return NULL;
}

bool el_kb_mmcv_build_of(const el_kb *kb, const char *v, el_kb_mmcv_build *out)
{
	const cJSON *t = el_kb_need_table(kb, "mmcv_builds"), *row;

	cJSON_ArrayForEach(row, el_jget(t, "rows")) {
		const char *from = el_jget_str(row, "from"), *until = el_jget_str(row, "until");

		if ((from && envlock_version_cmp(v, from) < 0) || (until && envlock_version_cmp(v, until) >= 0))
			continue;
		out->package = el_jget_str(row, "package");
		out->without_ops = el_jget_str(row, "without_ops");
		out->build = el_jget_str(row, "build");
		out->source = el_kb_row_source(t, row);
		return true;
	}
	return false;
}
