/*
 * The rule kinds: what each kind of rule looks at in a lock. The facts
 * (which driver for which CUDA, which gcc for which nvcc, ...) are not
 * here but in the rules file's tables, each row with its source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knowledge/knowledge.h"
#include "lock/model.h"
#include "lock/view.h"
#include "rules.h"
#include "util/buf.h"
#include "util/root.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"
#include "util/version.h"

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
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the strings of a list of the lock's");
	const cJSON *e;

	cJSON_ArrayForEach(e, list)
		if (cJSON_IsString(e))
			el_buf_addf(&b, "%s%s", b.len ? ", " : "", e->valuestring);
	return el_buf_detach(&b);
}

static const char *driver_of(const el_view *v)
{
	return v->gpu.driver.st.present ? v->gpu.driver.version : NULL;
}

static bool has_gpu(const el_view *v)
{
	const char *st = v->gpu.driver.st.status;

	return v->gpu.count > 0 || (st && strcmp(st, "absent") != 0);
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
				const el_view *lock, int want)
{
	const char *driver = driver_of(lock);

	if (!driver)
		return;
	for (size_t i = 0; i < lock->cuda.ntoolkits; i++) {
		const el_toolkit *tk = &lock->cuda.toolkits[i];
		const char *v = tk->version;
		const cJSON *row = v ? cuda_row(table, v) : NULL;
		char subject[256];

		if (!row || driver_fit(row, driver) != want)
			continue;
		snprintf(subject, sizeof(subject), "driver %s / CUDA %s", driver, v);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"driver", driver, "cuda", v, "min", el_jget_str(row, "min_driver"),
			"compat", el_jget_str(row, "minor_compat_driver"), "home", tk->home, NULL });
	}
}

static void driver_min_for_cuda(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	each_toolkit_driver(f, rule, table, lock, 2);
}

static void driver_minor_compat(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	each_toolkit_driver(f, rule, table, lock, 1);
}

/* The kernel module against the user-space files' versions (NVML's driver/library version mismatch). */
static void driver_user_space(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const char *km = lock->gpu.driver.st.present ? lock->gpu.driver.version : NULL;

	(void)table;
	if (!km)
		return;
	for (size_t i = 0; i < lock->gpu.driver.user_space.nfiles; i++) {
		const el_driver_file *u = &lock->gpu.driver.user_space.files[i];
		char subject[512];

		bool told = false;

		if (!u->version || !u->path || strcmp(u->version, km) == 0)
			continue;
		/* one finding per version: libcuda and libnvidia-ml of one install say it once */
		for (size_t k = 0; k < i && !told; k++)
			told = lock->gpu.driver.user_space.files[k].version &&
			       strcmp(lock->gpu.driver.user_space.files[k].version, u->version) == 0;
		if (told)
			continue;
		snprintf(subject, sizeof(subject), "driver %s / %s %s", km, u->kind ? u->kind : "user-space", u->version);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"driver", km, "file", u->path, "user_space", u->version, NULL });
	}
}

static void gcc_max_for_nvcc(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const char *gcc = lock->compilers.def.version;
	char gcc_major[32];

	if (!gcc)
		return;
	snprintf(gcc_major, sizeof(gcc_major), "%ld", el_version_major(gcc));
	for (size_t i = 0; i < lock->cuda.ntoolkits; i++) {
		const el_toolkit *tk = &lock->cuda.toolkits[i];
		const char *v = tk->version;
		char *rel;
		const char *source = NULL;
		char subject[256], maxs[32];
		long max;

		if (!v || !tk->nvcc.recorded)
			continue;
		rel = el_version_prefix(v, 2);
		max = el_kb_nvcc_max_gcc_in(table, rel, &source);
		if (max >= 0 && el_version_major(gcc) > max) {
			snprintf(maxs, sizeof(maxs), "%ld", max);
			snprintf(subject, sizeof(subject), "gcc %s / nvcc %s", gcc, rel);
			el_finding_add(f, rule, subject, source, (const char *const[]){
				"gcc", gcc, "gcc_major", gcc_major, "cuda", rel, "max", maxs,
				"nvcc", tk->nvcc.path, NULL });
		}
		free(rel);
	}
}

static void cudnn_for_cuda(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_toolkit *tk = lock->cuda.default_tk;
	const char *cudnn = lock->cudnn.st.present ? lock->cudnn.version : NULL;
	const char *v = tk ? tk->version : NULL;
	const cJSON *row;
	char *rel;

	if (!cudnn || !tk)
		return;
	rel = el_version_prefix(cudnn, 2);
	row = row_eq(table, "cudnn", rel);
	if (row && v && !list_has_release(el_jget(row, "cuda"), v)) {
		char subject[256], *list = list_join(el_jget(row, "cuda"));

		snprintf(subject, sizeof(subject), "cuDNN %s / CUDA %s", cudnn, v);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"cudnn", cudnn, "cuda", v, "built_for", list, NULL });
		free(list);
	}
	free(rel);
}

