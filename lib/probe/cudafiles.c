/*
 * What the CUDA probes share (cuda.c for the system's toolkits, envcuda.c
 * for the Python environment's, cudnn.c): the CUDA libraries a toolkit
 * folder holds, its nvcc and the version nvcc says, and the version a
 * cuDNN header's macros say.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_NVCC_TIMEOUT_MS 10000

const char *const el_cuda_lib_prefixes[] = {
	"libcudart", "libcublas", "libcublasLt", "libcufft", "libcurand", "libcusolver",
	"libcusparse", "libnvrtc", "libnvJitLink", "libnvToolsExt", "libnccl", NULL
};

/* *slot = a copy of v (NULL: left as it is), as el_jset_str records it */
static void keep(char **slot, const char *v)
{
	if (!v)
		return;
	free(*slot);
	*slot = el_xstrdup(v);
}

el_cuda_cand *el_cuda_cand_add(el_cuda_cands *toolkits, const char *home, const char *layout)
{
	el_cuda_cand *tk;

	EL_GROW(toolkits->v, toolkits->n + 1, toolkits->cap);
	tk = &toolkits->v[toolkits->n++];
	memset(tk, 0, sizeof(*tk));
	tk->home = el_xstrdup(home);
	tk->layout = layout ? el_xstrdup(layout) : NULL;
	return tk;
}

void el_cuda_cands_release(el_cuda_cands *toolkits)
{
	for (size_t i = 0; i < toolkits->n; i++) {
		el_cuda_cand *tk = &toolkits->v[i];

		free(tk->home);
		free(tk->layout);
		el_strvec_release(&tk->aliases);
		free(tk->version);
		free(tk->version_source);
		free(tk->cuda_nvcc);
		free(tk->nvidia_cuda_nvcc);
		free(tk->nvcc_version);
		free(tk->nvcc_version_source);
	}
	free(toolkits->v);
}

void el_cuda_tk_version(el_cuda_cand *tk, const char *version, const char *source)
{
	el_jset_str(tk->entry, "version", version);
	keep(&tk->version, version);
	el_jset_str(tk->entry, "version_source", source);
	keep(&tk->version_source, source);
}

void el_cuda_tk_component(el_cuda_cand *tk, cJSON *components, const char *name, const char *v)
{
	el_jset_str(components, name, v);
	if (strcmp(name, "cuda_nvcc") == 0)
		keep(&tk->cuda_nvcc, v);
	else if (strcmp(name, "nvidia_cuda_nvcc") == 0)
		keep(&tk->nvidia_cuda_nvcc, v);
}

/* The version nvcc says, into tk's "nvcc" and the copy kept (n bytes of v; source NULL: left as it is). */
static void nvcc_says(el_cuda_cand *tk, cJSON *nvcc, const char *v, size_t n, const char *source)
{
	char *s = el_xstrndup(v, n);

	el_jset_str(nvcc, "version", s);
	keep(&tk->nvcc_version, s);
	el_jset_str(nvcc, "version_source", source);
	keep(&tk->nvcc_version_source, source);
	free(s);
}

/* "10.2.89" -> "10.2" (malloc'd) */
char *el_cuda_release_of(const char *v)
{
	const char *dot = strchr(v, '.');
	size_t n = dot ? (size_t)(dot - v) + 1 + strspn(dot + 1, "0123456789") : strlen(v);

	return el_xstrndup(v, n);
}

/*
 * nvcc carries the text --version prints, "Cuda compilation tools,
 * release 11.8, V11.8.89", as one string in its binary: the version read
 * from the file, for a root where nothing runs.
 */
static char *nvcc_mark(const char *s, void *data)
{
	static const char mark[] = "Cuda compilation tools, release ";

	(void)data;
	return strncmp(s, mark, sizeof(mark) - 1) == 0 && strstr(s, ", V") ? el_xstrdup(s + sizeof(mark) - 1) : NULL;
}

static bool nvcc_file_version(el_probe *p, const char *binary, el_cuda_cand *tk, cJSON *nvcc)
{
	char *rest = el_probe_file_scan(p, binary, nvcc_mark, NULL); /* "11.8, V11.8.89" */
	const char *v = rest ? strstr(rest, ", V") : NULL;
	bool ok = v && strspn(v + 3, "0123456789.") > 0;

	if (ok) {
		el_jset_strn(nvcc, "release", rest, strspn(rest, "0123456789."));
		nvcc_says(tk, nvcc, v + 3, strspn(v + 3, "0123456789."), binary);
	}
	free(rest);
	return ok;
}

/*
 * The version nvcc --version prints is its package's: version.json's
 * cuda_nvcc (11.1+), or the nvidia_cuda_nvcc dist-info (CUDA 13's
 * layout). When the toolkit's files name it, nothing is run.
 */
