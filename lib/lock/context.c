/*
 * The library context. Creating the first one sets up what the whole
 * process shares: OpenSSL without the machine's config, and cJSON's
 * allocation hooks, which are lib/lock's because the lock's arena
 * (arena.c) is where a loaded lock's nodes live.
 */
#include <stdlib.h>

#include <pthread.h>

#include <openssl/crypto.h>

#include "arena.h"
#include "util/error.h"
#include "util/xalloc.h"

static pthread_once_t cjson_hooked = PTHREAD_ONCE_INIT;

/* cJSON allocates through arena.c: out of memory ends the program, a loaded lock lives in an arena */
static void cjson_hook(void)
{
	el_cjson_hooks_install();
}

int envlock_ctx_new(envlock_ctx **out)
{
	/*
	 * envlock hashes and signs with OpenSSL's built-in providers only, so the
	 * machine's openssl.cnf is never read: the static binary would otherwise
	 * read another OpenSSL's config (RHEL's FIPS and crypto-policies
	 * includes name modules it cannot load) and fail to start its DRBG.
	 * The first initialisation wins; later calls are no-ops.
	 */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
	pthread_once(&cjson_hooked, cjson_hook);
	*out = el_xcalloc(1, sizeof(**out));
	return 0;
}

void envlock_ctx_free(envlock_ctx *ctx)
{
	free(ctx);
}
