/*
 * A lock flattened into (section, key, value) items that a person reads:
 * ("cuda", "version", "10.2.89"), ("pip", "torch", "1.10.0+cu102"),
 * ("conda", "numpy", "1.21.6 py37h976b520_0 conda-forge"). Packages are
 * keyed by name, so the same package in A and B is one item; conda and pip
 * are separate sections. The lock is read through its typed view
 * (lock/view.h), which holds what "present" and "the default toolkit"
 * mean: flatten only puts the facts into words.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "lock/model.h"
#include "lock/view.h"
#include "util/text.h"
#include "util/xalloc.h"

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

/* A count the view holds as -1 when not recorded, printed as 0. */
static long long count(long long n)
{
	return n < 0 ? 0 : n;
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
	if (n < 0 || el_buf_reserve(b, (size_t)n) != 0) /* the cap cannot be reached (el_flatten) */
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
			el_buf_adds(&f->val, ", ");
		if (with_counts)
			el_buf_addf(&f->val, "%ld × ", t->n[i]);
		el_buf_adds(&f->val, t->s[i]);
	}
	if (t->other)
		el_buf_addf(&f->val, "%s%ld more", t->count ? ", " : "", t->other);
	return t->count || t->other ? el_buf_cstr(&f->val) : NULL;
}

/* "python3.11-minimal 3.11.2-6+deb12u9": the Debian package a recorded file came from */
static const char *deb_value(fl *f, const el_deb *d)
{
	return d->recorded && d->package ? V(f, "%s %s", d->package, or_else(d->version, "")) : NULL;
}

static void flat_system(fl *f, const el_system *s)
{
	f->section = EL_SEC_SYSTEM;
	if (s->os.st.present) {
		if (s->os.pretty_name)
			put(f, "os", s->os.pretty_name);
		else if (s->os.name)
			put(f, "os", V(f, "%s %s", s->os.name, or_else(s->os.version_id, "")));
	}
	put(f, "arch", s->arch);
	put(f, "kernel", s->kernel);
	if (s->glibc.st.present) {
		put(f, "glibc", s->glibc.version);
		put(f, "glibc package", deb_value(f, &s->glibc.deb));
	}
	if (s->container.recorded)
		put(f, "container", s->container.detected ? or_else(s->container.kind, "yes") : "none");
	/* the schema requires both counts of a recorded cpu, and total_bytes of a recorded memory */
	if (s->cpu.physical_cores >= 0 || s->cpu.logical_cores >= 0) {
		put(f, "cpu", s->cpu.model);
		put(f, "cpu cores", V(f, "%lld cores, %lld threads", count(s->cpu.physical_cores),
				      count(s->cpu.logical_cores)));
	}
	/* rounded: nodes of one model report a few KiB apart */
	if (s->memory_total_bytes >= 0)
		put(f, "memory", V(f, "%.1f GiB", (double)s->memory_total_bytes / (1u << 30)));
	if (s->ld_cache.st.recorded)
		put(f, "ld.so.cache", s->ld_cache.st.status);
	for (size_t i = 0; i < s->ld_so_conf.n; i++)
		put(f, K(f, "ld.so.conf %s", s->ld_so_conf.v[i]), "listed");
}

