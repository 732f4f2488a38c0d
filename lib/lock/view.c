/*
 * The typed view of a lock (view.h): built once from the document, every
 * member read with a type check. The view's arrays live in one arena
 * freed with the view; its strings are the document's.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "util/error.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"
#include "view.h"

struct el_view_arena {
	struct el_view_arena *next;
	size_t used, size;
	max_align_t data[];
};

#define ARENA_BLOCK ((size_t)64 << 10)

/* n zeroed elements of size bytes from the view's arena */
static void *view_alloc(el_view *v, size_t n, size_t size)
{
	struct el_view_arena *a = v->arena;
	size_t want;

	if (n == 0)
		return NULL;
	if (size && n > ((size_t)-1 - 64) / size)
		el_oom();
	want = (n * size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!a || a->size - a->used < want) {
		size_t cap = want > ARENA_BLOCK ? want : ARENA_BLOCK;

		a = el_xcalloc(1, sizeof(*a) + cap);
		a->size = cap;
		a->next = v->arena;
		v->arena = a;
	}
	a->used += want;
	return (char *)a->data + a->used - want;
}

static const char *str(const cJSON *o, const char *key)
{
	return el_jget_str(o, key);
}

/* The package a recorded file came from. */
static el_deb deb(const cJSON *o)
{
	const cJSON *d = el_jget(o, "deb");
	el_deb out = { cJSON_IsObject(d), str(d, "package"), str(d, "version"), str(d, "arch") };

	return out;
}

static long long num(const cJSON *o, const char *key)
{
	return el_jget_int(o, key, -1);
}

static bool yes(const cJSON *o, const char *key)
{
	return el_jget_bool(o, key, false);
}

static el_tri tri(const cJSON *o, const char *key)
{
	const cJSON *b = el_jget(o, key);

	return cJSON_IsBool(b) ? (cJSON_IsTrue(b) ? EL_YES : EL_NO) : EL_UNSET;
}

/*
 * The members of an object read in one pass, for the items a lock holds
 * by the thousand (packages, distributions): a lookup per member in a
 * small table beats a search of the object per field.
 */
typedef enum { M_STR, M_NUM, M_YES, M_TRI } member_type;

typedef struct {
	const char *key;
	member_type type;
	size_t off;
} member;

/* a table's size, checked to fit read_members' mask of the members seen */
#define MEMBERS(t) (sizeof(t) / sizeof((t)[0]) + 0 * sizeof(char[sizeof(t) / sizeof((t)[0]) <= 64 ? 1 : -1]))

static void read_members(const cJSON *o, void *dst, const member *table, size_t n)
{
	unsigned long long seen = 0;
	const cJSON *m;

	cJSON_ArrayForEach(m, o) {
		const char *k = m->string;
		void *at;
		size_t i;

		if (!k)
			continue;
		for (i = 0; i < n && (table[i].key[0] != k[0] || strcmp(table[i].key, k) != 0); i++)
			;
		/* a repeated key reads as el_jget reads it: the first one */
		if (i == n || (seen & (1ull << i)))
			continue;
		seen |= 1ull << i;
		at = (char *)dst + table[i].off;

		switch (table[i].type) {
		case M_STR:
			if (cJSON_IsString(m))
				*(const char **)at = m->valuestring;
			break;
		case M_NUM:
			*(long long *)at = el_jint(m, -1);
			break;
		case M_YES:
			*(bool *)at = cJSON_IsTrue(m);
			break;
		case M_TRI:
			if (cJSON_IsBool(m))
				*(el_tri *)at = cJSON_IsTrue(m) ? EL_YES : EL_NO;
			break;
		}
	}
}

/* the one present rule: an object whose "status" is "present", or that has none */
static bool present(const cJSON *o)
{
	const char *st = el_jget_str(o, "status");

	return cJSON_IsObject(o) && (!st || strcmp(st, "present") == 0);
}

static el_state state(const cJSON *o)
{
	el_state s = { cJSON_IsObject(o), present(o), str(o, "status") };

	return s;
}

/* the array member key of o (NULL when absent or not an array), and its size */
static const cJSON *array(const cJSON *o, const char *key, size_t *n)
{
	const cJSON *a = el_jget(o, key);

	*n = cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0;
	return *n ? a : NULL;
}

/* The array's objects, each read by fill into an element of size bytes; *n: how many. */
#define OBJECTS(v, o, key, type, out, n, fill)                                   \
	do {                                                                      \
		size_t cap_;                                                      \
		const cJSON *arr_ = array((o), (key), &cap_), *it_;              \
		type *dst_ = view_alloc((v), cap_, sizeof(*dst_));                \
		(n) = 0;                                                          \
		cJSON_ArrayForEach(it_, arr_)                                     \
			if (cJSON_IsObject(it_))                                  \
				fill((v), it_, &dst_[(n)++]);                     \
		(out) = dst_;                                                     \
	} while (0)

static el_strlist strlist(el_view *v, const cJSON *o, const char *key)
{
	size_t cap, n = 0;
	const cJSON *arr = array(o, key, &cap), *it;
	const char **dst = view_alloc(v, cap, sizeof(*dst));
	el_strlist l;

	cJSON_ArrayForEach(it, arr)
		if (cJSON_IsString(it))
			dst[n++] = it->valuestring;
	l.v = dst;
	l.n = n;
	return l;
}

/* the string members of o, except those named in skip (NULL-ended) */
static el_pairs pairs(el_view *v, const cJSON *o, const char *const *skip)
{
	size_t cap = cJSON_IsObject(o) ? (size_t)cJSON_GetArraySize(o) : 0, n = 0;
	el_pair *dst = view_alloc(v, cap, sizeof(*dst));
	const cJSON *it;
	el_pairs p;

	if (cap)
		cJSON_ArrayForEach(it, o) {
			const char *const *s;

			if (!cJSON_IsString(it) || !it->string)
				continue;
			for (s = skip; s && *s && strcmp(*s, it->string) != 0; s++)
				;
			if (s && *s)
				continue;
			dst[n].key = it->string;
			dst[n++].val = it->valuestring;
		}
	p.v = dst;
	p.n = n;
	return p;
}

