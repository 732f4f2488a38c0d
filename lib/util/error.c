/* The library context and its last-error message. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <cJSON.h>
#include <openssl/crypto.h>

#include "error.h"
#include "lock/arena.h"
#include "xalloc.h"

static void (*oom_handler)(void);
static pthread_once_t cjson_hooked = PTHREAD_ONCE_INIT;

void envlock_set_oom_handler(void (*handler)(void))
{
	oom_handler = handler;
}

/* cJSON allocates through lib/lock/arena.c: out of memory ends the program, a loaded lock lives in an arena */
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

const char *envlock_error_last(const envlock_ctx *ctx)
{
	return ctx ? ctx->message : "";
}

const char *envlock_version(void)
{
	return "0.1.0";
}

int el_error_set(envlock_ctx *ctx, int code, const char *fmt, ...)
{
	va_list ap;

	if (!ctx)
		return code;
	va_start(ap, fmt);
	vsnprintf(ctx->message, sizeof(ctx->message), fmt, ap);
	va_end(ap);
	/* one line, whatever the inputs said */
	for (char *p = ctx->message; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return code;
}

const char *el_strerror(int err_no)
{
	static _Thread_local char buf[128];

	snprintf(buf, sizeof(buf), "%s", strerror(err_no));
	/* messages are lowercase, like git's: "no such file or directory" */
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

void el_oom(void)
{
	void (*handler)(void) = oom_handler;

	if (handler)
		handler();
	fputs("envlock: fatal: out of memory\n", stderr);
	exit(2);
}

int el_error_restate_staged(envlock_ctx *ctx, int code, const char *staged, const char *out)
{
	size_t n = strlen(staged);
	char *was, *path, *rest;
	bool itself;

	/* the message starts with the quoted staged path, or a path inside it */
	if (ctx->message[0] != '\'' || strncmp(ctx->message + 1, staged, n) != 0)
		return code;
	was = el_xstrdup(ctx->message);
	path = was + 1 + n; /* "': ..." or "/inner': ..." */
	rest = strstr(path, "': ");
	itself = path[0] == '\'';
	if (rest && (itself || path[0] == '/')) {
		*rest = '\0';
		rest += 3;
		if (itself)
			el_error_set(ctx, code, "'%s': %s", out, rest);
		else
			el_error_set(ctx, code, "'%s': staging %s: %s", out, path + 1, rest);
	}
	free(was);
	return code;
}
