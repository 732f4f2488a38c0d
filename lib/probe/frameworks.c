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

/* A string-or-None member: "key": "v", "key": null, or nothing; whether it is there. */
static bool set_str_or_null(cJSON *o, const char *key, const char *text, size_t len,
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
	return present;
}


/* The distributions pip recorded for fw, in fw's order of preference. */
static size_t find_dists(const el_pip_found *dists, const framework *fw, const el_dist_found *out[MAX_DISTS])
{
	size_t n = 0;

	for (int i = 0; fw->dists[i]; i++) {
		for (size_t k = 0; k < dists->n; k++) {
			char *norm = el_pep503_name(dists->v[k].name);

			if (strcmp(norm, fw->dists[i]) == 0 && n < MAX_DISTS)
				out[n++] = &dists->v[k];
			free(norm);
		}
	}
	return n;
}

/* Where Python would import key from: editable sources of its own dists, the site dirs, other sources. */
static char *find_module(el_probe *p, const el_pip_found *dists, const el_dist_found *own[], size_t nown,
			 const char *key)
{
	char *dir = NULL;

	for (size_t i = 0; i < nown && !dir; i++) {
		const char *src = own[i]->source;
		char *rsrc = NULL;

		if (src && el_root_realpath(&p->root, src, &rsrc, NULL) == 0)
			dir = el_probe_resolve_dir(p, rsrc, key);
		free(rsrc);
	}
	for (char **s = p->py.site_dirs; s && *s && !dir; s++)
		dir = el_probe_resolve_dir(p, *s, key);
	for (size_t k = 0; k < dists->n && !dir; k++) {
		const char *src = dists->v[k].source;
		char *rsrc = NULL;

		if (src && el_root_realpath(&p->root, src, &rsrc, NULL) == 0)
			dir = el_probe_resolve_dir(p, rsrc, key);
		free(rsrc);
	}
	return dir;
}

/* torch's and torchvision's "cuda": a string, None, or not said; what it says goes into f too */
static void set_cuda(cJSON *o, el_fw_found *f, const char *text, size_t len)
{
	bool present;
	char *v = el_py_assign_str(text, len, "cuda", &present);

	f->cuda_none = present && !v;
	if (v)
		el_jset_str(o, "cuda", v);
	else if (present)
		el_jset(o, "cuda", cJSON_CreateNull());
	f->cuda = v;
}

