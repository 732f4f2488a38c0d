/* What glibc 2.36's ld.so would load for an ELF file under a root (loader.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"
#include "util/error.h"
#include "util/ldcache.h"
#include "util/ldconf.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* A string-keyed table (open addressing, FNV-1a), values borrowed. */
typedef struct {
	char **keys;
	void **vals;
	size_t cap, n;
} strmap;

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static size_t slot(const strmap *m, const char *key)
{
	size_t i = (size_t)fnv(key) & (m->cap - 1);

	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void *map_get(const strmap *m, const char *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = slot(m, key);
	return m->keys[i] ? m->vals[i] : NULL;
}

/* Add key -> val unless key is there already (the first one stays, as ld.so's first match). */
static void map_add(strmap *m, const char *key, void *val)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3) {
		strmap g = { NULL, NULL, m->cap ? m->cap * 2 : 64, 0 };

		g.keys = el_xcalloc(g.cap, sizeof(*g.keys));
		g.vals = el_xcalloc(g.cap, sizeof(*g.vals));
		for (size_t k = 0; k < m->cap; k++)
			if (m->keys[k]) {
				size_t j = slot(&g, m->keys[k]);

				g.keys[j] = m->keys[k];
				g.vals[j] = m->vals[k];
				g.n++;
			}
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	i = slot(m, key);
	if (m->keys[i])
		return;
	m->keys[i] = el_xstrdup(key);
	m->vals[i] = val;
	m->n++;
}

static void map_release(strmap *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i]) {
			free(m->keys[i]);
			if (free_val)
				free_val(m->vals[i]);
		}
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* One file the loader looked at, by its in-root real path: its header and its ELF tables. */
typedef struct {
	char *real;
	const char *bad;      /* open_verify's fatal reason for this file, or NULL */
	int bits, big, machine, type;
	size_t hdr_len;       /* bytes of the header read: fewer than an Ehdr of ld.so's class is "file too short" */
	int elf_rc;           /* el_elf_read's */
	el_elf_info elf;
} ld_file;

static char not_a_dir; /* the dirs table's value for a folder that is not there */

struct el_loader {
	const el_root *root;
	el_ldcache *cache;    /* NULL: no readable ld.so.cache in the root */
	char *cwd;            /* where relative search folders start: "/" under a root */
	strmap files;         /* real path -> ld_file */
	strmap dirs;          /* search folder -> its real path (char *), or &not_a_dir */
};

static void free_file(void *v)
{
	ld_file *f = v;

	el_elf_info_release(&f->elf);
	free(f->real);
	free(f);
}

static void free_dir(void *v)
{
	if (v != &not_a_dir)
		free(v);
}

int el_loader_new(el_loader **out, envlock_ctx *ctx, const el_root *root)
{
	el_buf b = EL_BUF_INIT(EL_LDCACHE_LIMIT);
	el_loader *ld;
	char cwd[PATH_MAX];

	(void)ctx;
	ld = el_xcalloc(1, sizeof(*ld));
	ld->root = root;
	ld->cwd = el_xstrdup(root->live && getcwd(cwd, sizeof(cwd)) ? cwd : "/");
	/* a cache ld.so cannot read is one it ignores: the search goes on to the default folders */
	if (el_root_read(root, "/etc/ld.so.cache", &b, NULL) == 0)
		el_ldcache_parse(&ld->cache, b.data, b.len);
	el_buf_release(&b);
	*out = ld;
	return 0;
}

void el_loader_free(el_loader *ld)
{
	if (!ld)
		return;
	map_release(&ld->files, free_file);
	map_release(&ld->dirs, free_dir);
	el_ldcache_free(ld->cache);
	free(ld->cwd);
	free(ld);
}

/*
 * The checks of open_verify (dl-load.c) that end the load with an error,
 * in its order; a file of the other class or machine is not an error but
 * skipped (the search goes on), which match() decides.
 */
static void read_header(ld_file *f, int fd)
{
	unsigned char eh[64];
	ssize_t n = pread(fd, eh, sizeof(eh), 0);

	/* a short read without an error is "file too short", a failed one "cannot read file data" */
	if (n < 0) {
		f->bad = "cannot read file data";
		return;
	}
	f->hdr_len = (size_t)n;
	if (n < (ssize_t)sizeof(Elf32_Ehdr)) {
		f->bad = "file too short";
		return;
	}
	if (memcmp(eh, ELFMAG, SELFMAG) != 0 || (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64)) {
		f->bad = "invalid ELF header";
		return;
	}
	f->bits = eh[EI_CLASS] == ELFCLASS64 ? 64 : 32;
	f->big = eh[EI_DATA] == ELFDATA2MSB;
	if (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB)
		f->bad = "invalid ELF header";
	else if (eh[EI_VERSION] != EV_CURRENT)
		f->bad = "ELF file version ident does not match current one";
	else if (eh[EI_OSABI] != ELFOSABI_SYSV && eh[EI_OSABI] != ELFOSABI_GNU)
		f->bad = "ELF file OS ABI invalid";
}

