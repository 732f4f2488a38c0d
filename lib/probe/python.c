/*
 * The Python probe: find the Python environments under the root, choose
 * the one pip and frameworks describe (p->py) and write "python".
 * Everything comes from files: patchlevel.h, conda-meta, pyvenv.cfg or
 * the version string the interpreter (or libpython) carries, and the
 * lib/pythonX.Y directory names say only where to look; no interpreter is
 * ever run, and no version is taken from a folder's name.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* Search preference when no candidate holds torch or mmcv. */
enum { RANK_CONDA_ENV, RANK_VENV, RANK_PYENV, RANK_CONDA_BASE, RANK_SYSTEM };

static const char *const conda_dirs[] = {
	"miniconda3", "anaconda3", "miniforge3", "mambaforge", NULL
};

typedef struct {
	char *prefix;		/* resolved, in-root */
	const char *kind;
	int rank;
	char *version;
	char *version_source;
	char *executable;
	el_strvec sites;
	bool has_ml;		/* a site dir holds torch or mmcv */
	bool active;		/* PATH's python3 (not the system one) */
} py_cand;

typedef struct {
	py_cand **v;
	size_t n, cap;
} cand_list;

static void cand_free(py_cand *c)
{
	if (!c)
		return;
	free(c->prefix);
	free(c->version);
	free(c->version_source);
	free(c->executable);
	el_strvec_release(&c->sites);
	free(c);
}


/* Does name exist (as anything, a link included) in the resolved directory dir? */
static bool exists_in(el_probe *p, const char *dir, const char *name, struct stat *st)
{
	char *path = el_path_join(dir, name);
	struct stat tmp;
	int rc = el_root_lstat(&p->root, path, st ? st : &tmp);

	free(path);
	return rc == 0;
}

static bool dir_in(el_probe *p, const char *dir, const char *name)
{
	char *d = el_probe_resolve_dir(p, dir, name);

	free(d);
	return d != NULL;
}

