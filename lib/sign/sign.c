/* Sign a lock's canonical form with Ed25519, and check such a signature. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "internal.h"
#include "lock/model.h"
#include "util/atomic.h"
#include "util/error.h"

/* The bytes a signature covers (lock/json.c), as the lock id is computed from them. */
static void canonical(const envlock_lock *lock, el_buf *out)
{
	/* detached and put back: the document is unchanged when this returns */
	el_lock_canonical((envlock_lock *)lock, out);
}

int envlock_sign(envlock_ctx *ctx, const envlock_lock *lock, const char *key_path,
		 const char *sig_path, envlock_sign_result *out)
{
	el_buf msg = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *pkey = NULL;
	el_sigfile s;
	size_t siglen = sizeof(s.sig), len = 0;
	char *text = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	if ((rc = el_key_read(ctx, key_path, 1, &pkey)) != 0)
		return rc;
	if ((rc = el_key_fingerprint(ctx, pkey, out->fingerprint)) != 0)
		goto done;
	canonical(lock, &msg);
	ERR_clear_error();
	md = EVP_MD_CTX_new();
	/* Ed25519 hashes the message itself (RFC 8032): no digest is named */
	if (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, pkey) != 1 ||
	    EVP_DigestSign(md, s.sig, &siglen, (const unsigned char *)msg.data, msg.len) != 1 ||
	    siglen != EL_ED25519_SIG_LEN) {
		rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': signing failed: %s", key_path, el_ssl_reason());
		goto done;
	}
	snprintf(s.lock_id, sizeof(s.lock_id), "%s", envlock_lock_id(lock));
	snprintf(s.key_sha256, sizeof(s.key_sha256), "%s", out->fingerprint + 7);
	snprintf(out->lock_id, sizeof(out->lock_id), "%s", s.lock_id);
	text = el_sigfile_format(&s, &len);
	rc = el_write_output(ctx, sig_path, text, len);
done:
	free(text);
	el_buf_release(&msg);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
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

int envlock_verify_sig(envlock_ctx *ctx, const envlock_lock *lock, const char *sig_path,
		       const char *pub_path, envlock_sig_report *report)
{
	el_buf msg = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	const char *recorded;
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *pkey = NULL;
	el_sigfile s;
	int rc, ok;

	memset(report, 0, sizeof(*report));
	if ((rc = el_sigfile_read(ctx, sig_path, &s)) != 0)
		return rc;
	if ((rc = el_key_read(ctx, pub_path, 0, &pkey)) != 0)
		return rc;
	if ((rc = el_key_fingerprint(ctx, pkey, report->fingerprint)) != 0)
		goto done;
	snprintf(report->lock_id, sizeof(report->lock_id), "%s", envlock_lock_id(lock));

	/* the plainest reason first: another key, another lock, then the maths */
	if (strcmp(s.key_sha256, report->fingerprint + 7) != 0) {
		fail(report, "signed by another key (public key sha256:%.12s…), not by '%s'", s.key_sha256, pub_path);
		goto done;
	}
	if (strcmp(s.lock_id, report->lock_id) != 0) {
		fail(report, "the signature is for lock %s; this lock's content is %s", s.lock_id, report->lock_id);
		goto done;
	}
	canonical(lock, &msg);
	ERR_clear_error();
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestVerifyInit(md, NULL, NULL, NULL, pkey) != 1) {
		rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': cannot verify: %s", pub_path, el_ssl_reason());
		goto done;
	}
	ok = EVP_DigestVerify(md, s.sig, sizeof(s.sig), (const unsigned char *)msg.data, msg.len);
	ERR_clear_error();
	if (ok != 1) {
		fail(report, "the signature does not match this lock's content and key: the lock or the signature was altered");
		goto done;
	}
	/*
	 * The signature covers the content, not the "id" line, but the id is
	 * what a paper cites: a lock whose recorded id was edited is refused.
	 */
	recorded = el_jget_str(((const envlock_lock *)lock)->doc, "id");
	if (recorded && strcmp(recorded, report->lock_id) != 0) {
		fail(report, "the lock records id %s, but its content is %s", recorded, report->lock_id);
		goto done;
	}
	report->valid = 1;
done:
	el_buf_release(&msg);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	return rc;
}
