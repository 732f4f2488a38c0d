/*
 * Safe extraction of a bundle. An archive is hostile until proven
 * otherwise: every name is checked before it is used, every file is
 * created relative to a folder descriptor of the target with O_NOFOLLOW
 * on each component (an earlier symlink, or one already in a --force
 * target, is never followed), and the limits on size, entry count and
 * compression ratio stop a bomb before it fills the disk.
 *
 * Everything is written into a staging folder beside the target
 * (".NAME.extract-XXXXXX"), which takes the target's name only once the
 * whole archive is in it and checked: a failure, or a signal (polled
 * between entries and between pieces of a file), removes it and leaves
 * the target as it was. With --force the old folder's other entries are
 * kept, hard-linked into the staging folder first, and the two folders
 * are exchanged at the end.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "lock/model.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/interrupt.h"
#include "util/root.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_EXTRACT_MAX_TOTAL (64ull << 30)
#define EL_EXTRACT_MAX_ENTRIES 1000000ull
#define EL_EXTRACT_MAX_RATIO 1000ull
#define EL_EXTRACT_RATIO_SLACK (1ull << 20)

typedef struct {
	char *path;
	struct timespec mtime;
} dir_time;

#define EL_EXTRACT_MAX_DEPTH 256 /* folders of an old --force target, one inside another */

