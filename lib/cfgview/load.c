/* An effective config from lib/config's evaluator, and the first base of a config to compare it with. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfgview.h"
#include "config/config.h"
#include "util/error.h"
#include "util/pybases.h"
#include "util/root.h"
#include "util/text.h"
#include "util/userpath.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* path made absolute from the current directory and normalised as os.path.abspath does; malloc'd, NULL when the current directory cannot be read. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *joined, *abs;

	if (path[0] == '/')
		return el_path_normalise(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	joined = el_path_join(cwd, path);
	abs = el_path_normalise(joined);
	free(joined);
	return abs;
}

/* path as a person would write it: relative to the current directory when under it; malloc'd. */
static char *shown(const char *path)
{
	char *abs = absolute(path), *s;

	if (!abs)
		return el_xstrdup(path);
	s = el_userpath_display(abs);
	free(abs);
	return s;
}

/* Each entry's "file" of list key in doc shown as a person would write it, bases' "x/../_base_/y.py" included. */
static void show_files(cJSON *doc, const char *key)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, key), *n;

	cJSON_ArrayForEach(n, list) {
		cJSON *file = cJSON_GetObjectItemCaseSensitive(n, "file");

		if (cJSON_IsString(file)) {
			char *s = shown(file->valuestring);

			cJSON_SetValuestring(file, s);
			free(s);
		}
	}
}

int envlock_config_load(envlock_config **out, envlock_ctx *ctx, const char *path, const envlock_config_opts *opts)
{
	static const envlock_config_opts none = { NULL, 0, NULL, 0 };
	el_config_sites sites;
	cJSON *doc = NULL;
	char *missing = NULL;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &none;
	sites.site_dirs = opts->site_dirs;
	sites.n = opts->n_site_dirs;
	rc = el_config_effective_in(&doc, ctx, path, opts->cfg_options, opts->n_cfg_options,
				    opts->n_site_dirs ? &sites : NULL, &missing);
	free(missing);
	if (rc != 0)
		return rc;
	show_files(doc, "not_evaluated");
	show_files(doc, "imports");
	*out = el_xcalloc(1, sizeof(**out));
	(*out)->doc = doc;
	(*out)->shown = shown(path);
	return 0;
}

/* A regular file at path? */
static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 'pkg::rel' as mmengine finds it: <site>/<pkg>/.mim/configs/<rel>, the first site that has it; malloc'd or NULL. */
static char *package_base(envlock_ctx *ctx, const char *config, const char *name, const envlock_config_opts *opts,
			  int *rc)
{
	const char *sep = strstr(name, "::");
	char *pkg = el_xstrndup(name, (size_t)(sep - name));

	*rc = 0;
	if (!opts || !opts->n_site_dirs) {
		*rc = el_error_set(ctx, ENVLOCK_EINVAL, "%s: the base '%s' is a package's config, and no --site "
				   "folder was given to find it in", config, name);
	} else {
		for (size_t i = 0; i < opts->n_site_dirs; i++) {
			char *p = el_xasprintf("%s/%s/.mim/configs/%s", opts->site_dirs[i], pkg, sep + 2);

			if (is_file(p)) {
				free(pkg);
				return p;
			}
			free(p);
		}
		*rc = el_error_set(ctx, ENVLOCK_ENOTFOUND, "%s: the base '%s' is not in the --site folders ('%s' "
				   "with its .mim/configs/%s)", config, name, pkg, sep + 2);
	}
	free(pkg);
	return NULL;
}

/*
 * The file of a module a read_base() block imports, as mmengine finds
 * it: ".x.y" beside the config (one more dot, one folder up), "pkg.x.y"
 * in an installed package (opts->site_dirs); malloc'd or NULL.
 */
