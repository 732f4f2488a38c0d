/*
 * Reading a bundle: zstd decoded on a second thread, tar parsed in place.
 *
 * Verifying a bundle is hashing: decompression, the copies out of the
 * kernel and libarchive's own buffering were a third of the time on one
 * thread (bench/RESULTS.md). Here a decoder thread reads the file and
 * runs libzstd into a ring of fixed buffers; libarchive's tar reader gets
 * those buffers through its read callback and hands the entries' data out
 * of them without a copy (archive_read_data_block), so the caller hashes
 * one buffer while the next is decoded. Memory stays at the ring and
 * zstd's window, whatever the archive's size or ratio.
 */
#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "bundle.h"
#include "util/ctype.h"
#include "util/error.h"
#include "util/xalloc.h"

/* 4 x 1 MiB: 8 x 1 MiB, 4 x 2 MiB, 3 x 4 MiB and 8 x 512 KiB measured no different */
#define EL_BSTREAM_SLOTS 4
#define EL_BSTREAM_SLOT EL_BUNDLE_CHUNK
#define EL_BSTREAM_IN (1u << 20)   /* compressed bytes read at a time */
/*
 * An archive no larger than one read is decoded on the caller's thread,
 * into one slot: a thread and four slots cost more than such a file's
 * decoding, and on a busy machine the hand-offs wait for a core.
 */
#define EL_BSTREAM_INLINE EL_BSTREAM_IN
#define EL_BSTREAM_INLINE_SLOT (64u << 10) /* what the tar reader is handed at a time there */

typedef struct {
	char *data;
	size_t len;
	unsigned long long compressed; /* compressed bytes consumed by the time this was filled */
	int end;                       /* 0, or after this data: 1 the end, -1 an error (s->err) */
} bslot;

