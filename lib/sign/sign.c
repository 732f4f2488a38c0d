/* Sign a lock's canonical form, or a file's bytes, with Ed25519, and check such a signature. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "internal.h"
#include "lock/model.h"
#include "lock/view.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/userpath.h"

/* The bytes a signature covers (lock/json.c), as the lock id is computed from them. */
static void canonical(const envlock_lock *lock, el_buf *out)
{
	/* detached and put back: the document is unchanged when this returns */
	el_lock_canonical((envlock_lock *)lock, out);
}

/* Sign msg with the private key in key_path into s->sig; the key's fingerprint in fingerprint. */
static int sign_message(el_sigfile *s, char fingerprint[ENVLOCK_SIGN_ID_SIZE], envlock_ctx *ctx,
			const char *key_path, const el_buf *msg)
{
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *pkey = NULL;
	size_t siglen = sizeof(s->sig);
	int rc;

	if ((rc = el_key_read(&pkey, ctx, key_path, 1)) != 0)
		return rc;
	if ((rc = el_key_fingerprint(fingerprint, ctx, pkey)) != 0)
		goto done;
	ERR_clear_error();
	md = EVP_MD_CTX_new();
	/* Ed25519 hashes the message itself (RFC 8032): no digest is named */
	if (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, pkey) != 1 ||
	    EVP_DigestSign(md, s->sig, &siglen, (const unsigned char *)(msg->data ? msg->data : ""), msg->len) != 1 ||
	    siglen != EL_ED25519_SIG_LEN) {
		rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': signing failed: %s", key_path, el_ssl_reason());
		goto done;
	}
	snprintf(s->key_sha256, sizeof(s->key_sha256), "%s", fingerprint + 7);
done:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	return rc;
}

/* Write the signature file s to sig_path atomically ("-": stdout). */
static int write_sigfile(envlock_ctx *ctx, const el_sigfile *s, const char *sig_path)
{
	size_t len = 0;
	char *text = el_sigfile_format(s, &len);
	int rc = el_write_output(ctx, sig_path, text, len);

	free(text);
	return rc;
}

int envlock_sign(envlock_sign_result *out, envlock_ctx *ctx, const envlock_lock *lock,
		 const char *key_path, const char *sig_path)
{
	el_buf msg = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	el_sigfile s;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	canonical(lock, &msg);
	if ((rc = sign_message(&s, out->fingerprint, ctx, key_path, &msg)) == 0) {
		snprintf(s.lock_id, sizeof(s.lock_id), "%s", envlock_lock_id(lock));
		snprintf(out->lock_id, sizeof(out->lock_id), "%s", s.lock_id);
		rc = write_sigfile(ctx, &s, sig_path);
	}
	el_buf_release(&msg);
	return rc;
}

/* A file signed whole: its bytes, and "sha256:<hex>" of them. */
static int read_message(el_buf *msg, char id[ENVLOCK_SIGN_ID_SIZE], envlock_ctx *ctx, const char *path)
{
	char hex[EL_SHA256_HEX];
	int rc = el_userpath_read(msg, ctx, path, "file envlock signs");

	if (rc == 0) {
		el_sha256_buf(msg->data ? msg->data : "", msg->len, hex);
		snprintf(id, ENVLOCK_SIGN_ID_SIZE, "sha256:%s", hex);
	}
	return rc;
}

int envlock_sign_file(envlock_sign_result *out, envlock_ctx *ctx, const char *path, const char *key_path,
		      const char *sig_path)
{
	el_buf msg = EL_BUF_INIT(EL_SIGN_MESSAGE_MAX);
	el_sigfile s;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	if ((rc = read_message(&msg, s.file_sha256, ctx, path)) == 0 &&
	    (rc = sign_message(&s, out->fingerprint, ctx, key_path, &msg)) == 0) {
		snprintf(out->lock_id, sizeof(out->lock_id), "%s", s.file_sha256);
		rc = write_sigfile(ctx, &s, sig_path);
	}
	el_buf_release(&msg);
	return rc;
}