/* The framework key when the lock records it present with a version, else NULL. */
static const el_framework *framework_of(const el_view *lock, const char *key)
{
	const el_framework *fw = el_view_framework(lock, key);

	return fw && fw->st.present && fw->version ? fw : NULL;
}

static void torch_cpu_on_gpu(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_framework *t = framework_of(lock, "torch");
	char subject[256], *install;

	(void)table;
	if (!t || !has_gpu(lock) || !(t->cpu_only == EL_YES || strstr(t->version, "+cpu")))
		return;
	snprintf(subject, sizeof(subject), "torch %s", t->version);
	install = el_fix_torch_cpu(lock, t);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"torch", t->version, "driver", driver_of(lock) ? driver_of(lock) : "present", "install", install, NULL });
	free(install);
}


static void torch_cuda_vs_driver(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_framework *t = framework_of(lock, "torch");
	const cJSON *row;
	const char *driver = driver_of(lock);
	char *cu = t ? el_torch_cuda(t) : NULL, subject[256];

	if (cu && driver && (row = cuda_row(table, cu)) != NULL && driver_fit(row, driver) == 2) {
		snprintf(subject, sizeof(subject), "torch %s / driver %s", t->version, driver);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"torch", t->version, "cuda", cu, "driver", driver,
			"min", el_jget_str(row, "min_driver"), NULL });
	}
	free(cu);
}

static void torch_cuda_builds(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_framework *t = framework_of(lock, "torch");
	const cJSON *row;
	char *cu = t ? el_torch_cuda(t) : NULL, *rel, subject[256];

	if (!cu)
		return;
	rel = el_version_prefix(t->version, 2);
	row = row_eq(table, "torch", rel);
	if (row && !list_has_release(el_jget(row, "cuda"), cu)) {
		char *list = list_join(el_jget(row, "cuda"));

		snprintf(subject, sizeof(subject), "torch %s / CUDA %s", t->version, cu);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"torch", t->version, "cuda", cu, "official", list, NULL });
		free(list);
	}
	free(rel);
	free(cu);
}

/* Does the Python release py ("3.11") fit a tag torch's files give ("3.11"; "3.8+": 3.8 and later)? */
static bool python_fits(const char *py, const char *tag)
{
	size_t n = strlen(tag);

	if (n && tag[n - 1] == '+') {
		char *min = el_xstrndup(tag, n - 1);
		bool fits = el_version_major(py) == el_version_major(min) && envlock_version_cmp(py, min) >= 0;

		free(min);
		return fits;
	}
	return envlock_version_cmp(py, tag) == 0;
}

/* Does the lock record what torch's own files say of the Python it is for (a Requires-Python that reads)? */
static bool torch_python_recorded(const el_framework *t, const char *py)
{
	return t->python_tags.n || (t->requires_python && el_version_satisfies(py, t->requires_python) >= 0);
}

/* The Python range PyTorch's table gives torch's release, used only where torch's own files say nothing. */
static void torch_python_table(envlock_findings *f, const cJSON *rule, const cJSON *table,
			       const el_framework *t, const char *py)
{
	const cJSON *row, *range;
	char *rel, *pyrel, subject[256];

	rel = el_version_prefix(t->version, 2);
	pyrel = el_version_prefix(py, 2);
	row = row_eq(table, "torch", rel);
	range = el_jget(row, "python");
	if (cJSON_GetArraySize(range) == 2 && cJSON_IsString(range->child) && cJSON_IsString(range->child->next) &&
	    (envlock_version_cmp(pyrel, range->child->valuestring) < 0 ||
	     envlock_version_cmp(pyrel, range->child->next->valuestring) > 0)) {
		snprintf(subject, sizeof(subject), "torch %s / Python %s", t->version, py);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"torch", t->version, "python", py,
			"min", range->child->valuestring, "max", range->child->next->valuestring, NULL });
	}
	free(rel);
	free(pyrel);
}

/*
 * torch against the Python it was built for, by its own files: the tag
 * of its compiled module or wheel (CPython imports only a module tagged
 * for itself), then its Requires-Python.
 */
