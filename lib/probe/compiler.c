/*
 * Host compilers: each gcc under /usr/lib/gcc/<triplet>/<version>/ (Ubuntu
 * 16.04 names the folder 5.4.0 with a "5" link; newer releases name it
 * just "12", so the full version then comes from dpkg's status file or
 * from cc1's own version string),
 * its /usr/bin/gcc-N driver, and the default gcc (/usr/bin/gcc's link;
 * on the live machine `gcc -dumpfullversion -dumpversion`).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/xalloc.h"

#define EL_GCC_TIMEOUT_MS 10000

/* The upstream part of a Debian version: "4:12.2.0-14+deb12u1" -> "12.2.0". */
static char *upstream_version(const char *v)
{
	const char *colon = strchr(v, ':');

	if (colon)
		v = colon + 1;
	return el_xstrndup(v, strcspn(v, "-+~"));
}

static bool is_version_name(const char *n)
{
	return n[0] >= '0' && n[0] <= '9' && strspn(n, "0123456789.") == strlen(n);
}

static bool exists(el_probe *p, const char *path)
{
	struct stat st;
	return el_root_stat(&p->root, path, &st) == 0;
}

/* Whether the first gcc on PATH (the one a shell, and nvcc, run) is path, links resolved. */
static bool shell_gcc_is(el_probe *p, const char *path)
{
	const char *env = getenv("PATH");
	char *want = NULL;
	bool same = false;

	if (!env || el_root_realpath(&p->root, path, &want, NULL) != 0)
		return false;
	while (*env) {
		size_t n = strcspn(env, ":");
		char *dir = n ? el_xstrndup(env, n) : el_xstrdup(".");
		char *cand = el_path_join(dir, "gcc"), *real = NULL;

		free(dir);
		if (access(cand, X_OK) == 0) {
			same = el_root_realpath(&p->root, cand, &real, NULL) == 0 && !strcmp(real, want);
			free(real);
			free(cand);
			break;
		}
		free(cand);
		env += n;
		if (*env == ':')
			env++;
	}
	free(want);
	return same;
}

/* Which gcc-N (or <triplet>-gcc-N) does /usr/bin/gcc lead to? "12" or NULL. */
static char *default_major(el_probe *p)
{
	char *link = el_xstrdup("/usr/bin/gcc"), *major = NULL;

	for (int hops = 0; hops < 8 && !major; hops++) {
		char *target = NULL, *dash;
		const char *base;

		if (el_root_readlink(&p->root, link, &target) != 0)
			break;
		base = el_path_base(target);
		dash = strrchr(base, '-');
		if (dash && is_version_name(dash + 1) && strstr(base, "gcc"))
			major = el_xstrdup(dash + 1);
		{
			char *dir = el_path_dir(link), *next = target[0] == '/' ? el_xstrdup(target)
									     : el_path_join(dir, target);
			free(dir);
			free(link);
			link = next;
		}
		free(target);
	}
	free(link);
	return major;
}

void el_probe_compilers(el_probe *p)
{
	cJSON *comp = el_probe_section(p, EL_SEC_COMPILERS), *list = el_jset_arr(comp, "gcc"), *g;
	char **triplets = NULL, *dmajor = default_major(p), *dversion = NULL;
	bool any = false;

	if (el_root_list(&p->root, "/usr/lib/gcc", &triplets, NULL) == 0) {
		for (char **t = triplets; *t; t++) {
			char *tdir = el_path_join("/usr/lib/gcc", *t), **vers = NULL;

			if (el_root_list(&p->root, tdir, &vers, NULL) != 0) {
				free(tdir);
				continue;
			}
			for (char **v = vers; *v; v++) {
				char *vdir = el_path_join(tdir, *v), *major, *driver, *gxx, *full = NULL;
				char *cc1 = el_path_join(vdir, "cc1");
				const char *version = *v, *source = vdir;
				struct stat st;

				/* "5 -> 5.4.0": the short name is an alias, not a second compiler */
				if (!is_version_name(*v) || el_root_lstat(&p->root, vdir, &st) != 0 ||
				    !S_ISDIR(st.st_mode)) {
					free(cc1);
					free(vdir);
					continue;
				}
				major = el_xstrndup(*v, strcspn(*v, "."));
				g = el_jpush_obj(list);
				any = true;
				el_jset_str(g, "dir", vdir);
				el_jset_str(g, "triplet", *t);
				el_jset_str(g, "major", major);
				if (!strchr(*v, '.')) {
					char *pkg = el_xasprintf("gcc-%s", major), *prefix = el_xasprintf("%s.", major);
					const el_dpkg_pkg *deb = el_dpkg_package(p, pkg);

					if (deb) {
						version = full = upstream_version(deb->version);
						source = "/var/lib/dpkg/status";
					} else if ((full = el_probe_file_version(p, cc1, prefix, 1)) != NULL) {
						version = full;
						source = cc1;
					}
					free(prefix);
					free(pkg);
				}
				el_jset_str(g, "version", version);
				el_jset_str(g, "version_source", source);
				/* the default is the first gcc of its major */
				if (dmajor && !dversion && strcmp(major, dmajor) == 0)
					dversion = el_xstrdup(version);
				free(full);
				driver = el_xasprintf("/usr/bin/gcc-%s", major);
				gxx = el_xasprintf("/usr/bin/g++-%s", major);
				{
					/* its package: its driver's, else that of cc1 (Debian's cpp-N ships cc1) */
					bool has_driver = exists(p, driver);

					if (has_driver)
						el_jset_str(g, "driver", driver);
					el_probe_want_deb(p, g, has_driver ? driver : NULL, cc1);
				}
				el_jset_bool(g, "gxx", exists(p, gxx));
				free(cc1);
				free(driver);
				free(gxx);
				free(major);
				free(vdir);
			}
			el_strv_free(vers);
			free(tdir);
		}
	}
	el_strv_free(triplets);

	if (dmajor || exists(p, "/usr/bin/gcc")) {
		cJSON *def = el_jset_obj(comp, "default");

		el_jset_str(def, "name", "gcc");
		el_jset_str(def, "path", "/usr/bin/gcc");
		if (!exists(p, "/usr/bin/gcc"))
			el_probe_warn(p, "'/usr/bin/gcc': dangling link (gcc-%s is not installed)", dmajor);
		if (dversion) {
			el_jset_str(def, "version", dversion);
			el_jset_str(def, "version_source", "/usr/bin/gcc");
		}
		/* what dpkg says of /usr/bin/gcc answers for the gcc a shell runs, when that is it */
		if (p->root.live && !(dversion && shell_gcc_is(p, "/usr/bin/gcc"))) {
			const char *argv[] = { "gcc", "-dumpfullversion", "-dumpversion", NULL };
			el_buf out = EL_BUF_INIT(EL_LIMIT_SMALL);

			if (el_probe_run(p, argv, EL_GCC_TIMEOUT_MS, &out) == 0 && out.len) {
				el_jset_strn(def, "version", out.data, strspn(out.data, "0123456789."));
				el_jset_str(def, "version_source", "gcc -dumpfullversion");
			}
			el_buf_release(&out);
		}
		any = true;
	}
	free(dversion);
	free(dmajor);
	el_jset_str(comp, "status", any ? "present" : "absent");
}
