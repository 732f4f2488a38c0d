#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
