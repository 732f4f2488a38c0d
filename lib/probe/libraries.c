/* el_probe_libraries: the shared libraries in a folder, their soname links and ld.so.cache entries. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock/model.h"
#include "probe.h"
#include "util/elf.h"
#include "util/error.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* libcudnn.so.8, libcudnn_ops.so.9, libcublasLt.so.12, and auditwheel's renamed copies libcudart-d0da41ae.so.11.0 */
bool el_probe_library_name(const char *name, const char *const prefixes[])
{
	for (const char *const *pre = prefixes; *pre; pre++)
		if (el_starts_with(name, *pre) &&
		    (name[strlen(*pre)] == '.' || name[strlen(*pre)] == '_' || name[strlen(*pre)] == '-' ||
		     (name[strlen(*pre)] >= 'A' && name[strlen(*pre)] <= 'Z')))
			return strstr(name, ".so") != NULL;
	return false;
}

/* Does the ld.so.cache entry for soname lead to the file at real? */
static const char *ldcache_state(el_probe *p, const char *soname, const char *real,
				 const char **listed)
{
	const char *path;
	char *resolved = NULL;
	const char *state;

	*listed = NULL;
	if (!p->ldcache)
		return "unknown";
	path = el_ldcache_lookup(p->ldcache, soname);
	if (!path)
		return "missing";
	*listed = path;
	if (el_root_realpath(&p->root, path, &resolved, NULL) != 0)
		state = "stale";	/* the cache names a file that is gone */
	else
		state = strcmp(resolved, real) == 0 ? "listed" : "other";
	free(resolved);
	return state;
}

void el_libs_found_release(el_libs_found *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].path);
		free(l->v[i].soname);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* A library written by one call, as it was written: its entry, for what the folder's others add to it. */
typedef struct {
	const char *name;
	char *soname;              /* NULL: not read */
	char sha256[EL_SHA256_HEX];
	bool hashed;
	cJSON *entry;
} lib_written;

/* Do a and b have the same soname and content? */
static bool same_library(const lib_written *a, const lib_written *b)
{
	return a->hashed && b->hashed && a->soname && b->soname && strcmp(a->sha256, b->sha256) == 0 &&
	       strcmp(a->soname, b->soname) == 0;
}

/*
 * A library copied with cp instead of cp -P: its soname link (libcudnn.so.8)
 * and development link (libcudnn.so) become plain files with the library's
 * content, which ldconfig(8) only answers with "libcudnn.so.8 is not a
 * symbolic link". Of the files of one soname and content in a folder, the
 * longest name (libcudnn.so.8.9.7) is the library; the others are its copies.
 */
static void mark_copies(const lib_written *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const lib_written *a = &w[i], *real = a;

		for (size_t j = 0; j < n; j++) {
			const lib_written *b = &w[j];
			const char *nb = b->name, *nr = real->name;

			if (b != a && same_library(a, b) &&
			    (strlen(nb) > strlen(nr) || (strlen(nb) == strlen(nr) && strcmp(nb, nr) > 0)))
				real = b;
		}
		if (real == a)
			continue;
		el_jset_str(a->entry, "copy_of", real->name);
		if (strcmp(a->name, a->soname) == 0)
			el_jset_str(real->entry, "soname_link", "copy");
	}
}

/*
 * One entry of the folder, looked at once: the scan is linear in the
 * folder (issue 18 measured 2,270 syscalls for 20 libraries when every
 * library re-resolved every other name from / component by component).
 */
typedef struct {
	const char *name;
	char *path;
	struct stat st;
	bool seen;       /* lstat answered */
	char *stored;    /* a link's text */
	char *real;      /* a link's target, resolved from the folder */
	int real_err;
} lib_entry;

/* Where name in the folder leads: the entry's answer, else resolved now (malloc'd), or NULL. */
static char *resolve_in(el_probe *p, const char *rdir, const lib_entry *e, size_t n, const char *name)
{
	char *out = NULL;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].name, name)) {
			if (!e[i].seen)
				return NULL;
			if (S_ISLNK(e[i].st.st_mode))
				return e[i].real ? el_xstrdup(e[i].real) : NULL;
			return el_xstrdup(e[i].path);
		}
	return el_root_realpath_at(&p->root, rdir, name, &out, NULL) == 0 ? out : NULL;
}