/* The file at real (in-root, resolved), read once per loader. */
static ld_file *file_at(el_loader *ld, const char *real)
{
	ld_file *f = map_get(&ld->files, real);
	char *host;
	int fd;

	if (f)
		return f;
	f = el_xcalloc(1, sizeof(*f));
	f->real = el_xstrdup(real);
	f->elf_rc = ENVLOCK_EPARSE;
	host = el_root_host(ld->root, real);
	fd = open(host, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	free(host);
	if (fd < 0) {
		f->bad = "cannot open shared object file";
	} else {
		read_header(f, fd);
		if (!f->bad && (f->elf_rc = el_elf_read(fd, &f->elf)) == 0) {
			f->machine = f->elf.machine;
			f->type = f->elf.type;
		}
		close(fd);
	}
	map_add(&ld->files, real, f);
	return f;
}

/* A search folder's real path under the root (memoised), or NULL when it is not a folder there. */
static const char *dir_real(el_loader *ld, const char *dir)
{
	char *real = map_get(&ld->dirs, dir);
	struct stat st;

	if (real)
		return real == &not_a_dir ? NULL : real;
	if (el_root_realpath(ld->root, dir, &real, NULL) != 0 || el_root_stat(ld->root, real, &st) != 0 ||
	    !S_ISDIR(st.st_mode)) {
		free(real);
		real = &not_a_dir;
	}
	map_add(&ld->dirs, dir, real);
	return real == &not_a_dir ? NULL : real;
}

/* The state of one resolution. */
typedef struct {
	el_loader *ld;
	el_ld_tree *t;
	const el_ld_opts *opts;
	int bits, big, machine;
	const char *platform, *lib;
	const char *const *defaults; /* the default folders, each with its final '/' */
	strmap names;   /* every name an object answers to -> the object */
	strmap reals;   /* real path -> the object (ld.so's file identity check) */
	char **llp;     /* LD_LIBRARY_PATH folders, expanded */
	el_strvec not_found;
	size_t objs_cap;
	const el_ld_obj *exe; /* opts->program's file: its DT_RPATH serves every object, dlopen'd ones too */
} resolver;

const char *el_ld_how_name(el_ld_how how)
{
	switch (how) {
	case EL_LD_RPATH: return "rpath";
	case EL_LD_RUNPATH: return "runpath";
	case EL_LD_LIBRARY_PATH: return "ld_library_path";
	case EL_LD_CACHE: return "ld.so.cache";
	case EL_LD_DEFAULT: return "default";
	case EL_LD_DIRECT: return "path";
	case EL_LD_INTERP: return "interpreter";
	case EL_LD_MAIN: return "file";
	default: return NULL;
	}
}

/*
 * The default folders: glibc's SYSTEM_DIRS, built from default-rpath
 * ($(slibdir):$(libdir), Makeconfig). Upstream x86_64 and aarch64 use
 * /lib64:/usr/lib64. Debian and Ubuntu build with multiarch folders and
 * add /lib:/usr/lib: Debian 12's `ld.so --help` lists /lib/x86_64-linux-gnu,
 * /usr/lib/x86_64-linux-gnu, /lib, /usr/lib, in that order. $LIB is
 * notdir($(slibdir)) (elf/Makefile, trusted-dirs.h): "x86_64-linux-gnu"
 * on Debian, "lib64" upstream.
 */
static const char *const multiarch_x86_64[] = { "/lib/x86_64-linux-gnu/", "/usr/lib/x86_64-linux-gnu/", "/lib/", "/usr/lib/", NULL };
static const char *const multiarch_i386[] = { "/lib/i386-linux-gnu/", "/usr/lib/i386-linux-gnu/", "/lib/", "/usr/lib/", NULL };
static const char *const multiarch_aarch64[] = { "/lib/aarch64-linux-gnu/", "/usr/lib/aarch64-linux-gnu/", "/lib/", "/usr/lib/", NULL };
static const char *const upstream_lib64[] = { "/lib64/", "/usr/lib64/", NULL };
static const char *const upstream_lib[] = { "/lib/", "/usr/lib/", NULL };

static void choose_defaults(resolver *r)
{
	const char *const *multi = r->machine == EM_X86_64 ? multiarch_x86_64
				   : r->machine == EM_386 ? multiarch_i386
				   : r->machine == EM_AARCH64 ? multiarch_aarch64 : NULL;
	char triplet[64] = "";

	if (multi) {
		/* "/lib/x86_64-linux-gnu/" -> "x86_64-linux-gnu" */
		snprintf(triplet, sizeof(triplet), "%.*s", (int)strlen(multi[0] + 5) - 1, multi[0] + 5);
	}
	if (multi && dir_real(r->ld, multi[0])) {
		r->defaults = multi;
		r->lib = el_xstrdup(triplet);
	} else {
		r->defaults = r->bits == 64 && r->machine != EM_PPC64 ? upstream_lib64 : upstream_lib;
		r->lib = el_xstrdup(r->bits == 64 ? "lib64" : "lib");
	}
	if (r->opts->lib) {
		free((char *)r->lib);
		r->lib = el_xstrdup(r->opts->lib);
	}
}

/*
 * is_dst (dl-load.c): $NAME or ${NAME}; an unbraced name must not run on
 * into identifier characters. Returns the length consumed after '$'.
 */
static size_t is_dst(const char *in, const char *ref)
{
	size_t len = strlen(ref);
	int curly = in[0] == '{';

	if (curly)
		in++;
	if (strncmp(in, ref, len) != 0 || (curly && in[len] != '}') ||
	    (!curly && (in[len] == '_' || (in[len] >= '0' && in[len] <= '9') || (in[len] >= 'a' && in[len] <= 'z') ||
			(in[len] >= 'A' && in[len] <= 'Z'))))
		return 0;
	return curly ? len + 2 : len;
}

/* The folder of an object's path, its $ORIGIN ("/foo" -> "/"); malloc'd. */
static char *origin_of(const char *path)
{
	return el_path_dir(path);
}

/* _dl_dst_substitute: $ORIGIN, $PLATFORM and $LIB replaced; an unknown $NAME stays as it is. */
static char *expand(const resolver *r, const char *s, const char *origin)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a search path with $ORIGIN, $PLATFORM and $LIB replaced by strings in memory");
	char *out;

	while (*s) {
		size_t len;

		if (*s != '$') {
			el_buf_addc(&b, *s++);
			continue;
		}
		s++;
		if ((len = is_dst(s, "ORIGIN")) != 0)
			el_buf_adds(&b, origin);
		else if ((len = is_dst(s, "PLATFORM")) != 0)
			el_buf_adds(&b, r->platform);
		else if ((len = is_dst(s, "LIB")) != 0)
			el_buf_adds(&b, r->lib);
		else
			el_buf_addc(&b, '$');
		s += len;
	}
	out = el_xstrdup(el_buf_cstr(&b));
	el_buf_release(&b);
	return out;
}