/* "python3.10" -> 3, 10; false for anything else ("python3.10m", "python3"). */
static bool pyver_name(const char *name, int *major, int *minor)
{
	const char *s;
	char *end;
	long a, b;

	if (!el_starts_with(name, "python") || !isdigit((unsigned char)name[6]))
		return false;
	s = name + 6;
	a = strtol(s, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return false;
	b = strtol(end + 1, &end, 10);
	if (*end || a > 99 || b > 999)
		return false;
	*major = (int)a;
	*minor = (int)b;
	return true;
}

/* The pythonX.Y directories of dir, oldest first. */
static void pyver_dirs(el_probe *p, const char *dir, el_strvec *out)
{
	char **names = NULL;

	if (el_root_list(&p->root, dir, &names, NULL) != 0)
		return;
	for (char **n = names; *n; n++) {
		int a, b;

		if (pyver_name(*n, &a, &b))
			el_strvec_push(out, *n);
	}
	el_strv_free(names);
	/* insertion sort by number: "python3.9" before "python3.10" */
	for (size_t i = 1; i < out->n; i++) {
		for (size_t j = i; j > 0; j--) {
			int a1, b1, a2, b2;

			pyver_name(out->v[j - 1], &a1, &b1);
			pyver_name(out->v[j], &a2, &b2);
			if (a1 < a2 || (a1 == a2 && b1 <= b2))
				break;
			char *t = out->v[j - 1];
			out->v[j - 1] = out->v[j];
			out->v[j] = t;
		}
	}
}

/* The value of "key = value" in pyvenv.cfg text (malloc'd), or NULL. */
static char *cfg_value(const char *text, size_t len, const char *key)
{
	const char *pos = text, *end = text + len, *line;
	size_t ll, kl = strlen(key);

	while (el_next_line(&pos, end, &line, &ll)) {
		const char *eq = memchr(line, '=', ll), *k = line, *v;
		size_t klen, vlen;

		if (!eq)
			continue;
		klen = (size_t)(eq - line);
		el_trim(&k, &klen);
		if (klen != kl || memcmp(k, key, kl) != 0)
			continue;
		v = eq + 1;
		vlen = (size_t)(line + ll - v);
		el_trim(&v, &vlen);
		return vlen ? el_xstrndup(v, vlen) : NULL;
	}
	return NULL;
}

static bool version_from_patchlevel(el_probe *p, py_cand *c, const char *prefix,
				    const char *pyname)
{
	static const char *const suffixes[] = { "", "m", NULL };
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	bool found = false;

	for (const char *const *s = suffixes; *s && !found; s++) {
		char *path = el_xasprintf("%s/include/%s%s/patchlevel.h",
					  strcmp(prefix, "/") == 0 ? "" : prefix, pyname, *s);
		char *v = NULL;

		if (el_probe_read(p, path, &b) == 0 &&
		    el_c_define_str(b.data, b.len, "PY_VERSION", &v)) {
			c->version = v;
			c->version_source = path;
			found = true;
		} else {
			free(path);
		}
	}
	el_buf_release(&b);
	return found;
}

/* conda-meta/python-3.7.16-h7a1cb2a_0.json */
static bool version_from_conda_meta(el_probe *p, py_cand *c)
{
	char *meta = el_path_join(c->prefix, "conda-meta"), **names = NULL;
	el_buf b = EL_BUF_INIT(EL_LIMIT_RECORD);
	bool found = false;

	if (el_root_list(&p->root, meta, &names, NULL) == 0) {
		for (char **n = names; *n && !found; n++) {
			char *path;
			cJSON *doc;

			if (!el_starts_with(*n, "python-") || !isdigit((unsigned char)(*n)[7]) ||
			    !el_ends_with(*n, ".json"))
				continue;
			path = el_path_join(meta, *n);
			/* conda.c warns about a bad record; here it is only skipped */
			if (el_root_read(&p->root, path, &b, NULL) == 0 &&
			    (doc = cJSON_ParseWithLength(b.data, b.len)) != NULL) {
				const char *v = el_jget_str(doc, "version");
				const char *name = el_jget_str(doc, "name");

				if (v && name && strcmp(name, "python") == 0) {
					c->version = el_xstrdup(v);
					c->version_source = path;
					path = NULL;
					found = true;
				}
				cJSON_Delete(doc);
			}
			free(path);
		}
	}
	el_strv_free(names);
	el_buf_release(&b);
	free(meta);
	return found;
}

/* "3.10.12.final.0" -> "3.10.12" */
static char *trim_version_info(char *v)
{
	int dots = 0;

	for (char *s = v; *s; s++)
		if (*s == '.' && ++dots == 3) {
			*s = '\0';
			break;
		}
	return v;
}

/* PY_VERSION as the file at abs carries it, for pyname ("python3.11"). */
static bool version_from_file(el_probe *p, py_cand *c, const char *abs, const char *pyname)
{
	char *prefix = el_xasprintf("%s.", pyname + 6), *real = NULL, *v = NULL;

	if (el_root_realpath(&p->root, abs, &real, NULL) == 0 &&
	    (v = el_probe_file_version(p, real, prefix, 0)) != NULL) {
		c->version = v;
		c->version_source = real;
		real = NULL;
	}
	free(real);
	free(prefix);
	return v != NULL;
}

/*
 * The version the interpreter itself carries, else its libpython's
 * (lib/libpython3.11.so.1.0; Debian's is in the multiarch folder).
 */
static bool version_from_binaries(el_probe *p, py_cand *c, const char *libdir, const char *pyname)
{
	static const char *const suffixes[] = { ".so.1.0", "m.so.1.0", NULL };
	char **names = NULL;
	bool found = false;

	if (c->executable && version_from_file(p, c, c->executable, pyname))
		return true;
	for (const char *const *s = suffixes; *s && !found; s++) {
		char *path = el_xasprintf("%s/lib%s%s", libdir, pyname, *s);

		found = version_from_file(p, c, path, pyname);
		free(path);
	}
	if (!found && el_root_list(&p->root, libdir, &names, NULL) == 0) {
		for (char **n = names; *n && !found; n++) {
			char *path;

			if (!strstr(*n, "-linux-gnu"))
				continue;
			path = el_xasprintf("%s/%s/lib%s.so.1.0", libdir, *n, pyname);
			found = version_from_file(p, c, path, pyname);
			free(path);
		}
	}
	el_strv_free(names);
	return found;
}

/* Add dir/rel, resolved, to the candidate's site dirs unless it is there already. */
static void add_site(el_probe *p, py_cand *c, const char *dir, const char *rel)
{
	char *site = el_probe_resolve_dir(p, dir, rel);

	if (site && !el_strvec_has(&c->sites, site))
		el_strvec_push_owned(&c->sites, site);
	else
		free(site);
}

/*
 * The site dirs of the Python installed under base ("/usr", "/opt/py3.11")
 * for the interpreter named best ("python3.11"), in sys.path order, which
 * decides which copy of a distribution is imported (pip.c). Under /usr,
 * Debian's site.py patch gives /usr/local/lib/python3.X/dist-packages,
 * /usr/lib/python3/dist-packages, /usr/lib/python3.X/dist-packages (as
 * Debian's python3 prints sys.path); Fedora's patch likewise puts
 * /usr/local/lib/python3.X/site-packages before /usr/lib's. Elsewhere,
 * <base>/lib/python3.X/site-packages.
 */
static void base_sites(el_probe *p, py_cand *c, const char *base, const char *best)
{
	char *rel;

	if (strcmp(base, "/usr") == 0) {
		rel = el_xasprintf("/usr/local/lib/%s/dist-packages", best);
		add_site(p, c, "/", rel);
		free(rel);
		add_site(p, c, "/", "/usr/lib/python3/dist-packages");
		rel = el_xasprintf("/usr/lib/%s/dist-packages", best);
		add_site(p, c, "/", rel);
		free(rel);
		rel = el_xasprintf("/usr/local/lib/%s/site-packages", best);
		add_site(p, c, "/", rel);
		free(rel);
	}
	rel = el_xasprintf("lib/%s/site-packages", best);
	add_site(p, c, base, rel);
	free(rel);
}

/*
 * A venv made with --system-site-packages (pyvenv.cfg's
 * include-system-site-packages = true) imports its base's distributions
 * after its own: the base is the folder above pyvenv.cfg's home
 * ("home = /usr/bin" gives /usr), as CPython's site.py finds it.
 */
static void venv_system_sites(el_probe *p, py_cand *c, const char *text, size_t len, const char *best)
{
	char *inc = cfg_value(text, len, "include-system-site-packages"), *home = NULL, *base = NULL;

	if (inc && strcasecmp(inc, "true") == 0 && (home = cfg_value(text, len, "home")) != NULL && home[0] == '/') {
		base = el_path_dir(home);
		base_sites(p, c, base, best);
	}
	free(inc);
	free(home);
	free(base);
}

/* Version, executable and site dirs of a Python installed under c->prefix. */
static void describe_prefix(el_probe *p, py_cand *c)
{
	el_strvec libs = EL_STRVEC_INIT;
	char *lib = el_path_join(c->prefix, "lib"), *cfg_path, *bin;
	const char *best;
	el_buf cfg = EL_BUF_INIT(EL_LIMIT_SMALL);
	bool have_cfg;

	pyver_dirs(p, lib, &libs);
	for (size_t i = 0; i < libs.n; i++) {
		char *rel = el_xasprintf("%s/site-packages", libs.v[i]);

		add_site(p, c, lib, rel);
		free(rel);
	}
	best = libs.n ? libs.v[libs.n - 1] : NULL;

	cfg_path = el_path_join(c->prefix, "pyvenv.cfg");
	have_cfg = el_probe_read_text(p, cfg_path, &cfg) == 0;
	if (have_cfg && best)
		venv_system_sites(p, c, cfg.data, cfg.len, best);

	if (best && version_from_patchlevel(p, c, c->prefix, best))
		;
	else if (version_from_conda_meta(p, c))
		;
	else if (have_cfg) {
		char *v = cfg_value(cfg.data, cfg.len, "version");

		if (!v && (v = cfg_value(cfg.data, cfg.len, "version_info")) != NULL)
			trim_version_info(v);
		if (v) {
			c->version = v;
			c->version_source = el_xstrdup(cfg_path);
		} else {
			/* the base interpreter: home = /usr/bin */
			char *home = cfg_value(cfg.data, cfg.len, "home"), *base = NULL, *rbase = NULL;

			if (home && home[0] == '/' && best) {
				base = el_path_dir(home);
				if (el_root_realpath(&p->root, base, &rbase, NULL) == 0)
					version_from_patchlevel(p, c, rbase, best);
			}
			free(home);
			free(base);
			free(rbase);
		}
	}
	bin = el_probe_resolve_dir(p, c->prefix, "bin");
	if (bin) {
		const char *names[] = { best, "python3", "python", NULL };

		for (const char **n = best ? names : names + 1; *n; n++) {
			if (exists_in(p, bin, *n, NULL)) {
				char *b = el_path_join(c->prefix, "bin");

				c->executable = el_path_join(b, *n);
				free(b);
				break;
			}
		}
		free(bin);
	}
	if (!c->version && best)
		version_from_binaries(p, c, lib, best);
	el_buf_release(&cfg);
	free(cfg_path);
	free(lib);
	el_strvec_release(&libs);
}

/* The system Python: /usr/bin/python3, Debian's dist-packages layout. */
static void describe_system(el_probe *p, py_cand *c, const char *want)
{
	el_strvec libs = EL_STRVEC_INIT;
	char *real = NULL, *best = NULL, *bin;
	int a, b;

	if (want && pyver_name(want, &a, &b))
		best = el_xstrdup(want);
	else if (el_root_realpath(&p->root, "/usr/bin/python3", &real, NULL) == 0 &&
		 pyver_name(el_path_base(real), &a, &b))
		best = el_xstrdup(el_path_base(real));
	else {
		pyver_dirs(p, "/usr/lib", &libs);
		for (size_t i = libs.n; i-- > 0;)
			if (el_starts_with(libs.v[i], "python3.")) {
				best = el_xstrdup(libs.v[i]);
				break;
			}
	}
	free(real);

	if (best) {
		base_sites(p, c, "/usr", best);
		version_from_patchlevel(p, c, "/usr", best);
	}
	if ((bin = el_probe_resolve_dir(p, "/", "/usr/bin")) != NULL) {
		if (best && exists_in(p, bin, best, NULL))
			c->executable = el_path_join("/usr/bin", best);
		else if (exists_in(p, bin, "python3", NULL))
			c->executable = el_xstrdup("/usr/bin/python3");
		free(bin);
	}
	if (!c->version && best)
		version_from_binaries(p, c, "/usr/lib", best);
	free(best);
	el_strvec_release(&libs);
}

/* Is the site dir home to torch or mmcv? */
static bool site_has_ml(el_probe *p, const char *site)
{
	char **names = NULL;
	bool found = false;

	if (el_root_list(&p->root, site, &names, NULL) != 0)
		return false;
	for (char **n = names; *n && !found; n++) {
		const char *s = *n;

		if (strcmp(s, "torch") == 0 || strcmp(s, "mmcv") == 0)
			found = dir_in(p, site, s);
		else if (el_ends_with(s, ".dist-info") &&
			 (el_starts_with(s, "torch-") ||
			  (el_starts_with(s, "mmcv") && strchr(s, '-'))))
			found = true;
	}
	el_strv_free(names);
	return found;
}

/* Build a candidate for the resolved prefix; kind NULL: decide from its files. */
static py_cand *describe(el_probe *p, const char *prefix, const char *kind, int rank,
			 const char *want)
{
	py_cand *c = el_xcalloc(1, sizeof(*c));

	c->prefix = el_xstrdup(prefix);
	c->kind = kind;
	c->rank = rank;
	if (!kind) {
		if (dir_in(p, prefix, "conda-meta")) {
			c->kind = "conda";
			c->rank = RANK_CONDA_BASE;
		} else if (exists_in(p, prefix, "pyvenv.cfg", NULL)) {
			c->kind = "venv";
			c->rank = RANK_VENV;
		} else if (strstr(prefix, "/.pyenv/versions/")) {
			c->kind = "pyenv";
			c->rank = RANK_PYENV;
		} else {
			c->kind = "system";
			c->rank = RANK_SYSTEM;
		}
	}
	if (strcmp(prefix, "/usr") == 0 && strcmp(c->kind, "system") == 0)
		describe_system(p, c, want);
	else
		describe_prefix(p, c);
	for (size_t i = 0; i < c->sites.n && !c->has_ml; i++)
		c->has_ml = site_has_ml(p, c->sites.v[i]);
	return c;
}

static py_cand *find_cand(const cand_list *l, const char *prefix)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i]->prefix, prefix) == 0)
			return l->v[i];
	return NULL;
}

