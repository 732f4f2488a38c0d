/*
 * A growable byte buffer with a hard size cap (curl's dynbuf idea): every
 * read of outside data goes through one, so no input can make envlock
 * allocate without bound. The data is always NUL-terminated.
 *
 * An append past the cap appends nothing and fails, and the failure is
 * sticky: the buffer is marked failed and every later append fails too,
 * until el_buf_reset, el_buf_detach or el_buf_release. So a text is never used cut short
 * without someone having said why. Every append is checked, in one of
 * three ways:
 *
 *  - one append: the int-returning el_buf_put/puts/putc/printf/reserve,
 *    whose result the compiler makes the caller look at; pass
 *    ENVLOCK_ELIMIT on, with a line naming the input that was too long
 *    where a user can cause it;
 *  - a builder making several appends: the el_buf_add* forms, which
 *    return nothing, then one el_buf_failed() after the last of them and
 *    before the contents are used (helpers that append to a caller's
 *    buffer use el_buf_add* and leave that check to the buffer's owner;
 *    a piece built in a buffer of its own passes its failure on with
 *    el_buf_join_failure);
 *  - a buffer whose cap its inputs provably cannot reach: make it with
 *    EL_BUF_FITS or el_buf_init_fits, which take the reason as a string,
 *    and use el_buf_add* with no check. The reason is written once, where
 *    the buffer is made; if it ever proves false envlock stops with it
 *    rather than go on with a cut text. A text joined from strings that are
 *    in memory already, with fixed words between them, takes
 *    EL_BUF_JOIN_MAX: it is at most a few times their total, far below it.
 */
#ifndef EL_BUF_H
#define EL_BUF_H

#include <stddef.h>

#define EL_BUF_CHECKED __attribute__((warn_unused_result))

typedef struct {
	char *data;   /* NUL-terminated; NULL until the first append */
	size_t len;   /* bytes used, not counting the NUL */
	size_t alloc; /* bytes allocated */
	size_t limit; /* maximum len; appends beyond it fail */
	unsigned char borrowed; /* data is the caller's (el_buf_borrow): copied when it must grow, never freed */
	unsigned char failed;   /* an append failed; every later one fails too (until reset) */
	const char *fits;       /* why the cap cannot be reached (EL_BUF_FITS), or NULL */
} el_buf;

#define EL_BUF_INIT(lim) { NULL, 0, 0, (lim), 0, 0, NULL }
/* The cap of a join of in-memory strings (EL_BUF_FITS): what the address space cannot reach. */
#define EL_BUF_JOIN_MAX ((size_t)-1 / 4)
/* A buffer whose cap cannot be reached; why is a string literal saying why. */
#define EL_BUF_FITS(lim, why) { NULL, 0, 0, (lim), 0, 0, "" why "" }

void el_buf_init(el_buf *b, size_t limit);
/* el_buf_init for a buffer whose cap cannot be reached; why (kept, not copied) says why. */
void el_buf_init_fits(el_buf *b, size_t limit, const char *why);
/* Start b empty in the caller's size bytes at mem (kept by the caller); it moves to malloc only past them. */
void el_buf_borrow(el_buf *b, void *mem, size_t size);

/* Append n bytes; ENVLOCK_ELIMIT (nothing appended, b marked failed) past the cap or after a failure. */
int el_buf_put(el_buf *b, const void *data, size_t n) EL_BUF_CHECKED;
/* Make room for n more bytes (written at data + len by the caller). */
int el_buf_reserve(el_buf *b, size_t n) EL_BUF_CHECKED;
int el_buf_puts(el_buf *b, const char *s) EL_BUF_CHECKED;
int el_buf_putc(el_buf *b, char c) EL_BUF_CHECKED;
int el_buf_printf(el_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3))) EL_BUF_CHECKED;

/*
 * The same appends for a builder that checks once: a failure only marks b
 * failed, for the el_buf_failed() after the last append.
 */
void el_buf_add(el_buf *b, const void *data, size_t n);
void el_buf_adds(el_buf *b, const char *s);
void el_buf_addc(el_buf *b, char c);
void el_buf_addf(el_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ENVLOCK_ELIMIT when an append to b failed since it was made or reset, else 0. */
int el_buf_failed(const el_buf *b) __attribute__((warn_unused_result));
/* Mark b failed when part, a piece of b's text built in a buffer of its own, failed. */
void el_buf_join_failure(el_buf *b, const el_buf *part);

/* Empty the buffer, keeping its memory; it is no longer failed. */
void el_buf_reset(el_buf *b);
/* The contents ("" when empty); borrowed. */
const char *el_buf_cstr(const el_buf *b);
/* Hand the contents over to the caller (malloc'd, never NULL); b is emptied. */
char *el_buf_detach(el_buf *b);
void el_buf_release(el_buf *b);

#endif