/*
 * fillin_rpath (dl-load.c): split at any of seps, expand each element,
 * drop trailing slashes; an empty element is the current folder.
 */
static char **split_path(const resolver *r, const char *list, const char *seps, const char *origin)
{
	el_strvec dirs = EL_STRVEC_INIT;
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, seps);
		char *el = el_xstrndup(p, n), *dir;
		size_t len;

		dir = n ? expand(r, el, origin) : el_xstrdup("");
		free(el);
		len = strlen(dir);
		while (len > 1 && dir[len - 1] == '/')
			dir[--len] = '\0';
		if (len == 0 && n) {
			free(dir); /* expanded to nothing: ignored */
		} else {
			if (dir[0] != '/') {
				char *abs = len ? el_path_join(r->ld->cwd, dir) : el_xstrdup(r->ld->cwd);

				free(dir);
				dir = abs;
			}
			if (!el_strvec_has(&dirs, dir))
				el_strvec_push_owned(&dirs, dir);
			else
				free(dir);
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	return el_strvec_detach(&dirs);
}

/* A search's outcome. */
typedef struct {
	char *path;      /* the in-root path it was found by */
	ld_file *file;
	const char *bad; /* a file was found that stops the load: why */
} found;

/*
 * Whether f is what ld.so would load here: 1 yes, 0 skip it (the other
 * class or machine: "not a fatal error", dl-load.c), -1 it stops the load
 * (*why says why, as open_verify).
 */
