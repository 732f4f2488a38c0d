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
#include "util/text.h"
#include "util/xalloc.h"

/* The next entry, which must be the regular file name, read whole (capped). */
static int read_meta(el_buf *out, envlock_ctx *ctx, struct archive *a, const char *archive, const char *name)
{
	struct archive_entry *e;
	const void *p;
	size_t n;
	la_int64_t off;
	int st;

	if (archive_read_next_header(a, &e) != ARCHIVE_OK || strcmp(archive_entry_pathname(e), name) != 0 ||
	    archive_entry_filetype(e) != AE_IFREG)
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not an envlock bundle (no %s where it belongs)", archive, name);
	if (archive_entry_size(e) > (la_int64_t)out->limit)
		return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': %s larger than 64 MiB", archive, name);
	while ((st = archive_read_data_block(a, &p, &n, &off)) == ARCHIVE_OK) {
		if (off != (la_int64_t)out->len)
			return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': %s is stored as a sparse file", archive, name);
		if (el_buf_put(out, p, n) != 0)
			return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': %s larger than 64 MiB", archive, name);
	}
	if (st != ARCHIVE_EOF)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", archive, el_archive_reason(a));
	return 0;
}

/* Open an archive and read its lock and manifest. */
static int open_bundle(el_bstream **s, el_buf *lock, cJSON **manifest, envlock_ctx *ctx, const char *path)
{
	el_buf m = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	int rc;

	*manifest = NULL;
	if ((rc = el_bstream_open(s, ctx, path)) != 0)
		return rc;
	if ((rc = read_meta(lock, ctx, el_bstream_archive(*s), path, EL_BUNDLE_LOCK)) == 0 &&
	    (rc = read_meta(&m, ctx, el_bstream_archive(*s), path, EL_BUNDLE_MANIFEST)) == 0) {
		*manifest = cJSON_ParseWithLength(m.data ? m.data : "", m.len);
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

static void problem(FILE *out, envlock_bundle_report *rep, const char *path, const char *what)
{
	rep->problems++;
	if (out)
		fprintf(out, "%s: %s\n", path, what);
}

/* path without its trailing slashes: tar writes folders as "name/", the manifest without */
static size_t plain_len(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n;
}

/* Index the manifest's records by path; a path listed twice is a problem. */
static void index_manifest(const cJSON *manifest, el_bindex *idx, FILE *out, envlock_bundle_report *rep)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, el_jget(manifest, "files")) {
		const char *path = el_jget_str(f, "path");
		el_bnode *nd;

		if (!path || !*path)
			continue;
		nd = el_bindex_find(idx, path, plain_len(path), 1);
		if (nd->want)
			problem(out, rep, nd->path, "listed twice in the manifest");
		else
			nd->want = f;
	}
}

/* Hash an entry's data as it comes out of the archive; a sparse entry (never written by envlock) is refused. */
static int hash_entry(struct archive *a, char hex[EL_SHA256_HEX], long long *size, int *sparse)
{
	el_sha256 *h = el_sha256_begin();
	const void *p;
	size_t n;
	la_int64_t off;
	int st;

	*size = 0;
	*sparse = 0;
	while ((st = archive_read_data_block(a, &p, &n, &off)) == ARCHIVE_OK) {
		if (off != *size) {
			*sparse = 1;
			continue;
		}
		el_sha256_update(h, p, n);
		*size += (long long)n;
	}
	el_sha256_end(h, hex);
	return st == ARCHIVE_EOF ? 0 : -1;
}

/* One entry after the head: compare it with its manifest record. Returns -1 when the archive cannot be read on. */
static int verify_entry(envlock_bundle_report *rep, envlock_ctx *ctx, struct archive *a, struct archive_entry *e,
			const char *archive, el_bindex *idx, FILE *stream)
{
	const char *raw = el_archive_pathname(e), *type;
	char path[4096];
	el_bnode *nd;
	const cJSON *want;
	mode_t ft = archive_entry_filetype(e);

	snprintf(path, sizeof(path), "%.*s", raw ? (int)plain_len(raw) : 0, raw ? raw : "");
	rep->entries++;
	nd = el_bindex_find(idx, path, strlen(path), 0);
	if (!nd || !nd->want) {
		problem(stream, rep, path, "in the archive but not in the manifest");
		return 0;
	}
	if (nd->made) {
		problem(stream, rep, path, "appears twice");
		return 0;
	}
	nd->made = ft == AE_IFDIR ? EL_MADE_DIR : ft == AE_IFLNK ? EL_MADE_LINK : EL_MADE_FILE;
	want = nd->want;
	type = el_jget_str(want, "type");
	if (ft == AE_IFREG && type && strcmp(type, "file") == 0 && !archive_entry_hardlink(e)) {
		char hex[EL_SHA256_HEX];
		long long size;
		int sparse;

		if (hash_entry(a, hex, &size, &sparse) != 0) {
			el_error_set(ctx, ENVLOCK_EIO, "'%s': entry '%s': %s", archive, path, el_archive_reason(a));
			return -1;
		}
		if (!el_jget_bool(want, "stored", true))
			problem(stream, rep, path, "stored, but the manifest says it was left out");
		else if (sparse)
			problem(stream, rep, path, "stored as a sparse file, which envlock never writes");
		else if (size != el_jget_int(want, "size", -1) || !el_jget_str(want, "sha256") ||
			 strcmp(hex, el_jget_str(want, "sha256")) != 0)
			problem(stream, rep, path, "content does not match its sha256 in the manifest");
	} else if (ft == AE_IFLNK && type && strcmp(type, "symlink") == 0) {
		const char *t = el_archive_symlink(e), *wt = el_jget_str(want, "target");

		if (!t || !wt || strcmp(t, wt) != 0)
			problem(stream, rep, path, "symlink target does not match the manifest");
	} else if (!(ft == AE_IFDIR && type && strcmp(type, "dir") == 0)) {
		problem(stream, rep, path, "entry type does not match the manifest");
	}
	return 0;
}

