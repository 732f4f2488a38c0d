/* Paths of a bundle's manifest and of what was found in the archive, by open addressing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "util/xalloc.h"

static uint64_t hash_path(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The slot of path[0..n): its node, or the free slot where it would go. */
static size_t bindex_slot(const el_bindex *t, const char *path, size_t n)
{
	size_t i = hash_path(path, n) & (t->cap - 1);

	while (t->v[i].path && !(strncmp(t->v[i].path, path, n) == 0 && t->v[i].path[n] == '\0'))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void bindex_grow(el_bindex *t)
{
	el_bnode *old = t->v;
	size_t oldcap = t->cap;

	t->cap = t->cap ? t->cap * 2 : 1024;
	t->v = el_xcalloc(t->cap, sizeof(*t->v));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].path)
			t->v[bindex_slot(t, old[i].path, strlen(old[i].path))] = old[i];
	free(old);
}

/*
 * The node for path[0..n), added when add is set (else NULL if absent).
 * Adding may move every node: a pointer from before is stale after.
 */
el_bnode *el_bindex_find(el_bindex *t, const char *path, size_t n, int add)
{
	size_t i;

	if (add && (t->n + 1) * 2 > t->cap)
		bindex_grow(t);
	if (!t->cap)
		return NULL;
	i = bindex_slot(t, path, n);
	if (t->v[i].path)
		return &t->v[i];
	if (!add)
		return NULL;
	t->v[i].path = el_xstrndup(path, n);
	t->v[i].want = NULL;
	t->v[i].made = EL_MADE_NONE;
	t->n++;
	return &t->v[i];
}

void el_bindex_release(el_bindex *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].path);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