typedef struct {
	envlock_ctx *ctx;
	const char *archive;
	const char *dir;      /* the target, as the caller named it */
	char *final;          /* where the staging folder goes: dir, or with --force its real path */
	char *stage;          /* the staging folder, once made */
	int replace;          /* final is an old folder, exchanged at the end */
	dir_time *kept;       /* the old folder's folders, their times put back at the end */
	size_t nkept, capkept;
	el_bstream *in;
	struct archive *a;    /* the tar reader of in */
	int root_fd;
	char *parent;         /* the folder parent_fd is open on ("" for the root) */
	int parent_fd;
	el_bindex seen;
	dir_time *dirs;
	size_t ndirs, capdirs;
	char *buf;
	unsigned long long total, max_total, entries, max_entries, max_ratio;
	long pid;             /* for temporary names */
	unsigned tmp_counter;
} extractor;

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* A name as it may be shown on a terminal: control bytes as '?', capped. */
static const char *shown(const char *s, char *out, size_t size)
{
	size_t i = 0;

	for (; s && *s && i + 4 < size; s++)
		out[i++] = is_control((unsigned char)*s) ? '?' : *s;
	if (s && *s)
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

/* Record a failure about one entry: "'<archive>': entry '<path>': <why>". */
__attribute__((format(printf, 4, 5)))
static int entry_error(extractor *x, int code, const char *path, const char *fmt, ...)
{
	char why[512], name[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return el_error_set(x->ctx, code, "'%s': entry '%s': %s", x->archive, shown(path, name, sizeof(name)), why);
}

/* libarchive's own message, converted once: lowercase, with the entry it stopped at. */
static int archive_fail(extractor *x, const char *where, const char *path)
{
	char text[512], name[320];
	/* libarchive reports a malformed archive as EILSEQ (its private ARCHIVE_ERRNO_FILE_FORMAT) */
	int code = archive_errno(x->a) == EILSEQ ? ENVLOCK_EPARSE : ENVLOCK_EIO;

	snprintf(text, sizeof(text), "%s", el_archive_reason(x->a));
	if (path)
		return el_error_set(x->ctx, code, "'%s': %s (%s '%s')", x->archive, text, where,
				    shown(path, name, sizeof(name)));
	return el_error_set(x->ctx, code, "'%s': %s", x->archive, text);
}

/*
 * Check an entry's name and write its plain form (no trailing '/') into
 * out. Returns NULL, or why the name is refused.
 */
const char *el_bundle_check_name(const char *name, char *out, size_t size)
{
	size_t n;

	if (!name || !*name)
		return "empty name";
	for (const char *s = name; *s; s++)
		if (is_control((unsigned char)*s))
			return "control character in the name";
	if (name[0] == '/')
		return "absolute path";
	n = strlen(name);
	while (n && name[n - 1] == '/')
		n--;
	if (n + 1 > size)
		return "name too long";
	memcpy(out, name, n);
	out[n] = '\0';
	for (const char *s = out; *s;) {
		size_t c = strcspn(s, "/");

		if (c == 2 && s[0] == '.' && s[1] == '.')
			return "'..' in the path";
		/* "a//b" and "a/./b" name the same file as "a/b": no second spelling */
		if (c == 0 || (c == 1 && s[0] == '.'))
			return "not a plain relative path";
		s += c;
		s += *s == '/';
	}
	return NULL;
}

/*
 * Does a symlink at path to target stay inside the target folder? The
 * target is resolved relative to the link's folder, each ".." counted
 * against that folder's depth. ".." after a name is refused as well:
 * "s/../.." climbs from wherever s leads, and s may be another link.
 */
const char *el_bundle_check_target(const char *path, const char *target)
{
	int depth = 0, named = 0;

	if (!target || !*target)
		return "symlink with an empty target";
	for (const char *s = target; *s; s++)
		if (is_control((unsigned char)*s))
			return "control character in the symlink target";
	if (target[0] == '/')
		return "symlink to an absolute path";
	for (const char *s = path; *s; s++)
		depth += *s == '/';
	for (const char *s = target; *s;) {
		size_t c = strcspn(s, "/");

		if (c == 2 && s[0] == '.' && s[1] == '.') {
			if (named)
				return "symlink target has '..' after a name";
			if (--depth < 0)
				return "symlink leads outside the target folder";
		} else if (c && !(c == 1 && s[0] == '.')) {
			named = 1;
		}
		s += c;
		s += *s == '/';
	}
	return NULL;
}

static const char *type_name(mode_t type)
{
	switch (type) {
	case AE_IFCHR: return "character device";
	case AE_IFBLK: return "block device";
	case AE_IFIFO: return "fifo";
	case AE_IFSOCK: return "socket";
	default: return "entry of unknown type";
	}
}

/* Make a file (link_target NULL: *fd open for writing) or a symlink at name in dfd. */
static int make_at(int dfd, const char *name, const char *link_target, int *fd)
{
	if (link_target)
		return symlinkat(link_target, dfd, name);
	*fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return *fd >= 0 ? 0 : -1;
}

/*
 * Create leaf in dfd, never through what is there: O_EXCL and
 * O_NOFOLLOW. When the name is taken (a --force target), the new one is
 * made under a temporary name (tmp) and renamed over it once complete,
 * which replaces a link rather than following it and keeps the old file
 * if this one fails; tmp is "" otherwise.
 */
static int create_at(extractor *x, int dfd, const char *leaf, const char *link_target, char tmp[64], int *fd)
{
	tmp[0] = '\0';
	if (make_at(dfd, leaf, link_target, fd) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	for (int tries = 0; tries < 100; tries++) {
		snprintf(tmp, 64, ".envlock-extract.%ld.%u", (long)x->pid, x->tmp_counter++);
		if (make_at(dfd, tmp, link_target, fd) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	tmp[0] = '\0';
	return -1;
}

/* Put the finished entry in place (after create_at), or take it away after a failure. */
static int settle(int dfd, const char *tmp, const char *leaf, int ok)
{
	if (!ok)
		return unlinkat(dfd, *tmp ? tmp : leaf, 0);
	return *tmp ? renameat(dfd, tmp, dfd, leaf) : 0;
}

/* Forget the folder kept open for the entries that follow. */
static void drop_parent(extractor *x)
{
	if (x->parent_fd >= 0 && x->parent_fd != x->root_fd)
		close(x->parent_fd);
	x->parent_fd = -1;
	free(x->parent);
	x->parent = NULL;
}

/*
 * Open the folder holding path (a checked, plain relative path) one
 * component at a time, never following a symlink; missing folders are
 * made (tar allows leaving them out) when create is set. Sets *leaf to
 * the last component. The folder stays open for the next entry, which in
 * a sorted archive is usually in the same place.
 */
static int open_parent(extractor *x, const char *path, int create, int *pfd, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	size_t plen = slash ? (size_t)(slash - path) : 0;
	int cur = x->root_fd;

	*leaf = slash ? slash + 1 : path;
	if (x->parent && strlen(x->parent) == plen && strncmp(x->parent, path, plen) == 0) {
		*pfd = x->parent_fd;
		return 0;
	}
	drop_parent(x);
	for (const char *s = path; s < path + plen;) {
		size_t c = strcspn(s, "/");
		char *comp = el_xstrndup(s, c);
		int fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0 && errno == ENOENT && create) {
			if (mkdirat(cur, comp, 0755) != 0 && errno != EEXIST) {
				int e = errno;

				free(comp);
				if (cur != x->root_fd)
					close(cur);
				return entry_error(x, ENVLOCK_EIO, path, "cannot make its folder: %s", el_strerror(e));
			}
			fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0) {
				el_bnode *made = el_bindex_find(&x->seen, path, (size_t)(s + c - path), 1);

				if (made->made == EL_MADE_NONE)
					made->made = EL_MADE_IMPLICIT_DIR;
				fchmod(fd, 0755);
			}
		}
		if (fd < 0) {
			int e = errno;
			char *prefix = el_xstrndup(path, (size_t)(s + c - path));
			int rc;

			if (e == ELOOP || e == ENOTDIR)
				rc = entry_error(x, ENVLOCK_EINVAL, path, "'%s' in the target is not a folder (a symlink or a file), refused",
						 prefix);
			else
				rc = entry_error(x, ENVLOCK_EIO, path, "'%s': %s", prefix, el_strerror(e));
			free(prefix);
			free(comp);
			if (cur != x->root_fd)
				close(cur);
			return rc;
		}
		free(comp);
		if (cur != x->root_fd)
			close(cur);
		cur = fd;
		s += c;
		s += *s == '/';
	}
	x->parent = el_xstrndup(path, plen);
	x->parent_fd = cur;
	*pfd = cur;
	return 0;
}

static struct timespec entry_mtime(struct archive_entry *e)
{
	struct timespec ts = { 0, UTIME_OMIT };

	if (archive_entry_mtime_is_set(e)) {
		ts.tv_sec = archive_entry_mtime(e);
		ts.tv_nsec = archive_entry_mtime_nsec(e);
	}
	return ts;
}

/* Give the new file its mode and time, and put it in place. */
static int finish_file(extractor *x, const char *path, int dfd, int fd, const char *tmp, const char *leaf,
		       mode_t mode, struct timespec mtime)
{
	struct timespec times[2] = { { 0, UTIME_OMIT }, mtime };
	int rc = 0;

	if (fchmod(fd, mode) != 0 || futimens(fd, times) != 0)
		rc = entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
	if (close(fd) != 0 && rc == 0)
		rc = entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
	if (rc == 0 && settle(dfd, tmp, leaf, 1) != 0)
		rc = entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
	if (rc != 0)
		settle(dfd, tmp, leaf, 0);
	return rc;
}

/* Write a file already in memory (the lockfile, the manifest) at the top of the target. */
static int put_blob(extractor *x, const char *name, const el_buf *b, struct timespec mtime)
{
	char tmp[64];
	int fd = -1;

	if (create_at(x, x->root_fd, name, NULL, tmp, &fd) != 0)
		return entry_error(x, ENVLOCK_EIO, name, "%s", el_strerror(errno));
	if (el_write_all(fd, b->data ? b->data : "", b->len) != 0) {
		int rc = entry_error(x, ENVLOCK_EIO, name, "%s", el_strerror(errno));

		close(fd);
		settle(x->root_fd, tmp, name, 0);
		return rc;
	}
	return finish_file(x, name, x->root_fd, fd, tmp, name, 0644, mtime);
}

/* Bytes we may have written so far: the ratio limit on what was read of the archive. */
static int over_ratio(const extractor *x)
{
	unsigned long long read_so_far = el_bstream_compressed(x->in);

	if (read_so_far > (ULLONG_MAX - EL_EXTRACT_RATIO_SLACK) / x->max_ratio)
		return 0;
	return x->total > x->max_ratio * read_so_far + EL_EXTRACT_RATIO_SLACK;
}

/* Stream a regular file's data to disk, hashing it; it must match the manifest. */
static int put_file(extractor *x, const char *path, struct archive_entry *e, const cJSON *want)
{
	const char *leaf, *sha = el_jget_str(want, "sha256");
	char tmp[64], hex[EL_SHA256_HEX];
	el_sha256 *h;
	int dfd, fd = -1, rc;
	la_ssize_t n;

	if ((rc = open_parent(x, path, 1, &dfd, &leaf)) != 0)
		return rc;
	if (create_at(x, dfd, leaf, NULL, tmp, &fd) != 0)
		return entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
	h = el_sha256_begin();
	while ((n = archive_read_data(x->a, x->buf, EL_BUNDLE_CHUNK)) > 0) {
		if (el_interrupted()) {
			rc = el_interrupt_error(x->ctx, x->dir);
			break;
		}
		x->total += (unsigned long long)n;
		if (x->total > x->max_total) {
			rc = entry_error(x, ENVLOCK_ELIMIT, path, "more than %llu bytes in all, stopped", x->max_total);
			break;
		}
		if (over_ratio(x)) {
			rc = entry_error(x, ENVLOCK_ELIMIT, path,
					 "expands more than %llu times the compressed bytes read, stopped (a decompression bomb?)",
					 x->max_ratio);
			break;
		}
		el_sha256_update(h, x->buf, (size_t)n);
		if (el_write_all(fd, x->buf, (size_t)n) != 0) {
			rc = entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
			break;
		}
	}
	if (rc == 0 && n < 0)
		rc = archive_fail(x, "in", path);
	if (rc != 0) {
		el_sha256_abort(h);
		close(fd);
		settle(dfd, tmp, leaf, 0);
		return rc;
	}
	el_sha256_end(h, hex);
	if (!sha || strcmp(hex, sha) != 0) {
		close(fd);
		settle(dfd, tmp, leaf, 0);
		return entry_error(x, ENVLOCK_ERROR, path, "content does not match its sha256 in the manifest");
	}
	return finish_file(x, path, dfd, fd, tmp, leaf, archive_entry_perm(e) & 0111 ? 0755 : 0644, entry_mtime(e));
}

static int put_link(extractor *x, const char *path, const char *target, struct timespec mtime)
{
	struct timespec times[2] = { { 0, UTIME_OMIT }, mtime };
	const char *leaf;
	char tmp[64];
	int dfd, rc;

	if ((rc = open_parent(x, path, 1, &dfd, &leaf)) != 0)
		return rc;
	if (create_at(x, dfd, leaf, target, tmp, NULL) != 0)
		return entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
	utimensat(dfd, *tmp ? tmp : leaf, times, AT_SYMLINK_NOFOLLOW);
	if (settle(dfd, tmp, leaf, 1) != 0) {
		rc = entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
		settle(dfd, tmp, leaf, 0);
	}
	return rc;
}

static int put_dir(extractor *x, const char *path, struct timespec mtime)
{
	const char *leaf;
	struct stat st;
	int dfd, fd, rc;

	if ((rc = open_parent(x, path, 1, &dfd, &leaf)) != 0)
		return rc;
	if (mkdirat(dfd, leaf, 0755) == 0) {
		fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			fchmod(fd, 0755);
			close(fd);
		}
	} else if (errno != EEXIST) {
		return entry_error(x, ENVLOCK_EIO, path, "%s", el_strerror(errno));
	} else if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
		return entry_error(x, ENVLOCK_EINVAL, path, "already in the target and not a folder, refused");
	}
	/* a folder's time is set last: every file written into it changes it */
	if (mtime.tv_nsec != UTIME_OMIT) {
		EL_GROW(x->dirs, x->ndirs + 1, x->capdirs);
		x->dirs[x->ndirs].path = el_xstrdup(path);
		x->dirs[x->ndirs++].mtime = mtime;
	}
	return 0;
}

static void set_dir_times(extractor *x)
{
	for (size_t i = x->ndirs; i-- > 0;) {
		struct timespec times[2] = { { 0, UTIME_OMIT }, x->dirs[i].mtime };
		const char *leaf;
		int dfd;

		if (open_parent(x, x->dirs[i].path, 0, &dfd, &leaf) == 0)
			utimensat(dfd, leaf, times, AT_SYMLINK_NOFOLLOW);
	}
}

static int manifest_type(const char *type)
{
	if (!type)
		return EL_MADE_NONE;
	if (strcmp(type, "file") == 0)
		return EL_MADE_FILE;
	if (strcmp(type, "dir") == 0)
		return EL_MADE_DIR;
	if (strcmp(type, "symlink") == 0)
		return EL_MADE_LINK;
	return EL_MADE_NONE;
}

/* Checks that need no disk: the name, the type, the links, the manifest, the limits. */
static int check_entry(extractor *x, struct archive_entry *e, const char *path, int kind,
		       const char *target, el_bnode **out)
{
	const char *why, *hard = archive_entry_hardlink(e);
	const cJSON *want;
	el_bnode *nd;
	char name[320];

	if (!hard)
		hard = archive_entry_hardlink_utf8(e);
	if (hard)
		return entry_error(x, ENVLOCK_EINVAL, path, "hard link (to '%s'), refused: bundles have none",
				   shown(hard, name, sizeof(name)));
	if (kind == EL_MADE_NONE)
		return entry_error(x, ENVLOCK_EINVAL, path, "%s, refused", type_name(archive_entry_filetype(e)));
	if (kind != EL_MADE_FILE && archive_entry_size_is_set(e) && archive_entry_size(e) > 0)
		return entry_error(x, ENVLOCK_EINVAL, path, "%s with data, refused", kind == EL_MADE_DIR ? "folder" : "symlink");
	if (kind == EL_MADE_LINK && (why = el_bundle_check_target(path, target)) != NULL)
		return entry_error(x, ENVLOCK_EINVAL, path, "%s ('%s'), refused", why, shown(target, name, sizeof(name)));

	/* nothing may be written through a link or a file this archive made */
	for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		el_bnode *up = el_bindex_find(&x->seen, path, (size_t)(s - path), 0);

		if (up && (up->made == EL_MADE_LINK || up->made == EL_MADE_FILE)) {
			char *prefix = el_xstrndup(path, (size_t)(s - path));
			int rc = entry_error(x, ENVLOCK_EINVAL, path, "goes through the %s '%s' made by an earlier entry, refused",
					     up->made == EL_MADE_LINK ? "symlink" : "file", prefix);

			free(prefix);
			return rc;
		}
	}
	nd = el_bindex_find(&x->seen, path, strlen(path), 1);
	if (nd->made == EL_MADE_IMPLICIT_DIR && kind != EL_MADE_DIR)
		return entry_error(x, ENVLOCK_EINVAL, path, "earlier entries made it a folder, refused");
	if (nd->made != EL_MADE_NONE && nd->made != EL_MADE_IMPLICIT_DIR)
		return entry_error(x, ENVLOCK_EINVAL, path, "appears twice in the archive, refused");

	want = nd->want;
	if (!want)
		return entry_error(x, ENVLOCK_ERROR, path, "not in the manifest");
	if (manifest_type(el_jget_str(want, "type")) != kind)
		return entry_error(x, ENVLOCK_ERROR, path, "its type does not match the manifest");
	if (kind == EL_MADE_LINK && (!el_jget_str(want, "target") || strcmp(el_jget_str(want, "target"), target) != 0))
		return entry_error(x, ENVLOCK_ERROR, path, "symlink target does not match the manifest");
	if (kind == EL_MADE_FILE) {
		long long size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;

		if (!el_jget_bool(want, "stored", true))
			return entry_error(x, ENVLOCK_ERROR, path, "stored, but the manifest says it was left out");
		if (size < 0 || size != el_jget_int(want, "size", -1))
			return entry_error(x, ENVLOCK_ERROR, path, "size %lld does not match the manifest", size);
		if (x->total > x->max_total || (unsigned long long)size > x->max_total - x->total)
			return entry_error(x, ENVLOCK_ELIMIT, path, "its %lld bytes would pass the limit of %llu in all, stopped",
					   size, x->max_total);
	}
	*out = nd;
	return 0;
}

