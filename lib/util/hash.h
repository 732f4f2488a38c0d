/* SHA-256 through OpenSSL EVP (which uses the CPU's SHA extensions). */
#ifndef EL_HASH_H
#define EL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define EL_SHA256_HEX 65 /* 64 hex digits + NUL */

/* Hash n bytes into hex (lowercase). */
void el_sha256_buf(const void *data, size_t n, char hex[EL_SHA256_HEX]);

/*
 * Hash everything readable from fd, streaming through a fixed buffer so
 * memory stays flat whatever the file's size. *bytes gets the count.
 * Returns 0 or ENVLOCK_EIO (errno kept).
 */
int el_sha256_fd(int fd, char hex[EL_SHA256_HEX], uint64_t *bytes);

#endif