int envlock_bundle_verify(envlock_bundle_report *rep, envlock_ctx *ctx, const char *archive, FILE *stream)
{
	el_buf lockbuf = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	cJSON *manifest = NULL;
	const cJSON *f;
	struct archive_entry *e;
	el_bstream *s = NULL;
	el_bindex idx;
	struct archive *a;
	int rc, st;

	memset(rep, 0, sizeof(*rep));
	memset(&idx, 0, sizeof(idx));
	if ((rc = open_bundle(&s, &lockbuf, &manifest, ctx, archive)) != 0)
		goto done;
	a = el_bstream_archive(s);
	/* the lock in the bundle is the one the manifest names */
	{
		envlock_lock lock = { 0 };

		lock.doc = cJSON_ParseWithLength(el_buf_cstr(&lockbuf), lockbuf.len);
		/* integers past 2^53 as their digits, as loading a lock reads them, for the same id */
		el_json_exact_ints(lock.doc, el_buf_cstr(&lockbuf), lockbuf.len);
		if (!cJSON_IsObject(lock.doc)) {
			problem(stream, rep, EL_BUNDLE_LOCK, "not valid JSON");
		} else {
			el_lock_compute_id(&lock);
			if (!el_jget_str(manifest, "lock_id") || strcmp(lock.id, el_jget_str(manifest, "lock_id")) != 0)
				problem(stream, rep, EL_BUNDLE_LOCK, "its id does not match the manifest's lock_id");
		}
		cJSON_Delete(lock.doc);
	}
	index_manifest(manifest, &idx, stream, rep);
	while ((st = archive_read_next_header(a, &e)) == ARCHIVE_OK)
		if (verify_entry(rep, ctx, a, e, archive, &idx, stream) != 0) {
			rc = ENVLOCK_EIO;
			goto done;
		}
	if (st != ARCHIVE_EOF) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", archive, el_archive_reason(a));
		goto done;
	}
	cJSON_ArrayForEach(f, el_jget(manifest, "files")) {
		const char *path = el_jget_str(f, "path");
		const el_bnode *nd = path && *path ? el_bindex_find(&idx, path, plain_len(path), 0) : NULL;

		if (nd && nd->want == f && !nd->made && el_jget_bool(f, "stored", true))
			problem(stream, rep, nd->path, "in the manifest but missing from the archive");
	}
done:
	el_bindex_release(&idx);
	el_bstream_close(s);
	cJSON_Delete(manifest);
	el_buf_release(&lockbuf);
	return rc;
}

/* s as the terminal should see it (el_term_text), in b; "-" when there is none. */
static const char *shown(el_buf *b, const char *s)
{
	el_buf_reset(b);
	if (!s)
		return "-";
	if (el_term_text(b, s) != 0)
		return "?";
	return el_buf_cstr(b);
}

int envlock_bundle_list(envlock_ctx *ctx, const char *archive, FILE *out, int json)
{
	el_buf lockbuf = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	cJSON *manifest = NULL, *f;
	el_bstream *s = NULL;
	int rc;

	if ((rc = open_bundle(&s, &lockbuf, &manifest, ctx, archive)) == 0) {
		if (json) {
			el_buf b = EL_BUF_INIT(EL_BUNDLE_MAX_META);

			el_json_write_term(manifest, &b, 2);
			fputs(el_buf_cstr(&b), out);
			el_buf_release(&b);
		} else {
			/* the manifest is the archive's, untrusted: its text reaches the terminal escaped */
			el_buf t1 = EL_BUF_INIT(EL_BUNDLE_MAX_META), t2 = EL_BUF_INIT(EL_BUNDLE_MAX_META);

			fprintf(out, "lock %s\n", shown(&t1, el_jget_str(manifest, "lock_id")));
			cJSON_ArrayForEach(f, el_jget(manifest, "files")) {
				const char *type = el_jget_str(f, "type"), *sha = el_jget_str(f, "sha256");

				if (type && strcmp(type, "file") == 0)
					fprintf(out, "%-7s %12lld  %.12s  ", el_jget_bool(f, "stored", true) ? "file" : "digest",
						el_jget_int(f, "size", 0), sha && el_term_safe(sha) ? sha : "?");
				else if (type && strcmp(type, "symlink") == 0)
					fprintf(out, "%-7s %12s  %-12s  ", "symlink", "", "");
				else
					fprintf(out, "%-7s %12s  %-12s  ", "dir", "", "");
				fputs(shown(&t1, el_jget_str(f, "path")), out);
				if (type && strcmp(type, "symlink") == 0)
					fprintf(out, " -> %s", shown(&t2, el_jget_str(f, "target")));
				else if (!type || strcmp(type, "file") != 0)
					fputc('/', out);
				fputc('\n', out);
			}
			el_buf_release(&t1);
			el_buf_release(&t2);
		}
	}
	el_bstream_close(s);
	cJSON_Delete(manifest);
	el_buf_release(&lockbuf);
	return rc;
}