static int match(const resolver *r, const ld_file *f, const char **why)
{
	if (f->bad || f->hdr_len < (r->bits == 64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		*why = f->bad ? f->bad : "file too short";
		return -1;
	}
	if (f->bits != r->bits)
		return 0;
	if (f->big != r->big) {
		*why = r->big ? "ELF file data encoding not big-endian" : "ELF file data encoding not little-endian";
		return -1;
	}
	if (f->elf_rc != 0) {
		*why = "cannot read its dynamic section";
		return -1;
	}
	if (f->machine != r->machine)
		return 0;
	if (f->type != ET_DYN && f->type != ET_EXEC) {
		*why = "only ET_DYN and ET_EXEC can be loaded";
		return -1;
	}
	return 1;
}

#define TRY_STOP 2 /* an error other than "no such file": open_path gives up on the rest of its list */

/*
 * Try path (in-root, absolute): 1 found (res filled), 0 not here, -1
 * found something that stops the load, TRY_STOP a symlink loop.
 */
static int try_path(resolver *r, const char *path, found *res)
{
	char *dir = el_path_dir(path), *real = NULL;
	const char *rdir = dir_real(r->ld, dir);
	ld_file *f;
	int m, rc = 0;

	free(dir);
	if (!rdir || (rc = el_root_realpath_at(r->ld->root, rdir, el_path_base(path), &real, NULL)) != 0) {
		free(real);
		return rdir && rc == ENVLOCK_ELIMIT ? TRY_STOP : 0;
	}
	f = file_at(r->ld, real);
	free(real);
	if (f->bad && strcmp(f->bad, "cannot open shared object file") == 0)
		return 0;
	if ((m = match(r, f, &res->bad)) == 0)
		return 0;
	res->path = el_xstrdup(path);
	res->file = f;
	return m;
}

/*
 * open_path: each folder in turn. A folder that exists but where the
 * open fails other than with ENOENT or EACCES (ELOOP) ends the list:
 * "the file exists and is readable, but something went wrong".
 */
static int try_dirs(resolver *r, char *const *dirs, const char *name, found *res)
{
	for (size_t i = 0; dirs && dirs[i]; i++) {
		char *path = el_path_join(dirs[i], name);
		int m = try_path(r, path, res);

		free(path);
		if (m == TRY_STOP)
			return 0;
		if (m)
			return m;
	}
	return 0;
}

static int try_list(resolver *r, const char *list, const char *origin, const char *name, found *res)
{
	char **dirs = split_path(r, list, ":", origin);
	int m = try_dirs(r, dirs, name, res);

	el_strv_free(dirs);
	return m;
}

static int under_default(const resolver *r, const char *path)
{
	for (const char *const *d = r->defaults; *d; d++)
		if (strncmp(path, *d, strlen(*d)) == 0)
			return 1;
	return 0;
}

static const char *cache_lookup(const resolver *r, const char *name)
{
	switch (r->machine) {
	case EM_X86_64:
		return el_ldcache_lookup_abi(r->ld->cache, name, EL_LDCACHE_FLAG_ELF_LIBC6 | EL_LDCACHE_FLAG_X8664_LIB64, 0);
	case EM_386:
		return el_ldcache_lookup_abi(r->ld->cache, name, EL_LDCACHE_FLAG_ELF_LIBC6, 1);
	case EM_AARCH64:
		return el_ldcache_lookup_abi(r->ld->cache, name, EL_LDCACHE_FLAG_ELF_LIBC6 | EL_LDCACHE_FLAG_AARCH64_LIB64, 0);
	default:
		return el_ldcache_lookup(r->ld->cache, name);
	}
}

/* _dl_map_object's search for a name without '/' needed by obj: *how says what found it. */
static int search(resolver *r, const el_ld_obj *obj, const char *name, found *res, el_ld_how *how)
{
	const el_elf_info *e = obj->elf;
	int nodeflib = (e->flags_1 & DF_1_NODEFLIB) != 0, m = 0;
	const char *cached;

	/* DT_RPATH of the object and of the objects that loaded it, unless the object has DT_RUNPATH */
	if (!e->runpath) {
		*how = EL_LD_RPATH;
		for (const el_ld_obj *l = obj; l && !m; l = l->parent)
			/* an object with both has only its DT_RUNPATH (get-dynamic-info.h) */
			if (l->elf->rpath && !l->elf->runpath) {
				char *origin = origin_of(l->path);

				m = try_list(r, l->elf->rpath, origin, name, res);
				free(origin);
			}
		/* "try the DT_RPATH of the executable itself" (dl-load.c): python's, for the modules it loads */
		if (!m && r->exe && r->exe->elf->rpath && !r->exe->elf->runpath) {
			char *origin = origin_of(r->exe->path);

			m = try_list(r, r->exe->elf->rpath, origin, name, res);
			free(origin);
		}
		if (m)
			return m;
	}
	*how = EL_LD_LIBRARY_PATH;
	if ((m = try_dirs(r, r->llp, name, res)) != 0)
		return m;
	if (e->runpath) {
		char *origin = origin_of(obj->path);

		*how = EL_LD_RUNPATH;
		m = try_list(r, e->runpath, origin, name, res);
		free(origin);
		if (m)
			return m;
	}
	/* a DF_1_NODEFLIB object takes no cache entry from the default folders */
	*how = EL_LD_CACHE;
	cached = cache_lookup(r, name);
	if (cached && cached[0] == '/' && !(nodeflib && under_default(r, cached)) &&
	    (m = try_path(r, cached, res)) != 0 && m != TRY_STOP)
		return m;
	if (nodeflib)
		return 0;
	*how = EL_LD_DEFAULT;
	m = 0;
	for (const char *const *d = r->defaults; *d && !m; d++) {
		char *path = el_xasprintf("%s%s", *d, name);

		m = try_path(r, path, res);
		free(path);
	}
	return m == TRY_STOP ? 0 : m;
}

static void push_dirs(el_strvec *v, char *const *dirs)
{
	for (size_t i = 0; dirs && dirs[i]; i++)
		if (!el_strvec_has(v, dirs[i]))
			el_strvec_push(v, dirs[i]);
}

/* Where search() looked for a name it did not find, in its order. */
static char **searched_dirs(const resolver *r, const el_ld_obj *obj)
{
	const el_elf_info *e = obj->elf;
	int nodeflib = (e->flags_1 & DF_1_NODEFLIB) != 0;
	el_strvec v = EL_STRVEC_INIT;

	if (!e->runpath)
		for (const el_ld_obj *l = obj; l; l = l->parent)
			if (l->elf->rpath && !l->elf->runpath) {
				char *origin = origin_of(l->path), **dirs = split_path(r, l->elf->rpath, ":", origin);

				push_dirs(&v, dirs);
				el_strv_free(dirs);
				free(origin);
			}
	if (!e->runpath && r->exe && r->exe->elf->rpath && !r->exe->elf->runpath) {
		char *origin = origin_of(r->exe->path), **dirs = split_path(r, r->exe->elf->rpath, ":", origin);

		push_dirs(&v, dirs);
		el_strv_free(dirs);
		free(origin);
	}
	push_dirs(&v, r->llp);
	if (e->runpath) {
		char *origin = origin_of(obj->path), **dirs = split_path(r, e->runpath, ":", origin);

		push_dirs(&v, dirs);
		el_strv_free(dirs);
		free(origin);
	}
	el_strvec_push(&v, "ld.so.cache");
	for (const char *const *d = r->defaults; *d && !nodeflib; d++) {
		char *dir = el_xstrndup(*d, strlen(*d) > 1 ? strlen(*d) - 1 : 1);

		if (!el_strvec_has(&v, dir))
			el_strvec_push_owned(&v, dir);
		else
			free(dir);
	}
	return el_strvec_detach(&v);
}

static void add_name(resolver *r, const char *name, el_ld_obj *o)
{
	if (name && *name)
		map_add(&r->names, name, o);
}

static el_ld_obj *new_obj(resolver *r, const char *path, ld_file *f, el_ld_how how, const el_ld_obj *parent)
{
	el_ld_obj *o = el_xcalloc(1, sizeof(*o));

	o->path = el_xstrdup(path);
	o->realpath = el_xstrdup(f->real);
	o->how = how;
	o->elf = &f->elf;
	o->parent = parent;
	o->tree = r->t;
	EL_GROW(r->t->objs, r->t->nobjs + 1, r->objs_cap);
	r->t->objs[r->t->nobjs++] = o;
	/* _dl_name_match_p: the path it was opened by, its DT_SONAME */
	add_name(r, path, o);
	add_name(r, f->elf.soname, o);
	map_add(&r->reals, f->real, o);
	return o;
}

/* One DT_NEEDED name of obj, as _dl_map_object resolves it. */
static void resolve_need(resolver *r, el_ld_obj *obj, el_ld_need *need)
{
	found res = { NULL, NULL, NULL };
	el_ld_how how = EL_LD_DIRECT;
	el_ld_obj *o = map_get(&r->names, need->name);
	int m;

	if (o) {
		need->obj = o;
		return;
	}
	if (strchr(need->name, '/')) {
		char *origin = origin_of(obj->path), *path = expand(r, need->name, origin);

		if (path[0] != '/') {
			char *abs = el_path_join(r->ld->cwd, path);

			free(path);
			path = abs;
		}
		if ((m = try_path(r, path, &res)) == TRY_STOP)
			m = 0;
		free(path);
		free(origin);
	} else {
		m = search(r, obj, need->name, &res, &how);
	}
	if (m < 0) {
		need->error = el_xasprintf("'%s': %s", res.path, res.bad);
	} else if (m > 0) {
		/* the same file by another name is the object already loaded (_dl_map_object_from_fd) */
		if (!(o = map_get(&r->reals, res.file->real))) {
			if (r->t->nobjs >= EL_LD_MAX_OBJECTS) {
				r->t->truncated = 1;
				need->error = el_xstrdup("more objects than envlock follows");
			} else {
				o = new_obj(r, res.path, res.file, how, obj);
			}
		}
		if (o)
			add_name(r, need->name, o);
		need->obj = o;
	}
	if (!need->obj) {
		r->t->not_found++;
		el_strvec_push(&r->not_found, need->name);
		if (m == 0 && !strchr(need->name, '/'))
			need->searched = searched_dirs(r, obj);
	}
	free(res.path);
}

/* Breadth first, as _dl_map_object_deps: the file's needs, then theirs, in load order. */
static void load_all(resolver *r)
{
	for (size_t i = 0; i < r->t->nobjs; i++) {
		el_ld_obj *obj = r->t->objs[i];
		size_t n = 0;

		if (obj->how == EL_LD_INTERP)
			continue; /* ld.so is loaded already: its own needs are not searched */
		while (obj->elf->needed && obj->elf->needed[n])
			n++;
		obj->needed = el_xcalloc(n ? n : 1, sizeof(*obj->needed));
		obj->nneeded = n;
		for (size_t k = 0; k < n; k++) {
			obj->needed[k].name = el_xstrdup(obj->elf->needed[k]);
			resolve_need(r, obj, &obj->needed[k]);
		}
	}
}

/* Mark where the tree shows each object's own needs: its first place, depth first. */
static void mark_expand(const el_ld_tree *t, el_ld_obj *obj, strmap *seen)
{
	for (size_t k = 0; k < obj->nneeded; k++) {
		el_ld_obj *o = obj->needed[k].obj;

		if (!o || map_get(seen, o->realpath))
			continue;
		map_add(seen, o->realpath, o);
		obj->needed[k].expand = 1;
		/* an object an earlier tree loaded has its needs shown there */
		if (el_ld_tree_owns(t, o))
			mark_expand(t, o, seen);
	}
}

int el_ld_tree_owns(const el_ld_tree *t, const el_ld_obj *obj)
{
	return t && obj && obj->tree == t;
}

/*
 * _dl_check_map_versions (dl-version.c): each DT_VERNEED version against
 * the DT_VERDEF of the loaded object of that name. A library without
 * DT_VERDEF, or a weak need, is no error there.
 */
static void check_versions(resolver *r)
{
	size_t cap = 0;

	for (size_t i = 0; i < r->t->nobjs; i++) {
		const el_ld_obj *obj = r->t->objs[i];

		for (size_t v = 0; v < obj->elf->nverneed; v++) {
			const el_elf_verneed *vn = &obj->elf->verneed[v];
			const el_ld_obj *lib = map_get(&r->names, vn->file);
			el_ld_missing *miss;
			int have = 0;

			if (vn->weak || !lib || !lib->elf->verdef)
				continue;
			for (char **d = lib->elf->verdef; *d && !have; d++)
				have = strcmp(*d, vn->version) == 0;
			if (have)
				continue;
			EL_GROW(r->t->missing, r->t->nmissing + 1, cap);
			miss = &r->t->missing[r->t->nmissing++];
			miss->file = el_xstrdup(obj->path);
			miss->version = el_xstrdup(vn->version);
			miss->library = el_xstrdup(vn->file);
			miss->library_path = el_xstrdup(lib->path);
		}
	}
}

/* The interpreter: the file's PT_INTERP, else the machine's usual one (what runs `ld.so --list` on it). */
static void load_interp(resolver *r)
{
	const char *interp = r->t->main->elf->interp;
	found res = { NULL, NULL, NULL };

	if (!r->t->main->elf->dynamic)
		return; /* statically linked: ld.so has nothing to do */
	if (!interp)
		interp = r->machine == EM_X86_64 ? "/lib64/ld-linux-x86-64.so.2"
			 : r->machine == EM_386 ? "/lib/ld-linux.so.2"
			 : r->machine == EM_AARCH64 ? "/lib/ld-linux-aarch64.so.1" : NULL;
	if (interp && interp[0] == '/' && try_path(r, interp, &res) > 0 && !map_get(&r->reals, res.file->real))
		r->t->interp = new_obj(r, interp, res.file, EL_LD_INTERP, NULL);
	free(res.path);
}

static int open_main(resolver *r, envlock_ctx *ctx, const char *file, ld_file **out, char **path)
{
	char *real = NULL;
	int e = 0, rc;

	*path = file[0] == '/' ? el_xstrdup(file) : el_path_join(r->ld->cwd, file);
	if ((rc = el_root_realpath(r->ld->root, *path, &real, &e)) != 0)
		return el_error_set(ctx, rc == ENVLOCK_EIO ? rc : ENVLOCK_ENOTFOUND, "'%s': %s", file,
				    el_root_reason(rc, e));
	*out = file_at(r->ld, real);
	free(real);
	if ((*out)->bad && strcmp((*out)->bad, "cannot open shared object file") == 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': cannot be opened", file);
	if ((*out)->bad)
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not an ELF file (%s)", file, (*out)->bad);
	if ((*out)->elf_rc != 0)
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': its ELF tables point outside the file", file);
	return 0;
}

/* The objects of a tree already loaded in the process, by the names _dl_name_match_p knows them by. */
static void seed(resolver *r, const el_ld_tree *t)
{
	for (size_t i = 0; t && i < t->nobjs; i++) {
		el_ld_obj *o = t->objs[i];

		add_name(r, o->path, o);
		add_name(r, o->elf->soname, o);
		map_add(&r->reals, o->realpath, o);
		for (size_t k = 0; k < o->nneeded; k++)
			if (o->needed[k].obj)
				add_name(r, o->needed[k].name, o->needed[k].obj);
	}
}

int el_loader_resolve(el_ld_tree **out, envlock_ctx *ctx, el_loader *ld, const char *file,
		      const el_ld_opts *opts)
{
	static const el_ld_opts none = { NULL, NULL, NULL, NULL, NULL };
	resolver r;
	ld_file *f = NULL;
	char *path = NULL;
	int rc;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	r.ld = ld;
	r.opts = opts ? opts : &none;
	if ((rc = open_main(&r, ctx, file, &f, &path)) != 0) {
		free(path);
		return rc;
	}
	r.bits = f->bits;
	r.big = f->big;
	r.machine = f->machine;
	r.platform = r.opts->platform ? r.opts->platform : el_elf_machine_name(f->machine, f->bits, f->big);
	if (!r.platform)
		r.platform = "";
	choose_defaults(&r);
	r.t = el_xcalloc(1, sizeof(*r.t));
	r.t->defaults = r.defaults;
	r.t->main = new_obj(&r, path, f, EL_LD_MAIN, NULL);
	r.exe = r.opts->program ? r.opts->program->main : NULL;
	seed(&r, r.opts->program);
	for (const el_ld_tree *const *pre = r.opts->preloaded; pre && *pre; pre++)
		seed(&r, *pre);
	if (r.opts->library_path && *r.opts->library_path) {
		char *origin = origin_of(path);

		/* _dl_init_paths: LD_LIBRARY_PATH splits at ':' and ';', $ORIGIN is the program's */
		r.llp = split_path(&r, r.opts->library_path, ":;", origin);
		free(origin);
	}
	load_interp(&r);
	load_all(&r);
	{
		strmap seen = { NULL, NULL, 0, 0 };

		map_add(&seen, r.t->main->realpath, r.t->main);
		mark_expand(r.t, r.t->main, &seen);
		map_release(&seen, NULL);
	}
	check_versions(&r);
	r.t->not_found_names = el_strvec_detach(&r.not_found);
	map_release(&r.names, NULL);
	map_release(&r.reals, NULL);
	el_strv_free(r.llp);
	free((char *)r.lib);
	free(path);
	*out = r.t;
	return 0;
}

void el_ld_tree_free(el_ld_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nobjs; i++) {
		el_ld_obj *o = t->objs[i];

		for (size_t k = 0; k < o->nneeded; k++) {
			el_ld_need *n = &o->needed[k];

			free(n->name);
			free(n->error);
			el_strv_free(n->searched);
			for (size_t j = 0; j < n->nnear; j++) {
				free(n->near[j].path);
				free(n->near[j].soname);
				free(n->near[j].fix);
			}
			free(n->near);
		}
		free(o->needed);
		free(o->path);
		free(o->realpath);
		free(o);
	}
	for (size_t i = 0; i < t->nmissing; i++) {
		free(t->missing[i].file);
		free(t->missing[i].version);
		free(t->missing[i].library);
		free(t->missing[i].library_path);
	}
	free(t->missing);
	el_strv_free(t->not_found_names);
	free(t->objs);
	free(t);
}

/*
 * Near misses (el_loader_near): a need not found, and in a folder
 * searched for it the same library under another name. The common
 * case is cuDNN copied by hand with cp: libcudnn.so.8.2.1 is there,
 * its DT_SONAME is libcudnn.so.8, but the link of that name that
 * ldconfig or the package would have made is not.
 */

/* Matching names looked at for one need: a folder of hostile names costs no more. */
#define NEAR_LOOK 1024

/* One file considered for a need. */
typedef struct {
	const char *rdir;   /* the folder's real path (borrowed from the loader's dirs) */
	char *dir;          /* the folder as it was searched */
	char *name;
	char *real;         /* the file, in-root, links resolved */
	const ld_file *file;
	int group;          /* 0 its soname is the name wanted, 1 the same major version, 2 another */
	int pref;           /* among the names of one file: 0 its soname, 1 its own name, 2 a link */
	size_t order;       /* folders in search order, names sorted */
} near_cand;

typedef struct {
	el_loader *ld;
	const el_ld_tree *t;
	strmap lists;       /* real folder -> its names (char **) */
	char **cache_dirs;  /* the folders of the ld.so.cache entries, in cache order */
	el_strvec scanned;  /* the real folders ldconfig scans */
	strmap needs;       /* a need's name and folders searched (near_key) -> the first such need */
	int have_cache_dirs, have_scanned;
} near_state;

static void free_names(void *v)
{
	el_strv_free(v);
}

/* The length of name's stem, before the ".so" that ends it or is followed by '.'; 0: it has none. */
static size_t so_stem(const char *name)
{
	for (const char *p = strstr(name, ".so"); p; p = strstr(p + 1, ".so"))
		if (p[3] == '\0' || p[3] == '.')
			return (size_t)(p - name);
	return 0;
}

/* Is name the library want (stem length stem) under another name: "libcudnn.so.9" for "libcudnn.so.8"? */
static int same_library(const char *want, size_t stem, const char *name)
{
	return strcmp(name, want) != 0 && so_stem(name) == stem && strncmp(name, want, stem) == 0;
}

static int near_group(const char *want, const char *name, const char *soname)
{
	size_t len = strlen(want);

	if (soname && strcmp(soname, want) == 0)
		return 0;
	/* libcudnn.so.8.2.1 (or a soname libcudnn.so.8.2) where libcudnn.so.8 is wanted */
	if ((strncmp(name, want, len) == 0 && name[len] == '.') ||
	    (soname && strncmp(soname, want, len) == 0 && soname[len] == '.'))
		return 1;
	return 2;
}

/* Could the loader load f into t: a shared object of t's class, byte order and machine? */
static int near_loadable(const el_ld_tree *t, const ld_file *f)
{
	const el_elf_info *m = t->main->elf;

	return !f->bad && f->elf_rc == 0 && f->elf.type == ET_DYN && f->elf.bits == m->bits &&
	       f->elf.big_endian == m->big_endian && f->elf.machine == m->machine;
}

/* The sorted names of the real folder rdir, read once per call; empty when it cannot be listed. */
static char **near_names(near_state *s, const char *rdir)
{
	char **names = map_get(&s->lists, rdir);

	if (names)
		return names;
	if (el_root_list(s->ld->root, rdir, &names, NULL) != 0) {
		el_strv_free(names);
		names = el_xcalloc(1, sizeof(*names));
	}
	map_add(&s->lists, rdir, names);
	return names;
}

/* The folders the cache's entries are in: where ld.so found what the cache names. */
static char **near_cache_dirs(near_state *s)
{
	strmap seen = { NULL, NULL, 0, 0 };
	el_strvec v = EL_STRVEC_INIT;
	size_t n = el_ldcache_count(s->ld->cache);

	if (s->have_cache_dirs)
		return s->cache_dirs;
	s->have_cache_dirs = 1;
	for (size_t i = 0; s->ld->cache && i < n; i++) {
		const char *soname, *path;
		char *dir;

		el_ldcache_entry(s->ld->cache, i, &soname, &path);
		if (!path || path[0] != '/')
			continue;
		dir = el_path_dir(path);
		if (!map_get(&seen, dir)) {
			map_add(&seen, dir, &seen);
			el_strvec_push_owned(&v, dir);
		} else {
			free(dir);
		}
	}
	map_release(&seen, NULL);
	s->cache_dirs = el_strvec_detach(&v);
	return s->cache_dirs;
}

/* ld.so.conf read under the loader's root; each folder it names, by its real path, into the scanned set */
static int conf_read(const char *path, el_buf *b, void *arg)
{
	return el_root_read(((near_state *)arg)->ld->root, path, b, NULL);
}

static void conf_add(const char *dir, void *arg)
{
	near_state *s = arg;
	const char *real = dir_real(s->ld, dir);

	if (real && !el_strvec_has(&s->scanned, real))
		el_strvec_push(&s->scanned, real);
}

/*
 * Would `ldconfig` alone make the soname link for the file name in the
 * real folder rdir? It scans the trusted folders (the loader's default
 * ones) and those ld.so.conf lists, and takes only names that start
 * with "lib" or "ld-" and hold ".so" (ldconfig.c, search_dir).
 */
static int ldconfig_makes(near_state *s, const char *rdir, const char *name)
{
	if ((strncmp(name, "lib", 3) != 0 && strncmp(name, "ld-", 3) != 0) || !strstr(name, ".so"))
		return 0;
	if (!s->have_scanned) {
		s->have_scanned = 1;
		for (const char *const *d = s->t->defaults; d && *d; d++) {
			char *dir = el_xstrndup(*d, strlen(*d) > 1 ? strlen(*d) - 1 : 1);
			const char *real = dir_real(s->ld, dir);

			if (real && !el_strvec_has(&s->scanned, real))
				el_strvec_push(&s->scanned, real);
			free(dir);
		}
		el_ldconf_dirs(s->ld->root, "/etc/ld.so.conf", conf_read, conf_add, s);
	}
	return el_strvec_has(&s->scanned, rdir);
}

/* word as one shell word: as it is when no shell reads anything into it, else in single quotes. */
static char *shell_word(const char *word)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-/,:@%=";
	size_t len = strlen(word), quotes = 0;
	char *out, *o;

	if (len && strspn(word, plain) == len)
		return el_xstrdup(word);
	for (const char *p = word; *p; p++)
		quotes += *p == '\'';
	o = out = el_xcalloc(1, len + 3 * quotes + 3);
	*o++ = '\'';
	for (const char *p = word; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4); /* close, an escaped quote, open again */
			o += 4;
		} else {
			*o++ = *p;
		}
	}
	*o = '\'';
	return out;
}

