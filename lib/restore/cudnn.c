/*
 * Restore step 3: cuDNN. The locked headers and libraries in their locked
 * folders (unpacked from NVIDIA's archive with --cudnn-archive, each
 * library checked against the digest the lock recorded), every soname
 * link (libcudnn.so.8 -> libcudnn.so.8.2.1, and the links the lock had),
 * the library folder in an ld.so.conf.d entry, then `ldconfig` (-r ROOT
 * under --root) and a check that the loader cache lists each soname.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle/bundle.h"
#include "lock/model.h"
#include "plan.h"
#include "probe/probe.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_CUDNN_MAX_FILE (8ull << 30)  /* one library: cuDNN 9's largest is ~1 GiB */
#define EL_CUDNN_MAX_TOTAL (32ull << 30)
#define EL_LDCACHE_MAX (64u << 20)

typedef struct {
	char *lib_dir;   /* host folders for the archive's library and header files */
	char *inc_dir;
	char **names;    /* library file names the lock has a digest for ... */
	char **digests;  /* ... and those digests */
	char **want;     /* every file name the lock needs from the archive */
} unpack_job;

static void unpack_free(void *p)
{
	unpack_job *j = p;

	if (!j)
		return;
	free(j->lib_dir);
	free(j->inc_dir);
	el_strv_free(j->names);
	el_strv_free(j->digests);
	el_strv_free(j->want);
	free(j);
}

static bool strv_has(char **v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/*
 * Where an archive entry goes: "<top>/include/cudnn.h" -> include, name
 * "cudnn.h"; "<top>/lib64/libcudnn.so.8.2.1" or "<top>/lib/..." -> lib.
 * Anything else (LICENSE, nested folders) is not for us: NULL.
 */
static const char *entry_target(const char *path, bool *is_lib)
{
	const char *slash = strrchr(path, '/'), *name, *dir_end, *dir;

	if (!slash || !slash[1])
		return NULL;
	name = slash + 1;
	dir_end = slash;
	dir = dir_end;
	while (dir > path && dir[-1] != '/')
		dir--;
	if ((size_t)(dir_end - dir) == 7 && strncmp(dir, "include", 7) == 0)
		*is_lib = false;
	else if (((size_t)(dir_end - dir) == 3 && strncmp(dir, "lib", 3) == 0) ||
		 ((size_t)(dir_end - dir) == 5 && strncmp(dir, "lib64", 5) == 0))
		*is_lib = true;
	else
		return NULL;
	if (el_bad_name(name))
		return NULL;
	return name;
}

/* Copy the entry's data to a temporary file in dir, hashing it; returns the fd's path. */
static int copy_entry(struct archive *a, el_item *it, const char *dir, const char *name,
		      char hex[EL_SHA256_HEX], char **tmp_out, unsigned long long *total)
{
	char *tmp = el_xasprintf("%s/.%s.envlock-XXXXXX", dir, name);
	el_sha256 *h = el_sha256_begin();
	unsigned long long size = 0;
	const void *block;
	size_t len;
	la_int64_t off;
	int fd = mkstemp(tmp), r;

	if (fd < 0) {
		el_item_fail(it, "'%s': %s", dir, el_strerror(errno));
		goto fail;
	}
	while ((r = archive_read_data_block(a, &block, &len, &off)) == ARCHIVE_OK) {
		size += len;
		*total += len;
		if (size > EL_CUDNN_MAX_FILE || *total > EL_CUDNN_MAX_TOTAL) {
			el_item_fail(it, "'%s': '%s' is larger than envlock accepts from a cuDNN archive",
				     it->target, name);
			goto fail;
		}
		if ((la_int64_t)lseek(fd, 0, SEEK_CUR) != off && lseek(fd, off, SEEK_SET) < 0) {
			el_item_fail(it, "'%s': %s", tmp, el_strerror(errno));
			goto fail;
		}
		if (el_write_all(fd, block, len) != 0) {
			el_item_fail(it, "'%s': %s", tmp, el_strerror(errno));
			goto fail;
		}
		el_sha256_update(h, block, len);
	}
	if (r != ARCHIVE_EOF) {
		el_item_fail(it, "'%s': %s", it->target, el_archive_reason(a));
		goto fail;
	}
	if (fchmod(fd, name[0] == 'l' ? 0755 : 0644) != 0 || fsync(fd) != 0) {
		el_item_fail(it, "'%s': %s", tmp, el_strerror(errno));
		goto fail;
	}
	close(fd);
	el_sha256_end(h, hex);
	*tmp_out = tmp;
	return 0;
fail:
	el_sha256_abort(h);
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return -1;
}

static int unpack_archive(el_item *it, el_apply *ap)
{
	unpack_job *j = it->extra;
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	unsigned long long total = 0;
	char **got = el_strv_new(NULL);
	int rc = -1, r;

	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, it->target, 1 << 20) != ARCHIVE_OK) {
		el_item_fail(it, "'%s': %s", it->target, el_archive_reason(a));
		goto done;
	}
	if (el_mkdir_p(j->lib_dir, 0755) != 0 || el_mkdir_p(j->inc_dir, 0755) != 0) {
		el_item_fail(it, "'%s': %s", j->lib_dir, el_strerror(errno));
		goto done;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *path = archive_entry_pathname(e), *name;
		char hex[EL_SHA256_HEX], *tmp = NULL, *final;
		bool is_lib = false;
		struct stat st;

		if (!path || archive_entry_filetype(e) != AE_IFREG)
			continue; /* links are made from the lock, not taken from the archive */
		name = entry_target(path, &is_lib);
		if (!name || !strv_has(j->want, name))
			continue;
		if (copy_entry(a, it, is_lib ? j->lib_dir : j->inc_dir, name, hex, &tmp, &total) != 0)
			goto done;
		for (size_t i = 0; j->names[i]; i++) {
			if (strcmp(j->names[i], name) == 0 && strcmp(j->digests[i], hex) != 0) {
				el_item_fail(it, "'%s': %s has sha256 %.12s..., the lock recorded %.12s...; not installed",
					     it->target, name, hex, j->digests[i]);
				unlink(tmp);
				free(tmp);
				goto done;
			}
		}
		final = el_xasprintf("%s/%s", is_lib ? j->lib_dir : j->inc_dir, name);
		if (lstat(final, &st) == 0 && el_apply_aside(ap, it, final, NULL) != 0) {
			unlink(tmp);
			free(tmp);
			free(final);
			goto done;
		}
		if (rename(tmp, final) != 0) {
			el_item_fail(it, "'%s': %s", final, el_strerror(errno));
			unlink(tmp);
			free(tmp);
			free(final);
			goto done;
		}
		el_apply_log(ap, "installed '%s' (sha256 %s) from '%s'", final, hex, path);
		el_strv_push(&got, name);
		free(tmp);
		free(final);
	}
	if (r != ARCHIVE_EOF) {
		el_item_fail(it, "'%s': %s", it->target, el_archive_reason(a));
		goto done;
	}
	for (char **w = j->want; *w; w++) {
		if (!strv_has(got, *w)) {
			el_item_fail(it, "'%s': has no %s (is it cuDNN for this CUDA release?)", it->target, *w);
			goto done;
		}
	}
	rc = 0;
