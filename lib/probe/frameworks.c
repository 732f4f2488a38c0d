/*
 * The frameworks probe: torch, torchvision and the OpenMMLab packages as
 * Python would import them, from the version.py each one ships (and, for
 * mmcv, whether its compiled ops are there). The distributions pip found
 * say where editable installs live and what version the metadata claims.
 * What the installed files say beats any table: the Python torch's own
 * module and metadata are for, the mmcv range an OpenMMLab __init__.py
 * asserts.
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
#include "util/pysource.h"
#include "util/text.h"
#include "util/vec.h"
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

/*
 * The CPython release in a compiled module's name (PEP 3149):
 * "_C.cpython-311-x86_64-linux-gnu.so" -> "3.11", "_C.cpython-37m-..." ->
 * "3.7"; NULL for another module, or one that names no release
 * ("_C.so", the stable ABI's "_C.abi3.so"). malloc'd.
 */
static char *module_python(const char *name, const char *stem)
{
	const char *t;
	size_t n;

	if (!el_starts_with(name, stem) || !el_ends_with(name, ".so"))
		return NULL;
	t = name + strlen(stem);
	if (!el_starts_with(t, "cpython-"))
		return NULL;
	t += 8;
	n = strspn(t, "0123456789");
	if (n < 2 || n > 4 || t[0] == '0')
		return NULL;
	return el_xasprintf("%c.%.*s", t[0], (int)(n - 1), t + 1);
}

/*
 * The CPython a wheel tag is for (PEP 425): "cp38-cp38-linux_x86_64" ->
 * "3.8"; the stable ABI's "cp38-abi3-..." -> "3.8+" (3.8 and later).
 * Appended to tags; "py3-none-any" and other interpreters say nothing.
 */
static void wheel_python(el_strvec *tags, const char *tag)
{
	const char *abi = strchr(tag, '-'), *p, *end;
	bool abi3;

	if (!abi)
		return;
	abi3 = el_starts_with(abi + 1, "abi3-");
	/* a compressed tag set names several: "cp38.cp39-..." */
	for (p = tag; p < abi; p = end + 1) {
		size_t n = 0;
		char *v;

		end = memchr(p, '.', (size_t)(abi - p));
		if (!end)
			end = abi;
		if (strncmp(p, "cp", 2) == 0)
			n = strspn(p + 2, "0123456789");
		if (n < 2 || n > 4 || p[2] == '0' || p + 2 + n != end)
			continue;
		v = el_xasprintf("%c.%.*s%s", p[2], (int)(n - 1), p + 3, abi3 ? "+" : "");
		if (!el_strvec_has(tags, v))
			el_strvec_push(tags, v);
		free(v);
	}
}

static void set_tags(cJSON *o, el_strvec *tags, const char *source)
{
	cJSON *arr = el_jset_arr(o, "python_tags");

	for (size_t i = 0; i < tags->n; i++)
		el_jpush_str(arr, tags->v[i]);
	el_jset_str(o, "python_tags_source", source);
}

/* The metadata file of a distribution pip recorded: METADATA, an egg-info's PKG-INFO, or the egg-info file. */
static char *dist_metadata(el_probe *p, const cJSON *dist)
{
	const char *path = el_jget_str(dist, "path"), *kind = el_jget_str(dist, "kind");
	struct stat st;

	if (!path || !kind)
		return NULL;
	if (strcmp(kind, "dist-info") == 0)
		return el_path_join(path, "METADATA");
	if (strcmp(kind, "egg-info") != 0 || el_root_stat(&p->root, path, &st) != 0)
		return NULL;
	return S_ISDIR(st.st_mode) ? el_path_join(path, "PKG-INFO") : el_xstrdup(path);
}

/*
 * The Python torch is built for, from its own files: the release tag of
 * its compiled module torch/_C (CPython imports only a module tagged for
 * itself), else its wheel's Tag lines; and its Requires-Python.
 */
static void torch_python(el_probe *p, cJSON *o, const char *dir, const cJSON *dist)
{
	el_strvec tags = { 0 };
	char **names = NULL, *first = NULL, *meta;
	const cJSON *it;

	if (el_root_list(&p->root, dir, &names, NULL) == 0)
		for (char **n = names; *n; n++) {
			char *v = module_python(*n, "_C.");

			if (v && !el_strvec_has(&tags, v))
				el_strvec_push(&tags, v);
			if (v && !first)
				first = *n;
			free(v);
		}
	if (tags.n) {
		/* several modules (two installs over each other): the folder holds the evidence */
		char *source = tags.n == 1 ? el_path_join(dir, first) : el_xstrdup(dir);

		set_tags(o, &tags, source);
		free(source);
	} else if (dist && strcmp(el_jget_str(dist, "kind") ? el_jget_str(dist, "kind") : "", "dist-info") == 0) {
		cJSON_ArrayForEach(it, el_jget(dist, "tags"))
			if (cJSON_IsString(it))
				wheel_python(&tags, it->valuestring);
		if (tags.n) {
			char *wheel = el_path_join(el_jget_str(dist, "path"), "WHEEL");

			set_tags(o, &tags, wheel);
			free(wheel);
		}
	}
	el_strv_free(names);
	el_strvec_release(&tags);

	if (dist && (meta = dist_metadata(p, dist)) != NULL) {
		el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
		char *req = NULL;

		/* pip's probe has warned about a metadata file it could not read */
		if (el_root_read(&p->root, meta, &b, NULL) == 0 && !memchr(b.data, '\0', b.len))
			req = el_rfc822_header(b.data, b.len, "Requires-Python");
		if (req && *req && el_is_text(req, strlen(req))) {
			el_jset_str(o, "requires_python", req);
			el_jset_str(o, "requires_python_source", meta);
		}
		free(req);
		el_buf_release(&b);
		free(meta);
	}
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

/*
 * The mmcv versions an OpenMMLab codebase accepts, from the asserts its
 * __init__.py runs at import (mmcv_maximum_version = '1.8.0' where a user
 * raised it, as they do); not recorded when that file is not there or
 * its check cannot be read for certain.
 */
static void mmcv_range(el_probe *p, cJSON *o, const char *dir)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	char *init = el_path_join(dir, "__init__.py");
	el_mmcv_range r;
	int rc;

	if (el_probe_read_text(p, init, &b) == 0 && (rc = el_py_mmcv_range(b.data, b.len, &r)) >= 0) {
		cJSON *m = el_jset_obj(o, "mmcv_range");

		el_jset_str(m, "source", init);
		el_jset_str(m, "min", r.min);
		el_jset_str(m, "max", r.max);
		if (r.max)
			el_jset_bool(m, "max_inclusive", r.max_inclusive);
		el_mmcv_range_release(&r);
	}
	el_buf_release(&b);
	free(init);
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
	if (strcmp(fw->key, "torch") == 0)
		torch_python(p, o, dir, dist);
	if (fw->flags & EL_FW_MMCV_RANGE)
		mmcv_range(p, o, dir);
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