static bool nvcc_component_version(el_cuda_cand *tk, cJSON *nvcc)
{
	const char *v = tk->cuda_nvcc ? tk->cuda_nvcc : tk->nvidia_cuda_nvcc;
	char *release;

	if (!v || strspn(v, "0123456789.") == 0 || !strchr(v, '.'))
		return false;
	release = el_cuda_release_of(v);
	el_jset_str(nvcc, "release", release);
	nvcc_says(tk, nvcc, v, strspn(v, "0123456789."), tk->version_source);
	free(release);
	return true;
}

/* "Cuda compilation tools, release 10.2, V10.2.89" */
bool el_probe_cuda_nvcc(el_probe *p, const char *home, el_cuda_cand *tk, const char *layout)
{
	bool debian = layout && strcmp(layout, "debian") == 0;
	char *path = debian ? el_xstrdup(DEB_TK_WRAPPER) : el_path_join(home, "bin/nvcc");
	const char *binary = debian ? DEB_TK_NVCC : path;
	struct stat st;
	cJSON *nvcc;

	if (debian && (el_root_stat(&p->root, path, &st) != 0 || !S_ISREG(st.st_mode))) {
		free(path);
		path = el_xstrdup(DEB_TK_NVCC);
		binary = path;
	}
	if (el_root_stat(&p->root, path, &st) != 0 || !S_ISREG(st.st_mode)) {
		free(path);
		return false;
	}
	nvcc = el_jset_obj(tk->entry, "nvcc");
	free(tk->nvcc_version);
	free(tk->nvcc_version_source);
	tk->nvcc_version = tk->nvcc_version_source = NULL;
	el_jset_str(nvcc, "path", path);
	if (binary != path)
		el_jset_str(nvcc, "binary", binary);
	if (!debian && nvcc_component_version(tk, nvcc)) {
		free(path);
		return true;
	}
	if (!p->root.live || debian)
		nvcc_file_version(p, binary, tk, nvcc);
	if (p->root.live) {
		const char *argv[] = { path, "--version", NULL };
		el_buf out = EL_BUF_INIT(EL_LIMIT_SMALL);

		if (el_probe_run(p, argv, EL_NVCC_TIMEOUT_MS, &out) == 0) {
			const char *r = strstr(out.data, "release "), *v = strstr(out.data, ", V");

			if (r)
				el_jset_strn(nvcc, "release", r + 8, strspn(r + 8, "0123456789."));
			if (v)
				nvcc_says(tk, nvcc, v + 3, strspn(v + 3, "0123456789."), NULL);
		} else {
			el_probe_warn(p, "'%s': --version did not answer", path);
		}
		el_buf_release(&out);
	}
	free(path);
	return true;
}

void el_probe_cuda_libs(el_probe *p, cJSON *libs, const char *home)
{
	static const char *const subdirs[] = { "lib64", "lib", "targets/x86_64-linux/lib",
		"targets/sbsa-linux/lib", "targets/aarch64-linux/lib", "targets/ppc64le-linux/lib", NULL };
	char *seen[8] = { 0 };
	int nseen = 0;

	for (const char *const *s = subdirs; *s; s++) {
		char *dir = el_path_join(home, *s), *real = NULL;
		bool dup = false;

		if (el_root_realpath(&p->root, dir, &real, NULL) == 0) {
			for (int i = 0; i < nseen; i++)
				dup |= strcmp(seen[i], real) == 0;
			if (!dup && nseen < 8) {
				seen[nseen++] = real;
				real = NULL;
				el_probe_libraries(p, libs, dir, el_cuda_lib_prefixes, NULL);
			}
		}
		free(real);
		free(dir);
	}
	for (int i = 0; i < nseen; i++)
		free(seen[i]);
}

char *el_probe_cudnn_header(el_probe *p, const char *path)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	long major, minor, patch;
	char *v = NULL;

	if (el_probe_read_text(p, path, &b) != 0)
		goto done;
	if (el_c_define_int(b.data, b.len, "CUDNN_MAJOR", &major) &&
	    el_c_define_int(b.data, b.len, "CUDNN_MINOR", &minor) &&
	    el_c_define_int(b.data, b.len, "CUDNN_PATCHLEVEL", &patch))
		v = el_xasprintf("%ld.%ld.%ld", major, minor, patch);
	else if (!el_ends_with(path, "/cudnn.h"))
		/* cudnn.h of 8.x+ only includes cudnn_version.h: no macros is normal there */
		el_probe_warn(p, "'%s': no CUDNN_MAJOR/CUDNN_MINOR/CUDNN_PATCHLEVEL macros", path);
done:
	el_buf_release(&b);
	return v;
}