done:
	archive_read_free(a);
	el_strv_free(got);
	return rc;
}

/* The loader cache of the root, parsed; NULL when missing or unreadable. */
static el_ldcache *read_ldcache(const el_root *root)
{
	el_buf b = EL_BUF_INIT(EL_LDCACHE_MAX);
	el_ldcache *c = NULL;
	int e = 0;

	if (el_root_read(root, "/etc/ld.so.cache", &b, &e) == 0)
		el_ldcache_parse(&c, b.data, b.len);
	el_buf_release(&b);
	return c;
}

typedef struct {
	el_root root;     /* a copy of the plan's root prefix */
	char **sonames;   /* soname, then the in-root path the cache must give, pairwise */
} cache_job;

static void cache_free(void *p)
{
	cache_job *j = p;

	if (!j)
		return;
	el_root_release(&j->root);
	el_strv_free(j->sonames);
	free(j);
}

/* The cache entries in j that are missing or lead elsewhere, as one line (malloc'd), or NULL. */
static char *cache_missing(const el_root *root, char **pairs)
{
	el_ldcache *c = read_ldcache(root);
	el_buf out = EL_BUF_INIT(4096);

	for (size_t i = 0; pairs[i] && pairs[i + 1]; i += 2) {
		const char *have = el_ldcache_lookup(c, pairs[i]);
		char *a = NULL, *b = NULL;
		int e = 0;
		bool same = have && strcmp(have, pairs[i + 1]) == 0;

		/* the same file through another folder name counts */
		if (have && !same && el_root_realpath(root, have, &a, &e) == 0 &&
		    el_root_realpath(root, pairs[i + 1], &b, &e) == 0)
			same = strcmp(a, b) == 0;
		free(a);
		free(b);
		if (!same)
			el_buf_printf(&out, "%s%s", out.len ? ", " : "", pairs[i]);
	}
	el_ldcache_free(c);
	return out.len ? el_buf_detach(&out) : (el_buf_release(&out), NULL);
}