static char *module_base(envlock_ctx *ctx, const char *config, const char *dir, const char *module,
			 const envlock_config_opts *opts, int *rc)
{
	el_buf b = EL_BUF_INIT(PATH_MAX);
	size_t dots = strspn(module, ".");
	char *rel;

	*rc = 0;
	for (const char *p = module + dots; *p; p++)
		el_buf_addc(&b, *p == '.' ? '/' : *p);
	el_buf_adds(&b, ".py");
	if (el_buf_failed(&b))
		goto too_long;
	rel = el_buf_detach(&b);
	if (dots) {
		el_buf_adds(&b, dir);
		for (size_t i = 1; i < dots; i++)
			el_buf_adds(&b, "/..");
		el_buf_addf(&b, "/%s", rel);
		free(rel);
		if (el_buf_failed(&b))
			goto too_long;
		return el_buf_detach(&b);
	}
	for (size_t i = 0; opts && i < opts->n_site_dirs; i++) {
		char *p = el_xasprintf("%s/%s", opts->site_dirs[i], rel);

		if (is_file(p)) {
			free(rel);
			return p;
		}
		free(p);
	}
	*rc = el_error_set(ctx, opts && opts->n_site_dirs ? ENVLOCK_ENOTFOUND : ENVLOCK_EINVAL,
			   "%s: read_base() imports '%s', %s", config, module,
			   opts && opts->n_site_dirs ? "which is in none of the --site folders"
						     : "an installed package's config, and no --site folder was given");
	free(rel);
	el_buf_release(&b);
	return NULL;
too_long:
	*rc = el_error_set(ctx, ENVLOCK_ELIMIT, "%s: read_base() imports a module whose file name is longer than %d bytes",
			   config, PATH_MAX);
	el_buf_release(&b);
	return NULL;
}

/* The path of the first base the config at path names (relative to it, or in a site folder); malloc'd or NULL. */
static char *first_base(envlock_ctx *ctx, const char *path, const envlock_config_opts *opts, int *rc)
{
	el_buf text = EL_BUF_INIT((size_t)1 << 20);
	el_py_bases bases = { 0 };
	char *abs, *dir, *base = NULL;

	if ((*rc = el_userpath_read(&text, ctx, path, "config")) != 0) {
		el_buf_release(&text);
		return NULL;
	}
	el_py_bases_read(&bases, text.data, text.len);
	el_buf_release(&text);
	if (!(abs = absolute(path))) {
		*rc = el_error_set(ctx, ENVLOCK_EIO, "%s: the current directory cannot be read", path);
		el_py_bases_release(&bases);
		return NULL;
	}
	dir = el_path_dir(abs);
	if (bases.names.n && strstr(bases.names.v[0], "::")) {
		base = package_base(ctx, path, bases.names.v[0], opts, rc);
	} else if (bases.names.n) {
		char *joined = bases.names.v[0][0] == '/' ? el_xstrdup(bases.names.v[0])
							 : el_path_join(dir, bases.names.v[0]);

		base = el_path_normalise(joined);
		free(joined);
	} else if (bases.unresolved) {
		*rc = el_error_set(ctx, ENVLOCK_EINVAL, "%s: its _base_ is not a literal path or list of paths (%s)",
				   path, bases.unresolved);
	} else if (bases.modules.n) {
		base = module_base(ctx, path, dir, bases.modules.v[0], opts, rc);
	} else {
		*rc = el_error_set(ctx, ENVLOCK_EINVAL, "%s: it has no _base_ to compare with; name the other config: "
				   "envlock config --diff OTHER %s", path, path);
	}
	el_py_bases_release(&bases);
	free(dir);
	free(abs);
	return base;
}

int envlock_config_load_base(envlock_config **out, envlock_ctx *ctx, const char *path, const envlock_config_opts *opts)
{
	envlock_config_opts sites = { NULL, 0, opts ? opts->site_dirs : NULL, opts ? opts->n_site_dirs : 0 };
	char *base, *display;
	int rc;

	*out = NULL;
	if (!(base = first_base(ctx, path, opts, &rc)))
		return rc;
	display = shown(base);
	rc = envlock_config_load(out, ctx, display, &sites);
	free(display);
	free(base);
	return rc;
}

const char *envlock_config_path(const envlock_config *c)
{
	return c->shown;
}

size_t envlock_config_not_evaluated(const envlock_config *c)
{
	return (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->doc, "not_evaluated"));
}

void envlock_config_free(envlock_config *c)
{
	if (!c)
		return;
	cJSON_Delete(c->doc);
	free(c->shown);
	free(c);
}
