#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "error.h"
#include "root.h"
#include "xalloc.h"

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int el_write_atomic(envlock_ctx *ctx, const char *path, const void *data,
		    size_t len, mode_t mode)
{
	char *dir = strchr(path, '/') ? el_path_dir(path) : el_xstrdup(".");
	char *tmp = el_xasprintf("%s/.%s.XXXXXX", dir, el_path_base(path));
	mode_t mask = umask(0);
	int fd, dfd, rc = 0;

	umask(mask);
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': cannot create a file in '%s': %s",
				  path, dir, strerror(errno));
		goto done;
	}
	if (fchmod(fd, mode & ~mask) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': write failed: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		goto done;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		rc = el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", path, strerror(errno));
		unlink(tmp);
		goto done;
	}
	/* make the rename itself durable */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
done:
	free(tmp);
	free(dir);
	return rc;
}

int el_mkdir_p(const char *dir, mode_t mode)
{
	char *p = el_xstrdup(dir);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) != 0 && errno != EEXIST) {
				rc = ENVLOCK_EIO;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return rc;
}
