/*
 * envlock bundle: a deterministic pax tar + zstd of a work_dir, with the
 * lockfile and a manifest of every file's SHA-256 in front.
 *
 * The manifest comes before the files, so their digests are needed before
 * their data is written: a first pass takes them from the digest cache
 * (free for checkpoints the lock's own save just hashed, and for every
 * file on a second bundle) or hashes them, one thread per core; the second
 * pass streams each file into the archive through a fixed buffer. A file
 * whose size, modification or change time moved in between fails the
 * bundle instead of being archived inconsistent with its digest.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "envlock/check.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/hashcache.h"
#include "util/pool.h"
#include "util/progress.h"
#include "util/root.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_BUNDLE_MAX_ENTRIES 1000000

typedef enum { ENT_FILE, ENT_DIR, ENT_LINK } ent_type;

typedef struct {
	char *rel;            /* path inside the work_dir */
	ent_type type;
	uint64_t size;
	mode_t mode;
	time_t mtime;
	char *target;         /* symlink target */
	int stored;           /* data goes into the archive */
	char hex[EL_SHA256_HEX];
	int rc, err_no;       /* of the first-pass digest */
	struct timespec mtim, ctim; /* the file's identity when its digest was taken */
} ent;

typedef struct {
	envlock_ctx *ctx;
	const envlock_bundle_opts *opts;
	const char *top;      /* the work_dir, absolute */
	ent *v;
	size_t n, cap;
	int failed;
	el_hashcache *hashes;
} walk;

static void warn(const walk *w, const char *fmt, const char *a, const char *b)
{
	char msg[PATH_MAX * 2 + 128];

	snprintf(msg, sizeof(msg), fmt, a, b);
	if (w->opts->on_warning)
		w->opts->on_warning(msg, w->opts->warning_data);
}

static bool excluded(const walk *w, const char *rel)
{
	for (size_t i = 0; i < w->opts->exclude_count; i++)
		if (fnmatch(w->opts->excludes[i], rel, 0) == 0 ||
		    fnmatch(w->opts->excludes[i], el_path_base(rel), 0) == 0)
			return true;
	return false;
}

/* Does a symlink at rel pointing to target stay inside the work_dir? */
static bool link_inside(const char *rel, const char *target)
{
	int depth = 0;
	const char *s;

	if (target[0] == '/')
		return false;
	for (s = rel; *s; s++)
		depth += *s == '/';
	for (s = target; *s;) {
		size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (n && !(n == 1 && s[0] == '.')) {
			depth++;
		}
		s += n;
		s += *s == '/';
	}
	return true;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void push(walk *w, const ent *e)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		w->v = el_xrealloc(w->v, w->cap * sizeof(*w->v));
	}
	w->v[w->n++] = *e;
}

