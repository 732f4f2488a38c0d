/*
 * Restore step 4: cuDNN. The locked headers and libraries in their locked
 * folders (unpacked from NVIDIA's archive with --cudnn-archive, each
 * library checked against the digest the lock recorded), every soname
 * link (libcudnn.so.8 -> libcudnn.so.8.2.1, and the links the lock had),
 * the library folder in an ld.so.conf.d entry, then `ldconfig` (-r ROOT
 * under --root) and a check that the loader cache lists each soname.
 *
 * The plan compares the lock's cuDNN with the live probe's: which files
 * are there with which digest, which links lead to them, what
 * ld.so.cache maps each soname to. Apply re-checks a link just before it
 * replaces it, and probes again after ldconfig.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle/bundle.h"
#include "knowledge/knowledge.h"
#include "plan.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/interrupt.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_CUDNN_MAX_FILE (8ull << 30)  /* one library: cuDNN 9's largest is ~1 GiB */
#define EL_CUDNN_MAX_TOTAL (32ull << 30)

typedef struct {
	char *lib_dir;      /* host folders for the archive's library and header files */
	char *inc_dir;
	el_strvec names;    /* library file names the lock has a digest for ... */
	el_strvec digests;  /* ... and those digests */
	el_strvec want;     /* every file name the lock needs from the archive */
} unpack_job;

static void unpack_free(void *p)
{
	unpack_job *j = p;

	if (!j)
		return;
	free(j->lib_dir);
	free(j->inc_dir);
	el_strvec_release(&j->names);
	el_strvec_release(&j->digests);
	el_strvec_release(&j->want);
	free(j);
}

static bool strvec_has(const el_strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
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

/*
 * Done with a temporary file of copy_entry: removed (unless it was
 * renamed to its name), no longer one for a signal to remove, freed.
 */
static void tmp_done(char *tmp, bool remove)
{
	if (remove)
		unlink(tmp);
	el_interrupt_forget(tmp);
	free(tmp);
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
	int fd = el_interrupt_mkstemp(tmp), r;

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
	if (fd >= 0)
		close(fd);
	tmp_done(tmp, fd >= 0);
	return -1;
}

static int unpack_archive(el_item *it, el_apply *ap)
{
	unpack_job *j = it->extra;
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	unsigned long long total = 0;
	el_strvec got = EL_STRVEC_INIT;
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
		if (!name || !strvec_has(&j->want, name))
			continue;
		if (copy_entry(a, it, is_lib ? j->lib_dir : j->inc_dir, name, hex, &tmp, &total) != 0)
			goto done;
		for (size_t i = 0; i < j->names.n; i++) {
			if (strcmp(j->names.v[i], name) == 0 && strcmp(j->digests.v[i], hex) != 0) {
				el_item_fail(it, "'%s': %s has sha256 %.12s..., the lock recorded %.12s...; not installed",
					     it->target, name, hex, j->digests.v[i]);
				tmp_done(tmp, true);
				goto done;
			}
		}
		final = el_xasprintf("%s/%s", is_lib ? j->lib_dir : j->inc_dir, name);
		if (lstat(final, &st) == 0 && el_apply_aside(ap, it, final, NULL) != 0) {
			tmp_done(tmp, true);
			free(final);
			goto done;
		}
		if (rename(tmp, final) != 0) {
			el_item_fail(it, "'%s': %s", final, el_strerror(errno));
			tmp_done(tmp, true);
			free(final);
			goto done;
		}
		el_apply_log(ap, "installed '%s' (sha256 %s) from '%s'", final, hex, path);
		el_strvec_push(&got, name);
		tmp_done(tmp, false);
		free(final);
	}
	if (r != ARCHIVE_EOF) {
		el_item_fail(it, "'%s': %s", it->target, el_archive_reason(a));
		goto done;
	}
	for (size_t i = 0; i < j->want.n; i++) {
		if (!strvec_has(&got, j->want.v[i])) {
			el_item_fail(it, "'%s': has no %s (is it cuDNN for this CUDA release?)", it->target, j->want.v[i]);
			goto done;
		}
	}
	rc = 0;
done:
	archive_read_free(a);
	el_strvec_release(&got);
	return rc;
}

