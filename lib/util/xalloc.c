#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/common.h"
#include "xalloc.h"

static void (*oom_handler)(void);

void envlock_set_oom_handler(void (*handler)(void))
{
	oom_handler = handler;
}

void el_oom(void)
{
	void (*handler)(void) = oom_handler;

	if (handler)
		handler();
	fputs("envlock: fatal: out of memory\n", stderr);
	exit(2);
}

void *el_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		el_oom();
	return p;
}

#ifndef EL_IO_MISALIGN
#define EL_IO_MISALIGN 0
#endif
#define EL_IO_ALIGN 4096

void *el_xmalloc_io(size_t n)
{
	void *p = NULL;

	if (n > (size_t)-1 - EL_IO_ALIGN || posix_memalign(&p, EL_IO_ALIGN, (n ? n : 1) + EL_IO_MISALIGN) != 0)
		el_oom();
	return (char *)p + EL_IO_MISALIGN;
}

void el_free_io(void *p)
{
	if (p)
		free((char *)p - EL_IO_MISALIGN);
}

void *el_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		el_oom();
	return p;
}

void *el_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		el_oom();
	return q;
}

char *el_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		el_oom();
	return p;
}

char *el_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		el_oom();
	return p;
}

char *el_xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		el_oom();
	return s;
}

char *el_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = el_xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}
