/*
 * envlock bundle: a deterministic pax tar + zstd of a work_dir, with the
 * lockfile and a manifest of every file's SHA-256 in front.
 *
 * Each file is read once: a reader thread reads it through a few fixed
 * buffers and hashes each one, while this thread frames the same buffers
 * as tar (libarchive) and compresses them (libzstd). The manifest, which
 * comes before the files in the archive, is only known after they have
 * all been read, so the file is laid out as three runs of zstd frames
 * (frames concatenate; RFC 8878, section 3.1):
 *
 *   A  the lockfile's entry, compressed: known before any file is read
 *   B  MANIFEST.json's entry in one frame of raw (stored) blocks, whose
 *      size follows from the manifest's length alone: every digest is 64
 *      hex digits, so the length is known before the digests are
 *   C  the work_dir's entries and the end of the tar archive, compressed
 *
 * C is written straight after the room left for B, and B is written into
 * that room at the end: the big part is written once and never copied.
 * Only when the manifest would outweigh the files (many small files) is
 * C written aside and copied behind a compressed B (spill_body()).
 * A file whose size, modification or change time moves while it is read
 * fails the bundle instead of being archived inconsistent with its digest.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>


#include "bundle.h"
#include "envlock/redact.h"
#include "envlock/save.h"
#include "lock/model.h"
#include "util/atomic.h"
#include "util/ctype.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/hashcache.h"
#include "util/interrupt.h"
#include "util/progress.h"
#include "util/root.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_BUNDLE_MAX_ENTRIES 1000000
#define EL_FEED_SLOTS 4               /* buffers between the reader and the compressor */
#define EL_ZOUT_SIZE (1u << 20)       /* compressed bytes gathered per write */
#define EL_RAW_BLOCK (128u << 10)     /* largest raw zstd block with a 128 KiB window */

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
	dev_t dev;            /* the file as the walk found it: it must still be so when read */
	ino_t ino;
	struct timespec mtim, ctim;
	uint64_t fsize;       /* the file's own size (size is what the archive takes from it) */
	/* a plan's file (el_bundle_create_plan) */
	const char *src;      /* the file read, links followed; NULL: <top>/<rel> */
	off_t offset;         /* where the entry's bytes start in it */
	el_bundle_item *item; /* where its digests go, and the digests it must have */
	int late;             /* the plan's late file: its bytes from plan->late */
} ent;

typedef struct {
	envlock_ctx *ctx;
	const envlock_bundle_opts *opts;
	const char *top;      /* the work_dir, absolute */
	ent *v;
	size_t n, cap;
	int failed;
} walk;