/* The live library at the in-root path, or NULL: cuDNN has a handful, so a scan. */
static const el_library *live_library(const el_view *live, const char *path)
{
	for (size_t i = 0; i < live->cudnn.nlibraries; i++)
		if (live->cudnn.libraries[i].path && strcmp(live->cudnn.libraries[i].path, path) == 0)
			return &live->cudnn.libraries[i];
	return NULL;
}

/* The (soname, path) pairs in want that the loader cache of live does not list, as one line (malloc'd), or NULL. */
static char *cache_missing(const el_view *live, const el_strvec *want)
{
	el_buf out = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the sonames of the lock's libraries");

	for (size_t i = 0; i + 1 < want->n; i += 2) {
		const el_library *lib = live_library(live, want->v[i + 1]);

		if (!lib || !lib->ld_cache || strcmp(lib->ld_cache, "listed") != 0)
			el_buf_addf(&out, "%s%s", out.len ? ", " : "", want->v[i]);
	}
	return out.len ? el_buf_detach(&out) : (el_buf_release(&out), NULL);
}

typedef struct {
	el_strvec sonames; /* soname, then the in-root library file the cache must lead to, pairwise */
} cache_job;

static void cache_free(void *p)
{
	cache_job *j = p;

	if (!j)
		return;
	el_strvec_release(&j->sonames);
	free(j);
}

/* After ldconfig: probe the machine again, the way the plan did, and read its loader cache's answers. */
static int check_ldcache(el_item *it, el_apply *ap)
{
	cache_job *j = it->extra;
	envlock_lock *now = NULL;
	char *missing;

	if (envlock_lock_probe(&now, ap->ctx, &ap->r->live_opts) != 0) {
		el_item_fail(it, "probing the loader cache again: %s", envlock_error_last(ap->ctx));
		return -1;
	}
	missing = cache_missing(el_lock_view(now), &j->sonames);
	envlock_lock_free(now);
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
	const el_strlist *conf = &r->live->system.ld_so_conf;
	char *real = NULL;
	bool found = false;
	int e = 0;

	el_root_realpath(&r->root, dir, &real, &e);
	for (size_t i = 0; i < 4 && !found; i++)
		found = strcmp(dir, trusted[i]) == 0;
	/* the probe records the entries as written: the same folder by another name counts */
	for (size_t i = 0; i < conf->n && !found; i++) {
		char *other = NULL;

		found = strcmp(conf->v[i], dir) == 0;
		if (!found && real && el_root_realpath(&r->root, conf->v[i], &other, &e) == 0)
			found = strcmp(other, real) == 0;
		free(other);
	}
	free(real);
	return found;
}

/*
 * Does /etc/ld.so.conf (in-root) include /etc/ld.so.conf.d? 1 yes, 0 no,
 * -1 no such file. The probe records the folders the file leads to, not
 * whether it includes the .d folder (empty or not): read here.
 */
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

/* Is the live library lib in the in-root folder dir? */
static bool in_dir(const el_library *lib, const char *dir)
{
	const char *slash = lib->path ? strrchr(lib->path, '/') : NULL;
	size_t n = slash ? (size_t)(slash - lib->path) : 0;

	return slash && (n ? strlen(dir) == n && strncmp(lib->path, dir, n) == 0 : strcmp(dir, "/") == 0);
}

/*
 * What is at dir/name on this machine: a link (its target in *target,
 * malloc'd) or no link. From the live view, where the probe recorded
 * each link with the library file it leads to; it records no link that
 * leads to no library file in its folder (dangling, as before an unpack,
 * or into another folder), so a name it does not report is read here.
 */
