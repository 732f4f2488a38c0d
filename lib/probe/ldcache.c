/*
 * The loader's cache as the lock records it: /etc/ld.so.cache, parsed by
 * util/ldcache.c for the next probes, and the loader's configured
 * directories from /etc/ld.so.conf and its includes.
 */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/ldconf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* /etc/ld.so.conf's folders into an array, read the probe's way (its limits and warnings) */
typedef struct {
	el_probe *p;
	cJSON *dirs;
} conf_walk;

static int conf_read(const char *path, el_buf *b, void *arg)
{
	return el_probe_read_text(((conf_walk *)arg)->p, path, b);
}

static void conf_add(const char *dir, void *arg)
{
	el_jpush_str(((conf_walk *)arg)->dirs, dir);
}

void el_probe_ldconfig(el_probe *p)
{
	static const char path[] = "/etc/ld.so.cache";
	cJSON *system = el_probe_section(p, EL_SEC_SYSTEM);
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
	{
		conf_walk w = { p, el_jset_arr(system, "ld_so_conf") };

		el_ldconf_dirs(&p->root, "/etc/ld.so.conf", conf_read, conf_add, &w);
	}
	el_buf_release(&b);
}