static void add_cand(el_probe *p, cand_list *l, const char *prefix, const char *kind, int rank)
{
	if (find_cand(l, prefix))
		return;
	EL_GROW(l->v, l->n + 1, l->cap);
	l->v[l->n++] = describe(p, prefix, kind, rank, NULL);
}

/* Every conda env (a folder with conda-meta/) directly in envs (resolved). */
static void add_conda_envs_in(el_probe *p, cand_list *l, const char *envs)
{
	char **names = NULL;

	if (el_root_list(&p->root, envs, &names, NULL) == 0)
		for (char **n = names; *n; n++) {
			char *env = el_probe_resolve_dir(p, envs, *n);

			if (env && dir_in(p, env, "conda-meta"))
				add_cand(p, l, env, "conda", RANK_CONDA_ENV);
			free(env);
		}
	el_strv_free(names);
}

/* A conda install: its base and every envs/<name> with conda-meta. */
static void add_conda_install(el_probe *p, cand_list *l, const char *dir)
{
	char *envs;

	if (!dir_in(p, dir, "conda-meta"))
		return;
	add_cand(p, l, dir, "conda", RANK_CONDA_BASE);
	envs = el_probe_resolve_dir(p, dir, "envs");
	if (envs)
		add_conda_envs_in(p, l, envs);
	free(envs);
}

