/*
 * envlock pack: an offline restore kit (include/envlock/pack.h), built in
 * a folder beside the output and renamed into place, or written as a
 * bundle archive, so that a crash never leaves half a kit where a kit
 * is expected.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envlock/bundle.h"
#include "internal.h"
#include "lock/model.h"
#include "lock/untrusted.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/interrupt.h"
#include "util/root.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define PK_MANIFEST "envlock.kit.json"
#define PK_LOCK "envlock.lock"
#define PK_AGAIN 1 /* a staged item is not what the lock says: pack again, checking first */

static bool empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* The role of an added file, from its name. */
static const char *file_role(const char *base)
{
	if (el_starts_with(base, "cudnn-") && (el_ends_with(base, ".tar.xz") || el_ends_with(base, ".tgz")))
		return "cudnn-archive";
	if (el_starts_with(base, "cuda_") && el_ends_with(base, ".run"))
		return "cuda-runfile";
	return "file";
}

static int add_files(pk_pack *p)
{
	el_strvec seen = EL_STRVEC_INIT;
	int rc = 0;

	for (size_t i = 0; i < p->opts->add_count && rc == 0; i++) {
		const char *src = p->opts->add_files[i], *base = el_path_base(src);
		char *rel = el_xasprintf("files/%s", base), *dst = el_path_join(p->kit, rel);
		struct stat st;
		pk_digest d;
		el_bundle_item it;

		if (stat(src, &st) != 0 || !S_ISREG(st.st_mode))
			rc = el_error_set(p->ctx, ENVLOCK_ENOTFOUND, "--add '%s': %s", src,
					  errno && stat(src, &st) != 0 ? el_strerror(errno) : "not a regular file");
		else if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
			rc = el_error_set(p->ctx, ENVLOCK_EINVAL, "--add '%s': not a file name", src);
		else if (el_strvec_has(&seen, base))
			rc = el_error_set(p->ctx, ENVLOCK_EINVAL, "--add '%s': a file named '%s' is added already", src, base);
		else if ((rc = p->staging ? pk_stage(p->ctx, src, 0, -1, false, &it, &d)
					  : pk_copy(p->ctx, src, 0, -1, dst, p->link, false, &d, NULL)) == 0) {
			cJSON *o = cJSON_CreateObject();

			if (!o)
				el_oom();
			el_jset_str(o, "kind", "file");
			el_jset_str(o, "role", file_role(base));
			el_jset_str(o, "path", rel);
			el_jset_int(o, "size", d.size);
			el_jset_str(o, "sha256", d.sha256);
			pk_entries_add(&p->items, o, "file", rel, NULL, NULL);
			if (p->staging)
				pk_stage_add(p, &it, o, rel, NULL, NULL);
			el_strvec_push(&seen, base);
			pk_say(p, "file     %s  (%s)", rel, file_role(base));
		}
		free(rel), free(dst);
	}
	el_strvec_release(&seen);
	return rc;
}

static void entries_release(pk_entries *list)
{
	for (size_t i = 0; i < list->n; i++) {
		pk_entry *e = &list->v[i];

		free(e->kind), free(e->path), free(e->name), free(e->version);
		cJSON_Delete(e->obj);
	}
	free(list->v);
	memset(list, 0, sizeof(*list));
}

static int entry_cmp(const void *a, const void *b)
{
	const pk_entry *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	if (!c)
		c = strcmp(x->path, y->path);
	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = strcmp(x->version, y->version);
	return c;
}

/* The entries' objects as an array sorted by kind, then path, name, version; list is emptied. */
static cJSON *sorted(pk_entries *list)
{
	cJSON *out = cJSON_CreateArray();

	if (!out)
		el_oom();
	if (list->n)
		qsort(list->v, list->n, sizeof(*list->v), entry_cmp);
	for (size_t i = 0; i < list->n; i++) {
		cJSON_AddItemToArray(out, list->v[i].obj);
		list->v[i].obj = NULL;
	}
	entries_release(list);
	return out;
}

/* The kit's manifest: the items sorted (p's lists are emptied). */
static cJSON *manifest(pk_pack *p, const envlock_lock *lock, const pk_digest *ld)
{
	cJSON *m = cJSON_CreateObject(), *l;
	char *created = el_xasprintf("envlock %s", envlock_version());

	if (!m)
		el_oom();
	el_jset_str(m, "format", "envlock-kit");
	el_jset_int(m, "version", 1);
	el_jset_str(m, "created_by", created);
	l = el_jset_obj(m, "lock");
	el_jset_str(l, "path", PK_LOCK);
	el_jset_str(l, "id", envlock_lock_id(lock));
	el_jset_str(l, "sha256", ld->sha256);
	el_jset(m, "items", sorted(&p->items));
	el_jset(m, "missing", sorted(&p->missing));
	free(created);
	return m;
}

