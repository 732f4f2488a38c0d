/* Ed25519 keys: make a pair, read one from PEM, name it by its digest. */
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>

#include "internal.h"
#include "util/atomic.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/userpath.h"
#include "util/xalloc.h"

const char *el_ssl_reason(void)
{
	static _Thread_local char buf[160];
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	snprintf(buf, sizeof(buf), "%s", r ? r : "unknown OpenSSL error");
	ERR_clear_error();
	for (char *p = buf; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return buf;
}

/* Never prompt on the terminal for a passphrase: an encrypted key is an error. */
static int no_passphrase(char *buf, int size, int rwflag, void *data)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)data;
	return -1;
}

/* "RSA", "EC", "ED448": what kind of key pkey is, for messages. */
static const char *key_type_name(EVP_PKEY *pkey)
{
	int id = EVP_PKEY_get_base_id(pkey);
	const char *n = EVP_PKEY_get0_type_name(pkey);

	if (!n && id != NID_undef)
		n = OBJ_nid2sn(id);
	return n ? n : "unknown";
}

/* Why the PEM text in b is not the key wanted, from its armour lines. */
static int not_a_key(envlock_ctx *ctx, const char *path, const el_buf *b, int want_private)
{
	const char *t = el_buf_cstr(b), *why = el_ssl_reason();

	if (want_private && strstr(t, "-----BEGIN PUBLIC KEY-----"))
		return el_error_set(ctx, ENVLOCK_EPARSE,
				    "'%s': a public key; signing needs the private key (<prefix>.key.pem)", path);
	if (!want_private && strstr(t, "PRIVATE KEY-----"))
		return el_error_set(ctx, ENVLOCK_EPARSE,
				    "'%s': a private key; verify-sig takes the public key (<prefix>.pub.pem)", path);
	if (want_private && (strstr(t, "-----BEGIN ENCRYPTED PRIVATE KEY-----") || strstr(t, "Proc-Type: 4,ENCRYPTED")))
		return el_error_set(ctx, ENVLOCK_EPARSE,
				    "'%s': an encrypted private key; envlock reads unencrypted PKCS#8 keys", path);
	if (!strstr(t, "-----BEGIN "))
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not a PEM key file", path);
	if (!strstr(t, "-----END "))
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': a truncated PEM file (no END line)", path);
	return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not a readable PEM %s key (OpenSSL: %s)", path,
			    want_private ? "private" : "public", why);
}

int el_key_read(EVP_PKEY **out, envlock_ctx *ctx, const char *path, int want_private)
{
	el_buf b = EL_BUF_INIT(EL_SIGN_FILE_MAX);
	EVP_PKEY *pkey = NULL;
	BIO *bio;
	int rc;

	*out = NULL;
	if ((rc = el_userpath_read(&b, ctx, path, "key file")) != 0)
		goto done;
	ERR_clear_error();
	bio = BIO_new_mem_buf(b.data ? b.data : "", (int)b.len);
	if (!bio)
		el_oom();
	pkey = want_private ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL)
			    : PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
	BIO_free(bio);
	if (!pkey) {
		rc = not_a_key(ctx, path, &b, want_private);
		goto done;
	}
	if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_ED25519) {
		rc = el_error_set(ctx, ENVLOCK_EPARSE,
				  "'%s': an %s key; envlock signs with Ed25519 keys (envlock keygen makes a pair)",
				  path, key_type_name(pkey));
		EVP_PKEY_free(pkey);
		goto done;
	}
	*out = pkey;
done:
	if (b.data)
		OPENSSL_cleanse(b.data, b.len);
	el_buf_release(&b);
	return rc;
}

int el_key_fingerprint(char out[ENVLOCK_SIGN_ID_SIZE], envlock_ctx *ctx, EVP_PKEY *pkey)
{
	unsigned char raw[EL_ED25519_KEY_LEN];
	size_t len = sizeof(raw);
	char hex[EL_SHA256_HEX];

	if (EVP_PKEY_get_raw_public_key(pkey, raw, &len) != 1 || len != sizeof(raw))
		return el_error_set(ctx, ENVLOCK_ERROR, "cannot read the raw public key: %s", el_ssl_reason());
	el_sha256_buf(raw, len, hex);
	snprintf(out, ENVLOCK_SIGN_ID_SIZE, "sha256:%s", hex);
	return 0;
}

/* The PEM text of pkey's private (PKCS#8) or public (SubjectPublicKeyInfo) half, malloc'd. */
static char *pem_of(EVP_PKEY *pkey, int private_half, size_t *len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data = NULL, *copy;
	long n;
	int ok;

	if (!bio)
		el_oom();
	ok = private_half ? PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL)
			  : PEM_write_bio_PUBKEY(bio, pkey);
	n = BIO_get_mem_data(bio, &data);
	if (ok != 1 || n <= 0) {
		BIO_free(bio);
		return NULL;
	}
	copy = el_xmalloc((size_t)n);
	memcpy(copy, data, (size_t)n);
	*len = (size_t)n;
	/* the memory BIO's copy of a private key is wiped before it is freed */
	OPENSSL_cleanse(data, (size_t)n);
	BIO_free(bio);
	return copy;
}

