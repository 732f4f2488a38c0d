/* Reading bundles: verify every digest against the manifest, list the manifest. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/xalloc.h"

typedef struct {
	struct archive *a;
	const char *path;
} reader;

static int open_reader(envlock_ctx *ctx, reader *r, const char *path)
{
	r->path = path;
	r->a = archive_read_new();
	if (!r->a)
		el_oom();
	archive_read_support_filter_zstd(r->a);
	archive_read_support_format_tar(r->a);
	if (archive_read_open_filename(r->a, path, EL_BUNDLE_CHUNK) != ARCHIVE_OK) {
		int rc = el_error_set(ctx, errno == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO, "'%s': %s", path,
				      el_archive_reason(r->a));

		archive_read_free(r->a);
		r->a = NULL;
		return rc;
	}
	return 0;
}

/* The next entry, which must be the regular file name, read whole (capped). */
static int read_meta(envlock_ctx *ctx, reader *r, const char *name, el_buf *out)
{
	struct archive_entry *e;
	char chunk[65536];
	la_ssize_t n;

	if (archive_read_next_header(r->a, &e) != ARCHIVE_OK || strcmp(archive_entry_pathname(e), name) != 0 ||
	    archive_entry_filetype(e) != AE_IFREG)
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not an envlock bundle (no %s where it belongs)", r->path, name);
	while ((n = archive_read_data(r->a, chunk, sizeof(chunk))) > 0)
		if (el_buf_put(out, chunk, (size_t)n) != 0)
			return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': %s larger than 64 MiB", r->path, name);
	if (n < 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", r->path, el_archive_reason(r->a));
	return 0;
}

/* Open an archive and read its lock and manifest. */
static int open_bundle(envlock_ctx *ctx, reader *r, const char *path, el_buf *lock, cJSON **manifest)
{
	el_buf m = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	int rc;

	*manifest = NULL;
	if ((rc = open_reader(ctx, r, path)) != 0)
		return rc;
	if ((rc = read_meta(ctx, r, EL_BUNDLE_LOCK, lock)) == 0 &&
	    (rc = read_meta(ctx, r, EL_BUNDLE_MANIFEST, &m)) == 0) {
		*manifest = cJSON_ParseWithLength(m.data, m.len);
		if (!cJSON_IsObject(*manifest) || el_jget_int(*manifest, "envlock_manifest", 0) != 1 ||
		    !cJSON_IsArray(el_jget(*manifest, "files"))) {
			cJSON_Delete(*manifest);
			*manifest = NULL;
			rc = el_error_set(ctx, ENVLOCK_EPARSE, "'%s': MANIFEST.json is not an envlock manifest", path);
		}
	}
	el_buf_release(&m);
	return rc;
}

static const char *str_or_dash(const char *s)
{
	return s ? s : "-";
}

static void problem(FILE *out, envlock_bundle_report *rep, const char *path, const char *what)
{
	rep->problems++;
	if (out)
		fprintf(out, "%s: %s\n", path, what);
}

int envlock_bundle_verify(envlock_ctx *ctx, const char *archive, FILE *out, envlock_bundle_report *rep)
{
	el_buf lockbuf = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	cJSON *manifest = NULL, *f, *seen;
	struct archive_entry *e;
	reader r = { NULL, archive };
	char *buf = NULL;
	int rc, st;

	memset(rep, 0, sizeof(*rep));
	if ((rc = open_bundle(ctx, &r, archive, &lockbuf, &manifest)) != 0)
		goto done;
	/* the lock in the bundle is the one the manifest names */
	{
		envlock_lock lock = { 0 };

		lock.doc = cJSON_ParseWithLength(lockbuf.data, lockbuf.len);
		if (!cJSON_IsObject(lock.doc)) {
			problem(out, rep, EL_BUNDLE_LOCK, "not valid JSON");
		} else {
			el_lock_compute_id(&lock);
			if (!el_jget_str(manifest, "lock_id") || strcmp(lock.id, el_jget_str(manifest, "lock_id")) != 0)
				problem(out, rep, EL_BUNDLE_LOCK, "its id does not match the manifest's lock_id");
		}
		cJSON_Delete(lock.doc);
	}
	seen = cJSON_CreateObject();
	if (!seen)
		el_oom();
	buf = el_xmalloc(EL_BUNDLE_CHUNK);
	while ((st = archive_read_next_header(r.a, &e)) == ARCHIVE_OK) {
		char path[4096];
		const cJSON *want = NULL;
		const char *type;
		size_t pl;

		/* tar writes folders as "name/"; the manifest names them without the slash */
		snprintf(path, sizeof(path), "%s", archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
		pl = strlen(path);
		while (pl > 1 && path[pl - 1] == '/')
			path[--pl] = '\0';
		rep->entries++;
		cJSON_ArrayForEach(f, el_jget(manifest, "files"))
			if (el_jget_str(f, "path") && strcmp(el_jget_str(f, "path"), path) == 0) {
				want = f;
				break;
			}
		if (!want) {
			problem(out, rep, path, "in the archive but not in the manifest");
			continue;
		}
		if (el_jget(seen, path)) {
			problem(out, rep, path, "appears twice");
			continue;
		}
		cJSON_AddItemToObject(seen, path, cJSON_CreateTrue());
		type = el_jget_str(want, "type");
		if (archive_entry_filetype(e) == AE_IFREG && type && strcmp(type, "file") == 0) {
			el_sha256 *h = el_sha256_begin();
			char hex[EL_SHA256_HEX];
			la_ssize_t n;
			long long size = 0;

			while ((n = archive_read_data(r.a, buf, EL_BUNDLE_CHUNK)) > 0) {
				el_sha256_update(h, buf, (size_t)n);
				size += n;
			}
			el_sha256_end(h, hex);
			if (n < 0) {
				rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': entry '%s': %s", archive, path, el_archive_reason(r.a));
				goto done_seen;
			}
			if (!el_jget_bool(want, "stored", true))
				problem(out, rep, path, "stored, but the manifest says it was left out");
			else if (size != el_jget_int(want, "size", -1) || !el_jget_str(want, "sha256") ||
				 strcmp(hex, el_jget_str(want, "sha256")) != 0)
				problem(out, rep, path, "content does not match its sha256 in the manifest");
		} else if (archive_entry_filetype(e) == AE_IFLNK && type && strcmp(type, "symlink") == 0) {
			const char *t = archive_entry_symlink(e), *wt = el_jget_str(want, "target");

			if (!t || !wt || strcmp(t, wt) != 0)
				problem(out, rep, path, "symlink target does not match the manifest");
		} else if (!(archive_entry_filetype(e) == AE_IFDIR && type && strcmp(type, "dir") == 0)) {
			problem(out, rep, path, "entry type does not match the manifest");
		}
	}
	if (st != ARCHIVE_EOF) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", archive,
				  el_archive_reason(r.a));
		goto done_seen;
	}
	cJSON_ArrayForEach(f, el_jget(manifest, "files")) {
		const char *path = el_jget_str(f, "path");

		if (path && !el_jget(seen, path) && el_jget_bool(f, "stored", true))
			problem(out, rep, path, "in the manifest but missing from the archive");
	}
done_seen:
	cJSON_Delete(seen);
done:
	free(buf);
	cJSON_Delete(manifest);
	el_buf_release(&lockbuf);
	if (r.a)
		archive_read_free(r.a);
	return rc;
}

