/*
 * A growable byte buffer with a hard size cap (curl's dynbuf idea): every
 * read of outside data goes through one, so no input can make envlock
 * allocate without bound. The data is always NUL-terminated.
 */
#ifndef EL_BUF_H
#define EL_BUF_H

#include <stddef.h>

typedef struct {
	char *data;   /* NUL-terminated; NULL until the first append */
	size_t len;   /* bytes used, not counting the NUL */
	size_t alloc; /* bytes allocated */
	size_t limit; /* maximum len; appends beyond it fail */
	unsigned char borrowed; /* data is the caller's (el_buf_borrow): copied when it must grow, never freed */
} el_buf;

#define EL_BUF_INIT(lim) { NULL, 0, 0, (lim), 0 }

void el_buf_init(el_buf *b, size_t limit);
/* Start b empty in the caller's size bytes at mem (kept by the caller); it moves to malloc only past them. */
void el_buf_borrow(el_buf *b, void *mem, size_t size);
/* Append n bytes; ENVLOCK_ELIMIT (nothing appended) past the cap. */
int el_buf_put(el_buf *b, const void *data, size_t n);
/* Make room for n more bytes (written at data + len by the caller). */
int el_buf_reserve(el_buf *b, size_t n);
int el_buf_puts(el_buf *b, const char *s);
int el_buf_putc(el_buf *b, char c);
int el_buf_printf(el_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empty the buffer, keeping its memory. */
void el_buf_reset(el_buf *b);
/* The contents ("" when empty); borrowed. */
const char *el_buf_cstr(const el_buf *b);
/* Hand the contents over to the caller (malloc'd, never NULL); b is emptied. */
char *el_buf_detach(el_buf *b);
void el_buf_release(el_buf *b);

#endif
