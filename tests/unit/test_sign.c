/*
 * Unit tests for signatures: the id's canonical bytes, the whole document a
 * signature covers, key generation and its file modes, signing and
 * verifying in process (what no longer matches when created or verify
 * change), signature files that are not, and the no-replace atomic write.
 */
#include "unit.h"

#include <openssl/evp.h>

#include "sign/internal.h"
#include "util/atomic.h"
#include "util/hash.h"
#include "util/root.h"

#define GOLDEN "tests/golden/ubuntu1604-mmdet.lock.json"

static envlock_lock *load(const char *path)
{
	envlock_ctx *ctx;
	envlock_lock *lock = NULL;

	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_lock_load(&lock, ctx, path), 0);
	envlock_ctx_free(ctx);
	return lock;
}

static char *canonical_of(envlock_lock *lock)
{
	el_buf b = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);

	el_lock_canonical(lock, &b);
	return el_buf_detach(&b);
}

static void canonical_form(void **state)
{
	char *dir = unit_tmpdir(), path[4200], hex[EL_SHA256_HEX], id[80];
	envlock_lock *a = load(GOLDEN), *b;
	envlock_ctx *ctx;
	char *ca, *cb;
	FILE *f;

	(void)state;
	ca = canonical_of(a);
	/* the id is the SHA-256 of exactly these bytes, with no "id" or "created" in them */
	el_sha256_buf(ca, strlen(ca), hex);
	snprintf(id, sizeof(id), "sha256:%s", hex);
	assert_string_equal(envlock_lock_id(a), id);
	assert_null(strstr(ca, "\"created\""));
	assert_null(strstr(ca, "\"id\":\"sha256"));
	assert_null(strchr(ca, '\n'));
	/* the document is unchanged: it still has both */
	assert_non_null(el_jget_str(a->doc, "created"));
	assert_non_null(el_jget_str(a->doc, "id"));

	/* written out in another layout and read back: the same bytes */
	snprintf(path, sizeof(path), "%s/compact.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	{
		char *text = cJSON_PrintUnformatted(a->doc);

		fputs(text, f);
		free(text);
	}
	fclose(f);
	b = load(path);
	cb = canonical_of(b);
	assert_string_equal(ca, cb);
	free(cb);

	/* one value changed: other bytes, another id */
	el_jset_str(el_jget(b->doc, "python"), "version", "3.7.17");
	el_lock_touch(b);
	cb = canonical_of(b);
	assert_string_not_equal(ca, cb);
	assert_string_not_equal(envlock_lock_id(b), id);
	free(cb);
	free(ca);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	envlock_ctx_free(ctx);
	envlock_lock_free(a);
	envlock_lock_free(b);
	unit_rmtree(dir);
}

/* The bytes a signature covers: the whole document, id, created and verify too, in any layout the same. */
static void document_form(void **state)
{
	char *dir = unit_tmpdir(), path[4200], digest[EL_LOCK_DIGEST_SIZE], *bytes = NULL;
	envlock_lock *a = load(GOLDEN), *b;
	el_buf da = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX), db = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	envlock_ctx *ctx;
	size_t len = 0;
	cJSON *v;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	el_lock_document(a, &da);
	assert_non_null(strstr(da.data, "\"created\":\""));
	assert_non_null(strstr(da.data, "\"id\":\"sha256:"));
	assert_null(strchr(da.data, '\n'));
	assert_false(el_lock_verify_digest(a, digest));
	assert_string_equal(digest, "");
	/* what envlock sign --print-signed-bytes prints */
	assert_int_equal(envlock_signed_bytes(&bytes, &len, ctx, a), 0);
	assert_int_equal(len, da.len);
	assert_memory_equal(bytes, da.data, len);
	envlock_signed_bytes_free(bytes);

	/* another layout, the same bytes */
	snprintf(path, sizeof(path), "%s/compact.json", dir);
	{
		char *text = cJSON_PrintUnformatted(a->doc);

		unit_write(dir, "compact.json", text, -1);
		free(text);
	}
	b = load(path);
	el_lock_document(b, &db);
	assert_int_equal(da.len, db.len);
	assert_memory_equal(da.data, db.data, da.len);

	/* a verify section: in the bytes and in its digest, while the id stays */
	v = el_jset_obj(b->doc, "verify");
	el_jset_str(v, "result", "pass");
	el_lock_touch(b);
	assert_string_equal(envlock_lock_id(b), envlock_lock_id(a));
	assert_true(el_lock_verify_digest(b, digest));
	assert_int_equal(strncmp(digest, "sha256:", 7), 0);
	assert_int_equal(strlen(digest), 71);
	db.len = 0;
	el_lock_document(b, &db);
	assert_non_null(strstr(db.data, "\"verify\":{\"result\":\"pass\"}"));

	/* a file whose recorded id is not its content's (edited after save): no bytes to sign */
	envlock_lock_free(b);
	el_jset_str(el_jget(a->doc, "python"), "version", "3.7.17");
	{
		char *text = cJSON_PrintUnformatted(a->doc);

		unit_write(dir, "edited.json", text, -1);
		free(text);
	}
	snprintf(path, sizeof(path), "%s/edited.json", dir);
	b = load(path);
	assert_int_equal(envlock_signed_bytes(&bytes, &len, ctx, b), ENVLOCK_EINVAL);
	assert_null(bytes);
	assert_non_null(strstr(envlock_error_last(ctx), "is not the id of its content"));

	el_buf_release(&da);
	el_buf_release(&db);
	envlock_lock_free(a);
	envlock_lock_free(b);
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