int envlock_bundle_list(envlock_ctx *ctx, const char *archive, FILE *out, int json)
{
	el_buf lockbuf = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	cJSON *manifest = NULL, *f;
	reader r = { NULL, archive };
	int rc;

	if ((rc = open_bundle(ctx, &r, archive, &lockbuf, &manifest)) == 0) {
		if (json) {
			el_buf b = EL_BUF_INIT(EL_BUNDLE_MAX_META);

			el_json_write(manifest, &b, 2);
			fputs(el_buf_cstr(&b), out);
			el_buf_release(&b);
		} else {
			fprintf(out, "lock %s\n", str_or_dash(el_jget_str(manifest, "lock_id")));
			cJSON_ArrayForEach(f, el_jget(manifest, "files")) {
				const char *type = el_jget_str(f, "type"), *sha = el_jget_str(f, "sha256");

				if (type && strcmp(type, "file") == 0)
					fprintf(out, "%-7s %12lld  %.12s  %s\n", el_jget_bool(f, "stored", true) ? "file" : "digest",
						el_jget_int(f, "size", 0), sha ? sha : "?", str_or_dash(el_jget_str(f, "path")));
				else if (type && strcmp(type, "symlink") == 0)
					fprintf(out, "%-7s %12s  %-12s  %s -> %s\n", "symlink", "", "", str_or_dash(el_jget_str(f, "path")),
						str_or_dash(el_jget_str(f, "target")));
				else
					fprintf(out, "%-7s %12s  %-12s  %s/\n", "dir", "", "", str_or_dash(el_jget_str(f, "path")));
			}
		}
	}
	cJSON_Delete(manifest);
	el_buf_release(&lockbuf);
	if (r.a)
		archive_read_free(r.a);
	return rc;
}