/*
 * The command that makes the link want -> c's file in its folder, or
 * NULL when a file that is no link has that name there (the loader
 * passed over it; replacing a file is for the user to decide). A link
 * already there leads nowhere loadable: ln -sf replaces it.
 */
static char *near_fix(near_state *s, const near_cand *c, const char *want)
{
	char *link = el_path_join(c->dir, want), *ql, *qt, *fix;
	/* a name that starts with '-' is no option to ln */
	char *target = c->name[0] == '-' ? el_xasprintf("./%s", c->name) : el_xstrdup(c->name);
	struct stat st;
	int there = el_root_lstat_at(s->ld->root, c->rdir, want, &st) == 0;

	if (there && !S_ISLNK(st.st_mode)) {
		free(target);
		free(link);
		return NULL;
	}
	ql = shell_word(link);
	qt = shell_word(target);
	fix = el_xasprintf("ln -s%s %s %s && ldconfig", there ? "f" : "", qt, ql);
	free(qt);
	free(ql);
	free(target);
	free(link);
	return fix;
}

/* The files named as want in the folder dir (as searched), appended to *c. */
static void near_dir(near_state *s, const char *want, size_t stem, const char *dir, el_strvec *seen,
		     near_cand **c, size_t *nc, size_t *cap)
{
	const char *rdir = dir_real(s->ld, dir);
	char **names;

	/* the same folder by another path (/lib and /usr/lib on merged-/usr) is read once */
	if (!rdir || el_strvec_has(seen, rdir))
		return;
	el_strvec_push(seen, rdir);
	names = near_names(s, rdir);
	for (char **n = names; *n && *nc < NEAR_LOOK; n++) {
		char *real = NULL;
		const ld_file *f;
		near_cand *k;

		if (!same_library(want, stem, *n))
			continue;
		if (el_root_realpath_at(s->ld->root, rdir, *n, &real, NULL) != 0) {
			free(real);
			continue;
		}
		f = file_at(s->ld, real);
		if (!near_loadable(s->t, f)) {
			free(real);
			continue;
		}
		EL_GROW(*c, *nc + 1, *cap);
		k = &(*c)[*nc];
		k->rdir = rdir;
		k->dir = el_xstrdup(dir);
		k->name = el_xstrdup(*n);
		k->real = real;
		k->file = f;
		k->group = near_group(want, *n, f->elf.soname);
		k->pref = f->elf.soname && strcmp(*n, f->elf.soname) == 0 ? 0 : strcmp(*n, el_path_base(real)) == 0 ? 1 : 2;
		k->order = (*nc)++;
	}
}

