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

/* The headers recorded, as written. */
typedef struct {
	cJSON *arr;
	el_strvec paths, versions;
} headers_found;

/* One header's version (el_probe_cudnn_header), recorded in headers; true when it has one. */
static bool header_version(el_probe *p, const char *path, headers_found *headers, char **version)
{
	cJSON *h;

	if ((*version = el_probe_cudnn_header(p, path)) == NULL)
		return false;
	h = el_jpush_obj(headers->arr);
	el_jset_str(h, "path", path);
	el_jset_str(h, "version", *version);
	el_strvec_push(&headers->paths, path);
	el_strvec_push(&headers->versions, *version);
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
	cJSON *cudnn = el_probe_section(p, EL_SEC_CUDNN);
	headers_found headers = { el_jset_arr(cudnn, "headers"), EL_STRVEC_INIT, EL_STRVEC_INIT };
	cJSON *libs = el_jset_arr(cudnn, "libraries");
	const char *def = p->cuda.default_home;
	el_strvec inc = EL_STRVEC_INIT, libdirs = EL_STRVEC_INIT;
	el_libs_found found = { 0 };
	char *chosen = NULL;
	const char *chosen_header = NULL; /* borrowed from headers.paths */

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

		if (!header_version(p, vh, &headers, &version))
			header_version(p, ch, &headers, &version);
		/* the default toolkit's copy wins; else the first found */
		if (version && (!chosen || (def && el_starts_with(dir, def) && dir[strlen(def)] == '/'))) {
			free(chosen);
			chosen = version;
			/* the header just recorded */
			chosen_header = headers.paths.v[headers.paths.n - 1];
			el_jset_str(cudnn, "header", chosen_header);
		} else {
			free(version);
		}
		free(vh);
		free(ch);
	}
	for (size_t i = 0; i < libdirs.n; i++)
		el_probe_libraries(p, libs, libdirs.v[i], cudnn_libs, &found);

	if (chosen) {
		el_jset_str(cudnn, "status", "present");
		el_jset_str(cudnn, "version", chosen);
		for (size_t i = 0; i < headers.versions.n; i++) {
			const char *v = headers.versions.v[i];

			if (strcmp(v, chosen) != 0)
				el_probe_warn(p, "'%s': cuDNN %s, but '%s' says %s; which one a program gets depends on its include and library paths",
					      headers.paths.v[i], v, chosen_header, chosen);
		}
	} else {
		el_jset_str(cudnn, "status", found.n ? "unknown" : "absent");
	}
	/* the main library's major must match the header's */
	for (size_t i = 0; i < found.n; i++) {
		const el_lib_found *lib = &found.v[i];

		if (chosen && lib->soname && el_starts_with(lib->name, "libcudnn.so.") && !soname_has_major(lib->soname, chosen))
			el_probe_warn(p, "'%s': soname %s does not match the cuDNN %s header", lib->path, lib->soname, chosen);
	}
	el_libs_found_release(&found);
	el_strvec_release(&headers.paths);
	el_strvec_release(&headers.versions);
	free(chosen);
	el_strvec_release(&inc);
	el_strvec_release(&libdirs);
	el_probe_env_cudnn(p, cudnn);
}