/* One entry after the lockfile and the manifest. */
static int extract_entry(extractor *x, struct archive_entry *e)
{
	/* a name that is not valid in the locale is still the bytes the archive holds */
	const char *raw = el_archive_pathname(e), *why, *target = NULL;
	char path[PATH_MAX];
	mode_t type = archive_entry_filetype(e);
	int kind = type == AE_IFREG ? EL_MADE_FILE : type == AE_IFDIR ? EL_MADE_DIR : type == AE_IFLNK ? EL_MADE_LINK : EL_MADE_NONE;
	el_bnode *nd = NULL;
	int rc;

	if ((why = el_bundle_check_name(raw, path, sizeof(path))) != NULL)
		return entry_error(x, ENVLOCK_EINVAL, raw ? raw : "", "%s, refused", why);
	if (kind == EL_MADE_LINK)
		target = el_archive_symlink(e);
	if ((rc = check_entry(x, e, path, kind, target, &nd)) != 0)
		return rc;
	if (kind == EL_MADE_FILE)
		rc = put_file(x, path, e, nd->want);
	else if (kind == EL_MADE_LINK)
		rc = put_link(x, path, target, entry_mtime(e));
	else
		rc = put_dir(x, path, entry_mtime(e));
	/* the table may have grown under nd while folders were made */
	if (rc == 0)
		el_bindex_find(&x->seen, path, strlen(path), 0)->made = kind;
	return rc;
}

