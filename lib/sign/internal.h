/* Ed25519 keys and signature files, inside lib/sign. */
#ifndef EL_SIGN_INTERNAL_H
#define EL_SIGN_INTERNAL_H

#include <openssl/evp.h>

#include "envlock/sign.h"

#define EL_ED25519_SIG_LEN 64
#define EL_ED25519_KEY_LEN 32
/* Key and signature files are a few hundred bytes; this is generous. */
#define EL_SIGN_FILE_MAX ((size_t)1 << 20)
/* A file signed whole (pure Ed25519 reads the message twice, so it is held in memory): SHA256SUMS, a manifest */
#define EL_SIGN_MESSAGE_MAX ((size_t)64 << 20)

/* One line for the OpenSSL error queue's last entry (queue cleared), e.g. "bad end line". */
const char *el_ssl_reason(void);

/* Read an Ed25519 private key (want_private) or public key from a PEM file the user named. */
int el_key_read(EVP_PKEY **out, envlock_ctx *ctx, const char *path, int want_private);

/* "sha256:<hex>" of the raw 32-byte public key of pkey. */
int el_key_fingerprint(char out[ENVLOCK_SIGN_ID_SIZE], envlock_ctx *ctx, EVP_PKEY *pkey);

/* Signature file formats: 1 a lock's id form or a file's bytes, 2 a lock's whole document. */
#define EL_SIG_FORMAT_OLD 1
#define EL_SIG_FORMAT_DOCUMENT 2

/*
 * A parsed signature file: of a lock (lock_id) or of a file's bytes
 * (file_sha256, format 1), never both. A lock's format 2 file also
 * records what was signed besides the content: created, and the verify
 * section's result and digest (has_verify 0: there was none).
 */
typedef struct {
	int format;
	char lock_id[ENVLOCK_SIGN_ID_SIZE];
	char file_sha256[ENVLOCK_SIGN_ID_SIZE];
	char created[ENVLOCK_SIGN_CREATED_SIZE];
	int has_verify;
	char verify_result[ENVLOCK_SIGN_RESULT_SIZE];
	char verify_sha256[ENVLOCK_SIGN_ID_SIZE];
	char key_sha256[65];
	unsigned char sig[EL_ED25519_SIG_LEN];
} el_sigfile;

/* Read and check a signature file the user named. */
int el_sigfile_read(el_sigfile *out, envlock_ctx *ctx, const char *path);

/* Serialise a signature file in its format (2-space JSON, final newline); malloc'd. */
char *el_sigfile_format(const el_sigfile *s, size_t *len);

#endif
