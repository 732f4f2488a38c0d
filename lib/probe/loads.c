/*
 * The loader's answer, recorded: for the environment's python and each
 * framework's compiled modules (torch/_C*.so, torchvision/_C*.so,
 * mmcv/_ext*.so), what glibc's ld.so would load (lib/loader), under the
 * root and with the LD_LIBRARY_PATH the env section recorded. Each module
 * lists every DT_NEEDED name of every object it loads (so torch's
 * libtorch* and their needs too), what found it or where the loader
 * looked in vain, and the symbol versions a library does not define.
 * Nothing is run; one el_loader serves every module, so each library is
 * parsed once.
 *
 * The resolution is half of a live save's time (torch's _C loads some 270
 * libraries on Debian), and it needs only what the python, frameworks and
 * environ probes hand over (p->py, p->fw, p->env_recorded):
 * el_probe_loads_start copies what it needs of them and resolves on a
 * thread of its own while the CUDA, cuDNN, compiler, checkpoint, config,
 * repository and dpkg probes run; el_probe_loads_finish writes the
 * section. The thread touches neither the sections nor the probe's
 * context: its warnings wait for the finish.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader/loader.h"
#include "lock/model.h"
#include "probe.h"
#include "util/error.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define MAX_MODULES 16   /* the schema allows 32 */
#define MAX_NEEDED 192   /* per module; the schema allows 256 (torch 2.x's _C loads about 60) */
#define MAX_MISSING 64
#define MAX_SEARCHED 32

#define MAX_TREES (MAX_MODULES + 1)

/* The frameworks whose compiled modules are resolved, in import order: torchvision and mmcv import torch first */
static const struct {
	const char *key, *prefix;
	bool keep; /* stays loaded for the modules after it */
} fw_modules[] = {
	{ "torch", "_C", true },
	{ "torchvision", "_C", false },
	{ "mmcv", "_ext", false },
};
#define NFW (sizeof(fw_modules) / sizeof(fw_modules[0]))

struct el_probe_loads {
	const el_root *root;
	envlock_ctx ctx;  /* the thread's own: resolution errors go into the modules */
	el_loader *ld;
	cJSON *modules;
	char *llp;        /* LD_LIBRARY_PATH as recorded, or NULL */
	char *python_exe; /* the python section's executable, or NULL */
	char *fw_dirs[NFW]; /* each framework's package folder, or NULL */
	el_strvec warnings; /* said when the section is written */
	pthread_t thread;
	bool threaded;
	size_t n;         /* modules met; the first MAX_MODULES are written */
	/* the process: python's tree, and what it has loaded before the next import (torch's) */
	el_ld_tree *python;
	el_ld_tree *loaded[MAX_TREES + 1];
	size_t nloaded;
};
typedef struct el_probe_loads loads;

/* In tree, the real path of the file the need name resolved to, or NULL. */
static const char *resolved_in(const el_ld_tree *t, const char *name)
{
	for (size_t i = 0; t && i < t->nobjs; i++)
		for (size_t k = 0; k < t->objs[i]->nneeded; k++)
			if (t->objs[i]->needed[k].obj && strcmp(t->objs[i]->needed[k].name, name) == 0)
				return t->objs[i]->needed[k].obj->realpath;
	return NULL;
}

static void record_need(cJSON *arr, const el_ld_tree *t, const el_ld_obj *by, const el_ld_need *need,
			const el_ld_tree *bare)
{
	cJSON *e = el_jpush_obj(arr);
	const el_ld_obj *o = need->obj;

	el_jset_str(e, "soname", need->name);
	el_jset_str(e, "needed_by", by->path);
	if (o) {
		el_jset_str(e, "found_by", el_ld_tree_owns(t, o) ? el_ld_how_name(o->how) : "loaded");
		el_jset_str(e, "path", o->path);
		if (strcmp(o->path, o->realpath) != 0)
			el_jset_str(e, "realpath", o->realpath);
		if (o->how == EL_LD_LIBRARY_PATH && bare) {
			const char *alt = resolved_in(bare, need->name);

			if (alt && strcmp(alt, o->realpath) != 0)
				el_jset_str(e, "without_library_path", alt);
		}
		return;
	}
	el_jset_str(e, "found_by", need->error ? "error" : "not_found");
	if (need->error)
		el_jset_str(e, "error", need->error);
	if (need->searched) {
		cJSON *s = el_jset_arr(e, "searched");

		for (size_t i = 0; need->searched[i] && i < MAX_SEARCHED; i++)
			el_jpush_str(s, need->searched[i]);
	}
}

