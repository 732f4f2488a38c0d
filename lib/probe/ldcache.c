/*
 * /etc/ld.so.cache as glibc's ldconfig writes it (sysdeps/generic/dl-cache.h):
 * the "glibc-ld.so.cache1.1" format (glibc >= 2.32 writes only this), or
 * the older "ld.so-1.7.0" table followed by the new one, 8-byte aligned
 * (Ubuntu 16.04). String offsets in both tables count from the new
 * header, which doubles as string[0] of the old table. Also the loader's
 * configured directories from /etc/ld.so.conf and its includes.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_LIMIT_LDCACHE (64u << 20)
#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define NEW_HEADER 48
#define NEW_ENTRY 24
#define OLD_ENTRY 12

typedef struct {
	char *soname;
	char *path;
} ld_entry;

struct el_ldcache {
	ld_entry *entries;
	size_t count;
	int format_old;
};

static uint32_t u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4); /* the cache is written in the host's byte order */
	return v;
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
		c->count++;
	}
	*out = c;
	return 0;
}

const char *el_ldcache_lookup(const el_ldcache *c, const char *soname)
{
	/* first match wins, as in the loader (entries for other ABIs come later) */
	for (size_t i = 0; c && i < c->count; i++)
		if (strcmp(c->entries[i].soname, soname) == 0)
			return c->entries[i].path;
	return NULL;
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
	free(c);
}

/* Read an ld.so.conf file: directories, and "include GLOB" lines (depth-limited). */
static void read_conf(el_probe *p, const char *path, cJSON *dirs, int depth)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;

	if (depth > 4 || el_probe_read_text(p, path, &b) != 0) {
		el_buf_release(&b);
		return;
	}
	pos = b.data;
	while (el_next_line(&pos, b.data + b.len, &line, &len)) {
		const char *hash = memchr(line, '#', len);

		if (hash)
			len = (size_t)(hash - line);
		el_trim(&line, &len);
		if (!len)
			continue;
		if (len > 8 && strncmp(line, "include", 7) == 0 && (line[7] == ' ' || line[7] == '\t')) {
			const char *g = line + 8;
			size_t gl = len - 8;
			char *glob, *gdir, **names = NULL;

			el_trim(&g, &gl);
			glob = g[0] == '/' ? el_xstrndup(g, gl) : el_xasprintf("/etc/%.*s", (int)gl, g);
			gdir = el_path_dir(glob);
			if (el_root_list(&p->root, gdir, &names, NULL) == 0)
				for (char **n = names; *n; n++)
					if (fnmatch(el_path_base(glob), *n, FNM_PERIOD) == 0) {
						char *sub = el_path_join(gdir, *n);

						read_conf(p, sub, dirs, depth + 1);
						free(sub);
					}
			el_strv_free(names);
			free(gdir);
			free(glob);
		} else if (line[0] == '/') {
			char *dir = el_xstrndup(line, len);

			el_jpush_str(dirs, dir);
			free(dir);
		}
	}
	el_buf_release(&b);
}

void el_probe_ldconfig(el_probe *p)
{
	static const char path[] = "/etc/ld.so.cache";
	cJSON *system = el_probe_section(p, "system");
	cJSON *ld = el_jset_obj(system, "ld_cache");
	el_buf b = EL_BUF_INIT(EL_LIMIT_LDCACHE);
	int rc = el_probe_read(p, path, &b);

	if (rc == ENVLOCK_ENOTFOUND) {
		el_jset_str(ld, "status", "absent");
	} else if (rc != 0) {
		el_jset_str(ld, "status", "unreadable");
	} else if (el_ldcache_parse(&p->ldcache, b.data, b.len) != 0) {
		el_probe_warn(p, "'%s': not in a format ldconfig writes, ignored", path);
		el_jset_str(ld, "status", "unreadable");
	} else {
		el_jset_str(ld, "status", "present");
		el_jset_str(ld, "format", p->ldcache->format_old ? "old+new" : "new");
		el_jset_int(ld, "entries", (long long)p->ldcache->count);
	}
	el_jset_str(ld, "path", path);
	read_conf(p, "/etc/ld.so.conf", el_jset_arr(system, "ld_so_conf"), 0);
	el_buf_release(&b);
}