/* Every subdirectory of dir (resolved) that holds pyvenv.cfg. */
static void add_venvs_in(el_probe *p, cand_list *l, const char *dir)
{
	char **names = NULL;

	if (el_root_list(&p->root, dir, &names, NULL) != 0)
		return;
	for (char **n = names; *n; n++) {
		char *sub = el_probe_resolve_dir(p, dir, *n);

		if (sub && exists_in(p, sub, "pyvenv.cfg", NULL))
			add_cand(p, l, sub, "venv", RANK_VENV);
		free(sub);
	}
	el_strv_free(names);
}

/* <pyenv root>/versions/<v>: pyenv's own builds, or conda/venvs it manages. */
static void add_pyenv_versions(el_probe *p, cand_list *l, const char *pyenv_root)
{
	char *versions = el_probe_resolve_dir(p, pyenv_root, "versions"), **names = NULL;

	if (versions && el_root_list(&p->root, versions, &names, NULL) == 0) {
		for (char **n = names; *n; n++) {
			char *v = el_probe_resolve_dir(p, versions, *n);

			if (v)
				add_cand(p, l, v, NULL, 0);
			free(v);
		}
	}
	el_strv_free(names);
	free(versions);
}

/* /root and every /home/<user>, resolved. */
static void home_dirs(el_probe *p, el_strvec *homes)
{
	char *home, **names = NULL, *root = el_probe_resolve_dir(p, "/", "/root");

	if (root)
		el_strvec_push_owned(homes, root);
	home = el_probe_resolve_dir(p, "/", "/home");
	if (home && el_root_list(&p->root, home, &names, NULL) == 0) {
		for (char **n = names; *n; n++) {
			char *h = el_probe_resolve_dir(p, home, *n);

			if (h && !el_strvec_has(homes, h))
				el_strvec_push_owned(homes, h);
			else
				free(h);
		}
	}
	el_strv_free(names);
	free(home);
}