/* A one-line warning; file names are escaped (a name may hold a newline or an escape). */
static void warn(const walk *w, const char *fmt, const char *a, const char *b)
{
	char msg[PATH_MAX * 8 + 128];
	el_buf ea = EL_BUF_INIT(PATH_MAX * 4), eb = EL_BUF_INIT(PATH_MAX * 4);

	el_term_text(&ea, a);
	el_term_text(&eb, b);
	snprintf(msg, sizeof(msg), fmt, el_buf_cstr(&ea), el_buf_cstr(&eb));
	el_buf_release(&ea);
	el_buf_release(&eb);
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

static void push(walk *w, const ent *e)
{
	EL_GROW(w->v, w->n + 1, w->cap);
	w->v[w->n++] = *e;
}

/* Collect the entries under rel (a folder, "" for the top), sorted, depth first. */
static void collect(walk *w, const char *rel)
{
	char *dir = *rel ? el_path_join(w->top, rel) : el_xstrdup(w->top), **names;
	el_strvec list = EL_STRVEC_INIT;
	size_t n;
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		el_error_set(w->ctx, ENVLOCK_EIO, "'%s': %s", dir, el_strerror(errno));
		w->failed = 1;
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			el_strvec_push(&list, de->d_name);
	closedir(d);
	el_strvec_sort(&list);
	names = list.v;
	n = list.n;
	for (size_t i = 0; i < n && !w->failed; i++) {
		char *r = *rel ? el_xasprintf("%s/%s", rel, names[i]) : el_xstrdup(names[i]);
		char *full = el_path_join(dir, names[i]);
		struct stat st;
		ent e;

		char *apath = el_xasprintf("%s/%s", el_path_base(w->top), r), clean[PATH_MAX];
		const char *why = NULL;

		memset(&e, 0, sizeof(e));
		if (excluded(w, r)) {
			free(apath);
			free(r);
			free(full);
			continue;
		}
		/* never write what `bundle extract` would refuse: say so now, not at extraction */
		why = lstat(full, &st) != 0 ? el_strerror(errno) : el_bundle_check_name(apath, clean, sizeof(clean));
		if (why) {
			warn(w, "'%s': %s; not bundled", full, why);
			free(apath);
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
				warn(w, "'%s': %s; not bundled", full, el_strerror(errno));
				free(apath);
				free(r);
				free(full);
				continue;
			}
			target[tl] = '\0';
			if ((why = el_bundle_check_target(apath, target)) != NULL) {
				char what[PATH_MAX + 64];

				snprintf(what, sizeof(what), "symlink to '%s': %s", target, why);
				warn(w, "'%s': %s; not bundled", full, what);
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
			e.dev = st.st_dev;
			e.ino = st.st_ino;
			e.fsize = e.size;
			e.mtim = st.st_mtim;
			e.ctim = st.st_ctim;
			/* a stand-in of the digest's length: the manifest's size is known before the digests */
			memset(e.hex, '0', EL_SHA256_HEX - 1);
			push(w, &e);
			r = NULL;
		} else {
			warn(w, "'%s': %s", full, "not a regular file, folder or symlink; skipped");
		}
		free(apath);
		free(r);
		free(full);
	}
	el_strvec_release(&list);
	free(dir);
}

/* The lock to bundle, as the text of its canonical file. */
static int lock_text(el_buf *out, char *id, size_t idlen, envlock_ctx *ctx, const walk *w)
{
	envlock_lock *lock = NULL;
	int rc;

	if (w->opts->lock_path) {
		rc = envlock_lock_load(&lock, ctx, w->opts->lock_path);
	} else {
		/* the live machine, with the work_dir's configs (top-level *.py) and weights */
		envlock_save_opts so;
		envlock_probe_opts *po = &so.probe;
		const char *ckpt[1] = { w->top };
		el_strvec configs = EL_STRVEC_INIT;

		memset(&so, 0, sizeof(so));
		for (size_t i = 0; i < w->n; i++)
			if (w->v[i].type == ENT_FILE && !strchr(w->v[i].rel, '/') && el_ends_with(w->v[i].rel, ".py"))
				el_strvec_push_owned(&configs, el_path_join(w->top, w->v[i].rel));
		for (size_t i = 0; i < w->n; i++)
			if (w->v[i].type == ENT_FILE && !strchr(w->v[i].rel, '/') && el_is_checkpoint_name(w->v[i].rel))
				po->checkpoint_count = 1;
		po->checkpoints = ckpt;
		po->configs = (const char **)configs.v;
		po->config_count = configs.n;
		po->default_repo = 1;
		po->on_warning = w->opts->on_warning;
		po->warning_data = w->opts->warning_data;
		so.redact = w->opts->redact;
		/* saved as `envlock save` would, but into the archive rather than a file */
		rc = envlock_save(&lock, NULL, ctx, &so);
		el_strvec_release(&configs);
	}
	if (rc == 0 && w->opts->lock_path && w->opts->redact)
		envlock_lock_redact(lock);
	if (rc == 0) {
		/* written once, the id settled from that text (as envlock_lock_write does) */
		if (el_lock_write_settled(lock, out) != 0)
			rc = el_error_set(ctx, ENVLOCK_ELIMIT, "the lockfile is larger than 64 MiB");
		else
			snprintf(id, idlen, "%s", envlock_lock_id(lock));
	}
	envlock_lock_free(lock);
	return rc;
}

/* MANIFEST.json's text (malloc'd into *out); ENVLOCK_ELIMIT past 64 MiB. */
static int manifest_text(char **out, envlock_ctx *ctx, const walk *w, const char *name, const char *lock_id)
{
	cJSON *m = el_jnew_obj(), *files;
	el_buf b = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	int rc = 0;

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
	*out = NULL;
	if (el_json_write(m, &b, 2) != 0)
		rc = el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': the manifest of %zu entries is larger than 64 MiB", w->top, w->n);
	else
		*out = el_buf_detach(&b);
	el_buf_release(&b);
	cJSON_Delete(m);
	return rc;
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

/*
 * A libarchive tar writer that hands its bytes to fn as they come, with
 * no blocking (bytes_per_block 0): headers and data go straight through,
 * and the archive is only as long as its entries and its end.
 */
static struct archive *tar_writer(void *data, archive_write_callback *fn)
{
	struct archive *a = archive_write_new();

	if (!a)
		el_oom();
	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_per_block(a, 0);
	if (archive_write_open2(a, data, NULL, fn, NULL, NULL) != ARCHIVE_OK)
		el_oom();
	return a;
}

typedef struct {
	el_buf *out;
	int closing;          /* the archive's end is not wanted */
} blob_sink;

static la_ssize_t blob_write(struct archive *a, void *data, const void *buf, size_t n)
{
	blob_sink *s = data;

	(void)a;
	if (!s->closing && el_buf_put(s->out, buf, n) != 0)
		return -1;
	return (la_ssize_t)n;
}

/* One regular file's tar entry (header, data, padding) without the archive's end, into out. */
static int tar_blob(el_buf *out, envlock_ctx *ctx, const char *name, const char *data, size_t len, time_t t)
{
	blob_sink sink = { out, 0 };
	struct archive *a = tar_writer(&sink, blob_write);
	struct archive_entry *e = new_entry(name, AE_IFREG, 0644, t, (int64_t)len);
	int rc = 0;

	if (archive_write_header(a, e) != ARCHIVE_OK || archive_write_data(a, data, len) != (la_ssize_t)len ||
	    archive_write_finish_entry(a) != ARCHIVE_OK)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing %s: %s", name, el_archive_reason(a));
	sink.closing = 1;
	archive_entry_free(e);
	archive_write_free(a);
	return rc;
}

/*
 * A zstd frame of raw blocks holding n bytes (RFC 8878, 3.1.1): no
 * content size, a 128 KiB window (Window_Descriptor 0x38: exponent 7,
 * 2^(10+7) bytes), blocks of at most 128 KiB, no checksum. Its size is
 * known from n alone. Writes it into dst (NULL: only the size).
 */
static size_t raw_frame(const char *src, size_t n, char *dst)
{
	size_t blocks = n ? (n + EL_RAW_BLOCK - 1) / EL_RAW_BLOCK : 1, at = 6;

	if (!dst)
		return 6 + 3 * blocks + n;
	memcpy(dst, "\x28\xb5\x2f\xfd\x00\x38", 6);
	for (size_t b = 0, done = 0; b < blocks; b++) {
		size_t len = n - done < EL_RAW_BLOCK ? n - done : EL_RAW_BLOCK;
		/* Last_Block (bit 0), Block_Type 0 raw (bits 1-2), Block_Size (bits 3-23), little-endian */
		uint32_t h = (uint32_t)(b + 1 == blocks) | (uint32_t)len << 3;

		dst[at++] = (char)(h & 0xff);
		dst[at++] = (char)(h >> 8 & 0xff);
		dst[at++] = (char)(h >> 16 & 0xff);
		memcpy(dst + at, src + done, len);
		at += len;
		done += len;
	}
	return at;
}

/* pwrite all of p at off; 0 or -1 with errno. */
static int pwrite_all(int fd, const char *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* The compressor of run C: zstd streaming into a fixed buffer, written out as it fills. */
typedef struct {
	ZSTD_CCtx *cc;
	int fd;
	off_t at;             /* where the next write goes */
	char *buf;
	size_t len;
	int err_no;           /* of a failed write */
	const char *zerr;     /* of a failed compression */
	int raw;              /* an entry's data goes out in raw blocks, not through zstd */
	int kick;             /* start writing back what is written as it goes (the output itself) */
	off_t kicked;         /* up to where */
} zout;

#define EL_KICK_BYTES (32 << 20)

/*
 * The output is fsynced before it takes its name: start the disk on each
 * 32 MiB as it is written (SYNC_FILE_RANGE_WRITE waits for nothing), so
 * that the final fsync finds little left to do instead of the whole file.
 */
static void zout_kick(zout *z)
{
	if (!z->kick || z->at - z->kicked < EL_KICK_BYTES)
		return;
	sync_file_range(z->fd, z->kicked, z->at - z->kicked, SYNC_FILE_RANGE_WRITE);
	z->kicked = z->at;
}

static int zout_flush(zout *z)
{
	if (z->len && pwrite_all(z->fd, z->buf, z->len, z->at) != 0) {
		z->err_no = errno;
		return -1;
	}
	z->at += (off_t)z->len;
	z->len = 0;
	zout_kick(z);
	return 0;
}

/* Compress n bytes (ZSTD_e_end: and end the frame, writing everything out). */
static int zout_put(zout *z, const void *p, size_t n, ZSTD_EndDirective end)
{
	ZSTD_inBuffer in = { p, n, 0 };

	for (;;) {
		ZSTD_outBuffer out = { z->buf, EL_ZOUT_SIZE, z->len };
		size_t left = ZSTD_compressStream2(z->cc, &out, &in, end);

		z->len = out.pos;
		if (ZSTD_isError(left)) {
			z->zerr = ZSTD_getErrorName(left);
			return -1;
		}
		if (z->len == EL_ZOUT_SIZE && zout_flush(z) != 0)
			return -1;
		if (end == ZSTD_e_end ? left == 0 : in.pos == in.size)
			break;
	}
	return end == ZSTD_e_end ? zout_flush(z) : 0;
}

static const char *zout_reason(const zout *z)
{
	return z->zerr ? z->zerr : el_strerror(z->err_no);
}

/* Write iov[0..n) at z->at in full; 0 or -1 with z->err_no. */
static int zout_writev(zout *z, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = pwritev(z->fd, iov, n, z->at);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			z->err_no = w < 0 ? errno : EIO;
			return -1;
		}
		z->at += w;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++, n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	zout_kick(z);
	return 0;
}

/*
 * Data that zstd would not shrink (a package archive, a wheel) in a frame
 * of raw blocks of its own (RFC 8878, 3.1.1.2.2: no compression, each
 * block a 3-byte header before its bytes), written from the caller's
 * buffer as it is: the compressed frame before it ended first, an empty
 * last block after it (raw_end()).
 */
static int raw_begin(zout *z)
{
	if (zout_put(z, NULL, 0, ZSTD_e_end) != 0)
		return -1;
	/* magic, Frame_Header_Descriptor 0 (no content size, no checksum), a 128 KiB window */
	memcpy(z->buf, "\x28\xb5\x2f\xfd\x00\x38", 6);
	z->len = 6;
	if (zout_flush(z) != 0)
		return -1;
	z->raw = 1;
	return 0;
}

static int raw_put(zout *z, const char *p, size_t n)
{
	enum { GROUP = 32 };
	unsigned char hdr[GROUP][3];
	struct iovec iov[2 * GROUP];

	while (n) {
		int k = 0;

		for (; k < GROUP && n; k++) {
			size_t len = n < EL_RAW_BLOCK ? n : EL_RAW_BLOCK;
			/* Last_Block 0, Block_Type 0 (raw), Block_Size */
			uint32_t h = (uint32_t)len << 3;

			hdr[k][0] = (unsigned char)(h & 0xff);
			hdr[k][1] = (unsigned char)(h >> 8 & 0xff);
			hdr[k][2] = (unsigned char)(h >> 16 & 0xff);
			iov[2 * k].iov_base = hdr[k];
			iov[2 * k].iov_len = 3;
			iov[2 * k + 1].iov_base = (void *)p;
			iov[2 * k + 1].iov_len = len;
			p += len;
			n -= len;
		}
		if (zout_writev(z, iov, 2 * k) != 0)
			return -1;
	}
	return 0;
}

static int raw_end(zout *z)
{
	z->raw = 0;
	/* an empty raw block, the last (as zstd itself ends a frame) */
	memcpy(z->buf, "\x01\x00\x00", 3);
	z->len = 3;
	return zout_flush(z);
}

static la_ssize_t body_write(struct archive *a, void *data, const void *buf, size_t n)
{
	zout *z = data;

	if (z->raw ? raw_put(z, buf, n) != 0 : zout_put(z, buf, n, ZSTD_e_continue) != 0) {
		archive_set_error(a, z->zerr ? -1 : z->err_no, "%s", zout_reason(z));
		return -1;
	}
	return (la_ssize_t)n;
}

/*
 * The reader thread and its hand-over to the compressor: a ring of
 * fixed buffers, each holding the next piece of the next stored file in
 * archive order. The reader hashes a buffer before handing it over; the
 * compressor gives it back once libarchive and zstd have taken it.
 */
typedef struct {
	char *data;
	size_t len;
	int first, last;      /* the file's first and last piece */
	ent *x;               /* the file */
} feed_slot;

typedef struct {
	walk *w;                      /* the reader fills in each file's hex */
	el_hashcache *hashes;         /* for the files left out (--checkpoints hash) */
	feed_slot slot[EL_FEED_SLOTS];
	unsigned filled, taken;       /* pieces handed over and given back, counting up */
	unsigned md5ed;               /* pieces the md5 thread is done with, counting up */
	int md5_running;              /* an md5 thread hashes the pieces of the files that want one */
	int reader_done;              /* the reader has handed over its last piece */
	const el_bundle_plan *plan;   /* a plan's bundle, or NULL */
	int stop;                     /* the compressor gave up: read no further */
	int failed;                   /* the reader stopped: why in err, code in rc */
	int rc;
	char err[PATH_MAX + 200];
	pthread_mutex_t mu;
	pthread_cond_t cv;
} feeder;

static void feed_fail(feeder *f, int rc, const char *path, const char *why)
{
	pthread_mutex_lock(&f->mu);
	/* the first failure is the one to report */
	if (!f->failed) {
		f->rc = rc;
		snprintf(f->err, sizeof(f->err), "'%s': %s", path, why);
	}
	f->failed = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* The next free buffer for the reader, or NULL when the compressor gave up. */
static feed_slot *feed_free_slot(feeder *f)
{
	feed_slot *s = NULL;

	pthread_mutex_lock(&f->mu);
	while (!f->stop && !f->failed &&
	       (f->filled - f->taken >= EL_FEED_SLOTS || (f->md5_running && f->filled - f->md5ed >= EL_FEED_SLOTS)))
		pthread_cond_wait(&f->cv, &f->mu);
	if (!f->stop && !f->failed)
		s = &f->slot[f->filled % EL_FEED_SLOTS];
	pthread_mutex_unlock(&f->mu);
	return s;
}

static void feed_publish(feeder *f)
{
	pthread_mutex_lock(&f->mu);
	f->filled++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* The next piece for the compressor, or NULL when the reader failed. */
static const feed_slot *feed_next(feeder *f)
{
	const feed_slot *s = NULL;

	pthread_mutex_lock(&f->mu);
	while (!f->failed && f->filled == f->taken)
		pthread_cond_wait(&f->cv, &f->mu);
	if (!f->failed)
		s = &f->slot[f->taken % EL_FEED_SLOTS];
	pthread_mutex_unlock(&f->mu);
	return s;
}

static void feed_give_back(feeder *f)
{
	pthread_mutex_lock(&f->mu);
	f->taken++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static bool same_file(const struct stat *st, const ent *x)
{
	return S_ISREG(st->st_mode) && st->st_dev == x->dev && st->st_ino == x->ino &&
	       (uint64_t)st->st_size == x->fsize &&
	       st->st_mtim.tv_sec == x->mtim.tv_sec && st->st_mtim.tv_nsec == x->mtim.tv_nsec &&
	       st->st_ctim.tv_sec == x->ctim.tv_sec && st->st_ctim.tv_nsec == x->ctim.tv_nsec;
}

/*
 * Read one stored file into the ring, hashing each piece. The file must
 * be the one the walk found — same inode, size, modification and change
 * times — when it is opened and after its last byte is read, or the
 * bundle fails: its digest and its data in the archive are of the same
 * bytes, and those bytes are the file as it was when the walk saw it.
 */
static int feed_file(feeder *f, ent *x, const char *full)
{
	/* a plan's sources are in caches, where a link to the file is usual: stat() found what it leads to */
	int fd = open(full, O_RDONLY | O_CLOEXEC | O_NOCTTY | (x->src ? 0 : O_NOFOLLOW));
	el_sha256 *h;
	uint64_t done = 0;
	struct stat st;

	if (fd < 0) {
		feed_fail(f, errno == ENOENT ? ENVLOCK_ERROR : ENVLOCK_EIO, full,
			  errno == ENOENT || errno == ELOOP ? "changed while being bundled" : el_strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !same_file(&st, x)) {
		feed_fail(f, ENVLOCK_ERROR, full, "changed while being bundled");
		close(fd);
		return -1;
	}
	if (x->offset > 0 && lseek(fd, x->offset, SEEK_SET) != x->offset) {
		feed_fail(f, ENVLOCK_EIO, full, el_strerror(errno));
		close(fd);
		return -1;
	}
	posix_fadvise(fd, x->offset, (off_t)x->size, POSIX_FADV_SEQUENTIAL);
	h = el_sha256_begin();
	for (;;) {
		feed_slot *s = feed_free_slot(f);
		size_t want = x->size - done < EL_BUNDLE_CHUNK ? (size_t)(x->size - done) : EL_BUNDLE_CHUNK;
		ssize_t n = 0;

		if (!s)
			break;
		while (want && (n = read(fd, s->data, want)) < 0 && errno == EINTR)
			;
		if (n < 0 || (want && n == 0)) {
			feed_fail(f, n < 0 ? ENVLOCK_EIO : ENVLOCK_ERROR, full,
				  n < 0 ? el_strerror(errno) : "changed while being bundled");
			break;
		}
		el_sha256_update(h, s->data, (size_t)n);
		s->x = x;
		s->first = done == 0;
		done += (uint64_t)n;
		s->len = (size_t)n;
		s->last = done == x->size;
		if (s->last) {
			/* the last piece goes out only once the file is known to be unchanged */
			if (fstat(fd, &st) != 0 || !same_file(&st, x)) {
				feed_fail(f, ENVLOCK_ERROR, full, "changed while being bundled");
				break;
			}
			el_sha256_end(h, x->hex);
			h = NULL;
			close(fd);
			if (x->item) {
				el_bundle_item *it = x->item;

				memcpy(it->sha256, x->hex, EL_SHA256_HEX);
				if (it->want_sha256 && strcasecmp(it->want_sha256, x->hex) != 0) {
					char why[200];

					it->mismatch = 1;
					snprintf(why, sizeof(why), "sha256 %s is not the wanted %.64s", x->hex, it->want_sha256);
					feed_fail(f, ENVLOCK_ERROR, full, why);
					return -1;
				}
			}
			feed_publish(f);
			return 0;
		}
		feed_publish(f);
	}
	el_sha256_abort(h);
	close(fd);
	return -1;
}

/*
 * The md5 thread: the pieces of the files that want an md5, in order,
 * while the reader goes on with sha256 and the compressor with zstd (md5
 * is the slowest of the three). Each file's md5 is checked at its last
 * piece.
 */
static void *md5_run(void *data)
{
	feeder *f = data;
	el_md5 *m = NULL; /* fetched once (util/hash.c): this thread runs beside the reader's sha256 */
	for (;;) {
		feed_slot *s;
		el_bundle_item *it;

		pthread_mutex_lock(&f->mu);
		while (!f->stop && !f->failed && f->md5ed == f->filled && !f->reader_done)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stop || f->failed || f->md5ed == f->filled) {
			pthread_mutex_unlock(&f->mu);
			break;
		}
		s = &f->slot[f->md5ed % EL_FEED_SLOTS];
		pthread_mutex_unlock(&f->mu);
		it = s->x ? s->x->item : NULL;
		if (it && it->md5) {
			if (s->first) {
				el_md5_abort(m);
				m = el_md5_begin();
			}
			if (m)
				el_md5_update(m, s->data, s->len);
			if (s->last && m) {
				el_md5_end(m, it->md5_hex);
				m = NULL;
				if (it->want_md5 && strcasecmp(it->want_md5, it->md5_hex) != 0) {
					char why[200];

					it->mismatch = 1;
					snprintf(why, sizeof(why), "md5 %s is not the wanted %.32s", it->md5_hex, it->want_md5);
					feed_fail(f, ENVLOCK_ERROR, s->x->src ? s->x->src : s->x->rel, why);
					break;
				}
			}
		}
		pthread_mutex_lock(&f->mu);
		f->md5ed++;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
	}
	el_md5_abort(m);
	return NULL;
}

/* The plan's late file, once every item's digests are known: its bytes from the plan, into the ring. */
static int feed_late(feeder *f, ent *x)
{
	const el_bundle_plan *plan = f->plan;
	char *data;
	size_t len = 0, done = 0;
	el_sha256 *h;

	/* every md5 is in before the late file is made of them */
	pthread_mutex_lock(&f->mu);
	while (!f->stop && !f->failed && f->md5_running && f->md5ed != f->filled)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
	data = plan->late(plan->late_data, &len);
	if (len != x->size) {
		char why[120];

		snprintf(why, sizeof(why), "%zu bytes, not the %llu announced", len, (unsigned long long)x->size);
		free(data);
		feed_fail(f, ENVLOCK_ERROR, x->rel, why);
		return -1;
	}
	h = el_sha256_begin();
	do {
		feed_slot *s = feed_free_slot(f);
		size_t n = len - done < EL_BUNDLE_CHUNK ? len - done : EL_BUNDLE_CHUNK;

		if (!s) {
			el_sha256_abort(h);
			free(data);
			return -1;
		}
		memcpy(s->data, data + done, n);
		el_sha256_update(h, s->data, n);
		s->x = x;
		s->first = done == 0;
		done += n;
		s->len = n;
		s->last = done == len;
		if (s->last)
			el_sha256_end(h, x->hex);
		feed_publish(f);
	} while (done < len);
	free(data);
	return 0;
}

/* A file left out of the archive: only its digest, from the digest cache when it is current. */
static int feed_digest_only(feeder *f, ent *x, const char *full)
{
	uint64_t size = 0;
	int err_no = 0, rc = el_hashcache_file(f->hashes, full, x->hex, &size, &err_no);

	if (rc == 0 && size != x->size)
		rc = ENVLOCK_ERROR;
	if (rc != 0)
		feed_fail(f, rc, full, rc == ENVLOCK_ERROR ? "changed while being bundled" : el_root_reason(rc, err_no));
	return rc;
}

static void *feed_run(void *data)
{
	feeder *f = data;
	walk *w = f->w;

	for (size_t i = 0; i < w->n; i++) {
		ent *x = &w->v[i];
		char *full;
		int rc;

		if (x->type != ENT_FILE)
			continue;
		pthread_mutex_lock(&f->mu);
		rc = f->stop;
		pthread_mutex_unlock(&f->mu);
		if (rc)
			break;
		if (x->late) {
			if (feed_late(f, x) != 0)
				break;
			continue;
		}
		full = x->src ? el_xstrdup(x->src) : el_path_join(w->top, x->rel);
		rc = x->stored ? feed_file(f, x, full) : feed_digest_only(f, x, full);
		free(full);
		if (rc != 0)
			break;
	}
	pthread_mutex_lock(&f->mu);
	f->reader_done = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* The reader failed or the compressor gave up: tell the other side. */
static void feed_stop(feeder *f)
{
	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

/* Set the bundle's error from the reader's, once it has stopped. */
static int feed_error(envlock_ctx *ctx, const feeder *f)
{
	return el_error_set(ctx, f->rc, "%s", f->err);
}

/* Run C: every work_dir entry in order, then the end of the tar archive, as one zstd frame. */
static int write_body(envlock_ctx *ctx, const walk *w, feeder *f, zout *z, const char *name, time_t clamp,
		      el_progress *bar)
{
	struct archive *a = tar_writer(z, body_write);
	int rc = 0, raw;

	for (size_t i = 0; rc == 0 && i < w->n; i++) {
		const ent *x = &w->v[i];
		char *path = el_xasprintf("%s/%s", name, x->rel);
		time_t t = x->mtime < clamp ? x->mtime : clamp;
		struct archive_entry *e = NULL;

		/* a signal: stop between entries and between pieces; the caller says why */
		if (el_interrupted()) {
			free(path);
			rc = ENVLOCK_ERROR;
			break;
		}
		if (x->type == ENT_DIR) {
			e = new_entry(path, AE_IFDIR, 0755, t, 0);
		} else if (x->type == ENT_LINK) {
			e = new_entry(path, AE_IFLNK, 0777, t, 0);
			archive_entry_set_symlink(e, x->target);
		} else if (x->stored) {
			e = new_entry(path, AE_IFREG, x->mode, t, (int64_t)x->size);
		}
		if (e && archive_write_header(a, e) != ARCHIVE_OK)
			rc = el_error_set(ctx, ENVLOCK_EIO, "writing '%s': %s", path, el_archive_reason(a));
		archive_entry_free(e);
		raw = rc == 0 && x->item && x->item->stored_raw && x->size > 0;
		if (raw && raw_begin(z) != 0)
			rc = el_error_set(ctx, ENVLOCK_EIO, "writing the archive: %s", zout_reason(z));
		while (rc == 0 && x->type == ENT_FILE && x->stored) {
			const feed_slot *s = el_interrupted() ? NULL : feed_next(f);
			int last;

			if (!s) {
				rc = ENVLOCK_ERROR; /* the reader's error, set by the caller */
				break;
			}
			if (s->len && archive_write_data(a, s->data, s->len) != (la_ssize_t)s->len)
				rc = el_error_set(ctx, ENVLOCK_EIO, "writing '%s': %s", path, el_archive_reason(a));
			el_progress_add(s->len, bar);
			last = s->last;
			feed_give_back(f);
			if (last)
				break;
		}
		if (raw && rc == 0 && raw_end(z) != 0)
			rc = el_error_set(ctx, ENVLOCK_EIO, "writing the archive: %s", zout_reason(z));
		free(path);
	}
	if (rc == 0 && archive_write_close(a) != ARCHIVE_OK)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing the archive: %s", el_archive_reason(a));
	archive_write_free(a);
	if (rc == 0 && zout_put(z, NULL, 0, ZSTD_e_end) != 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing the archive: %s", zout_reason(z));
	return rc;
}

/* A tar entry as one compressed frame written at at; its length into *len. */
static int write_compressed(size_t *len, envlock_ctx *ctx, int fd, off_t at, const el_buf *tar, int level,
			    const char *name)
{
	size_t cap = ZSTD_compressBound(tar->len), n;
	char *frame = el_xmalloc(cap);
	int rc = 0;

	n = ZSTD_compress(frame, cap, tar->data, tar->len, level);
	if (ZSTD_isError(n))
		rc = el_error_set(ctx, ENVLOCK_EIO, "compressing %s: %s", name, ZSTD_getErrorName(n));
	else if (pwrite_all(fd, frame, n, at) != 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing the archive: %s", el_strerror(errno));
	*len = ZSTD_isError(n) ? 0 : n;
	free(frame);
	return rc;
}

/* Run A: the lockfile's entry as one compressed frame at the start of fd. */
static int write_lock_frame(off_t *end, envlock_ctx *ctx, int fd, const el_buf *lock, time_t clamp, int level)
{
	el_buf tar = EL_BUF_INIT(EL_BUNDLE_MAX_META + (1u << 20));
	size_t n = 0;
	int rc = tar_blob(&tar, ctx, EL_BUNDLE_LOCK, lock->data, lock->len, clamp);

	if (rc == 0)
		rc = write_compressed(&n, ctx, fd, 0, &tar, level, EL_BUNDLE_LOCK);
	*end = (off_t)n;
	el_buf_release(&tar);
	return rc;
}

/* MANIFEST.json's tar entry, from the digests the walk holds (stand-ins until the files are read). */
static int manifest_tar(el_buf *tar, envlock_ctx *ctx, const walk *w, const char *name, const char *lock_id,
			time_t clamp)
{
	char *manifest = NULL;
	int rc = manifest_text(&manifest, ctx, w, name, lock_id);

	el_buf_reset(tar);
	if (rc == 0)
		rc = tar_blob(tar, ctx, EL_BUNDLE_MANIFEST, manifest, strlen(manifest), clamp);
	free(manifest);
	return rc;
}

/* Run B as raw blocks into the room left for it at at, which it must fill exactly. */
static int write_manifest_raw(envlock_ctx *ctx, int fd, off_t at, const el_buf *tar, size_t room)
{
	size_t n = raw_frame(NULL, tar->len, NULL);
	char *frame;
	int rc = 0;

	/* the digests are 64 hex digits like their stand-ins: the same length */
	if (n != room)
		return el_error_set(ctx, ENVLOCK_ERROR, "the manifest changed length (%zu, not %zu bytes)", n, room);
	frame = el_xmalloc(n);
	raw_frame(tar->data, tar->len, frame);
	if (pwrite_all(fd, frame, n, at) != 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "writing the archive: %s", el_strerror(errno));
	free(frame);
	return rc;
}

/* Copy n bytes from the start of src to dst at off, through buf (EL_BUNDLE_CHUNK bytes). */
static int copy_body(envlock_ctx *ctx, int src, int dst, off_t off, uint64_t n, char *buf)
{
	for (off_t in = 0; n;) {
		size_t want = n < EL_BUNDLE_CHUNK ? (size_t)n : EL_BUNDLE_CHUNK;
		ssize_t got = pread(src, buf, want, in);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || pwrite_all(dst, buf, (size_t)got, off) != 0)
			return el_error_set(ctx, ENVLOCK_EIO, "writing the archive: %s",
					    got == 0 ? "its temporary body was cut short" : el_strerror(errno));
		in += got;
		off += got;
		n -= (uint64_t)got;
	}
	return 0;
}

static int zout_open(zout *z, envlock_ctx *ctx, int fd, off_t at, const envlock_bundle_opts *opts)
{
	size_t r;

	memset(z, 0, sizeof(*z));
	z->fd = fd;
	z->at = at;
	z->cc = ZSTD_createCCtx();
	if (!z->cc)
		el_oom();
	z->buf = el_xmalloc_io(EL_ZOUT_SIZE);
	r = ZSTD_CCtx_setParameter(z->cc, ZSTD_c_compressionLevel, opts->level > 0 ? opts->level : 3);
	/*
	 * One compression thread by default, beside the reader thread: on the
	 * 2-vCPU machine this was measured on, zstd's worker threads made the
	 * bundle slower (bench/RESULTS.md). zstd's multithreaded output differs
	 * from its single-threaded output but not between thread counts
	 * (facebook/zstd#2238), so --threads 2 and --threads 8 give the same bytes.
	 */
	if (!ZSTD_isError(r) && opts->threads > 1)
		r = ZSTD_CCtx_setParameter(z->cc, ZSTD_c_nbWorkers, opts->threads);
	if (ZSTD_isError(r))
		return el_error_set(ctx, ENVLOCK_EINVAL, "zstd: %s", ZSTD_getErrorName(r));
	return 0;
}

static void zout_close(zout *z)
{
	ZSTD_freeCCtx(z->cc);
	el_free_io(z->buf);
}

/*
 * Where run C goes. Normally straight into the output, after the room
 * for a raw run B. When the manifest would be a large part of the bundle
 * (a work_dir of many small files: stored raw it could be several times
 * the rest), C goes to a second temporary file instead and is copied
 * behind a compressed B; that copy is then at most 64 times the
 * manifest's size. Either way the choice follows from the work_dir alone,
 * so the bytes stay the same from run to run.
 */
static int spill_body(const el_buf *manifest_tar, uint64_t stored)
{
	return manifest_tar->len > stored / 64;
}

/* Runs A, C and B into fd (the temporary output at tmp), reading every file once. */
static int write_parts(envlock_ctx *ctx, walk *w, int fd, const char *tmp, const char *name, const el_buf *lock,
		       const char *lock_id, const el_bundle_plan *plan)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	const int level = w->opts->level > 0 ? w->opts->level : 3;
	el_buf mtar = EL_BUF_INIT(EL_BUNDLE_MAX_META + (1u << 20));
	time_t clamp = 0;
	uint64_t total = 0;
	size_t room = 0, mlen = 0;
	off_t lock_end = 0;
	char *warning = NULL;
	el_progress *bar;
	pthread_t thread, md5_thread;
	feeder f;
	zout z;
	int rc, started, spill, body_fd = fd;

	memset(&z, 0, sizeof(z));
	memset(&f, 0, sizeof(f));
	/* mtimes: SOURCE_DATE_EPOCH caps them; otherwise the newest entry's time stands for the bundle */
	for (size_t i = 0; i < w->n; i++) {
		if (w->v[i].mtime > clamp)
			clamp = w->v[i].mtime;
		if (w->v[i].type == ENT_FILE && w->v[i].stored)
			total += w->v[i].size;
	}
	if (sde && *sde)
		clamp = (time_t)strtoll(sde, NULL, 10);
	if ((rc = write_lock_frame(&lock_end, ctx, fd, lock, clamp, level)) != 0 ||
	    (rc = manifest_tar(&mtar, ctx, w, name, lock_id, clamp)) != 0)
		goto done;
	room = raw_frame(NULL, mtar.len, NULL);
	spill = spill_body(&mtar, total);
	if (spill) {
		char *path = el_xasprintf("%s.body.XXXXXX", tmp);

		body_fd = mkstemp(path);
		if (body_fd >= 0)
			unlink(path);
		free(path);
		if (body_fd < 0) {
			rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", tmp, el_strerror(errno));
			goto done;
		}
	}
	if ((rc = zout_open(&z, ctx, body_fd, spill ? 0 : lock_end + (off_t)room, w->opts)) != 0)
		goto done;
	z.kick = !spill;
	z.kicked = z.at;

	f.w = w;
	f.plan = plan;
	for (size_t i = 0; i < w->n && !f.md5_running; i++)
		f.md5_running = w->v[i].item && w->v[i].item->md5;
	pthread_mutex_init(&f.mu, NULL);
	pthread_cond_init(&f.cv, NULL);
	for (size_t i = 0; i < w->n && !f.hashes; i++)
		if (w->v[i].type == ENT_FILE && !w->v[i].stored) {
			f.hashes = el_hashcache_open(0, &warning);
			if (warning && w->opts->on_warning)
				w->opts->on_warning(warning, w->opts->warning_data);
		}
	for (int i = 0; i < EL_FEED_SLOTS; i++)
		f.slot[i].data = el_xmalloc_io(EL_BUNDLE_CHUNK);
	bar = el_progress_start("bundling", total, w->opts->progress);
	started = f.md5_running ? pthread_create(&md5_thread, NULL, md5_run, &f) : 0;
	if (started != 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "cannot start the md5 thread: %s", el_strerror(started));
		f.md5_running = 0;
	} else if ((started = pthread_create(&thread, NULL, feed_run, &f)) != 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "cannot start the reader thread: %s", el_strerror(started));
		feed_stop(&f);
	} else {
		rc = write_body(ctx, w, &f, &z, name, clamp, bar);
	}
	if (started == 0) {
		if (rc != 0)
			feed_stop(&f);
		pthread_join(thread, NULL);
	}
	/* a file's md5 is checked after the compressor took its last piece: wait for it before anything is kept */
	if (f.md5_running)
		pthread_join(md5_thread, NULL);
	el_progress_finish(bar);
	/* the reader's failure is the one to report: the compressor only saw it stop */
	if (started == 0 && f.failed)
		rc = feed_error(ctx, &f);
	if (rc == 0)
		rc = manifest_tar(&mtar, ctx, w, name, lock_id, clamp);
	if (rc == 0 && !spill)
		rc = write_manifest_raw(ctx, fd, lock_end, &mtar, room);
	if (rc == 0 && spill && (rc = write_compressed(&mlen, ctx, fd, lock_end, &mtar, level, EL_BUNDLE_MANIFEST)) == 0)
		rc = copy_body(ctx, body_fd, fd, lock_end + (off_t)mlen, (uint64_t)z.at, f.slot[0].data);
	if (f.hashes)
		el_hashcache_save(f.hashes);
	el_hashcache_free(f.hashes);
	for (int i = 0; i < EL_FEED_SLOTS; i++)
		el_free_io(f.slot[i].data);
	pthread_cond_destroy(&f.cv);
	pthread_mutex_destroy(&f.mu);
done:
	if (body_fd >= 0 && body_fd != fd)
		close(body_fd);
	zout_close(&z);
	el_buf_release(&mtar);
	free(warning);
	return rc;
}

/* write_parts with a UTF-8 LC_CTYPE, so that libarchive stores names outside ASCII (util/ctype.h) */
static int write_archive(envlock_ctx *ctx, walk *w, int fd, const char *tmp, const char *name, const el_buf *lock,
			 const char *lock_id, const el_bundle_plan *plan)
{
	locale_t was = el_utf8_ctype_enter();
	int rc = write_parts(ctx, w, fd, tmp, name, lock, lock_id, plan);

	el_utf8_ctype_leave(was);
	return rc;
}

/*
 * A failed write of the archive (a full disk) says which file: "writing
 * the archive: <why>" becomes "'<out_path>': write failed: <why>".
 */
static int name_output(envlock_ctx *ctx, int rc, const char *out_path)
{
	static const char pre[] = "writing the archive: ";
	const char *m = rc && ctx ? envlock_error_last(ctx) : NULL;
	char *why;

	if (!m || strncmp(m, pre, sizeof(pre) - 1) != 0)
		return rc;
	why = el_xstrdup(m + sizeof(pre) - 1);
	rc = el_error_set(ctx, rc, "'%s': write failed: %s", out_path, why);
	free(why);
	return rc;
}

int envlock_bundle_create(envlock_ctx *ctx, const char *work_dir, const char *out_path,
			  const envlock_bundle_opts *opts)
{
	static const envlock_bundle_opts defaults;
	walk w;
	char *top = realpath(work_dir, NULL);
	char id[80] = "";
	el_buf lock = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	el_tmpfile out = EL_TMPFILE_INIT;
	struct stat st;
	int rc = 0, polling = 0;

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
	if ((rc = lock_text(&lock, id, sizeof(id), ctx, &w)) != 0)
		goto done;

	/*
	 * write next to the output, fsync, then rename: a failed bundle leaves
	 * nothing behind, nor does a signal (polled between pieces)
	 */
	el_interrupt_poll_begin();
	polling = 1;
	if ((rc = el_tmpfile_open(&out, ctx, out_path)) != 0)
		goto done;
	rc = name_output(ctx, write_archive(ctx, &w, out.fd, out.tmp, el_path_base(top), &lock, id, NULL), out_path);
	/* on disk before it takes the name: a crash never leaves a short bundle under it */
	if (rc == 0)
		rc = el_tmpfile_commit(&out, 0644);
done:
	el_tmpfile_rollback(&out);
	if (rc != 0 && polling && el_interrupted())
		rc = el_interrupt_error(ctx, out_path);
	if (polling)
		el_interrupt_poll_end();
	for (size_t i = 0; i < w.n; i++) {
		free(w.v[i].rel);
		free(w.v[i].target);
	}
	free(w.v);
	free(top);
	el_buf_release(&lock);
	return rc;
}

int el_bundle_item_stat(el_bundle_item *it)
{
	struct stat st;

	if (stat(it->src, &st) != 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	it->src_size = (unsigned long long)st.st_size;
	it->dev = (unsigned long long)st.st_dev;
	it->ino = (unsigned long long)st.st_ino;
	it->mtime_sec = (long long)st.st_mtim.tv_sec;
	it->mtime_nsec = (long long)st.st_mtim.tv_nsec;
	it->ctime_sec = (long long)st.st_ctim.tv_sec;
	it->ctime_nsec = (long long)st.st_ctim.tv_nsec;
	it->executable = (st.st_mode & 0111) != 0;
	return 0;
}

/* Paths in the order collect() walks a folder: a folder's entries straight after it, '/' before any name byte. */
static int walk_cmp(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const ent *)a)->rel;
	const unsigned char *y = (const unsigned char *)((const ent *)b)->rel;

	for (;; x++, y++) {
		int c = *x == '/' ? 1 : *x, d = *y == '/' ? 1 : *y;

		if (c != d || !c)
			return c - d;
	}
}

/* The folder rel[0..len) and those above it as entries, once each, a parent first. */
static void plan_dirs(walk *w, el_strvec *seen, const char *rel, size_t len, time_t now)
{
	char *d;
	ent e;

	if (!len)
		return;
	d = el_xstrndup(rel, len);
	if (el_strvec_has(seen, d)) {
		free(d);
		return;
	}
	for (size_t i = len; i-- > 0;)
		if (rel[i] == '/') {
			plan_dirs(w, seen, rel, i, now);
			break;
		}
	el_strvec_push(seen, d);
	memset(&e, 0, sizeof(e));
	e.rel = d;
	e.type = ENT_DIR;
	e.mode = 0755;
	e.mtime = now;
	push(w, &e);
}

/* The folders above rel. */
static void plan_parents(walk *w, el_strvec *seen, const char *rel, time_t now)
{
	const char *slash = strrchr(rel, '/');

	if (slash)
		plan_dirs(w, seen, rel, (size_t)(slash - rel), now);
}

static int plan_walk(walk *w, envlock_ctx *ctx, const el_bundle_plan *plan)
{
	el_strvec seen = EL_STRVEC_INIT;
	time_t now = time(NULL);
	int rc = 0;

	if (plan->nitems + plan->ndirs + 1 > EL_BUNDLE_MAX_ENTRIES)
		return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': more than %d entries", plan->name, EL_BUNDLE_MAX_ENTRIES);
	for (size_t i = 0; i < plan->ndirs; i++)
		plan_dirs(w, &seen, plan->dirs[i], strlen(plan->dirs[i]), now);
	for (size_t i = 0; i < plan->nitems && rc == 0; i++) {
		el_bundle_item *it = &plan->items[i];
		ent e;

		plan_parents(w, &seen, it->path, now);
		memset(&e, 0, sizeof(e));
		e.rel = el_xstrdup(it->path);
		e.type = ENT_FILE;
		e.size = it->size;
		e.fsize = it->src_size;
		e.mode = it->executable ? 0755 : 0644;
		e.mtime = (time_t)it->mtime_sec;
		e.stored = 1;
		e.dev = (dev_t)it->dev;
		e.ino = (ino_t)it->ino;
		e.mtim.tv_sec = (time_t)it->mtime_sec;
		e.mtim.tv_nsec = (long)it->mtime_nsec;
		e.ctim.tv_sec = (time_t)it->ctime_sec;
		e.ctim.tv_nsec = (long)it->ctime_nsec;
		e.src = it->src;
		e.offset = (off_t)it->offset;
		e.item = it;
		it->mismatch = 0;
		it->sha256[0] = it->md5_hex[0] = '\0';
		memset(e.hex, '0', EL_SHA256_HEX - 1);
		push(w, &e);
		if (it->offset < 0 || it->offset + (long long)it->size > (long long)it->src_size)
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "'%s': %llu bytes at %lld are not all in it", it->src,
					  it->size, it->offset);
	}
	if (plan->late_path) {
		ent e;

		plan_parents(w, &seen, plan->late_path, now);
		memset(&e, 0, sizeof(e));
		e.rel = el_xstrdup(plan->late_path);
		e.type = ENT_FILE;
		e.size = plan->late_size;
		e.mode = 0644;
		e.mtime = now;
		e.stored = 1;
		e.late = 1;
		memset(e.hex, '0', EL_SHA256_HEX - 1);
		push(w, &e);
	}
	el_strvec_release(&seen);
	/* the walk's order, the late file last */
	qsort(w->v, w->n - (plan->late_path ? 1 : 0), sizeof(*w->v), walk_cmp);
	for (size_t i = 0; i < w->n && rc == 0; i++) {
		char *apath = el_xasprintf("%s/%s", plan->name, w->v[i].rel), clean[PATH_MAX];
		const char *why = el_bundle_check_name(apath, clean, sizeof(clean));

		if (why)
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "'%s': %s", apath, why);
		else if (i && strcmp(w->v[i].rel, w->v[i - 1].rel) == 0)
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "'%s': listed twice", apath);
		free(apath);
	}
	return rc;
}

int el_bundle_create_plan(envlock_ctx *ctx, const el_bundle_plan *plan, const char *out_path,
			  const envlock_bundle_opts *opts)
{
	walk w;
	char id[80] = "";
	el_buf lock = EL_BUF_INIT(EL_BUNDLE_MAX_META);
	el_tmpfile out = EL_TMPFILE_INIT;
	int rc;

	memset(&w, 0, sizeof(w));
	w.ctx = ctx;
	w.opts = opts;
	w.top = plan->name;
	if (!opts->lock_path || !plan->name || !*plan->name || (plan->late_path && !plan->late))
		return el_error_set(ctx, ENVLOCK_EINVAL, "a bundle plan needs a lock, a top folder and its late file's maker");
	el_interrupt_poll_begin();
	if ((rc = plan_walk(&w, ctx, plan)) == 0 && (rc = lock_text(&lock, id, sizeof(id), ctx, &w)) == 0 &&
	    (rc = el_tmpfile_open(&out, ctx, out_path)) == 0) {
		rc = name_output(ctx, write_archive(ctx, &w, out.fd, out.tmp, plan->name, &lock, id, plan), out_path);
		if (rc == 0)
			rc = el_tmpfile_commit(&out, 0644);
	}
	el_tmpfile_rollback(&out);
	if (rc != 0 && el_interrupted())
		rc = el_interrupt_error(ctx, out_path);
	el_interrupt_poll_end();
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].rel);
	free(w.v);
	el_buf_release(&lock);
	return rc;
}
