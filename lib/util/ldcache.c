/*
 * /etc/ld.so.cache as glibc's ldconfig writes it (sysdeps/generic/dl-cache.h):
 * the "glibc-ld.so.cache1.1" format (glibc >= 2.32 writes only this), or
 * the older "ld.so-1.7.0" table followed by the new one, 8-byte aligned
 * (Ubuntu 16.04). String offsets in both tables count from the new
 * header, which doubles as string[0] of the old table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/common.h"
#include "ldcache.h"
#include "xalloc.h"

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define NEW_HEADER 48
#define NEW_ENTRY 24
#define OLD_ENTRY 12

typedef struct {
	char *soname;
	char *path;
	uint32_t flags;
	uint64_t hwcap;
} ld_entry;

struct el_ldcache {
	ld_entry *entries;
	size_t count;
	const ld_entry **by_name; /* the entries sorted by soname, then place: a lookup's first match first */
	int format_old;
};

static uint32_t u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4); /* the cache is written in the host's byte order */
	return v;
}

/* by soname, then by place in the cache (one array: the addresses are in its order) */
static int by_name_cmp(const void *a, const void *b)
{
	const ld_entry *x = *(const ld_entry *const *)a, *y = *(const ld_entry *const *)b;
	int c = strcmp(x->soname, y->soname);

	return c ? c : (x > y) - (x < y);
}

/* NUL-terminated string at offset off of [base, end), or NULL. */
static const char *str_at(const unsigned char *base, const unsigned char *end, uint32_t off)
{
	const unsigned char *s = base + off;

	if (off >= (size_t)(end - base) || !memchr(s, '\0', (size_t)(end - s)))
		return NULL;
	return (const char *)s;
}

int el_ldcache_parse(el_ldcache **out, const char *data, size_t len)
{
	const unsigned char *d = (const unsigned char *)data, *end = d + len, *hdr = d;
	uint32_t nlibs;
	el_ldcache *c;
	int old = 0;

	*out = NULL;
	if (len >= sizeof(OLD_MAGIC) - 1 + 5 && memcmp(d, OLD_MAGIC, sizeof(OLD_MAGIC) - 1) == 0) {
		uint32_t nold = u32(d + 12);
		size_t off = 16 + (size_t)nold * OLD_ENTRY;

		if (nold > len / OLD_ENTRY)
			return ENVLOCK_EPARSE;
		off = (off + 7) & ~(size_t)7;
		if (off > len)
			return ENVLOCK_EPARSE;
		hdr = d + off;
		old = 1;
	}
	if ((size_t)(end - hdr) < NEW_HEADER || memcmp(hdr, NEW_MAGIC, sizeof(NEW_MAGIC) - 1) != 0)
		return ENVLOCK_EPARSE;
	nlibs = u32(hdr + 20);
	if (nlibs > (size_t)(end - hdr - NEW_HEADER) / NEW_ENTRY)
		return ENVLOCK_EPARSE;
	c = el_xcalloc(1, sizeof(*c));
	c->entries = el_xcalloc(nlibs ? nlibs : 1, sizeof(*c->entries));
	c->format_old = old;
	for (uint32_t i = 0; i < nlibs; i++) {
		const unsigned char *e = hdr + NEW_HEADER + (size_t)i * NEW_ENTRY;
		const char *key = str_at(hdr, end, u32(e + 4)), *val = str_at(hdr, end, u32(e + 8));

		if (!key || !val) {
			el_ldcache_free(c);
			return ENVLOCK_EPARSE;
		}
		c->entries[c->count].soname = el_xstrdup(key);
		c->entries[c->count].path = el_xstrdup(val);
		c->entries[c->count].flags = u32(e);
		c->entries[c->count].hwcap = (uint64_t)u32(e + 16) | (uint64_t)u32(e + 20) << 32;
		c->count++;
	}
	c->by_name = el_xcalloc(c->count ? c->count : 1, sizeof(*c->by_name));
	for (size_t i = 0; i < c->count; i++)
		c->by_name[i] = &c->entries[i];
	qsort(c->by_name, c->count, sizeof(*c->by_name), by_name_cmp);
	*out = c;
	return 0;
}

/* The first place in by_name whose soname is soname, or c->count. */
static size_t first_named(const el_ldcache *c, const char *soname)
{
	size_t lo = 0, hi = c->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(c->by_name[mid]->soname, soname) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *el_ldcache_lookup(const el_ldcache *c, const char *soname)
{
	/* first match wins, as in the loader (entries for other ABIs come later) */
	size_t at = c ? first_named(c, soname) : 0;

	return c && at < c->count && strcmp(c->by_name[at]->soname, soname) == 0 ? c->by_name[at]->path : NULL;
}

/*
 * As dl-cache.c's search: _dl_cache_check_flags (x86_64: the flags are
 * FLAG_X8664_LIB64 | FLAG_ELF_LIBC6 exactly), and envlock does not choose
 * among glibc-hwcaps subdirectory entries (the hwcap field), which hold
 * faster builds of the same library for newer CPUs.
 */
const char *el_ldcache_lookup_abi(const el_ldcache *c, const char *soname, uint32_t flags, int alt_elf)
{
	for (size_t i = c ? first_named(c, soname) : 0; c && i < c->count; i++) {
		const ld_entry *e = c->by_name[i];

		if (strcmp(e->soname, soname) != 0)
			break;
		if (e->hwcap == 0 && (e->flags == flags || (alt_elf && e->flags == EL_LDCACHE_FLAG_ELF)))
			return e->path;
	}
	return NULL;
}

int el_ldcache_format_old(const el_ldcache *c)
{
	return c && c->format_old;
}

size_t el_ldcache_count(const el_ldcache *c)
{
	return c ? c->count : 0;
}

void el_ldcache_entry(const el_ldcache *c, size_t i, const char **soname, const char **path)
{
	*soname = c->entries[i].soname;
	*path = c->entries[i].path;
}

void el_ldcache_free(el_ldcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->count; i++) {
		free(c->entries[i].soname);
		free(c->entries[i].path);
	}
	free(c->entries);
	free((void *)c->by_name);
	free(c);
}