/* Every object's needs in load order; a loaded object once, a missing name each time it is needed. */
static void record_tree(cJSON *m, const el_ld_tree *t, const el_ld_tree *bare)
{
	cJSON *arr = el_jset_arr(m, "needed");
	el_strvec seen = EL_STRVEC_INIT;
	size_t n = 0;
	bool truncated = t->truncated;

	for (size_t i = 0; i < t->nobjs && !truncated; i++) {
		const el_ld_obj *obj = t->objs[i];

		for (size_t k = 0; k < obj->nneeded; k++) {
			const el_ld_need *need = &obj->needed[k];

			if (need->obj && el_strvec_has(&seen, need->obj->realpath))
				continue;
			if (n == MAX_NEEDED) {
				truncated = true;
				break;
			}
			if (need->obj)
				el_strvec_push(&seen, need->obj->realpath);
			record_need(arr, t, obj, need, bare);
			n++;
		}
	}
	el_strvec_release(&seen);
	if (t->nmissing) {
		cJSON *miss = el_jset_arr(m, "missing_versions");

		for (size_t i = 0; i < t->nmissing && i < MAX_MISSING; i++) {
			cJSON *e = el_jpush_obj(miss);

			el_jset_str(e, "file", t->missing[i].file);
			el_jset_str(e, "version", t->missing[i].version);
			el_jset_str(e, "library", t->missing[i].library);
			if (t->missing[i].library_path)
				el_jset_str(e, "library_path", t->missing[i].library_path);
		}
		truncated = truncated || t->nmissing > MAX_MISSING;
	}
	if (truncated)
		el_jset_bool(m, "truncated", true);
}

/* Resolve the module at path; keep: it stays loaded for the modules after it. Returns its tree if kept. */
static el_ld_tree *record(loads *L, const char *framework, const char *path, bool keep)
{
	const el_ld_tree *const *pre = (const el_ld_tree *const *)L->loaded;
	el_ld_opts opts = { L->llp, NULL, NULL, L->python, pre }, bare_opts = { NULL, NULL, NULL, L->python, pre };
	el_ld_tree *t = NULL, *bare = NULL;
	envlock_ctx *ctx = &L->ctx;
	cJSON *m;

	if (L->n == MAX_MODULES) {
		el_strvec_push_owned(&L->warnings, el_xasprintf("'%s': more than %d compiled modules, the rest is not resolved",
								path, MAX_MODULES));
		L->n++;
		return NULL;
	}
	if (L->n > MAX_MODULES)
		return NULL;
	L->n++;
	m = el_jpush_obj(L->modules);
	el_jset_str(m, "framework", framework);
	el_jset_str(m, "path", path);
	if (el_loader_resolve(&t, ctx, L->ld, path, &opts) != 0) {
		el_jset_str(m, "error", envlock_error_last(ctx));
		return NULL;
	}
	/* what LD_LIBRARY_PATH changes: the same file resolved without it */
	if (L->llp && el_loader_resolve(&bare, ctx, L->ld, path, &bare_opts) != 0)
		bare = NULL;
	record_tree(m, t, bare);
	el_ld_tree_free(bare);
	if (keep && L->nloaded < MAX_TREES)
		return L->loaded[L->nloaded++] = t;
	el_ld_tree_free(t);
	return NULL;
}

