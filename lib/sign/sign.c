/* Sign a whole lock, or a file's bytes, with Ed25519, and check such a signature. */
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

/* What a format 1 signature covered: the lock id's form (lock/json.c), without "id", "created" and "verify". */
static void id_form(const envlock_lock *lock, el_buf *out)
{
	/* detached and put back: the document is unchanged when this returns */
	el_lock_canonical((envlock_lock *)lock, out);
}

/*
 * What a signature of lock covers, into s (format 2: its id, "created" and
 * verify section), and the bytes signed, the whole document, into msg.
 * A lock whose recorded id is not its content's is not signed: the
 * signature could never be checked.
 */
static int document_form(el_sigfile *s, el_buf *msg, envlock_ctx *ctx, const envlock_lock *lock)
{
	/* the id first: a lock changed in memory settles its "id" member, which the view borrows */
	const char *id = envlock_lock_id(lock);
	const el_view *v = el_lock_view(lock);

	memset(s, 0, sizeof(*s));
	if (!v->id || strcmp(v->id, id) != 0)
		return el_error_set(ctx, ENVLOCK_EINVAL, "its recorded id %s is not the id of its content (%s): not signed",
				    v->id ? v->id : "(none)", id);
	if (!v->created)
		return el_error_set(ctx, ENVLOCK_EINVAL, "it records no \"created\" time: not signed");
	s->format = EL_SIG_FORMAT_DOCUMENT;
	snprintf(s->lock_id, sizeof(s->lock_id), "%s", id);
	snprintf(s->created, sizeof(s->created), "%s", v->created);
	s->has_verify = el_lock_verify_digest(lock, s->verify_sha256);
	snprintf(s->verify_result, sizeof(s->verify_result), "%s", s->has_verify && v->verify.result ? v->verify.result : "");
	el_lock_document(lock, msg);
	return 0;
}

int envlock_signed_bytes(char **out, size_t *len, envlock_ctx *ctx, const envlock_lock *lock)
{
	el_buf msg = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	el_sigfile s;
	int rc;

	*out = NULL;
	*len = 0;
	if ((rc = document_form(&s, &msg, ctx, lock)) == 0) {
		*len = msg.len;
		*out = el_buf_detach(&msg);
	}
	el_buf_release(&msg);
	return rc;
}

