/* Copies into a kit: read once, hashed (sha256 and md5) in the same pass. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "internal.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/progress.h"

#define PK_CHUNK (1u << 20)

typedef struct {
	EVP_MD_CTX *sha, *md5;
} pk_hashes;

/* md5 costs twice what sha256 does (SHA extensions): only conda archives, whose locks record it, get one */
static void hashes_begin(pk_hashes *h, bool md5)
{
	h->sha = EVP_MD_CTX_new();
	h->md5 = md5 ? EVP_MD_CTX_new() : NULL;
	if (!h->sha || (md5 && !h->md5) || EVP_DigestInit_ex(h->sha, EVP_sha256(), NULL) != 1 ||
	    (md5 && EVP_DigestInit_ex(h->md5, EVP_md5(), NULL) != 1))
		el_oom();
}

static void hex(const unsigned char *d, unsigned n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = '\0';
}

static void hashes_end(pk_hashes *h, pk_digest *d)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	if (h->sha && EVP_DigestFinal_ex(h->sha, md, &n) == 1)
		hex(md, n, d->sha256);
	d->md5[0] = '\0';
	if (h->md5 && EVP_DigestFinal_ex(h->md5, md, &n) == 1)
		hex(md, n, d->md5);
	EVP_MD_CTX_free(h->sha);
	EVP_MD_CTX_free(h->md5);
	h->sha = h->md5 = NULL;
}

/* Read up to length bytes (-1: all) from fd at its offset, hashing, and write them to out (-1: nowhere). */
static int pump(envlock_ctx *ctx, int fd, const char *src, off_t length, int out, const char *dst, bool md5,
		pk_digest *d, void *progress)
{
	char *buf = malloc(PK_CHUNK);
	pk_hashes h;
	long long total = 0;
	int rc = 0;

	if (!buf)
		el_oom();
	hashes_begin(&h, md5);
	for (;;) {
		size_t want = PK_CHUNK;
		ssize_t got;

		if (length >= 0 && (off_t)total + (off_t)want > length)
			want = (size_t)(length - (off_t)total);
		if (want == 0)
			break;
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
		EVP_DigestUpdate(h.sha, buf, (size_t)got);
		if (h.md5)
			EVP_DigestUpdate(h.md5, buf, (size_t)got);
		if (out >= 0 && el_write_all(out, buf, (size_t)got) != 0) {
			rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': write failed: %s", dst, el_strerror(errno));
			break;
		}
		total += got;
		if (progress)
			el_progress_add((uint64_t)got, progress);
	}
	hashes_end(&h, d);
	d->size = total;
	free(buf);
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