static void torch_python_files(envlock_findings *f, const cJSON *rule, const el_framework *t, const char *py)
{
	char *pyrel = el_version_prefix(py, 2), *built_for = NULL, *evidence = NULL, *cp, subject[256];
	bool fits = false;

	for (size_t i = 0; i < t->python_tags.n && !fits; i++)
		fits = python_fits(pyrel, t->python_tags.v[i]);
	if (t->python_tags.n && !fits) {
		el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the knowledge's tags of a torch release");

		for (size_t i = 0; i < t->python_tags.n; i++) {
			const char *tag = t->python_tags.v[i];
			size_t n = strlen(tag);

			el_buf_addf(&b, "%s%.*s%s", i ? ", " : "", (int)(n && tag[n - 1] == '+' ? n - 1 : n), tag,
				      n && tag[n - 1] == '+' ? " or newer" : "");
		}
		built_for = el_buf_detach(&b);
		evidence = t->python_tags_source && el_ends_with(t->python_tags_source, "/WHEEL")
				   ? el_xasprintf("the Tag lines of %s", t->python_tags_source)
				   : el_xstrdup(t->python_tags_source ? t->python_tags_source : "its compiled module");
	} else if (t->requires_python && el_version_satisfies(py, t->requires_python) == 0) {
		built_for = el_xstrdup(t->requires_python);
		evidence = el_xasprintf("Requires-Python in %s",
					t->requires_python_source ? t->requires_python_source : "its metadata");
	}
	if (built_for) {
		cp = el_xasprintf("cp%ld%s", el_version_major(pyrel), strchr(pyrel, '.') ? strchr(pyrel, '.') + 1 : "");
		snprintf(subject, sizeof(subject), "torch %s / Python %s", t->version, py);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"torch", t->version, "python", py, "release", pyrel, "cp", cp,
			"built_for", built_for, "evidence", evidence, NULL });
		free(cp);
	}
	free(built_for);
	free(evidence);
	free(pyrel);
}

/*
 * torch_python with a table judges by PyTorch's table, and only where the
 * lock records nothing torch's own files say; without one, by those files.
 */
static void torch_python(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_framework *t = framework_of(lock, "torch");
	const char *py = lock->python.st.present ? lock->python.version : NULL;

	if (!t || !py)
		return;
	if (!table)
		torch_python_files(f, rule, t, py);
	else if (!torch_python_recorded(t, py))
		torch_python_table(f, rule, table, t, py);
}

/* "1.3.17 <= mmcv <= 1.8.0", "mmcv < 2.2.0": a range as its asserts read. malloc'd. */
static char *range_text(const char *lo, const char *hi, bool incl)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "two versions round fixed words");

	if (lo)
		el_buf_addf(&b, "%s <= ", lo);
	el_buf_adds(&b, "mmcv");
	if (hi)
		el_buf_addf(&b, " %s %s", incl ? "<=" : "<", hi);
	return el_buf_detach(&b);
}

/* The table's row for release version of package, or NULL: a release it does not know is not judged. */
static const cJSON *guard_row(const cJSON *table, const char *package, const char *version)
{
	const cJSON *row;

	cJSON_ArrayForEach(row, el_jget(table, "rows")) {
		const char *p = el_jget_str(row, "package"), *v = el_jget_str(row, "version");

		if (p && v && strcmp(p, package) == 0 && envlock_version_cmp(v, version) == 0)
			return row;
	}
	return NULL;
}

/*
 * mmcv against a codebase's accepted range: with a table, the row of
 * its release (what that tag's __init__.py asserts), only where the lock
 * records no range read from the installed __init__.py; without one,
 * that recorded range. The rule's "framework" is a key of the one
 * registry (el_frameworks); one it does not know is never recorded.
 */
static void mmcv_range(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const char *fw_name = el_jget_str(rule, "framework");
	const el_framework *fw = fw_name ? framework_of(lock, fw_name) : NULL, *mmcv = framework_of(lock, "mmcv");
	const cJSON *row = NULL;
	const char *lo, *hi, *pkg;
	bool incl, ok;
	char subject[256], *range, *install;

	if (!fw || !mmcv || (table && fw->mmcv_range.recorded) || (!table && !fw->mmcv_range.recorded))
		return;
	if (table) {
		if (!(row = guard_row(table, fw_name, fw->version)))
			return;
		lo = el_jget_str(row, "mmcv_min");
		hi = el_jget_str(row, "mmcv_max");
		incl = el_jget_bool(row, "mmcv_max_inclusive", true);
	} else {
		lo = fw->mmcv_range.min;
		hi = fw->mmcv_range.max;
		incl = fw->mmcv_range.max_inclusive;
	}
	ok = (!lo || envlock_version_cmp(mmcv->version, lo) >= 0) &&
	     (!hi || (incl ? envlock_version_cmp(mmcv->version, hi) <= 0 : envlock_version_cmp(mmcv->version, hi) < 0));
	if (ok)
		return;
	pkg = mmcv->package ? mmcv->package : "mmcv";
	snprintf(subject, sizeof(subject), "%s %s / %s %s", fw_name, fw->version, pkg, mmcv->version);
	range = range_text(lo, hi, incl);
	install = el_fix_mmcv_range(lock, fw_name, lo, hi, incl);
	el_finding_add(f, rule, subject, row ? row_source(table, row) : NULL, (const char *const[]){
		"framework", fw_name, "version", fw->version, "mmcv", mmcv->version, "package", pkg,
		"min", lo ? lo : "any", "max", hi ? hi : "any", "bound", incl ? "<=" : "<", "range", range,
		"file", fw->mmcv_range.source ? fw->mmcv_range.source : "its __init__.py", "install", install, NULL });
	free(install);
	free(range);
}

