/* A context's last-error message (lib/lock/context.c creates contexts). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "xalloc.h"

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
