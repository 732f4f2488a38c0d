#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "root.h"
#include "userpath.h"
#include "xalloc.h"

char *el_userpath_display(const char *abs)
{
	char cwd[PATH_MAX], *real;
	size_t n;

	if (!getcwd(cwd, sizeof(cwd)))
		return el_xstrdup(abs);
	/* compare resolved forms, so /tmp vs /private/tmp style links do not matter */
	real = realpath(cwd, NULL);
	if (real) {
		snprintf(cwd, sizeof(cwd), "%s", real);
		free(real);
	}
	n = strlen(cwd);
	if (strcmp(abs, cwd) == 0)
		return el_xstrdup(".");
	if (n == 1 && cwd[0] == '/')
		return el_xstrdup(abs + 1);
	if (strncmp(abs, cwd, n) == 0 && abs[n] == '/')
		return el_xstrdup(abs + n + 1);
	return el_xstrdup(abs);
}

int el_userpath_read(el_buf *b, envlock_ctx *ctx, const char *path, const char *what)
{
	el_root live = EL_ROOT_LIVE_INIT;
	char *abs = NULL;
	int e = 0, rc;

	if (path[0] != '/') {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return el_error_set(ctx, ENVLOCK_EIO, "'%s': %s", path, el_strerror(errno));
		abs = el_path_join(cwd, path);
	}
	rc = el_root_read(&live, abs ? abs : path, b, &e);
	free(abs);
	if (rc == ENVLOCK_ELIMIT && e != ELOOP)
		return el_error_set(ctx, rc, "'%s': larger than %zu %s, not a %s", path,
				    b->limit >= (1u << 20) ? b->limit >> 20 : b->limit >> 10,
				    b->limit >= (1u << 20) ? "MiB" : "KiB", what);
	if (rc)
		return el_error_set(ctx, rc, "'%s': %s", path, el_root_reason(rc, e));
	return 0;
}
