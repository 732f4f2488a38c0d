/*
 * The CUDA and cuDNN that come with the Python environment rather than with
 * the system, which is what a PyTorch install really runs on:
 *
 *   conda    the env's own packages, in its prefix: cudatoolkit (11.x and
 *            older, no nvcc), or cuda-cudart / cuda-nvcc / ... (12 and
 *            newer), and cudnn; the libraries are in $PREFIX/lib.
 *   wheel    NVIDIA's wheels in site-packages/nvidia, what torch 2.x wheels
 *            depend on: nvidia-cuda-runtime-cu12 puts libcudart.so.12 in
 *            nvidia/cuda_runtime/lib, nvidia-cudnn-cu12 libcudnn.so.9 in
 *            nvidia/cudnn/lib (with its headers); CUDA 13's wheels share
 *            nvidia/cu13/lib.
 *   bundled  the copies a torch 1.x wheel from download.pytorch.org carries
 *            in torch/lib: libcudart-<hash>.so.11.0 (renamed by auditwheel),
 *            libcudnn.so.8 and its parts, libcublas.so.11 (torch 1.12's
 *            cu116 wheel; metaopt/torchopt#46 lists one).
 *
 * The loader reaches all of them through torch's RPATH or RUNPATH, never
 * through ld.so.cache (loads.c records which one it takes); these entries
 * say what each one is. CUDA installs join cuda.toolkits (with their
 * layout), so the rules on a toolkit's driver apply to them too; cuDNN
 * installs are cudnn.installs, apart from the system's cudnn.libraries,
 * whose loader-cache rules do not apply to them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "lock/view.h"
#include "probe.h"
#include "util/version.h"
#include "util/text.h"
#include "util/xalloc.h"

static const char *const cudnn_prefix[] = { "libcudnn", NULL };

static bool is_dir(el_probe *p, const char *abs)
{
	struct stat st;

	return el_root_stat(&p->root, abs, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_library(el_probe *p, const char *dir, const char *const prefixes[])
{
	char **names = NULL;
	bool found = false;

	if (el_root_list(&p->root, dir, &names, NULL) != 0)
		return false;
	for (char **n = names; *n && !found; n++)
		found = el_probe_library_name(*n, prefixes);
	el_strv_free(names);
	return found;
}

/* ---- conda ---- */

/* The conda env's prefix when it is the Python environment probed, else NULL. */
static const char *conda_prefix(el_probe *p)
{
	const char *prefix = p->conda.prefix;

	return prefix && p->py.prefix && strcmp(prefix, p->py.prefix) == 0 ? prefix : NULL;
}

static const el_conda_pkg *conda_package(el_probe *p, const char *name)
{
	for (size_t i = 0; i < p->conda.n; i++)
		if (strcmp(p->conda.pkgs[i].name, name) == 0)
			return &p->conda.pkgs[i];
	return NULL;
}

/* conda-meta/<name>-<version>-<build>.json, conda's name for a package's record, when it is there. */
static char *conda_record(el_probe *p, const char *prefix, const el_conda_pkg *pkg)
{
	char *path;
	struct stat st;

	if (!pkg->build)
		return NULL;
	path = el_xasprintf("%s/conda-meta/%s-%s-%s.json", prefix, pkg->name, pkg->version, pkg->build);
	if (el_root_stat(&p->root, path, &st) == 0 && S_ISREG(st.st_mode))
		return path;
	free(path);
	return NULL;
}

static bool cuda_conda_name(const char *name)
{
	static const char *const prefixes[] = { "cuda-", "libcublas", "libcufft", "libcurand", "libcusolver",
		"libcusparse", "libnvjitlink", NULL };

	if (strcmp(name, "cudatoolkit") == 0 || strcmp(name, "nccl") == 0)
		return true;
	for (const char *const *x = prefixes; *x; x++)
		if (el_starts_with(name, *x))
			return true;
	return false;
}