void envlock_signed_bytes_free(char *bytes)
{
	free(bytes);
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
	if ((rc = document_form(&s, &msg, ctx, lock)) == 0 &&
	    (rc = sign_message(&s, out->fingerprint, ctx, key_path, &msg)) == 0) {
		snprintf(out->lock_id, sizeof(out->lock_id), "%s", s.lock_id);
		snprintf(out->created, sizeof(out->created), "%s", s.created);
		snprintf(out->verify, sizeof(out->verify), "%s", s.verify_result);
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
	s.format = EL_SIG_FORMAT_OLD; /* a file's signature is as it was: older envlocks check new releases */
	if ((rc = read_message(&msg, s.file_sha256, ctx, path)) == 0 &&
	    (rc = sign_message(&s, out->fingerprint, ctx, key_path, &msg)) == 0) {
		snprintf(out->lock_id, sizeof(out->lock_id), "%s", s.file_sha256);
		rc = write_sigfile(ctx, &s, sig_path);
	}
	el_buf_release(&msg);
	return rc;
}

/* report is not valid: why, one line */
static void fail(envlock_sig_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(envlock_sig_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* What the signature file s says it covers. */
static envlock_sig_covers covers_of(const el_sigfile *s)
{
	if (*s->file_sha256)
		return ENVLOCK_SIG_COVERS_BYTES;
	return s->format == EL_SIG_FORMAT_OLD ? ENVLOCK_SIG_COVERS_ENVIRONMENT : ENVLOCK_SIG_COVERS_DOCUMENT;
}

/* Whether fail() said why report is not valid. */
static int failed(const envlock_sig_report *r)
{
	return r->reason[0] != '\0';
}

/*
 * The public key in pub_path into *pkey and report->fingerprint, then the
 * plainest reasons s is not this signature, into report: another key,
 * another kind of message (kind: "lock" or "file"), another content (the
 * message's id is report->lock_id; s signed signed_id).
 */
static int check_names(EVP_PKEY **pkey, envlock_sig_report *report, envlock_ctx *ctx, const el_sigfile *s,
		       const char *signed_id, const char *pub_path, const char *kind)
{
	int rc;

	if ((rc = el_key_read(pkey, ctx, pub_path, 0)) != 0)
		return rc;
	if ((rc = el_key_fingerprint(report->fingerprint, ctx, *pkey)) != 0)
		return rc;
	if (strcmp(s->key_sha256, report->fingerprint + 7) != 0)
		fail(report, "signed by another key (public key sha256:%.12s…), not by '%s'", s->key_sha256, pub_path);
	else if (!*signed_id)
		fail(report, "the signature is not of a %s: %s", kind,
		     *s->lock_id ? "it signs a lock's content, not a file's bytes" : "it signs a file's bytes, not a lock's content");
	else if (strcmp(signed_id, report->lock_id) != 0)
		fail(report, "the signature is for %s %s; this %s's content is %s", kind, signed_id, kind, report->lock_id);
	return 0;
}

/* Whether s->sig is pkey's Ed25519 signature of msg, into *ok. */
static int check_maths(int *ok, envlock_ctx *ctx, EVP_PKEY *pkey, const el_sigfile *s, const el_buf *msg,
		       const char *pub_path)
{
	EVP_MD_CTX *md;
	int rc = 0;

	ERR_clear_error();
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestVerifyInit(md, NULL, NULL, NULL, pkey) != 1)
		rc = el_error_set(ctx, ENVLOCK_ERROR, "'%s': cannot verify: %s", pub_path, el_ssl_reason());
	else
		*ok = EVP_DigestVerify(md, s->sig, sizeof(s->sig), (const unsigned char *)(msg->data ? msg->data : ""),
				       msg->len) == 1;
	ERR_clear_error();
	EVP_MD_CTX_free(md);
	return rc;
}

/* A verify result for a message: "none" when there was no verify section. */
static const char *result_or_none(int has, const char *result)
{
	return has ? result : "none";
}

/*
 * A format 2 signature over another document than lock's, whose content
 * (its id) is the one signed: what else no longer matches, as s records
 * what was signed. Also when the maths passed (signed_ok) but s's record
 * is not the lock's: then the signature file was edited.
 */
static void what_differs(envlock_sig_report *r, const el_sigfile *s, const envlock_lock *lock, int signed_ok)
{
	char digest[EL_LOCK_DIGEST_SIZE];
	int has = el_lock_verify_digest(lock, digest);
	const char *result = r->verify;

	if (signed_ok) {
		if (strcmp(s->created, r->created) != 0 || s->has_verify != has ||
		    (has && (strcmp(s->verify_result, result) != 0 || strcmp(s->verify_sha256, digest) != 0)))
			fail(r, "the signature file records created %s and verify result %s, but the signed lock has %s and %s: "
				"the signature file was edited", s->created, result_or_none(s->has_verify, s->verify_result),
			     r->created, result_or_none(has, result));
	} else if (strcmp(s->created, r->created) != 0) {
		fail(r, "\"created\" changed after signing: the signature covers %s, this lock says %s", s->created, r->created);
	} else if (!s->has_verify && has) {
		fail(r, "a verify section was added after signing: the signature covers none, this lock's says %s", result);
	} else if (s->has_verify && !has) {
		fail(r, "the verify section was removed after signing: the signature covers one that says %s", s->verify_result);
	} else if (has && strcmp(s->verify_result, result) != 0) {
		fail(r, "the verify result changed after signing: the signature covers %s, this lock says %s", s->verify_result,
		     result);
	} else if (has && strcmp(s->verify_sha256, digest) != 0) {
		fail(r, "the verify section changed after signing (its result, %s, did not)", result);
	} else {
		fail(r, "the signature does not match this lock's content and key: the lock or the signature was altered");
	}
}

int envlock_verify_sig(envlock_sig_report *report, envlock_ctx *ctx, const envlock_lock *lock,
		       const char *sig_path, const char *pub_path)
{
	el_buf msg = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	EVP_PKEY *pkey = NULL;
	int rc, ok = 0, old;
	const el_view *v;
	el_sigfile s;

	memset(report, 0, sizeof(*report));
	if ((rc = el_sigfile_read(&s, ctx, sig_path)) != 0)
		return rc;
	/* the id before the view, as in document_form */
	snprintf(report->lock_id, sizeof(report->lock_id), "%s", envlock_lock_id(lock));
	v = el_lock_view(lock);
	old = s.format == EL_SIG_FORMAT_OLD;
	report->covers = covers_of(&s);
	snprintf(report->created, sizeof(report->created), "%s", v->created ? v->created : "");
	if (v->verify.recorded)
		snprintf(report->verify, sizeof(report->verify), "%s", v->verify.result ? v->verify.result : "");
	if ((rc = check_names(&pkey, report, ctx, &s, s.lock_id, pub_path, "lock")) != 0 || failed(report))
		goto done;
	/* the id is what a paper cites: a lock whose recorded id was edited is refused, whatever the signature covers */
	if (!v->id || strcmp(v->id, report->lock_id) != 0) {
		fail(report, "the lock records id %s, but its content is %s", v->id ? v->id : "(none)", report->lock_id);
		goto done;
	}
	if (old)
		id_form(lock, &msg);
	else
		el_lock_document(lock, &msg);
	if ((rc = check_maths(&ok, ctx, pkey, &s, &msg, pub_path)) != 0)
		goto done;
	if (old && ok)
		/* intact, but it cannot vouch for the date or a verify result a paper cites: never an "ok" */
		fail(report, "an old signature (envlock_signature 1): the lock's content is as signed, but it covers "
			     "neither \"created\" nor \"verify\", so it is refused; the signer must sign the lock again");
	else if (old)
		fail(report, "the signature does not match this lock's content and key: the lock or the signature was altered");
	else
		what_differs(report, &s, lock, ok);
done:
	report->valid = rc == 0 && !failed(report);
	EVP_PKEY_free(pkey);
	el_buf_release(&msg);
	return rc;
}

int envlock_verify_sig_file(envlock_sig_report *report, envlock_ctx *ctx, const char *path, const char *sig_path,
			    const char *pub_path)
{
	el_buf msg = EL_BUF_INIT(EL_SIGN_MESSAGE_MAX);
	EVP_PKEY *pkey = NULL;
	el_sigfile s;
	int rc, ok = 0;

	memset(report, 0, sizeof(*report));
	if ((rc = el_sigfile_read(&s, ctx, sig_path)) != 0)
		return rc;
	report->covers = covers_of(&s);
	if ((rc = read_message(&msg, report->lock_id, ctx, path)) != 0 ||
	    (rc = check_names(&pkey, report, ctx, &s, s.file_sha256, pub_path, "file")) != 0 || failed(report))
		goto done;
	if ((rc = check_maths(&ok, ctx, pkey, &s, &msg, pub_path)) == 0 && !ok)
		fail(report, "the signature does not match this file's content and key: the file or the signature was altered");
done:
	report->valid = rc == 0 && !failed(report);
	EVP_PKEY_free(pkey);
	el_buf_release(&msg);
	return rc;
}