static void mmcv_ops_missing(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_framework *mmcv = framework_of(lock, "mmcv");
	const char *pkg = mmcv ? mmcv->package : NULL;
	char subject[256];

	(void)table;
	if (!mmcv || mmcv->ops != EL_NO)
		return;
	for (size_t i = 0; i < EL_FW_COUNT; i++) {
		const el_framework *u = &lock->frameworks[i];

		if (!(u->info->flags & EL_FW_MMCV_OPS) || !u->st.present || !u->version)
			continue;
		char *install = el_fix_mmcv_reinstall(lock);

		snprintf(subject, sizeof(subject), "%s %s without compiled ops", pkg ? pkg : "mmcv", mmcv->version);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"package", pkg ? pkg : "mmcv", "mmcv", mmcv->version, "user", u->info->key,
			"user_version", u->version, "install", install, NULL });
		free(install);
		return;
	}
}

/*
 * mmcv's ops against torch's CUDA: the runtime soname the ops link to
 * names a CUDA release up to 10.x (libcudart.so.10.2) and only a major
 * from 11 on (libcudart.so.11.0 for every 11.x, libcudart.so.12).
 */
static void mmcv_cuda_vs_torch(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_framework *mmcv = el_view_framework(lock, "mmcv"), *t = framework_of(lock, "torch");
	const char *so = mmcv->st.present ? mmcv->ops_cudart : NULL, *ver = mmcv->st.present ? mmcv->version : NULL;
	const char *v;
	char *tc, *mc, subject[256];
	bool same;

	(void)table;
	if (!so || !t || strncmp(so, "libcudart.so.", 13) != 0 || !(tc = el_torch_cuda(t)))
		return;
	v = so + 13;
	mc = el_version_major(v) >= 11 ? el_xasprintf("%ld", el_version_major(v)) : el_version_prefix(v, 2);
	same = el_version_major(v) >= 11 ? el_version_major(tc) == el_version_major(v)
					 : el_version_in_release(tc, mc);
	if (!same) {
		char *install = el_fix_mmcv_reinstall(lock);

		snprintf(subject, sizeof(subject), "mmcv %s (%s) / torch %s", ver ? ver : "?", so, t->version);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"mmcv", ver, "cudart", so, "mmcv_cuda", mc, "torch", t->version, "torch_cuda", tc,
			"package", mmcv->package ? mmcv->package : "mmcv", "install", install, NULL });
		free(install);
	}
	free(mc);
	free(tc);
}

/* A GPU's compute capability: nvidia-smi's as recorded, else the knowledge's by its name; NULL when unknown. */
static const char *device_cc(const el_gpu_device *d)
{
	if (d->compute_capability && *d->compute_capability)
		return d->compute_capability;
	return el_kb_gpu_compute_capability(el_kb_builtin(), d->name, NULL);
}

/* "8.9" -> "89", as sm_89 and compute_89 write a compute capability. */
static void sm_name(char *out, size_t n, const char *cc)
{
	size_t j = 0;

	for (; *cc && j + 1 < n; cc++)
		if (*cc != '.')
			out[j++] = *cc;
	out[j] = '\0';
}

/* A row's list of strings, borrowed, in v (room for cap). */
static el_kb_list json_list(const cJSON *a, const char **v, size_t cap)
{
	const cJSON *e;
	size_t n = 0;

	cJSON_ArrayForEach(e, a)
		if (cJSON_IsString(e) && n < cap)
			v[n++] = e->valuestring;
	return (el_kb_list){ v, n };
}

