/*
 * A conda package archive into a package cache folder, through libarchive:
 * a .tar.bz2 (a bzip2'd tar of info/ and the files), or a .conda (a zip,
 * stored, holding metadata.json, info-*.tar.zst and pkg-*.tar.zst; CEP
 * conda/ceps cep-0002 "the .conda format", and conda-package-streaming's
 * reader, which reads the two inner tars the same way). Every entry's path
 * is checked (relative, no "..", no control characters) before anything
 * of it is written; only files, folders, symbolic links and hard links (to
 * a file of the same archive) are taken; sizes and counts are capped. A
 * file goes into the flat package cache under a number, never by its own
 * path, so no link of the archive is ever written through.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "condalink/internal.h"
#include "lock/untrusted.h"
#include "util/atomic.h"
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

const char *const el_clink_info_names[CL_INFO_N] = {
	"info/index.json", "info/paths.json", "info/files", "info/has_prefix", "info/no_link", "info/link.json",
};

static cl_entry *add_entry(cl_pkg *p, const char *name)
{
	cl_entry *e;

	EL_GROW(p->ents, p->nents + 1, p->ents_cap);
	e = &p->ents[p->nents++];
	memset(e, 0, sizeof(*e));
	e->name = el_xstrdup(name);
	e->file = -1;
	return e;
}

char *el_clink_cached(const cl_pkg *p, const cl_entry *e)
{
	return el_xasprintf("%s%ld", p->cache, e->file);
}

/* A file's data from the archive into a new file of the cache (holes as the archive has them). */
static int write_data(cl_pkg *p, struct archive *in, const char *what, const char *name, cl_entry *e, time_t mtime)
{
	char *path = el_clink_cached(p, e);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), r, rc = 0;
	const void *buf;
	size_t len;
	la_int64_t off, at = 0;

	if (fd < 0) {
		rc = set_err(p, "'%s': %s", path, el_strerror(errno));
		free(path);
		return rc;
	}
	while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK) {
		if (off != at && lseek(fd, off, SEEK_SET) < 0) {
			rc = set_err(p, "'%s': %s", path, el_strerror(errno));
			break;
		}
		if (el_write_all(fd, buf, len) != 0) {
			rc = set_err(p, "'%s': %s", path, el_strerror(errno));
			break;
		}
		at = off + (la_int64_t)len;
	}
	if (rc == 0 && r != ARCHIVE_EOF)
		rc = set_err(p, "%s: entry '%s': %s", what, name, archive_error_string(in) ?: "truncated");
	/* the size the header gave, trailing hole included; the package's mode and time */
	if (rc == 0 && (ftruncate(fd, (off_t)e->size) != 0 || fchmod(fd, e->mode) != 0))
		rc = set_err(p, "'%s': %s", path, el_strerror(errno));
	if (rc == 0) {
		struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };

		(void)futimens(fd, ts);
	}
	if (close(fd) != 0 && rc == 0)
		rc = set_err(p, "'%s': %s", path, el_strerror(errno));
	free(path);
	return rc;
}

/* An info/ file the link step reads, into memory (capped). */
static int read_info(cl_pkg *p, struct archive *in, const char *what, const char *name, int k)
{
	char chunk[65536];
	la_ssize_t n;

	el_buf_reset(&p->info[k]);
	while ((n = archive_read_data(in, chunk, sizeof(chunk))) > 0)
		if (el_buf_put(&p->info[k], chunk, (size_t)n) != 0)
			return set_err(p, "%s: entry '%s': larger than the limit of %u MiB", what, name, EL_CLINK_META_MAX >> 20);
	if (n < 0)
		return set_err(p, "%s: entry '%s': %s", what, name, archive_error_string(in) ?: "truncated");
	p->has_info[k] = true;
	return 0;
}

/*
 * Every entry of the tar stream in: files into the cache, links and the
 * info/ files link reads into memory; folders are made by the link step
 * as the paths need them (a package holds files only: conda-build's
 * package specification).
 */