/* Collect the entries under rel (a folder, "" for the top), sorted, depth first. */
static void collect(walk *w, const char *rel)
{
	char *dir = *rel ? el_path_join(w->top, rel) : el_xstrdup(w->top), **names = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		el_error_set(w->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
		w->failed = 1;
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 32;
			names = el_xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = el_xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n && !w->failed; i++) {
		char *r = *rel ? el_xasprintf("%s/%s", rel, names[i]) : el_xstrdup(names[i]);
		char *full = el_path_join(dir, names[i]);
		struct stat st;
		ent e;

		memset(&e, 0, sizeof(e));
		if (excluded(w, r) || lstat(full, &st) != 0) {
			free(r);
			free(full);
			continue;
		}
		if (w->n >= EL_BUNDLE_MAX_ENTRIES) {
			el_error_set(w->ctx, ENVLOCK_ELIMIT, "'%s': more than %d entries", w->top, EL_BUNDLE_MAX_ENTRIES);
			w->failed = 1;
		} else if (S_ISDIR(st.st_mode)) {
			e.rel = r;
			e.type = ENT_DIR;
			e.mode = 0755;
			e.mtime = st.st_mtime;
			push(w, &e);
			r = NULL;
			collect(w, w->v[w->n - 1].rel);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t tl = readlink(full, target, sizeof(target) - 1);

			if (tl < 0) {
				free(r);
				free(full);
				continue;
			}
			target[tl] = '\0';
			if (!link_inside(r, target)) {
				warn(w, "'%s': symlink to '%s' leaves the work_dir, not bundled", full, target);
			} else {
				e.rel = r;
				e.type = ENT_LINK;
				e.mode = 0777;
				e.mtime = st.st_mtime;
				e.target = el_xstrdup(target);
				e.stored = 1;
				push(w, &e);
				r = NULL;
			}
		} else if (S_ISREG(st.st_mode)) {
			e.rel = r;
			e.type = ENT_FILE;
			e.size = (uint64_t)st.st_size;
			e.mode = st.st_mode & 0111 ? 0755 : 0644;
			e.mtime = st.st_mtime;
			e.stored = !(w->opts->checkpoints_hash_only && el_is_checkpoint_name(names[i]));
			push(w, &e);
			r = NULL;
		} else {
			warn(w, "'%s': %s", full, "not a regular file, folder or symlink; skipped");
		}
		free(r);
		free(full);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
}

typedef struct {
	walk *w;
	size_t *files;   /* indexes of regular files */
} digest_job;

static void digest_one(size_t i, void *data)
{
	digest_job *job = data;
	ent *e = &job->w->v[job->files[i]];
	char *full = el_path_join(job->w->top, e->rel);
	uint64_t size = 0;

	e->rc = el_hashcache_file(job->w->hashes, full, e->hex, &size, &e->err_no);
	if (e->rc == 0) {
		struct stat st;

		/* the digest is of the file as it is now; the second pass must find it so */
		e->size = size;
		if (stat(full, &st) == 0) {
			e->mtim = st.st_mtim;
			e->ctim = st.st_ctim;
		}
	}
	free(full);
}

/* The lock to bundle, as the text of its canonical file. */
static int lock_text(envlock_ctx *ctx, const walk *w, el_buf *out, char *id, size_t idlen)
{
	envlock_lock *lock = NULL;
	envlock_rules *rules = NULL;
	int rc;

	if (w->opts->lock_path) {
		rc = envlock_lock_load(&lock, ctx, w->opts->lock_path);
	} else {
		/* the live machine, with the work_dir's configs (top-level *.py) and weights */
		envlock_probe_opts po;
		const char *ckpt[1] = { w->top };
		const char **configs = NULL;
		size_t nconf = 0;

		memset(&po, 0, sizeof(po));
		for (size_t i = 0; i < w->n; i++)
			if (w->v[i].type == ENT_FILE && !strchr(w->v[i].rel, '/') && el_ends_with(w->v[i].rel, ".py")) {
				configs = el_xrealloc(configs, (nconf + 1) * sizeof(*configs));
				configs[nconf++] = el_path_join(w->top, w->v[i].rel);
			}
		for (size_t i = 0; i < w->n; i++)
			if (w->v[i].type == ENT_FILE && !strchr(w->v[i].rel, '/') && el_is_checkpoint_name(w->v[i].rel))
				po.checkpoint_count = 1;
		po.checkpoints = ckpt;
		po.configs = configs;
		po.config_count = nconf;
		po.default_repo = 1;
		po.on_warning = w->opts->on_warning;
		po.warning_data = w->opts->warning_data;
		rc = envlock_lock_probe(&lock, ctx, &po);
		if (rc == 0 && envlock_lock_error_count(lock))
			rc = el_error_set(ctx, ENVLOCK_ERROR, "%s", envlock_lock_error(lock, 0));
		if (rc == 0 && (rc = envlock_rules_load_default(&rules, ctx)) == 0)
			rc = envlock_lock_record_checks(lock, ctx, rules);
		for (size_t i = 0; i < nconf; i++)
			free((char *)configs[i]);
		free(configs);
	}
	if (rc == 0) {
		el_lock_settle(lock);
		snprintf(id, idlen, "%s", envlock_lock_id(lock));
		if (el_json_write(lock->doc, out, 2) != 0)
			rc = el_error_set(ctx, ENVLOCK_ELIMIT, "the lockfile is larger than 64 MiB");
	}
	envlock_rules_free(rules);
	envlock_lock_free(lock);
	return rc;
}

static char *manifest_text(const walk *w, const char *name, const char *lock_id)
{
	cJSON *m = el_jnew_obj(), *files;
	el_buf b = EL_BUF_INIT(EL_BUNDLE_MAX_META);

	el_jset_int(m, "envlock_manifest", 1);
	el_jset_str(m, "tool", "envlock");
	el_jset_str(m, "tool_version", envlock_version());
	el_jset_str(m, "lock_id", lock_id);
	el_jset_str(m, "root", name);
	files = el_jset_arr(m, "files");
	for (size_t i = 0; i < w->n; i++) {
		const ent *e = &w->v[i];
		cJSON *f = el_jpush_obj(files);
		char *path = el_xasprintf("%s/%s", name, e->rel);

		el_jset_str(f, "path", path);
		free(path);
		el_jset_str(f, "type", e->type == ENT_FILE ? "file" : e->type == ENT_DIR ? "dir" : "symlink");
		el_jset_int(f, "mode", e->mode);
		if (e->type == ENT_FILE) {
			el_jset_int(f, "size", (long long)e->size);
			el_jset_str(f, "sha256", e->hex);
			el_jset_bool(f, "stored", e->stored);
		} else if (e->type == ENT_LINK) {
			el_jset_str(f, "target", e->target);
		}
	}
	if (el_json_write(m, &b, 2) != 0)
		el_oom();
	cJSON_Delete(m);
	return el_buf_detach(&b);
}

/* One archive entry with envlock's fixed metadata: root-owned, no names, no atime/ctime. */
static struct archive_entry *new_entry(const char *path, mode_t type, mode_t perm, time_t mtime, int64_t size)
{
	struct archive_entry *e = archive_entry_new();

	if (!e)
		el_oom();
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, (unsigned)type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_mtime(e, mtime, 0);
	archive_entry_set_size(e, size);
	return e;
}

static int put_blob(envlock_ctx *ctx, struct archive *a, const char *name, const char *data, size_t len, time_t t)
{
	struct archive_entry *e = new_entry(name, AE_IFREG, 0644, t, (int64_t)len);
	int rc = 0;

	if (archive_write_header(a, e) != ARCHIVE_OK || archive_write_data(a, data, len) != (la_ssize_t)len)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing %s: %s", name, el_archive_reason(a));
	archive_entry_free(e);
	return rc;
}

static bool same_file(const struct stat *st, const ent *x)
{
	return (uint64_t)st->st_size == x->size &&
	       st->st_mtim.tv_sec == x->mtim.tv_sec && st->st_mtim.tv_nsec == x->mtim.tv_nsec &&
	       st->st_ctim.tv_sec == x->ctim.tv_sec && st->st_ctim.tv_nsec == x->ctim.tv_nsec;
}

/*
 * Stream one file into the archive through the fixed buffer. Its digest
 * came from the first pass; the file must still be the one that digest
 * is of — same size, modification and change times before and after the
 * read (what the digest cache trusts too) — or the bundle fails.
 */
static int put_file(envlock_ctx *ctx, struct archive *a, const walk *w, const ent *x, const char *path,
		    time_t t, el_progress *bar, char *buf)
{
	char *full = el_path_join(w->top, x->rel);
	int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), rc = 0;
	struct archive_entry *e;
	uint64_t done = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0 || !same_file(&st, x)) {
		rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': %s", full,
				  fd < 0 ? el_strerror(errno) : "changed while being bundled");
		if (fd >= 0)
			close(fd);
		free(full);
		return rc;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	e = new_entry(path, AE_IFREG, x->mode, t, (int64_t)x->size);
	if (archive_write_header(a, e) != ARCHIVE_OK)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing '%s': %s", path, el_archive_reason(a));
	archive_entry_free(e);
	while (rc == 0 && done < x->size) {
		ssize_t n = read(fd, buf, EL_BUNDLE_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (uint64_t)n > x->size - done) {
			rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': changed while being bundled", full);
			break;
		}
		if (archive_write_data(a, buf, (size_t)n) != n)
			rc = el_error_set(ctx, ENVLOCK_EIO, "writing '%s': %s", path, el_archive_reason(a));
		done += (uint64_t)n;
		el_progress_add((uint64_t)n, bar);
	}
	if (rc == 0 && (fstat(fd, &st) != 0 || !same_file(&st, x)))
		rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': changed while being bundled", full);
	close(fd);
	free(full);
	return rc;
}

