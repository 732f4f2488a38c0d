/* SHA-256 through OpenSSL EVP (which uses the CPU's SHA extensions). */
#ifndef EL_HASH_H
#define EL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define EL_SHA256_HEX 65 /* 64 hex digits + NUL */

/* Incremental hashing, for data that arrives in pieces (a patch as libgit2 prints it). */
typedef struct el_sha256 el_sha256;

el_sha256 *el_sha256_begin(void);
void el_sha256_update(el_sha256 *h, const void *data, size_t n);
/* Write the digest into hex and free h. */
void el_sha256_end(el_sha256 *h, char hex[EL_SHA256_HEX]);
/* Free h without a digest (an error path). NULL is fine. */
void el_sha256_abort(el_sha256 *h);

/*
 * MD5, incrementally: only to compare with the md5 conda records of a
 * package archive (conda-meta, an @EXPLICIT line), beside a sha256.
 */
#define EL_MD5_HEX 33 /* 32 hex digits + NUL */
typedef struct el_md5 el_md5;
el_md5 *el_md5_begin(void);
void el_md5_update(el_md5 *h, const void *data, size_t n);
/* Write the digest into hex and free h. */
void el_md5_end(el_md5 *h, char hex[EL_MD5_HEX]);
/* Free h without a digest. NULL is fine. */
void el_md5_abort(el_md5 *h);

/* Hash n bytes into hex (lowercase). */
void el_sha256_buf(const void *data, size_t n, char hex[EL_SHA256_HEX]);

/*
 * Hash everything readable from fd, streaming through a fixed buffer so
 * memory stays flat whatever the file's size. *bytes gets the count;
 * on_bytes (may be NULL) hears of every chunk, for progress. Returns 0
 * or ENVLOCK_EIO (errno kept).
 */
int el_sha256_fd(int fd, char hex[EL_SHA256_HEX], uint64_t *bytes,
		 void (*on_bytes)(uint64_t n, void *data), void *data);

#endif