int envlock_keygen(envlock_keygen_result *out, envlock_ctx *ctx, const char *prefix, int force)
{
	EVP_PKEY_CTX *kctx = NULL;
	EVP_PKEY *pkey = NULL;
	char *priv = NULL, *pub = NULL;
	size_t priv_len = 0, pub_len = 0;
	struct stat st;
	int rc = 0, complete;

	memset(out, 0, sizeof(*out));
	if (!prefix || !*prefix)
		return el_error_set(ctx, ENVLOCK_EINVAL, "an empty prefix for the key files");
	out->private_path = el_xasprintf("%s.key.pem", prefix);
	out->public_path = el_xasprintf("%s.pub.pem", prefix);
	/*
	 * A private key with no public key beside it is what a keygen killed
	 * between its two files leaves: the rerun completes the pair from it
	 * (the public key is derived, nothing secret is made or replaced)
	 */
	complete = !force && lstat(out->private_path, &st) == 0 && S_ISREG(st.st_mode) &&
		   lstat(out->public_path, &st) != 0 && errno == ENOENT;
	if (complete && el_key_read(&pkey, ctx, out->private_path, 1) != 0)
		complete = 0; /* not a key of envlock's: refused as any file there */
	/* refuse before writing either file, so a refusal leaves no half pair */
	if (!force && !complete && (lstat(out->private_path, &st) == 0 || lstat(out->public_path, &st) == 0)) {
		rc = el_error_set(ctx, ENVLOCK_EEXISTS, "'%s' already exists",
				  lstat(out->private_path, &st) == 0 ? out->private_path : out->public_path);
		goto done;
	}
	/* with force, what is replaced must be a file: a folder there would fail after the first write */
	for (int i = 0; i < 2 && rc == 0; i++) {
		const char *path = i ? out->public_path : out->private_path;

		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "'%s': not a file; nothing written", path);
	}
	if (rc)
		goto done;
	ERR_clear_error();
	if (!complete && (!(kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL)) || EVP_PKEY_keygen_init(kctx) != 1 ||
			  EVP_PKEY_keygen(kctx, &pkey) != 1)) {
		rc = el_error_set(ctx, ENVLOCK_ERROR, "making an Ed25519 key: %s", el_ssl_reason());
		goto done;
	}
	priv = pem_of(pkey, 1, &priv_len);
	pub = pem_of(pkey, 0, &pub_len);
	if (!priv || !pub) {
		rc = el_error_set(ctx, ENVLOCK_ERROR, "cannot write the key as PEM: %s", el_ssl_reason());
		goto done;
	}
	if ((rc = el_key_fingerprint(out->fingerprint, ctx, pkey)) != 0)
		goto done;
	/* both files or neither: a failure must never leave a private key beside another's public key */
	if (complete) {
		rc = el_write_atomic_new(ctx, out->public_path, pub, pub_len, 0644);
		out->completed = rc == 0;
	} else if (!force) {
		rc = el_write_atomic_new(ctx, out->private_path, priv, priv_len, 0600);
		if (rc == 0 && (rc = el_write_atomic_new(ctx, out->public_path, pub, pub_len, 0644)) != 0)
			unlink(out->private_path); /* created just now: nobody else's */
	} else {
		/* the new public key waits beside the old one until the private key is in place */
		char *staged = el_xasprintf("%s.new", out->public_path);

		/* a failure is said of the public key file, the one the user named */
		if ((rc = el_write_atomic(ctx, staged, pub, pub_len, 0644)) != 0)
			el_error_restate_staged(ctx, rc, staged, out->public_path);
		if (rc == 0 && (rc = el_write_atomic(ctx, out->private_path, priv, priv_len, 0600)) != 0)
			unlink(staged);
		else if (rc == 0 && rename(staged, out->public_path) != 0)
			rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s; the new private key's public key is '%s'",
					  out->public_path, el_strerror(errno), staged);
		else if (rc == 0)
			el_fsync_parent(out->public_path);
		free(staged);
	}
done:
	if (priv)
		OPENSSL_cleanse(priv, priv_len);
	free(priv);
	free(pub);
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(kctx);
	if (rc)
		envlock_keygen_result_release(out);
	return rc;
}

void envlock_keygen_result_release(envlock_keygen_result *r)
{
	if (!r)
		return;
	free(r->private_path);
	free(r->public_path);
	r->private_path = r->public_path = NULL;
}
