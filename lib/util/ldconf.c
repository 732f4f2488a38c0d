/* ld.so.conf's folders, as ldconfig reads them. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldconf.h"
#include "text.h"
#include "vec.h"
#include "xalloc.h"

static void read_conf(const el_root *root, const char *path, el_ldconf_read_fn read, el_ldconf_add_fn add,
		      void *arg, int depth)
{
	el_buf b = EL_BUF_INIT(1u << 20);
	const char *pos, *line;
	size_t len;

	if (depth > 4 || read(path, &b, arg) != 0) {
		el_buf_release(&b);
		return;
	}
	pos = b.data;
	while (el_next_line(&pos, b.data + b.len, &line, &len)) {
		const char *hash = memchr(line, '#', len);

		if (hash)
			len = (size_t)(hash - line);
		el_trim(&line, &len);
		if (len > 7 && strncmp(line, "include", 7) == 0 && (line[7] == ' ' || line[7] == '\t')) {
			char *globs = el_xstrndup(line + 8, len - 8), *from = el_path_dir(path), *save = NULL;

			for (char *g = strtok_r(globs, " \t", &save); g; g = strtok_r(NULL, " \t", &save)) {
				char *glob = g[0] == '/' ? el_xstrdup(g) : el_path_join(from, g);
				char *gdir = el_path_dir(glob), **names = NULL;

				if (el_root_list(root, gdir, &names, NULL) == 0)
					for (char **n = names; *n; n++)
						if (fnmatch(el_path_base(glob), *n, FNM_PERIOD) == 0) {
							char *sub = el_path_join(gdir, *n);

							read_conf(root, sub, read, add, arg, depth + 1);
							free(sub);
						}
				el_strv_free(names);
				free(gdir);
				free(glob);
			}
			free(from);
			free(globs);
		} else if (len > 5 && strncasecmp(line, "hwcap", 5) == 0 && (line[5] == ' ' || line[5] == '\t')) {
			continue;
		} else if (len && line[0] == '/') {
			const char *eq = memchr(line, '=', len);
			char *dir = el_xstrndup(line, eq ? (size_t)(eq - line) : len);
			size_t dl = strlen(dir);

			while (dl > 1 && (dir[dl - 1] == '/' || dir[dl - 1] == ' ' || dir[dl - 1] == '\t'))
				dir[--dl] = '\0';
			add(dir, arg);
			free(dir);
		}
	}
	el_buf_release(&b);
}

void el_ldconf_dirs(const el_root *root, const char *path, el_ldconf_read_fn read, el_ldconf_add_fn add, void *arg)
{
	read_conf(root, path, read, add, arg, 0);
}
