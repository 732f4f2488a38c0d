/*
 * A program's own version string: CPython keeps PY_VERSION ("3.11.2") as
 * a C string in the interpreter and in libpython (Py_GetVersion), and gcc
 * keeps version_string ("12.2.0", gcc/version.c) in cc1, whatever the
 * folders they sit in are called; nvcc keeps what --version prints. The
 * file is scanned for NUL-terminated strings, one piece at a time, never
 * whole in memory.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_VERSTR_CHUNK (1u << 20)
#define EL_VERSTR_MAX_SCAN ((off_t)1 << 30)

/*
 * s is prefix, digits and dots (dots more of them at least), then at most
 * a pre-release tag ("rc1", "a2", "+") or gcc's " 20160609" datestamp.
 * The version without the datestamp, malloc'd, or NULL.
 */
static char *match(const char *s, const char *prefix, int dots)
{
	size_t pl = strlen(prefix), n;
	const char *r = s + pl, *end;
	int seen = 0;

	if (strncmp(s, prefix, pl) != 0 || !isdigit((unsigned char)*r))
		return NULL;
	for (end = r; isdigit((unsigned char)*end) || (*end == '.' && isdigit((unsigned char)end[1])); end++)
		seen += *end == '.';
	if (seen < dots)
		return NULL;
	n = (size_t)(end - s);
	while (islower((unsigned char)*end))
		end++;
	while (isdigit((unsigned char)*end))
		end++;
	if (*end == '+')
		end++;
	if (*end == '\0')
		return el_xstrndup(s, (size_t)(end - s));
	if (*end == ' ' && strlen(end + 1) == 8 && strspn(end + 1, "0123456789") == 8)
		return el_xstrndup(s, n);
	return NULL;
}

typedef struct {
	const char *prefix;
	int dots;
} version_want;

static char *match_version(const char *s, void *data)
{
	const version_want *w = data;

	return match(s, w->prefix, w->dots);
}

char *el_probe_file_version(el_probe *p, const char *abs, const char *prefix, int dots)
{
	version_want w = { prefix, dots };

	return el_probe_file_scan(p, abs, match_version, &w);
}

char *el_probe_file_scan(el_probe *p, const char *abs, char *(*take)(const char *s, void *data), void *data)
{
	char *real = NULL, *host, *buf, *out = NULL, cur[256]; /* nvcc's is 88 bytes, two lines */
	size_t cl = 0;
	bool longseg = false;
	off_t scanned = 0;
	struct stat st;
	int fd;

	if (el_root_realpath(&p->root, abs, &real, NULL) != 0)
		return NULL;
	host = el_root_host(&p->root, real);
	fd = open(host, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	free(host);
	free(real);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = el_xmalloc_io(EL_VERSTR_CHUNK);
	while (!out && scanned < EL_VERSTR_MAX_SCAN) {
		ssize_t got = read(fd, buf, EL_VERSTR_CHUNK);
		size_t i = 0, n;

		if (got <= 0)
			break;
		n = (size_t)got;
		scanned += got;
		while (i < n && !out) {
			char *z = memchr(buf + i, '\0', n - i);
			size_t seg = z ? (size_t)(z - (buf + i)) : n - i;

			if (!longseg && cl + seg < sizeof(cur)) {
				memcpy(cur + cl, buf + i, seg);
				cl += seg;
			} else {
				longseg = true;
			}
			if (!z)
				break;
			if (!longseg && cl) {
				cur[cl] = '\0';
				out = take(cur, data);
			}
			cl = 0;
			longseg = false;
			i += seg + 1;
		}
	}
	el_free_io(buf);
	close(fd);
	return out;
}
