/* A step's items: adding them, their notes, and the argument lists of their programs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util/error.h"
#include "util/xalloc.h"

el_item *el_step_add(el_step *s, envlock_item_state state, const char *fmt, ...)
{
	el_item *it;
	va_list ap;
	char *text;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->items = el_xrealloc(s->items, s->cap * sizeof(*s->items));
	}
	it = &s->items[s->n++];
	memset(it, 0, sizeof(*it));
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		el_oom();
	va_end(ap);
	it->state = state;
	it->text = text;
	it->mode = 0644;
	return it;
}

void el_item_vnote(el_item *it, const char *fmt, va_list ap)
{
	char *note;

	if (vasprintf(&note, fmt, ap) < 0)
		el_oom();
	free(it->note);
	it->note = note;
}

void el_item_note(el_item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	el_item_vnote(it, fmt, ap);
	va_end(ap);
}

char **el_strv_new(const char *first, ...)
{
	char **v = el_xcalloc(1, sizeof(*v));
	va_list ap;

	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		el_strv_push(&v, s);
	va_end(ap);
	return v;
}

void el_strv_push(char ***v, const char *s)
{
	size_t n = 0;

	while ((*v)[n])
		n++;
	*v = el_xrealloc(*v, (n + 2) * sizeof(**v));
	(*v)[n] = el_xstrdup(s);
	(*v)[n + 1] = NULL;
}
