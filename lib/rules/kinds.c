/*
 * The rule kinds: what each kind of rule looks at in a lock. The facts
 * (which driver for which CUDA, which gcc for which nvcc, ...) are not
 * here but in the rules file's tables, each row with its source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "lock/view.h"
#include "rules.h"
#include "util/root.h"
#include "util/xalloc.h"
#include "version.h"

static const char *row_source(const cJSON *table, const cJSON *row)
{
	const char *s = el_jget_str(row, "source");
	return s ? s : el_jget_str(table, "source");
}

/* The row whose field key equals value. */
static const cJSON *row_eq(const cJSON *table, const char *key, const char *value)
{
	const cJSON *row;

	cJSON_ArrayForEach(row, el_jget(table, "rows")) {
		const char *v = el_jget_str(row, key);
		if (v && value && strcmp(v, value) == 0)
			return row;
	}
	return NULL;
}

/*
 * The row with the greatest key <= version (tables list the releases where
 * a value changed); a row with "until" covers only versions below it, so
 * a table that stops short judges no release it does not know.
 */
static const cJSON *row_floor(const cJSON *table, const char *key, const char *version)
{
	const cJSON *row, *best = NULL;

	cJSON_ArrayForEach(row, el_jget(table, "rows")) {
		const char *v = el_jget_str(row, key);

		if (v && envlock_version_cmp(v, version) <= 0 &&
		    (!best || envlock_version_cmp(v, el_jget_str(best, key)) > 0))
			best = row;
	}
	if (best && el_jget_str(best, "until") && envlock_version_cmp(version, el_jget_str(best, "until")) >= 0)
		return NULL;
	return best;
}

static bool list_has_release(const cJSON *list, const char *version)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, list)
		if (cJSON_IsString(e) && el_version_in_release(version, e->valuestring))
			return true;
	return false;
}

static char *list_join(const cJSON *list)
{
	el_buf b = EL_BUF_INIT(4096);
	const cJSON *e;

	cJSON_ArrayForEach(e, list)
		if (cJSON_IsString(e))
			el_buf_printf(&b, "%s%s", b.len ? ", " : "", e->valuestring);
	return el_buf_detach(&b);
}

static const char *driver_of(const cJSON *lock)
{
	return el_present_str(el_jget(el_jget(lock, "gpu"), "driver"), "version");
}

static bool has_gpu(const cJSON *lock)
{
	const cJSON *gpu = el_jget(lock, "gpu");
	const char *st = el_jget_str(el_jget(gpu, "driver"), "status");

	return el_jget_int(gpu, "count", 0) > 0 || (st && strcmp(st, "absent") != 0);
}

/* The minimum driver row for a CUDA release; NULL when the table does not know it. */
static const cJSON *cuda_row(const cJSON *table, const char *cuda_version)
{
	char *rel = el_version_prefix(cuda_version, 2);
	const cJSON *row = row_eq(table, "cuda", rel);

	free(rel);
	return row;
}

/* 0: driver meets the minimum; 1: only through minor version compatibility; 2: too old. */
static int driver_fit(const cJSON *row, const char *driver)
{
	const char *min = el_jget_str(row, "min_driver"), *compat = el_jget_str(row, "minor_compat_driver");

	if (!min || envlock_version_cmp(driver, min) >= 0)
		return 0;
	return compat && envlock_version_cmp(driver, compat) >= 0 ? 1 : 2;
}

static void each_toolkit_driver(envlock_findings *f, const cJSON *rule, const cJSON *table,
				const cJSON *lock, int want)
{
	const char *driver = driver_of(lock);
	const cJSON *tk;

	if (!driver)
		return;
	cJSON_ArrayForEach(tk, el_jget(el_jget(lock, "cuda"), "toolkits")) {
		const char *v = el_jget_str(tk, "version");
		const cJSON *row = v ? cuda_row(table, v) : NULL;
		char subject[256];

		if (!row || driver_fit(row, driver) != want)
			continue;
		snprintf(subject, sizeof(subject), "driver %s / CUDA %s", driver, v);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"driver", driver, "cuda", v, "min", el_jget_str(row, "min_driver"),
			"compat", el_jget_str(row, "minor_compat_driver"), "home", el_jget_str(tk, "home"), NULL });
	}
}