static int write_archive(envlock_ctx *ctx, const walk *w, const char *tmp, const char *name,
			 const el_buf *lock, const char *manifest)
{
	struct archive *a = archive_write_new();
	char opt[32], *buf = el_xmalloc(EL_BUNDLE_CHUNK);
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	time_t clamp = 0;
	uint64_t total = 0;
	el_progress *bar;
	int rc = 0;

	/* mtimes: SOURCE_DATE_EPOCH caps them; otherwise the newest entry's time stands for the bundle */
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].mtime > clamp)
			clamp = w->v[i].mtime;
	if (sde && *sde)
		clamp = (time_t)strtoll(sde, NULL, 10);
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].type == ENT_FILE && w->v[i].stored)
			total += w->v[i].size;
	if (!a)
		el_oom();
	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_zstd(a);
	snprintf(opt, sizeof(opt), "%d", w->opts->level > 0 ? w->opts->level : 3);
	archive_write_set_filter_option(a, "zstd", "compression-level", opt);
	/*
	 * One thread by default: on the 2-vCPU machines this was measured on,
	 * zstd's worker threads made the bundle slower (and bigger in memory)
	 * than compressing on the calling thread (bench/RESULTS.md).
	 */
	if (w->opts->threads > 1) {
		snprintf(opt, sizeof(opt), "%d", w->opts->threads);
		archive_write_set_filter_option(a, "zstd", "threads", opt);
	}
	if (archive_write_open_filename(a, tmp) != ARCHIVE_OK) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", tmp, el_archive_reason(a));
		goto done;
	}
	bar = el_progress_start("bundling", total, w->opts->progress);
	if ((rc = put_blob(ctx, a, EL_BUNDLE_LOCK, lock->data, lock->len, clamp)) == 0)
		rc = put_blob(ctx, a, EL_BUNDLE_MANIFEST, manifest, strlen(manifest), clamp);
	for (size_t i = 0; rc == 0 && i < w->n; i++) {
		const ent *x = &w->v[i];
		char *path = el_xasprintf("%s/%s", name, x->rel);
		time_t t = x->mtime < clamp ? x->mtime : clamp;

		if (x->type == ENT_DIR) {
			struct archive_entry *e = new_entry(path, AE_IFDIR, 0755, t, 0);

			if (archive_write_header(a, e) != ARCHIVE_OK)
				rc = el_error_set(ctx, ENVLOCK_EIO, "writing '%s': %s", path, el_archive_reason(a));
			archive_entry_free(e);
		} else if (x->type == ENT_LINK) {
			struct archive_entry *e = new_entry(path, AE_IFLNK, 0777, t, 0);

			archive_entry_set_symlink(e, x->target);
			if (archive_write_header(a, e) != ARCHIVE_OK)
				rc = el_error_set(ctx, ENVLOCK_EIO, "writing '%s': %s", path, el_archive_reason(a));
			archive_entry_free(e);
		} else if (x->stored) {
			rc = put_file(ctx, a, w, x, path, t, bar, buf);
		}
		free(path);
	}
	el_progress_finish(bar);
	if (archive_write_close(a) != ARCHIVE_OK && rc == 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", tmp, el_archive_reason(a));
done:
	archive_write_free(a);
	free(buf);
	return rc;
}

