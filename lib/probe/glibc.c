/*
 * The C library, read from the file itself: glibc embeds its banner
 * ("GNU C Library (Ubuntu GLIBC 2.23-0ubuntu11.3) stable release version
 * 2.23, ...") in libc.so.6, which Ubuntu 16.04 ships as libc-2.23.so with
 * a libc.so.6 link and newer releases as a plain libc.so.6. The machine's
 * architecture is that file's ELF machine.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock/model.h"
#include "probe.h"
#include "util/elf.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_LIMIT_LIBC (32u << 20)

static const char *const libc_paths[] = {
	"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6",
	"/lib/powerpc64le-linux-gnu/libc.so.6", "/lib/i386-linux-gnu/libc.so.6",
	"/lib/s390x-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib64/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6",
	"/lib/libc.so.6", "/usr/lib/libc.so.6", NULL
};

/* Parse "... release version 2.23, ..." / "... version 2.36." from the banner. */
static char *banner_version(const char *banner)
{
	const char *v = strstr(banner, "release version ");
	size_t n = 0;

	if (!v)
		return NULL;
	v += strlen("release version ");
	while ((v[n] >= '0' && v[n] <= '9') || v[n] == '.')
		n++;
	while (n && v[n - 1] == '.')
		n--;
	return n ? el_xstrndup(v, n) : NULL;
}

void el_probe_glibc(el_probe *p)
{
	cJSON *system = el_probe_section(p, "system");
	cJSON *g = el_jset_obj(system, "glibc");
	el_buf b = EL_BUF_INIT(EL_LIMIT_LIBC);
	const char *const *path;
	char *real = NULL;

	for (path = libc_paths; *path; path++)
		if (el_root_realpath(&p->root, *path, &real, NULL) == 0)
			break;
	if (!*path) {
		el_jset_str(g, "status", "absent");
		return;
	}
	el_jset_str(g, "path", *path);
	el_jset_str(g, "file", real);
	if (el_probe_read(p, real, &b) == 0) {
		const char *hit = memmem(b.data, b.len, "GNU C Library", 13);
		char *version = NULL;

		if (hit) {
			size_t n = strnlen(hit, (size_t)(b.data + b.len - hit));
			const char *nl = memchr(hit, '\n', n);
			char *banner = el_xstrndup(hit, nl ? (size_t)(nl - hit) : n);

			version = banner_version(banner);
			el_jset_str(g, "banner", banner);
			free(banner);
		}
		if (version) {
			el_jset_str(g, "status", "present");
			el_jset_str(g, "version", version);
		} else {
			el_jset_str(g, "status", "unknown");
			el_probe_warn(p, "'%s': no glibc version banner found", real);
		}
		free(version);
	} else {
		el_jset_str(g, "status", "unknown");
	}
	{
		char *host = el_root_host(&p->root, real);
		int fd = open(host, O_RDONLY | O_CLOEXEC);
		el_elf_info elf;

		if (fd >= 0 && el_elf_read(fd, &elf) == 0) {
			el_jset_str(system, "arch", el_elf_machine_name(elf.machine, elf.bits, elf.big_endian));
			el_elf_info_release(&elf);
		}
		if (fd >= 0)
			close(fd);
		free(host);
	}
	free(real);
	el_buf_release(&b);
}
