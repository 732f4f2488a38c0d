/*
 * A conda package archive into a package cache folder, through libarchive:
 * a .tar.bz2 (a bzip2'd tar of info/ and the files), or a .conda (a zip,
 * stored, holding metadata.json, info-*.tar.zst and pkg-*.tar.zst; CEP
 * conda/ceps cep-0002 "the .conda format", and conda-package-streaming's
 * reader, which reads the two inner tars the same way). Every entry's path
 * is checked (relative, no "..", no control characters) before it is
 * written; only files, folders, symbolic links and hard links (to a path
 * of the same archive) are taken; sizes and counts are capped.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "condalink/internal.h"
#include "lock/untrusted.h"
#include "util/error.h"
#include "util/interrupt.h"
#include "util/root.h"
#include "util/xalloc.h"

typedef struct {
	struct archive *outer;
	char buf[1u << 16];
} inner_src;

static la_ssize_t inner_read(struct archive *a, void *data, const void **buf)
{
	inner_src *s = data;

	(void)a;
	*buf = s->buf;
	return archive_read_data(s->outer, s->buf, sizeof(s->buf));
}

/* "./x" and "x" are the same entry; NULL when nothing is left (the archive's "." itself). */
static const char *entry_rel(const char *name)
{
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	while (name[0] == '/' && name[1] == '\0')
		name++;
	return *name ? name : NULL;
}

static int set_err(cl_pkg *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_err(cl_pkg *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->err) {
		va_start(ap, fmt);
		p->err = el_xvasprintf(fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Every entry of the tar stream in, written under p->cache. */
static int copy_tar(cl_pkg *p, struct archive *in, const char *what)
{
	struct archive *out = archive_write_disk_new();
	struct archive_entry *e;
	int r, rc = 0;

	/* no owner, no links followed on the way, no ".." (the paths are checked before as well) */
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
					    ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		const char *name = entry_rel(archive_entry_pathname(e) ?: ""), *why, *hl;
		mode_t type = archive_entry_filetype(e);
		char *full;

		if (el_interrupted()) {
			rc = set_err(p, "interrupted");
			break;
		}
		if (!name)
			continue;
		if ((why = el_bad_rel_path(name)) != NULL) {
			rc = set_err(p, "%s: entry '%s': %s", what, name, why);
			break;
		}
		if (++p->entries > EL_CLINK_FILES_MAX) {
			rc = set_err(p, "%s: more than %u entries", what, EL_CLINK_FILES_MAX);
			break;
		}
		if ((hl = archive_entry_hardlink(e)) != NULL) {
			const char *t = entry_rel(hl);

			if (!t || (why = el_bad_rel_path(t)) != NULL) {
				rc = set_err(p, "%s: entry '%s': a hard link to '%s': %s", what, name, hl, why ? why : "empty");
				break;
			}
			full = el_path_join(p->cache, t);
			archive_entry_set_hardlink(e, full);
			free(full);
		} else if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
			rc = set_err(p, "%s: entry '%s': not a file, folder or link", what, name);
			break;
		}
		if (archive_entry_size(e) < 0 || (uint64_t)archive_entry_size(e) > EL_CLINK_FILE_MAX) {
			rc = set_err(p, "%s: entry '%s': larger than the limit of %llu bytes", what, name,
				     (unsigned long long)EL_CLINK_FILE_MAX);
			break;
		}
		archive_entry_set_uid(e, 0);
		archive_entry_set_gid(e, 0);
		archive_entry_set_perm(e, archive_entry_perm(e) & 0777);
		full = el_path_join(p->cache, name);
		archive_entry_set_pathname(e, full);
		free(full);
		if (archive_write_header(out, e) != ARCHIVE_OK) {
			rc = set_err(p, "%s: entry '%s': %s", what, name, archive_error_string(out) ?: "cannot be written");
			break;
		}
		if (archive_entry_size(e) > 0 && type == AE_IFREG) {
			const void *buf;
			size_t len;
			la_int64_t off;

			while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK)
				if (archive_write_data_block(out, buf, len, off) != ARCHIVE_OK) {
					r = ARCHIVE_FATAL;
					rc = set_err(p, "%s: entry '%s': %s", what, name, archive_error_string(out) ?: "write failed");
					break;
				}
			if (r != ARCHIVE_EOF) {
				rc = set_err(p, "%s: entry '%s': %s", what, name,
					     archive_error_string(in) ?: "truncated");
				break;
			}
		}
		if (archive_write_finish_entry(out) != ARCHIVE_OK) {
			rc = set_err(p, "%s: entry '%s': %s", what, name, archive_error_string(out) ?: "cannot be written");
			break;
		}
	}
	if (rc == 0 && r != ARCHIVE_EOF)
		rc = set_err(p, "%s: %s", what, archive_error_string(in) ?: "not a readable archive (truncated?)");
	if (archive_write_close(out) != ARCHIVE_OK && rc == 0)
		rc = set_err(p, "%s: %s", what, archive_error_string(out) ?: "cannot be written");
	archive_write_free(out);
	return rc;
}

static int unpack_tar_bz2(cl_pkg *p)
{
	struct archive *a = archive_read_new();
	int rc;

	archive_read_support_filter_bzip2(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, p->in->archive, 1u << 16) != ARCHIVE_OK)
		rc = set_err(p, "%s", archive_error_string(a) ?: "cannot be opened");
	else
		rc = copy_tar(p, a, "the archive");
	archive_read_free(a);
	return rc;
}

static int unpack_conda(cl_pkg *p)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int r, rc = 0, inner = 0;

	/* the zip's central directory, not its local headers: what zipfile and conda read */
	archive_read_support_format_zip_seekable(a);
	if (archive_read_open_filename(a, p->in->archive, 1u << 16) != ARCHIVE_OK) {
		rc = set_err(p, "%s", archive_error_string(a) ?: "cannot be opened");
		goto done;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e) ?: "";
		size_t len = strlen(name);
		struct archive *t;
		inner_src *src;

		if (!(len > 8 && strcmp(name + len - 8, ".tar.zst") == 0 &&
		      (strncmp(name, "info-", 5) == 0 || strncmp(name, "pkg-", 4) == 0)) || strchr(name, '/'))
			continue;
		src = el_xmalloc(sizeof(*src));
		src->outer = a;
		t = archive_read_new();
		archive_read_support_filter_zstd(t);
		archive_read_support_format_tar(t);
		if (archive_read_open(t, src, NULL, inner_read, NULL) != ARCHIVE_OK)
			rc = set_err(p, "%s: %s", name, archive_error_string(t) ?: archive_error_string(a) ?: "not a tar.zst");
		else
			rc = copy_tar(p, t, name);
		archive_read_free(t);
		free(src);
		if (rc != 0)
			goto done;
		inner++;
	}
	if (r != ARCHIVE_EOF)
		rc = set_err(p, "%s", archive_error_string(a) ?: "not a readable zip (truncated?)");
	else if (inner != 2)
		rc = set_err(p, "not a .conda package: it must hold one info-*.tar.zst and one pkg-*.tar.zst");
done:
	archive_read_free(a);
	return rc;
}

int el_clink_unpack(cl_pkg *p)
{
	size_t len = strlen(p->in->archive);

	if (len > 6 && strcmp(p->in->archive + len - 6, ".conda") == 0)
		return unpack_conda(p);
	if (len > 8 && strcmp(p->in->archive + len - 8, ".tar.bz2") == 0)
		return unpack_tar_bz2(p);
	return set_err(p, "not a conda package archive (.conda or .tar.bz2)");
}