static el_seen live_entry(envlock_restore *r, const char *dir, const char *name, char **target)
{
	const el_view *live = r->live;
	char *abs;

	*target = NULL;
	for (size_t i = 0; i < live->cudnn.nlibraries; i++) {
		const el_library *lib = &live->cudnn.libraries[i];

		if (!in_dir(lib, dir))
			continue;
		if (lib->name && strcmp(lib->name, name) == 0)
			return EL_SEEN_NO_LINK;
		for (size_t k = 0; k < lib->nlinks; k++) {
			if (lib->links[k].name && lib->links[k].target && strcmp(lib->links[k].name, name) == 0) {
				*target = el_xstrdup(lib->links[k].target);
				return EL_SEEN_LINK;
			}
		}
	}
	abs = el_path_join(dir, name);
	if (el_root_readlink(&r->root, abs, target) != 0) {
		free(*target);
		*target = NULL;
	}
	free(abs);
	return *target ? EL_SEEN_LINK : EL_SEEN_NO_LINK;
}

/* Is the header at the in-root path in the live view (the probe records those that name a version)? */
static bool live_header(const el_view *live, const char *path)
{
	for (size_t i = 0; i < live->cudnn.nheaders; i++)
		if (live->cudnn.headers[i].path && strcmp(live->cudnn.headers[i].path, path) == 0)
			return true;
	return false;
}

/* The link items of one locked library: its soname link, then every other link the lock had. */
/* Is dir/name a link this step makes (a link to a link: libcudnn.so -> libcudnn.so.8)? */
static bool links_to_planned(envlock_restore *r, const el_step *s, const char *dir, const char *name)
{
	char *abs = el_path_join(dir, name), *host = el_restore_host(&r->root, abs);
	bool hit = false;

	for (size_t k = 0; k < s->n && !hit; k++)
		hit = s->items[k].run == el_apply_symlink && s->items[k].path && strcmp(s->items[k].path, host) == 0;
	free(host);
	free(abs);
	return hit;
}

static void plan_links(envlock_restore *r, el_step *s, const el_library *lib, const char *dir,
		       size_t *links_ok, size_t *changes, el_buf *dangling, size_t *n_dangling)
{
	el_strvec pairs = EL_STRVEC_INIT;

	if (lib->soname && strcmp(lib->soname, lib->name) != 0)
		el_args_push(&pairs, lib->soname, lib->name, NULL);
	for (size_t k = 0; k < lib->nlinks; k++) {
		const char *lname = lib->links[k].name, *target = lib->links[k].target;

		if (lname && target && !(lib->soname && strcmp(lname, lib->soname) == 0))
			el_args_push(&pairs, lname, target, NULL);
	}
	for (size_t i = 0; i + 1 < pairs.n; i += 2) {
		char *have = NULL, *abs;
		el_seen seen = live_entry(r, dir, pairs.v[i], &have);
		el_item *it;

		if (seen == EL_SEEN_LINK && strcmp(have, pairs.v[i + 1]) == 0) {
			/* as locked, and in place only when what it names is there too */
			struct stat st;

			abs = el_path_join(dir, pairs.v[i]);
			if (el_root_stat(&r->root, abs, &st) == 0 || links_to_planned(r, s, dir, have)) {
				(*links_ok)++;
			} else {
				el_buf_addf(dangling, "%s%s -> %s", dangling->len ? ", " : "", pairs.v[i], have);
				(*n_dangling)++;
			}
			free(abs);
			free(have);
			continue;
		}
		it = el_step_add(s, ENVLOCK_ITEM_DO, "link %s -> %s in %s", pairs.v[i], pairs.v[i + 1], dir);
		if (have)
			el_item_note(it, "now -> %s (moved aside first)", have);
		abs = el_path_join(dir, pairs.v[i]);
		it->path = el_restore_host(&r->root, abs);
		it->target = el_xstrdup(pairs.v[i + 1]);
		it->seen = seen;
		it->seen_target = have;
		it->run = el_apply_symlink;
		(*changes)++;
		free(abs);
	}
	el_strvec_release(&pairs);
}