/* a member that is a number or nvidia-smi's text: the number (or -1), and the text */
static long long num_or_text(el_view *v, const cJSON *o, const char *key, const char **text)
{
	const cJSON *m = el_jget(o, key);
	long long n = el_jget_int(o, key, -1);

	*text = NULL;
	if (cJSON_IsString(m)) {
		*text = m->valuestring;
	} else if (cJSON_IsNumber(m) && n == m->valuedouble) {
		char *s = view_alloc(v, 24, 1);

		snprintf(s, 24, "%lld", n);
		*text = s;
	}
	return n;
}

static void fill_link(el_view *v, const cJSON *o, el_link *l)
{
	(void)v;
	l->name = str(o, "name");
	l->target = str(o, "target");
}

static void fill_library(el_view *v, const cJSON *o, el_library *l)
{
	l->name = str(o, "name");
	l->path = str(o, "path");
	l->soname = str(o, "soname");
	l->sha256 = str(o, "sha256");
	l->size = num(o, "size");
	OBJECTS(v, o, "links", el_link, l->links, l->nlinks, fill_link);
	l->soname_link = str(o, "soname_link");
	l->copy_of = str(o, "copy_of");
	l->ld_cache = str(o, "ld_cache");
	l->ld_cache_path = str(o, "ld_cache_path");
}

/* A limit recorded as a number (EL_YES), as null: none (EL_NO), or not at all (EL_UNSET). */
static el_tri limited(const cJSON *o, const char *key)
{
	const cJSON *m = el_jget(o, key);

	return cJSON_IsNull(m) ? EL_NO : cJSON_IsNumber(m) ? EL_YES : EL_UNSET;
}

static void build_limits(el_system *s, const cJSON *shm, const cJSON *cg)
{
	s->shm.recorded = cJSON_IsObject(shm);
	s->shm.present = yes(shm, "present");
	s->shm.fs = str(shm, "fs");
	s->shm.source = str(shm, "source");
	s->shm.size_bytes = num(shm, "size_bytes");
	s->shm.free_bytes = num(shm, "free_bytes");
	s->cgroup.recorded = cJSON_IsObject(cg);
	s->cgroup.version = num(cg, "version");
	s->cgroup.cpu_limited = limited(cg, "cpu_limit");
	s->cgroup.cpu_limit = s->cgroup.cpu_limited == EL_YES ? el_jget(cg, "cpu_limit")->valuedouble : -1;
	/* a hand-made document's 0 or negative limit limits nothing anyone can judge */
	if (s->cgroup.cpu_limited == EL_YES && !(s->cgroup.cpu_limit > 0))
		s->cgroup.cpu_limited = EL_UNSET;
	s->cgroup.cpu_quota_us = num(cg, "cpu_quota_us");
	s->cgroup.cpu_period_us = num(cg, "cpu_period_us");
	s->cgroup.cpuset_cpus = num(cg, "cpuset_cpus");
	s->cgroup.memory_limited = limited(cg, "memory_limit_bytes");
	s->cgroup.memory_limit_bytes = num(cg, "memory_limit_bytes");
	if (s->cgroup.memory_limited == EL_YES && s->cgroup.memory_limit_bytes < 0)
		s->cgroup.memory_limited = EL_UNSET;
	s->cgroup.cpu_source = str(cg, "cpu_source");
	s->cgroup.cpuset_source = str(cg, "cpuset_source");
	s->cgroup.memory_source = str(cg, "memory_source");
}

double el_cgroup_cpus(const el_system *s)
{
	double cpus = s->cgroup.cpu_limited == EL_YES ? s->cgroup.cpu_limit : -1;

	if (s->cgroup.cpuset_cpus > 0 && (cpus < 0 || (double)s->cgroup.cpuset_cpus < cpus))
		cpus = (double)s->cgroup.cpuset_cpus;
	return cpus;
}

long long el_cgroup_memory(const el_system *s)
{
	if (s->cgroup.memory_limited != EL_YES)
		return -1;
	if (s->memory_total_bytes > 0 && s->cgroup.memory_limit_bytes >= s->memory_total_bytes)
		return -1;
	return s->cgroup.memory_limit_bytes;
}

static void build_system(el_view *v, const cJSON *o)
{
	el_system *s = &v->system;
	const cJSON *os = el_jget(o, "os"), *g = el_jget(o, "glibc"), *c = el_jget(o, "container");
	const cJSON *cpu = el_jget(o, "cpu"), *ld = el_jget(o, "ld_cache");

	s->recorded = cJSON_IsObject(o);
	s->arch = str(o, "arch");
	s->kernel = str(el_jget(o, "kernel"), "release");
	s->os.st = state(os);
	s->os.source = str(os, "source");
	s->os.id = str(os, "id");
	s->os.version_id = str(os, "version_id");
	s->os.name = str(os, "name");
	s->os.pretty_name = str(os, "pretty_name");
	s->os.version_codename = str(os, "version_codename");
	s->os.id_like = str(os, "id_like");
	s->os.version = str(os, "version");
	s->glibc.st = state(g);
	s->glibc.version = str(g, "version");
	s->glibc.path = str(g, "path");
	s->glibc.file = str(g, "file");
	s->glibc.banner = str(g, "banner");
	s->glibc.deb = deb(g);
	s->container.recorded = cJSON_IsObject(c);
	s->container.detected = yes(c, "detected");
	s->container.kind = str(c, "kind");
	s->container.evidence = str(c, "evidence");
	s->cpu.model = str(cpu, "model");
	s->cpu.logical_cores = num(cpu, "logical_cores");
	s->cpu.physical_cores = num(cpu, "physical_cores");
	s->cpu.sockets = num(cpu, "sockets");
	s->memory_total_bytes = num(el_jget(o, "memory"), "total_bytes");
	s->ld_cache.st = state(ld);
	s->ld_cache.path = str(ld, "path");
	s->ld_cache.format = str(ld, "format");
	s->ld_cache.entries = num(ld, "entries");
	s->ld_so_conf = strlist(v, o, "ld_so_conf");
	build_limits(s, el_jget(o, "shm"), el_jget(o, "cgroup"));
}