static int check_ldcache(el_item *it, el_apply *ap)
{
	cache_job *j = it->extra;
	char *missing = cache_missing(&j->root, j->sonames);

	if (missing) {
		el_item_fail(it, "after ldconfig the loader cache still lacks %s", missing);
		free(missing);
		return -1;
	}
	el_apply_log(ap, "the loader cache lists every locked cuDNN soname");
	return 0;
}

static const char *ldconfig_path(void)
{
	static const char *const tries[] = { "/sbin/ldconfig", "/usr/sbin/ldconfig" };

	for (size_t i = 0; i < 2; i++)
		if (access(tries[i], X_OK) == 0)
			return tries[i];
	return "ldconfig";
}

/* Is dir (in-root) searched by the loader: a trusted folder or an ld.so.conf entry? */
static bool dir_configured(envlock_restore *r, const char *dir)
{
	static const char *const trusted[] = { "/lib", "/usr/lib", "/lib64", "/usr/lib64" };
	char *real = NULL;
	const cJSON *entry;
	bool found = false;
	int e = 0;

	el_root_realpath(&r->root, dir, &real, &e);
	for (size_t i = 0; i < 4 && !found; i++)
		found = strcmp(dir, trusted[i]) == 0;
	cJSON_ArrayForEach(entry, el_jget(el_jget(r->live->doc, "system"), "ld_so_conf")) {
		char *other = NULL;

		if (found || !cJSON_IsString(entry))
			continue;
		found = strcmp(entry->valuestring, dir) == 0;
		if (!found && real && el_root_realpath(&r->root, entry->valuestring, &other, &e) == 0)
			found = strcmp(other, real) == 0;
		free(other);
	}
	free(real);
	return found;
}

/* Does /etc/ld.so.conf (in-root) include /etc/ld.so.conf.d? 1 yes, 0 no, -1 no such file. */
static int conf_includes_d(envlock_restore *r)
{
	el_buf b = EL_BUF_INIT(1u << 20);
	const char *pos, *end, *line;
	size_t len;
	int e = 0, found = 0;

	if (el_root_read(&r->root, "/etc/ld.so.conf", &b, &e) != 0) {
		el_buf_release(&b);
		return -1;
	}
	pos = b.data;
	end = b.data + b.len;
	while (el_next_line(&pos, end, &line, &len)) {
		el_trim(&line, &len);
		if (len > 8 && strncmp(line, "include", 7) == 0 && memmem(line, len, "/etc/ld.so.conf.d/", 18))
			found = 1;
	}
	el_buf_release(&b);
	return found;
}