void el_plan_cudnn(envlock_restore *r, el_step *s)
{
	const el_cudnn *cudnn = &r->lock->cudnn;
	const char *version = cudnn->version;
	el_buf missing = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the names of the lock's libraries");
	unpack_job *job = el_xcalloc(1, sizeof(*job));
	el_strvec dirs = EL_STRVEC_INIT, cache = EL_STRVEC_INIT;
	char *lib_dir = NULL, *inc_dir = NULL;
	size_t links_ok = 0, files_ok = 0, changes = 0, n_dangling = 0;
	el_buf dangling = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's links and where they lead");
	el_item *it;

	if (!cudnn->nlibraries) {
		el_step_add(s, ENVLOCK_ITEM_OK, "no cuDNN libraries locked");
		goto done;
	}
	/* headers */
	for (size_t i = 0; i < cudnn->nheaders; i++) {
		const char *path = cudnn->headers[i].path;

		if (!path || el_bad_abs_path(path))
			continue;
		if (!inc_dir)
			inc_dir = el_path_dir(path);
		if (live_header(r->live, path)) {
			files_ok++;
			continue;
		}
		el_buf_addf(&missing, "%s%s", missing.len ? ", " : "", el_path_base(path));
		el_strvec_push(&job->want, el_path_base(path));
	}
	/* library files, then their links */
	for (size_t i = 0; i < cudnn->nlibraries; i++) {
		const el_library *lib = &cudnn->libraries[i], *have;
		char *dir;

		if (!lib->path || !lib->name)
			continue;
		dir = el_path_dir(lib->path);
		if (!lib_dir)
			lib_dir = el_xstrdup(dir);
		if (!strvec_has(&dirs, dir))
			el_strvec_push(&dirs, dir);
		have = live_library(r->live, lib->path);
		if (have && have->sha256 && (!lib->sha256 || strcmp(have->sha256, lib->sha256) == 0)) {
			files_ok++;
		} else {
			el_buf_addf(&missing, "%s%s%s", missing.len ? ", " : "", lib->name,
				      have && have->sha256 ? " (different)" : "");
			el_strvec_push(&job->want, lib->name);
			if (lib->sha256) {
				el_strvec_push(&job->names, lib->name);
				el_strvec_push(&job->digests, lib->sha256);
			}
		}
		plan_links(r, s, lib, dir, &links_ok, &changes, &dangling, &n_dangling);
		if (lib->soname && lib->ld_cache && strcmp(lib->ld_cache, "listed") == 0)
			el_args_push(&cache, lib->soname, lib->path, NULL);
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
			for (size_t k = 0; k < s->n; k++)
				el_item_release(&s->items[k]);
			s->n = 0;
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "cuDNN %s files missing from %s: %s",
					 version ? version : "", lib_dir, el_buf_cstr(&missing));
			el_item_note(it, "download cuDNN %s for this CUDA release from NVIDIA (%s) and rerun with %s",
				     version ? version : "(the locked version)",
				     el_kb_nvidia_archive(el_kb_builtin(), "cudnn") ?: "its cuDNN archive",
				     el_restore_option(r, "cudnn_archive"));
			goto done;
		}
	} else {
		el_step_add(s, ENVLOCK_ITEM_OK, "cuDNN %s: %zu files as locked", version ? version : "", files_ok);
	}
	if (links_ok)
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu soname links in place", links_ok);
	if (n_dangling && missing.len) {
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu soname link%s in place, to the files the unpack above puts there",
			    n_dangling, n_dangling == 1 ? "" : "s");
	} else if (n_dangling) {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "%zu soname link%s in %s name%s nothing: %s", n_dangling,
				 n_dangling == 1 ? "" : "s", lib_dir, n_dangling == 1 ? "s" : "", el_buf_cstr(&dangling));
		el_item_note(it, "the loader cannot load through them: put back the files of cuDNN %s (rerun with %s), or remove the links",
			     version ? version : "(the locked version)", el_restore_option(r, "cudnn_archive"));
	}
	/* every library folder searched by the loader */
	for (size_t i = 0; i < dirs.n; i++) {
		char *conf, *host;

		if (dir_configured(r, dirs.v[i]))
			continue;
		conf = el_xasprintf("%s\n", dirs.v[i]);
		host = el_restore_host(&r->root, "/etc/ld.so.conf.d/envlock-cudnn.conf");
		it = el_step_add(s, ENVLOCK_ITEM_DO, "add %s to /etc/ld.so.conf.d/envlock-cudnn.conf", dirs.v[i]);
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
		char *stale = cache.n ? cache_missing(r->live, &cache) : NULL;

		if (changes || stale) {
			it = el_step_add(s, ENVLOCK_ITEM_DO, "refresh the loader cache (ldconfig%s%s)",
					 r->root.live ? "" : " -r ", r->root.live ? "" : r->root.prefix);
			if (stale && !changes)
				el_item_note(it, "the cache lacks %s", stale);
			el_args_push(&it->argv, ldconfig_path(), NULL);
			if (!r->root.live)
				el_args_push(&it->argv, "-r", r->root.prefix, NULL);
			it->run = el_apply_run_argv;
			if (cache.n) {
				cache_job *cj = el_xcalloc(1, sizeof(*cj));

				it = el_step_add(s, ENVLOCK_ITEM_DO, "check that the loader cache lists every locked cuDNN soname");
				cj->sonames = cache;
				memset(&cache, 0, sizeof(cache));
				it->extra = cj;
				it->free_extra = cache_free;
				it->run = check_ldcache;
			}
		} else if (cache.n) {
			el_step_add(s, ENVLOCK_ITEM_OK, "the loader cache lists every locked cuDNN soname");
		}
		free(stale);
	}
