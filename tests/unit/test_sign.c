/*
 * Unit tests for signatures: the canonical bytes (shared with the lock id),
 * key generation and its file modes, signing and verifying in process,
 * signature files that are not, and the no-replace atomic write.
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
	assert_int_equal(envlock_verify_sig(&rep, ctx, lock, sig, kr.public_path), 0);
	assert_int_equal(rep.valid, 1);
	assert_string_equal(rep.reason, "");

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
		assert_string_equal(back.lock_id, s.lock_id);
		assert_memory_equal(back.sig, s.sig, EL_ED25519_SIG_LEN);
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
		cmocka_unit_test(keygen_and_sign),
		cmocka_unit_test(signature_files),
		cmocka_unit_test(write_new_keeps_existing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