void el_plan_cudnn(envlock_restore *r, el_step *s)
{
	const cJSON *cudnn = el_jget(r->lock, "cudnn"), *lib, *hdr, *link;
	const char *version = el_jget_str(cudnn, "version");
	el_buf missing = EL_BUF_INIT(1u << 20);
	unpack_job *job = el_xcalloc(1, sizeof(*job));
	char **dirs = el_strv_new(NULL), **cache = el_strv_new(NULL), *lib_dir = NULL, *inc_dir = NULL;
	size_t n_dirs = 0, links_ok = 0, files_ok = 0, changes = 0;
	el_item *it;

	job->names = el_strv_new(NULL);
	job->digests = el_strv_new(NULL);
	job->want = el_strv_new(NULL);
	if (!cJSON_GetArraySize(el_jget(cudnn, "libraries"))) {
		el_step_add(s, ENVLOCK_ITEM_OK, "no cuDNN libraries locked");
		goto done;
	}
	/* headers */
	cJSON_ArrayForEach(hdr, el_jget(cudnn, "headers")) {
		const char *path = el_jget_str(hdr, "path");
		struct stat st;

		if (!path || el_bad_abs_path(path))
			continue;
		if (!inc_dir)
			inc_dir = el_path_dir(path);
		if (el_root_stat(&r->root, path, &st) == 0 && S_ISREG(st.st_mode)) {
			files_ok++;
			continue;
		}
		el_buf_printf(&missing, "%s%s", missing.len ? ", " : "", el_path_base(path));
		el_strv_push(&job->want, el_path_base(path));
	}
	/* library files, then their links */
	cJSON_ArrayForEach(lib, el_jget(cudnn, "libraries")) {
		const char *path = el_jget_str(lib, "path"), *name = el_jget_str(lib, "name");
		const char *soname = el_jget_str(lib, "soname"), *sha = el_jget_str(lib, "sha256");
		char *dir, *host, hex[EL_SHA256_HEX];
		uint64_t size;
		int e = 0;

		if (!path || !name)
			continue;
		dir = el_path_dir(path);
		if (!lib_dir)
			lib_dir = el_xstrdup(dir);
		if (!strv_has(dirs, dir))
			el_strv_push(&dirs, dir), n_dirs++;
		host = el_restore_host_real(&r->root, path);
		if (el_hashcache_file(r->hashes, host, hex, &size, &e) == 0 && (!sha || strcmp(hex, sha) == 0)) {
			files_ok++;
		} else {
			el_buf_printf(&missing, "%s%s%s", missing.len ? ", " : "", name,
				      e == 0 && access(host, F_OK) == 0 ? " (different)" : "");
			el_strv_push(&job->want, name);
			if (sha) {
				el_strv_push(&job->names, name);
				el_strv_push(&job->digests, sha);
			}
		}
		free(host);
		/* links: the soname link, then every other link the lock had */
		{
			char **pairs = el_strv_new(NULL);

			if (soname && strcmp(soname, name) != 0) {
				el_strv_push(&pairs, soname);
				el_strv_push(&pairs, name);
			}
			cJSON_ArrayForEach(link, el_jget(lib, "links")) {
				const char *lname = el_jget_str(link, "name"), *target = el_jget_str(link, "target");

				if (lname && target && !(soname && strcmp(lname, soname) == 0)) {
					el_strv_push(&pairs, lname);
					el_strv_push(&pairs, target);
				}
			}
			for (size_t i = 0; pairs[i]; i += 2) {
				char *abs = el_path_join(dir, pairs[i]), *have = NULL;

				if (el_root_readlink(&r->root, abs, &have) == 0 && strcmp(have, pairs[i + 1]) == 0) {
					links_ok++;
				} else {
					it = el_step_add(s, ENVLOCK_ITEM_DO, "link %s -> %s in %s", pairs[i], pairs[i + 1], dir);
					if (have)
						el_item_note(it, "now -> %s (moved aside first)", have);
					it->path = el_restore_host(&r->root, abs);
					it->target = el_xstrdup(pairs[i + 1]);
					it->run = el_apply_symlink;
					changes++;
				}
				free(have);
				free(abs);
			}
			el_strv_free(pairs);
		}
		if (soname && !strcmp(el_jget_str(lib, "ld_cache") ?: "", "listed")) {
			char *want = el_path_join(dir, soname);

			el_strv_push(&cache, soname);
			el_strv_push(&cache, want);
			free(want);
		}
		free(dir);
	}
	if (missing.len) {
		if (r->opts.cudnn_archive) {
			it = el_step_add(s, ENVLOCK_ITEM_DO, "unpack cuDNN %s from %s: %s", version ? version : "",
					 r->opts.cudnn_archive, el_buf_cstr(&missing));
			it->target = el_xstrdup(r->opts.cudnn_archive);
			job->lib_dir = el_restore_host(&r->root, lib_dir);
			job->inc_dir = el_restore_host(&r->root, inc_dir ? inc_dir : lib_dir);
			it->extra = job;
			it->free_extra = unpack_free;
			it->run = unpack_archive;
			job = NULL;
			/* the files must be in place before their links: move this item first */
			if (s->n > 1) {
				el_item tmp = s->items[s->n - 1];

				memmove(&s->items[1], &s->items[0], (s->n - 1) * sizeof(*s->items));
				s->items[0] = tmp;
			}
			changes++;
		} else {
			/* links, loader entries and cache wait for the files: only the instruction */
			for (size_t k = 0; k < s->n; k++) {
				free(s->items[k].text);
				free(s->items[k].note);
				free(s->items[k].path);
				free(s->items[k].target);
			}
			s->n = 0;
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "cuDNN %s files missing from %s: %s",
					 version ? version : "", lib_dir, el_buf_cstr(&missing));
			el_item_note(it, "download cuDNN %s for this CUDA release from NVIDIA (https://developer.nvidia.com/rdp/cudnn-archive) and rerun with --cudnn-archive FILE",
				     version ? version : "(the locked version)");
			goto done;
		}
	} else {
		el_step_add(s, ENVLOCK_ITEM_OK, "cuDNN %s: %zu files as locked", version ? version : "", files_ok);
	}
	if (links_ok)
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu soname links in place", links_ok);
	/* every library folder searched by the loader */
	for (size_t i = 0; i < n_dirs; i++) {
		char *conf, *host;

		if (dir_configured(r, dirs[i]))
			continue;
		conf = el_xasprintf("%s\n", dirs[i]);
		host = el_restore_host(&r->root, "/etc/ld.so.conf.d/envlock-cudnn.conf");
		it = el_step_add(s, ENVLOCK_ITEM_DO, "add %s to /etc/ld.so.conf.d/envlock-cudnn.conf", dirs[i]);
		it->path = host;
		it->data = conf;
		it->data_len = strlen(conf);
		it->run = el_apply_write;
		changes++;
		switch (conf_includes_d(r)) {
		case -1:
			it = el_step_add(s, ENVLOCK_ITEM_DO, "create /etc/ld.so.conf including /etc/ld.so.conf.d/*.conf");
			it->path = el_restore_host(&r->root, "/etc/ld.so.conf");
			it->data = el_xstrdup("include /etc/ld.so.conf.d/*.conf\n");
			it->data_len = strlen(it->data);
			it->run = el_apply_write;
			break;
		case 0:
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "/etc/ld.so.conf does not include /etc/ld.so.conf.d");
			el_item_note(it, "add the line 'include /etc/ld.so.conf.d/*.conf' to /etc/ld.so.conf");
			break;
		}
		break; /* one entry file lists them all: cuDNN lives in one folder */
	}
	/* the loader cache */
	{
		char *stale = cache[0] ? cache_missing(&r->root, cache) : NULL;

		if (changes || stale) {
			cache_job *cj = el_xcalloc(1, sizeof(*cj));

			it = el_step_add(s, ENVLOCK_ITEM_DO, "refresh the loader cache (ldconfig%s%s)",
					 r->root.live ? "" : " -r ", r->root.live ? "" : r->root.prefix);
			if (stale && !changes)
				el_item_note(it, "the cache lacks %s", stale);
			it->argv = el_strv_new(ldconfig_path(), NULL);
			if (!r->root.live) {
				el_strv_push(&it->argv, "-r");
				el_strv_push(&it->argv, r->root.prefix);
			}
			it->run = el_apply_run_argv;
			if (cache[0]) {
				it = el_step_add(s, ENVLOCK_ITEM_DO, "check that the loader cache lists every locked cuDNN soname");
				el_root_init(&cj->root, NULL, r->root.live ? NULL : r->root.prefix);
				cj->sonames = cache;
				cache = NULL;
				it->extra = cj;
				it->free_extra = cache_free;
				it->run = check_ldcache;
			} else {
				free(cj);
			}
		} else if (cache[0]) {
			el_step_add(s, ENVLOCK_ITEM_OK, "the loader cache lists every locked cuDNN soname");
		}
		free(stale);
	}
