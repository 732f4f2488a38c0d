/*
 * Growable arrays: one overflow-checked grow macro for arrays of any
 * type, and a vector of strings. Running out of memory, or a size that
 * does not fit in size_t, ends envlock through el_oom() like the
 * x-allocators (xalloc.h).
 */
#ifndef EL_VEC_H
#define EL_VEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Make room for at least need elements in ptr, an array allocated with
 * the x-allocators (or NULL) whose capacity is the size_t lvalue cap:
 * the capacity doubles (from 16) until it holds need. Like git's
 * ALLOC_GROW, a macro whose arguments may be evaluated more than once:
 *
 *   EL_GROW(v, n + 1, cap);
 *   v[n++] = x;
 */
#define EL_GROW(ptr, need, cap)                                                    \
	do {                                                                       \
		if ((need) > (cap))                                                \
			(ptr) = el_grow_array((ptr), &(cap), (need), sizeof(*(ptr))); \
	} while (0)

/* EL_GROW's worker: ptr reallocated to the new *cap (at least need) elements of size bytes. */
void *el_grow_array(void *ptr, size_t *cap, size_t need, size_t size);

/*
 * A list of malloc'd strings, kept NULL-terminated: v can be handed to
 * anything that takes a char ** ending in NULL. Zero-initialise it
 * (EL_STRVEC_INIT) and release it with el_strvec_release().
 */
typedef struct {
	char **v;     /* NULL until the first push, then NULL-terminated */
	size_t n;     /* strings in v, not counting the NULL */
	size_t cap;   /* elements allocated, the NULL's included */
} el_strvec;

#define EL_STRVEC_INIT { NULL, 0, 0 }

/* Append a copy of s. */
void el_strvec_push(el_strvec *sv, const char *s);
/* Append s itself (malloc'd): the vector owns it from now on. */
void el_strvec_push_owned(el_strvec *sv, char *s);
/* Whether s is one of the strings (strcmp); a linear search, for short lists. */
bool el_strvec_has(const el_strvec *sv, const char *s);
/* Sort the strings bytewise (strcmp). */
void el_strvec_sort(el_strvec *sv);
/*
 * Hand the array over to the caller: NULL-terminated, never NULL (an
 * empty vector gives an array of just the NULL), freed with
 * el_strv_free(). sv is left empty.
 */
char **el_strvec_detach(el_strvec *sv);
/* Free the strings and the array; sv is left empty and can be reused. */
void el_strvec_release(el_strvec *sv);

/* Free a NULL-terminated array of malloc'd strings and the array (NULL is fine). */
void el_strv_free(char **v);

#endif
