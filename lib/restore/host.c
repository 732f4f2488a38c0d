/* Host paths of in-root paths, for what restore creates, replaces, reads or runs. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The host path of abs: every component resolved under the root, or all but the last. */
static char *host_path(const el_root *root, const char *abs, bool follow_last)
{
	char *dir, *real = NULL, *host;
	int e = 0;

	if (strcmp(abs, "/") == 0)
		return el_xstrdup(root->prefix[0] ? root->prefix : "/");
	if (follow_last && el_root_realpath(root, abs, &real, &e) == 0) {
		host = el_xasprintf("%s%s", root->prefix, strcmp(real, "/") == 0 ? "" : real);
		free(real);
		return host[0] ? host : (free(host), el_xstrdup("/"));
	}
	/* the resolved parent, then the name (also for what is not there yet) */
	dir = el_path_dir(abs);
	real = host_path(root, dir, true);
	host = el_xasprintf("%s/%s", strcmp(real, "/") == 0 ? "" : real, el_path_base(abs));
	free(real);
	free(dir);
	return host;
}

char *el_restore_host(const el_root *root, const char *abs)
{
	return host_path(root, abs, false);
}

char *el_restore_host_real(const el_root *root, const char *abs)
{
	return host_path(root, abs, true);
}

char *el_restore_tree_file(const envlock_restore *r, const char *name, char **in_tree)
{
	*in_tree = el_xasprintf("/tmp/envlock-restore-%s.%s", r->short_id, name);
	return el_restore_host(&r->root, *in_tree);
}

const char *el_restore_tree_file_in(const envlock_restore *r, const el_strvec *argv)
{
	char *prefix = el_xasprintf("/tmp/envlock-restore-%s.", r->short_id);
	const char *hit = NULL;

	for (size_t i = 0; i < argv->n && !hit; i++)
		if (el_starts_with(argv->v[i], prefix) && !strchr(argv->v[i] + strlen(prefix), '/'))
			hit = argv->v[i];
	free(prefix);
	return hit;
}

char *el_restore_in_tree(const envlock_restore *r, const char *host_path)
{
	const char *prefix = r->root.prefix;
	size_t n = strlen(prefix);

	if (r->root.live)
		return el_xstrdup(host_path);
	if (strncmp(host_path, prefix, n) != 0 || (host_path[n] != '/' && host_path[n] != '\0'))
		return NULL;
	return el_xstrdup(host_path[n] ? host_path + n : "/");
}