static int copy_tar(cl_pkg *p, struct archive *in, const char *what)
{
	struct archive_entry *e;
	int r, rc = 0;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		const char *name = entry_rel(archive_entry_pathname(e) ?: ""), *why, *hl;
		mode_t type = archive_entry_filetype(e);
		cl_entry *x;
		int k = -1;

		if (el_interrupted()) {
			rc = set_err(p, "interrupted");
			break;
		}
		if (!name || type == AE_IFDIR)
			continue;
		if ((why = el_bad_rel_path(name)) != NULL) {
			rc = set_err(p, "%s: entry '%s': %s", what, name, why);
			break;
		}
		if (p->nents >= EL_CLINK_FILES_MAX) {
			rc = set_err(p, "%s: more than %u entries", what, EL_CLINK_FILES_MAX);
			break;
		}
		if (archive_entry_size(e) < 0 || (uint64_t)archive_entry_size(e) > EL_CLINK_FILE_MAX) {
			rc = set_err(p, "%s: entry '%s': larger than the limit of %llu bytes", what, name,
				     (unsigned long long)EL_CLINK_FILE_MAX);
			break;
		}
		for (int i = 0; i < CL_INFO_N; i++)
			if (strcmp(name, el_clink_info_names[i]) == 0)
				k = i;
		if (k >= 0 && type == AE_IFREG && !archive_entry_hardlink(e)) {
			if ((rc = read_info(p, in, what, name, k)) != 0)
				break;
			continue;
		}
		if (strncmp(name, "info/", 5) == 0)
			continue;
		if ((hl = archive_entry_hardlink(e)) != NULL) {
			const char *t = entry_rel(hl);

			if (!t || (why = el_bad_rel_path(t)) != NULL) {
				rc = set_err(p, "%s: entry '%s': a hard link to '%s': %s", what, name, hl, why ? why : "empty");
				break;
			}
			x = add_entry(p, name);
			x->hardlink = el_xstrdup(t);
		} else if (type == AE_IFLNK) {
			const char *t = archive_entry_symlink(e);

			if (!t || !*t || strlen(t) >= 4096) {
				rc = set_err(p, "%s: entry '%s': a link with no target, or one of 4096 bytes or more", what, name);
				break;
			}
			x = add_entry(p, name);
			x->target = el_xstrdup(t);
		} else if (type == AE_IFREG) {
			x = add_entry(p, name);
			x->file = p->nfiles++;
			x->mode = archive_entry_perm(e) & 0777;
			x->size = (uint64_t)archive_entry_size(e);
			if ((rc = write_data(p, in, what, name, x, archive_entry_mtime(e))) != 0)
				break;
		} else {
			rc = set_err(p, "%s: entry '%s': not a file, folder or link", what, name);
			break;
		}
	}
	if (rc == 0 && r != ARCHIVE_EOF)
		rc = set_err(p, "%s: %s", what, archive_error_string(in) ?: "not a readable archive (truncated?)");
	return rc;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const cl_entry *)a)->name, ((const cl_entry *)b)->name);
}

const cl_entry *el_clink_entry(const cl_pkg *p, const char *name)
{
	cl_entry key = { .name = (char *)name };

	return p->nents ? bsearch(&key, p->ents, p->nents, sizeof(*p->ents), cmp_entry) : NULL;
}

/* Sorted, each name once, each hard link given its file (a file of the same archive). */
static int finish_entries(cl_pkg *p)
{
	qsort(p->ents, p->nents, sizeof(*p->ents), cmp_entry);
	for (size_t i = 1; i < p->nents; i++)
		if (strcmp(p->ents[i - 1].name, p->ents[i].name) == 0)
			return set_err(p, "entry '%s' is in the archive twice", p->ents[i].name);
	for (size_t i = 0; i < p->nents; i++) {
		cl_entry *x = &p->ents[i];
		const cl_entry *t;

		if (!x->hardlink)
			continue;
		t = el_clink_entry(p, x->hardlink);
		if (!t || t->file < 0)
			return set_err(p, "entry '%s': a hard link to '%s', no file of the archive", x->name, x->hardlink);
		x->file = t->file;
		x->mode = t->mode;
		x->size = t->size;
	}
	return 0;
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
	int rc;

	for (int i = 0; i < CL_INFO_N; i++)
		el_buf_init(&p->info[i], EL_CLINK_META_MAX);
	if (len > 6 && strcmp(p->in->archive + len - 6, ".conda") == 0)
		rc = unpack_conda(p);
	else if (len > 8 && strcmp(p->in->archive + len - 8, ".tar.bz2") == 0)
		rc = unpack_tar_bz2(p);
	else
		rc = set_err(p, "not a conda package archive (.conda or .tar.bz2)");
	return rc ? rc : finish_entries(p);
}