struct el_bstream {
	const char *path;
	int fd;
	struct archive *a;
	ZSTD_DCtx *dctx;               /* NULL: plain tar, passed through */
	char *in;                      /* compressed input */
	size_t in_len, in_pos;
	int in_frame;                  /* the decoder stopped inside a frame */
	unsigned long long consumed;
	bslot slot[EL_BSTREAM_SLOTS];
	unsigned filled, released;     /* counting up; slot[released % N] is the next to give */
	int holding;                   /* libarchive holds slot[released % N] */
	int ended;                     /* the tar reader was given the end (1) or an error (-1) */
	unsigned long long given;
	int stop;
	int started;                   /* the decoder thread runs; else each read decodes slot[0] inline */
	locale_t ctype_was;            /* the opening thread's LC_CTYPE, back at close (util/ctype.h) */
	size_t in_cap, slot_cap;
	char err[256];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static ssize_t read_in(el_bstream *s)
{
	ssize_t n;

	while ((n = read(s->fd, s->in, s->in_cap)) < 0 && errno == EINTR)
		;
	if (n < 0) {
		snprintf(s->err, sizeof(s->err), "%s", el_strerror(errno));
		return -1;
	}
	s->in_len = (size_t)n;
	s->in_pos = 0;
	return n;
}

/* Fill b with the file's next bytes as they are. */
static int fill_raw(el_bstream *s, bslot *b)
{
	b->len = 0;
	while (b->len < s->slot_cap) {
		size_t n;

		if (s->in_pos == s->in_len) {
			ssize_t r = read_in(s);

			if (r <= 0)
				return r < 0 ? -1 : 1;
		}
		n = s->in_len - s->in_pos < s->slot_cap - b->len ? s->in_len - s->in_pos : s->slot_cap - b->len;
		memcpy(b->data + b->len, s->in + s->in_pos, n);
		s->in_pos += n;
		s->consumed += n;
		b->len += n;
	}
	return 0;
}

/* Fill b with decoded bytes; at the end of the file, a frame left open is a truncated archive. */
static int fill_zstd(el_bstream *s, bslot *b)
{
	ZSTD_outBuffer out = { b->data, s->slot_cap, 0 };
	int rc = 0;

	while (out.pos < out.size) {
		ZSTD_inBuffer in;
		size_t before = out.pos, r;
		int at_end = 0;

		if (s->in_pos == s->in_len) {
			ssize_t n = read_in(s);

			if (n < 0) {
				rc = -1;
				break;
			}
			at_end = n == 0;
		}
		in = (ZSTD_inBuffer){ s->in, s->in_len, s->in_pos };
		r = ZSTD_decompressStream(s->dctx, &out, &in);
		if (ZSTD_isError(r)) {
			snprintf(s->err, sizeof(s->err), "zstd decompression failed: %s", ZSTD_getErrorName(r));
			rc = -1;
			break;
		}
		/* only a step that moved says where the decoder is: at the end it may have nothing to do */
		if (in.pos > s->in_pos || out.pos > before)
			s->in_frame = r != 0;
		s->consumed += in.pos - s->in_pos;
		s->in_pos = in.pos;
		if (at_end && out.pos == before) {
			if (s->in_frame) {
				snprintf(s->err, sizeof(s->err), "truncated zstd input");
				rc = -1;
			} else {
				rc = 1;
			}
			break;
		}
	}
	b->len = out.pos;
	return rc;
}

static void *decode_run(void *data)
{
	el_bstream *s = data;
	int end = 0;

	while (!end) {
		bslot *b;

		pthread_mutex_lock(&s->mu);
		while (!s->stop && s->filled - s->released >= EL_BSTREAM_SLOTS)
			pthread_cond_wait(&s->cv, &s->mu);
		b = s->stop ? NULL : &s->slot[s->filled % EL_BSTREAM_SLOTS];
		pthread_mutex_unlock(&s->mu);
		if (!b)
			break;
		end = s->dctx ? fill_zstd(s, b) : fill_raw(s, b);
		b->end = end;
		b->compressed = s->consumed;
		pthread_mutex_lock(&s->mu);
		s->filled++;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

/* The next filled slot from the decoder thread, after giving back the last; NULL after the end. */
static bslot *next_threaded(el_bstream *s)
{
	bslot *b;

	pthread_mutex_lock(&s->mu);
	if (s->holding) {
		s->released++;
		s->holding = 0;
		pthread_cond_broadcast(&s->cv);
	}
	while (!s->ended && s->filled == s->released)
		pthread_cond_wait(&s->cv, &s->mu);
	b = s->ended ? NULL : &s->slot[s->released % EL_BSTREAM_SLOTS];
	if (b)
		s->holding = 1;
	pthread_mutex_unlock(&s->mu);
	return b;
}

/* slot[0] decoded here, on the caller's thread; NULL after the end. */
static bslot *next_inline(el_bstream *s)
{
	bslot *b = &s->slot[0];

	if (s->ended)
		return NULL;
	b->end = s->dctx ? fill_zstd(s, b) : fill_raw(s, b);
	b->compressed = s->consumed;
	return b;
}

/* libarchive's read callback: give back the last buffer, hand out the next. */
static la_ssize_t bstream_read(struct archive *a, void *data, const void **buf)
{
	el_bstream *s = data;
	bslot *b = s->started ? next_threaded(s) : next_inline(s);

	if (b) {
		s->given = b->compressed;
		s->ended = b->end;
		if (b->len) {
			*buf = b->data;
			return (la_ssize_t)b->len;
		}
	}
	*buf = NULL;
	if (s->ended < 0) {
		/* -1 is libarchive's ARCHIVE_ERRNO_MISC, as its own zstd reader reports these */
		archive_set_error(a, -1, "%s", s->err);
		return -1;
	}
	return 0;
}

/*
 * One decompression context kept per thread between streams, as zstd
 * advises: its window buffer (up to the frame's window, 2 MiB and more)
 * is allocated once, not at every open. verify then extract, or a kit
 * that restore reads twice, reuse it.
 */
static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;

static void spare_free(void *d)
{
	ZSTD_freeDCtx(d);
}

static void spare_init(void)
{
	if (pthread_key_create(&spare_key, spare_free) != 0)
		el_oom();
}

static ZSTD_DCtx *dctx_take(void)
{
	ZSTD_DCtx *d;

	pthread_once(&spare_once, spare_init);
	if ((d = pthread_getspecific(spare_key)) != NULL) {
		pthread_setspecific(spare_key, NULL);
		ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
		return d;
	}
	if (!(d = ZSTD_createDCtx()))
		el_oom();
	return d;
}

static void dctx_give_back(ZSTD_DCtx *d)
{
	if (!d)
		return;
	if (pthread_getspecific(spare_key) || pthread_setspecific(spare_key, d) != 0)
		ZSTD_freeDCtx(d);
}

/* Is this the start of a zstd frame or a skippable frame (RFC 8878, 3.1.1 and 3.1.2)? */
static int zstd_magic(const unsigned char *p, size_t n)
{
	return n >= 4 && ((p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) ||
			  ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18));
}

static int open_fail(envlock_ctx *ctx, el_bstream *s, int code, const char *why)
{
	int rc = el_error_set(ctx, code, "'%s': %s", s->path, why);

	el_bstream_close(s);
	return rc;
}

int el_bstream_open(el_bstream **out, envlock_ctx *ctx, const char *path)
{
	el_bstream *s = el_xcalloc(1, sizeof(*s));
	struct stat st;
	bool small;
	int e;

	*out = NULL;
	s->path = path;
	/* while it is open, names outside ASCII read back as the UTF-8 they were written as */
	s->ctype_was = el_utf8_ctype_enter();
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (s->fd < 0) {
		e = errno;
		return open_fail(ctx, s, e == ENOENT ? ENVLOCK_ENOTFOUND : ENVLOCK_EIO, el_strerror(e));
	}
	if (fstat(s->fd, &st) != 0 || S_ISDIR(st.st_mode))
		return open_fail(ctx, s, ENVLOCK_EIO, "is a directory, not an archive");
	posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	/* a pipe's size says nothing: it is read as a large file is */
	small = S_ISREG(st.st_mode) && st.st_size <= EL_BSTREAM_INLINE;
	/* a small file's read buffer is its size (a page at least): one read, and one more that says the end */
	s->in_cap = small ? ((size_t)st.st_size + 4096) & ~(size_t)4095 : EL_BSTREAM_IN;
	s->slot_cap = small ? EL_BSTREAM_INLINE_SLOT : EL_BSTREAM_SLOT;
	s->in = el_xmalloc_io(s->in_cap);
	for (int i = 0; i < (small ? 1 : EL_BSTREAM_SLOTS); i++)
		s->slot[i].data = el_xmalloc_io(s->slot_cap);
	if (read_in(s) < 0)
		return open_fail(ctx, s, ENVLOCK_EIO, s->err);
	if (zstd_magic((const unsigned char *)s->in, s->in_len))
		s->dctx = dctx_take();
	if (!small) {
		if ((e = pthread_create(&s->thread, NULL, decode_run, s)) != 0)
			return open_fail(ctx, s, ENVLOCK_EIO, el_strerror(e));
		s->started = 1;
	}
	s->a = archive_read_new();
	if (!s->a)
		el_oom();
	archive_read_support_format_tar(s->a);
	if (archive_read_open(s->a, s, NULL, bstream_read, NULL) != ARCHIVE_OK) {
		char why[512];

		/* libarchive reports a malformed archive as EILSEQ (its private ARCHIVE_ERRNO_FILE_FORMAT) */
		e = archive_errno(s->a) == EILSEQ ? ENVLOCK_EPARSE : ENVLOCK_EIO;
		snprintf(why, sizeof(why), "%s", el_archive_reason(s->a));
		return open_fail(ctx, s, e, why);
	}
	*out = s;
	return 0;
}

struct archive *el_bstream_archive(el_bstream *s)
{
	return s->a;
}

unsigned long long el_bstream_compressed(const el_bstream *s)
{
	return s->given;
}

void el_bstream_close(el_bstream *s)
{
	if (!s)
		return;
	/* the tar reader first: it calls back into the ring until it is freed */
	if (s->a)
		archive_read_free(s->a);
	if (s->started) {
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
	}
	if (s->fd >= 0)
		close(s->fd);
	dctx_give_back(s->dctx);
	for (int i = 0; i < EL_BSTREAM_SLOTS; i++)
		el_free_io(s->slot[i].data);
	el_free_io(s->in);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	el_utf8_ctype_leave(s->ctype_was);
	free(s);
}
