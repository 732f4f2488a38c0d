/*
 * A lock flattened into (section, key, value) items that a person reads:
 * ("cuda", "version", "10.2.89"), ("pip", "torch", "1.10.0+cu102"),
 * ("conda", "numpy", "1.21.6 py37h976b520_0 conda-forge"). Packages are
 * keyed by name, so the same package in A and B is one item; conda and pip
 * are separate sections. A lockfile is untrusted: every member is read
 * with a type check and nothing is followed deeper than the format goes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "lock/model.h"
#include "lock/view.h"
#include "util/text.h"

#define FL_MAX_TEXT (1u << 20)
#define FL_MAX_DISTINCT 16

typedef struct {
	el_item_fn fn;
	void *data;
	int section;
	el_buf key, val;
} fl;

static const char *or_else(const char *s, const char *fallback)
{
	return s ? s : fallback;
}


static void put(fl *f, const char *key, const char *val)
{
	if (key && val)
		f->fn(f->data, f->section, key, val);
}

static const char *vformat(el_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	el_buf_reset(b);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || el_buf_reserve(b, (size_t)n) != 0)
		return NULL;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return b->data;
}

/* A key built in f's key buffer (valid until the next K). */
static const char *K(fl *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *K(fl *f, const char *fmt, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, fmt);
	s = vformat(&f->key, fmt, ap);
	va_end(ap);
	return s;
}

/* A value built in f's value buffer (valid until the next V). */
static const char *V(fl *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *V(fl *f, const char *fmt, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, fmt);
	s = vformat(&f->val, fmt, ap);
	va_end(ap);
	return s;
}

/* Distinct strings with counts, in order of first appearance ("2 × Tesla V100"). */
typedef struct {
	const char *s[FL_MAX_DISTINCT];
	long n[FL_MAX_DISTINCT];
	size_t count;
	long other;
} tally;

static void tally_add(tally *t, const char *s)
{
	for (size_t i = 0; i < t->count; i++)
		if (strcmp(t->s[i], s) == 0) {
			t->n[i]++;
			return;
		}
	if (t->count == FL_MAX_DISTINCT) {
		t->other++;
		return;
	}
	t->s[t->count] = s;
	t->n[t->count++] = 1;
}

/* "2 × A, 1 × B" (with_counts) or "A, B" into f's value buffer. */
static const char *tally_join(fl *f, const tally *t, int with_counts)
{
	el_buf_reset(&f->val);
	for (size_t i = 0; i < t->count; i++) {
		if (i)
			el_buf_puts(&f->val, ", ");
		if (with_counts)
			el_buf_printf(&f->val, "%ld × ", t->n[i]);
		el_buf_puts(&f->val, t->s[i]);
	}
	if (t->other)
		el_buf_printf(&f->val, "%s%ld more", t->count ? ", " : "", t->other);
	return t->count || t->other ? el_buf_cstr(&f->val) : NULL;
}

static void flat_system(fl *f, const cJSON *sys)
{
	const cJSON *os = el_jget(sys, "os"), *glibc = el_jget(sys, "glibc");
	const cJSON *cont = el_jget(sys, "container"), *cpu = el_jget(sys, "cpu");
	const cJSON *mem = el_jget(sys, "memory"), *ldc = el_jget(sys, "ld_cache");
	const cJSON *conf = el_jget(sys, "ld_so_conf"), *e;

	f->section = EL_SEC_SYSTEM;
	if (el_present(os)) {
		const char *name = el_jget_str(os, "name");

		if (el_jget_str(os, "pretty_name"))
			put(f, "os", el_jget_str(os, "pretty_name"));
		else if (name)
			put(f, "os", V(f, "%s %s", name, or_else(el_jget_str(os, "version_id"), "")));
	}
	put(f, "arch", el_jget_str(sys, "arch"));
	put(f, "kernel", el_jget_str(el_jget(sys, "kernel"), "release"));
	if (el_present(glibc))
		put(f, "glibc", el_jget_str(glibc, "version"));
	if (cJSON_IsObject(cont))
		put(f, "container", el_jget_bool(cont, "detected", false)
			? or_else(el_jget_str(cont, "kind"), "yes") : "none");
	if (cJSON_IsObject(cpu)) {
		put(f, "cpu", el_jget_str(cpu, "model"));
		put(f, "cpu cores", V(f, "%lld cores, %lld threads", el_jget_int(cpu, "physical_cores", 0),
				      el_jget_int(cpu, "logical_cores", 0)));
	}
	/* rounded: nodes of one model report a few KiB apart */
	if (cJSON_IsObject(mem))
		put(f, "memory", V(f, "%.1f GiB", (double)el_jget_int(mem, "total_bytes", 0) / (1u << 30)));
	if (cJSON_IsObject(ldc))
		put(f, "ld.so.cache", el_jget_str(ldc, "status"));
	if (cJSON_IsArray(conf))
		cJSON_ArrayForEach(e, conf)
			if (cJSON_IsString(e))
				put(f, K(f, "ld.so.conf %s", e->valuestring), "listed");
}