/* The env's CUDA: its version from the first of cudatoolkit, cuda-cudart, cuda-nvcc. */
static bool conda_toolkit(el_probe *p, el_cuda_cand *tk, const char *home)
{
	static const char *const versioned[] = { "cudatoolkit", "cuda-cudart", "cuda-nvcc", NULL };
	cJSON *components = el_jset_obj(tk->entry, "components");
	bool found = false;

	for (size_t i = 0; i < p->conda.n; i++)
		if (cuda_conda_name(p->conda.pkgs[i].name))
			el_cuda_tk_component(tk, components, p->conda.pkgs[i].name, p->conda.pkgs[i].version);
	for (const char *const *n = versioned; *n && !found; n++) {
		const el_conda_pkg *pkg = conda_package(p, *n);
		char *rec = pkg ? conda_record(p, home, pkg) : NULL;

		if (pkg) {
			el_cuda_tk_version(tk, pkg->version, rec);
			found = true;
		}
		free(rec);
	}
	el_probe_cuda_nvcc(p, home, tk, "conda");
	el_probe_cuda_libs(p, el_jset_arr(tk->entry, "libraries"), home);
	return found;
}

/* ---- NVIDIA's wheels ---- */

/* The site dir a distribution's .dist-info is in (malloc'd). */
static char *dist_site(const el_dist_found *d)
{
	return el_path_dir(d->path);
}

/*
 * nvidia-cuda-runtime-cu12, nvidia-cuda-runtime (CUDA 13): the wheel
 * whose version is the CUDA runtime's; kind "cudnn" for nvidia-cudnn-cuNN.
 */
static bool nvidia_dist(const char *norm, const char *kind)
{
	char *stem = el_xasprintf("nvidia-%s", kind);
	size_t n = strlen(stem);
	bool ok = strncmp(norm, stem, n) == 0 &&
		  (norm[n] == '\0' || (strncmp(norm + n, "-cu", 3) == 0 && norm[n + 3] &&
				       strspn(norm + n + 3, "0123456789") == strlen(norm + n + 3)));

	free(stem);
	return ok;
}

/* The first distribution in site (in pip's name order) that nvidia_dist(kind) accepts, or NULL. */
static const el_dist_found *site_dist(el_probe *p, const char *site, const char *kind)
{
	for (size_t i = 0; i < p->pip.n; i++) {
		const el_dist_found *d = &p->pip.v[i];
		char *norm = el_pep503_name(d->name), *s = dist_site(d);
		bool ok = strcmp(s, site) == 0 && nvidia_dist(norm, kind);

		free(norm);
		free(s);
		if (ok)
			return d;
	}
	return NULL;
}

/* home is <site>/nvidia: its version from nvidia-cuda-runtime*, each nvidia-* wheel a component. */
static bool wheel_toolkit(el_probe *p, el_cuda_cand *tk, const char *home)
{
	char *site = el_path_dir(home), **names = NULL;
	const el_dist_found *rt = site_dist(p, site, "cuda-runtime");
	cJSON *components = el_jset_obj(tk->entry, "components"), *libs = el_jset_arr(tk->entry, "libraries");
	bool nvcc = false;

	for (size_t i = 0; i < p->pip.n; i++) {
		const el_dist_found *d = &p->pip.v[i];
		char *norm = el_pep503_name(d->name), *s = dist_site(d);

		if (strcmp(s, site) == 0 && el_starts_with(norm, "nvidia-") && !nvidia_dist(norm, "cudnn"))
			el_cuda_tk_component(tk, components, norm, d->version);
		free(norm);
		free(s);
	}
	if (rt) {
		el_cuda_tk_version(tk, rt->version, rt->path);
	} else {
		el_probe_warn(p, "'%s': NVIDIA's CUDA libraries without the nvidia-cuda-runtime distribution that says their version", home);
	}
	/* nvidia/<part>/lib, one folder per wheel (nvidia/cu13/lib for all of CUDA 13's) */
	if (el_root_list(&p->root, home, &names, NULL) == 0)
		for (char **n = names; *n; n++) {
			char *part = el_path_join(home, *n);

			if (strcmp(*n, "cudnn") != 0 && is_dir(p, part)) {
				el_probe_cuda_libs(p, libs, part);
				/* nvidia-cuda-nvcc-cu12: nvidia/cuda_nvcc/bin/nvcc; CUDA 13: nvidia/cu13/bin/nvcc */
				if (!nvcc)
					nvcc = el_probe_cuda_nvcc(p, part, tk, "wheel");
			}
			free(part);
		}
	el_strv_free(names);
	free(site);
	return rt != NULL;
}

