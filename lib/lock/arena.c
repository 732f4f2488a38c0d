/* The arena for loaded locks' cJSON documents (see arena.h for why it is safe). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "util/bigblock.h"
#include "util/xalloc.h"

#define ARENA_ALIGN 8u                 /* cJSON allocates its nodes (pointers, a double) and strings */
#define ARENA_FIRST_MIN ((size_t)64 << 10)

typedef struct block {
	struct block *next;
	size_t size;   /* bytes after the header */
	size_t mapped; /* an el_bigblock's size; 0: from malloc */
} block;

struct el_arena {
	block *blocks;
	char *p, *end;
};

/* the arena of the parse running on this thread, if any */
static _Thread_local el_arena *parsing;

/* the live arenas' blocks, for el_cjson_free; generation changes when one goes */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct range { uintptr_t lo, hi; } *live;
static size_t nlive, caplive;
static atomic_size_t nlive_any;
static atomic_uint live_gen;
static _Thread_local struct range last_hit;
static _Thread_local unsigned last_gen;

static void live_add(uintptr_t lo, uintptr_t hi)
{
	pthread_mutex_lock(&live_mu);
	if (nlive == caplive) {
		caplive = caplive ? caplive * 2 : 16;
		live = el_xrealloc(live, caplive * sizeof(*live));
	}
	live[nlive].lo = lo;
	live[nlive].hi = hi;
	nlive++;
	atomic_store(&nlive_any, nlive);
	pthread_mutex_unlock(&live_mu);
}

static void live_remove(uintptr_t lo)
{
	pthread_mutex_lock(&live_mu);
	for (size_t i = 0; i < nlive; i++)
		if (live[i].lo == lo) {
			live[i] = live[--nlive];
			break;
		}
	/* a thread's last hit may be this block, whose memory malloc hands out again */
	atomic_fetch_add(&live_gen, 1);
	atomic_store(&nlive_any, nlive);
	pthread_mutex_unlock(&live_mu);
}

static int live_find(uintptr_t p, struct range *hit)
{
	int found = 0;

	pthread_mutex_lock(&live_mu);
	for (size_t i = 0; i < nlive && !found; i++)
		if (p >= live[i].lo && p < live[i].hi) {
			*hit = live[i];
			found = 1;
		}
	pthread_mutex_unlock(&live_mu);
	return found;
}

/* a large block from el_bigblock (huge pages where the kernel has them, kept for the next parse) */
#define ARENA_BIG_MIN ((size_t)256 << 10)

static block *block_new(size_t size)
{
	size_t got;
	block *b;

	if (size >= ARENA_BIG_MIN && (b = el_bigblock_get(sizeof(*b) + size, &got)) != NULL) {
		b->size = got - sizeof(*b);
		b->mapped = got;
		return b;
	}
	b = el_xmalloc(sizeof(*b) + size);
	b->size = size;
	b->mapped = 0;
	return b;
}

static void block_free(block *b)
{
	if (b->mapped)
		el_bigblock_put(b, b->mapped);
	else
		free(b);
}

static void arena_grow(el_arena *a, size_t need)
{
	size_t size = a->blocks ? a->blocks->size * 2 : ARENA_FIRST_MIN;
	block *b;

	while (size < need)
		size *= 2;
	b = block_new(size);
	b->next = a->blocks;
	a->blocks = b;
	a->p = (char *)(b + 1);
	a->end = a->p + size;
	live_add((uintptr_t)a->p, (uintptr_t)a->end);
}

static void *arena_take(el_arena *a, size_t size)
{
	char *r;

	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (size == 0)
		size = ARENA_ALIGN;
	if ((size_t)(a->end - a->p) < size)
		arena_grow(a, size);
	r = a->p;
	a->p += size;
	return r;
}

void *el_cjson_alloc(size_t size)
{
	if (parsing)
		return arena_take(parsing, size);
	/* cJSON's allocations follow envlock's policy: a parse that ran out of memory is not "invalid JSON" */
	return el_xmalloc(size);
}

void el_cjson_free(void *p)
{
	uintptr_t u = (uintptr_t)p;
	struct range hit;

	if (!p)
		return;
	if (atomic_load_explicit(&nlive_any, memory_order_relaxed) == 0) {
		free(p);
		return;
	}
	if (last_gen == atomic_load_explicit(&live_gen, memory_order_relaxed) && u >= last_hit.lo && u < last_hit.hi)
		return; /* inside a live arena: given back with it */
	if (live_find(u, &hit)) {
		last_hit = hit;
		last_gen = atomic_load_explicit(&live_gen, memory_order_relaxed);
		return;
	}
	free(p);
}

void el_cjson_hooks_install(void)
{
	cJSON_Hooks hooks = { el_cjson_alloc, el_cjson_free };

	cJSON_InitHooks(&hooks);
}

el_arena *el_arena_new_room(char **room, size_t *cap)
{
	el_arena *a = el_xcalloc(1, sizeof(*a));

	arena_grow(a, EL_BIGBLOCK_MIN - sizeof(block));
	*room = a->p;
	*cap = (size_t)(a->end - a->p);
	return a;
}

cJSON *el_arena_parse_in(el_arena *a, const char *text, size_t len, const char **end)
{
	size_t need = len / 2 * 5 + ARENA_FIRST_MIN;
	cJSON *doc;

	/* a text in the arena's room stays where it is: the nodes go after it */
	if ((uintptr_t)text >= (uintptr_t)a->p && (uintptr_t)text < (uintptr_t)a->end) {
		size_t used = ((size_t)(text - a->p) + len + 1 + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

		a->p = used < (size_t)(a->end - a->p) ? a->p + used : a->end;
	}
	/*
	 * cJSON's nodes (64 bytes a value) and strings take about 2.3 times a
	 * lock's indented text (938 KB for a 1,000-package lock of 410 KB):
	 * one block, most of the time; only touched pages cost memory
	 */
	if ((size_t)(a->end - a->p) < need)
		arena_grow(a, need);
	parsing = a;
	doc = cJSON_ParseWithLengthOpts(text, len, end, 0);
	parsing = NULL;
	return doc;
}

cJSON *el_arena_parse(el_arena **arena_out, const char *text, size_t len, const char **end)
{
	el_arena *a = el_xcalloc(1, sizeof(*a));
	cJSON *doc;

	arena_grow(a, len / 2 * 5 + ARENA_FIRST_MIN);
	doc = el_arena_parse_in(a, text, len, end);
	if (!doc) {
		el_arena_delete(a, NULL);
		a = NULL;
	}
	*arena_out = a;
	return doc;
}

void el_arena_delete(el_arena *arena, cJSON *doc)
{
	block *b, *next;

	/* what an edit added came from malloc: the walk frees it, and skips the arena's own */
	cJSON_Delete(doc);
	if (!arena)
		return;
	for (b = arena->blocks; b; b = next) {
		next = b->next;
		live_remove((uintptr_t)(b + 1));
		block_free(b);
	}
	free(arena);
}
