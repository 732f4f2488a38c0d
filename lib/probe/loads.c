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
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader/loader.h"
#include "lock/model.h"
#include "lock/view.h"
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

typedef struct {
	el_probe *p;
	el_loader *ld;
	cJSON *modules;
	const char *llp;  /* LD_LIBRARY_PATH as recorded, or NULL */
	size_t n;
	/* the process: python's tree, and what it has loaded before the next import (torch's) */
	el_ld_tree *python;
	el_ld_tree *loaded[MAX_TREES + 1];
	size_t nloaded;
} loads;

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
	envlock_ctx *ctx = L->p->ctx;
	cJSON *m;

	if (L->n == MAX_MODULES) {
		el_probe_warn(L->p, "'%s': more than %d compiled modules, the rest is not resolved", path, MAX_MODULES);
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
static char *package_dir(const el_framework *fw)
{
	if (!fw || !fw->st.present || !fw->path)
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

static void framework_modules(loads *L, const el_view *v, const char *key, const char *prefix, bool keep)
{
	char *dir = package_dir(el_view_framework(v, key)), **names = NULL;

	if (!dir)
		return;
	if (el_root_list(&L->p->root, dir, &names, NULL) == 0)
		for (char **n = names; *n; n++)
			if (is_module(*n, prefix)) {
				char *path = el_path_join(dir, *n);

				record(L, key, path, keep);
				free(path);
			}
	el_strv_free(names);
	free(dir);
}

static const char *env_var(const el_view *v, const char *name)
{
	for (size_t i = 0; v->env.st.present && i < v->env.variables.n; i++)
		if (strcmp(v->env.variables.v[i].key, name) == 0)
			return v->env.variables.v[i].val;
	return NULL;
}

void el_probe_loads(el_probe *p)
{
	cJSON *sec = el_probe_section(p, "loads");
	el_view *v = el_view_new(p->doc);
	loads L;

	memset(&L, 0, sizeof(L));
	L.p = p;

	L.llp = env_var(v, "LD_LIBRARY_PATH");
	L.modules = cJSON_CreateArray();
	if (!L.modules)
		el_oom();
	el_loader_new(&L.ld, p->ctx, &p->root);
	if (v->python.st.present && v->python.executable)
		L.python = record(&L, "python", v->python.executable, true);
	/* torchvision and mmcv import torch first: its libraries are loaded when theirs are */
	framework_modules(&L, v, "torch", "_C", true);
	framework_modules(&L, v, "torchvision", "_C", false);
	framework_modules(&L, v, "mmcv", "_ext", false);
	for (size_t i = 0; i < L.nloaded; i++)
		el_ld_tree_free(L.loaded[i]);
	el_loader_free(L.ld);

	if (cJSON_GetArraySize(L.modules) == 0) {
		el_jset_str(sec, "status", "absent");
		cJSON_Delete(L.modules);
	} else {
		el_jset_str(sec, "status", "present");
		if (L.llp)
			el_jset_str(sec, "library_path", L.llp);
		el_jset(sec, "modules", L.modules);
	}
	el_view_free(v);
}
