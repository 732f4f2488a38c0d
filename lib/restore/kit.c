/*
 * An offline restore kit (`envlock restore LOCK --kit DIR|FILE`, as
 * `envlock pack` writes it): the lock's conda archives under conda/, its
 * wheels under wheels/, extra files (a cuDNN archive, a CUDA runfile)
 * under files/, a byte copy of the lock as envlock.lock, and
 * envlock.kit.json listing every file with its size and digests. A kit
 * may also be a .tar.zst of that folder written by envlock's bundle
 * writer; it is unpacked (safely, digests checked) into the state folder.
 * The bundle's MANIFEST.json comes first in that stream and every file is
 * checked against it as it streams; those digests are the ones the kit's
 * manifest and the lock are compared with, so a 2 GB kit is read once.
 *
 * A kit comes from elsewhere and is untrusted like a lock: its manifest
 * is size-limited, every path in it is one plain file name under its
 * kind's folder, links are refused, and every file is read once, its
 * size and digests compared with the manifest and the conda archives'
 * and wheels' with the LOCK's own records, before the plan is made. A
 * kit that disagrees anywhere is refused as a whole: nothing runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envlock/bundle.h"
#include "lock/model.h"
#include "plan.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/interrupt.h"
#include "util/pool.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_KIT_MANIFEST_MAX (16u << 20)
#define EL_KIT_ITEMS_MAX 100000
#define EL_KIT_TEXT_MAX 4096
#define KIT_CHUNK (1u << 20) /* digest_file's read size */

static const char *const kind_names[] = { "conda", "wheel", "file" };
static const char *const kind_dirs[] = { "conda/", "wheels/", "files/" };

/* "DIR/rel" as the user sees it: the folder given, or the archive and its top folder. */
static char *shown(const el_kit *k, const char *rel)
{
	return el_xasprintf("%s/%s", k->shown, rel);
}

static int refuse(envlock_ctx *ctx, const el_kit *k, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "kit 'FILE': why" on ctx, the values escaped as every outside text is on a terminal. */
static int refuse(envlock_ctx *ctx, const el_kit *k, const char *rel, const char *fmt, ...)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a kit file's name, escaped for a terminal");
	el_buf why = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a message, escaped for a terminal");
	char *file = rel ? shown(k, rel) : el_xstrdup(k->shown), *text;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		el_oom();
	va_end(ap);
	el_term_text(&b, file);
	el_term_text(&why, text);
	rc = el_error_set(ctx, ENVLOCK_EINVAL, "kit '%s': %s", el_buf_cstr(&b), el_buf_cstr(&why));
	el_buf_release(&b);
	el_buf_release(&why);
	free(text);
	free(file);
	return rc;
}

/* Read a kit file that must be a regular file, not a link: into b (its limit is the cap). */
static int read_plain(const char *host, el_buf *b, int *err)
{
	int fd = open(host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char chunk[65536];
	ssize_t n;

	*err = 0;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*err = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (el_buf_put(b, chunk, (size_t)n) != 0) {
			*err = EFBIG;
			close(fd);
			return -1;
		}
	}
	*err = n < 0 ? errno : 0;
	close(fd);
	return n < 0 ? -1 : 0;
}

/*
 * Size, sha256 and (want_md5) md5 of a kit file, in one read; a link or
 * anything but a regular file is refused (*err EINVAL, ELOOP).
 */