static void keygen_and_sign(void **state)
{
	char *dir = unit_tmpdir(), prefix[4200], sig[4200], other[4200];
	envlock_keygen_result kr, kr2;
	envlock_sign_result sr;
	envlock_sig_report rep;
	envlock_lock *lock = load(GOLDEN);
	envlock_ctx *ctx;
	EVP_PKEY *pkey = NULL;
	char fp[ENVLOCK_SIGN_ID_SIZE];
	struct stat st;
	mode_t old = umask(0);

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	snprintf(prefix, sizeof(prefix), "%s/k", dir);
	assert_int_equal(envlock_keygen(&kr, ctx, prefix, 0), 0);
	umask(old);
	assert_int_equal(stat(kr.private_path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(kr.public_path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* the fingerprint printed is the one of the key read back */
	assert_int_equal(el_key_read(&pkey, ctx, kr.public_path, 0), 0);
	assert_int_equal(el_key_fingerprint(fp, ctx, pkey), 0);
	assert_string_equal(fp, kr.fingerprint);
	EVP_PKEY_free(pkey);
	/* an existing pair is kept */
	assert_int_equal(envlock_keygen(&kr2, ctx, prefix, 0), ENVLOCK_EEXISTS);
	assert_non_null(strstr(envlock_error_last(ctx), "already exists"));

	snprintf(sig, sizeof(sig), "%s/lock.sig", dir);
	assert_int_equal(envlock_sign(&sr, ctx, lock, kr.private_path, sig), 0);
	assert_string_equal(sr.lock_id, envlock_lock_id(lock));
	assert_string_equal(sr.fingerprint, kr.fingerprint);
	assert_string_equal(sr.created, el_jget_str(lock->doc, "created"));
	assert_string_equal(sr.verify, "");
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_int_equal(rep.valid, 1);
	assert_string_equal(rep.reason, "");
	assert_int_equal(rep.covers, ENVLOCK_SIG_COVERS_DOCUMENT);
	assert_string_equal(rep.created, sr.created);
	assert_string_equal(rep.verify, "");

	/* a date changed after signing: the id stays, the signature fails, saying which date */
	el_jset_str(lock->doc, "created", "2001-01-01T00:00:00Z");
	el_lock_touch(lock);
	assert_string_equal(envlock_lock_id(lock), sr.lock_id);
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_int_equal(rep.valid, 0);
	assert_non_null(strstr(rep.reason, "\"created\" changed after signing"));
	assert_non_null(strstr(rep.reason, "this lock says 2001-01-01T00:00:00Z"));
	el_jset_str(lock->doc, "created", sr.created);
	/* a verify section added after signing */
	el_jset_str(el_jset_obj(lock->doc, "verify"), "result", "pass");
	el_lock_touch(lock);
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_int_equal(rep.valid, 0);
	assert_non_null(strstr(rep.reason, "a verify section was added after signing"));
	/* signed with it, then its result changed */
	assert_int_equal(envlock_sign(&sr, ctx, lock, kr.private_path, sig), 0);
	assert_string_equal(sr.verify, "pass");
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_int_equal(rep.valid, 1);
	assert_string_equal(rep.verify, "pass");
	el_jset_str(el_jget(lock->doc, "verify"), "result", "fail");
	el_lock_touch(lock);
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_int_equal(rep.valid, 0);
	assert_non_null(strstr(rep.reason, "the signature covers pass, this lock says fail"));
	cJSON_DeleteItemFromObjectCaseSensitive(lock->doc, "verify");
	el_lock_touch(lock);
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_non_null(strstr(rep.reason, "the verify section was removed after signing"));
	assert_int_equal(envlock_sign(&sr, ctx, lock, kr.private_path, sig), 0);

	/* another key */
	snprintf(other, sizeof(other), "%s/other", dir);
	assert_int_equal(envlock_keygen(&kr2, ctx, other, 0), 0);
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr2.public_path), 0);
	assert_int_equal(rep.valid, 0);
	assert_non_null(strstr(rep.reason, "signed by another key"));
	/* a changed lock */
	el_jset_str(el_jget(lock->doc, "python"), "version", "3.7.17");
	el_lock_touch(lock);
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_int_equal(rep.valid, 0);
	assert_non_null(strstr(rep.reason, "the signature is for lock"));

	envlock_keygen_result_release(&kr);
	envlock_keygen_result_release(&kr2);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

static void signature_files(void **state)
{
	static const struct {
		const char *text;
		int code;
		const char *says;
	} cases[] = {
		{ "[]", ENVLOCK_EPARSE, "not a JSON object" },
		{ "{\"envlock_signature\": 3}", ENVLOCK_EVERSION, "format 3 is not supported" },
		{ "{\"envlock_signature\": 1, \"algorithm\": \"ed448\"}", ENVLOCK_EPARSE, "'ed448' is not supported" },
		{ "{\"envlock_signature\": 1, \"algorithm\": \"ed25519\", \"lock_id\": \"sha256:00\"}", ENVLOCK_EPARSE, "\"lock_id\"" },
		{ "{\"envlock_signature\": 1, \"x\": 1}", ENVLOCK_EPARSE, "unexpected member \"x\"" },
		{ "{\"envlock_signature\": 1, \"covers\": \"document\"}", ENVLOCK_EPARSE, "unexpected member \"covers\"" },
		{ "{\"envlock_signature\": 2, \"file_sha256\": \"x\"}", ENVLOCK_EPARSE, "unexpected member \"file_sha256\"" },
		{ "{\"envlock_signature\": 2, \"algorithm\": \"ed25519\"}", ENVLOCK_EPARSE, "no \"lock_id\"" },
	};
	char *dir = unit_tmpdir(), path[4200];
	envlock_ctx *ctx;
	el_sigfile s;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	snprintf(path, sizeof(path), "%s/x.sig", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unit_write(dir, "x.sig", cases[i].text, -1);
		assert_int_equal(el_sigfile_read(&s, ctx, path), cases[i].code);
		assert_non_null(strstr(envlock_error_last(ctx), cases[i].says));
	}
	/* a formatted file reads back to the same values */
	memset(&s, 0, sizeof(s));
	s.format = EL_SIG_FORMAT_OLD;
	snprintf(s.lock_id, sizeof(s.lock_id), "sha256:%064d", 7);
	snprintf(s.key_sha256, sizeof(s.key_sha256), "%064d", 9);
	for (int i = 0; i < EL_ED25519_SIG_LEN; i++)
		s.sig[i] = (unsigned char)(i * 7);
	{
		size_t len;
		char *text = el_sigfile_format(&s, &len);
		el_sigfile back;

		unit_write(dir, "x.sig", text, (long)len);
		free(text);
		assert_int_equal(el_sigfile_read(&back, ctx, path), 0);
		assert_int_equal(back.format, EL_SIG_FORMAT_OLD);
		assert_string_equal(back.lock_id, s.lock_id);
		assert_memory_equal(back.sig, s.sig, EL_ED25519_SIG_LEN);
	}
	/* format 2, with what it covers */
	s.format = EL_SIG_FORMAT_DOCUMENT;
	snprintf(s.created, sizeof(s.created), "2026-01-31T12:00:00Z");
	s.has_verify = 1;
	snprintf(s.verify_result, sizeof(s.verify_result), "no-gpu");
	snprintf(s.verify_sha256, sizeof(s.verify_sha256), "sha256:%064d", 5);
	{
		size_t len;
		char *text = el_sigfile_format(&s, &len);
		el_sigfile back;

		assert_non_null(strstr(text, "\"covers\": \"document\""));
		unit_write(dir, "x.sig", text, (long)len);
		free(text);
		assert_int_equal(el_sigfile_read(&back, ctx, path), 0);
		assert_int_equal(back.format, EL_SIG_FORMAT_DOCUMENT);
		assert_string_equal(back.created, s.created);
		assert_int_equal(back.has_verify, 1);
		assert_string_equal(back.verify_result, "no-gpu");
		assert_string_equal(back.verify_sha256, s.verify_sha256);
	}
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

static void write_new_keeps_existing(void **state)
{
	char *dir = unit_tmpdir(), path[4200], buf[16] = { 0 };
	envlock_ctx *ctx;
	struct stat st;
	FILE *f;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(el_write_atomic_new(ctx, path, "first", 5, 0600), 0);
	assert_int_equal(el_write_atomic_new(ctx, path, "second", 6, 0600), ENVLOCK_EINVAL);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), 5);
	fclose(f);
	assert_string_equal(buf, "first");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* no temporary file left behind by the refusal */
	{
		char **names = NULL;
		size_t n = 0;
		el_root live = EL_ROOT_LIVE_INIT;

		assert_int_equal(el_root_list(&live, dir, &names, &n), 0);
		assert_int_equal(n, 1);
		el_strv_free(names);
	}
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(canonical_form),
		cmocka_unit_test(document_form),
		cmocka_unit_test(keygen_and_sign),
		cmocka_unit_test(signature_files),
		cmocka_unit_test(write_new_keeps_existing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