static void flat_gpu(fl *f, const el_gpu *g)
{
	tally names = { 0 }, cc = { 0 };

	f->section = EL_SEC_GPU;
	if (g->driver.st.present) {
		put(f, "driver", g->driver.version);
		put(f, "driver flavour", g->driver.flavour);
		put(f, "driver max CUDA", g->driver.max_cuda);
	}
	/* libcuda and libnvidia-ml: a container's driver, and half of NVML's "version mismatch" */
	if (g->driver.user_space.st.present)
		put(f, "user-space", g->driver.user_space.version);
	for (size_t i = 0; i < g->ndevices; i++) {
		const el_gpu_device *d = &g->devices[i];

		tally_add(&names, or_else(d->name, "unknown GPU"));
		if (d->compute_capability)
			tally_add(&cc, d->compute_capability);
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

/* "<file> sha256:<hex>", plus what would stop the loader finding it (env: not the cache, which it does not use). */
static const char *lib_value(fl *f, const el_library *lib, const char *file, bool env)
{
	const char *link = lib->soname_link, *cache = lib->ld_cache;

	el_buf_reset(&f->val);
	el_buf_adds(&f->val, file);
	if (lib->sha256)
		el_buf_addf(&f->val, " sha256:%s", lib->sha256);
	if (link && strcmp(link, "ok") != 0 && strcmp(link, "self") != 0)
		el_buf_addf(&f->val, ", soname link %s", link);
	if (!env && cache && strcmp(cache, "listed") != 0 && strcmp(cache, "unknown") != 0)
		el_buf_addf(&f->val, ", ld.so.cache %s", cache);
	return el_buf_cstr(&f->val);
}

static void flat_cuda(fl *f, const el_cuda *c)
{
	f->section = EL_SEC_CUDA;
	if (c->default_tk)
		put(f, "version", el_toolkit_version(c->default_tk));
	put(f, "default", c->default_home);
	put(f, "default by", c->default_by);
	for (size_t i = 0; i < c->ntoolkits; i++) {
		const el_toolkit *tk = &c->toolkits[i];
		const char *home = tk->home;

		if (!home)
			continue;
		put(f, K(f, "toolkit %s", home), or_else(el_toolkit_version(tk), or_else(tk->st.status, "unknown")));
		if (tk->nvcc.path)
			put(f, K(f, "toolkit %s nvcc", home), or_else(tk->nvcc.version, "present"));
		for (size_t j = 0; j < tk->nlibraries; j++) {
			const el_library *lib = &tk->libraries[j];

			if (lib->name)
				put(f, K(f, "toolkit %s %.*s", home, lib_stem(lib->name), lib->name),
				    lib_value(f, lib, lib->name, el_env_layout(tk->layout)));
		}
	}
}

static void flat_cudnn(fl *f, const el_cudnn *c)
{
	f->section = EL_SEC_CUDNN;
	if (!c->st.recorded)
		return;
	put(f, "version", c->version);
	put(f, "header", c->header);
	/* keyed by stem, valued by path: a hand-copied cuDNN shows where it moved */
	for (size_t i = 0; i < c->nlibraries; i++) {
		const el_library *lib = &c->libraries[i];

		if (lib->name)
			put(f, K(f, "%.*s", lib_stem(lib->name), lib->name), lib_value(f, lib, or_else(lib->path, lib->name), false));
	}
	/* the environment's own, keyed by where it comes from: a new Python moves the folder, not the install */
	for (size_t i = 0; i < c->ninstalls; i++) {
		const el_cudnn_install *in = &c->installs[i];

		if (in->layout && in->home)
			put(f, K(f, "%s install", in->layout), V(f, "%s at %s", or_else(in->version, "unknown version"), in->home));
	}
}

static void flat_compilers(fl *f, const el_compilers *c)
{
	f->section = EL_SEC_COMPILERS;
	if (!c->st.present)
		return;
	if (c->def.recorded)
		put(f, or_else(c->def.name, "cc"), c->def.version);
	/* gxx is required of every gcc by the schema */
	for (size_t i = 0; i < c->ngcc; i++) {
		const el_gcc *g = &c->gcc[i];

		if (g->version) {
			put(f, K(f, "gcc-%s", or_else(g->major, g->version)),
			    V(f, "%s%s", g->version, g->gxx ? "" : " (no g++)"));
			put(f, K(f, "gcc-%s package", or_else(g->major, g->version)), deb_value(f, &g->deb));
		}
	}
}

static void flat_python(fl *f, const el_python *py)
{
	f->section = EL_SEC_PYTHON;
	if (!py->st.present)
		return;
	put(f, "version", py->version);
	put(f, "kind", py->kind);
	put(f, "prefix", py->prefix);
	put(f, "package", deb_value(f, &py->deb));
}

/*
 * A conda channel as people write it: ".../conda-forge/linux-64" ->
 * "conda-forge", "https://repo.anaconda.com/pkgs/main/linux-64" -> "pkgs/main",
 * "file:///srv/kit/conda" -> "/srv/kit/conda".
 */
static void put_channel(el_buf *b, const char *ch, const char *subdir)
{
	const char *p = strstr(ch, "://"), *slash;
	size_t len;

	if (p && strncmp(ch, "file://", 7) == 0)
		p += 3;                 /* a local folder: its path, file:///srv/kit/conda -> /srv/kit/conda */
	else if (p && (slash = strchr(p + 3, '/')) != NULL && slash[1])
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
	el_buf_add(b, p, len);
}

static void flat_conda(fl *f, const el_conda *c)
{
	f->section = EL_SEC_CONDA;
	if (!c->st.present)
		return;
	put(f, "env", c->name);
	put(f, "prefix", c->prefix);
	for (size_t i = 0; i < c->npackages; i++) {
		const el_conda_package *p = &c->packages[i];

		if (!p->name)
			continue;
		el_buf_reset(&f->val);
		el_buf_adds(&f->val, or_else(p->version, "?"));
		if (p->build)
			el_buf_addf(&f->val, " %s", p->build);
		if (p->channel) {
			el_buf_addc(&f->val, ' ');
			put_channel(&f->val, p->channel, p->subdir);
		}
		put(f, p->name, el_buf_cstr(&f->val));
	}
}

static void flat_pip(fl *f, const el_pip *pip)
{
	f->section = EL_SEC_PIP;
	if (!pip->st.present)
		return;
	for (size_t i = 0; i < pip->ndists; i++) {
		const el_pip_dist *d = &pip->dists[i];
		char *norm;

		if (!d->name)
			continue;
		el_buf_reset(&f->val);
		el_buf_adds(&f->val, or_else(d->version, "?"));
		if (d->editable)
			el_buf_addf(&f->val, " editable %s", or_else(d->source, or_else(d->direct_url.url, "")));
		else if (d->direct_url.vcs && d->direct_url.commit_id)
			el_buf_addf(&f->val, " %s %s", d->direct_url.vcs, d->direct_url.commit_id);
		if (d->installer && strcmp(d->installer, "pip") != 0)
			el_buf_addf(&f->val, " (%s)", d->installer);
		/* matched by PEP 503 name: "PyYAML" and "pyyaml" are one distribution */
		norm = el_pep503_name(d->name);
		put(f, norm, el_buf_cstr(&f->val));
		/* a shadowed copy is not imported, but a change of which one wins is */
		if (d->nshadows) {
			char *key = el_xasprintf("%s shadows", norm);

			el_buf_reset(&f->val);
			for (size_t k = 0; k < d->nshadows; k++)
				el_buf_addf(&f->val, "%s%s%s%s%s", k ? ", " : "", or_else(d->shadows[k].version, "?"),
					      d->shadows[k].installer ? " (" : "", or_else(d->shadows[k].installer, ""),
					      d->shadows[k].installer ? ")" : "");
			put(f, key, el_buf_cstr(&f->val));
			free(key);
		}
		free(norm);
	}
}

/* "3.10", "3.8+, 3.9": the Python torch's own files say it is for */
static const char *tags_value(fl *f, const el_strlist *l)
{
	el_buf_reset(&f->val);
	for (size_t i = 0; i < l->n; i++)
		el_buf_addf(&f->val, "%s%s", i ? ", " : "", l->v[i]);
	return l->n ? el_buf_cstr(&f->val) : NULL;
}

/* "1.3.17 <= mmcv <= 1.8.0": what a codebase's __init__.py asserts; "any" when it checks none */
static const char *mmcv_range_value(fl *f, const el_framework *m)
{
	if (!m->mmcv_range.recorded)
		return NULL;
	if (!m->mmcv_range.min && !m->mmcv_range.max)
		return "any";
	return V(f, "%s%smmcv%s%s", m->mmcv_range.min ? m->mmcv_range.min : "", m->mmcv_range.min ? " <= " : "",
		 m->mmcv_range.max ? (m->mmcv_range.max_inclusive ? " <= " : " < ") : "",
		 m->mmcv_range.max ? m->mmcv_range.max : "");
}

static void flat_framework(fl *f, const el_framework *m)
{
	const char *name = m->info->key, *status = m->st.status;

	if (!m->st.recorded)
		return;
	if (m->st.present)
		put(f, name, m->version);
	else if (status && strcmp(status, "unknown") == 0)
		put(f, name, "unknown version");
	put(f, K(f, "%s dist", name), m->dist_version);
	if (status && strcmp(status, "absent") == 0)
		return;
	if (m->cuda)
		put(f, K(f, "%s cuda", name), m->cuda);
	else if (m->cpu_only == EL_YES)
		put(f, K(f, "%s cuda", name), "none (CPU only)");
	put(f, K(f, "%s hip", name), m->hip);
	if (m->debug == EL_YES)
		put(f, K(f, "%s debug", name), "yes");
	if (m->ops != EL_UNSET)
		put(f, K(f, "%s ops", name), m->ops == EL_YES ? "compiled" : "missing");
	put(f, K(f, "%s package", name), m->package);
	put(f, K(f, "%s deb", name), deb_value(f, &m->deb));
	put(f, K(f, "%s python", name), tags_value(f, &m->python_tags));
	put(f, K(f, "%s requires python", name), m->requires_python);
	put(f, K(f, "%s mmcv range", name), mmcv_range_value(f, m));
}

static void flat_repo(fl *f, const el_repo *r)
{
	const char *path = or_else(r->path, r->requested);

	if (!path)
		return;
	if (r->status && strcmp(r->status, "present") != 0) {
		put(f, path, r->status);
		return;
	}
	put(f, K(f, "%s head", path), or_else(r->head.commit, r->head.unborn ? "unborn" : NULL));
	put(f, K(f, "%s branch", path), or_else(r->head.branch, r->head.detached ? "detached" : NULL));
	put(f, K(f, "%s tag", path), r->tag);
	if (r->dirty_recorded)
		put(f, K(f, "%s changes", path),
		    !r->dirty ? "clean"
		    : r->patch.sha256 ? V(f, "uncommitted, patch sha256:%s", r->patch.sha256) : "uncommitted");
	for (size_t i = 0; i < r->nremotes; i++)
		if (r->remotes[i].name)
			put(f, K(f, "%s remote %s", path, r->remotes[i].name), or_else(r->remotes[i].url, ""));
	for (size_t i = 0; i < r->nsubmodules; i++)
		if (r->submodules[i].path)
			put(f, K(f, "%s submodule %s", path, r->submodules[i].path),
			    or_else(r->submodules[i].commit, "not checked out"));
	/* an untracked file is part of the change: one added or edited is a difference of the code */
	for (size_t i = 0; i < r->nuntracked_files; i++)
		if (r->untracked_files[i].path && r->untracked_files[i].sha256)
			put(f, K(f, "%s untracked %s", path, r->untracked_files[i].path),
			    V(f, "sha256:%s", r->untracked_files[i].sha256));
}

/* configs and checkpoints: path -> "sha256:<hex>" (or the error that stopped hashing) */
static void put_file(fl *f, const char *path, const char *sha, const char *err)
{
	if (path)
		put(f, path, sha ? V(f, "sha256:%s", sha) : err ? V(f, "error: %s", err) : NULL);
}

/*
 * A config's effective value by key path, as --cfg-options names keys:
 * "<config>: train_dataloader.num_workers" -> "32". Values read as the
 * config writes them (Python's 'str', True, None, [1333, 800]); a list
 * of dicts (a pipeline) goes on by index. At most FL_MAX_CONFIG_KEYS a config.
 */
#define FL_MAX_CONFIG_KEYS 20000
#define FL_MAX_CONFIG_DEPTH 64

static bool scalar(const cJSON *v)
{
	return !cJSON_IsObject(v) && !cJSON_IsArray(v);
}

static void py_text(el_buf *b, const cJSON *v, int depth)
{
	char num[EL_FMT_DOUBLE_SIZE];

	if (cJSON_IsString(v)) {
		el_buf_addc(b, '\'');
		el_buf_adds(b, v->valuestring);
		el_buf_addc(b, '\'');
	} else if (cJSON_IsBool(v)) {
		el_buf_adds(b, cJSON_IsTrue(v) ? "True" : "False");
	} else if (cJSON_IsNull(v)) {
		el_buf_adds(b, "None");
	} else if (cJSON_IsNumber(v)) {
		el_buf_add(b, num, el_fmt_double(num, v->valuedouble));
	} else if (el_jraw_int(v)) {
		el_buf_adds(b, v->valuestring); /* an integer past 2^53, as the config and the lock write it */
	} else if ((cJSON_IsArray(v) || cJSON_IsObject(v)) && depth < FL_MAX_CONFIG_DEPTH) {
		bool obj = cJSON_IsObject(v);

		el_buf_addc(b, obj ? '{' : '[');
		for (const cJSON *c = v->child; c; c = c->next) {
			if (c != v->child)
				el_buf_adds(b, ", ");
			if (obj) {
				el_buf_addc(b, '\'');
				el_buf_adds(b, c->string);
				el_buf_adds(b, "': ");
			}
			py_text(b, c, depth + 1);
		}
		el_buf_addc(b, obj ? '}' : ']');
	}
}

static void flat_value(fl *f, const char *config, el_buf *path, const cJSON *v, size_t *left, int depth)
{
	size_t mark = path->len, i = 0;
	bool leaf = scalar(v) || depth >= FL_MAX_CONFIG_DEPTH || !v->child;

	if (cJSON_IsArray(v) && !leaf) {
		leaf = true;
		for (const cJSON *c = v->child; c; c = c->next)
			leaf = leaf && scalar(c);
	}
	if (leaf) {
		if (*left == 0 || !path->len)
			return;
		(*left)--;
		el_buf_reset(&f->val);
		py_text(&f->val, v, 0);
		put(f, K(f, "%s: %s", config, el_buf_cstr(path)), el_buf_cstr(&f->val));
		return;
	}
	for (const cJSON *c = v->child; c; c = c->next, i++) {
		if (mark)
			el_buf_addc(path, '.');
		if (cJSON_IsObject(v))
			el_buf_adds(path, c->string);
		else
			el_buf_addf(path, "%zu", i);
		flat_value(f, config, path, c, left, depth + 1);
		path->len = mark;
		if (path->data)
			path->data[mark] = '\0';
	}
}

static void flat_config(fl *f, const el_config *c)
{
	el_buf path = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a config's key path: its keys with a dot between them");
	size_t left = FL_MAX_CONFIG_KEYS;

	put_file(f, c->path, c->sha256, c->error);
	if (c->path && c->effective)
		flat_value(f, c->path, &path, c->effective, &left, 0);
	el_buf_release(&path);
}

static void flat_env(fl *f, const el_env *env)
{
	f->section = EL_SEC_ENV;
	for (size_t i = 0; i < env->variables.n; i++)
		put(f, env->variables.v[i].key, env->variables.v[i].val);
}

/*
 * What each framework's modules load of the CUDA stack, and what the
 * loader cannot find: "torch libcudnn" -> "9.1.0 <file>". Keyed by
 * framework and soname stem, so a module renamed by a new Python, or a
 * cuDNN of a new major, is the same item; the first module of the
 * framework that needs the name says.
 */
static bool cuda_stack(const char *soname)
{
	static const char *const prefixes[] = { "libcudnn", "libcudart", "libcublas", "libnccl", NULL };

	for (const char *const *x = prefixes; *x; x++)
		if (strncmp(soname, *x, strlen(*x)) == 0)
			return true;
	return false;
}

/*
 * The length of soname's stem: "libcudnn.so.8" and "libcudnn.so.9" are the
 * same item, and so is auditwheel's "libcudart-d0da41ae.so.11.0" with
 * "libcudart.so.11.0": a new major is a changed value, not two items.
 */
static int soname_stem(const char *soname)
{
	const char *so = strstr(soname, ".so");
	size_t n = so ? (size_t)(so - soname) : strlen(soname);

	if (n > 9 && soname[n - 9] == '-' && strspn(soname + n - 8, "0123456789abcdef") >= 8)
		n -= 9;
	return (int)n;
}

/* Does one of m's first n entries name soname? */
static bool needs_before(const el_load_module *m, const char *soname, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (m->needed[k].soname && strcmp(m->needed[k].soname, soname) == 0)
			return true;
	return false;
}

static void flat_loads(fl *f, const el_view *v)
{
	const el_loads *l = &v->loads;

	f->section = EL_SEC_LOADS;
	if (!l->st.present)
		return;
	put(f, "LD_LIBRARY_PATH", l->library_path);
	for (size_t i = 0; i < l->nmodules; i++) {
		const el_load_module *m = &l->modules[i];

		for (size_t k = 0; m->framework && k < m->nneeded; k++) {
			const el_load_need *n = &m->needed[k];
			const char *file = n->realpath ? n->realpath : n->path;
			bool told = false;

			if (!n->soname || !n->found_by || (!cuda_stack(n->soname) && file))
				continue;
			for (size_t j = 0; j <= i && !told; j++)
				told = l->modules[j].framework && strcmp(l->modules[j].framework, m->framework) == 0 &&
				       needs_before(&l->modules[j], n->soname, j == i ? k : l->modules[j].nneeded);
			if (told)
				continue;
			if (file) {
				const char *ver = el_view_library_version(v, file);

				put(f, K(f, "%s %.*s", m->framework, soname_stem(n->soname), n->soname),
				    V(f, "%s%s%s", ver ? ver : "", ver ? " " : "", file));
			} else {
				put(f, K(f, "%s %s", m->framework, n->soname), "not found");
			}
		}
	}
}

void el_flatten(const el_view *v, el_item_fn fn, void *data)
{
	/* every key and value is a few of the view's strings with words between them */
	fl f = { fn, data, 0, EL_BUF_FITS(EL_BUF_JOIN_MAX, "a key of the view's strings"), EL_BUF_FITS(EL_BUF_JOIN_MAX, "a value of the view's strings") };

	flat_system(&f, &v->system);
	flat_gpu(&f, &v->gpu);
	flat_cuda(&f, &v->cuda);
	flat_cudnn(&f, &v->cudnn);
	flat_compilers(&f, &v->compilers);
	flat_python(&f, &v->python);
	flat_conda(&f, &v->conda);
	flat_pip(&f, &v->pip);
	f.section = EL_SEC_FRAMEWORKS;
	for (size_t i = 0; i < EL_FW_COUNT; i++)
		flat_framework(&f, &v->frameworks[i]);
	flat_loads(&f, v);
	f.section = EL_SEC_REPOS;
	for (size_t i = 0; i < v->repos.nrepos; i++)
		flat_repo(&f, &v->repos.repos[i]);
	f.section = EL_SEC_CONFIGS;
	for (size_t i = 0; i < v->configs.nfiles; i++)
		flat_config(&f, &v->configs.files[i]);
	f.section = EL_SEC_CHECKPOINTS;
	for (size_t i = 0; i < v->checkpoints.nfiles; i++)
		put_file(&f, v->checkpoints.files[i].path, v->checkpoints.files[i].sha256,
			 v->checkpoints.files[i].error);
	flat_env(&f, &v->env);
	el_buf_release(&f.key);
	el_buf_release(&f.val);
}
