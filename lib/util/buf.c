#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "xalloc.h"

void el_buf_init(el_buf *b, size_t limit)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->limit = limit;
	b->borrowed = 0;
}

void el_buf_borrow(el_buf *b, void *mem, size_t size)
{
	el_buf_release(b);
	if (!mem || size < 1)
		return;
	b->data = mem;
	b->alloc = size;
	b->data[0] = '\0';
	b->borrowed = 1;
}

static void buf_grow(el_buf *b, size_t need)
{
	size_t n = b->alloc ? b->alloc : 256;

	while (n < need + 1)
		n *= 2;
	if (n > b->limit + 1)
		n = b->limit + 1;
	if (n > b->alloc && b->borrowed) {
		char *mine = el_xmalloc(n);

		memcpy(mine, b->data, b->len + 1);
		b->data = mine;
		b->alloc = n;
		b->borrowed = 0;
	} else if (n > b->alloc) {
		b->data = el_xrealloc(b->data, n);
		b->alloc = n;
	}
}

int el_buf_put(el_buf *b, const void *data, size_t n)
{
	if (n > b->limit - b->len)
		return ENVLOCK_ELIMIT;
	if (b->len + n + 1 > b->alloc)
		buf_grow(b, b->len + n);
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int el_buf_reserve(el_buf *b, size_t n)
{
	if (n > b->limit - b->len)
		return ENVLOCK_ELIMIT;
	if (b->len + n + 1 > b->alloc)
		buf_grow(b, b->len + n);
	return 0;
}

int el_buf_puts(el_buf *b, const char *s)
{
	return el_buf_put(b, s, strlen(s));
}

int el_buf_putc(el_buf *b, char c)
{
	return el_buf_put(b, &c, 1);
}

int el_buf_printf(el_buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return ENVLOCK_ERROR;
	if ((size_t)n < sizeof(small))
		return el_buf_put(b, small, (size_t)n);
	{
		char *big = el_xmalloc((size_t)n + 1);
		int r;

		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		r = el_buf_put(b, big, (size_t)n);
		free(big);
		return r;
	}
}

void el_buf_reset(el_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

const char *el_buf_cstr(const el_buf *b)
{
	return b->data ? b->data : "";
}

char *el_buf_detach(el_buf *b)
{
	char *p;

	if (b->borrowed) { /* the caller's memory: a copy of it */
		p = el_xmalloc(b->len + 1);
		memcpy(p, b->data, b->len + 1);
		b->borrowed = 0;
	} else {
		p = b->data ? b->data : el_xstrdup("");
	}

	b->data = NULL;
	b->len = b->alloc = 0;
	return p;
}

void el_buf_release(el_buf *b)
{
	if (!b->borrowed)
		free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
	b->borrowed = 0;
}