/* The next entry must be the regular file name: read it whole (capped). */
static int read_head(extractor *x, const char *name, const char *after, el_buf *out, struct timespec *mtime)
{
	struct archive_entry *e;
	const char *got;
	la_ssize_t n;
	int st = archive_read_next_header(x->a, &e);

	if (st != ARCHIVE_OK && st != ARCHIVE_WARN && st != ARCHIVE_EOF)
		return archive_fail(x, "after", after);
	x->entries++;
	got = st == ARCHIVE_EOF ? NULL : archive_entry_pathname(e);
	if (!got || strcmp(got, name) != 0 || archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e))
		return el_error_set(x->ctx, ENVLOCK_EPARSE, "'%s': not an envlock bundle (no %s where it belongs)",
				    x->archive, name);
	if (archive_entry_size(e) > (la_int64_t)out->limit)
		return el_error_set(x->ctx, ENVLOCK_ELIMIT, "'%s': %s larger than 64 MiB", x->archive, name);
	while ((n = archive_read_data(x->a, x->buf, EL_BUNDLE_CHUNK)) > 0)
		if (el_buf_put(out, x->buf, (size_t)n) != 0)
			return el_error_set(x->ctx, ENVLOCK_ELIMIT, "'%s': %s larger than 64 MiB", x->archive, name);
	if (n < 0)
		return archive_fail(x, "in", name);
	x->total += out->len;
	*mtime = entry_mtime(e);
	return 0;
}

