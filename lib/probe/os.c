/* The operating system (os-release(5)), the kernel, the host name. */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

static const char *const os_keys[][2] = {
	{ "ID", "id" }, { "VERSION_ID", "version_id" }, { "NAME", "name" },
	{ "PRETTY_NAME", "pretty_name" }, { "VERSION_CODENAME", "version_codename" },
	{ "ID_LIKE", "id_like" }, { "VERSION", "version" },
};

static void probe_os_release(el_probe *p, cJSON *system)
{
	static const char *const paths[] = { "/etc/os-release", "/usr/lib/os-release", NULL };
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	cJSON *os = el_jset_obj(system, "os");
	const char *const *path;

	for (path = paths; *path; path++) {
		int rc = el_probe_read_text(p, *path, &b);

		if (rc == 0)
			break;
		if (rc != ENVLOCK_ENOTFOUND)
			break; /* warned; do not fall back to a file the system does not use */
	}
	if (!*path || b.len == 0 || !el_is_text(b.data, b.len)) {
		el_jset_str(os, "status", "absent");
		el_buf_release(&b);
		return;
	}
	el_jset_str(os, "status", "present");
	el_jset_str(os, "source", *path);
	{
		const char *pos = b.data, *end = b.data + b.len, *line;
		size_t len;

		while (el_next_line(&pos, end, &line, &len)) {
			const char *eq = memchr(line, '=', len);

			if (!eq || line[0] == '#')
				continue;
			for (size_t i = 0; i < sizeof(os_keys) / sizeof(os_keys[0]); i++) {
				size_t kl = strlen(os_keys[i][0]);

				if ((size_t)(eq - line) == kl && memcmp(line, os_keys[i][0], kl) == 0) {
					char *v = el_unquote(eq + 1, len - kl - 1);

					el_jset_str(os, os_keys[i][1], v);
					free(v);
				}
			}
		}
	}
	el_buf_release(&b);
}

/* First line of a small file, trimmed; NULL when absent or empty. */
static char *first_line(el_probe *p, const char *path)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;
	char *out = NULL;

	if (el_probe_read_text(p, path, &b) == 0) {
		pos = b.data;
		if (el_next_line(&pos, b.data + b.len, &line, &len)) {
			el_trim(&line, &len);
			if (len)
				out = el_xstrndup(line, len);
		}
	}
	el_buf_release(&b);
	return out;
}

void el_probe_os(el_probe *p)
{
	cJSON *system = el_probe_section(p, EL_SEC_SYSTEM), *host = el_probe_section(p, EL_SEC_HOST);
	char *v;

	probe_os_release(p, system);

	/* a procfs mounted in a tree is the running kernel's, not the tree's (hardware.c) */
	v = el_probe_host_procfs(p) ? NULL : first_line(p, "/proc/sys/kernel/osrelease");
	if (v) {
		cJSON *k = el_jset_obj(system, "kernel");

		el_jset_str(k, "release", v);
		free(v);
	}
	v = el_probe_host_procfs(p) ? NULL : first_line(p, "/proc/sys/kernel/hostname");
	if (!v)
		v = first_line(p, "/etc/hostname");
	el_jset_str(host, "hostname", v);
	free(v);
}