static void driver_min_for_cuda(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	each_toolkit_driver(f, rule, table, lock, 2);
}

static void driver_minor_compat(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	each_toolkit_driver(f, rule, table, lock, 1);
}

static void gcc_max_for_nvcc(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const char *gcc = el_jget_str(el_jget(el_jget(lock, "compilers"), "default"), "version");
	const cJSON *tk;
	char gcc_major[32];

	if (!gcc)
		return;
	snprintf(gcc_major, sizeof(gcc_major), "%ld", el_version_major(gcc));
	cJSON_ArrayForEach(tk, el_jget(el_jget(lock, "cuda"), "toolkits")) {
		const char *v = el_jget_str(tk, "version");
		char *rel;
		const cJSON *row, *max;
		char subject[256], maxs[32];

		if (!v || !el_jget(tk, "nvcc"))
			continue;
		rel = el_version_prefix(v, 2);
		row = row_eq(table, "cuda", rel);
		max = el_jget(row, "max_gcc");
		/* a gcc major from a rules file: in range before the cast */
		if (cJSON_IsNumber(max) && max->valuedouble >= 0 && max->valuedouble < 1000 &&
		    el_version_major(gcc) > (long)max->valuedouble) {
			snprintf(maxs, sizeof(maxs), "%d", (int)max->valuedouble);
			snprintf(subject, sizeof(subject), "gcc %s / nvcc %s", gcc, rel);
			el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
				"gcc", gcc, "gcc_major", gcc_major, "cuda", rel, "max", maxs,
				"nvcc", el_jget_str(el_jget(tk, "nvcc"), "path"), NULL });
		}
		free(rel);
	}
}

static void cudnn_for_cuda(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const cJSON *tk = el_default_toolkit(lock), *row;
	const char *cudnn = el_present_str(el_jget(lock, "cudnn"), "version");
	char *rel;

	if (!cudnn || !tk)
		return;
	rel = el_version_prefix(cudnn, 2);
	row = row_eq(table, "cudnn", rel);
	{
		const char *v = el_jget_str(tk, "version");

		if (row && v && !list_has_release(el_jget(row, "cuda"), v)) {
			char subject[256], *list = list_join(el_jget(row, "cuda"));

			snprintf(subject, sizeof(subject), "cuDNN %s / CUDA %s", cudnn, v);
			el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
				"cudnn", cudnn, "cuda", v, "built_for", list, NULL });
			free(list);
		}
	}
	free(rel);
}

static const cJSON *torch_of(const cJSON *lock)
{
	const cJSON *t = el_jget(el_jget(lock, "frameworks"), "torch");
	return el_present_str(t, "version") ? t : NULL;
}

static void torch_cpu_on_gpu(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const cJSON *t = torch_of(lock);
	const char *v = t ? el_jget_str(t, "version") : NULL;
	char subject[256];

	(void)table;
	if (!t || !has_gpu(lock) || !(el_jget_bool(t, "cpu_only", false) || strstr(v, "+cpu")))
		return;
	snprintf(subject, sizeof(subject), "torch %s", v);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"torch", v, "driver", driver_of(lock) ? driver_of(lock) : "present", NULL });
}

/* torch's build CUDA: version.py's cuda, else the +cuXYZ local part. malloc'd. */
static char *torch_cuda(const cJSON *t)
{
	const char *c = el_jget_str(t, "cuda");
	return c ? el_xstrdup(c) : el_version_local_cuda(el_jget_str(t, "version"));
}

static void torch_cuda_vs_driver(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const cJSON *t = torch_of(lock), *row;
	const char *driver = driver_of(lock);
	char *cu = t ? torch_cuda(t) : NULL, subject[256];

	if (cu && driver && (row = cuda_row(table, cu)) != NULL && driver_fit(row, driver) == 2) {
		snprintf(subject, sizeof(subject), "torch %s / driver %s", el_jget_str(t, "version"), driver);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"torch", el_jget_str(t, "version"), "cuda", cu, "driver", driver,
			"min", el_jget_str(row, "min_driver"), NULL });
	}
	free(cu);
}