static const char *const device_named[] = {
	"bus", "name", "compute_capability", "power_limit_w", "uuid", "details_source",
	"memory_mib", "pcie_gen_max", "pcie_width_max", NULL,
};

static void fill_device(el_view *v, const cJSON *o, el_gpu_device *d)
{
	d->bus = str(o, "bus");
	d->name = str(o, "name");
	d->compute_capability = str(o, "compute_capability");
	d->power_limit_w = str(o, "power_limit_w");
	d->uuid = str(o, "uuid");
	d->details_source = str(o, "details_source");
	d->memory_mib = num_or_text(v, o, "memory_mib", &d->memory_mib_text);
	d->pcie_gen_max = num_or_text(v, o, "pcie_gen_max", &d->pcie_gen_max_text);
	d->pcie_width_max = num_or_text(v, o, "pcie_width_max", &d->pcie_width_max_text);
	d->extra = pairs(v, o, device_named);
}

static void fill_driver_file(el_view *v, const cJSON *o, el_driver_file *f)
{
	(void)v;
	f->kind = str(o, "kind");
	f->path = str(o, "path");
	f->version = str(o, "version");
	f->version_source = str(o, "version_source");
}

static void build_gpu(el_view *v, const cJSON *o)
{
	el_gpu *g = &v->gpu;
	const cJSON *d = el_jget(o, "driver");

	g->st = state(o);
	g->count = num(o, "count");
	g->driver.st = state(d);
	g->driver.source = str(d, "source");
	g->driver.raw = str(d, "raw");
	g->driver.version = str(d, "version");
	g->driver.flavour = str(d, "flavour");
	g->driver.arch = str(d, "arch");
	g->driver.built_with = str(d, "built_with");
	g->driver.max_cuda = str(d, "max_cuda");
	g->driver.max_cuda_source = str(d, "max_cuda_source");
	g->driver.major = num(d, "major");
	{
		const cJSON *us = el_jget(d, "user_space");

		g->driver.user_space.st = state(us);
		g->driver.user_space.version = str(us, "version");
		OBJECTS(v, us, "files", el_driver_file, g->driver.user_space.files, g->driver.user_space.nfiles,
			fill_driver_file);
	}
	OBJECTS(v, o, "devices", el_gpu_device, g->devices, g->ndevices, fill_device);
}

static void fill_toolkit(el_view *v, const cJSON *o, el_toolkit *t)
{
	const cJSON *nvcc = el_jget(o, "nvcc");

	t->home = str(o, "home");
	t->layout = str(o, "layout");
	t->st = state(o);
	t->aliases = strlist(v, o, "aliases");
	t->version = str(o, "version");
	t->version_source = str(o, "version_source");
	t->sdk_version = str(o, "sdk_version");
	t->release = str(o, "release");
	t->patches = strlist(v, o, "patches");
	t->components = pairs(v, el_jget(o, "components"), NULL);
	t->nvcc.recorded = cJSON_IsObject(nvcc);
	t->nvcc.path = str(nvcc, "path");
	t->nvcc.version = str(nvcc, "version");
	t->nvcc.release = str(nvcc, "release");
	t->nvcc.binary = str(nvcc, "binary");
	t->nvcc.version_source = str(nvcc, "version_source");
	OBJECTS(v, o, "libraries", el_library, t->libraries, t->nlibraries, fill_library);
}

static void fill_lookup(el_view *v, const cJSON *o, el_cuda_lookup *l)
{
	(void)v;
	l->rule = str(o, "rule");
	l->value = str(o, "value");
	l->toolkit = str(o, "toolkit");
}

static void build_cuda(el_view *v, const cJSON *o)
{
	el_cuda *c = &v->cuda;

	c->st = state(o);
	c->default_home = str(o, "default");
	c->default_by = str(o, "default_by");
	OBJECTS(v, o, "lookups", el_cuda_lookup, c->lookups, c->nlookups, fill_lookup);
	OBJECTS(v, o, "toolkits", el_toolkit, c->toolkits, c->ntoolkits, fill_toolkit);
	/* the default is the toolkit cuda.default names, by home or alias: nothing is guessed */
	c->default_tk = c->st.present ? el_view_toolkit_at(v, c->default_home) : NULL;
}

static void fill_header(el_view *v, const cJSON *o, el_cudnn_header *h)
{
	(void)v;
	h->path = str(o, "path");
	h->version = str(o, "version");
}

static void fill_cudnn_install(el_view *v, const cJSON *o, el_cudnn_install *in)
{
	in->home = str(o, "home");
	in->layout = str(o, "layout");
	in->version = str(o, "version");
	in->version_source = str(o, "version_source");
	OBJECTS(v, o, "libraries", el_library, in->libraries, in->nlibraries, fill_library);
}

static void build_cudnn(el_view *v, const cJSON *o)
{
	el_cudnn *c = &v->cudnn;

	c->st = state(o);
	c->version = str(o, "version");
	c->header = str(o, "header");
	OBJECTS(v, o, "headers", el_cudnn_header, c->headers, c->nheaders, fill_header);
	OBJECTS(v, o, "libraries", el_library, c->libraries, c->nlibraries, fill_library);
	OBJECTS(v, o, "installs", el_cudnn_install, c->installs, c->ninstalls, fill_cudnn_install);
}

static void fill_gcc(el_view *v, const cJSON *o, el_gcc *g)
{
	(void)v;
	g->dir = str(o, "dir");
	g->triplet = str(o, "triplet");
	g->major = str(o, "major");
	g->version = str(o, "version");
	g->version_source = str(o, "version_source");
	g->driver = str(o, "driver");
	g->gxx = yes(o, "gxx");
	g->deb = deb(o);
}