static void fail(envlock_sig_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(envlock_sig_report *r, const char *fmt, ...)
{
	va_list ap;

	r->valid = 0;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/*
 * Check s against msg, whose id is id (a lock's or a file's), and the public key in
 * pub_path; what differs goes into report. kind is "lock" or "file" for the messages.
 */
static int verify_message(envlock_sig_report *report, envlock_ctx *ctx, const el_sigfile *s, const char *signed_id,
			  const el_buf *msg, const char *pub_path, const char *kind)
{
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *pkey = NULL;
	int rc, ok;

	if ((rc = el_key_read(&pkey, ctx, pub_path, 0)) != 0)
		return rc;
	if ((rc = el_key_fingerprint(report->fingerprint, ctx, pkey)) != 0)
		goto done;
	/* the plainest reason first: another key, another lock or file, then the maths */
	if (strcmp(s->key_sha256, report->fingerprint + 7) != 0) {
		fail(report, "signed by another key (public key sha256:%.12s…), not by '%s'", s->key_sha256, pub_path);
		goto done;
	}
	if (!*signed_id) {
		fail(report, "the signature is not of a %s: %s", kind,
		     *s->lock_id ? "it signs a lock's content, not a file's bytes" : "it signs a file's bytes, not a lock's content");
		goto done;
	}
	if (strcmp(signed_id, report->lock_id) != 0) {
		fail(report, "the signature is for %s %s; this %s's content is %s", kind, signed_id, kind, report->lock_id);
		goto done;
	}
	ERR_clear_error();
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestVerifyInit(md, NULL, NULL, NULL, pkey) != 1) {
		rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': cannot verify: %s", pub_path, el_ssl_reason());
		goto done;
	}
	ok = EVP_DigestVerify(md, s->sig, sizeof(s->sig), (const unsigned char *)(msg->data ? msg->data : ""), msg->len);
	ERR_clear_error();
	if (ok != 1) {
		fail(report, "the signature does not match this %s's content and key: the %s or the signature was altered",
		     kind, kind);
		goto done;
	}
	report->valid = 1;
done:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	return rc;
}

int envlock_verify_sig(envlock_sig_report *report, envlock_ctx *ctx, const envlock_lock *lock,
		       const char *sig_path, const char *pub_path)
{
	el_buf msg = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	const char *recorded;
	el_sigfile s;
	int rc;

	memset(report, 0, sizeof(*report));
	if ((rc = el_sigfile_read(&s, ctx, sig_path)) != 0)
		return rc;
	snprintf(report->lock_id, sizeof(report->lock_id), "%s", envlock_lock_id(lock));
	canonical(lock, &msg);
	rc = verify_message(report, ctx, &s, s.lock_id, &msg, pub_path, "lock");
	/*
	 * The signature covers the content, not the "id" line, but the id is
	 * what a paper cites: a lock whose recorded id was edited is refused.
	 */
	recorded = el_lock_view(lock)->id;
	if (rc == 0 && report->valid && recorded && strcmp(recorded, report->lock_id) != 0)
		fail(report, "the lock records id %s, but its content is %s", recorded, report->lock_id);
	el_buf_release(&msg);
	return rc;
}

int envlock_verify_sig_file(envlock_sig_report *report, envlock_ctx *ctx, const char *path, const char *sig_path,
			    const char *pub_path)
{
	el_buf msg = EL_BUF_INIT(EL_SIGN_MESSAGE_MAX);
	el_sigfile s;
	int rc;

	memset(report, 0, sizeof(*report));
	if ((rc = el_sigfile_read(&s, ctx, sig_path)) != 0)
		return rc;
	if ((rc = read_message(&msg, report->lock_id, ctx, path)) == 0)
		rc = verify_message(report, ctx, &s, s.file_sha256, &msg, pub_path, "file");
	el_buf_release(&msg);
	return rc;
}