static void flat_gpu(fl *f, const cJSON *gpu)
{
	const cJSON *drv = el_jget(gpu, "driver"), *devs = el_jget(gpu, "devices"), *d;
	tally names = { 0 }, cc = { 0 };

	f->section = EL_SEC_GPU;
	if (el_present(drv)) {
		put(f, "driver", el_jget_str(drv, "version"));
		put(f, "driver flavour", el_jget_str(drv, "flavour"));
		put(f, "driver max CUDA", el_jget_str(drv, "max_cuda"));
	}
	if (!cJSON_IsArray(devs))
		return;
	cJSON_ArrayForEach(d, devs) {
		tally_add(&names, or_else(el_jget_str(d, "name"), "unknown GPU"));
		if (el_jget_str(d, "compute_capability"))
			tally_add(&cc, el_jget_str(d, "compute_capability"));
	}
	put(f, "devices", tally_join(f, &names, 1));
	put(f, "compute capability", tally_join(f, &cc, 0));
}

/* Length of a library's stem: "libcublas.so.10.2.2.89" -> "libcublas". */
static int lib_stem(const char *name)
{
	const char *so = strstr(name, ".so");

	return (int)(so ? (size_t)(so - name) : strlen(name));
}

/* "<file> sha256:<hex>", plus what would stop the loader finding it. */
static const char *lib_value(fl *f, const cJSON *lib, const char *file)
{
	const char *sha = el_jget_str(lib, "sha256"), *link = el_jget_str(lib, "soname_link");
	const char *cache = el_jget_str(lib, "ld_cache");

	el_buf_reset(&f->val);
	el_buf_puts(&f->val, file);
	if (sha)
		el_buf_printf(&f->val, " sha256:%s", sha);
	if (link && strcmp(link, "ok") != 0 && strcmp(link, "self") != 0)
		el_buf_printf(&f->val, ", soname link %s", link);
	if (cache && strcmp(cache, "listed") != 0 && strcmp(cache, "unknown") != 0)
		el_buf_printf(&f->val, ", ld.so.cache %s", cache);
	return el_buf_cstr(&f->val);
}

static void flat_cuda(fl *f, const cJSON *doc)
{
	const cJSON *cuda = el_jget(doc, "cuda"), *tks = el_jget(cuda, "toolkits"), *tk, *lib;
	const cJSON *main = el_default_toolkit(doc);
	const char *def = el_jget_str(cuda, "default");

	f->section = EL_SEC_CUDA;
	if (!cJSON_IsArray(tks))
		return;
	if (main)
		put(f, "version", el_jtoolkit_version(main));
	put(f, "default", def);
	cJSON_ArrayForEach(tk, tks) {
		const char *home = el_jget_str(tk, "home"), *nvcc_path;
		const cJSON *libs = el_jget(tk, "libraries"), *nvcc = el_jget(tk, "nvcc");

		if (!home)
			continue;
		put(f, K(f, "toolkit %s", home),
		    or_else(el_jtoolkit_version(tk), or_else(el_jget_str(tk, "status"), "unknown")));
		nvcc_path = el_jget_str(nvcc, "path");
		if (nvcc_path)
			put(f, K(f, "toolkit %s nvcc", home), or_else(el_jget_str(nvcc, "version"), "present"));
		if (!cJSON_IsArray(libs))
			continue;
		cJSON_ArrayForEach(lib, libs) {
			const char *name = el_jget_str(lib, "name");

			if (name)
				put(f, K(f, "toolkit %s %.*s", home, lib_stem(name), name), lib_value(f, lib, name));
		}
	}
}