/* The row of torch release version whose CUDA list has cuda, or NULL. */
static const cJSON *arch_row(const cJSON *table, const char *version, const char *cuda)
{
	const cJSON *row, *c;

	cJSON_ArrayForEach(row, el_jget(table, "rows")) {
		const char *rel = el_jget_str(row, "torch");

		if (!rel || !el_version_in_release(version, rel))
			continue;
		cJSON_ArrayForEach(c, el_jget(row, "cuda"))
			if (cJSON_IsString(c) && el_version_in_release(cuda, c->valuestring))
				return row;
	}
	return NULL;
}

/*
 * "CUDA capability sm_89 is not compatible with the current PyTorch
 * installation", predicted: every GPU's compute capability against the
 * GPU code the installed torch's wheels carry (a cubin of the same major
 * at or below it, or PTX at or below it).
 */
static void torch_arch_vs_gpu(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_framework *t = framework_of(lock, "torch");
	char *cu = t ? el_torch_cuda(t) : NULL;
	const cJSON *row = cu ? arch_row(table, t->version, cu) : NULL;
	const char *smv[64], *ptxv[64], *told[16];
	el_kb_list sm, ptx;
	size_t ntold = 0;

	if (!row) {
		free(cu);
		return;
	}
	sm = json_list(el_jget(row, "sm"), smv, 64);
	ptx = json_list(el_jget(row, "ptx"), ptxv, 64);
	for (size_t i = 0; i < lock->gpu.ndevices && ntold < 16; i++) {
		const el_gpu_device *d = &lock->gpu.devices[i];
		const char *cc = device_cc(d);
		char subject[512], smname[16], *codes, *install;
		bool is_ptx, dup = false;
		el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the knowledge's GPU code names of a torch build");

		if (!cc || el_kb_code_runs_on(&sm, &ptx, cc, &is_ptx))
			continue;
		for (size_t k = 0; k < ntold; k++)
			dup = dup || strcmp(told[k], cc) == 0;
		if (dup)
			continue;
		told[ntold++] = cc;
		for (size_t k = 0; k < sm.n + ptx.n; k++) {
			sm_name(smname, sizeof(smname), k < sm.n ? sm.v[k] : ptx.v[k - sm.n]);
			el_buf_addf(&b, "%s%s_%s%s", b.len ? ", " : "", k < sm.n ? "sm" : "compute", smname,
				      k < sm.n ? "" : " (PTX)");
		}
		codes = el_buf_detach(&b);
		sm_name(smname, sizeof(smname), cc);
		snprintf(subject, sizeof(subject), "torch %s / %s (compute capability %s)", t->version,
			 d->name ? d->name : "GPU", cc);
		install = el_fix_torch_arch(lock, t, cc);
		el_finding_add(f, rule, subject, row_source(table, row), (const char *const[]){
			"torch", t->version, "cuda", cu, "gpu", d->name ? d->name : "the GPU", "cc", cc, "sm", smname,
			"codes", codes, "install", install, NULL });
		free(install);
		free(codes);
	}
	free(cu);
}

typedef struct {
	const el_library *lib;
	const char *section;
} lib_ref;

typedef struct {
	lib_ref *v;
	size_t n, cap;
} lib_refs;

typedef struct {
	envlock_findings *f;
	const cJSON *rule;
	const el_view *lock;
	const char *section; /* of the library being looked at: "cuda" or "cudnn" */
	bool env;	     /* it is the Python environment's own (el_env_layout) */
	lib_refs *refs;	     /* where a walk collects libraries */
} lib_walk;

/* Every library the lock lists: each toolkit's, then cuDNN's, then the environment's cuDNN. */
static void each_library(lib_walk *w, void (*fn)(lib_walk *w, const el_library *lib))
{
	const el_view *v = w->lock;

	w->section = "cuda";
	for (size_t i = 0; i < v->cuda.ntoolkits; i++) {
		w->env = el_env_layout(v->cuda.toolkits[i].layout);
		for (size_t j = 0; j < v->cuda.toolkits[i].nlibraries; j++)
			fn(w, &v->cuda.toolkits[i].libraries[j]);
	}
	w->section = "cudnn";
	w->env = false;
	for (size_t j = 0; j < v->cudnn.nlibraries; j++)
		fn(w, &v->cudnn.libraries[j]);
	w->env = true;
	for (size_t i = 0; i < v->cudnn.ninstalls; i++)
		for (size_t j = 0; j < v->cudnn.installs[i].nlibraries; j++)
			fn(w, &v->cudnn.installs[i].libraries[j]);
}