static void search(el_probe *p, cand_list *l)
{
	static const char *const opt_conda[] = {
		"/opt/conda", "/opt/miniconda3", "/opt/anaconda3", NULL
	};
	el_strvec homes = EL_STRVEC_INIT;
	const char *pyenv_env = el_probe_getenv(p, "PYENV_ROOT");
	char *d;

	home_dirs(p, &homes);
	for (const char *const *o = opt_conda; *o; o++) {
		if ((d = el_probe_resolve_dir(p, "/", *o)) != NULL)
			add_conda_install(p, l, d);
		free(d);
	}
	for (size_t i = 0; i < homes.n; i++) {
		for (const char *const *c = conda_dirs; *c; c++) {
			if ((d = el_probe_resolve_dir(p, homes.v[i], *c)) != NULL)
				add_conda_install(p, l, d);
			free(d);
		}
		/* envs made with conda create -n by a user without write access to the install */
		if ((d = el_probe_resolve_dir(p, homes.v[i], ".conda/envs")) != NULL)
			add_conda_envs_in(p, l, d);
		free(d);
	}

	if ((d = el_probe_resolve_dir(p, "/", "/opt")) != NULL)
		add_venvs_in(p, l, d);
	free(d);
	for (size_t i = 0; i < homes.n; i++) {
		add_venvs_in(p, l, homes.v[i]);
		if ((d = el_probe_resolve_dir(p, homes.v[i], ".virtualenvs")) != NULL)
			add_venvs_in(p, l, d);
		free(d);
	}

	if (pyenv_env && pyenv_env[0] == '/' && (d = el_probe_resolve_dir(p, "/", pyenv_env)) != NULL) {
		add_pyenv_versions(p, l, d);
		free(d);
	}
	for (size_t i = 0; i < homes.n; i++) {
		if ((d = el_probe_resolve_dir(p, homes.v[i], ".pyenv")) != NULL)
			add_pyenv_versions(p, l, d);
		free(d);
	}

	/* the system Python counts only when /usr/bin/python3 leads to a file */
	if (el_root_realpath(&p->root, "/usr/bin/python3", &d, NULL) == 0) {
		struct stat st;

		if (el_root_lstat(&p->root, d, &st) == 0 && S_ISREG(st.st_mode))
			add_cand(p, l, "/usr", "system", RANK_SYSTEM);
		free(d);
	}
	el_strvec_release(&homes);
}