/* Index the manifest's records by path, and check the lockfile against its lock_id. */
static int load_manifest(extractor *x, const el_buf *m, const el_buf *lock, cJSON **out)
{
	cJSON *doc = cJSON_ParseWithLength(m->data ? m->data : "", m->len), *f;
	const char *lock_id;
	long long version;

	*out = doc;
	version = el_jget_int(doc, "envlock_manifest", 0);
	if (version > 1)
		return el_error_set(x->ctx, ENVLOCK_EVERSION, "'%s': bundle manifest format %lld is not supported",
				    x->archive, version);
	if (!cJSON_IsObject(doc) || version != 1 || !cJSON_IsArray(el_jget(doc, "files")))
		return el_error_set(x->ctx, ENVLOCK_EPARSE, "'%s': %s is not an envlock manifest", x->archive,
				    EL_BUNDLE_MANIFEST);
	cJSON_ArrayForEach(f, el_jget(doc, "files")) {
		const char *path = el_jget_str(f, "path");
		size_t n = path ? strlen(path) : 0;
		el_bnode *nd;

		while (n > 1 && path[n - 1] == '/')
			n--;
		if (!n || manifest_type(el_jget_str(f, "type")) == EL_MADE_NONE)
			return el_error_set(x->ctx, ENVLOCK_EPARSE, "'%s': %s has a record without a path or type",
					    x->archive, EL_BUNDLE_MANIFEST);
		nd = el_bindex_find(&x->seen, path, n, 1);
		if (nd->want) {
			char name[320];

			return el_error_set(x->ctx, ENVLOCK_EPARSE, "'%s': %s lists '%s' twice", x->archive,
					    EL_BUNDLE_MANIFEST, shown(nd->path, name, sizeof(name)));
		}
		nd->want = f;
	}
	/* the lockfile in the bundle is the one the manifest names */
	if ((lock_id = el_jget_str(doc, "lock_id")) != NULL) {
		envlock_lock l;
		int same;

		memset(&l, 0, sizeof(l));
		l.doc = cJSON_ParseWithLength(el_buf_cstr(lock), lock->len);
		/* integers past 2^53 as their digits, as loading a lock reads them, for the same id */
		el_json_exact_ints(l.doc, el_buf_cstr(lock), lock->len);
		same = cJSON_IsObject(l.doc);
		if (same) {
			el_lock_compute_id(&l);
			same = strcmp(l.id, lock_id) == 0;
		}
		cJSON_Delete(l.doc);
		if (!same)
			return entry_error(x, ENVLOCK_ERROR, EL_BUNDLE_LOCK, "its id does not match the manifest's lock_id");
	}
	return 0;
}