/* ---- torch's own copies ---- */

static const el_fw_found *torch_entry(el_probe *p)
{
	for (const el_fw_found *f = p->fw; f && f->key; f++)
		if (strcmp(f->key, "torch") == 0)
			return f->present && f->path ? f : NULL;
	return NULL;
}

/* torch/lib of the torch Python imports (malloc'd), or NULL; frameworks.torch.path is its version.py. */
static char *torch_lib(el_probe *p)
{
	const el_fw_found *t = torch_entry(p);
	char *dir = t ? el_path_dir(t->path) : NULL, *lib = dir ? el_path_join(dir, "lib") : NULL;

	free(dir);
	if (lib && is_dir(p, lib))
		return lib;
	free(lib);
	return NULL;
}

/* The CUDA runtime torch/lib carries is the one torch was built for: torch.version.cuda. */
static bool bundled_toolkit(el_probe *p, el_cuda_cand *tk, const char *home)
{
	const el_fw_found *t = torch_entry(p);
	const char *cuda = t ? t->cuda : NULL;
	cJSON *libs = el_jset_arr(tk->entry, "libraries");

	el_probe_libraries(p, libs, home, el_cuda_lib_prefixes, NULL);
	if (!cuda)
		return false;
	el_cuda_tk_version(tk, cuda, t->path);
	return true;
}

/* ---- the probes' entry points ---- */

/* Each site dir's nvidia/ folder that holds CUDA libraries (any but cuDNN's). */
static void each_wheel_home(el_probe *p, void (*fn)(el_probe *p, const char *home, void *data), void *data)
{
	for (char **s = p->py.site_dirs; s && *s; s++) {
		char *home = el_path_join(*s, "nvidia");

		if (is_dir(p, home))
			fn(p, home, data);
		free(home);
	}
}

static void wheel_candidate(el_probe *p, const char *home, void *data)
{
	char **names = NULL;
	bool any = false;

	if (el_root_list(&p->root, home, &names, NULL) == 0)
		for (char **n = names; *n && !any; n++) {
			char *lib = el_xasprintf("%s/%s/lib", home, *n);

			any = strcmp(*n, "cudnn") != 0 && has_library(p, lib, el_cuda_lib_prefixes);
			free(lib);
		}
	el_strv_free(names);
	if (any)
		el_cuda_cand_add(data, home, "wheel");
}

void el_probe_env_toolkits(el_probe *p, el_cuda_cands *toolkits)
{
	const char *prefix = conda_prefix(p);
	char *lib;

	if (prefix && (conda_package(p, "cudatoolkit") || conda_package(p, "cuda-cudart") ||
		       conda_package(p, "cuda-nvcc")))
		el_cuda_cand_add(toolkits, prefix, "conda");
	each_wheel_home(p, wheel_candidate, toolkits);
	if ((lib = torch_lib(p)) != NULL && has_library(p, lib, (const char *const[]){ "libcudart", NULL }))
		el_cuda_cand_add(toolkits, lib, "bundled");
	free(lib);
}

bool el_probe_env_toolkit(el_probe *p, el_cuda_cand *tk, const char *home, const char *layout)
{
	if (strcmp(layout, "conda") == 0)
		return conda_toolkit(p, tk, home);
	if (strcmp(layout, "wheel") == 0)
		return wheel_toolkit(p, tk, home);
	return bundled_toolkit(p, tk, home);
}