done:
	unpack_free(job);
	el_strvec_release(&dirs);
	el_strvec_release(&cache);
	free(lib_dir);
	free(inc_dir);
	el_buf_release(&missing);
	el_buf_release(&dangling);
}

/* value (at the field named by fmt) checked with bad: refused as the lock's own checks refuse (el_lock_refuse) */
static void check_value(int *failed, envlock_ctx *ctx, const char *value, el_check_fn bad, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void check_value(int *failed, envlock_ctx *ctx, const char *value, el_check_fn bad, const char *fmt, ...)
{
	const char *why = value ? bad(value) : NULL;
	char field[256];
	va_list ap;

	if (!why)
		return;
	va_start(ap, fmt);
	vsnprintf(field, sizeof(field), fmt, ap);
	va_end(ap);
	el_lock_refuse(failed, ctx, field, value, why);
}

/*
 * What only the cuDNN step hands on, beyond the lock's shared checks
 * (lock/untrusted.h): the files it unpacks and the links it makes. A link
 * must point at a file in its own folder, so /etc/alternatives targets
 * (Debian's) are refused here, and only here: export writes no link.
 * The schema already refused a value of the wrong type when the lock was
 * loaded, so the view's members are the document's.
 */
int el_restore_check_cudnn(envlock_ctx *ctx, const el_view *lock)
{
	const el_cudnn *c = &lock->cudnn;
	int failed = 0;

	check_value(&failed, ctx, c->header, el_bad_abs_path, "cudnn.header");
	for (size_t i = 0; i < c->nlibraries; i++) {
		const el_library *l = &c->libraries[i];

		check_value(&failed, ctx, l->path, el_bad_abs_path, "cudnn.libraries[%zu].path", i);
		check_value(&failed, ctx, l->name, el_bad_name, "cudnn.libraries[%zu].name", i);
		check_value(&failed, ctx, l->soname, el_bad_name, "cudnn.libraries[%zu].soname", i);
		check_value(&failed, ctx, l->sha256, el_bad_sha256, "cudnn.libraries[%zu].sha256", i);
		for (size_t k = 0; k < l->nlinks; k++) {
			check_value(&failed, ctx, l->links[k].name, el_bad_name, "cudnn.libraries[%zu].links[%zu].name", i, k);
			check_value(&failed, ctx, l->links[k].target, el_bad_name, "cudnn.libraries[%zu].links[%zu].target", i, k);
		}
	}
	return failed ? ENVLOCK_EPARSE : 0;
}
