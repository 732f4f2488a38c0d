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

#define SIG_FORMAT 1
#define SIG_B64_LEN 88 /* 64 bytes: 21 groups of 3 and 1 left over, so two '=' */

static const char *const members[] = {
	"envlock_signature", "algorithm", "lock_id", "file_sha256", "public_key_sha256", "signature", NULL
};

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

int el_sigfile_read(el_sigfile *out, envlock_ctx *ctx, const char *path)
{
	el_buf b = EL_BUF_INIT(EL_SIGN_FILE_MAX);
	const char *alg, *id, *file, *key, *sig;
	cJSON *doc = NULL, *ver, *m;
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
	if (ver->valuedouble != SIG_FORMAT) {
		rc = el_error_set(ctx, ENVLOCK_EVERSION, "'%s': signature format %g is not supported (this envlock reads %d)",
				  path, ver->valuedouble, SIG_FORMAT);
		goto done;
	}
	cJSON_ArrayForEach(m, doc) {
		int known = 0;

		for (int i = 0; members[i]; i++)
			known |= m->string && strcmp(m->string, members[i]) == 0;
		/* JSON allows a name twice; a reader might then see another value than envlock did */
		for (const cJSON *o = doc->child; known && o != m; o = o->next)
			if (strcmp(o->string, m->string) == 0) {
				char what[160];

				snprintf(what, sizeof(what), "\"%.100s\" appears twice", m->string);
				rc = bad(ctx, path, what);
				goto done;
			}
		if (!known) {
			char what[160];

			snprintf(what, sizeof(what), "unexpected member \"%.100s\"", m->string ? m->string : "");
			rc = bad(ctx, path, what);
			goto done;
		}
	}
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
	} else if (!!id == !!file) {
		rc = bad(ctx, path, "it needs one of \"lock_id\" (a lock's) and \"file_sha256\" (a file's)");
	} else if (id && (strncmp(id, "sha256:", 7) != 0 || !is_hex(id + 7, 64))) {
		rc = bad(ctx, path, "\"lock_id\" is not \"sha256:\" and 64 hex digits");
	} else if (file && (strncmp(file, "sha256:", 7) != 0 || !is_hex(file + 7, 64))) {
		rc = bad(ctx, path, "\"file_sha256\" is not \"sha256:\" and 64 hex digits");
	} else if (!key || !is_hex(key, 64)) {
		rc = bad(ctx, path, "\"public_key_sha256\" is not 64 hex digits");
	} else if (!sig || decode_sig(sig, out->sig) != 0) {
		rc = bad(ctx, path, "\"signature\" is not the base64 of a 64-byte Ed25519 signature");
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
	el_jset_int(doc, "envlock_signature", SIG_FORMAT);
	el_jset_str(doc, "algorithm", "ed25519");
	if (*s->lock_id)
		el_jset_str(doc, "lock_id", s->lock_id);
	else
		el_jset_str(doc, "file_sha256", s->file_sha256);
	el_jset_str(doc, "public_key_sha256", s->key_sha256);
	el_jset_str(doc, "signature", (const char *)b64);
	if (el_json_write(doc, &b, 2) != 0)
		el_oom();
	cJSON_Delete(doc);
	*len = b.len;
	return el_buf_detach(&b);
}