/*
 * The version pyenv selects: $PYENV_VERSION, else <pyenv root>/version
 * (first word of the first line that is not a comment), else "system".
 */
static char *pyenv_version(el_probe *p, const char *pyenv_root)
{
	const char *env = el_probe_getenv(p, "PYENV_VERSION");
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	char *path, *out = NULL;

	if (env && *env)
		return el_xstrndup(env, strcspn(env, ": \t"));
	path = el_path_join(pyenv_root, "version");
	if (el_probe_read_text(p, path, &b) == 0) {
		const char *pos = b.data, *end = b.data + b.len, *line;
		size_t ll;

		while (!out && el_next_line(&pos, end, &line, &ll)) {
			size_t w = 0;

			el_trim(&line, &ll);
			if (!ll || line[0] == '#')
				continue;
			while (w < ll && line[w] != ' ' && line[w] != '\t' && line[w] != ':')
				w++;
			out = el_xstrndup(line, w);
		}
	}
	free(path);
	el_buf_release(&b);
	return out ? out : el_xstrdup("system");
}

/*
 * The prefix of the python3 a shell would run: the first on $PATH, with
 * a pyenv shim followed to the version pyenv selects. NULL when none.
 */
static char *path_prefix(el_probe *p)
{
	const char *path = el_probe_getenv(p, "PATH"), *s;
	char *out = NULL;

	for (s = path; s && *s && !out;) {
		size_t n = strcspn(s, ":");
		char *dir = el_xstrndup(s, n), *rdir = NULL, *exe = NULL;

		s += n + (s[n] == ':');
		if (dir[0] != '/' || el_root_realpath(&p->root, dir, &rdir, NULL) != 0 ||
		    !exists_in(p, rdir, "python3", NULL)) {
			free(dir);
			free(rdir);
			continue;
		}
		if (strcmp(el_path_base(rdir), "shims") == 0) {
			char *pyenv_root = el_path_dir(rdir), *ver;

			if (!dir_in(p, pyenv_root, "versions")) {
				const char *env = el_probe_getenv(p, "PYENV_ROOT");

				free(pyenv_root);
				pyenv_root = env && env[0] == '/' ? el_xstrdup(env) : NULL;
			}
			ver = pyenv_root ? pyenv_version(p, pyenv_root) : NULL;
			/* "system": pyenv hands over to the next python3 on PATH */
			if (ver && strcmp(ver, "system") != 0 && !strchr(ver, '/')) {
				char *rel = el_xasprintf("versions/%s", ver), *rroot = NULL;

				if (el_root_realpath(&p->root, pyenv_root, &rroot, NULL) == 0)
					out = el_probe_resolve_dir(p, rroot, rel);
				free(rroot);
				free(rel);
			}
			free(ver);
			free(pyenv_root);
		} else {
			char *parent = el_path_dir(rdir);

			if (exists_in(p, parent, "pyvenv.cfg", NULL)) {
				out = parent;
				parent = NULL;
			} else {
				char *rel = el_path_join(rdir, "python3");

				if (el_root_realpath(&p->root, rel, &exe, NULL) == 0) {
					char *bindir = el_path_dir(exe);

					out = el_path_dir(bindir);
					free(bindir);
				}
				free(rel);
			}
			free(parent);
		}
		free(exe);
		free(dir);
		free(rdir);
	}
	return out;
}

