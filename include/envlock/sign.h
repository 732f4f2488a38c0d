/*
 * envlock — Ed25519 signatures of lockfiles (`envlock sign`,
 * `envlock verify-sig`, `envlock keygen`).
 *
 * What is signed is the lock's canonical form: the document without "id"
 * and "created", keys sorted, no whitespace — the same bytes the lock id
 * is the SHA-256 of. Re-indenting or reordering the file keeps a signature
 * valid; changing any value breaks it. (The "created" time is not covered:
 * it is not part of the environment, and not part of the id either.)
 *
 * A signature file is a small JSON document
 * (schemas/envlock.sig.schema.json):
 *   { "envlock_signature": 1, "algorithm": "ed25519",
 *     "lock_id": "sha256:<hex>", "public_key_sha256": "<hex>",
 *     "signature": "<base64 of the 64-byte Ed25519 signature>" }
 * where public_key_sha256 is the SHA-256 of the raw 32-byte Ed25519
 * public key (RFC 8032), so it names the key whatever its file format.
 *
 * Keys are PEM files as OpenSSL writes them: an unencrypted PKCS#8
 * "PRIVATE KEY" and a SubjectPublicKeyInfo "PUBLIC KEY" (what
 * `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout` make).
 */
#ifndef ENVLOCK_SIGN_H
#define ENVLOCK_SIGN_H

#include "common.h"
#include "lock.h"

/** "sha256:" + 64 hex digits + NUL */
#define ENVLOCK_SIGN_ID_SIZE 72

/** What envlock_keygen wrote. */
typedef struct {
	char *private_path;  /**< "<prefix>.key.pem", mode 0600 (malloc'd) */
	char *public_path;   /**< "<prefix>.pub.pem" (malloc'd) */
	char fingerprint[ENVLOCK_SIGN_ID_SIZE]; /**< "sha256:<hex>" of the raw public key */
} envlock_keygen_result;

/**
 * Make an Ed25519 key pair and write it to "<prefix>.key.pem" (created
 * with mode 0600 from the start) and "<prefix>.pub.pem". Existing files
 * are kept unless force is set (ENVLOCK_EEXISTS, naming the file). Free
 * *out's strings with envlock_keygen_result_release().
 */
ENVLOCK_EXTERN(int) envlock_keygen(envlock_keygen_result *out, envlock_ctx *ctx,
				   const char *prefix, int force);

ENVLOCK_EXTERN(void) envlock_keygen_result_release(envlock_keygen_result *r);

/** What envlock_sign signed. */
typedef struct {
	char lock_id[ENVLOCK_SIGN_ID_SIZE];     /**< the id of the lock's content */
	char fingerprint[ENVLOCK_SIGN_ID_SIZE]; /**< "sha256:<hex>" of the signing key's public key */
} envlock_sign_result;

/**
 * Sign lock with the Ed25519 private key in key_path and write the
 * signature file to sig_path atomically ("-": stdout). Fails with
 * ENVLOCK_EPARSE for a key file that is not an unencrypted PEM private
 * key or not an Ed25519 key (the message says which), ENVLOCK_ENOTFOUND,
 * ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_sign(envlock_sign_result *out, envlock_ctx *ctx,
				 const envlock_lock *lock, const char *key_path,
				 const char *sig_path);

/** The outcome of envlock_verify_sig. */
typedef struct {
	int valid;                              /**< 1: signed by this key, and the lock is as signed */
	char reason[512];                       /**< why not, one line; "" when valid */
	char lock_id[ENVLOCK_SIGN_ID_SIZE];     /**< the id of the lock's content */
	char fingerprint[ENVLOCK_SIGN_ID_SIZE]; /**< "sha256:<hex>" of the public key given */
} envlock_sig_report;

/**
 * Check the signature in sig_path against lock and the Ed25519 public key
 * in pub_path. Returns 0 when the check could be made: report->valid
 * says whether it passed (a changed lock, another key, a lock whose
 * recorded "id" is not the id of its content fail, with the reason).
 * Unreadable or malformed inputs fail with ENVLOCK_EPARSE,
 * ENVLOCK_ENOTFOUND, ENVLOCK_ELIMIT or ENVLOCK_EIO and a one-line message.
 */
ENVLOCK_EXTERN(int) envlock_verify_sig(envlock_sig_report *report, envlock_ctx *ctx,
				       const envlock_lock *lock, const char *sig_path,
				       const char *pub_path);

/**
 * Sign the bytes of the file at path as they are (a release's SHA256SUMS,
 * say): pure Ed25519, so `openssl pkeyutl -verify -rawin` checks the
 * decoded signature too. The signature file records "file_sha256"
 * ("sha256:<hex>" of the bytes, in out->lock_id) instead of "lock_id".
 * Files up to 64 MiB (ENVLOCK_ELIMIT beyond); other errors as envlock_sign.
 */
ENVLOCK_EXTERN(int) envlock_sign_file(envlock_sign_result *out, envlock_ctx *ctx,
				      const char *path, const char *key_path, const char *sig_path);

/**
 * Check a signature envlock_sign_file made: as envlock_verify_sig, with
 * report->lock_id the "sha256:<hex>" of the file's bytes. A signature of
 * a lock is not valid for a file, nor the other way round.
 */
ENVLOCK_EXTERN(int) envlock_verify_sig_file(envlock_sig_report *report, envlock_ctx *ctx,
					    const char *path, const char *sig_path,
					    const char *pub_path);

#endif
