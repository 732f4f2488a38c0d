/*
 * Signature files and PEM keys from elsewhere: a signature file checked
 * against a public key (envlock verify-sig --file, which reads the key),
 * and a PEM that says it is private read as sign reads its key. Input:
 * signature file, FZ_SEP, PEM key.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "fuzz.h"
#include "sign/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	envlock_ctx *ctx = fz_ctx();
	envlock_sig_report report;
	fz_part parts[2];
	size_t n = fz_split(data, size, parts, 2);
	const char *signed_file, *sig, *pub;
	EVP_PKEY *key = NULL;
	el_sigfile sf;

	signed_file = fz_write("SHA256SUMS", "signed bytes\n", 13);
	(void)signed_file;
	sig = fz_write("SHA256SUMS.sig", parts[0].data, parts[0].len);
	(void)el_sigfile_read(&sf, ctx, sig);
	pub = fz_write("key.pub", n > 1 ? parts[1].data : (const uint8_t *)"", n > 1 ? parts[1].len : 0);
	/* OpenSSL's PEM decoders cost most of a run: the private reader only for what says it is private */
	if (n > 1 && memmem(parts[1].data, parts[1].len, "PRIVATE", 7) && el_key_read(&key, ctx, pub, 1) == 0)
		EVP_PKEY_free(key);
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/SHA256SUMS", fz_dir());
		(void)envlock_verify_sig_file(&report, ctx, path, sig, pub);
	}
	envlock_ctx_free(ctx);
	return 0;
}