static int digest_file(const char *host, bool want_md5, uint64_t *size, char sha[EL_SHA256_HEX], char md5[EL_MD5_HEX],
		       int *err)
{
	int fd = open(host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	el_sha256 *s = NULL;
	el_md5 *m = NULL;
	unsigned char *chunk = NULL;
	struct stat st;
	ssize_t n = 0;

	*err = 0;
	*size = 0;
	md5[0] = '\0';
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*err = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	chunk = el_xmalloc_io(KIT_CHUNK);
	s = el_sha256_begin();
	m = want_md5 ? el_md5_begin() : NULL;
	while ((n = read(fd, chunk, KIT_CHUNK)) > 0) {
		el_sha256_update(s, chunk, (size_t)n);
		if (m)
			el_md5_update(m, chunk, (size_t)n);
		*size += (uint64_t)n;
	}
	if (n < 0)
		*err = errno;
	el_free_io(chunk);
	close(fd);
	if (n < 0) {
		el_sha256_abort(s);
		el_md5_abort(m);
		return -1;
	}
	el_sha256_end(s, sha);
	if (m)
		el_md5_end(m, md5);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Remove a folder envlock unpacked earlier (not following links). */
static void remove_tree(const char *dir)
{
	(void)nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * The digests envlock_bundle_extract checked each file of the kit against
 * as it streamed: the bundle's MANIFEST.json, which it wrote into dest
 * (a folder of ours, mode 0700). Files it does not list as stored are
 * hashed again by check_items.
 */
static void read_streamed(el_kit *k, const char *dest, const char *top)
{
	el_buf b = EL_BUF_INIT(EL_KIT_MANIFEST_MAX * 4);
	char *path = el_path_join(dest, "MANIFEST.json");
	size_t tl = strlen(top);
	const cJSON *files, *el;
	cJSON *doc = NULL;
	int e, i;

	if (read_plain(path, &b, &e) != 0 || !(doc = cJSON_ParseWithLength(b.data ? b.data : "", b.len)))
		goto done;
	files = el_jget(doc, "files");
	EL_EACH(files, i, el) {
		const char *p = el_jget_str(el, "path"), *sha = el_jget_str(el, "sha256"), *type = el_jget_str(el, "type");
		long long size = el_jget_int(el, "size", -1);
		el_kit_streamed *st;

		if (!p || !sha || el_bad_sha256(sha) || !type || strcmp(type, "file") != 0 || size < 0 ||
		    !el_jget_bool(el, "stored", false) || strncmp(p, top, tl) != 0 || p[tl] != '/')
			continue;
		EL_GROW(k->streamed, k->nstreamed + 1, k->streamed_cap);
		st = &k->streamed[k->nstreamed++];
		st->path = el_xstrdup(p + tl + 1);
		snprintf(st->sha256, sizeof(st->sha256), "%s", sha);
		st->size = (uint64_t)size;
	}
done:
	cJSON_Delete(doc);
	el_buf_release(&b);
	free(path);
}

static const el_kit_streamed *streamed_of(const el_kit *k, const char *path)
{
	for (size_t i = 0; i < k->nstreamed; i++)
		if (strcmp(k->streamed[i].path, path) == 0)
			return &k->streamed[i];
	return NULL;
}

/*
 * Unpack a .tar.zst kit into <state_dir>/kit-<lock id>: a fresh folder
 * each time (the one of an earlier run replaced), then the one folder
 * at its top beside the bundle's envlock.lock.json and MANIFEST.json.
 */
static int unpack(el_kit *k, envlock_ctx *ctx, const char *archive, const char *state_dir, const char *short_id)
{
	envlock_extract_opts xo = { 0 };
	char *tmpl = NULL, *dest = NULL, *top = NULL;
	DIR *d = NULL;
	struct dirent *e;
	size_t ntop = 0;
	int rc;

	if (el_mkdir_p(state_dir, 0700) != 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", state_dir, el_strerror(errno));
	/* a signal meanwhile stops the extract, which then fails, and the folder goes with it */
	el_interrupt_poll_begin();
	tmpl = el_xasprintf("%s/kit-%s.XXXXXX", state_dir, short_id);
	if (!mkdtemp(tmpl)) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", tmpl, el_strerror(errno));
		goto done;
	}
	xo.force = 1;
	if ((rc = envlock_bundle_extract(ctx, archive, tmpl, &xo)) == 0 && el_interrupted())
		rc = el_interrupt_error(ctx, archive);
	if (rc != 0) {
		char *why = el_xstrdup(envlock_error_last(ctx));

		remove_tree(tmpl);
		rc = el_error_set(ctx, rc, "kit '%s': %s", archive, why);
		free(why);
		goto done;
	}
	dest = el_xasprintf("%s/kit-%s", state_dir, short_id);
	remove_tree(dest);
	if (rename(tmpl, dest) != 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", dest, el_strerror(errno));
		remove_tree(tmpl);
		goto done;
	}
	d = opendir(dest);
	while (d && (e = readdir(d)) != NULL) {
		struct stat st;
		char *p;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, "envlock.lock.json") == 0 || strcmp(e->d_name, "MANIFEST.json") == 0)
			continue;
		p = el_path_join(dest, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && ntop++ == 0)
			top = el_xstrdup(e->d_name);
		else
			ntop += ntop == 0;
		free(p);
	}
	if (d)
		closedir(d);
	if (ntop != 1 || !top) {
		rc = el_error_set(ctx, ENVLOCK_EINVAL, "kit '%s': not a kit archive (it must hold one folder, the kit, beside the bundle's lock and manifest)", archive);
		goto done;
	}
	k->dir = el_path_join(dest, top);
	k->shown = el_xasprintf("%s/%s", archive, top);
	read_streamed(k, dest, top);
	rc = 0;
done:
	el_interrupt_poll_end();
	free(tmpl);
	free(dest);
	free(top);
	return rc;
}

/* A string member of at most EL_KIT_TEXT_MAX bytes, or NULL. */
static const char *text_of(const cJSON *o, const char *key)
{
	const char *s = el_jget_str(o, key);

	return s && strlen(s) <= EL_KIT_TEXT_MAX ? s : NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? el_xstrdup(s) : NULL;
}

/*
 * name and version of a PEP 427 wheel file name
 * (NAME-VERSION(-BUILD)?-PY-ABI-PLATFORM.whl), malloc'd, or false.
 */
static bool wheel_name(const char *fn, char **name, char **version)
{
	size_t len = strlen(fn), parts = 1;
	const char *dash;

	if (len < 5 || strcmp(fn + len - 4, ".whl") != 0)
		return false;
	for (const char *p = fn; p < fn + len - 4; p++)
		parts += *p == '-';
	if (parts != 5 && parts != 6)
		return false;
	dash = strchr(fn, '-');
	*name = el_xstrndup(fn, (size_t)(dash - fn));
	*version = el_xstrndup(dash + 1, strcspn(dash + 1, "-"));
	return **name && **version;
}

/* The lock's conda package whose URL's file name is fn, or NULL. */
static const el_conda_package *lock_conda(const el_view *v, const char *fn)
{
	for (size_t i = 0; i < v->conda.npackages; i++) {
		const char *url = v->conda.packages[i].url;

		if (url && strcmp(el_path_base(url), fn) == 0)
			return &v->conda.packages[i];
	}
	return NULL;
}

/* The lock's pip distribution of that PEP 503 name, or NULL. */
static const el_pip_dist *lock_dist(const el_view *v, const char *norm)
{
	for (size_t i = 0; i < v->pip.ndists; i++) {
		char *n = el_pep503_name(v->pip.dists[i].name ?: "");
		bool same = strcmp(n, norm) == 0;

		free(n);
		if (same)
			return &v->pip.dists[i];
	}
	return NULL;
}

static bool same_or_absent(const char *manifest, const char *lock)
{
	return !manifest || !lock || strcmp(manifest, lock) == 0;
}

/* One manifest item: its kind, its path (one file name under the kind's folder), its digests. */
static int read_item(el_kit *k, envlock_ctx *ctx, const cJSON *o, size_t i)
{
	const char *kind = text_of(o, "kind"), *path = text_of(o, "path"), *sha = text_of(o, "sha256");
	const char *md5 = text_of(o, "md5"), *why;
	const cJSON *size = el_jget(o, "size");
	char where[64];
	el_kit_item *it;
	int ki = -1;

	snprintf(where, sizeof(where), "the manifest's items[%zu]", i);
	for (int n = 0; n < 3; n++)
		if (kind && strcmp(kind, kind_names[n]) == 0)
			ki = n;
	if (ki < 0)
		return refuse(ctx, k, "envlock.kit.json", "%s: kind '%s' is none of conda, wheel, file", where,
			      kind ? kind : "(none)");
	if (!path || (why = el_bad_rel_path(path)) != NULL)
		return refuse(ctx, k, "envlock.kit.json", "%s: path '%s': %s", where, path ? path : "(none)",
			      path ? why : "missing");
	if (!el_starts_with(path, kind_dirs[ki]) || !path[strlen(kind_dirs[ki])] ||
	    strchr(path + strlen(kind_dirs[ki]), '/') || path[strlen(kind_dirs[ki])] == '.')
		return refuse(ctx, k, "envlock.kit.json", "%s: path '%s': a %s item is one file name under %s", where,
			      path, kind, kind_dirs[ki]);
	if (!sha || el_bad_sha256(sha))
		return refuse(ctx, k, "envlock.kit.json", "%s (%s): sha256: not 64 lowercase hex digits", where, path);
	if (md5 && el_bad_hex(md5, 32))
		return refuse(ctx, k, "envlock.kit.json", "%s (%s): md5: not 32 lowercase hex digits", where, path);
	if (!cJSON_IsNumber(size) || size->valuedouble < 0 || size->valuedouble > 9007199254740992.0 ||
	    size->valuedouble != (double)(uint64_t)size->valuedouble)
		return refuse(ctx, k, "envlock.kit.json", "%s (%s): size: not a whole number of bytes", where, path);
	for (size_t n = 0; n < k->n; n++)
		if (strcmp(k->items[n].path, path) == 0)
			return refuse(ctx, k, "envlock.kit.json", "%s: path '%s' is listed twice", where, path);
	EL_GROW(k->items, k->n + 1, k->cap);
	it = &k->items[k->n++];
	memset(it, 0, sizeof(*it));
	it->kind = (el_kit_kind)ki;
	it->path = el_xstrdup(path);
	it->file = el_path_base(it->path);
	it->host = el_path_join(k->dir, path);
	it->size = (uint64_t)size->valuedouble;
	snprintf(it->sha256, sizeof(it->sha256), "%s", sha);
	snprintf(it->md5, sizeof(it->md5), "%s", md5 ? md5 : "");
	it->name = dup_or_null(text_of(o, "name"));
	it->version = dup_or_null(text_of(o, "version"));
	it->build = dup_or_null(text_of(o, "build"));
	it->role = dup_or_null(text_of(o, "role"));
	it->from = dup_or_null(text_of(o, "from"));
	if (it->kind == EL_KIT_FILE && (!it->role || (strcmp(it->role, "cudnn-archive") != 0 &&
						       strcmp(it->role, "cuda-runfile") != 0 &&
						       strcmp(it->role, "file") != 0)))
		return refuse(ctx, k, "envlock.kit.json", "%s (%s): role '%s' is none of cudnn-archive, cuda-runfile, file",
			      where, path, it->role ? it->role : "(none)");
	return 0;
}

/* The item's file against the manifest (size, sha256, md5), then against the lock. */
/* One kit file's digests, read on a pool thread (its own slot only). */
typedef struct {
	el_kit_item *it;
	bool want_md5;    /* a conda archive whose lock package has no sha256 to match */
	char sha[EL_SHA256_HEX], md5[EL_MD5_HEX];
	uint64_t size;
	int rc, err;
} kit_digest;

static void digest_job(size_t i, void *data)
{
	kit_digest *d = &((kit_digest *)data)[i];

	/* rc 1: not checked yet (0: its digests are known already) */
	if (d->rc != 1)
		return;
	d->rc = digest_file(d->it->host, d->want_md5, &d->size, d->sha, d->md5, &d->err);
}

static int cmp_digest_size(const void *a, const void *b)
{
	const kit_digest *x = a, *y = b;

	return x->it->size < y->it->size ? 1 : x->it->size > y->it->size ? -1 : 0;
}

static bool used(const el_kit_item *it, unsigned uses)
{
	switch (it->kind) {
	case EL_KIT_CONDA:
		return uses & EL_KIT_USE_CONDA;
	case EL_KIT_WHEEL:
		return uses & EL_KIT_USE_WHEELS;
	default:
		return it->role && ((strcmp(it->role, "cudnn-archive") == 0 && (uses & EL_KIT_USE_CUDNN)) ||
				    (strcmp(it->role, "cuda-runfile") == 0 && (uses & EL_KIT_USE_RUNFILE)));
	}
}

static int check_item(el_kit *k, envlock_ctx *ctx, kit_digest *dg, const el_view *v)
{
	el_kit_item *it = dg->it;
	const char *sha = dg->sha, *md5 = dg->md5;
	uint64_t size = dg->size;
	int e = dg->err;

	if (dg->rc != 0)
		return refuse(ctx, k, it->path, "%s", e == ELOOP || e == EINVAL ? "not a regular file (a link or a folder)"
										: el_strerror(e));
	if (size != it->size)
		return refuse(ctx, k, it->path, "%llu bytes, the manifest says %llu", (unsigned long long)size,
			      (unsigned long long)it->size);
	if (strcmp(sha, it->sha256) != 0)
		return refuse(ctx, k, it->path, "sha256 %s, the manifest says %s", sha, it->sha256);
	if (it->md5[0] && md5[0] && strcmp(md5, it->md5) != 0)
		return refuse(ctx, k, it->path, "md5 %s, the manifest says %s", md5, it->md5);
	if (it->kind == EL_KIT_CONDA) {
		const el_conda_package *p = lock_conda(v, it->file);

		if (!p)
			return refuse(ctx, k, it->path, "no conda package of the lock has this file name");
		/* md5 is read only where the lock has no sha256: the same bytes have the lock's md5 */
		if (p->md5 && md5[0] && strcmp(p->md5, md5) != 0)
			return refuse(ctx, k, it->path, "md5 %s, the lock's %s %s %s has %s", md5, p->name ?: "?",
				      p->version ?: "?", p->build ?: "", p->md5);
		if (p->sha256 && strcmp(p->sha256, sha) != 0)
			return refuse(ctx, k, it->path, "sha256 %s, the lock's %s %s %s has %s", sha, p->name ?: "?",
				      p->version ?: "?", p->build ?: "", p->sha256);
		if (p->md5 && !md5[0] && it->md5[0] && strcmp(p->md5, it->md5) != 0)
			return refuse(ctx, k, it->path, "the manifest's md5 %s, the lock's %s %s %s has %s", it->md5,
				      p->name ?: "?", p->version ?: "?", p->build ?: "", p->md5);
		if (!p->md5 && !p->sha256)
			return refuse(ctx, k, it->path, "the lock records no digest for %s %s: it cannot be checked",
				      p->name ?: "?", p->version ?: "?");
		if (!same_or_absent(it->name, p->name) || !same_or_absent(it->version, p->version) ||
		    !same_or_absent(it->build, p->build))
			return refuse(ctx, k, it->path, "the manifest says %s %s %s, the lock %s %s %s", it->name ?: "",
				      it->version ?: "", it->build ?: "", p->name ?: "?", p->version ?: "?", p->build ?: "");
		snprintf(it->md5, sizeof(it->md5), "%s", md5[0] ? md5 : p->md5 ? p->md5 : "");
	} else if (it->kind == EL_KIT_WHEEL) {
		char *name = NULL, *version = NULL, *norm, *mnorm = NULL;
		const el_pip_dist *d;
		const char *h;
		int rc = 0;

		if (!wheel_name(it->file, &name, &version)) {
			free(name);
			free(version);
			return refuse(ctx, k, it->path, "not a wheel file name (NAME-VERSION-PY-ABI-PLATFORM.whl, PEP 427)");
		}
		norm = el_pep503_name(name);
		mnorm = it->name ? el_pep503_name(it->name) : NULL;
		d = lock_dist(v, norm);
		if ((mnorm && strcmp(mnorm, norm) != 0) || !same_or_absent(it->version, version))
			rc = refuse(ctx, k, it->path, "the manifest says %s %s, the file name %s %s", it->name ?: "",
				    it->version ?: "", name, version);
		else if (!d)
			rc = refuse(ctx, k, it->path, "the lock has no pip distribution %s", name);
		else if (!d->version || strcmp(d->version, version) != 0)
			rc = refuse(ctx, k, it->path, "version %s, the lock has %s %s", version, d->name, d->version ?: "?");
		/* the file pip installed, when the lock has its digest; a wheel the pack rebuilt is another file */
		else if ((h = d->direct_url.archive_hash) && el_starts_with(h, "sha256=") &&
			 !(it->from && strcmp(it->from, "rebuilt") == 0) && strcmp(h + 7, sha) != 0)
			rc = refuse(ctx, k, it->path, "sha256 %s, the lock recorded %s for %s %s", sha, h + 7, d->name, version);
		if (rc == 0) {
			free(it->name);
			it->name = el_xstrdup(d->name);
			free(it->version);
			it->version = el_xstrdup(version);
			it->norm = norm;
			norm = NULL;
		}
		free(norm);
		free(mnorm);
		free(name);
		free(version);
		return rc;
	}
	return 0;
}

/*
 * Hash every item the restore uses, largest first on a thread per core
 * (a kit of an 800-package environment holds gigabytes of archives), then
 * compare each in the manifest's order, so the first problem reported does
 * not depend on the threads.
 */
static int check_items(el_kit *k, envlock_ctx *ctx, const el_view *v, unsigned uses)
{
	kit_digest *d = el_xcalloc(k->n + 1, sizeof(*d));
	size_t *where = el_xcalloc(k->n + 1, sizeof(*where)), n = 0, hashed = 0;
	int rc = 0;

	for (size_t i = 0; i < k->n; i++)
		if (used(&k->items[i], uses)) {
			const el_conda_package *p = k->items[i].kind == EL_KIT_CONDA ? lock_conda(v, k->items[i].file) : NULL;

			d[n].want_md5 = k->items[i].kind == EL_KIT_CONDA && (!p || !p->sha256);
			d[n++].it = &k->items[i];
		}
	/* checked while the archive streamed: its digests stand, unless an md5 is wanted too */
	for (size_t j = 0; j < n; j++) {
		const el_kit_streamed *st = d[j].want_md5 ? NULL : streamed_of(k, d[j].it->path);
		struct stat sb;

		if (st && lstat(d[j].it->host, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == st->size) {
			d[j].size = st->size;
			memcpy(d[j].sha, st->sha256, sizeof(d[j].sha));
		} else {
			d[j].rc = 1;
			hashed++;
		}
	}
	if (k->nstreamed && hashed)
		fprintf(stderr, "envlock: restore: kit '%s': %zu file%s not checked while it was unpacked: read a second time\n",
			k->shown, hashed, hashed == 1 ? "" : "s");
	qsort(d, n, sizeof(*d), cmp_digest_size);
	el_pool_run(n, el_pool_default_threads(), digest_job, d);
	for (size_t j = 0; j < n; j++)
		where[d[j].it - k->items] = j + 1;
	for (size_t i = 0; i < k->n && rc == 0; i++)
		if (where[i] && (rc = check_item(k, ctx, &d[where[i] - 1], v)) == 0)
			k->items[i].checked = true;
	free(where);
	free(d);
	return rc;
}

/* The folders of a kit are real folders: a link could lead a kit's file anywhere. */
static int check_folders(el_kit *k, envlock_ctx *ctx)
{
	static const char *const dirs[] = { "conda", "wheels", "files" };

	for (size_t i = 0; i < 3; i++) {
		char *p = el_path_join(k->dir, dirs[i]);
		struct stat st;
		bool bad = lstat(p, &st) == 0 && !S_ISDIR(st.st_mode);

		free(p);
		if (bad)
			return refuse(ctx, k, dirs[i], "not a folder (a link or a file)");
	}
	return 0;
}

static int read_manifest(el_kit *k, envlock_ctx *ctx, const envlock_lock *lock, const el_view *v, unsigned uses)
{
	el_buf b = EL_BUF_INIT(EL_KIT_MANIFEST_MAX), lb = EL_BUF_INIT(1u << 30);
	char *host = el_path_join(k->dir, "envlock.kit.json"), *lhost = NULL, lsha[EL_SHA256_HEX];
	const char *id, *lpath, *lsum, *format;
	cJSON *doc = NULL, *o, *el;
	int e, rc, i;

	if (read_plain(host, &b, &e) != 0) {
		rc = refuse(ctx, k, "envlock.kit.json", "%s", e == EFBIG ? "larger than 16 MiB"
						     : e == ELOOP || e == EINVAL ? "not a regular file (a link or a folder)"
						     : e == ENOENT ? "missing: not an envlock kit" : el_strerror(e));
		goto done;
	}
	if (!(doc = cJSON_ParseWithLength(b.data, b.len)) || !cJSON_IsObject(doc)) {
		rc = refuse(ctx, k, "envlock.kit.json", "not JSON");
		goto done;
	}
	format = el_jget_str(doc, "format");
	if (!format || strcmp(format, "envlock-kit") != 0) {
		rc = refuse(ctx, k, "envlock.kit.json", "format is not \"envlock-kit\"");
		goto done;
	}
	if (el_jget_int(doc, "version", -1) != 1) {
		rc = refuse(ctx, k, "envlock.kit.json", "version %lld: this envlock reads kits of version 1",
			    el_jget_int(doc, "version", -1));
		goto done;
	}
	o = el_jget(doc, "lock");
	id = text_of(o, "id");
	lpath = text_of(o, "path");
	lsum = text_of(o, "sha256");
	if (!id || !lsum || !lpath || strcmp(lpath, "envlock.lock") != 0 || el_bad_sha256(lsum)) {
		rc = refuse(ctx, k, "envlock.kit.json", "lock: needs path \"envlock.lock\", its id and its sha256");
		goto done;
	}
	/* "sha256:<hex>", as the lock writes its id; the bare digest is the same id */
	if (strcmp(el_starts_with(id, "sha256:") ? id + 7 : id,
		   el_starts_with(envlock_lock_id(lock), "sha256:") ? envlock_lock_id(lock) + 7 : envlock_lock_id(lock)) != 0) {
		rc = refuse(ctx, k, NULL, "it is a kit for the lock %s, not for %s (the lock given)", id, envlock_lock_id(lock));
		goto done;
	}
	lhost = el_path_join(k->dir, "envlock.lock");
	if (read_plain(lhost, &lb, &e) != 0) {
		rc = refuse(ctx, k, "envlock.lock", "%s", e == ELOOP || e == EINVAL ? "not a regular file (a link or a folder)"
										  : el_strerror(e));
		goto done;
	}
	el_sha256_buf(lb.data, lb.len, lsha);
	if (strcmp(lsha, lsum) != 0) {
		rc = refuse(ctx, k, "envlock.lock", "sha256 %s, the manifest says %s", lsha, lsum);
		goto done;
	}
	if ((rc = check_folders(k, ctx)) != 0)
		goto done;
	o = el_jget(doc, "items");
	if (o && (!cJSON_IsArray(o) || cJSON_GetArraySize(o) > EL_KIT_ITEMS_MAX)) {
		rc = refuse(ctx, k, "envlock.kit.json", "items: not a list of at most %d", EL_KIT_ITEMS_MAX);
		goto done;
	}
	EL_EACH(o, i, el)
		if ((rc = read_item(k, ctx, el, (size_t)i)) != 0)
			goto done;
	o = el_jget(doc, "missing");
	EL_EACH(o, i, el) {
		el_kit_missing *m;

		if (i >= EL_KIT_ITEMS_MAX)
			break;
		EL_GROW(k->missing, k->nmissing + 1, k->missing_cap);
		m = &k->missing[k->nmissing++];
		m->kind = dup_or_null(text_of(el, "kind"));
		m->name = dup_or_null(text_of(el, "name"));
		m->version = dup_or_null(text_of(el, "version"));
		m->reason = dup_or_null(text_of(el, "reason"));
		m->fetch = dup_or_null(text_of(el, "fetch"));
	}
	/* each file the restore uses, once: the manifest's size and digests, then the lock's */
	if ((rc = check_items(k, ctx, v, uses)) != 0)
		goto done;
done:
	cJSON_Delete(doc);
	el_buf_release(&b);
	el_buf_release(&lb);
	free(host);
	free(lhost);
	return rc;
}

int el_kit_open(el_kit **out, envlock_ctx *ctx, const char *given, const char *state_dir, const char *short_id,
		const envlock_lock *lock, const el_view *v, unsigned uses)
{
	el_kit *k = el_xcalloc(1, sizeof(*k));
	struct stat st;
	int rc;

	*out = NULL;
	k->shown = el_xstrdup(given);
	if (stat(given, &st) != 0) {
		rc = refuse(ctx, k, NULL, "%s", el_strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		char *real = realpath(given, NULL);

		if (!real) {
			rc = refuse(ctx, k, NULL, "%s", el_strerror(errno));
			goto fail;
		}
		k->dir = real;
	} else {
		free(k->shown);
		k->shown = NULL;
		if ((rc = unpack(k, ctx, given, state_dir, short_id)) != 0)
			goto fail;
		{
			char *real = realpath(k->dir, NULL);

			if (!real) {
				rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", k->dir, el_strerror(errno));
				goto fail;
			}
			free(k->dir);
			k->dir = real;
		}
	}
	if ((rc = read_manifest(k, ctx, lock, v, uses)) != 0)
		goto fail;
	*out = k;
	return 0;
fail:
	el_kit_free(k);
	return rc;
}

const el_kit_item *el_kit_conda(const el_kit *k, const char *fn)
{
	for (size_t i = 0; k && i < k->n; i++)
		if (k->items[i].kind == EL_KIT_CONDA && k->items[i].checked && strcmp(k->items[i].file, fn) == 0)
			return &k->items[i];
	return NULL;
}

const el_kit_item *el_kit_wheel(const el_kit *k, const char *norm, const char *version)
{
	for (size_t i = 0; k && i < k->n; i++)
		if (k->items[i].kind == EL_KIT_WHEEL && k->items[i].checked && strcmp(k->items[i].norm, norm) == 0 &&
		    strcmp(k->items[i].version, version) == 0)
			return &k->items[i];
	return NULL;
}

const el_kit_item *el_kit_file(const el_kit *k, const char *role)
{
	for (size_t i = 0; k && i < k->n; i++)
		if (k->items[i].kind == EL_KIT_FILE && k->items[i].checked && k->items[i].role &&
		    strcmp(k->items[i].role, role) == 0)
			return &k->items[i];
	return NULL;
}

const el_kit_missing *el_kit_missing_of(const el_kit *k, const char *kind, const char *name)
{
	char *norm = el_pep503_name(name);
	const el_kit_missing *hit = NULL;

	for (size_t i = 0; k && !hit && i < k->nmissing; i++) {
		char *n = k->missing[i].name ? el_pep503_name(k->missing[i].name) : NULL;

		if (n && strcmp(n, norm) == 0 && (!k->missing[i].kind || strcmp(k->missing[i].kind, kind) == 0))
			hit = &k->missing[i];
		free(n);
	}
	free(norm);
	return hit;
}

/* Copy a kit file to dst (new, not there), streaming: a wheel of torch is a gigabyte. */
static int copy_file(const char *src, const char *dst)
{
	static char chunk[1u << 20];
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out = -1, e = 0;
	ssize_t n = 0;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	while (out >= 0 && (n = read(in, chunk, sizeof(chunk))) > 0)
		if (el_write_all(out, chunk, (size_t)n) != 0)
			break;
	if (out < 0 || n != 0 || fsync(out) != 0)
		e = errno ? errno : EIO;
	close(in);
	if (out >= 0 && close(out) != 0 && !e)
		e = errno;
	if (e) {
		if (out >= 0)
			unlink(dst);
		errno = e;
		return -1;
	}
	return 0;
}

int el_kit_stage(el_apply *ap, el_item *it, const el_kit *k, el_kit_kind kind, const char *host_dir)
{
	char *sub = el_path_join(host_dir, kind == EL_KIT_CONDA ? "conda" : "wheels");
	struct stat st;
	int rc = -1;

	/* the tree's /tmp is anyone's: a link planted there would take the files elsewhere */
	if (lstat(host_dir, &st) == 0 && (!S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))) {
		el_item_fail(it, "'%s': is there and not a folder envlock made", host_dir);
		goto done;
	}
	if (el_mkdir_p(sub, 0755) != 0) {
		el_item_fail(it, "'%s': cannot create the folder: %s", sub, el_strerror(errno));
		goto done;
	}
	for (size_t i = 0; i < k->n; i++) {
		const el_kit_item *x = &k->items[i];
		char *dst;

		if (x->kind != kind || !x->checked)
			continue;
		dst = el_path_join(sub, x->file);
		unlink(dst);
		/* a hard link where the tree is on the kit's file system, else a copy */
		if (link(x->host, dst) != 0 && copy_file(x->host, dst) != 0) {
			el_item_fail(it, "'%s': cannot copy the kit's file into the tree: %s", dst, el_strerror(errno));
			free(dst);
			goto done;
		}
		free(dst);
	}
	el_apply_log(ap, "put the kit's %s files into the tree under '%s'", kind_names[kind], sub);
	rc = 0;
done:
	free(sub);
	return rc;
}

void el_kit_unstage(el_apply *ap, const el_kit *k, el_kit_kind kind, const char *host_dir)
{
	char *sub = el_path_join(host_dir, kind == EL_KIT_CONDA ? "conda" : "wheels");

	for (size_t i = 0; i < k->n; i++) {
		if (k->items[i].kind == kind) {
			char *dst = el_path_join(sub, k->items[i].file);

			unlink(dst);
			free(dst);
		}
	}
	rmdir(sub);
	rmdir(host_dir);
	el_apply_log(ap, "removed the kit's %s files from the tree ('%s')", kind_names[kind], sub);
	free(sub);
}

char *el_kit_file_url(const char *dir, const char *rel)
{
	char *path = el_path_join(dir, rel);
	el_buf b;

	el_buf_init_fits(&b, 7 + 3 * strlen(path), "file:// and at most three bytes for each of the path's");

	/* RFC 8089 file URLs: a byte outside the unreserved set and '/' is percent-encoded */
	el_buf_adds(&b, "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    strchr("/-._~+", *p))
			el_buf_addc(&b, (char)*p);
		else
			el_buf_addf(&b, "%%%02X", *p);
	}
	free(path);
	return el_buf_detach(&b);
}

void el_kit_free(el_kit *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++) {
		el_kit_item *it = &k->items[i];

		free(it->name);
		free(it->version);
		free(it->build);
		free(it->role);
		free(it->from);
		free(it->path);
		free(it->host);
		free(it->norm);
	}
	for (size_t i = 0; i < k->nmissing; i++) {
		free(k->missing[i].kind);
		free(k->missing[i].name);
		free(k->missing[i].version);
		free(k->missing[i].reason);
		free(k->missing[i].fetch);
	}
	for (size_t i = 0; i < k->nstreamed; i++)
		free(k->streamed[i].path);
	free(k->streamed);
	free(k->items);
	free(k->missing);
	free(k->dir);
	free(k->shown);
	free(k);
}
