/*
 * The C library, read from the file itself: glibc embeds its banner
 * ("GNU C Library (Ubuntu GLIBC 2.23-0ubuntu11.3) stable release version
 * 2.23, ...") in libc.so.6, which Ubuntu 16.04 ships as libc-2.23.so with
 * a libc.so.6 link and newer releases as a plain libc.so.6. The machine's
 * architecture is that file's ELF machine.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock/model.h"
#include "probe.h"
#include "util/elf.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_LIMIT_LIBC (32u << 20)
#define EL_LIMIT_RODATA (8u << 20)
#define EL_MAX_SECTIONS 4096

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

static uint64_t get(const unsigned char *b, int size, bool be)
{
	uint64_t v = 0;

	for (int i = 0; i < size; i++)
		v |= (uint64_t)b[be ? size - 1 - i : i] << (8 * i);
	return v;
}

static bool pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t got = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (got <= 0)
			return false;
		done += (size_t)got;
	}
	return true;
}

/*
 * Where libc's .rodata is (the banner is there: 150 KB of a 1.9 MB
 * file), from the section headers, read with pread: *off and *len, or
 * false for a file without them (a stripped or made-up one).
 */
static bool rodata_range(int fd, uint64_t *off, uint64_t *len)
{
	unsigned char eh[64], *sh = NULL;
	char *names = NULL;
	bool wide, be, found = false;
	uint64_t shoff, nameoff, namelen;
	unsigned shentsize, shnum, shstrndx;

	if (!pread_all(fd, eh, sizeof(eh), 0) || memcmp(eh, "\177ELF", 4) != 0 || (eh[4] != 1 && eh[4] != 2))
		return false;
	wide = eh[4] == 2;
	be = eh[5] == 2;
	shoff = get(eh + (wide ? 0x28 : 0x20), wide ? 8 : 4, be);
	shentsize = (unsigned)get(eh + (wide ? 0x3a : 0x2e), 2, be);
	shnum = (unsigned)get(eh + (wide ? 0x3c : 0x30), 2, be);
	shstrndx = (unsigned)get(eh + (wide ? 0x3e : 0x32), 2, be);
	if (!shoff || shnum == 0 || shnum > EL_MAX_SECTIONS || shstrndx >= shnum ||
	    shentsize < (wide ? 64u : 40u) || shentsize > 256)
		return false;
	sh = el_xmalloc((size_t)shnum * shentsize);
	if (!pread_all(fd, sh, (size_t)shnum * shentsize, shoff))
		goto out;
#define SH(i, o64, o32, sz64) get(sh + (size_t)(i) * shentsize + (wide ? (o64) : (o32)), wide ? (sz64) : 4, be)
	nameoff = SH(shstrndx, 0x18, 0x10, 8);
	namelen = SH(shstrndx, 0x20, 0x14, 8);
	if (namelen == 0 || namelen > (1u << 20))
		goto out;
	names = el_xmalloc((size_t)namelen + 1);
	if (!pread_all(fd, names, (size_t)namelen, nameoff))
		goto out;
	names[namelen] = '\0';
	for (unsigned i = 0; i < shnum && !found; i++) {
		uint64_t name = get(sh + (size_t)i * shentsize, 4, be);

		if (name < namelen && strcmp(names + name, ".rodata") == 0) {
			*off = SH(i, 0x18, 0x10, 8);
			*len = SH(i, 0x20, 0x14, 8);
			found = *len > 0 && *len <= EL_LIMIT_RODATA;
		}
	}
#undef SH
out:
	free(names);
	free(sh);
	return found;
}

/* The banner from .rodata alone, into b; false when the file has no such section. */
static bool read_rodata(int fd, el_buf *b)
{
	uint64_t off, len;

	if (fd < 0 || !rodata_range(fd, &off, &len) || el_buf_reserve(b, (size_t)len) != 0 ||
	    !pread_all(fd, b->data, (size_t)len, off))
		return false;
	b->len = (size_t)len;
	b->data[len] = '\0';
	return true;
}

void el_probe_glibc(el_probe *p)
{
	cJSON *system = el_probe_section(p, EL_SEC_SYSTEM);
	cJSON *g = el_jset_obj(system, "glibc");
	el_buf b = EL_BUF_INIT(EL_LIMIT_LIBC);
	const char *const *path;
	char *real = NULL, *host;
	const char *hit = NULL;
	el_elf_info elf;
	bool got;
	int fd;

	for (path = libc_paths; *path; path++)
		if (el_root_realpath(&p->root, *path, &real, NULL) == 0)
			break;
	if (!*path) {
		el_jset_str(g, "status", "absent");
		return;
	}
	el_jset_str(g, "path", *path);
	el_probe_want_deb(p, g, *path, NULL);
	el_jset_str(g, "file", real);
	/* one descriptor for the section table, .rodata and the ELF machine (all read with pread) */
	host = el_root_host(&p->root, real);
	fd = host ? open(host, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
	free(host);
	/* .rodata alone when the section headers say where and it holds the banner; else the whole file */
	got = read_rodata(fd, &b) && (hit = memmem(b.data, b.len, "GNU C Library", 13)) != NULL;
	if (!got) {
		el_buf_reset(&b);
		got = el_probe_read(p, real, &b) == 0;
		hit = got ? memmem(b.data, b.len, "GNU C Library", 13) : NULL;
	}
	if (got) {
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
	if (fd >= 0 && el_elf_read(fd, &elf) == 0) {
		el_jset_str(system, "arch", el_elf_machine_name(elf.machine, elf.bits, elf.big_endian));
		el_elf_info_release(&elf);
	}
	if (fd >= 0)
		close(fd);
	free(real);
	el_buf_release(&b);
}