static void build_compilers(el_view *v, const cJSON *o)
{
	el_compilers *c = &v->compilers;
	const cJSON *d = el_jget(o, "default");

	c->st = state(o);
	c->def.recorded = cJSON_IsObject(d);
	c->def.name = str(d, "name");
	c->def.path = str(d, "path");
	c->def.version = str(d, "version");
	c->def.version_source = str(d, "version_source");
	OBJECTS(v, o, "gcc", el_gcc, c->gcc, c->ngcc, fill_gcc);
}

static void fill_candidate(el_view *v, const cJSON *o, el_python_candidate *c)
{
	(void)v;
	c->prefix = str(o, "prefix");
	c->kind = str(o, "kind");
	c->version = str(o, "version");
}

static void build_python(el_view *v, const cJSON *o)
{
	el_python *p = &v->python;

	p->st = state(o);
	p->kind = str(o, "kind");
	p->prefix = str(o, "prefix");
	p->executable = str(o, "executable");
	p->version = str(o, "version");
	p->version_source = str(o, "version_source");
	p->selected_by = str(o, "selected_by");
	p->deb = deb(o);
	p->site_packages = strlist(v, o, "site_packages");
	OBJECTS(v, o, "candidates", el_python_candidate, p->candidates, p->ncandidates, fill_candidate);
}

static void fill_conda_env(el_view *v, const cJSON *o, el_conda_env *e)
{
	(void)v;
	e->name = str(o, "name");
	e->prefix = str(o, "prefix");
}

#define PKG(key, type) { #key, type, offsetof(el_conda_package, key) }
static const member conda_package_members[] = {
	PKG(name, M_STR), PKG(version, M_STR), PKG(build, M_STR), PKG(build_number, M_NUM),
	PKG(channel, M_STR), PKG(subdir, M_STR), PKG(url, M_STR), PKG(md5, M_STR), PKG(sha256, M_STR),
};
#undef PKG

static void fill_conda_package(el_view *v, const cJSON *o, el_conda_package *p)
{
	(void)v;
	p->build_number = -1;
	read_members(o, p, conda_package_members, MEMBERS(conda_package_members));
}

static void build_conda(el_view *v, const cJSON *o)
{
	el_conda *c = &v->conda;

	c->st = state(o);
	c->prefix = str(o, "prefix");
	c->name = str(o, "name");
	c->root_prefix = str(o, "root_prefix");
	OBJECTS(v, o, "envs", el_conda_env, c->envs, c->nenvs, fill_conda_env);
	c->package_count = num(o, "package_count");
	OBJECTS(v, o, "packages", el_conda_package, c->packages, c->npackages, fill_conda_package);
}

#define DIST(key, type) { #key, type, offsetof(el_pip_dist, key) }
static const member dist_members[] = {
	DIST(name, M_STR), DIST(version, M_STR), DIST(kind, M_STR), DIST(path, M_STR),
	DIST(installer, M_STR), DIST(source, M_STR), DIST(egg_info, M_STR), DIST(requested, M_TRI),
	DIST(editable, M_YES), DIST(also_conda, M_YES),
};
#undef DIST

#define DU(key, type) { #key, type, offsetof(el_pip_dist, direct_url.key) }
static const member direct_url_members[] = {
	DU(url, M_STR), DU(vcs, M_STR), DU(commit_id, M_STR), DU(requested_revision, M_STR),
	DU(archive_hash, M_STR), DU(editable, M_YES),
};
#undef DU

#define ORIGIN(key, type) { #key, type, offsetof(el_pip_dist, origin.key) }
static const member origin_members[] = {
	ORIGIN(kind, M_STR), ORIGIN(option, M_STR), ORIGIN(url, M_STR), ORIGIN(from, M_STR), ORIGIN(note, M_STR),
};
#undef ORIGIN

static void fill_shadow(el_view *v, const cJSON *o, el_pip_shadow *s)
{
	(void)v;
	s->path = str(o, "path");
	s->version = str(o, "version");
	s->installer = str(o, "installer");
}

static void fill_dist(el_view *v, const cJSON *o, el_pip_dist *d)
{
	const cJSON *du = el_jget(o, "direct_url"), *og = el_jget(o, "origin");

	d->requested = EL_UNSET;
	read_members(o, d, dist_members, MEMBERS(dist_members));
	d->direct_url.recorded = cJSON_IsObject(du);
	if (d->direct_url.recorded)
		read_members(du, d, direct_url_members, MEMBERS(direct_url_members));
	if (cJSON_IsObject(og))
		read_members(og, d, origin_members, MEMBERS(origin_members));
	d->origin.recorded = d->origin.kind != NULL;
	d->tags = strlist(v, o, "tags");
	OBJECTS(v, o, "shadows", el_pip_shadow, d->shadows, d->nshadows, fill_shadow);
}

static void fill_index_option(el_view *v, const cJSON *o, el_pip_index_option *x)
{
	(void)v;
	x->option = str(o, "option");
	x->url = str(o, "url");
	x->from = str(o, "from");
}

static void build_pip(el_view *v, const cJSON *o)
{
	el_pip *p = &v->pip;

	p->st = state(o);
	p->site_packages = strlist(v, o, "site_packages");
	p->count = num(o, "count");
	p->conda_and_pip = strlist(v, o, "conda_and_pip");
	OBJECTS(v, o, "index_options", el_pip_index_option, p->index_options, p->nindex_options, fill_index_option);
	OBJECTS(v, o, "distributions", el_pip_dist, p->dists, p->ndists, fill_dist);
}

/* a member recorded as a string, or as null ("None": a CPU build) */
static const char *str_or_none(const cJSON *o, const char *key, bool *none)
{
	*none = cJSON_IsNull(el_jget(o, key));
	return str(o, key);
}