/* A library's finding: filed under the section of the library, not the rule's. */
static void lib_finding(lib_walk *w, const char *subject, const char *const vars[])
{
	envlock_finding *x;

	el_finding_add(w->f, w->rule, subject, NULL, vars);
	x = &w->f->v[w->f->n - 1];
	free((char *)x->section);
	x->section = el_xstrdup(w->section);
}

static void soname_one(lib_walk *w, const el_library *lib)
{
	char *dir, *link;

	if (!lib->soname || !lib->path || !lib->soname_link || strcmp(lib->soname_link, "missing") != 0)
		return;
	dir = el_path_dir(lib->path);
	link = el_path_join(dir, lib->soname);
	lib_finding(w, lib->path, (const char *const[]){
		"name", lib->name, "soname", lib->soname, "dir", dir, "link", link, NULL });
	free(link);
	free(dir);
}

static void soname_link(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	lib_walk w = { f, rule, lock, NULL, false, NULL };

	(void)table;
	each_library(&w, soname_one);
}

/* Is dir one of the loader's configured folders (ld.so.conf)? */
static bool in_ld_conf(const el_view *lock, const char *dir)
{
	for (size_t i = 0; i < lock->system.ld_so_conf.n; i++)
		if (strcmp(lock->system.ld_so_conf.v[i], dir) == 0)
			return true;
	return false;
}

static void ld_cache_one(lib_walk *w, const el_library *lib)
{
	const char *state = lib->ld_cache;
	char *dir;

	/* the environment's own libraries are found through torch's RPATH/RUNPATH, not the cache */
	if (w->env || !state || !lib->path || strcmp(state, "listed") == 0 || strcmp(state, "unknown") == 0)
		return;
	/* a copy where a link belongs: ldconfig cannot fix it (soname_copy says what does) */
	if (lib->copy_of || (lib->soname_link && strcmp(lib->soname_link, "copy") == 0))
		return;
	dir = el_path_dir(lib->path);
	/* a folder reached only through LD_LIBRARY_PATH is not the cache's business */
	if (strcmp(state, "missing") != 0 || in_ld_conf(w->lock, dir))
		lib_finding(w, lib->path, (const char *const[]){
			"soname", lib->soname, "state", state, "dir", dir,
			"cached", lib->ld_cache_path ? lib->ld_cache_path : "nothing", NULL });
	free(dir);
}

static void ld_cache(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	lib_walk w = { f, rule, lock, NULL, false, NULL };

	(void)table;
	each_library(&w, ld_cache_one);
}

static void copy_one(lib_walk *w, const el_library *lib)
{
	if (!lib->copy_of || !lib->path || !lib->name)
		return;
	EL_GROW(w->refs->v, w->refs->n + 1, w->refs->cap);
	w->refs->v[w->refs->n++] = (lib_ref){ lib, w->section };
}

/*
 * Libraries copied with cp instead of cp -P: one finding per folder, with
 * the ln -sf that puts each link back (the soname link to the library, the
 * development link to the soname link, as ldconfig and the packages lay them).
 */
static void soname_copy(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	lib_refs all = { 0 };
	lib_walk w = { f, rule, lock, NULL, false, &all };
	bool *done;

	(void)table;
	each_library(&w, copy_one);
	done = el_xcalloc(all.n + 1, sizeof(bool));
	for (size_t i = 0; i < all.n; i++) {
		el_buf cmds = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a command per copied library of the lock, round its paths");
		el_buf names = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's names of copied libraries");
		char *dir = el_path_dir(all.v[i].lib->path), *first = NULL;

		if (done[i]) {
			free(dir);
			continue;
		}
		for (size_t j = i; j < all.n; j++) {
			const el_library *c = all.v[j].lib;
			char *cdir = el_path_dir(c->path);
			bool here = strcmp(cdir, dir) == 0 && strcmp(all.v[j].section, all.v[i].section) == 0;
			const char *target = c->copy_of;

			free(cdir);
			if (!here)
				continue;
			done[j] = true;
			if (c->soname && strcmp(c->name, c->soname) != 0 && strcmp(c->soname, c->copy_of) != 0)
				target = c->soname; /* libcudnn.so -> libcudnn.so.8, not past it */
			else if (!first && c->soname && strcmp(c->name, c->soname) == 0)
				first = el_xstrdup(c->name);
			el_buf_addf(&cmds, "%sln -sf %s %s", cmds.len ? " && " : "", target, c->path);
			el_buf_addf(&names, "%s%s", names.len ? ", " : "", c->name);
		}
		w.section = all.v[i].section;
		lib_finding(&w, dir, (const char *const[]){
			"dir", dir, "names", el_buf_cstr(&names), "commands", el_buf_cstr(&cmds),
			"first", first ? first : all.v[i].lib->name, NULL });
		free(first);
		free(dir);
		el_buf_release(&cmds);
		el_buf_release(&names);
	}
	free(done);
	free(all.v);
}