static void flat_cudnn(fl *f, const cJSON *cudnn)
{
	const cJSON *libs = el_jget(cudnn, "libraries"), *lib;

	f->section = EL_SEC_CUDNN;
	if (!cJSON_IsObject(cudnn))
		return;
	put(f, "version", el_jget_str(cudnn, "version"));
	put(f, "header", el_jget_str(cudnn, "header"));
	if (!cJSON_IsArray(libs))
		return;
	/* keyed by stem, valued by path: a hand-copied cuDNN shows where it moved */
	cJSON_ArrayForEach(lib, libs) {
		const char *name = el_jget_str(lib, "name"), *path = el_jget_str(lib, "path");

		if (name)
			put(f, K(f, "%.*s", lib_stem(name), name), lib_value(f, lib, or_else(path, name)));
	}
}

static void flat_compilers(fl *f, const cJSON *comp)
{
	const cJSON *def = el_jget(comp, "default"), *gccs = el_jget(comp, "gcc"), *g;

	f->section = EL_SEC_COMPILERS;
	if (!el_present(comp))
		return;
	if (cJSON_IsObject(def))
		put(f, or_else(el_jget_str(def, "name"), "cc"), el_jget_str(def, "version"));
	if (!cJSON_IsArray(gccs))
		return;
	cJSON_ArrayForEach(g, gccs) {
		const char *version = el_jget_str(g, "version");

		if (version)
			put(f, K(f, "gcc-%s", or_else(el_jget_str(g, "major"), version)),
			    V(f, "%s%s", version, el_jget_bool(g, "gxx", true) ? "" : " (no g++)"));
	}
}

static void flat_python(fl *f, const cJSON *py)
{
	f->section = EL_SEC_PYTHON;
	if (!el_present(py))
		return;
	put(f, "version", el_jget_str(py, "version"));
	put(f, "kind", el_jget_str(py, "kind"));
	put(f, "prefix", el_jget_str(py, "prefix"));
}

/*
 * A conda channel as people write it: ".../conda-forge/linux-64" ->
 * "conda-forge", "https://repo.anaconda.com/pkgs/main/linux-64" -> "pkgs/main".
 */
static void put_channel(el_buf *b, const char *ch, const char *subdir)
{
	const char *p = strstr(ch, "://"), *slash;
	size_t len;

	if (p && (slash = strchr(p + 3, '/')) != NULL && slash[1])
		p = slash + 1;
	else
		p = ch;
	len = strlen(p);
	while (len && p[len - 1] == '/')
		len--;
	if (subdir && *subdir) {
		size_t sl = strlen(subdir);

		if (len > sl && p[len - sl - 1] == '/' && strncmp(p + len - sl, subdir, sl) == 0)
			len -= sl + 1;
	}
	el_buf_put(b, p, len);
}