/* mmcv_range: a recorded range has its source; a bound's side is read with it */
static void mmcv_range(el_framework *f, const cJSON *r)
{
	f->mmcv_range.source = str(r, "source");
	f->mmcv_range.recorded = cJSON_IsObject(r) && f->mmcv_range.source;
	if (!f->mmcv_range.recorded)
		return;
	f->mmcv_range.min = str(r, "min");
	f->mmcv_range.max = str(r, "max");
	f->mmcv_range.max_inclusive = yes(r, "max_inclusive");
}

static void build_frameworks(el_view *v, const cJSON *sec)
{
	for (size_t i = 0; el_frameworks[i].key; i++) {
		el_framework *f = &v->frameworks[i];
		const cJSON *o = el_jget(sec, el_frameworks[i].key);

		f->info = &el_frameworks[i];
		f->st = state(o);
		f->version = str(o, "version");
		f->version_source = str(o, "version_source");
		f->path = str(o, "path");
		f->dist_version = str(o, "dist_version");
		f->deb = deb(o);
		f->cuda = str_or_none(o, "cuda", &f->cuda_none);
		f->hip = str_or_none(o, "hip", &f->hip_none);
		f->cpu_only = tri(o, "cpu_only");
		f->debug = tri(o, "debug");
		f->git_version = str(o, "git_version");
		f->package = str(o, "package");
		f->ops = tri(o, "ops");
		f->ops_cudart = str(o, "ops_cudart");
		f->ops_files = strlist(v, o, "ops_files");
		f->python_tags = strlist(v, o, "python_tags");
		f->python_tags_source = str(o, "python_tags_source");
		f->requires_python = str(o, "requires_python");
		f->requires_python_source = str(o, "requires_python_source");
		mmcv_range(f, el_jget(o, "mmcv_range"));
	}
}

/* A copy of s[0..n) in the view's arena. */
static const char *view_strndup(el_view *v, const char *s, size_t n)
{
	char *c = view_alloc(v, n + 1, 1);

	memcpy(c, s, n);
	return c;
}

/* The CUDA release of a pip local version ("+cu113" -> "11.3", "+cu92" -> "9.2"); NULL for any other. */
static const char *local_cuda(el_view *v, const char *version)
{
	const char *l = version ? strchr(version, '+') : NULL;
	size_t n;
	char buf[16];

	if (!l || strncmp(l, "+cu", 3) != 0 || (n = strspn(l + 3, "0123456789")) < 2 || n > 4 || l[3 + n])
		return NULL;
	/* the last digit is the minor: cu113 is 11.3, cu92 is 9.2, cu102 is 10.2 */
	snprintf(buf, sizeof(buf), "%.*s.%c", (int)n - 1, l + 3, l[3 + n - 1]);
	return view_strndup(v, buf, strlen(buf));
}

/* The CUDA release of a conda build string ("py3.7_cuda10.2_cudnn7.6.5_0" -> "10.2"), or NULL. */
static const char *conda_build_cuda(el_view *v, const char *build)
{
	const char *c = build ? strstr(build, "cuda") : NULL;
	size_t n;

	if (!c || !(n = strspn(c + 4, "0123456789.")) || c[4] == '.')
		return NULL;
	return view_strndup(v, c + 4, n);
}

/*
 * An imported lock (a pip freeze or conda list) has no frameworks section:
 * what its list says is installed stands for it, so check and diff judge
 * an imported lock by the same rules as a saved one. Such a framework is
 * present but not recorded (no file was read): its version, its torch
 * CUDA build from the local version or the conda build string, and its
 * distribution. A conda package counts where pip lists none.
 */
static void frameworks_from_lists(el_view *v)
{
	for (size_t i = 0; el_frameworks[i].key; i++) {
		el_framework *f = &v->frameworks[i];
		const el_framework_info *info = &el_frameworks[i];
		const char *name = NULL, *version = NULL, *build = NULL;

		if (f->st.recorded)
			return; /* a frameworks section, of any envlock: it speaks */
		for (size_t k = 0; k < v->pip.ndists && !version; k++) {
			char *canon = v->pip.dists[k].name ? el_pep503_name(v->pip.dists[k].name) : NULL;

			for (size_t d = 0; canon && info->dists[d] && !version; d++)
				if (strcmp(canon, info->dists[d]) == 0)
					name = info->dists[d], version = v->pip.dists[k].version;
			free(canon);
		}
		for (size_t k = 0; k < v->conda.npackages && !version; k++) {
			const el_conda_package *c = &v->conda.packages[k];

			if (c->name && info->conda && strcmp(c->name, info->conda) == 0)
				name = info->dists[0], version = c->version, build = c->build;
		}
		if (!version)
			continue;
		f->st.present = true;
		f->version = version;
		f->version_source = v->partial_from;
		if (info->flags & EL_FW_MMCV_FAMILY)
			f->package = name;
		f->cuda = build ? conda_build_cuda(v, build) : local_cuda(v, version);
		if ((build && strstr(build, "cpu")) || (!build && strstr(version, "+cpu")))
			f->cpu_only = EL_YES;
	}
}

static void build_env(el_view *v, const cJSON *o)
{
	v->env.st = state(o);
	v->env.source = str(o, "source");
	v->env.variables = pairs(v, el_jget(o, "variables"), NULL);
}

static void fill_checkpoint(el_view *v, const cJSON *o, el_checkpoint *c)
{
	(void)v;
	c->path = str(o, "path");
	c->size = num(o, "size");
	c->mtime = str(o, "mtime");
	c->sha256 = str(o, "sha256");
	c->error = str(o, "error");
}

static void fill_config_use(el_view *v, const cJSON *o, el_config_use *u)
{
	(void)v;
	u->role = str(o, "role");
	u->key = str(o, "key");
	u->phase = str(o, "phase");
	u->path = str(o, "path");
	u->resolved = str(o, "resolved");
	u->error = str(o, "error");
	u->url = yes(o, "url");
	u->exists = tri(o, "exists");
	u->last_checkpoint = tri(o, "last_checkpoint");
	u->writable = tri(o, "writable");
	u->size = num(o, "size");
	u->categories = num(o, "categories");
}

