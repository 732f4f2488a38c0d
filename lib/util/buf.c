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
	b->failed = 0;
	b->fits = NULL;
}

void el_buf_init_fits(el_buf *b, size_t limit, const char *why)
{
	el_buf_init(b, limit);
	b->fits = why;
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

/* Mark b failed; a buffer made with a reason why it cannot fail stops envlock instead. */
static int buf_fail(el_buf *b, int rc)
{
	b->failed = 1;
	if (b->fits) {
		fprintf(stderr, "envlock: internal error: a text reached its %zu-byte cap, which it cannot because %s\n",
			b->limit, b->fits);
		abort();
	}
	return rc;
}

static int buf_put(el_buf *b, const void *data, size_t n)
{
	if (b->failed || n > b->limit - b->len)
		return buf_fail(b, ENVLOCK_ELIMIT);
	if (b->len + n + 1 > b->alloc)
		buf_grow(b, b->len + n);
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int el_buf_put(el_buf *b, const void *data, size_t n)
{
	return buf_put(b, data, n);
}

int el_buf_reserve(el_buf *b, size_t n)
{
	if (b->failed || n > b->limit - b->len)
		return buf_fail(b, ENVLOCK_ELIMIT);
	if (b->len + n + 1 > b->alloc)
		buf_grow(b, b->len + n);
	return 0;
}

int el_buf_puts(el_buf *b, const char *s)
{
	return buf_put(b, s, strlen(s));
}

int el_buf_putc(el_buf *b, char c)
{
	return buf_put(b, &c, 1);
}

static int buf_vprintf(el_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	char small[256];
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0) {
		va_end(again);
		return buf_fail(b, ENVLOCK_ERROR);
	}
	if ((size_t)n < sizeof(small)) {
		va_end(again);
		return buf_put(b, small, (size_t)n);
	}
	{
		char *big = el_xmalloc((size_t)n + 1);
		int r;

		vsnprintf(big, (size_t)n + 1, fmt, again);
		va_end(again);
		r = buf_put(b, big, (size_t)n);
		free(big);
		return r;
	}
}

int el_buf_printf(el_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

/* The el_buf_add* forms: a failure is kept in b->failed, for el_buf_failed(). */
void el_buf_add(el_buf *b, const void *data, size_t n)
{
	buf_put(b, data, n);
}

void el_buf_adds(el_buf *b, const char *s)
{
	el_buf_add(b, s, strlen(s));
}

void el_buf_addc(el_buf *b, char c)
{
	el_buf_add(b, &c, 1);
}

void el_buf_addf(el_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

int el_buf_failed(const el_buf *b)
{
	return b->failed ? ENVLOCK_ELIMIT : 0;
}

void el_buf_join_failure(el_buf *b, const el_buf *part)
{
	if (part->failed)
		buf_fail(b, ENVLOCK_ELIMIT);
}

void el_buf_reset(el_buf *b)
{
	b->len = 0;
	b->failed = 0;
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
	b->failed = 0;
	return p;
}

void el_buf_release(el_buf *b)
{
	if (!b->borrowed)
		free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
	b->borrowed = 0;
	b->failed = 0;
}