static void torch_cuda_builds(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const cJSON *t = torch_of(lock), *row;
	char *cu = t ? torch_cuda(t) : NULL, *rel, subject[256];

	if (!cu) {
		free(cu);
		return;
	}
	rel = el_version_prefix(el_jget_str(t, "version"), 2);
	row = row_eq(table, "torch", rel);
	if (row && !list_has_release(el_jget(row, "cuda"), cu)) {
		char *list = list_join(el_jget(row, "cuda"));

		snprintf(subject, sizeof(subject), "torch %s / CUDA %s", el_jget_str(t, "version"), cu);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"torch", el_jget_str(t, "version"), "cuda", cu, "official", list, NULL });
		free(list);
	}
	free(rel);
	free(cu);
}

static void torch_python(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const cJSON *t = torch_of(lock), *row, *range;
	const char *py = el_present_str(el_jget(lock, "python"), "version");
	char *rel, *pyrel, subject[256];

	if (!t || !py)
		return;
	rel = el_version_prefix(el_jget_str(t, "version"), 2);
	pyrel = el_version_prefix(py, 2);
	row = row_eq(table, "torch", rel);
	range = el_jget(row, "python");
	if (cJSON_GetArraySize(range) == 2 && cJSON_IsString(range->child) && cJSON_IsString(range->child->next) &&
	    (envlock_version_cmp(pyrel, range->child->valuestring) < 0 ||
	     envlock_version_cmp(pyrel, range->child->next->valuestring) > 0)) {
		snprintf(subject, sizeof(subject), "torch %s / Python %s", el_jget_str(t, "version"), py);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"torch", el_jget_str(t, "version"), "python", py,
			"min", range->child->valuestring, "max", range->child->next->valuestring, NULL });
	}
	free(rel);
	free(pyrel);
}

static void mmcv_range(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const char *fw_name = el_jget_str(rule, "framework");
	const cJSON *fws = el_jget(lock, "frameworks"), *row;
	const char *fw = fw_name ? el_present_str(el_jget(fws, fw_name), "version") : NULL;
	const char *mmcv = el_present_str(el_jget(fws, "mmcv"), "version");
	const char *lo, *hi;
	bool incl, ok;
	char subject[256];

	if (!fw || !mmcv || !(row = row_floor(table, fw_name, fw)))
		return;
	lo = el_jget_str(row, "mmcv_min");
	hi = el_jget_str(row, "mmcv_max");
	incl = el_jget_bool(row, "max_inclusive", true);
	ok = (!lo || envlock_version_cmp(mmcv, lo) >= 0) &&
	     (!hi || (incl ? envlock_version_cmp(mmcv, hi) <= 0 : envlock_version_cmp(mmcv, hi) < 0));
	if (ok)
		return;
	snprintf(subject, sizeof(subject), "%s %s / %s %s", fw_name, fw,
		 el_jget_str(el_jget(fws, "mmcv"), "package") ? el_jget_str(el_jget(fws, "mmcv"), "package") : "mmcv", mmcv);
	el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
		"framework", fw_name, "version", fw, "mmcv", mmcv, "min", lo ? lo : "any",
		"max", hi ? hi : "any", "bound", incl ? "<=" : "<", NULL });
}

static void mmcv_ops_missing(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const cJSON *fws = el_jget(lock, "frameworks"), *mmcv = el_jget(fws, "mmcv");
	const char *v = el_present_str(mmcv, "version"), *pkg = el_jget_str(mmcv, "package");
	char subject[256];

	(void)table;
	if (!v || el_jget_bool(mmcv, "ops", true))
		return;
	for (const el_framework_info *u = el_frameworks; u->key; u++) {
		const char *uv = el_present_str(el_jget(fws, u->key), "version");

		if (!(u->flags & EL_FW_MMCV_OPS) || !uv)
			continue;
		snprintf(subject, sizeof(subject), "%s %s without compiled ops", pkg ? pkg : "mmcv", v);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"package", pkg ? pkg : "mmcv", "mmcv", v, "user", u->key, "user_version", uv, NULL });
		return;
	}
}

