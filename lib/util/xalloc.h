/*
 * Allocation that never returns NULL: envlock is a command-line tool and,
 * like git's xmalloc, gives up cleanly when memory is exhausted.
 */
#ifndef EL_XALLOC_H
#define EL_XALLOC_H

#include <stddef.h>

void *el_xmalloc(size_t n);
void *el_xcalloc(size_t nmemb, size_t size);
void *el_xrealloc(void *p, size_t n);
char *el_xstrdup(const char *s);
char *el_xstrndup(const char *s, size_t n);
/* asprintf that dies on failure */
char *el_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
