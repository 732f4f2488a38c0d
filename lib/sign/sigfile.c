/* The signature file: a small JSON document, read as untrusted input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "internal.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/userpath.h"
#include "util/xalloc.h"

#define SIG_B64_LEN 88 /* 64 bytes: 21 groups of 3 and 1 left over, so two '=' */

/* the members each format allows (a format 1 file has lock_id or file_sha256) */
static const char *const members_old[] = {
	"envlock_signature", "algorithm", "lock_id", "file_sha256", "public_key_sha256", "signature", NULL
};
static const char *const members_document[] = {
	"envlock_signature", "algorithm", "covers", "lock_id", "created", "verify", "public_key_sha256", "signature",
	NULL
};
static const char *const members_verify[] = { "result", "sha256", NULL };

static int is_hex(const char *s, size_t n)
{
	if (strlen(s) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Strict base64 of exactly 64 bytes: 86 alphabet characters then "==". */
static int decode_sig(const char *s, unsigned char out[EL_ED25519_SIG_LEN])
{
	unsigned char buf[SIG_B64_LEN];

	if (strlen(s) != SIG_B64_LEN || s[86] != '=' || s[87] != '=')
		return -1;
	for (size_t i = 0; i < 86; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'))
			return -1;
	}
	/* EVP_DecodeBlock counts the padding's zero bytes too: 66 for 64 */
	if (EVP_DecodeBlock(buf, (const unsigned char *)s, SIG_B64_LEN) != EL_ED25519_SIG_LEN + 2)
		return -1;
	memcpy(out, buf, EL_ED25519_SIG_LEN);
	return 0;
}

static int bad(envlock_ctx *ctx, const char *path, const char *what)
{
	return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not an envlock signature file: %s", path, what);
}

static int is_sha256_id(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && is_hex(s + 7, 64);
}

/* "2026-01-31T12:00:00Z", as the lock schema has "created" */
static int is_timestamp(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";

	if (!s || strlen(s) != sizeof(shape) - 1)
		return 0;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			return 0;
	return 1;
}

/* Every member of obj is one of names, and none appears twice; else why, into ctx. */
static int only_members(envlock_ctx *ctx, const char *path, const cJSON *obj, const char *const *names,
			const char *where)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, obj) {
		char what[200];
		int known = 0;

		for (int i = 0; names[i]; i++)
			known |= m->string && strcmp(m->string, names[i]) == 0;
		if (!known) {
			snprintf(what, sizeof(what), "unexpected member \"%.100s\"%s", m->string ? m->string : "", where);
			return bad(ctx, path, what);
		}
		/* JSON allows a name twice; a reader might then see another value than envlock did */
		for (const cJSON *o = obj->child; o != m; o = o->next)
			if (strcmp(o->string, m->string) == 0) {
				snprintf(what, sizeof(what), "\"%.100s\" appears twice%s", m->string, where);
				return bad(ctx, path, what);
			}
	}
	return 0;
}

/* A format 2 file's record of what it covers besides the content: "covers", "created", "verify". */
static int read_covered(el_sigfile *out, envlock_ctx *ctx, const char *path, const cJSON *doc)
{
	const char *covers = el_jget_str(doc, "covers"), *created = el_jget_str(doc, "created"), *result, *digest;
	const cJSON *verify = el_jget(doc, "verify");
	int rc;

	if (!covers)
		return bad(ctx, path, "no \"covers\"");
	if (strcmp(covers, "document") != 0)
		return el_error_set(ctx, ENVLOCK_EPARSE,
				    "'%s': it covers '%.60s', which this envlock does not know (it signs the whole \"document\")",
				    path, covers);
	if (!is_timestamp(created))
		return bad(ctx, path, "\"created\" is not a time like 2026-01-31T12:00:00Z");
	snprintf(out->created, sizeof(out->created), "%s", created);
	if (!verify)
		return bad(ctx, path, "no \"verify\" (null when the lock had no verify section)");
	if (cJSON_IsNull(verify))
		return 0;
	if (!cJSON_IsObject(verify))
		return bad(ctx, path, "\"verify\" is neither null nor an object");
	if ((rc = only_members(ctx, path, verify, members_verify, " in \"verify\"")) != 0)
		return rc;
	result = el_jget_str(verify, "result");
	digest = el_jget_str(verify, "sha256");
	if (!result || (strcmp(result, "pass") != 0 && strcmp(result, "fail") != 0 && strcmp(result, "no-gpu") != 0))
		return bad(ctx, path, "\"verify\" has no \"result\" of pass, fail or no-gpu");
	if (!is_sha256_id(digest))
		return bad(ctx, path, "\"verify\" has no \"sha256\" of \"sha256:\" and 64 hex digits");
	out->has_verify = 1;
	snprintf(out->verify_result, sizeof(out->verify_result), "%s", result);
	snprintf(out->verify_sha256, sizeof(out->verify_sha256), "%s", digest);
	return 0;
}

