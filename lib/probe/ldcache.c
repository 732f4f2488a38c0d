/*
 * The loader's cache as the lock records it: /etc/ld.so.cache, parsed by
 * util/ldcache.c for the next probes, and the loader's configured
 * directories from /etc/ld.so.conf and its includes.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

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
	el_buf b = EL_BUF_INIT(EL_LDCACHE_LIMIT);
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
		el_jset_str(ld, "format", el_ldcache_format_old(p->ldcache) ? "old+new" : "new");
		el_jset_int(ld, "entries", (long long)el_ldcache_count(p->ldcache));
	}
	el_jset_str(ld, "path", path);
	read_conf(p, "/etc/ld.so.conf", el_jset_arr(system, "ld_so_conf"), 0);
	el_buf_release(&b);
}
