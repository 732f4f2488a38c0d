/*
 * cuDNN: the version from cudnn_version.h (8.x, 9.x) or cudnn.h (<= 7.x),
 * read from the CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL macros only
 * (CUDNN_VERSION changed meaning in 9.0: MAJOR*10000 instead of *1000);
 * searched in each toolkit's include/ and in /usr/include[/<triplet>];
 * and the libcudnn* libraries with their soname links and loader-cache
 * state, because a libcudnn.so.8.2.1 without its libcudnn.so.8 link is
 * the classic "cannot open shared object file".
 */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "lock/view.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

static const char *const cudnn_libs[] = { "libcudnn", NULL };
static const char *const triplets[] = {
	"x86_64-linux-gnu", "aarch64-linux-gnu", "powerpc64le-linux-gnu", NULL
};

/* One header's version (el_probe_cudnn_header), recorded in headers; true when it has one. */
static bool header_version(el_probe *p, const char *path, cJSON *headers, char **version)
{
	cJSON *h;

	if ((*version = el_probe_cudnn_header(p, path)) == NULL)
		return false;
	h = el_jpush_obj(headers);
	el_jset_str(h, "path", path);
	el_jset_str(h, "version", *version);
	return true;
}

static void add_dir(el_strvec *dirs, const char *dir)
{
	if (!el_strvec_has(dirs, dir))
		el_strvec_push(dirs, dir);
}

/*
 * soname is libcudnn.so.<the major of version>: libcudnn.so.8 for 8.2.1.
 * The soname comes from the file: it may be shorter than the prefix, or
 * have a longer major (libcudnn.so.81), and neither is a match.
 */
static bool soname_has_major(const char *soname, const char *version)
{
	static const char prefix[] = "libcudnn.so.";
	size_t major = strcspn(version, ".");

	if (!el_starts_with(soname, prefix))
		return false;
	soname += sizeof(prefix) - 1;
	return major && strncmp(soname, version, major) == 0 && (soname[major] == '\0' || soname[major] == '.');
}

void el_probe_cudnn(el_probe *p)
{
	cJSON *cudnn = el_probe_section(p, EL_SEC_CUDNN), *headers = el_jset_arr(cudnn, "headers");
	cJSON *libs = el_jset_arr(cudnn, "libraries"), *h;
	const char *def = p->cuda.default_home;
	el_strvec inc = EL_STRVEC_INIT, libdirs = EL_STRVEC_INIT;
	char *chosen = NULL;

	for (size_t t = 0; t < p->cuda.n; t++) {
		const char *home = p->cuda.v[t].home;
		char *d;

		if (el_env_layout(p->cuda.v[t].layout))
			continue; /* the Python environment's own: el_probe_env_cudnn */
		d = el_path_join(home, "include");

		add_dir(&inc, d);
		free(d);
		for (const char *const *s = (const char *const[]){ "lib64", "lib", NULL }; *s; s++) {
			char *l = el_path_join(home, *s), *real = NULL;

			if (el_root_realpath(&p->root, l, &real, NULL) == 0)
				add_dir(&libdirs, real);
			free(real);
			free(l);
		}
	}
	add_dir(&inc, "/usr/include");
	for (const char *const *t = triplets; *t; t++) {
		char *d = el_path_join("/usr/include", *t), *l = el_path_join("/usr/lib", *t), *real = NULL;

		add_dir(&inc, d);
		if (el_root_realpath(&p->root, l, &real, NULL) == 0)
			add_dir(&libdirs, real);
		free(real);
		free(d);
		free(l);
	}
	{
		char *real = NULL;

		if (el_root_realpath(&p->root, "/usr/lib64", &real, NULL) == 0)
			add_dir(&libdirs, real);
		free(real);
	}

	for (size_t i = 0; i < inc.n; i++) {
		const char *dir = inc.v[i];
		char *vh = el_path_join(dir, "cudnn_version.h"), *ch = el_path_join(dir, "cudnn.h");
		char *version = NULL;

		if (!header_version(p, vh, headers, &version))
			header_version(p, ch, headers, &version);
		/* the default toolkit's copy wins; else the first found */
		if (version && (!chosen || (def && el_starts_with(dir, def) && dir[strlen(def)] == '/'))) {
			free(chosen);
			chosen = version;
			el_jset_str(cudnn, "header", el_jget_str(cJSON_GetArrayItem(headers, cJSON_GetArraySize(headers) - 1), "path"));
		} else {
			free(version);
		}
		free(vh);
		free(ch);
	}
	for (size_t i = 0; i < libdirs.n; i++)
		el_probe_libraries(p, libs, libdirs.v[i], cudnn_libs);

	if (chosen) {
		el_jset_str(cudnn, "status", "present");
		el_jset_str(cudnn, "version", chosen);
		cJSON_ArrayForEach(h, headers) {
			const char *v = el_jget_str(h, "version");

			if (strcmp(v, chosen) != 0)
				el_probe_warn(p, "'%s': cuDNN %s, but '%s' says %s; which one a program gets depends on its include and library paths",
					      el_jget_str(h, "path"), v, el_jget_str(cudnn, "header"), chosen);
		}
	} else {
		el_jset_str(cudnn, "status", cJSON_GetArraySize(libs) ? "unknown" : "absent");
	}
	{
		/* the main library's major must match the header's */
		cJSON *lib;

		cJSON_ArrayForEach(lib, libs) {
			const char *name = el_jget_str(lib, "name"), *soname = el_jget_str(lib, "soname");

			if (chosen && soname && el_starts_with(name, "libcudnn.so.") && !soname_has_major(soname, chosen))
				el_probe_warn(p, "'%s': soname %s does not match the cuDNN %s header",
					      el_jget_str(lib, "path"), soname, chosen);
		}
	}
	free(chosen);
	el_strvec_release(&inc);
	el_strvec_release(&libdirs);
	el_probe_env_cudnn(p, cudnn);
}