int el_sigfile_read(el_sigfile *out, envlock_ctx *ctx, const char *path)
{
	el_buf b = EL_BUF_INIT(EL_SIGN_FILE_MAX);
	const char *alg, *id, *file, *key, *sig;
	cJSON *doc = NULL, *ver;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = el_userpath_read(&b, ctx, path, "signature file")) != 0)
		goto done;
	doc = cJSON_ParseWithLength(b.data ? b.data : "", b.len);
	if (!doc || !cJSON_IsObject(doc)) {
		rc = bad(ctx, path, "not a JSON object");
		goto done;
	}
	ver = el_jget(doc, "envlock_signature");
	if (!cJSON_IsNumber(ver)) {
		rc = bad(ctx, path, "no \"envlock_signature\" format number");
		goto done;
	}
	if (ver->valuedouble != EL_SIG_FORMAT_OLD && ver->valuedouble != EL_SIG_FORMAT_DOCUMENT) {
		rc = el_error_set(ctx, ENVLOCK_EVERSION,
				  "'%s': signature format %g is not supported (this envlock reads %d and %d)", path,
				  ver->valuedouble, EL_SIG_FORMAT_OLD, EL_SIG_FORMAT_DOCUMENT);
		goto done;
	}
	out->format = (int)ver->valuedouble;
	if ((rc = only_members(ctx, path, doc, out->format == EL_SIG_FORMAT_OLD ? members_old : members_document,
			       "")) != 0)
		goto done;
	alg = el_jget_str(doc, "algorithm");
	id = el_jget_str(doc, "lock_id");
	file = el_jget_str(doc, "file_sha256");
	key = el_jget_str(doc, "public_key_sha256");
	sig = el_jget_str(doc, "signature");
	if (!alg) {
		rc = bad(ctx, path, "no \"algorithm\"");
	} else if (strcmp(alg, "ed25519") != 0) {
		rc = el_error_set(ctx, ENVLOCK_EPARSE, "'%s': algorithm '%.60s' is not supported (envlock signs with ed25519)",
				  path, alg);
	} else if (out->format == EL_SIG_FORMAT_OLD && !!id == !!file) {
		rc = bad(ctx, path, "it needs one of \"lock_id\" (a lock's) and \"file_sha256\" (a file's)");
	} else if (out->format == EL_SIG_FORMAT_DOCUMENT && !id) {
		rc = bad(ctx, path, "no \"lock_id\"");
	} else if (id && !is_sha256_id(id)) {
		rc = bad(ctx, path, "\"lock_id\" is not \"sha256:\" and 64 hex digits");
	} else if (file && !is_sha256_id(file)) {
		rc = bad(ctx, path, "\"file_sha256\" is not \"sha256:\" and 64 hex digits");
	} else if (!key || !is_hex(key, 64)) {
		rc = bad(ctx, path, "\"public_key_sha256\" is not 64 hex digits");
	} else if (!sig || decode_sig(sig, out->sig) != 0) {
		rc = bad(ctx, path, "\"signature\" is not the base64 of a 64-byte Ed25519 signature");
	} else if (out->format == EL_SIG_FORMAT_DOCUMENT && (rc = read_covered(out, ctx, path, doc)) != 0) {
		; /* said */
	} else {
		snprintf(out->lock_id, sizeof(out->lock_id), "%s", id ? id : "");
		snprintf(out->file_sha256, sizeof(out->file_sha256), "%s", file ? file : "");
		snprintf(out->key_sha256, sizeof(out->key_sha256), "%s", key);
	}
done:
	cJSON_Delete(doc);
	el_buf_release(&b);
	return rc;
}

char *el_sigfile_format(const el_sigfile *s, size_t *len)
{
	unsigned char b64[SIG_B64_LEN + 1];
	el_buf b = EL_BUF_INIT(4096);
	cJSON *doc = el_jnew_obj();

	EVP_EncodeBlock(b64, s->sig, EL_ED25519_SIG_LEN);
	el_jset_int(doc, "envlock_signature", s->format);
	el_jset_str(doc, "algorithm", "ed25519");
	if (*s->lock_id)
		el_jset_str(doc, "lock_id", s->lock_id);
	else
		el_jset_str(doc, "file_sha256", s->file_sha256);
	if (s->format == EL_SIG_FORMAT_DOCUMENT) {
		el_jset_str(doc, "covers", "document");
		el_jset_str(doc, "created", s->created);
		if (s->has_verify) {
			cJSON *v = el_jset_obj(doc, "verify");

			el_jset_str(v, "result", s->verify_result);
			el_jset_str(v, "sha256", s->verify_sha256);
		} else {
			el_jset(doc, "verify", cJSON_CreateNull());
		}
	}
	el_jset_str(doc, "public_key_sha256", s->key_sha256);
	el_jset_str(doc, "signature", (const char *)b64);
	if (el_json_write(doc, &b, 2) != 0)
		el_oom();
	cJSON_Delete(doc);
	*len = b.len;
	return el_buf_detach(&b);
}