static void fill_config(el_view *v, const cJSON *o, el_config *c)
{
	const cJSON *eff;

	c->path = str(o, "path");
	c->requested = yes(o, "requested");
	c->sha256 = str(o, "sha256");
	c->size = num(o, "size");
	c->text = str(o, "text");
	c->bases = strlist(v, o, "bases");
	c->unresolved_base = str(o, "unresolved_base");
	c->error = str(o, "error");
	eff = el_jget(o, "effective");
	c->effective = cJSON_IsObject(el_jget(eff, "value")) ? el_jget(eff, "value") : NULL;
	c->effective_error = str(eff, "error");
	c->effective_missing = str(eff, "missing");
	c->cfg_options = strlist(v, eff, "cfg_options");
	OBJECTS(v, eff, "files", el_config_use, c->uses, c->nuses, fill_config_use);
}

static void fill_remote(el_view *v, const cJSON *o, el_remote *r)
{
	(void)v;
	r->name = str(o, "name");
	r->url = str(o, "url");
}

static void fill_submodule(el_view *v, const cJSON *o, el_submodule *s)
{
	(void)v;
	s->path = str(o, "path");
	s->commit = str(o, "commit");
	s->url = str(o, "url");
	s->workdir_commit = str(o, "workdir_commit");
}

static void fill_untracked_file(el_view *v, const cJSON *o, el_untracked_file *f)
{
	(void)v;
	f->path = str(o, "path");
	f->sha256 = str(o, "sha256");
	f->text = str(o, "text");
	f->omitted = str(o, "omitted");
	f->size = num(o, "size");
	f->executable = yes(o, "executable");
}

static void fill_repo(el_view *v, const cJSON *o, el_repo *r)
{
	const cJSON *h = el_jget(o, "head"), *c = el_jget(o, "changes"), *p = el_jget(o, "patch");

	r->path = str(o, "path");
	r->requested = str(o, "requested");
	r->status = str(o, "status");
	r->bare = yes(o, "bare");
	r->shallow = yes(o, "shallow");
	r->dirty = yes(o, "dirty");
	r->dirty_recorded = cJSON_IsBool(el_jget(o, "dirty"));
	r->state = str(o, "state");
	r->tag = str(o, "tag");
	r->head.recorded = cJSON_IsObject(h);
	r->head.commit = str(h, "commit");
	r->head.branch = str(h, "branch");
	r->head.detached = yes(h, "detached");
	r->head.unborn = yes(h, "unborn");
	OBJECTS(v, o, "remotes", el_remote, r->remotes, r->nremotes, fill_remote);
	OBJECTS(v, o, "submodules", el_submodule, r->submodules, r->nsubmodules, fill_submodule);
	r->changes.recorded = cJSON_IsObject(c);
	r->changes.truncated = yes(c, "truncated");
	r->changes.staged = strlist(v, c, "staged");
	r->changes.modified = strlist(v, c, "modified");
	r->changes.untracked = strlist(v, c, "untracked");
	r->changes.conflicted = strlist(v, c, "conflicted");
	r->patch.recorded = cJSON_IsObject(p);
	r->patch.truncated = yes(p, "truncated");
	r->patch.sha256 = str(p, "sha256");
	r->patch.text = str(p, "text");
	r->patch.size = num(p, "size");
	OBJECTS(v, o, "untracked_files", el_untracked_file, r->untracked_files, r->nuntracked_files,
		fill_untracked_file);
}

static void fill_saved_finding(el_view *v, const cJSON *o, el_saved_finding *f)
{
	(void)v;
	f->rule = str(o, "rule");
	f->severity = str(o, "severity");
	f->section = str(o, "section");
	f->subject = str(o, "subject");
	f->message = str(o, "message");
}

/* a stage's figures: numbers as the lock writes them (integers without a point) */
static el_pairs figures(el_view *v, const cJSON *o)
{
	size_t cap = cJSON_IsObject(o) ? (size_t)cJSON_GetArraySize(o) : 0, n = 0;
	el_pair *dst = view_alloc(v, cap, sizeof(*dst));
	const cJSON *it;
	el_pairs p;

	if (cap)
		cJSON_ArrayForEach(it, o) {
			char *s;

			if (!it->string)
				continue;
			if (cJSON_IsString(it)) {
				dst[n].val = it->valuestring;
			} else if (cJSON_IsNumber(it)) {
				s = view_alloc(v, EL_FMT_DOUBLE_SIZE, 1);
				el_fmt_double(s, it->valuedouble);
				dst[n].val = s;
			} else if (el_jraw_int(it)) {
				dst[n].val = it->valuestring; /* an integer past 2^53, as the lock writes it */
			} else if (cJSON_IsBool(it)) {
				dst[n].val = cJSON_IsTrue(it) ? "true" : "false";
			} else {
				continue;
			}
			dst[n++].key = it->string;
		}
	p.v = dst;
	p.n = n;
	return p;
}

static void fill_stage(el_view *v, const cJSON *o, el_verified_stage *s)
{
	s->stage = str(o, "stage");
	s->status = str(o, "status");
	s->reason = str(o, "reason");
	s->fix = str(o, "fix");
	s->figures = figures(v, el_jget(o, "figures"));
}

static void fill_load_need(el_view *v, const cJSON *o, el_load_need *n)
{
	n->soname = str(o, "soname");
	n->needed_by = str(o, "needed_by");
	n->found_by = str(o, "found_by");
	n->path = str(o, "path");
	n->realpath = str(o, "realpath");
	n->error = str(o, "error");
	n->searched = strlist(v, o, "searched");
	n->without_library_path = str(o, "without_library_path");
}

static void fill_load_missing(el_view *v, const cJSON *o, el_load_missing *m)
{
	(void)v;
	m->file = str(o, "file");
	m->version = str(o, "version");
	m->library = str(o, "library");
	m->library_path = str(o, "library_path");
}

