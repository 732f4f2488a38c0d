#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "vec.h"
#include "xalloc.h"

void *el_grow_array(void *ptr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			el_oom();
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		el_oom();
	ptr = el_xrealloc(ptr, n * size);
	*cap = n;
	return ptr;
}

void el_strvec_push_owned(el_strvec *sv, char *s)
{
	EL_GROW(sv->v, sv->n + 2, sv->cap);
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void el_strvec_push(el_strvec *sv, const char *s)
{
	el_strvec_push_owned(sv, el_xstrdup(s));
}

bool el_strvec_has(const el_strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void el_strvec_sort(el_strvec *sv)
{
	if (sv->n > 1)
		qsort(sv->v, sv->n, sizeof(*sv->v), cmp_str);
}

char **el_strvec_detach(el_strvec *sv)
{
	char **v = sv->v ? sv->v : el_xcalloc(1, sizeof(*v));

	sv->v = NULL;
	sv->n = sv->cap = 0;
	return v;
}

void el_strvec_release(el_strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

void el_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}