/* "'<dir>/<rel>'" of the old folder, for a message. */
static int old_error(extractor *x, int code, const char *rel, const char *why, int err)
{
	return el_error_set(x->ctx, code, "'%s/%s': %s%s%s", x->dir, rel, why, err ? ": " : "",
			    err ? el_strerror(err) : "");
}

/*
 * --force: the old folder's entries, in the staging folder too: each
 * file, link or other non-folder hard-linked (the old one is never
 * written: what the archive replaces is renamed over in the staging
 * folder), each folder made again with its mode and owner, its time
 * put back at the end. from and to are closed here.
 */
static int keep_old(extractor *x, int from, int to, const char *rel, dev_t dev, int depth)
{
	DIR *d = fdopendir(from);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		rc = old_error(x, ENVLOCK_EIO, rel, "cannot read it", errno);
		close(from);
		close(to);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		const char *name = e->d_name;
		char *path;
		struct stat st;
		int sub_from, sub_to;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (el_interrupted()) {
			rc = el_interrupt_error(x->ctx, x->dir);
			break;
		}
		path = *rel ? el_xasprintf("%s/%s", rel, name) : el_xstrdup(name);
		if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = old_error(x, ENVLOCK_EIO, path, "cannot read it", errno);
		} else if (!S_ISDIR(st.st_mode)) {
			if (linkat(dirfd(d), name, to, name, 0) != 0)
				rc = old_error(x, ENVLOCK_EIO, path,
					       "--force keeps it in the new folder by a hard link, which failed", errno);
		} else if (st.st_dev != dev) {
			rc = old_error(x, ENVLOCK_EINVAL, path,
				       "a mount point: --force replaces the folder as a whole and cannot move it", 0);
		} else if (depth >= EL_EXTRACT_MAX_DEPTH) {
			rc = old_error(x, ENVLOCK_ELIMIT, path, "folders too deep to keep", 0);
		} else if (mkdirat(to, name, 0700) != 0 ||
			   (sub_to = openat(to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rc = old_error(x, ENVLOCK_EIO, path, "cannot make it in the new folder", errno);
		} else if ((sub_from = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rc = old_error(x, ENVLOCK_EIO, path, "cannot read it", errno);
			close(sub_to);
		} else {
			int fd = dup(sub_to);

			rc = fd < 0 ? old_error(x, ENVLOCK_EIO, path, "cannot read it", errno)
				    : keep_old(x, sub_from, fd, path, dev, depth + 1);
			if (fd < 0)
				close(sub_from);
			/* root may give it back to its owner; anyone else keeps what they can */
			if (fchown(sub_to, st.st_uid, st.st_gid) != 0 && errno != EPERM)
				rc = rc ? rc : old_error(x, ENVLOCK_EIO, path, "cannot keep its owner", errno);
			fchmod(sub_to, st.st_mode & 07777);
			close(sub_to);
			EL_GROW(x->kept, x->nkept + 1, x->capkept);
			x->kept[x->nkept].path = path;
			x->kept[x->nkept++].mtime = st.st_mtim;
			path = NULL;
		}
		free(path);
	}
	closedir(d);
	close(to);
	return rc;
}

/*
 * The old folder's folders get their times back, before the archive's
 * own (set_dir_times), except those the archive wrote into: theirs is
 * now, as when it was extracted into the old folder itself.
 */
static void set_kept_times(extractor *x)
{
	el_bindex touched;

	memset(&touched, 0, sizeof(touched));
	for (size_t i = 0; i < x->seen.cap; i++) {
		const el_bnode *nd = &x->seen.v[i];
		const char *slash = nd->path ? strrchr(nd->path, '/') : NULL;

		if (slash && nd->made != EL_MADE_NONE)
			el_bindex_find(&touched, nd->path, (size_t)(slash - nd->path), 1);
	}
	for (size_t i = 0; i < x->nkept; i++) {
		struct timespec times[2] = { { 0, UTIME_OMIT }, x->kept[i].mtime };
		const char *leaf;
		int dfd;

		if (!el_bindex_find(&touched, x->kept[i].path, strlen(x->kept[i].path), 0) &&
		    open_parent(x, x->kept[i].path, 0, &dfd, &leaf) == 0)
			utimensat(dfd, leaf, times, AT_SYMLINK_NOFOLLOW);
	}
	el_bindex_release(&touched);
}

/*
 * The staging folder beside the target: its parent must exist, and the
 * target must not, unless force (then it is a folder, or a link to one,
 * whose entries are kept). Open on x->root_fd.
 */
static int open_target(extractor *x, const char *dir, int force)
{
	struct stat st, up;
	char *parent = NULL;
	size_t n = strlen(dir);
	int rc = 0, from;

	if (!*dir)
		return el_error_set(x->ctx, ENVLOCK_ENOTFOUND, "'%s': %s", dir, el_strerror(ENOENT));
	if (lstat(dir, &st) == 0) {
		if (!force)
			return el_error_set(x->ctx, ENVLOCK_EEXISTS, "'%s': already exists", dir);
		if (stat(dir, &st) != 0)
			return el_error_set(x->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return el_error_set(x->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(ENOTDIR));
		/* ".", "a/..", a link to a folder: the folder itself is what is replaced */
		if (!(x->final = realpath(dir, NULL)))
			return el_error_set(x->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
		if (strcmp(x->final, "/") == 0)
			return el_error_set(x->ctx, ENVLOCK_EINVAL, "'%s': the root folder cannot be replaced", dir);
		x->replace = 1;
	} else if (errno != ENOENT) {
		return el_error_set(x->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
	} else {
		while (n > 1 && dir[n - 1] == '/')
			n--;
		x->final = el_xstrndup(dir, n);
	}
	parent = strchr(x->final, '/') ? el_path_dir(x->final) : el_xstrdup(".");
	x->stage = el_xasprintf("%s/.%s.extract-XXXXXX", parent, el_path_base(x->final));
	if (!mkdtemp(x->stage)) {
		int e = errno;

		free(x->stage);
		x->stage = NULL;
		free(parent);
		return el_error_set(x->ctx, e == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO, "'%s': %s", dir, el_strerror(e));
	}
	x->root_fd = open(x->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (x->root_fd < 0) {
		rc = el_error_set(x->ctx, ENVLOCK_EIO, "'%s': %s", x->stage, el_strerror(errno));
	} else if (!x->replace) {
		/* mkdtemp's 0700, made what mkdir(dir, 0755) would have made */
		mode_t um = umask(0);

		umask(um);
		fchmod(x->root_fd, 0755 & ~um);
	} else if (stat(parent, &up) != 0 || up.st_dev != st.st_dev) {
		rc = el_error_set(x->ctx, ENVLOCK_EINVAL,
				  "'%s': a mount point: --force replaces the folder as a whole and cannot replace it", dir);
	} else if ((from = open(x->final, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = el_error_set(x->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
	} else {
		int to = dup(x->root_fd);

		if (to < 0) {
			rc = el_error_set(x->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
			close(from);
		} else {
			rc = keep_old(x, from, to, "", st.st_dev, 0);
		}
		if (fchown(x->root_fd, st.st_uid, st.st_gid) != 0 && errno != EPERM && rc == 0)
			rc = el_error_set(x->ctx, ENVLOCK_EIO, "'%s': cannot keep its owner: %s", dir, el_strerror(errno));
		fchmod(x->root_fd, st.st_mode & 07777);
	}
	free(parent);
	return rc;
}

/* The complete staging folder takes the target's name; the old folder (--force) goes. */
static int put_in_place(extractor *x)
{
	if (el_interrupted())
		return el_interrupt_error(x->ctx, x->dir);
	if (el_dir_rename(x->stage, x->final, x->replace) != 0)
		return el_error_set(x->ctx, errno == EEXIST || errno == ENOTEMPTY ? ENVLOCK_EEXISTS : ENVLOCK_EIO,
				    "'%s': %s", x->dir, errno == EEXIST || errno == ENOTEMPTY ? "already exists"
											   : el_strerror(errno));
	free(x->stage);
	x->stage = NULL;
	return 0;
}

/* Every record the manifest says is stored must have been in the archive. */
static int check_missing(extractor *x, const cJSON *manifest)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, el_jget(manifest, "files")) {
		const char *path = el_jget_str(f, "path");
		size_t n = strlen(path);
		el_bnode *nd;

		while (n > 1 && path[n - 1] == '/')
			n--;
		nd = el_bindex_find(&x->seen, path, n, 0);
		/* a folder tar left out but made for its files is there all the same */
		if (nd && (nd->made == EL_MADE_NONE || (nd->made == EL_MADE_IMPLICIT_DIR &&
						      manifest_type(el_jget_str(f, "type")) != EL_MADE_DIR)) &&
		    el_jget_bool(f, "stored", true))
			return entry_error(x, ENVLOCK_ERROR, nd->path, "in the manifest but missing from the archive");
	}
	return 0;
}

static int open_archive(extractor *x)
{
	int rc = el_bstream_open(&x->in, x->ctx, x->archive);

	if (rc == 0)
		x->a = el_bstream_archive(x->in);
	return rc;
}

int envlock_bundle_extract(envlock_ctx *ctx, const char *archive, const char *dir,
			   const envlock_extract_opts *opts)
{
	static const envlock_extract_opts defaults;
	el_buf lock = EL_BUF_INIT(EL_BUNDLE_MAX_META), man = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	struct timespec lock_time, man_time;
	struct archive_entry *e;
	cJSON *manifest = NULL;
	char last[PATH_MAX] = EL_BUNDLE_MANIFEST;
	extractor x;
	int rc, st;

	if (!opts)
		opts = &defaults;
	memset(&x, 0, sizeof(x));
	x.ctx = ctx;
	x.archive = archive;
	x.dir = dir;
	x.root_fd = -1;
	x.parent_fd = -1;
	x.max_total = opts->max_total_bytes ? opts->max_total_bytes : EL_EXTRACT_MAX_TOTAL;
	x.max_entries = opts->max_entries ? opts->max_entries : EL_EXTRACT_MAX_ENTRIES;
	x.max_ratio = opts->max_ratio ? opts->max_ratio : EL_EXTRACT_MAX_RATIO;
	x.buf = el_xmalloc_io(EL_BUNDLE_CHUNK);
	x.pid = (long)getpid();

	/* a signal is polled from here on, and unwinds through the failure path below */
	el_interrupt_poll_begin();
	/* the head is checked before anything is made: a non-bundle leaves no folder behind */
	if ((rc = open_archive(&x)) != 0 ||
	    (rc = read_head(&x, EL_BUNDLE_LOCK, NULL, &lock, &lock_time)) != 0 ||
	    (rc = read_head(&x, EL_BUNDLE_MANIFEST, EL_BUNDLE_LOCK, &man, &man_time)) != 0 ||
	    (rc = load_manifest(&x, &man, &lock, &manifest)) != 0 ||
	    (rc = open_target(&x, dir, opts->force)) != 0)
		goto done;
	el_bindex_find(&x.seen, EL_BUNDLE_LOCK, strlen(EL_BUNDLE_LOCK), 1)->made = EL_MADE_FILE;
	el_bindex_find(&x.seen, EL_BUNDLE_MANIFEST, strlen(EL_BUNDLE_MANIFEST), 1)->made = EL_MADE_FILE;
	if ((rc = put_blob(&x, EL_BUNDLE_LOCK, &lock, lock_time)) != 0 ||
	    (rc = put_blob(&x, EL_BUNDLE_MANIFEST, &man, man_time)) != 0)
		goto done;

	while ((st = archive_read_next_header(x.a, &e)) == ARCHIVE_OK || st == ARCHIVE_WARN) {
		const char *name = el_archive_pathname(e);

		if (el_interrupted()) {
			rc = el_interrupt_error(ctx, dir);
			goto done;
		}
		if (++x.entries > x.max_entries) {
			char shown_name[320];

			rc = el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': more than %llu entries, stopped at '%s'", archive,
					  x.max_entries, shown(name, shown_name, sizeof(shown_name)));
			goto done;
		}
		if ((rc = extract_entry(&x, e)) != 0)
			goto done;
		snprintf(last, sizeof(last), "%s", name ? name : "");
	}
	if (st != ARCHIVE_EOF) {
		rc = archive_fail(&x, "after", last);
		goto done;
	}
	if ((rc = check_missing(&x, manifest)) != 0)
		goto done;
	set_kept_times(&x);
	set_dir_times(&x);
	drop_parent(&x);
	rc = put_in_place(&x);
done:
	drop_parent(&x);
	if (x.root_fd >= 0)
		close(x.root_fd);
	el_bstream_close(x.in);
	/* a failure or a signal: the target stays as it was */
	if (x.stage)
		el_remove_tree(x.stage);
	if (rc != 0 && el_interrupted())
		rc = el_interrupt_error(ctx, dir);
	el_interrupt_poll_end();
	free(x.stage);
	free(x.final);
	for (size_t i = 0; i < x.ndirs; i++)
		free(x.dirs[i].path);
	free(x.dirs);
	for (size_t i = 0; i < x.nkept; i++)
		free(x.kept[i].path);
	free(x.kept);
	el_bindex_release(&x.seen);
	cJSON_Delete(manifest);
	el_buf_release(&lock);
	el_buf_release(&man);
	el_free_io(x.buf);
	return rc;
}