done:
	unpack_free(job);
	el_strv_free(dirs);
	el_strv_free(cache);
	free(lib_dir);
	free(inc_dir);
	el_buf_release(&missing);
}

/*
 * What only the cuDNN step hands on, beyond the lock's shared checks
 * (lock/untrusted.h): the files it unpacks and the links it makes. A link
 * must point at a file in its own folder, so /etc/alternatives targets
 * (Debian's) are refused here, and only here: export writes no link.
 */
int el_restore_check_cudnn(envlock_ctx *ctx, const cJSON *lock)
{
	const cJSON *sec, *arr, *el, *sub, *sub_el;
	int failed = 0, i, j;

	/* cuDNN: the files to unpack and the links to make */
	sec = cJSON_GetObjectItemCaseSensitive(lock, "cudnn");
	el_lock_str(ctx, &failed, sec, "header", el_bad_abs_path, "cudnn");
	arr = cJSON_GetObjectItemCaseSensitive(sec, "libraries");
	EL_EACH(arr, i, el) {
		el_lock_str(ctx, &failed, el, "path", el_bad_abs_path, "cudnn.libraries[%d]", i);
		el_lock_str(ctx, &failed, el, "name", el_bad_name, "cudnn.libraries[%d]", i);
		el_lock_str(ctx, &failed, el, "soname", el_bad_name, "cudnn.libraries[%d]", i);
		el_lock_str(ctx, &failed, el, "sha256", el_bad_sha256, "cudnn.libraries[%d]", i);
		sub = cJSON_GetObjectItemCaseSensitive(el, "links");
		EL_EACH(sub, j, sub_el) {
			el_lock_str(ctx, &failed, sub_el, "name", el_bad_name, "cudnn.libraries[%d].links[%d]", i, j);
			el_lock_str(ctx, &failed, sub_el, "target", el_bad_name, "cudnn.libraries[%d].links[%d]", i, j);
		}
	}
	return failed ? ENVLOCK_EPARSE : 0;
}
