/*
 * What conda.c, pip.c and wheels.c add to a kit being packed, beside the
 * files themselves: its manifest entries, what is missing and how to
 * fetch it, the lines it says and the warnings it gives. pack.c, the
 * orchestrator, calls them all and is called by none.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "lock/model.h"
#include "util/interrupt.h"
#include "util/root.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

void pk_entries_add(pk_entries *list, cJSON *obj, const char *kind, const char *path,
		    const char *name, const char *version)
{
	pk_entry *e;

	EL_GROW(list->v, list->n + 1, list->cap);
	e = &list->v[list->n++];
	e->kind = el_xstrdup(kind ? kind : "");
	e->path = el_xstrdup(path ? path : "");
	e->name = el_xstrdup(name ? name : "");
	e->version = el_xstrdup(version ? version : "");
	e->obj = obj;
}

void pk_warn(pk_pack *p, const char *fmt, ...)
{
	char msg[2048];
	el_buf b = EL_BUF_INIT(8192);
	va_list ap;

	/* a signal cut the copies short: the pack fails as a whole, in one line (envlock_pack) */
	if (!p->opts->on_warning || el_interrupted())
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	el_term_text(&b, msg);
	/* a staged pack may be done again (pack_kit()): its warnings are said once it stands */
	if (p->staging)
		el_strvec_push(&p->warnings, el_buf_cstr(&b));
	else
		p->opts->on_warning(el_buf_cstr(&b), p->opts->warning_data);
	el_buf_release(&b);
}

void pk_say(pk_pack *p, const char *fmt, ...)
{
	char *line;
	va_list ap;
	int n;

	if (!p->stream || el_interrupted())
		return;
	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		el_oom();
	/* names and paths come from the lock and the caches: no escape sequence reaches the terminal */
	el_term_put(p->stream, line);
	fputc('\n', p->stream);
	free(line);
}

void pk_missing(pk_pack *p, const char *kind, const char *name, const char *version,
		const char *reason, const char *fetch)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		el_oom();
	el_jset_str(o, "kind", kind);
	el_jset_str(o, "name", name);
	el_jset_str(o, "version", version ? version : "");
	el_jset_str(o, "reason", reason);
	el_jset_str(o, "fetch", fetch);
	pk_entries_add(&p->missing, o, kind, "", name, version);
	pk_say(p, "missing  %s %s %s: %s", kind, name, version ? version : "", reason);
	pk_say(p, "         fetch: %s", fetch);
}

void pk_shell_word(el_buf *b, const char *s)
{
	bool plain = *s != '\0';

	for (const char *c = s; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			strchr("-_./:=+@,%", *c);
	if (plain) {
		el_buf_adds(b, s);
		return;
	}
	el_buf_addc(b, '\'');
	for (const char *c = s; *c; c++)
		if (*c == '\'')
			el_buf_adds(b, "'\\''");
		else
			el_buf_addc(b, *c);
	el_buf_addc(b, '\'');
}

char *pk_abs(const char *path)
{
	char cwd[4096];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return el_xstrdup(path);
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	return el_path_join(cwd, path);
}