static void torch_fields(cJSON *o, el_fw_found *f, const char *text, size_t len)
{
	bool hip_none = false, hip, present;
	char *git = el_py_assign_str(text, len, "git_version", &present);
	int debug = el_py_assign_bool(text, len, "debug");

	set_cuda(o, f, text, len);
	hip = set_str_or_null(o, "hip", text, len, &hip_none);
	if (f->cuda || f->cuda_none)
		el_jset_bool(o, "cpu_only", f->cuda_none && (hip_none || !hip));
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
static char *dist_metadata(el_probe *p, const el_dist_found *dist)
{
	const char *path = dist->path, *kind = dist->kind;
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
static void torch_python(el_probe *p, cJSON *o, const char *dir, const el_dist_found *dist)
{
	el_strvec tags = { 0 };
	char **names = NULL, *first = NULL, *meta;

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
	} else if (dist && strcmp(dist->kind, "dist-info") == 0) {
		for (char **t = dist->tags; t && *t; t++)
			wheel_python(&tags, *t);
		if (tags.n) {
			char *wheel = el_path_join(dist->path, "WHEEL");

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
static bool ops_cudart(el_probe *p, cJSON *o, const char *dir, const char *name)
{
	char *path = el_path_join(dir, name), *real = NULL, *host;
	el_elf_info elf;
	bool found = false;
	int fd;

	if (el_root_realpath(&p->root, path, &real, NULL) != 0) {
		free(path);
		return false;
	}
	host = el_root_host(&p->root, real);
	fd = open(host, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && el_elf_read(fd, &elf) == 0) {
		for (char **n = elf.needed; n && *n; n++)
			if (el_starts_with(*n, "libcudart.so.")) {
				el_jset_str(o, "ops_cudart", *n);
				found = true;
			}
		el_elf_info_release(&elf);
	}
	if (fd >= 0)
		close(fd);
	free(host);
	free(real);
	free(path);
	return found;
}

static bool mmcv_ops(el_probe *p, cJSON *o, const char *dir)
{
	char **names = NULL;
	bool ops = false, cudart = false;

	if (el_root_list(&p->root, dir, &names, NULL) == 0)
		for (char **n = names; *n && !ops; n++)
			ops = is_ext(*n);
	el_jset_bool(o, "ops", ops);
	if (ops) {
		cJSON *files = el_jset_arr(o, "ops_files");

		for (char **n = names; *n; n++)
			if (is_ext(*n)) {
				el_jpush_str(files, *n);
				if (!cudart)
					cudart = ops_cudart(p, o, dir, *n);
			}
	}
	el_strv_free(names);
	return ops;
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

static void probe_one(el_probe *p, cJSON *sec, const el_pip_found *dists, const framework *fw, el_fw_found *f)
{
	cJSON *o = el_jset_obj(sec, fw->key);
	const el_dist_found *own[MAX_DISTS];
	const el_dist_found *dist = NULL;
	size_t nown = find_dists(dists, fw, own);
	char *dir = find_module(p, dists, own, nown, fw->key), *vpath, *version = NULL;
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	bool have_text = false, present;

	f->key = fw->key;
	if (!dir) {
		el_jset_str(o, "status", "absent");
		if (nown) {
			el_jset_str(o, "dist_version", own[0]->version);
			el_probe_warn(p, "'%s': installed, but no '%s' package directory was found",
				      own[0]->path, fw->key);
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
		if (version && strcmp(own[i]->version, version) == 0)
			dist = own[i];
	if (!dist && nown)
		dist = own[0];

	/* there, but no version to be found: "unknown" */
	f->present = version || dist;
	el_jset_str(o, "status", f->present ? "present" : "unknown");
	f->path = el_xstrdup(version || have_text ? vpath : dir);
	el_jset_str(o, "path", f->path);
	if (version) {
		f->version = el_xstrdup(version);
	} else if (dist) {
		/* a version.py that computes __version__ (or none at all) */
		f->version = el_xstrdup(dist->version);
		el_jset_str(o, "version_source", "dist-info");
	}
	el_jset_str(o, "version", f->version);
	if (dist && version && strcmp(dist->version, version) != 0)
		el_jset_str(o, "dist_version", dist->version);
	/* the object whose file dpkg may have installed (Debian's python3-torch) */
	el_probe_want_deb(p, o, f->path, NULL);

	if (have_text && strcmp(fw->key, "torch") == 0)
		torch_fields(o, f, b.data, b.len);
	if (strcmp(fw->key, "torch") == 0)
		torch_python(p, o, dir, dist);
	if (fw->flags & EL_FW_MMCV_RANGE)
		mmcv_range(p, o, dir);
	else if (have_text && strcmp(fw->key, "torchvision") == 0)
		set_cuda(o, f, b.data, b.len);
	if (strcmp(fw->key, "mmcv") == 0) {
		if (dist) {
			char *norm = el_pep503_name(dist->name);

			el_jset_str(o, "package", norm);
			free(norm);
		}
		f->ops = mmcv_ops(p, o, dir);
	}
	free(version);
	free(vpath);
	free(dir);
	el_buf_release(&b);
}

void el_probe_frameworks(el_probe *p)
{
	cJSON *sec = el_probe_section(p, EL_SEC_FRAMEWORKS);
	size_t n = 0;

	while (el_frameworks[n].key)
		n++;
	p->fw = el_xcalloc(n + 1, sizeof(*p->fw)); /* ends with a NULL key */
	for (size_t i = 0; i < n; i++)
		probe_one(p, sec, &p->pip, &el_frameworks[i], &p->fw[i]);
}