/* The framework's package folder: its recorded path is version.py in it, or the folder itself. */
static char *package_dir(const el_probe *p, const char *key)
{
	const el_fw_found *fw = p->fw;

	while (fw && fw->key && strcmp(fw->key, key) != 0)
		fw++;
	if (!fw || !fw->key || !fw->present || !fw->path)
		return NULL;
	if (strcmp(el_path_base(fw->path), "version.py") == 0)
		return el_path_dir(fw->path);
	return el_xstrdup(fw->path);
}

/* name is a compiled module: prefix, then anything, then ".so" ("_C.cpython-311-x86_64-linux-gnu.so"). */
static bool is_module(const char *name, const char *prefix)
{
	size_t len = strlen(name);

	return el_starts_with(name, prefix) && len > 3 && strcmp(name + len - 3, ".so") == 0;
}

static void framework_modules(loads *L, const char *key, const char *dir, const char *prefix, bool keep)
{
	char **names = NULL;

	if (el_root_list(L->root, dir, &names, NULL) == 0)
		for (char **n = names; *n; n++)
			if (is_module(*n, prefix)) {
				char *path = el_path_join(dir, *n);

				record(L, key, path, keep);
				free(path);
			}
	el_strv_free(names);
}

/* The resolution: python's tree, then each framework's modules with what was imported before them. */
static void resolve_all(loads *L)
{
	el_loader_new(&L->ld, &L->ctx, L->root);
	if (L->python_exe)
		L->python = record(L, "python", L->python_exe, true);
	for (size_t i = 0; i < NFW; i++)
		if (L->fw_dirs[i])
			framework_modules(L, fw_modules[i].key, L->fw_dirs[i], fw_modules[i].prefix, fw_modules[i].keep);
	for (size_t i = 0; i < L->nloaded; i++)
		el_ld_tree_free(L->loaded[i]);
	el_loader_free(L->ld);
	L->ld = NULL;
}

/* The thread's entry: the resolution, then what the root kept for this thread let go. */
static void *resolve_thread(void *arg)
{
	resolve_all(arg);
	el_root_thread_done();
	return NULL;
}

void el_probe_loads_start(el_probe *p)
{
	loads *L = el_xcalloc(1, sizeof(*L));
	const char *llp = el_probe_recorded_env(p, "LD_LIBRARY_PATH");

	L->root = &p->root;
	L->modules = cJSON_CreateArray();
	if (!L->modules)
		el_oom();
	L->llp = llp ? el_xstrdup(llp) : NULL;
	if (p->py.executable)
		L->python_exe = el_xstrdup(p->py.executable);
	for (size_t i = 0; i < NFW; i++)
		L->fw_dirs[i] = package_dir(p, fw_modules[i].key);
	/* without a thread, the same work runs here */
	L->threaded = pthread_create(&L->thread, NULL, resolve_thread, L) == 0;
	if (!L->threaded)
		resolve_all(L);
	p->loads = L;
}

void el_probe_loads_finish(el_probe *p)
{
	loads *L = p->loads;
	cJSON *sec;

	if (!L)
		return;
	p->loads = NULL;
	sec = el_probe_section(p, EL_SEC_LOADS);
	if (L->threaded)
		pthread_join(L->thread, NULL);
	for (size_t i = 0; i < L->warnings.n; i++)
		el_probe_warn(p, "%s", L->warnings.v[i]);
	if (L->n == 0) {
		el_jset_str(sec, "status", "absent");
		cJSON_Delete(L->modules);
	} else {
		el_jset_str(sec, "status", "present");
		if (L->llp)
			el_jset_str(sec, "library_path", L->llp);
		el_jset(sec, "modules", L->modules);
	}
	el_strvec_release(&L->warnings);
	for (size_t i = 0; i < NFW; i++)
		free(L->fw_dirs[i]);
	free(L->python_exe);
	free(L->llp);
	free(L);
}
