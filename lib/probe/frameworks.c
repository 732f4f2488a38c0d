/*
 * The frameworks probe: torch, torchvision and the OpenMMLab packages as
 * Python would import them, from the version.py each one ships (and, for
 * mmcv, whether its compiled ops are there). The distributions pip found
 * say where editable installs live and what version the metadata claims.
 */
#include <ctype.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "lock/view.h"
#include "probe.h"
#include "util/elf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* the frameworks and their distributions are the lock view's registry (lib/lock/view.c) */
typedef el_framework_info framework;

#define MAX_DISTS 4

/* A string-or-None member: "key": "v", "key": null, or nothing. */
static void set_str_or_null(cJSON *o, const char *key, const char *text, size_t len,
			    bool *was_none)
{
	bool present;
	char *v = el_py_assign_str(text, len, key, &present);

	if (was_none)
		*was_none = present && !v;
	if (v)
		el_jset_str(o, key, v);
	else if (present)
		el_jset(o, key, cJSON_CreateNull());
	free(v);
}


/* The distributions pip recorded for fw, in fw's order of preference. */
static size_t find_dists(const cJSON *dists, const framework *fw, const cJSON *out[MAX_DISTS])
{
	size_t n = 0;

	for (int i = 0; fw->dists[i]; i++) {
		const cJSON *it;

		cJSON_ArrayForEach(it, dists) {
			const char *name = el_jget_str(it, "name");
			char *norm;

			if (!name || !el_jget_str(it, "version"))
				continue;
			norm = el_pep503_name(name);
			if (strcmp(norm, fw->dists[i]) == 0 && n < MAX_DISTS)
				out[n++] = it;
			free(norm);
		}
	}
	return n;
}

/* Where Python would import key from: editable sources of its own dists, the site dirs, other sources. */
static char *find_module(el_probe *p, const cJSON *dists, const cJSON *own[], size_t nown,
			 const char *key)
{
	char *dir = NULL;
	const cJSON *it;

	for (size_t i = 0; i < nown && !dir; i++) {
		const char *src = el_jget_str(own[i], "source");
		char *rsrc = NULL;

		if (src && el_root_realpath(&p->root, src, &rsrc, NULL) == 0)
			dir = el_probe_resolve_dir(p, rsrc, key);
		free(rsrc);
	}
	for (char **s = p->py.site_dirs; s && *s && !dir; s++)
		dir = el_probe_resolve_dir(p, *s, key);
	cJSON_ArrayForEach(it, dists) {
		const char *src = el_jget_str(it, "source");
		char *rsrc = NULL;

		if (dir)
			break;
		if (src && el_root_realpath(&p->root, src, &rsrc, NULL) == 0)
			dir = el_probe_resolve_dir(p, rsrc, key);
		free(rsrc);
	}
	return dir;
}

static void torch_fields(cJSON *o, const char *text, size_t len)
{
	bool cuda_none = false, hip_none = false, present;
	char *git = el_py_assign_str(text, len, "git_version", &present);
	int debug = el_py_assign_bool(text, len, "debug");

	set_str_or_null(o, "cuda", text, len, &cuda_none);
	set_str_or_null(o, "hip", text, len, &hip_none);
	if (el_jget(o, "cuda"))
		el_jset_bool(o, "cpu_only", cuda_none && (hip_none || !el_jget(o, "hip")));
	el_jset_str(o, "git_version", git);
	if (debug >= 0)
		el_jset_bool(o, "debug", debug == 1);
	free(git);
}

/* mmcv's compiled ops: mmcv/_ext.cpython-37m-x86_64-linux-gnu.so */
static bool is_ext(const char *name)
{
	return el_starts_with(name, "_ext") && strstr(name, ".so") != NULL;
}

/*
 * The CUDA runtime the ops were linked against, from the library's
 * DT_NEEDED ("libcudart.so.10.2"): it must be the CUDA torch was built
 * for, or loading mmcv._ext fails.
 */
