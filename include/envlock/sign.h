/*
 * envlock — Ed25519 signatures of lockfiles (`envlock sign`,
 * `envlock verify-sig`, `envlock keygen`).
 *
 * What is signed is the whole lock document, "id", "created" and "verify"
 * included, as canonical JSON: keys sorted bytewise (by their UTF-8
 * bytes), no whitespace, strings as UTF-8 with only '"', '\\' and the
 * control characters escaped, whole numbers in plain digits, others in the
 * shortest form that reads back as the same double (envlock_signed_bytes
 * gives those bytes). Re-indenting or reordering the file keeps a
 * signature valid; changing any value, the date or the verify section
 * breaks it. The lock id still leaves "id", "created" and "verify" out.
 *
 * A signature file is a small JSON document
 * (schemas/envlock.sig.schema.json); for a lock (format 2):
 *   { "envlock_signature": 2, "algorithm": "ed25519", "covers": "document",
 *     "lock_id": "sha256:<hex>", "created": "<the lock's created>",
 *     "verify": null | { "result": "pass", "sha256": "sha256:<hex>" },
 *     "public_key_sha256": "<hex>",
 *     "signature": "<base64 of the 64-byte Ed25519 signature>" }
 * where created and verify record what was signed, so that a failure can
 * say what no longer matches (they are not trusted: the signature over
 * the lock is). Format 1, what envlock wrote before, signed a lock's id
 * form only (neither "created" nor "verify"): such a signature is refused
 * (report->covers says so); a file's signature (envlock_sign_file) is
 * still format 1, with "file_sha256" instead of "lock_id".
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
	int completed;       /**< 1: the private key was there alone (a keygen cut short) and only its public key was written */
} envlock_keygen_result;

/**
 * Make an Ed25519 key pair and write it to "<prefix>.key.pem" (created
 * with mode 0600 from the start) and "<prefix>.pub.pem". Existing files
 * are kept unless force is set (ENVLOCK_EEXISTS, naming the file), but
 * for an Ed25519 private key alone, with no public key file: that is a
 * keygen killed between its two files, and the pair is completed (its
 * public key written, out->completed set). Free
 * *out's strings with envlock_keygen_result_release().
 */
ENVLOCK_EXTERN(int) envlock_keygen(envlock_keygen_result *out, envlock_ctx *ctx,
				   const char *prefix, int force);

ENVLOCK_EXTERN(void) envlock_keygen_result_release(envlock_keygen_result *r);

/** A lock's "created" time, "2026-01-31T12:00:00Z", and its NUL */
#define ENVLOCK_SIGN_CREATED_SIZE 32

/** A verify result, "pass", "fail" or "no-gpu", and its NUL */
#define ENVLOCK_SIGN_RESULT_SIZE 16

/** What envlock_sign signed. */
typedef struct {
	char lock_id[ENVLOCK_SIGN_ID_SIZE];     /**< the id of the lock's content */
	char fingerprint[ENVLOCK_SIGN_ID_SIZE]; /**< "sha256:<hex>" of the signing key's public key */
	char created[ENVLOCK_SIGN_CREATED_SIZE]; /**< the lock's "created", covered ("" for a file) */
	char verify[ENVLOCK_SIGN_RESULT_SIZE];  /**< its verify result, covered; "" when it has no verify section */
} envlock_sign_result;

/**
 * Sign lock, as a whole (see above), with the Ed25519 private key in
 * key_path and write the signature file to sig_path atomically ("-":
 * stdout). Fails with ENVLOCK_EINVAL for a lock whose recorded "id" is
 * not the id of its content (edited after it was saved: a signature of
 * it could never be checked), ENVLOCK_EPARSE for a key file that is not
 * an unencrypted PEM private key or not an Ed25519 key (the message says
 * which), ENVLOCK_ENOTFOUND, ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_sign(envlock_sign_result *out, envlock_ctx *ctx,
				 const envlock_lock *lock, const char *key_path,
				 const char *sig_path);

/**
 * The bytes envlock_sign signs for lock (see above), malloc'd, *len long
 * and NUL-terminated; free them with envlock_signed_bytes_free().
 * `openssl pkeyutl -verify -rawin` checks a lock's signature over them.
 * Fails with ENVLOCK_EINVAL as envlock_sign does.
 */
ENVLOCK_EXTERN(int) envlock_signed_bytes(char **out, size_t *len, envlock_ctx *ctx,
					 const envlock_lock *lock);

/** Free what envlock_signed_bytes returned. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_signed_bytes_free(char *bytes);

/** What a signature covers. */
typedef enum {
	ENVLOCK_SIG_COVERS_NONE = 0,   /**< not known: the signature file was not read */
	ENVLOCK_SIG_COVERS_DOCUMENT,   /**< a whole lock: its content, "created" and "verify" (format 2) */
	ENVLOCK_SIG_COVERS_ENVIRONMENT, /**< a lock's id form only, neither "created" nor "verify" (format 1: refused) */
	ENVLOCK_SIG_COVERS_BYTES       /**< a file's bytes (envlock_sign_file) */
} envlock_sig_covers;

/** The outcome of envlock_verify_sig. */
typedef struct {
	int valid;                              /**< 1: signed by this key, and the lock is as signed */
	char reason[512];                       /**< why not, one line; "" when valid */
	char lock_id[ENVLOCK_SIGN_ID_SIZE];     /**< the id of the lock's content */
	char fingerprint[ENVLOCK_SIGN_ID_SIZE]; /**< "sha256:<hex>" of the public key given */
	envlock_sig_covers covers;              /**< what the signature file says it covers */
	char created[ENVLOCK_SIGN_CREATED_SIZE]; /**< the lock's "created" ("" for a file); covered when valid */
	char verify[ENVLOCK_SIGN_RESULT_SIZE];  /**< the lock's verify result, "" when it has no verify section; covered when valid */
} envlock_sig_report;

/**
 * Check the signature in sig_path against lock and the Ed25519 public key
 * in pub_path. Returns 0 when the check could be made: report->valid
 * says whether it passed. A changed lock, an added, removed or changed
 * verify section, a changed "created", another key, a lock whose recorded
 * "id" is not the id of its content fail, with the reason saying what no
 * longer matches; so does a format 1 signature, which covers neither
 * "created" nor "verify" (the reason says whether it is intact).
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