static void wheel_glibc(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const char *glibc = lock->system.glibc.st.present ? lock->system.glibc.version : NULL;

	if (!glibc)
		return;
	for (size_t i = 0; i < lock->pip.ndists; i++) {
		const el_pip_dist *d = &lock->pip.dists[i];
		const char *need = NULL, *source = NULL;

		for (size_t k = 0; k < d->tags.n; k++) {
			const char *t = d->tags.v[k], *plat = strrchr(t, '-');
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
		if (need && envlock_version_cmp(glibc, need) < 0 && d->name && d->version) {
			char subject[256];

			snprintf(subject, sizeof(subject), "%s %s / glibc %s", d->name, d->version, glibc);
			el_finding_add(f, rule, subject, source, (const char *const[]){
				"dist", d->name, "version", d->version, "need", need, "glibc", glibc, NULL });
		}
		free((char *)need);
	}
}

/* What importing the module runs into: "import torch", or starting the interpreter. */
static const char *module_user(const el_load_module *m)
{
	return strcmp(m->framework, "python") == 0 ? "starting python" : m->framework;
}

/* The folders the loader looked in, joined; malloc'd. */
static char *searched_text(const el_load_need *n)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the folders the loader searched, as the lock records them");

	for (size_t i = 0; i < n->searched.n; i++)
		el_buf_addf(&b, "%s%s", i ? ", " : "", n->searched.v[i]);
	return el_buf_detach(&b);
}

/* The first folder of a library the lock records (CUDA toolkits, cuDNN) whose soname is name, or NULL; malloc'd. */
static char *recorded_dir_of(const el_view *v, const char *name)
{
	for (size_t i = 0; i < v->cuda.ntoolkits; i++)
		for (size_t j = 0; j < v->cuda.toolkits[i].nlibraries; j++) {
			const el_library *l = &v->cuda.toolkits[i].libraries[j];

			if (l->soname && l->path && strcmp(l->soname, name) == 0)
				return el_path_dir(l->path);
		}
	for (size_t j = 0; j < v->cudnn.nlibraries; j++) {
		const el_library *l = &v->cudnn.libraries[j];

		if (l->soname && l->path && strcmp(l->soname, name) == 0)
			return el_path_dir(l->path);
	}
	return NULL;
}

/* Whether the lock resolved the interpreter: without it, what python loads first (and its DT_RPATH) is unknown. */
static bool python_resolved(const el_loads *l)
{
	for (size_t i = 0; i < l->nmodules; i++)
		if (l->modules[i].framework && strcmp(l->modules[i].framework, "python") == 0 && !l->modules[i].error)
			return true;
	return false;
}

/*
 * ld.so's "cannot open shared object file", predicted from the recorded
 * resolution; a framework's module only when the interpreter that loads
 * it was resolved too, so that what python brings is known.
 */
static void load_not_found(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	bool process = python_resolved(&lock->loads);

	(void)table;
	for (size_t i = 0; lock->loads.st.present && i < lock->loads.nmodules; i++) {
		const el_load_module *m = &lock->loads.modules[i];

		if (m->framework && strcmp(m->framework, "python") != 0 && !process)
			continue;
		for (size_t k = 0; m->framework && k < m->nneeded; k++) {
			const el_load_need *n = &m->needed[k];
			char *where, *dir, *hint, subject[512];

			if (!n->soname || !n->needed_by || !n->found_by || strcmp(n->found_by, "not_found") != 0)
				continue;
			where = searched_text(n);
			dir = recorded_dir_of(lock, n->soname);
			hint = dir ? el_xasprintf("the lock records %s in %s: add that folder to /etc/ld.so.conf.d/ and run ldconfig, or to LD_LIBRARY_PATH",
						  n->soname, dir)
				   : el_xasprintf("install the package that provides %s, or add the folder that holds it to /etc/ld.so.conf.d/ and run ldconfig",
						  n->soname);
			snprintf(subject, sizeof(subject), "%s: %s", n->needed_by, n->soname);
			el_finding_add(f, rule, subject, NULL, (const char *const[]){
				"soname", n->soname, "file", n->needed_by, "module", module_user(m),
				"searched", *where ? where : "nowhere", "hint", hint, NULL });
			free(hint);
			free(dir);
			free(where);	/* ld.so stops at the first name it cannot find */
			break;
		}
	}
}