static void ops_cudart(el_probe *p, cJSON *o, const char *dir, const char *name)
{
	char *path = el_path_join(dir, name), *real = NULL, *host;
	el_elf_info elf;
	int fd;

	if (el_root_realpath(&p->root, path, &real, NULL) != 0) {
		free(path);
		return;
	}
	host = el_root_host(&p->root, real);
	fd = open(host, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && el_elf_read(fd, &elf) == 0) {
		for (char **n = elf.needed; n && *n; n++)
			if (el_starts_with(*n, "libcudart.so."))
				el_jset_str(o, "ops_cudart", *n);
		el_elf_info_release(&elf);
	}
	if (fd >= 0)
		close(fd);
	free(host);
	free(real);
	free(path);
}

static void mmcv_ops(el_probe *p, cJSON *o, const char *dir)
{
	char **names = NULL;
	bool ops = false;

	if (el_root_list(&p->root, dir, &names, NULL) == 0)
		for (char **n = names; *n && !ops; n++)
			ops = is_ext(*n);
	el_jset_bool(o, "ops", ops);
	if (ops) {
		cJSON *files = el_jset_arr(o, "ops_files");

		for (char **n = names; *n; n++)
			if (is_ext(*n)) {
				el_jpush_str(files, *n);
				if (!el_jget(o, "ops_cudart"))
					ops_cudart(p, o, dir, *n);
			}
	}
	el_strv_free(names);
}

static void probe_one(el_probe *p, cJSON *sec, const cJSON *dists, const framework *fw)
{
	cJSON *o = el_jset_obj(sec, fw->key);
	const cJSON *own[MAX_DISTS];
	const cJSON *dist = NULL;
	size_t nown = find_dists(dists, fw, own);
	char *dir = find_module(p, dists, own, nown, fw->key), *vpath, *version = NULL;
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	bool have_text = false, present;

	if (!dir) {
		el_jset_str(o, "status", "absent");
		if (nown) {
			el_jset_str(o, "dist_version", el_jget_str(own[0], "version"));
			el_probe_warn(p, "'%s': installed, but no '%s' package directory was found",
				      el_jget_str(own[0], "path"), fw->key);
		}
		return;
	}
	vpath = el_path_join(dir, "version.py");
	if (el_probe_read_text(p, vpath, &b) == 0) {
		have_text = true;
		version = el_py_assign_str(b.data, b.len, "__version__", &present);
	}
	/* the distribution that matches what is imported */
	for (size_t i = 0; i < nown && !dist; i++)
		if (version && strcmp(el_jget_str(own[i], "version"), version) == 0)
			dist = own[i];
	if (!dist && nown)
		dist = own[0];

	/* there, but no version to be found: "unknown" */
	el_jset_str(o, "status", version || dist ? "present" : "unknown");
	if (version) {
		el_jset_str(o, "version", version);
		el_jset_str(o, "path", vpath);
	} else if (dist) {
		/* a version.py that computes __version__ (or none at all) */
		el_jset_str(o, "version", el_jget_str(dist, "version"));
		el_jset_str(o, "version_source", "dist-info");
		el_jset_str(o, "path", have_text ? vpath : dir);
	} else {
		el_jset_str(o, "path", have_text ? vpath : dir);
	}
	if (dist && version && strcmp(el_jget_str(dist, "version"), version) != 0)
		el_jset_str(o, "dist_version", el_jget_str(dist, "version"));

	if (have_text && strcmp(fw->key, "torch") == 0)
		torch_fields(o, b.data, b.len);
	else if (have_text && strcmp(fw->key, "torchvision") == 0)
		set_str_or_null(o, "cuda", b.data, b.len, NULL);
	if (strcmp(fw->key, "mmcv") == 0) {
		if (dist) {
			char *norm = el_pep503_name(el_jget_str(dist, "name"));

			el_jset_str(o, "package", norm);
			free(norm);
		}
		mmcv_ops(p, o, dir);
	}
	free(version);
	free(vpath);
	free(dir);
	el_buf_release(&b);
}

void el_probe_frameworks(el_probe *p)
{
	cJSON *sec = el_probe_section(p, "frameworks");
	const cJSON *dists = el_jget(el_jget(p->doc, "pip"), "distributions");

	for (const el_framework_info *fw = el_frameworks; fw->key; fw++)
		probe_one(p, sec, cJSON_IsArray(dists) ? dists : NULL, fw);
}
