/* before any OpenSSL header: SHA256_Init and the rest, below, are deprecated in OpenSSL 3 */
#ifndef OPENSSL_SUPPRESS_DEPRECATED
#define OPENSSL_SUPPRESS_DEPRECATED
#endif
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/opensslconf.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "envlock/common.h"
#include "error.h"
#include "hash.h"
#include "xalloc.h"

#define EL_HASH_CHUNK (1u << 20)

/*
 * envlock hashes on several threads at once (checkpoints, diff's loads).
 * A libcrypto built without threads (OpenSSL's Configure -static implies
 * no-threads) has no locks and plain reference counts: two EVP_Digest
 * calls at once crashed or spun the static binary's drift over a fleet
 * about one run in two. Such a build is refused here, not found later.
 */
#ifndef OPENSSL_THREADS
#error "envlock needs an OpenSSL built with threads (do not give Configure -static; no-shared builds the archives)"
#endif

/*
 * SHA-256 through libcrypto's own block functions (SHA256_Init and the
 * rest: the same assembly, SHA-NI included, as EVP's provider), not
 * through EVP: the first EVP fetch builds OpenSSL's name tables and
 * starts its default provider, 4.2 million instructions (callgrind), a
 * fifth of a `show` and of a two-lock diff, whose only hashing is the
 * locks' ids (the diff's CPU time went from 7.9 to 4.7 ms without the
 * fetch, bench/RESULTS.md). They keep no state outside the
 * context, so hashing threads share nothing. OpenSSL 3 marks them
 * deprecated; a libcrypto built without them gets the EVP path below.
 */
#if defined(OPENSSL_NO_DEPRECATED_3_0)
#define EL_SHA256_EVP 1
#endif

#ifdef EL_SHA256_EVP
/*
 * SHA-256 fetched once for the whole process. OpenSSL 3 builds its table
 * of algorithm names on the first fetch, and two hashing threads doing
 * that first fetch at once (EVP_sha256() fetches implicitly) left both
 * spinning in get_legacy_cipher_names for good, with the static binary,
 * which starts OpenSSL without its config. pthread_once makes one thread
 * fetch while the others wait.
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, fetch_sha256);
	return sha256_md ? sha256_md : EVP_sha256();
}
#endif

static void to_hex(const unsigned char *md, unsigned len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < len; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * len] = '\0';
}

/* MD5, fetched once like SHA-256, for the same reason: hashing threads (envlock pack's). */
static EVP_MD *md5_md;
static pthread_once_t md5_once = PTHREAD_ONCE_INIT;

static void fetch_md5(void)
{
	md5_md = EVP_MD_fetch(NULL, "MD5", NULL);
}

static const EVP_MD *md5(void)
{
	pthread_once(&md5_once, fetch_md5);
	return md5_md ? md5_md : EVP_md5();
}

/* An el_md5 is one EVP context; an el_sha256 libcrypto's SHA-256 state (or an EVP context). */
struct el_sha256 {
#ifdef EL_SHA256_EVP
	EVP_MD_CTX *md;
#else
	SHA256_CTX c;
#endif
};
struct el_md5 {
	EVP_MD_CTX *md;
};

static EVP_MD_CTX *digest_begin(const EVP_MD *algorithm)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (!md || !EVP_DigestInit_ex(md, algorithm, NULL))
		el_oom();
	return md;
}

/* Finish md into hex and free it. */
static void digest_end(EVP_MD_CTX *md, char *hex)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned len = 0;

	if (!EVP_DigestFinal_ex(md, d, &len))
		el_oom();
	to_hex(d, len, hex);
	EVP_MD_CTX_free(md);
}

#ifndef EL_SHA256_EVP
el_sha256 *el_sha256_begin(void)
{
	el_sha256 *h = el_xmalloc(sizeof(*h));

	SHA256_Init(&h->c);
	return h;
}

void el_sha256_update(el_sha256 *h, const void *data, size_t n)
{
	SHA256_Update(&h->c, data, n);
}

void el_sha256_end(el_sha256 *h, char hex[EL_SHA256_HEX])
{
	unsigned char d[SHA256_DIGEST_LENGTH];

	SHA256_Final(d, &h->c);
	to_hex(d, sizeof(d), hex);
	free(h);
}

void el_sha256_abort(el_sha256 *h)
{
	free(h);
}
#else
el_sha256 *el_sha256_begin(void)
{
	el_sha256 *h = el_xmalloc(sizeof(*h));

	h->md = digest_begin(sha256());
	return h;
}

void el_sha256_update(el_sha256 *h, const void *data, size_t n)
{
	EVP_DigestUpdate(h->md, data, n);
}

void el_sha256_end(el_sha256 *h, char hex[EL_SHA256_HEX])
{
	digest_end(h->md, hex);
	free(h);
}

void el_sha256_abort(el_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->md);
	free(h);
}
#endif

el_md5 *el_md5_begin(void)
{
	el_md5 *h = el_xmalloc(sizeof(*h));

	h->md = digest_begin(md5());
	return h;
}

void el_md5_update(el_md5 *h, const void *data, size_t n)
{
	EVP_DigestUpdate(h->md, data, n);
}

void el_md5_end(el_md5 *h, char hex[EL_MD5_HEX])
{
	digest_end(h->md, hex);
	free(h);
}

void el_md5_abort(el_md5 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->md);
	free(h);
}

void el_sha256_buf(const void *data, size_t n, char hex[EL_SHA256_HEX])
{
	el_sha256 *h = el_sha256_begin();

	el_sha256_update(h, data, n);
	el_sha256_end(h, hex);
}

int el_sha256_fd(int fd, char hex[EL_SHA256_HEX], uint64_t *bytes,
		 void (*on_bytes)(uint64_t n, void *data), void *data)
{
	el_sha256 *h = el_sha256_begin();
	unsigned char *chunk;
	uint64_t total = 0;
	int rc = 0;

	chunk = el_xmalloc_io(EL_HASH_CHUNK);
	for (;;) {
		ssize_t n = read(fd, chunk, EL_HASH_CHUNK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = ENVLOCK_EIO;
			break;
		}
		if (n == 0)
			break;
		el_sha256_update(h, chunk, (size_t)n);
		total += (uint64_t)n;
		if (on_bytes)
			on_bytes((uint64_t)n, data);
	}
	if (rc == 0)
		el_sha256_end(h, hex);
	else
		el_sha256_abort(h);
	if (bytes)
		*bytes = total;
	el_free_io(chunk);
	return rc;
}