/* Neither header nor package: NVIDIA's own file name, libcudnn.so.8.9.2, says it (torch's copies are libcudnn.so.8). */
static void version_from_name(cJSON *in, const el_libs_found *libs)
{
	for (size_t i = 0; i < libs->n; i++) {
		const char *name = libs->v[i].name, *rest;

		if (!el_starts_with(name, "libcudnn.so."))
			continue;
		rest = name + strlen("libcudnn.so.");
		if (strspn(rest, "0123456789.") == strlen(rest) && strchr(rest, '.') && strchr(strchr(rest, '.') + 1, '.') &&
		    !strchr(strchr(strchr(rest, '.') + 1, '.') + 1, '.') && rest[strlen(rest) - 1] != '.') {
			el_jset_str(in, "version", rest);
			el_jset_str(in, "version_source", libs->v[i].path);
			return;
		}
	}
}

/*
 * One cuDNN install: its libraries in dir, the version from the header
 * beside it (include/cudnn_version.h, which conda's and NVIDIA's wheel
 * ship), else from the package that installed it (cut to major.minor.patch),
 * else from the main library's file name.
 */
/* The installs recorded, and how many. */
typedef struct {
	cJSON *arr;
	size_t n;
} cudnn_installs;

static void add_cudnn_install(el_probe *p, cudnn_installs *installs, const char *dir, const char *layout,
			      const char *header, const char *pkg_version, const char *pkg_source)
{
	cJSON *in, *libs;
	char *v = header ? el_probe_cudnn_header(p, header) : NULL;
	el_libs_found found = { 0 };

	if (!has_library(p, dir, cudnn_prefix)) {
		free(v);
		return;
	}
	in = el_jpush_obj(installs->arr);
	installs->n++;
	el_jset_str(in, "home", dir);
	el_jset_str(in, "layout", layout);
	if (v) {
		el_jset_str(in, "version", v);
		el_jset_str(in, "version_source", header);
	} else if (pkg_version) {
		char *three = el_version_prefix(pkg_version, 3);

		el_jset_str(in, "version", three);
		if (pkg_source)
			el_jset_str(in, "version_source", pkg_source);
		free(three);
	}
	libs = el_jset_arr(in, "libraries");
	el_probe_libraries(p, libs, dir, cudnn_prefix, &found);
	if (!v && !pkg_version)
		version_from_name(in, &found);
	el_libs_found_release(&found);
	free(v);
}

static void wheel_cudnn(el_probe *p, const char *home, void *data)
{
	char *site = el_path_dir(home), *dir = el_path_join(home, "cudnn/lib");
	char *header = el_path_join(home, "cudnn/include/cudnn_version.h");
	const el_dist_found *d = site_dist(p, site, "cudnn");

	add_cudnn_install(p, data, dir, "wheel", header, d ? d->version : NULL, d ? d->path : NULL);
	free(header);
	free(dir);
	free(site);
}

void el_probe_env_cudnn(el_probe *p, cJSON *cudnn)
{
	cudnn_installs installs = { el_jset_arr(cudnn, "installs"), 0 };
	const char *prefix = conda_prefix(p);
	const el_conda_pkg *pkg = prefix ? conda_package(p, "cudnn") : NULL;
	char *lib;

	if (pkg) {
		char *dir = el_path_join(prefix, "lib"), *header = el_path_join(prefix, "include/cudnn_version.h");
		char *rec = conda_record(p, prefix, pkg);

		add_cudnn_install(p, &installs, dir, "conda", header, pkg->version, rec);
		free(rec);
		free(header);
		free(dir);
	}
	each_wheel_home(p, wheel_cudnn, &installs);
	if ((lib = torch_lib(p)) != NULL)
		add_cudnn_install(p, &installs, lib, "bundled", NULL, NULL, NULL);
	free(lib);
	if (!installs.n)
		cJSON_DeleteItemFromObject(cudnn, "installs");
}