static int near_cmp(const void *a, const void *b)
{
	const near_cand *x = a, *y = b;
	int c;

	if (x->group != y->group)
		return x->group - y->group;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Is c[i] the same file as a candidate named better (its soname, its own name) or found earlier? */
static int near_dup(const near_cand *c, size_t nc, size_t i)
{
	for (size_t j = 0; j < nc; j++)
		if (j != i && strcmp(c[j].real, c[i].real) == 0 &&
		    (c[j].pref < c[i].pref || (c[j].pref == c[i].pref && j < i)))
			return 1;
	return 0;
}

static void near_need(near_state *s, el_ld_need *need)
{
	size_t stem = so_stem(need->name), nc = 0, cap = 0, kept = 0;
	el_strvec seen = EL_STRVEC_INIT;
	near_cand *c = NULL;

	if (!stem)
		return;
	for (char **d = need->searched; *d; d++) {
		if (strcmp(*d, "ld.so.cache") != 0) {
			near_dir(s, need->name, stem, *d, &seen, &c, &nc, &cap);
			continue;
		}
		for (char **cd = near_cache_dirs(s); cd && *cd; cd++)
			near_dir(s, need->name, stem, *cd, &seen, &c, &nc, &cap);
	}
	el_strvec_release(&seen);
	/* one entry a file: drop the other names first, then sort what is left */
	for (size_t i = 0; i < nc; i++) {
		if (near_dup(c, nc, i))
			continue;
		if (kept != i) {
			near_cand tmp = c[kept];

			c[kept] = c[i];
			c[i] = tmp;
		}
		kept++;
	}
	if (kept > 1)
		qsort(c, kept, sizeof(*c), near_cmp);
	if (kept)
		need->near = el_xcalloc(kept < EL_LD_MAX_NEAR ? kept : EL_LD_MAX_NEAR, sizeof(*need->near));
	for (size_t i = 0; i < kept && i < EL_LD_MAX_NEAR; i++) {
		el_ld_near *m = &need->near[need->nnear++];

		m->path = el_path_join(c[i].dir, c[i].name);
		m->soname = c[i].file->elf.soname ? el_xstrdup(c[i].file->elf.soname) : NULL;
		if (c[i].group == 0 && (m->fix = near_fix(s, &c[i], need->name)) != NULL)
			m->ldconfig = ldconfig_makes(s, c[i].rdir, c[i].name);
	}
	for (size_t i = 0; i < nc; i++) {
		free(c[i].dir);
		free(c[i].name);
		free(c[i].real);
	}
	free(c);
}

/*
 * A need's name and the folders searched for it, each with its length
 * before it (a path may hold any byte but NUL), malloc'd; NULL past the
 * cap, and then the need is looked at on its own.
 */
static char *near_key(const el_ld_need *n)
{
	el_buf b = EL_BUF_INIT(1u << 24);
	int rc = el_buf_printf(&b, "%zu:%s", strlen(n->name), n->name);

	for (char **d = n->searched; *d && rc == 0; d++)
		rc = el_buf_printf(&b, "%zu:%s", strlen(*d), *d);
	if (rc != 0) {
		el_buf_release(&b);
		return NULL;
	}
	return el_buf_detach(&b);
}

static void near_copy(el_ld_need *to, const el_ld_need *from)
{
	to->near_again = 1;
	if (!from->nnear)
		return;
	to->near = el_xcalloc(from->nnear, sizeof(*to->near));
	for (size_t i = 0; i < from->nnear; i++) {
		const el_ld_near *m = &from->near[i];

		to->near[i].path = el_xstrdup(m->path);
		to->near[i].soname = m->soname ? el_xstrdup(m->soname) : NULL;
		to->near[i].fix = m->fix ? el_xstrdup(m->fix) : NULL;
		to->near[i].ldconfig = m->ldconfig;
	}
	to->nnear = from->nnear;
}

void el_loader_near(el_loader *ld, el_ld_tree *t)
{
	near_state s;

	memset(&s, 0, sizeof(s));
	s.ld = ld;
	s.t = t;
	for (size_t i = 0; i < t->nobjs; i++)
		for (size_t k = 0; k < t->objs[i]->nneeded; k++) {
			el_ld_need *n = &t->objs[i]->needed[k];
			const el_ld_need *first;
			char *key;

			if (n->obj || !n->searched || n->near || n->near_again)
				continue;
			/* a name many objects need is searched in the same folders: once is enough */
			key = near_key(n);
			if (key && (first = map_get(&s.needs, key)) != NULL) {
				near_copy(n, first);
			} else {
				near_need(&s, n);
				if (key)
					map_add(&s.needs, key, n);
			}
			free(key);
		}
	map_release(&s.needs, NULL);
	map_release(&s.lists, free_names);
	el_strv_free(s.cache_dirs);
	el_strvec_release(&s.scanned);
}
