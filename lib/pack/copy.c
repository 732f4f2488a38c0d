/* Copies into a kit: read once, hashed (sha256 and md5) in the same pass. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/interrupt.h"
#include "util/progress.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define PK_CHUNK (1u << 20)

/* Read up to length bytes (-1: all) from fd at its offset, hashing, and write them to out (-1: nowhere). */
static int pump(envlock_ctx *ctx, int fd, const char *src, off_t length, int out, const char *dst, bool md5,
		pk_digest *d, void *progress)
{
	char *buf = el_xmalloc_io(PK_CHUNK);
	/* md5 costs twice what sha256 does (SHA extensions): only where a lock has no sha256 to match (conda.c) */
	el_sha256 *sha = el_sha256_begin();
	el_md5 *m5 = md5 ? el_md5_begin() : NULL;
	long long total = 0;
	int rc = 0;

	for (;;) {
		size_t want = PK_CHUNK;
		ssize_t got;

		if (length >= 0 && (off_t)total + (off_t)want > length)
			want = (size_t)(length - (off_t)total);
		if (want == 0)
			break;
		/* envlock_pack polls: a signal stops the copy, and the kit (pack.c) */
		if (el_interrupted()) {
			rc = el_interrupt_error(ctx, dst ? dst : src);
			break;
		}
		got = read(fd, buf, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", src, el_strerror(errno));
			break;
		}
		if (got == 0) {
			if (length >= 0)
				rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': ends before its recorded size", src);
			break;
		}
		el_sha256_update(sha, buf, (size_t)got);
		if (m5)
			el_md5_update(m5, buf, (size_t)got);
		if (out >= 0 && el_write_all(out, buf, (size_t)got) != 0) {
			rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': write failed: %s", dst, el_strerror(errno));
			break;
		}
		total += got;
		if (progress)
			el_progress_add((uint64_t)got, progress);
	}
	el_sha256_end(sha, d->sha256);
	d->md5[0] = '\0';
	if (m5)
		el_md5_end(m5, d->md5);
	d->size = total;
	el_free_io(buf);
	return rc;
}

int pk_hash_file(envlock_ctx *ctx, const char *path, bool md5, pk_digest *d, void *progress)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", path, el_strerror(errno));
	rc = pump(ctx, fd, path, -1, -1, NULL, md5, d, progress);
	close(fd);
	return rc;
}

int pk_copy(envlock_ctx *ctx, const char *src, off_t offset, off_t length, const char *dst,
	    bool link_it, bool md5, pk_digest *d, void *progress)
{
	int in, out, rc;
	struct stat st;

	if (link_it && offset == 0 && length < 0 && link(src, dst) == 0)
		return pk_hash_file(ctx, dst, md5, d, progress);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", src, el_strerror(errno));
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': not a regular file", src);
	}
	if (offset > 0 && lseek(in, offset, SEEK_SET) != offset) {
		close(in);
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", src, el_strerror(errno));
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", dst, el_strerror(errno));
	}
	rc = pump(ctx, in, src, length, out, dst, md5, d, progress);
	close(in);
	if (close(out) != 0 && rc == 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': write failed: %s", dst, el_strerror(errno));
	if (rc != 0)
		unlink(dst);
	return rc;
}

int pk_stage(envlock_ctx *ctx, const char *src, off_t offset, off_t length, bool md5, el_bundle_item *it,
	     pk_digest *d)
{
	memset(it, 0, sizeof(*it));
	it->src = src;
	if (el_bundle_item_stat(it) != 0)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", src,
				    errno == EINVAL ? "not a regular file" : el_strerror(errno));
	it->offset = (long long)offset;
	it->size = length >= 0 ? (unsigned long long)length : it->src_size - (unsigned long long)offset;
	if (offset < 0 || (unsigned long long)offset + it->size > it->src_size)
		return el_error_set(ctx, ENVLOCK_EIO, "'%s': ends before its recorded size", src);
	it->md5 = md5;
	memset(d->sha256, '0', 64);
	d->sha256[64] = '\0';
	memset(d->md5, '0', 32);
	d->md5[md5 ? 32 : 0] = '\0';
	d->size = (long long)it->size;
	return 0;
}

void pk_stage_add(pk_pack *p, const el_bundle_item *it, cJSON *obj, const char *rel, const char *want_sha256,
		  const char *want_md5)
{
	pk_staged *s;

	EL_GROW(p->staged, p->nstaged + 1, p->scap);
	s = &p->staged[p->nstaged++];
	s->it = *it;
	s->obj = obj;
	s->rel = el_xstrdup(rel);
	s->src = el_xstrdup(it->src);
	s->want_sha256 = want_sha256 ? el_xstrdup(want_sha256) : NULL;
	s->want_md5 = want_md5 ? el_xstrdup(want_md5) : NULL;
	s->it.path = s->rel;
	s->it.src = s->src;
	s->it.want_sha256 = s->want_sha256;
	s->it.want_md5 = s->want_md5;
	/* package archives and wheels are compressed already: stored as they are, zstd's time is saved */
	s->it.stored_raw = strncmp(rel, "conda/", 6) == 0 || strncmp(rel, "wheels/", 7) == 0;
}