static void library_entry(el_probe *p, cJSON *arr, const char *rdir, lib_entry *e, size_t n, size_t k,
			  lib_written *w)
{
	lib_entry *x = &e[k];
	const char *path = x->path, *listed, *state, *soname;
	char *host;
	el_elf_info elf;
	cJSON *lib, *links;
	uint64_t size = 0;
	int err = 0, rc, fd;

	lib = el_jpush_obj(arr);
	w->name = x->name;
	w->entry = lib;
	el_jset_str(lib, "name", x->name);
	el_jset_str(lib, "path", path);
	host = el_root_host(&p->root, path);
	fd = open(host, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && el_elf_read(fd, &elf) == 0) {
		el_jset_str(lib, "soname", elf.soname);
		w->soname = elf.soname ? el_xstrdup(elf.soname) : NULL;
		el_elf_info_release(&elf);
	} else {
		el_probe_warn(p, "'%s': %s", path, fd < 0 ? "cannot be opened" : "not an ELF library");
	}
	if (fd >= 0)
		close(fd);
	rc = el_hashcache_file(p->hashes, host, w->sha256, &size, &err);
	if (rc == 0) {
		w->hashed = true;
		el_jset_str(lib, "sha256", w->sha256);
		el_jset_int(lib, "size", (long long)size);
	} else {
		el_probe_warn(p, "'%s': %s", path,
			      rc == ENVLOCK_ERROR ? "changed while being hashed" : el_root_reason(rc, err));
	}
	free(host);

	/* every link in this folder that resolves to the file */
	links = el_jset_arr(lib, "links");
	for (size_t i = 0; i < n; i++)
		if (i != k && e[i].stored && e[i].real && !strcmp(e[i].real, path)) {
			cJSON *l = el_jpush_obj(links);

			el_jset_str(l, "name", e[i].name);
			el_jset_str(l, "target", e[i].stored);
		}

	/* the link the loader looks for: soname -> this file */
	soname = w->soname;
	if (soname && strcmp(soname, x->name) == 0) {
		el_jset_str(lib, "soname_link", "self");
	} else if (soname) {
		char *sreal = resolve_in(p, rdir, e, n, soname);

		if (!sreal) {
			char *spath = el_path_join(rdir, soname);

			el_jset_str(lib, "soname_link", "missing");
			el_probe_warn(p, "'%s': the loader looks for '%s', which is missing "
				      "(fix: ln -s %s %s && ldconfig)",
				      path, soname, x->name, spath);
			free(spath);
		} else {
			el_jset_str(lib, "soname_link", strcmp(sreal, path) == 0 ? "ok" : "other");
		}
		free(sreal);
	}
	if (soname) {
		state = ldcache_state(p, soname, path, &listed);
		el_jset_str(lib, "ld_cache", state);
		if (listed && strcmp(state, "listed") != 0)
			el_jset_str(lib, "ld_cache_path", listed);
	}
}

int el_probe_libraries(el_probe *p, cJSON *arr, const char *dir,
		       const char *const prefixes[], el_libs_found *found)
{
	char *rdir = NULL, **names = NULL;
	lib_entry *e = NULL;
	lib_written *w = NULL;
	size_t n = 0, cap = 0, added = 0;

	if (el_root_realpath(&p->root, dir, &rdir, NULL) != 0 ||
	    el_root_list(&p->root, rdir, &names, NULL) != 0)
		goto done;
	/* the folder's library names, each looked at once */
	for (char **nm = names; *nm; nm++) {
		lib_entry *x;

		if (!el_probe_library_name(*nm, prefixes))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			e = el_xrealloc(e, cap * sizeof(*e));
		}
		x = &e[n++];
		memset(x, 0, sizeof(*x));
		x->name = *nm;
		x->path = el_path_join(rdir, *nm);
		x->seen = el_root_lstat(&p->root, x->path, &x->st) == 0;
		if (x->seen && S_ISLNK(x->st.st_mode)) {
			el_root_readlink(&p->root, x->path, &x->stored);
			if (el_root_realpath_at(&p->root, rdir, *nm, &x->real, &x->real_err) != 0)
				x->real = NULL;
		}
	}
	for (size_t k = 0; k < n; k++) {
		lib_entry *x = &e[k];

		if (!x->seen || S_ISLNK(x->st.st_mode)) {
			/* links are reported with the file they lead to; a dangling one here */
			if (x->seen && !x->real)
				el_probe_warn(p, "'%s': %s symlink to '%s'", x->path,
					      x->real_err == ELOOP ? "looping" : "dangling", x->stored ? x->stored : "?");
			continue;
		}
		if (!S_ISREG(x->st.st_mode))
			continue;
		if (!w)
			w = el_xcalloc(n, sizeof(*w));
		library_entry(p, arr, rdir, e, n, k, &w[added]);
		if (found) {
			EL_GROW(found->v, found->n + 1, found->cap);
			found->v[found->n++] = (el_lib_found){ el_xstrdup(x->name), el_xstrdup(x->path),
							       w[added].soname ? el_xstrdup(w[added].soname) : NULL };
		}
		added++;
	}
	mark_copies(w, added);
done:
	for (size_t k = 0; k < added; k++)
		free(w[k].soname);
	free(w);
	for (size_t k = 0; k < n; k++) {
		free(e[k].path);
		free(e[k].stored);
		free(e[k].real);
	}
	free(e);
	el_strv_free(names);
	free(rdir);
	return (int)added;
}