/*
 * mmcv's ops against torch's CUDA: the runtime soname the ops link to
 * names a CUDA release up to 10.x (libcudart.so.10.2) and only a major
 * from 11 on (libcudart.so.11.0 for every 11.x, libcudart.so.12).
 */
static void mmcv_cuda_vs_torch(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const cJSON *mmcv = el_jget(el_jget(lock, "frameworks"), "mmcv"), *t = torch_of(lock);
	const char *so = el_present_str(mmcv, "ops_cudart"), *v;
	char *tc, *mc, subject[256];
	bool same;

	(void)table;
	if (!so || !t || strncmp(so, "libcudart.so.", 13) != 0 || !(tc = torch_cuda(t)))
		return;
	v = so + 13;
	mc = el_version_major(v) >= 11 ? el_xasprintf("%ld", el_version_major(v)) : el_version_prefix(v, 2);
	same = el_version_major(v) >= 11 ? el_version_major(tc) == el_version_major(v)
					 : el_version_in_release(tc, mc);
	if (!same) {
		snprintf(subject, sizeof(subject), "mmcv %s (%s) / torch %s",
			 el_present_str(mmcv, "version") ? el_present_str(mmcv, "version") : "?", so, el_jget_str(t, "version"));
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"mmcv", el_present_str(mmcv, "version"), "cudart", so, "mmcv_cuda", mc,
			"torch", el_jget_str(t, "version"), "torch_cuda", tc, NULL });
	}
	free(mc);
	free(tc);
}

/* Every library the lock lists, with the section it came from. */
static void each_library(const cJSON *lock, void (*fn)(const cJSON *lib, const char *section, void *data), void *data)
{
	const cJSON *tk, *lib;

	cJSON_ArrayForEach(tk, el_jget(el_jget(lock, "cuda"), "toolkits"))
		cJSON_ArrayForEach(lib, el_jget(tk, "libraries"))
			fn(lib, "cuda", data);
	cJSON_ArrayForEach(lib, el_jget(el_jget(lock, "cudnn"), "libraries"))
		fn(lib, "cudnn", data);
}

typedef struct {
	envlock_findings *f;
	const cJSON *rule;
	const cJSON *lock;
} lib_walk;

static void soname_one(const cJSON *lib, const char *section, void *data)
{
	lib_walk *w = data;
	const char *path = el_jget_str(lib, "path"), *soname = el_jget_str(lib, "soname");
	char *dir, *link;

	(void)section;
	if (!soname || !path || !el_jget_str(lib, "soname_link") || strcmp(el_jget_str(lib, "soname_link"), "missing") != 0)
		return;
	dir = el_path_dir(path);
	link = el_path_join(dir, soname);
	el_finding_add(w->f, w->rule, path, NULL, (const char *const[]){
		"name", el_jget_str(lib, "name"), "soname", soname, "dir", dir, "link", link, NULL });
	free(link);
	free(dir);
}

static void soname_link(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	lib_walk w = { f, rule, lock };

	(void)table;
	each_library(lock, soname_one, &w);
}

/* Is dir one of the loader's configured folders (ld.so.conf)? */
static bool in_ld_conf(const cJSON *lock, const char *dir)
{
	const cJSON *d;

	cJSON_ArrayForEach(d, el_jget(el_jget(lock, "system"), "ld_so_conf"))
		if (cJSON_IsString(d) && strcmp(d->valuestring, dir) == 0)
			return true;
	return false;
}

static void ld_cache_one(const cJSON *lib, const char *section, void *data)
{
	lib_walk *w = data;
	const char *state = el_jget_str(lib, "ld_cache"), *path = el_jget_str(lib, "path");
	char *dir;

	(void)section;
	if (!state || !path || strcmp(state, "listed") == 0 || strcmp(state, "unknown") == 0)
		return;
	dir = el_path_dir(path);
	/* a folder reached only through LD_LIBRARY_PATH is not the cache's business */
	if (strcmp(state, "missing") != 0 || in_ld_conf(w->lock, dir))
		el_finding_add(w->f, w->rule, path, NULL, (const char *const[]){
			"soname", el_jget_str(lib, "soname"), "state", state, "dir", dir,
			"cached", el_jget_str(lib, "ld_cache_path") ? el_jget_str(lib, "ld_cache_path") : "nothing", NULL });
	free(dir);
}

