/*
 * One evaluation's state shared by the reader, the evaluator and the
 * merger: the error that stops it, and the items not evaluated.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/internal.h"
#include "util/error.h"
#include "util/xalloc.h"

int el_cfg_fail(el_cfg_run *r, int code, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	if (r->fatal)
		return r->fatal;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->fatal = code;
	el_error_set(r->ctx, code, "%s", msg);
	return code;
}

void el_cfg_note(el_cfg_run *r, const char *file, int line, const char *key, const char *what)
{
	cJSON *n;

	if (r->n_notes >= EL_CFG_MAX_NOTES)
		return;
	r->n_notes++;
	free(r->last_key);
	free(r->last_what);
	r->last_key = el_xstrdup(key ? key : "");
	r->last_what = el_xstrdup(what);
	r->last_line = line;
	n = cJSON_CreateObject();
	cJSON_AddStringToObject(n, "file", file);
	cJSON_AddNumberToObject(n, "line", line);
	cJSON_AddStringToObject(n, "key", key ? key : "");
	cJSON_AddStringToObject(n, "what", what);
	cJSON_AddItemToArray(r->notes, n);
}