static void fill_load_module(el_view *v, const cJSON *o, el_load_module *m)
{
	m->framework = str(o, "framework");
	m->path = str(o, "path");
	m->error = str(o, "error");
	m->truncated = yes(o, "truncated");
	OBJECTS(v, o, "needed", el_load_need, m->needed, m->nneeded, fill_load_need);
	OBJECTS(v, o, "missing_versions", el_load_missing, m->missing, m->nmissing, fill_load_missing);
}

static void build_loads(el_view *v, const cJSON *o)
{
	v->loads.st = state(o);
	v->loads.library_path = str(o, "library_path");
	OBJECTS(v, o, "modules", el_load_module, v->loads.modules, v->loads.nmodules, fill_load_module);
}

const el_load_need *el_loads_find(const el_loads *l, const char *framework, const char *prefix)
{
	for (size_t i = 0; l->st.present && i < l->nmodules; i++) {
		const el_load_module *m = &l->modules[i];

		if (!m->framework || strcmp(m->framework, framework) != 0)
			continue;
		for (size_t k = 0; k < m->nneeded; k++)
			if (m->needed[k].soname && m->needed[k].path &&
			    strncmp(m->needed[k].soname, prefix, strlen(prefix)) == 0)
				return &m->needed[k];
	}
	return NULL;
}

const char *el_so_version(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL, *dot;

	base = base ? base + 1 : path;
	dot = base ? strstr(base, ".so.") : NULL;
	return dot && dot[4] ? dot + 4 : NULL;
}

bool el_env_layout(const char *layout)
{
	return layout && (strcmp(layout, "conda") == 0 || strcmp(layout, "wheel") == 0 ||
			  strcmp(layout, "bundled") == 0);
}

static bool lists(const el_library *libs, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (libs[i].path && strcmp(libs[i].path, path) == 0)
			return true;
	return false;
}

const char *el_view_library_version(const el_view *v, const char *path)
{
	if (!path)
		return NULL;
	for (size_t i = 0; i < v->cuda.ntoolkits; i++) {
		const el_toolkit *tk = &v->cuda.toolkits[i];

		if (el_env_layout(tk->layout) && tk->version && lists(tk->libraries, tk->nlibraries, path))
			return tk->version;
	}
	for (size_t i = 0; i < v->cudnn.ninstalls; i++) {
		const el_cudnn_install *in = &v->cudnn.installs[i];

		if (in->version && lists(in->libraries, in->nlibraries, path))
			return in->version;
	}
	return el_so_version(path);
}

static void build_sections(el_view *v, const cJSON *doc)
{
	const cJSON *o;

	v->format = num(doc, "envlock");
	v->id = str(doc, "id");
	v->created = str(doc, "created");
	v->hostname = str(el_jget(doc, "host"), "hostname");
	v->partial_from = str(el_jget(doc, "partial"), "from");
	v->warnings = strlist(v, doc, "warnings");
	build_system(v, el_jget(doc, "system"));
	build_gpu(v, el_jget(doc, "gpu"));
	build_cuda(v, el_jget(doc, "cuda"));
	build_cudnn(v, el_jget(doc, "cudnn"));
	build_compilers(v, el_jget(doc, "compilers"));
	build_python(v, el_jget(doc, "python"));
	build_conda(v, el_jget(doc, "conda"));
	build_pip(v, el_jget(doc, "pip"));
	build_frameworks(v, el_jget(doc, "frameworks"));
	if (v->partial_from)
		frameworks_from_lists(v);
	build_env(v, el_jget(doc, "env"));
	build_loads(v, el_jget(doc, "loads"));

	o = el_jget(doc, "checkpoints");
	v->checkpoints.st = state(o);
	v->checkpoints.count = num(o, "count");
	v->checkpoints.total_bytes = num(o, "total_bytes");
	OBJECTS(v, o, "files", el_checkpoint, v->checkpoints.files, v->checkpoints.nfiles, fill_checkpoint);

	o = el_jget(doc, "configs");
	v->configs.st = state(o);
	OBJECTS(v, o, "files", el_config, v->configs.files, v->configs.nfiles, fill_config);

	o = el_jget(doc, "repos");
	v->repos.st = state(o);
	OBJECTS(v, o, "repositories", el_repo, v->repos.repos, v->repos.nrepos, fill_repo);

	o = el_jget(doc, "checks");
	v->checks.recorded = cJSON_IsObject(o);
	v->checks.rules = str(o, "rules");
	v->checks.breaking = num(o, "breaking");
	v->checks.risky = num(o, "risky");
	v->checks.info = num(o, "info");
	OBJECTS(v, o, "findings", el_saved_finding, v->checks.findings, v->checks.nfindings, fill_saved_finding);

	o = el_jget(doc, "verify");
	v->verify.recorded = cJSON_IsObject(o);
	v->verify.version = num(o, "envlock_verify");
	v->verify.result = str(o, "result");
	v->verify.exit_status = num(o, "exit_status");
	v->verify.steps = num(o, "steps");
	OBJECTS(v, o, "stages", el_verified_stage, v->verify.stages, v->verify.nstages, fill_stage);
}

el_view *el_view_new(const cJSON *doc)
{
	el_view *v = el_xcalloc(1, sizeof(*v));

	build_sections(v, doc);
	return v;
}

void el_view_free(el_view *v)
{
	struct el_view_arena *a, *next;

	if (!v)
		return;
	for (a = v->arena; a; a = next) {
		next = a->next;
		free(a);
	}
	free(v);
}

const el_view *el_lock_view(const envlock_lock *lock)
{
	/* a cache inside an otherwise unchanged lock, like its id */
	envlock_lock *l = (envlock_lock *)lock;

	if (!l->view || l->view_stale) {
		el_view_free(l->view);
		l->view = el_view_new(l->doc);
		l->view_stale = 0;
	}
	return l->view;
}