static int cand_cmp_choice(const void *a, const void *b)
{
	const py_cand *x = *(py_cand *const *)a, *y = *(py_cand *const *)b;

	if (x->has_ml != y->has_ml)
		return x->has_ml ? -1 : 1;
	if (x->active != y->active)
		return x->active ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->prefix, y->prefix);
}

static int cand_cmp_prefix(const void *a, const void *b)
{
	return strcmp((*(py_cand *const *)a)->prefix, (*(py_cand *const *)b)->prefix);
}

/* The candidate for an explicitly named prefix: one of the searched ones, or a new one. */
static py_cand *named(el_probe *p, cand_list *l, const char *prefix, py_cand **own,
		      const char *want)
{
	py_cand *c = find_cand(l, prefix);

	/* --python /usr/bin/python3.8 may name another minor than /usr/bin/python3 */
	if (c && (!want || strcmp(prefix, "/usr") != 0))
		return c;
	*own = describe(p, prefix, NULL, 0, want);
	return *own;
}

/* --python EXE: the environment the executable belongs to. */
static char *prefix_of_python(el_probe *p, const char *exe, const char **want)
{
	char *dir = el_path_dir(exe), *rdir = NULL, *rexe = NULL, *out = NULL;
	int e = 0, rc;

	*want = NULL;
	rc = el_root_realpath(&p->root, exe, &rexe, &e);
	if (rc != 0) {
		el_probe_warn(p, "'%s': %s, no Python environment recorded", exe,
			      el_root_reason(rc, e));
		free(dir);
		return NULL;
	}
	if (el_root_realpath(&p->root, dir, &rdir, NULL) == 0) {
		char *parent = el_path_dir(rdir);

		/* a venv's bin/python links to its base; pyvenv.cfg says it is a venv */
		if (exists_in(p, parent, "pyvenv.cfg", NULL)) {
			out = parent;
			parent = NULL;
		}
		free(parent);
	}
	if (!out) {
		char *bindir = el_path_dir(rexe);

		out = el_path_dir(bindir);
		free(bindir);
		*want = el_path_base(exe);
	}
	free(dir);
	free(rdir);
	free(rexe);
	return out;
}

/* A prefix named by an option or variable, resolved; warns when it is not there. */
static char *named_prefix(el_probe *p, const char *path, const char *by)
{
	char *out = NULL;
	int e = 0, rc;

	if (path[0] != '/') {
		el_probe_warn(p, "'%s': %s is not an absolute path, ignored", path, by);
		return NULL;
	}
	rc = el_root_realpath(&p->root, path, &out, &e);
	if (rc != 0) {
		el_probe_warn(p, "'%s': named by %s: %s", path, by, el_root_reason(rc, e));
		return NULL;
	}
	if (!dir_in(p, "/", out)) {
		el_probe_warn(p, "'%s': named by %s: not a directory", path, by);
		free(out);
		return NULL;
	}
	return out;
}