int envlock_bundle_create(envlock_ctx *ctx, const char *work_dir, const char *out_path,
			  const envlock_bundle_opts *opts)
{
	static const envlock_bundle_opts defaults;
	walk w;
	char *top = realpath(work_dir, NULL), *tmp = NULL, *manifest = NULL, *warning = NULL;
	char id[80] = "";
	el_buf lock = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	size_t *files = NULL, nfiles = 0;
	struct stat st;
	int rc = 0, fd;

	memset(&w, 0, sizeof(w));
	w.ctx = ctx;
	w.opts = opts ? opts : &defaults;
	if (!top || stat(top, &st) != 0 || !S_ISDIR(st.st_mode)) {
		rc = el_error_set(ctx, ENVLOCK_ENOTFOUND, "'%s': %s", work_dir, top ? "not a directory" : el_strerror(errno));
		goto done;
	}
	w.top = top;
	collect(&w, "");
	if (w.failed) {
		rc = ENVLOCK_EIO;
		goto done;
	}

	/* first pass: every file's digest, from the cache or hashed, one thread per core */
	w.hashes = el_hashcache_open(0, &warning);
	if (warning && w.opts->on_warning)
		w.opts->on_warning(warning, w.opts->warning_data);
	files = el_xcalloc(w.n ? w.n : 1, sizeof(*files));
	for (size_t i = 0; i < w.n; i++)
		if (w.v[i].type == ENT_FILE)
			files[nfiles++] = i;
	{
		digest_job job = { &w, files };

		el_pool_run(nfiles, el_pool_default_threads(), digest_one, &job);
	}
	el_hashcache_save(w.hashes);
	for (size_t i = 0; i < nfiles; i++) {
		const ent *e = &w.v[files[i]];

		if (e->rc) {
			rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s/%s': %s", top, e->rel,
					  e->rc == ENVLOCK_ERROR ? "changed while being hashed" : el_root_reason(e->rc, e->err_no));
			goto done;
		}
	}
	if ((rc = lock_text(ctx, &w, &lock, id, sizeof(id))) != 0)
		goto done;
	manifest = manifest_text(&w, el_path_base(top), id);

	/* write next to the output, then rename: a failed bundle leaves nothing behind */
	tmp = el_xasprintf("%s.tmp.XXXXXX", out_path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", out_path, el_strerror(errno));
		free(tmp);
		tmp = NULL;
		goto done;
	}
	close(fd);
	rc = write_archive(ctx, &w, tmp, el_path_base(top), &lock, manifest);
	if (rc == 0 && (chmod(tmp, 0644) != 0 || rename(tmp, out_path) != 0))
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", out_path, el_strerror(errno));
	if (rc != 0)
		unlink(tmp);
done:
	for (size_t i = 0; i < w.n; i++) {
		free(w.v[i].rel);
		free(w.v[i].target);
	}
	free(w.v);
	free(files);
	free(manifest);
	free(tmp);
	free(top);
	free(warning);
	el_buf_release(&lock);
	el_hashcache_free(w.hashes);
	return rc;
}