const el_toolkit *el_view_toolkit_at(const el_view *v, const char *path)
{
	if (!path)
		return NULL;
	for (size_t i = 0; i < v->cuda.ntoolkits; i++) {
		const el_toolkit *tk = &v->cuda.toolkits[i];

		if (tk->home && strcmp(tk->home, path) == 0)
			return tk;
		for (size_t j = 0; j < tk->aliases.n; j++)
			if (strcmp(tk->aliases.v[j], path) == 0)
				return tk;
	}
	return NULL;
}

const char *el_toolkit_version(const el_toolkit *tk)
{
	return !tk ? NULL : tk->version ? tk->version : tk->release;
}

const el_framework *el_view_framework(const el_view *v, const char *key)
{
	const el_framework_info *f = el_framework_find(key);

	return f ? &v->frameworks[f - el_frameworks] : NULL;
}

static bool pep503_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* a and b are the same name under PEP 503: case, and runs of "-_." (as one "-"), do not count */
static bool pep503_equal(const char *a, const char *b)
{
	for (;;) {
		if (pep503_sep(*a) || pep503_sep(*b)) {
			if (!pep503_sep(*a) || !pep503_sep(*b))
				return false;
			while (pep503_sep(*a))
				a++;
			while (pep503_sep(*b))
				b++;
			continue;
		}
		if (ascii_lower(*a) != ascii_lower(*b))
			return false;
		if (!*a)
			return true;
		a++;
		b++;
	}
}

const el_pip_dist *el_view_pip_dist(const el_view *v, const char *name)
{
	for (size_t i = 0; name && i < v->pip.ndists; i++)
		if (v->pip.dists[i].name && pep503_equal(v->pip.dists[i].name, name))
			return &v->pip.dists[i];
	return NULL;
}

const char *el_pip_option_flag(const char *option)
{
	static const char *const flags[][2] = {
		{ "index-url", "--index-url" }, { "extra-index-url", "--extra-index-url" }, { "find-links", "--find-links" },
	};

	for (size_t i = 0; option && i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(option, flags[i][0]) == 0)
			return flags[i][1];
	return NULL;
}

/* the same URL for pip: a trailing '/' does not count */
static bool same_url(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	la -= la && a[la - 1] == '/';
	lb -= lb && b[lb - 1] == '/';
	return la == lb && memcmp(a, b, la) == 0;
}

static el_pip_index *index_find(el_pip_index *ix, size_t n, const char *option, const char *url)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ix[i].option, option) == 0 && same_url(ix[i].url, url))
			return &ix[i];
	return NULL;
}

void el_pip_indexes(const el_view *v, const el_pip_dist *const *dists, size_t n,
		    el_pip_index **out, size_t *nout)
{
	el_pip_index *ix = NULL, *x;
	size_t nix = 0, cap = 0;

	for (size_t i = 0; i < v->pip.nindex_options; i++) {
		const el_pip_index_option *o = &v->pip.index_options[i];

		if (!el_pip_option_flag(o->option) || !o->url || index_find(ix, nix, o->option, o->url))
			continue;
		EL_GROW(ix, nix + 1, cap);
		x = &ix[nix++];
		memset(x, 0, sizeof(*x));
		x->option = o->option;
		x->url = o->url;
		x->from = o->from ? o->from : "";
	}
	for (size_t i = 0; i < n; i++) {
		const el_pip_dist *d = dists[i];
		const char *option = d->origin.option, *url = d->origin.url;

		if (!d->origin.recorded || strcmp(d->origin.kind, "direct_url") == 0 || !el_pip_option_flag(option) || !url)
			continue;
		if ((x = index_find(ix, nix, option, url)) == NULL) {
			EL_GROW(ix, nix + 1, cap);
			x = &ix[nix++];
			memset(x, 0, sizeof(*x));
			x->option = option;
			x->url = url;
		}
		if (!x->dists)
			x->dists = el_xcalloc(n, sizeof(*x->dists));
		x->dists[x->ndists++] = d;
	}
	*out = ix;
	*nout = nix;
}

void el_pip_indexes_free(el_pip_index *ix, size_t n)
{
	for (size_t i = 0; ix && i < n; i++)
		free(ix[i].dists);
	free(ix);
}

#define OMM (EL_FW_OPENMMLAB | EL_FW_MMCV_OPS | EL_FW_CITED | EL_FW_MMCV_RANGE)

const el_framework_info el_frameworks[] = {
	{ "torch", { "torch", NULL }, 0, "pytorch" },
	{ "torchvision", { "torchvision", NULL }, 0, "torchvision" },
	{ "mmcv", { "mmcv-full", "mmcv", "mmcv-lite", NULL }, EL_FW_OPENMMLAB | EL_FW_MMCV_FAMILY, NULL },
	{ "mmengine", { "mmengine", NULL }, EL_FW_OPENMMLAB, NULL },
	{ "mmdet", { "mmdet", NULL }, OMM, NULL },
	{ "mmpose", { "mmpose", NULL }, OMM, NULL },
	{ "mmpretrain", { "mmpretrain", NULL }, OMM, NULL },
	{ "mmseg", { "mmsegmentation", NULL }, OMM, NULL },
	{ "mmdet3d", { "mmdet3d", NULL }, OMM, NULL },
	{ "mmaction", { "mmaction2", NULL }, OMM, NULL },
	{ "mmocr", { "mmocr", NULL }, OMM, NULL },
	{ "mmcls", { "mmcls", NULL }, OMM, NULL },
	{ NULL, { NULL }, 0, NULL },
};

_Static_assert(sizeof(el_frameworks) / sizeof(el_frameworks[0]) == EL_FW_COUNT + 1,
	       "EL_FW_COUNT is the number of frameworks in el_frameworks");

const el_framework_info *el_framework_find(const char *key)
{
	for (const el_framework_info *f = el_frameworks; f->key; f++)
		if (key && strcmp(f->key, key) == 0)
			return f;
	return NULL;
}