static int write_manifest(pk_pack *p, const envlock_lock *lock, const pk_digest *ld)
{
	cJSON *m = manifest(p, lock, ld);
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	char *path = el_path_join(p->kit, PK_MANIFEST);
	int rc = el_json_write(m, &b, 2);

	if (rc == 0)
		rc = el_write_atomic(p->ctx, path, b.data, b.len, 0644);
	else
		rc = el_error_set(p->ctx, ENVLOCK_ELIMIT, "'%s': the manifest is too large", path);
	cJSON_Delete(m);
	el_buf_release(&b);
	free(path);
	return rc;
}

/* A staged kit's manifest, the bundle writer's late file: the items' digests as it found them. */
typedef struct {
	pk_pack *p;
	cJSON *m;
	const el_bundle_item *items; /* the writer's, beside p->staged */
} late_manifest;

/* Our own entry's stand-in replaced where it stands: the key order, and the length (stand-ins are as long), stay. */
static void set_digest(cJSON *obj, const char *key, const char *hex)
{
	cJSON *v = cJSON_CreateString(hex);

	if (!v)
		el_oom();
	if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v))
		cJSON_Delete(v);
}

static char *late_text(void *data, size_t *len)
{
	late_manifest *lm = data;
	el_buf b = EL_BUF_INIT((size_t)1 << 30);

	for (size_t i = 0; i < lm->p->nstaged; i++) {
		const pk_staged *s = &lm->p->staged[i];

		if (!s->obj)
			continue;
		set_digest(s->obj, "sha256", lm->items[i].sha256);
		if (lm->items[i].md5)
			set_digest(s->obj, "md5", lm->items[i].md5_hex);
	}
	if (el_json_write(lm->m, &b, 2) != 0)
		el_oom(); /* the stand-ins' text fitted: the same length does */
	*len = b.len;
	return el_buf_detach(&b);
}

/*
 * A .tar.zst kit in one pass: the staged items straight from the caches
 * into the bundle writer, which reads each once, hashing and compressing
 * the same buffers and checking them against the lock; the manifest
 * (made with stand-in digests of the same length, so that its size is
 * known first) goes last, with the digests it found.
 */
static int write_staged(pk_pack *p, const envlock_lock *lock, const pk_digest *ld, const char *lock_path,
			const char *stem, const char *out)
{
	static const char *const dirs[] = { "conda", "files", "wheels" };
	el_bundle_item *items = el_xcalloc(p->nstaged ? p->nstaged : 1, sizeof(*items));
	late_manifest lm = { p, manifest(p, lock, ld), items };
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	envlock_bundle_opts bo;
	el_bundle_plan plan;
	int rc;

	if (el_json_write(lm.m, &b, 2) != 0) {
		rc = el_error_set(p->ctx, ENVLOCK_ELIMIT, "'%s': the manifest is too large", out);
		goto done;
	}
	for (size_t i = 0; i < p->nstaged; i++)
		items[i] = p->staged[i].it;
	memset(&bo, 0, sizeof(bo));
	bo.lock_path = lock_path;
	bo.progress = p->opts->progress;
	bo.on_warning = p->opts->on_warning;
	bo.warning_data = p->opts->warning_data;
	memset(&plan, 0, sizeof(plan));
	plan.name = stem;
	plan.dirs = dirs;
	plan.ndirs = 3;
	plan.items = items;
	plan.nitems = p->nstaged;
	plan.late_path = PK_MANIFEST;
	plan.late_size = b.len;
	plan.late = late_text;
	plan.late_data = &lm;
	rc = el_bundle_create_plan(p->ctx, &plan, out, &bo);
	for (size_t i = 0; i < p->nstaged; i++)
		if (items[i].mismatch)
			rc = PK_AGAIN;
done:
	free(items);
	el_buf_release(&b);
	cJSON_Delete(lm.m);
	return rc;
}

