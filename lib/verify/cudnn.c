/*
 * The cuDNN stage. The loader's part runs in envlock itself: load cuDNN
 * by its soname as any program would (ld.so.cache, LD_LIBRARY_PATH), ask
 * cudnnGetVersion() and compare it with the locked version, or with the
 * installed header's. When the loader cannot find it but the probe found
 * the file, the rules say why (a missing soname link, a stale
 * ld.so.cache) and how to fix it. Only libraries the probe found on this
 * machine are ever loaded by path: a lockfile names versions, not code
 * to run. The GPU part, one cuDNN operation checked against the CPU,
 * runs in the training program (mlp.cu) with the library found here.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "rules/version.h"
#include "util/root.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "verify.h"

/*
 * cudnnGetVersion()'s number as "M.m.p": CUDNN_VERSION is MAJOR*10000 +
 * MINOR*100 + PATCHLEVEL from cuDNN 9.0 on, MAJOR*1000 + ... before
 * (cudnn_version.h of each release).
 */
static char *decode_version(size_t n)
{
	if (n >= 90000)
		return el_xasprintf("%zu.%zu.%zu", n / 10000, n % 10000 / 100, n % 100);
	return el_xasprintf("%zu.%zu.%zu", n / 1000, n % 1000 / 100, n % 100);
}

/* cuDNN is present in a lock document: its version, or NULL. */
static const char *cudnn_version_of(const cJSON *doc)
{
	const cJSON *c = el_jget(doc, "cudnn");
	const char *st = el_jget_str(c, "status");

	return st && strcmp(st, "present") == 0 ? el_jget_str(c, "version") : NULL;
}

/* The live lock's library whose soname is soname (the main libcudnn, not its parts). */
static const cJSON *live_library(const el_verify_run *run, const char *soname)
{
	const cJSON *lib;

	cJSON_ArrayForEach(lib, el_jget(el_jget(run->live, "cudnn"), "libraries")) {
		const char *s = el_jget_str(lib, "soname"), *name = el_jget_str(lib, "name");

		if (s && name && el_jget_str(lib, "path") && strcmp(s, soname) == 0 && el_starts_with(name, "libcudnn.so"))
			return lib;
	}
	return NULL;
}

/* Any libcudnn.so.N the probe found: its soname (when no version says which to load). */
static const char *any_soname(const el_verify_run *run)
{
	const cJSON *lib;

	cJSON_ArrayForEach(lib, el_jget(el_jget(run->live, "cudnn"), "libraries")) {
		const char *s = el_jget_str(lib, "soname");

		if (s && el_starts_with(s, "libcudnn.so."))
			return s;
	}
	return NULL;
}

typedef size_t (*version_fn)(void);

/* Load path (a soname or a file), read its versions into figures; the loaded file in *where. */
static void *load(const char *path, el_verify_stage *st, char **version, char **where, char **err)
{
	void *h;
	version_fn get, cudart;
	struct link_map *lm = NULL;

	dlerror();
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		*err = el_xstrdup(e ? e : "cannot be loaded");
		return NULL;
	}
	get = (version_fn)(uintptr_t)dlsym(h, "cudnnGetVersion");
	cudart = (version_fn)(uintptr_t)dlsym(h, "cudnnGetCudartVersion");
	if (!get) {
		*err = el_xasprintf("%s: no cudnnGetVersion", path);
		return h;
	}
	*version = decode_version(get());
	el_jset_str(st->figures, "library_version", *version);
	el_jset_int(st->figures, "cudnnGetVersion", (long long)get());
	if (cudart) {
		char *cv = el_verify_cuda_version((long)cudart());

		el_jset_str(st->figures, "built_with_cuda", cv);
		free(cv);
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name) {
		char *real = realpath(lm->l_name, NULL);

		*where = el_xstrdup(real ? real : lm->l_name);
		free(real);
	} else {
		*where = el_xstrdup(path);
	}
	el_jset_str(st->figures, "library", *where);
	return h;
}

/* The loader cannot find soname though the probe found lib: the rules' fix, or the loader path's. */
static void loader_fix(el_verify_run *run, el_verify_stage *st, const cJSON *lib)
{
	const char *path = el_jget_str(lib, "path");
	const envlock_finding *f = el_verify_finding(run, "soname-link-missing", path, NULL);
	char *dir;

	if (!f)
		f = el_verify_finding(run, "ld-cache-stale", path, NULL);
	if (f) {
		el_jset_str(st->figures, "rule", f->rule);
		el_verify_fix(st, "%s (%s)", f->fix, f->message);
		return;
	}
	dir = el_path_dir(path);
	el_verify_fix(st, "'%s' is not on the loader's path: add it to a file in /etc/ld.so.conf.d/ and run ldconfig, or set LD_LIBRARY_PATH",
		      dir);
	free(dir);
}