/* ld.so's "version `GLIBC_2.29' not found (required by ...)". */
static void load_version_missing(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const char *glibc = lock->system.glibc.st.present ? lock->system.glibc.version : NULL;

	(void)table;
	for (size_t i = 0; lock->loads.st.present && i < lock->loads.nmodules; i++) {
		const el_load_module *m = &lock->loads.modules[i];

		for (size_t k = 0; m->framework && k < m->nmissing; k++) {
			const el_load_missing *x = &m->missing[k];
			char subject[512], *have;

			if (!x->file || !x->version || !x->library)
				continue;
			snprintf(subject, sizeof(subject), "%s: %s", x->file, x->version);
			have = strncmp(x->version, "GLIBC_", 6) == 0 && glibc ? el_xasprintf("glibc %s", glibc)
									     : el_xstrdup(x->library);
			el_finding_add(f, rule, subject, NULL, (const char *const[]){
				"file", x->file, "version", x->version, "library", x->library,
				"library_path", x->library_path ? x->library_path : x->library,
				"module", module_user(m), "have", have, NULL });
			free(have);	/* ld.so stops at the first version it cannot find */
			break;
		}
	}
}

/* LD_LIBRARY_PATH puts another cuDNN ahead of the one torch would load (pytorch/pytorch#80637). */
static void load_cudnn_shadow(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	(void)table;
	for (size_t i = 0; lock->loads.st.present && i < lock->loads.nmodules; i++) {
		const el_load_module *m = &lock->loads.modules[i];

		for (size_t k = 0; m->framework && strcmp(m->framework, "torch") == 0 && k < m->nneeded; k++) {
			const el_load_need *n = &m->needed[k];
			const char *got, *own;

			if (!n->soname || strncmp(n->soname, "libcudnn", 8) != 0 || !n->path || !n->without_library_path)
				continue;
			got = el_view_library_version(lock, n->realpath ? n->realpath : n->path);
			own = el_view_library_version(lock, n->without_library_path);
			el_finding_add(f, rule, n->path, NULL, (const char *const[]){
				"soname", n->soname, "path", n->realpath ? n->realpath : n->path, "version", got ? got : "unknown",
				"own", n->without_library_path, "own_version", own ? own : "unknown",
				"library_path", lock->loads.library_path ? lock->loads.library_path : "LD_LIBRARY_PATH", NULL });
		}
	}
}

/* mmcv's ops load a CUDA runtime file other than the one torch loads: two runtimes in one process. */
static void load_cudart_mismatch(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *lock)
{
	const el_load_need *t = el_loads_find(&lock->loads, "torch", "libcudart"),
			   *m = el_loads_find(&lock->loads, "mmcv", "libcudart");
	const char *tp, *mp;

	(void)table;
	if (!t || !m)
		return;
	tp = t->realpath ? t->realpath : t->path;
	mp = m->realpath ? m->realpath : m->path;
	if (strcmp(tp, mp) == 0)
		return;
	{
		const el_framework *mmcv = el_view_framework(lock, "mmcv");
		char *install = el_fix_mmcv_reinstall(lock);

		el_finding_add(f, rule, m->needed_by, NULL, (const char *const[]){
			"file", m->needed_by, "mmcv_cudart", mp, "torch_cudart", tp,
			"package", mmcv->st.present && mmcv->package ? mmcv->package : "mmcv", "install", install, NULL });
		free(install);
	}
}

const el_rule_kind el_lock_kinds[] = {
	{ "driver_min_for_cuda", driver_min_for_cuda },
	{ "driver_minor_compat", driver_minor_compat },
	{ "driver_user_space", driver_user_space },
	{ "gcc_max_for_nvcc", gcc_max_for_nvcc },
	{ "cudnn_for_cuda", cudnn_for_cuda },
	{ "torch_cpu_on_gpu", torch_cpu_on_gpu },
	{ "torch_cuda_vs_driver", torch_cuda_vs_driver },
	{ "torch_cuda_builds", torch_cuda_builds },
	{ "torch_python", torch_python },
	{ "torch_arch_vs_gpu", torch_arch_vs_gpu },
	{ "mmcv_range", mmcv_range },
	{ "mmcv_ops_missing", mmcv_ops_missing },
	{ "mmcv_cuda_vs_torch", mmcv_cuda_vs_torch },
	{ "soname_link", soname_link },
	{ "soname_copy", soname_copy },
	{ "ld_cache", ld_cache },
	{ "wheel_glibc", wheel_glibc },
	{ "load_not_found", load_not_found },
	{ "load_version_missing", load_version_missing },
	{ "load_cudnn_shadow", load_cudnn_shadow },
	{ "load_cudart_mismatch", load_cudart_mismatch },
	{ NULL, NULL },
};