/* Where the kit goes: an empty or new folder, or (force) a folder to replace. */
static int check_out(envlock_ctx *ctx, const char *out, bool archive, bool force)
{
	struct stat st;

	if (lstat(out, &st) != 0)
		return errno == ENOENT ? 0 : el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", out, el_strerror(errno));
	if (archive) {
		if (!S_ISREG(st.st_mode))
			return el_error_set(ctx, ENVLOCK_EEXISTS, "'%s': exists and is not a file", out);
		return force ? 0 : el_error_set(ctx, ENVLOCK_EEXISTS, "'%s': exists (--force replaces it)", out);
	}
	if (!S_ISDIR(st.st_mode))
		return el_error_set(ctx, ENVLOCK_EEXISTS, "'%s': exists and is not a folder", out);
	if (!empty_dir(out) && !force)
		return el_error_set(ctx, ENVLOCK_EEXISTS, "'%s': exists and is not empty (--force replaces it)", out);
	return 0;
}

/* A folder named on the command line must be one: a typo would quietly leave its wheels out. */
static int check_dir(envlock_ctx *ctx, const char *flag, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return el_error_set(ctx, ENVLOCK_ENOTFOUND, "%s '%s': %s", flag, dir, el_strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s '%s': not a folder", flag, dir);
	return 0;
}

static int check_dirs(envlock_ctx *ctx, const envlock_pack_opts *opts)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < opts->wheel_dir_count; i++)
		rc = check_dir(ctx, "--wheels", opts->wheel_dirs[i]);
	for (size_t i = 0; rc == 0 && i < opts->conda_pkgs_count; i++)
		rc = check_dir(ctx, "--conda-pkgs", opts->conda_pkgs[i]);
	if (rc == 0 && opts->pip_cache)
		rc = check_dir(ctx, "--pip-cache", opts->pip_cache);
	return rc;
}

/*
 * Put the finished kit folder tmp at out (a folder), replacing an old one
 * (or an empty one) only now, at once; a signal until then leaves out as
 * it was.
 */
static int put_in_place(envlock_ctx *ctx, const char *tmp, const char *out)
{
	struct stat st;

	if (el_interrupted())
		return el_interrupt_error(ctx, out);
	if (el_dir_rename(tmp, out, lstat(out, &st) == 0) != 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", out, el_strerror(errno));
	return 0;
}

/*
 * One pack into out. staging (a .tar.zst only): nothing is copied or
 * hashed here, the bundle writer reads each item once; PK_AGAIN when one
 * was not what the lock says, with nothing written (the lines and
 * warnings were held back, so that the pack that checks first says them
 * as it always has).
 */
static int pack_kit(envlock_pack_report *report, envlock_ctx *ctx, const envlock_lock *lock,
		    const char *lock_path, const char *out, const envlock_pack_opts *opts, FILE *stream,
		    bool staging)
{
	bool archive = el_ends_with(out, ".tar.zst");
	char *tmp = NULL, *stem = NULL, *held = NULL;
	size_t held_len = 0;
	pk_pack p;
	pk_digest ld;
	int rc;

	memset(report, 0, sizeof(*report));
	memset(&p, 0, sizeof(p));
	tmp = el_xasprintf("%s.tmp-XXXXXX", out);
	if (!mkdtemp(tmp)) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': cannot create a folder beside it: %s", out, el_strerror(errno));
		free(tmp);
		return rc;
	}
	p.ctx = ctx;
	p.opts = opts;
	p.v = el_lock_view(lock);
	p.stream = stream;
	p.staging = staging;
	p.warnings = (el_strvec)EL_STRVEC_INIT;
	if (staging && stream && !(p.stream = open_memstream(&held, &held_len)))
		el_oom();
	/* a .tar.zst's folder is read once more by the bundle writer, then removed: no need for copies */
	p.link = opts->link || archive;
	if (archive) {
		const char *base = el_path_base(out);

		stem = el_xstrndup(base, strlen(base) - strlen(".tar.zst"));
		if (!*stem) {
			free(stem);
			stem = el_xstrdup("kit");
		}
		p.kit = el_path_join(tmp, stem);
		if (mkdir(p.kit, 0755) != 0) {
			rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", p.kit, el_strerror(errno));
			goto done;
		}
	} else {
		p.kit = el_xstrdup(tmp);
		/* mkdtemp's 0700, made what mkdir would have made */
		{
			mode_t um = umask(0);

			umask(um);
			chmod(p.kit, 0777 & ~um);
		}
	}
	{
		const char *sub[] = { "conda", "wheels", "files" };

		for (size_t i = 0; i < 3; i++) {
			char *d = el_path_join(p.kit, sub[i]);

			if (mkdir(d, 0755) != 0 && errno != EEXIST) {
				rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", d, el_strerror(errno));
				free(d);
				goto done;
			}
			free(d);
		}
	}
	{
		char *dst = el_path_join(p.kit, PK_LOCK);

		rc = pk_copy(ctx, lock_path, 0, -1, dst, false, false, &ld, NULL);
		if (rc == 0 && staging) {
			el_bundle_item it;
			pk_digest d;

			/* the copy, read again by the writer: the bytes it archives are the ones hashed here */
			if ((rc = pk_stage(ctx, dst, 0, -1, false, &it, &d)) == 0)
				pk_stage_add(&p, &it, NULL, PK_LOCK, ld.sha256, NULL);
		}
		free(dst);
		if (rc != 0)
			goto done;
	}
	if ((rc = add_files(&p)) != 0)
		goto done;
	pk_conda(&p);
	pk_pip(&p);
	/* a signal in the middle of them made items look missing: this kit is not the lock's */
	if (el_interrupted()) {
		rc = el_interrupt_error(ctx, out);
		goto done;
	}
	report->items = p.items.n;
	report->missing = p.missing.n;
	report->not_needed = p.not_needed;
	if (staging) {
		rc = write_staged(&p, lock, &ld, lock_path, stem, out);
	} else if ((rc = write_manifest(&p, lock, &ld)) != 0) {
		goto done;
	} else if (archive) {
		envlock_bundle_opts bo;

		memset(&bo, 0, sizeof(bo));
		bo.lock_path = lock_path;
		bo.progress = opts->progress;
		bo.on_warning = opts->on_warning;
		bo.warning_data = opts->warning_data;
		rc = envlock_bundle_create(ctx, p.kit, out, &bo);
	} else {
		rc = put_in_place(ctx, tmp, out);
	}
	if (rc == 0)
		pk_say(&p, "kit      %s: %zu items, %zu missing, %zu not needed", out, report->items,
		       report->missing, report->not_needed);
done:
	if (staging && p.stream)
		fclose(p.stream);
	if (staging && rc != PK_AGAIN) {
		/* what a pack that checks first would have said, now that this one stands (or failed) */
		if (held && held_len)
			fwrite(held, 1, held_len, stream);
		for (size_t i = 0; i < p.warnings.n && opts->on_warning; i++)
			opts->on_warning(p.warnings.v[i], opts->warning_data);
	}
	free(held);
	el_strvec_release(&p.warnings);
	/* the staging folder is envlock's: a failure in it is said of the kit the user named */
	if (rc != 0 && rc != PK_AGAIN)
		el_error_restate_staged(ctx, rc, tmp, out);
	if (rc != 0 || archive)
		el_remove_tree(tmp);
	entries_release(&p.items);
	entries_release(&p.missing);
	for (size_t i = 0; i < p.nstaged; i++) {
		pk_staged *st = &p.staged[i];

		free(st->rel), free(st->src), free(st->want_sha256), free(st->want_md5);
	}
	free(p.staged);
	pk_wheels_free(&p);
	free(p.kit);
	free(stem);
	free(tmp);
	return rc;
}

