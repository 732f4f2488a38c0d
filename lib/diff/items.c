/* Interned strings and the table that matches items across files. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define POOL_CHUNK (64u << 10)

static uint32_t hash_str(const char *s, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t hash_item(uint32_t section, uint32_t key)
{
	uint64_t x = ((uint64_t)section << 32 | key) * 0x9E3779B97F4A7C15ull;

	return (uint32_t)(x >> 32);
}

void el_strpool_init(el_strpool *p)
{
	memset(p, 0, sizeof(*p));
	EL_GROW(p->strs, 256, p->cap);
	p->strs[0].s = NULL; /* id 0: none */
	p->strs[0].hash = 0;
	p->strs[0].len = 0;
	p->n = 1;
	p->nslots = 512;
	p->slots = el_xcalloc(p->nslots, sizeof(*p->slots));
}

static char *pool_copy(el_strpool *p, const char *s, size_t len)
{
	char *dst;

	if (!p->nchunks || p->chunk_used + len + 1 > p->chunk_size) {
		size_t size = len + 1 > POOL_CHUNK ? len + 1 : POOL_CHUNK;

		EL_GROW(p->chunks, p->nchunks + 1, p->chunks_cap);
		p->chunks[p->nchunks++] = el_xmalloc(size);
		p->chunk_size = size;
		p->chunk_used = 0;
	}
	dst = p->chunks[p->nchunks - 1] + p->chunk_used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	p->chunk_used += len + 1;
	return dst;
}

static void pool_rehash(el_strpool *p)
{
	size_t n = p->nslots * 2;
	uint32_t *slots = el_xcalloc(n, sizeof(*slots));

	for (size_t id = 1; id < p->n; id++) {
		size_t i = p->strs[id].hash & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)id;
	}
	free(p->slots);
	p->slots = slots;
	p->nslots = n;
}

uint32_t el_strpool_intern(el_strpool *p, const char *s)
{
	size_t len = strlen(s);

	return el_strpool_intern_n(p, s, len, hash_str(s, len));
}

uint32_t el_strpool_intern_n(el_strpool *p, const char *s, size_t len, uint32_t h)
{
	size_t i;
	uint32_t id;

	for (i = h & (p->nslots - 1); (id = p->slots[i]) != 0; i = (i + 1) & (p->nslots - 1))
		if (p->strs[id].hash == h && p->strs[id].len == len && memcmp(p->strs[id].s, s, len) == 0)
			return id;
	EL_GROW(p->strs, p->n + 1, p->cap);
	id = (uint32_t)p->n++;
	p->strs[id].s = pool_copy(p, s, len);
	p->strs[id].hash = h;
	p->strs[id].len = len;
	p->slots[i] = id;
	if (p->n * 2 > p->nslots)
		pool_rehash(p);
	return id;
}

const char *el_strpool_str(el_strpool *p, const char *s)
{
	return s ? el_strpool_get(p, el_strpool_intern(p, s)) : NULL;
}

void el_strpool_release(el_strpool *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->strs);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}

void el_itab_init(el_itab *t, uint32_t mask)
{
	memset(t, 0, sizeof(*t));
	el_strpool_init(&t->pool);
	t->nslots = 1024;
	t->slots = el_xcalloc(t->nslots, sizeof(*t->slots));
	t->mask = mask;
	el_buf_init_fits(&t->dup, 1u << 20, "a key of at most 65536 bytes and a count");
}