void el_verify_cudnn_load(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_CUDNN];
	const char *locked = cudnn_version_of(run->locked), *installed = cudnn_version_of(run->live);
	const char *expected = locked ? locked : installed, *soname_found;
	char *soname = NULL, *version = NULL, *where = NULL, *err = NULL, *err2 = NULL;
	const cJSON *lib;
	void *h;

	if (expected) {
		el_jset_str(st->figures, "expected", expected);
		el_jset_str(st->figures, "expected_from", locked ? "lockfile" : el_jget_str(el_jget(run->live, "cudnn"), "header"));
	}
	if (locked && !installed && !any_soname(run)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the lockfile has cuDNN %s; this machine has none (no header, no libcudnn)", locked);
		el_verify_fix(st, "install cuDNN %s for this CUDA toolkit", locked);
		return;
	}
	if (expected && el_version_major(expected) > 0) {
		soname = el_xasprintf("libcudnn.so.%ld", el_version_major(expected));
	} else if ((soname_found = any_soname(run)) != NULL) {
		soname = el_xstrdup(soname_found);
	} else {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "no cuDNN on this machine (no cudnn_version.h or cudnn.h, no libcudnn)");
		return;
	}
	el_jset_str(st->figures, "soname", soname);
	el_verify_progress(run, "loading cuDNN");
	h = load(soname, st, &version, &where, &err);
	if (!h) {
		lib = live_library(run, soname);
		el_jset_str(st->figures, "loader_error", err);
		if (!lib) {
			el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", err);
			el_verify_fix(st, "install cuDNN %s (its %s was found nowhere on this machine)",
				      expected ? expected : "", soname);
			goto done;
		}
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s cannot be loaded by its soname, though '%s' has it: %s", soname,
			      el_jget_str(lib, "path"), err);
		loader_fix(run, st, lib);
		/* read its version all the same, from the file the probe found */
		load(el_jget_str(lib, "path"), st, &version, &where, &err2);
		goto done;
	}
	if (err) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", err);
		goto done;
	}
	if (expected && envlock_version_cmp(version, expected) != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' reports cuDNN %s, but %s has %s", where, version,
			      locked ? "the lockfile" : el_jget_str(el_jget(run->live, "cudnn"), "header"), expected);
		el_verify_fix(st, locked ? "install cuDNN %s, or put its library first on the loader's path"
					 : "the header and the library come from different cuDNN installs (%s): remove one, or order the loader's path",
			      expected);
		goto done;
	}
	run->cudnn_path = el_xstrdup(where);
	run->cudnn_summary = expected
		? el_xasprintf("cuDNN %s loaded by its soname from '%s' matches %s", version, where,
			       locked ? "the lockfile" : el_jget_str(el_jget(run->live, "cudnn"), "header"))
		: el_xasprintf("cuDNN %s loaded by its soname from '%s' (no header or lockfile to compare with)", version, where);
done:
	free(soname);
	free(version);
	free(where);
	free(err);
	free(err2);
	/* a loaded cuDNN stays: unloading would strand its static state, and the program reloads it anyway */
}

void el_verify_cudnn_op(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_CUDNN];
	const el_verify_stage *rt = &run->v->stage[EL_VERIFY_RUNTIME];
	const el_verify_report *r = &run->report;

	if (st->done)
		return;
	if (rt->pub.status != ENVLOCK_VERIFY_PASS) {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "%s; no cuDNN operation was run: %s", run->cudnn_summary,
			      rt->no_gpu ? (run->opts->cpu_only ? "--cpu-only" : "no GPU") : "the runtime stage did not pass");
		return;
	}
	if (r->cudnn_op)
		el_jset_str(st->figures, "operation", r->cudnn_op);
	if (r->cudnn_error) {
		el_jset_str(st->figures, "error", r->cudnn_error);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s, but its operation on the GPU failed: %s", run->cudnn_summary,
			      r->cudnn_error);
		return;
	}
	if (r->cudnn_max_abs_err < 0) {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "%s; no cuDNN operation was run: the program stopped before it", run->cudnn_summary);
		return;
	}
	el_jset(st->figures, "max_abs_error", cJSON_CreateNumber(r->cudnn_max_abs_err));
	el_jset(st->figures, "tolerance", cJSON_CreateNumber(ENVLOCK_VERIFY_CUDNN_TOLERANCE));
	if (!(r->cudnn_max_abs_err <= ENVLOCK_VERIFY_CUDNN_TOLERANCE))
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s, but its %s differs from the CPU's by up to %.3g (%.0e allowed)",
			      run->cudnn_summary, r->cudnn_op ? r->cudnn_op : "operation", r->cudnn_max_abs_err,
			      ENVLOCK_VERIFY_CUDNN_TOLERANCE);
	else
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "%s; its %s on the GPU matches the CPU within %.0e (largest %.2g)",
			      run->cudnn_summary, r->cudnn_op ? r->cudnn_op : "operation", ENVLOCK_VERIFY_CUDNN_TOLERANCE,
			      r->cudnn_max_abs_err);
}