int envlock_pack(envlock_pack_report *report, envlock_ctx *ctx, const envlock_lock *lock,
		 const char *lock_path, const char *out, const envlock_pack_opts *opts, FILE *stream)
{
	static const envlock_pack_opts none;
	bool archive = el_ends_with(out, ".tar.zst");
	int rc;

	memset(report, 0, sizeof(*report));
	if (!opts)
		opts = &none;
	if ((rc = el_lock_check_untrusted(ctx, lock)) != 0) {
		char why[1024];

		snprintf(why, sizeof(why), "%s", envlock_error_last(ctx));
		return el_error_set(ctx, rc, "'%s': %s", lock_path, why);
	}
	if ((rc = check_dirs(ctx, opts)) != 0 || (rc = check_out(ctx, out, archive, opts->force)) != 0)
		return rc;
	/* a signal is polled from here on: the staging folder is removed, out stays as it was */
	el_interrupt_poll_begin();
	/*
	 * A .tar.zst is written in one pass over the caches' files. A cache
	 * file found not to be the lock's is only known at its end, when it is
	 * already in the archive: that archive is dropped and the kit made
	 * again the careful way (each file checked before the bundle writer
	 * reads it), which leaves the file out and says why, as always.
	 */
	rc = archive ? pack_kit(report, ctx, lock, lock_path, out, opts, stream, true) : PK_AGAIN;
	if (rc == PK_AGAIN && !el_interrupted())
		rc = pack_kit(report, ctx, lock, lock_path, out, opts, stream, false);
	if (rc != 0 && el_interrupted())
		rc = el_interrupt_error(ctx, out);
	el_interrupt_poll_end();
	return rc;
}