static void itab_rehash(el_itab *t)
{
	size_t n = t->nslots * 2;
	uint32_t *slots = el_xcalloc(n, sizeof(*slots));

	for (size_t k = 0; k < t->n; k++) {
		size_t i = hash_item(t->items[k].section, t->items[k].key) & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)k + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

static el_item *itab_get(el_itab *t, uint32_t section, uint32_t key)
{
	size_t i;
	uint32_t s;
	el_item *it;

	for (i = hash_item(section, key) & (t->nslots - 1); (s = t->slots[i]) != 0; i = (i + 1) & (t->nslots - 1)) {
		it = &t->items[s - 1];
		if (it->section == section && it->key == key)
			return it;
	}
	EL_GROW(t->items, t->n + 1, t->cap);
	it = &t->items[t->n++];
	memset(it, 0, sizeof(*it));
	it->section = section;
	it->key = key;
	t->slots[i] = (uint32_t)t->n;
	if (t->n * 2 > t->nslots)
		itab_rehash(t);
	return &t->items[t->n - 1];
}

static void item_put(el_item *it, uint32_t file, uint32_t val)
{
	EL_GROW(it->vals, (size_t)file + 1, it->cap);
	if (file >= it->nvals) {
		memset(it->vals + it->nvals, 0, (file + 1 - it->nvals) * sizeof(*it->vals));
		it->nvals = file + 1;
	}
	it->vals[file] = val;
}

/* el_itab_set with each string's length and hash known (an el_flat's items) */
static el_item *itab_set_n(el_itab *t, uint32_t section, const char *key, size_t klen, uint32_t khash,
			   const char *value, size_t vlen, uint32_t vhash)
{
	uint32_t k = el_strpool_intern_n(&t->pool, key, klen, khash);
	el_item *it = itab_get(t, section, k);

	/* the same key twice in one file (two dist-infos of one name): number the later ones */
	for (int n = 2; el_item_val(it, t->file) != 0; n++) {
		el_buf_reset(&t->dup);
		/* capped, so the numbered key always fits the buffer and differs */
		el_buf_addf(&t->dup, "%.*s (%d)", (int)(klen < 65536 ? klen : 65536), key, n);
		k = el_strpool_intern(&t->pool, el_buf_cstr(&t->dup));
		it = itab_get(t, section, k);
	}
	item_put(it, t->file, el_strpool_intern_n(&t->pool, value, vlen, vhash));
	return it;
}

/* whether a table (or a flat list) with this mask keeps the items of section */
static bool kept(uint32_t mask, int section)
{
	return section >= 0 && section < EL_SEC_COUNT && (mask & (1u << section));
}

el_item *el_itab_set(el_itab *t, int section, const char *key, const char *value)
{
	size_t klen = strlen(key), vlen = strlen(value);

	if (!kept(t->mask, section))
		return NULL;
	return itab_set_n(t, (uint32_t)section, key, klen, hash_str(key, klen), value, vlen, hash_str(value, vlen));
}

/*
 * A file's items, flattened apart from any table: the work of putting a
 * lock into words, and of hashing each word, done on the thread that
 * loaded it; el_itab_add_flat then only looks them up.
 */
void el_flat_init(el_flat *fl, uint32_t mask)
{
	memset(fl, 0, sizeof(*fl));
	fl->mask = mask;
}

static size_t flat_text(el_flat *fl, const char *s, size_t len)
{
	size_t at = fl->len;

	EL_GROW(fl->text, fl->len + len + 1, fl->text_cap);
	memcpy(fl->text + at, s, len);
	fl->text[at + len] = '\0';
	fl->len += len + 1;
	return at;
}

static void flat_item(void *data, int section, const char *key, const char *value)
{
	el_flat *fl = data;
	struct el_flat_item *x;
	size_t klen, vlen;

	if (!kept(fl->mask, section))
		return;
	/* a string of the view (within the lock's 64 MiB), or a few of them joined by flatten */
	klen = strlen(key);
	vlen = strlen(value);
	EL_GROW(fl->v, fl->n + 1, fl->cap);
	x = &fl->v[fl->n++];
	x->section = (uint32_t)section;
	x->key = flat_text(fl, key, klen);
	x->key_len = (uint32_t)klen;
	x->key_hash = hash_str(key, klen);
	x->val = flat_text(fl, value, vlen);
	x->val_len = (uint32_t)vlen;
	x->val_hash = hash_str(value, vlen);
}

void el_flat_view(el_flat *fl, const el_view *view)
{
	fl->n = 0;
	fl->len = 0;
	el_flatten(view, flat_item, fl);
}

void el_itab_add_flat(el_itab *t, const el_flat *fl, uint32_t file)
{
	t->file = file;
	for (size_t i = 0; i < fl->n; i++) {
		const struct el_flat_item *x = &fl->v[i];

		itab_set_n(t, x->section, fl->text + x->key, x->key_len, x->key_hash,
			   fl->text + x->val, x->val_len, x->val_hash);
	}
}

void el_itab_add_view(el_itab *t, const el_view *view, uint32_t file)
{
	el_flat fl;

	el_flat_init(&fl, t->mask);
	el_flat_view(&fl, view);
	el_itab_add_flat(t, &fl, file);
	el_flat_release(&fl);
}

void el_flat_release(el_flat *fl)
{
	free(fl->v);
	free(fl->text);
	memset(fl, 0, sizeof(*fl));
}

void el_itab_release(el_itab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->items[i].vals);
	free(t->items);
	free(t->slots);
	el_strpool_release(&t->pool);
	el_buf_release(&t->dup);
	memset(t, 0, sizeof(*t));
}
