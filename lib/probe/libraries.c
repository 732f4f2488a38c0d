/* el_probe_libraries: the shared libraries in a folder, their soname links and ld.so.cache entries. */
#include <errno.h>
#include <fcntl.h>
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

/* Do a and b have the same soname and content? */
static bool same_library(const cJSON *a, const cJSON *b)
{
	const char *sa = el_jget_str(a, "sha256"), *sb = el_jget_str(b, "sha256");
	const char *na = el_jget_str(a, "soname"), *nb = el_jget_str(b, "soname");

	return sa && sb && na && nb && strcmp(sa, sb) == 0 && strcmp(na, nb) == 0;
}

/*
 * A library copied with cp instead of cp -P: its soname link (libcudnn.so.8)
 * and development link (libcudnn.so) become plain files with the library's
 * content, which ldconfig(8) only answers with "libcudnn.so.8 is not a
 * symbolic link". Of the files of one soname and content in a folder, the
 * longest name (libcudnn.so.8.9.7) is the library; the others are its copies.
 */
static void mark_copies(cJSON *arr, int start)
{
	int n = cJSON_GetArraySize(arr);

	for (int i = start; i < n; i++) {
		cJSON *a = cJSON_GetArrayItem(arr, i), *real = a;

		for (int j = start; j < n; j++) {
			cJSON *b = cJSON_GetArrayItem(arr, j);
			const char *nb = el_jget_str(b, "name"), *nr = el_jget_str(real, "name");

			if (b != a && same_library(a, b) &&
			    (strlen(nb) > strlen(nr) || (strlen(nb) == strlen(nr) && strcmp(nb, nr) > 0)))
				real = b;
		}
		if (real == a)
			continue;
		el_jset_str(a, "copy_of", el_jget_str(real, "name"));
		if (strcmp(el_jget_str(a, "name"), el_jget_str(a, "soname")) == 0)
			el_jset_str(real, "soname_link", "copy");
	}
}

int el_probe_libraries(el_probe *p, cJSON *arr, const char *dir,
		       const char *const prefixes[])
{
	char *rdir = NULL, **names = NULL;
	int added = 0, start = cJSON_GetArraySize(arr);

	if (el_root_realpath(&p->root, dir, &rdir, NULL) != 0 ||
	    el_root_list(&p->root, rdir, &names, NULL) != 0)
		goto done;
	for (char **n = names; *n; n++) {
		char *path, *host, *target = NULL;
		struct stat st;
		el_elf_info elf;
		cJSON *lib, *links;
		char hex[EL_SHA256_HEX];
		uint64_t size = 0;
		int e = 0, rc, fd;
		const char *listed, *state;

		if (!el_probe_library_name(*n, prefixes))
			continue;
		path = el_path_join(rdir, *n);
		if (el_root_lstat(&p->root, path, &st) != 0 || S_ISLNK(st.st_mode)) {
			/* links are reported with the file they lead to; a dangling one here */
			if (S_ISLNK(st.st_mode) && el_root_realpath(&p->root, path, &target, &e) != 0) {
				char *stored = NULL;

				el_root_readlink(&p->root, path, &stored);
				el_probe_warn(p, "'%s': %s symlink to '%s'", path,
					      e == ELOOP ? "looping" : "dangling", stored ? stored : "?");
				free(stored);
			}
			free(target);
			free(path);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		lib = el_jpush_obj(arr);
		added++;
		el_jset_str(lib, "name", *n);
		el_jset_str(lib, "path", path);
		host = el_root_host(&p->root, path);
		fd = open(host, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && el_elf_read(fd, &elf) == 0) {
			el_jset_str(lib, "soname", elf.soname);
			el_elf_info_release(&elf);
		} else {
			el_probe_warn(p, "'%s': %s", path, fd < 0 ? "cannot be opened" : "not an ELF library");
		}
		if (fd >= 0)
			close(fd);
		rc = el_hashcache_file(p->hashes, host, hex, &size, &e);
		if (rc == 0) {
			el_jset_str(lib, "sha256", hex);
			el_jset_int(lib, "size", (long long)size);
		} else {
			el_probe_warn(p, "'%s': %s", path,
				      rc == ENVLOCK_ERROR ? "changed while being hashed"
							  : el_root_reason(rc, e));
		}
		free(host);

		/* every link in this directory that resolves to the file */
		links = el_jset_arr(lib, "links");
		for (char **m = names; *m; m++) {
			char *lpath, *stored = NULL, *real = NULL;

			if (m == n || !el_probe_library_name(*m, prefixes))
				continue;
			lpath = el_path_join(rdir, *m);
			if (el_root_readlink(&p->root, lpath, &stored) == 0 &&
			    el_root_realpath(&p->root, lpath, &real, NULL) == 0 &&
			    strcmp(real, path) == 0) {
				cJSON *l = el_jpush_obj(links);

				el_jset_str(l, "name", *m);
				el_jset_str(l, "target", stored);
			}
			free(stored);
			free(real);
			free(lpath);
		}

		/* the link the loader looks for: soname -> this file */
		{
			const char *soname = el_jget_str(lib, "soname");

			if (soname && strcmp(soname, *n) == 0) {
				el_jset_str(lib, "soname_link", "self");
			} else if (soname) {
				char *spath = el_path_join(rdir, soname), *sreal = NULL;

				if (el_root_realpath(&p->root, spath, &sreal, NULL) != 0) {
					el_jset_str(lib, "soname_link", "missing");
					el_probe_warn(p, "'%s': the loader looks for '%s', which is missing "
						      "(fix: ln -s %s %s && ldconfig)",
						      path, soname, *n, spath);
				} else
					el_jset_str(lib, "soname_link",
						    strcmp(sreal, path) == 0 ? "ok" : "other");
				free(spath);
				free(sreal);
			}
			if (soname) {
				state = ldcache_state(p, soname, path, &listed);
				el_jset_str(lib, "ld_cache", state);
				if (listed && strcmp(state, "listed") != 0)
					el_jset_str(lib, "ld_cache_path", listed);
			}
		}
		free(path);
	}
	mark_copies(arr, start);
done:
	el_strv_free(names);
	free(rdir);
	return added;
}