static void write_section(el_probe *p, const py_cand *c, const char *by, cand_list *l)
{
	cJSON *sec = el_probe_section(p, EL_SEC_PYTHON), *arr;

	el_jset_str(sec, "status", "present");
	el_jset_str(sec, "kind", c->kind);
	el_jset_str(sec, "prefix", c->prefix);
	el_jset_str(sec, "executable", c->executable);
	el_jset_str(sec, "version", c->version);
	el_jset_str(sec, "version_source", c->version_source);
	el_jset_str(sec, "selected_by", by);
	arr = el_jset_arr(sec, "site_packages");
	for (size_t i = 0; i < c->sites.n; i++)
		el_jpush_str(arr, c->sites.v[i]);
	arr = el_jset_arr(sec, "candidates");
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cand_cmp_prefix);
	for (size_t i = 0; i < l->n; i++) {
		cJSON *o = el_jpush_obj(arr);

		el_jset_str(o, "prefix", l->v[i]->prefix);
		el_jset_str(o, "kind", l->v[i]->kind);
		el_jset_str(o, "version", l->v[i]->version);
	}

	p->py.prefix = el_xstrdup(c->prefix);
	p->py.kind = el_xstrdup(c->kind);
	p->py.version = c->version ? el_xstrdup(c->version) : NULL;
	p->py.executable = c->executable ? el_xstrdup(c->executable) : NULL;
	el_probe_want_deb(p, sec, c->executable, NULL);
	p->py.site_dirs = el_xcalloc(c->sites.n + 1, sizeof(char *));
	for (size_t i = 0; i < c->sites.n; i++)
		p->py.site_dirs[i] = el_xstrdup(c->sites.v[i]);
}

void el_probe_python(el_probe *p)
{
	static const char *const vars[] = { "CONDA_PREFIX", "VIRTUAL_ENV" };
	cand_list l = { 0 };
	py_cand *chosen = NULL, *own = NULL;
	const char *by = NULL;
	bool stop = false;
	char *active;

	search(p, &l);
	active = path_prefix(p);
	if (active && strcmp(active, "/usr") != 0) {
		py_cand *c = find_cand(&l, active);

		if (c)
			c->active = true;
	}
	free(active);

	if (p->opts->python) {
		const char *want = NULL;
		char *prefix = prefix_of_python(p, p->opts->python, &want);

		if (prefix)
			chosen = named(p, &l, prefix, &own, want);
		by = "--python";
		stop = true;
		free(prefix);
	} else if (p->opts->conda_prefix) {
		char *prefix = named_prefix(p, p->opts->conda_prefix, "--conda-prefix");

		if (prefix)
			chosen = named(p, &l, prefix, &own, NULL);
		by = "--conda-prefix";
		stop = true;
		free(prefix);
	}
	for (size_t i = 0; !stop && !chosen && i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *val = el_probe_getenv(p, vars[i]);
		char *prefix;

		if (!val || !*val)
			continue;
		if ((prefix = named_prefix(p, val, vars[i])) != NULL)
			chosen = named(p, &l, prefix, &own, NULL);
		by = vars[i];
		free(prefix);
	}
	if (!stop && !chosen && l.n) {
		py_cand **order = el_xmalloc(l.n * sizeof(*order));

		memcpy(order, l.v, l.n * sizeof(*order));
		qsort(order, l.n, sizeof(*order), cand_cmp_choice);
		chosen = order[0];
		by = "search";
		free(order);
	}

	if (chosen)
		write_section(p, chosen, by, &l);
	else
		el_jset_str(el_probe_section(p, EL_SEC_PYTHON), "status", "absent");

	cand_free(own);
	for (size_t i = 0; i < l.n; i++)
		cand_free(l.v[i]);
	free(l.v);
}