static const char *str_of(const cJSON *v)
{
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A package's members in one pass: el_jget scans the members for each lookup. */
typedef struct {
	const cJSON *name, *version, *build, *channel, *subdir;             /* conda */
	const cJSON *installer, *editable, *source, *direct_url;            /* pip */
} pkg_fields;

static void pkg_read(const cJSON *o, pkg_fields *p)
{
	memset(p, 0, sizeof(*p));
	for (const cJSON *m = o->child; m; m = m->next) {
		const char *k = m->string;
		const cJSON **slot = NULL;

		if (!k)
			continue;
		switch (k[0]) {
		case 'b': slot = strcmp(k, "build") == 0 ? &p->build : NULL; break;
		case 'c': slot = strcmp(k, "channel") == 0 ? &p->channel : NULL; break;
		case 'd': slot = strcmp(k, "direct_url") == 0 ? &p->direct_url : NULL; break;
		case 'e': slot = strcmp(k, "editable") == 0 ? &p->editable : NULL; break;
		case 'i': slot = strcmp(k, "installer") == 0 ? &p->installer : NULL; break;
		case 'n': slot = strcmp(k, "name") == 0 ? &p->name : NULL; break;
		case 's': slot = strcmp(k, "subdir") == 0 ? &p->subdir : strcmp(k, "source") == 0 ? &p->source : NULL; break;
		case 'v': slot = strcmp(k, "version") == 0 ? &p->version : NULL; break;
		}
		if (slot && !*slot)
			*slot = m;
	}
}

static void flat_conda(fl *f, const cJSON *conda)
{
	const cJSON *pkgs = el_jget(conda, "packages"), *o;

	f->section = EL_SEC_CONDA;
	if (!el_present(conda))
		return;
	put(f, "env", el_jget_str(conda, "name"));
	put(f, "prefix", el_jget_str(conda, "prefix"));
	if (!cJSON_IsArray(pkgs))
		return;
	cJSON_ArrayForEach(o, pkgs) {
		pkg_fields p;

		if (!cJSON_IsObject(o))
			continue;
		pkg_read(o, &p);
		if (!str_of(p.name))
			continue;
		el_buf_reset(&f->val);
		el_buf_puts(&f->val, or_else(str_of(p.version), "?"));
		if (str_of(p.build))
			el_buf_printf(&f->val, " %s", str_of(p.build));
		if (str_of(p.channel)) {
			el_buf_putc(&f->val, ' ');
			put_channel(&f->val, str_of(p.channel), str_of(p.subdir));
		}
		put(f, str_of(p.name), el_buf_cstr(&f->val));
	}
}

static void flat_pip(fl *f, const cJSON *pip)
{
	const cJSON *dists = el_jget(pip, "distributions"), *o;

	f->section = EL_SEC_PIP;
	if (!el_present(pip) || !cJSON_IsArray(dists))
		return;
	cJSON_ArrayForEach(o, dists) {
		const char *installer;
		pkg_fields p;
		char *norm;

		if (!cJSON_IsObject(o))
			continue;
		pkg_read(o, &p);
		if (!str_of(p.name))
			continue;
		installer = str_of(p.installer);
		el_buf_reset(&f->val);
		el_buf_puts(&f->val, or_else(str_of(p.version), "?"));
		if (cJSON_IsTrue(p.editable))
			el_buf_printf(&f->val, " editable %s",
				      or_else(str_of(p.source), or_else(el_jget_str(p.direct_url, "url"), "")));
		else if (el_jget_str(p.direct_url, "vcs") && el_jget_str(p.direct_url, "commit_id"))
			el_buf_printf(&f->val, " %s %s", el_jget_str(p.direct_url, "vcs"),
				      el_jget_str(p.direct_url, "commit_id"));
		if (installer && strcmp(installer, "pip") != 0)
			el_buf_printf(&f->val, " (%s)", installer);
		/* matched by PEP 503 name: "PyYAML" and "pyyaml" are one distribution */
		norm = el_pep503_name(str_of(p.name));
		put(f, norm, el_buf_cstr(&f->val));
		free(norm);
	}
}

static void flat_frameworks(fl *f, const cJSON *fw)
{
	const cJSON *m;

	f->section = EL_SEC_FRAMEWORKS;
	if (!cJSON_IsObject(fw))
		return;
	cJSON_ArrayForEach(m, fw) {
		const char *name = m->string, *status = el_jget_str(m, "status");

		if (!name || !cJSON_IsObject(m))
			continue;
		if (!status || strcmp(status, "present") == 0)
			put(f, name, el_jget_str(m, "version"));
		else if (strcmp(status, "unknown") == 0)
			put(f, name, "unknown version");
		if (el_jget_str(m, "dist_version"))
			put(f, K(f, "%s dist", name), el_jget_str(m, "dist_version"));
		if (status && strcmp(status, "absent") == 0)
			continue;
		if (el_jget_str(m, "cuda"))
			put(f, K(f, "%s cuda", name), el_jget_str(m, "cuda"));
		else if (el_jget_bool(m, "cpu_only", false))
			put(f, K(f, "%s cuda", name), "none (CPU only)");
		if (el_jget_str(m, "hip"))
			put(f, K(f, "%s hip", name), el_jget_str(m, "hip"));
		if (el_jget_bool(m, "debug", false))
			put(f, K(f, "%s debug", name), "yes");
		if (cJSON_IsBool(el_jget(m, "ops")))
			put(f, K(f, "%s ops", name), el_jget_bool(m, "ops", false) ? "compiled" : "missing");
		put(f, K(f, "%s package", name), el_jget_str(m, "package"));
	}
}

static void flat_repo(fl *f, const cJSON *r)
{
	const char *path = or_else(el_jget_str(r, "path"), el_jget_str(r, "requested"));
	const char *status = el_jget_str(r, "status");
	const cJSON *head = el_jget(r, "head"), *patch = el_jget(r, "patch");
	const cJSON *remotes = el_jget(r, "remotes"), *subs = el_jget(r, "submodules"), *e;

	if (!path)
		return;
	if (status && strcmp(status, "present") != 0) {
		put(f, path, status);
		return;
	}
	put(f, K(f, "%s head", path), or_else(el_jget_str(head, "commit"),
					      el_jget_bool(head, "unborn", false) ? "unborn" : NULL));
	put(f, K(f, "%s branch", path), or_else(el_jget_str(head, "branch"),
						el_jget_bool(head, "detached", false) ? "detached" : NULL));
	put(f, K(f, "%s tag", path), el_jget_str(r, "tag"));
	if (cJSON_IsBool(el_jget(r, "dirty"))) {
		const char *sha = el_jget_str(patch, "sha256");

		put(f, K(f, "%s changes", path),
		    !el_jget_bool(r, "dirty", false) ? "clean"
		    : sha ? V(f, "uncommitted, patch sha256:%s", sha) : "uncommitted");
	}
	if (cJSON_IsArray(remotes))
		cJSON_ArrayForEach(e, remotes)
			if (el_jget_str(e, "name"))
				put(f, K(f, "%s remote %s", path, el_jget_str(e, "name")),
				    or_else(el_jget_str(e, "url"), ""));
	if (cJSON_IsArray(subs))
		cJSON_ArrayForEach(e, subs)
			if (el_jget_str(e, "path"))
				put(f, K(f, "%s submodule %s", path, el_jget_str(e, "path")),
				    or_else(el_jget_str(e, "commit"), "not checked out"));
}

static void flat_repos(fl *f, const cJSON *repos)
{
	const cJSON *list = el_jget(repos, "repositories"), *r;

	f->section = EL_SEC_REPOS;
	if (cJSON_IsArray(list))
		cJSON_ArrayForEach(r, list)
			flat_repo(f, r);
}

/* configs and checkpoints: path -> "sha256:<hex>" (or the error that stopped hashing) */
static void flat_files(fl *f, int section, const cJSON *sec)
{
	const cJSON *files = el_jget(sec, "files"), *e;

	f->section = section;
	if (!cJSON_IsArray(files))
		return;
	cJSON_ArrayForEach(e, files) {
		const char *path = el_jget_str(e, "path"), *sha = el_jget_str(e, "sha256");
		const char *err = el_jget_str(e, "error");

		if (path)
			put(f, path, sha ? V(f, "sha256:%s", sha) : err ? V(f, "error: %s", err) : NULL);
	}
}

static void flat_env(fl *f, const cJSON *env)
{
	const cJSON *vars = el_jget(env, "variables"), *v;

	f->section = EL_SEC_ENV;
	if (cJSON_IsObject(vars))
		cJSON_ArrayForEach(v, vars)
			if (v->string && cJSON_IsString(v))
				put(f, v->string, v->valuestring);
}

void el_flatten(const cJSON *doc, el_item_fn fn, void *data)
{
	fl f = { fn, data, 0, EL_BUF_INIT(FL_MAX_TEXT), EL_BUF_INIT(FL_MAX_TEXT) };

	flat_system(&f, el_jget(doc, "system"));
	flat_gpu(&f, el_jget(doc, "gpu"));
	flat_cuda(&f, doc);
	flat_cudnn(&f, el_jget(doc, "cudnn"));
	flat_compilers(&f, el_jget(doc, "compilers"));
	flat_python(&f, el_jget(doc, "python"));
	flat_conda(&f, el_jget(doc, "conda"));
	flat_pip(&f, el_jget(doc, "pip"));
	flat_frameworks(&f, el_jget(doc, "frameworks"));
	flat_repos(&f, el_jget(doc, "repos"));
	flat_files(&f, EL_SEC_CONFIGS, el_jget(doc, "configs"));
	flat_files(&f, EL_SEC_CHECKPOINTS, el_jget(doc, "checkpoints"));
	flat_env(&f, el_jget(doc, "env"));
	el_buf_release(&f.key);
	el_buf_release(&f.val);
}