static void ld_cache(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	lib_walk w = { f, rule, lock };

	(void)table;
	each_library(lock, ld_cache_one, &w);
}

static void wheel_glibc(envlock_findings *f, const cJSON *rule, const cJSON *table, const cJSON *lock)
{
	const char *glibc = el_present_str(el_jget(el_jget(lock, "system"), "glibc"), "version");
	const cJSON *d, *tag;

	if (!glibc)
		return;
	cJSON_ArrayForEach(d, el_jget(el_jget(lock, "pip"), "distributions")) {
		const char *need = NULL, *source = NULL;

		cJSON_ArrayForEach(tag, el_jget(d, "tags")) {
			const char *t = cJSON_IsString(tag) ? tag->valuestring : "", *plat = strrchr(t, '-');
			char tagbuf[64] = "";
			const cJSON *row;

			plat = plat ? plat + 1 : t;
			/* PEP 600: manylinux_2_28_x86_64 needs glibc 2.28; older aliases via the table */
			if (strncmp(plat, "manylinux_", 10) == 0) {
				int maj = 0, min = 0;

				if (sscanf(plat + 10, "%d_%d", &maj, &min) == 2) {
					snprintf(tagbuf, sizeof(tagbuf), "%d.%d", maj, min);
					/* a wheel names several tags; the least demanding one counts */
					if (!need || envlock_version_cmp(tagbuf, need) < 0) {
						free((char *)need);
						need = el_xstrdup(tagbuf);
						source = el_jget_str(table, "source");
					}
				}
				continue;
			}
			cJSON_ArrayForEach(row, el_jget(table, "rows")) {
				const char *rt = el_jget_str(row, "tag"), *rg = el_jget_str(row, "glibc");

				if (rt && rg && strncmp(plat, rt, strlen(rt)) == 0 && plat[strlen(rt)] == '_' &&
				    (!need || envlock_version_cmp(rg, need) < 0)) {
					free((char *)need);
					need = el_xstrdup(rg);
					source = row_source(table, row);
				}
			}
		}
		if (need && envlock_version_cmp(glibc, need) < 0 && el_jget_str(d, "name") && el_jget_str(d, "version")) {
			char subject[256];

			snprintf(subject, sizeof(subject), "%s %s / glibc %s", el_jget_str(d, "name"),
				 el_jget_str(d, "version"), glibc);
			el_finding_add(f, rule, subject, source, (const char *const[]){
				"dist", el_jget_str(d, "name"), "version", el_jget_str(d, "version"),
				"need", need, "glibc", glibc, NULL });
		}
		free((char *)need);
	}
}

static const struct {
	const char *name;
	el_rule_fn fn;
} kinds[] = {
	{ "driver_min_for_cuda", driver_min_for_cuda },
	{ "driver_minor_compat", driver_minor_compat },
	{ "gcc_max_for_nvcc", gcc_max_for_nvcc },
	{ "cudnn_for_cuda", cudnn_for_cuda },
	{ "torch_cpu_on_gpu", torch_cpu_on_gpu },
	{ "torch_cuda_vs_driver", torch_cuda_vs_driver },
	{ "torch_cuda_builds", torch_cuda_builds },
	{ "torch_python", torch_python },
	{ "mmcv_range", mmcv_range },
	{ "mmcv_ops_missing", mmcv_ops_missing },
	{ "mmcv_cuda_vs_torch", mmcv_cuda_vs_torch },
	{ "soname_link", soname_link },
	{ "ld_cache", ld_cache },
	{ "wheel_glibc", wheel_glibc },
};

el_rule_fn el_rule_kind(const char *kind)
{
	for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, kind) == 0)
			return kinds[i].fn;
	return NULL;
}
