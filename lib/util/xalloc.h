/*
 * Allocation that never returns NULL: envlock is a command-line tool and,
 * like git's xmalloc, gives up cleanly when memory is exhausted.
 */
#ifndef EL_XALLOC_H
#define EL_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

/* The out-of-memory policy (envlock_set_oom_handler): the handler, else print "envlock: fatal: out of memory" and exit 2. */
_Noreturn void el_oom(void);

void *el_xmalloc(size_t n);
void *el_xcalloc(size_t nmemb, size_t size);
void *el_xrealloc(void *p, size_t n);
char *el_xstrdup(const char *s);
char *el_xstrndup(const char *s, size_t n);
/*
 * A buffer for large reads and writes (hashing, bundles, kits), page-
 * aligned: read(2) into a buffer 16 bytes past a page boundary, as
 * malloc gives one of 1 MiB, runs at about 0.7 of the aligned rate (the
 * kernel's copy to user space). Free with el_free_io. A build with
 * -DEL_IO_MISALIGN=N offsets each by N bytes, for the benchmark that
 * measures the difference (bench/hash.sh).
 */
void *el_xmalloc_io(size_t n);
void el_free_io(void *p);
/* asprintf that dies on failure */
char *el_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a va_list (a function of envlock's own that takes a format). */
char *el_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
