/*
 * CUDA toolkits: every /usr/local/cuda* (and $CUDA_HOME / $CUDA_PATH, and
 * the one the caller names),
 * which one /usr/local/cuda points to, each toolkit's version from
 * version.json (11.1+), version.txt (<= 11.0, whose "CUDA Patch Version"
 * lines are patches, not the version), the dist-info folders of a toolkit
 * assembled from NVIDIA's wheels, or cuda.h's CUDA_VERSION; nvcc; and the
 * runtime libraries with their sonames and links. Debian's nvidia-cuda-toolkit
 * package is a toolkit too, laid out its own way: the real nvcc in
 * /usr/lib/nvidia-cuda-toolkit/bin (with /usr/bin/nvcc a wrapper script
 * into it), the libraries in the multiarch folder, headers in /usr/include,
 * and /usr/lib/cuda a folder of links for CUDA_HOME. Which toolkit is the
 * default is decided by the rules a user meets, each recorded in lookups.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "lock/view.h"
#include "probe.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_LIMIT_CUDA_H (16u << 20) /* CUDA 13's cuda.h is over 1 MiB */


/* glibc's execvp without PATH searches confstr(_CS_PATH): "/bin:/usr/bin" */
#define EL_DEFAULT_PATH "/bin:/usr/bin"

static const char *const multiarch_dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/usr/lib/powerpc64le-linux-gnu", NULL };

/* The toolkit's own version.json, parsed: its "cuda" stamp and each component's version. */
static bool version_json(el_probe *p, const char *home, el_cuda_cand *tk)
{
	char *path = el_path_join(home, "version.json");
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	cJSON *doc = NULL, *item;
	bool ok = false;

	if (el_probe_read_text(p, path, &b) != 0)
		goto done;
	doc = cJSON_ParseWithLength(b.data, b.len);
	if (!cJSON_IsObject(doc)) {
		el_probe_warn(p, "'%s': not valid JSON, ignored", path);
		goto done;
	}
	item = el_jget(doc, "cuda");
	if (!el_jget_str(item, "version")) {
		el_probe_warn(p, "'%s': no \"cuda\".\"version\"", path);
		goto done;
	}
	/*
	 * "cuda"."version" is the SDK's release stamp ("11.8.20220929" in 11.8);
	 * the number users know, and nvcc --version prints, is nvcc's / cudart's.
	 */
	el_jset_str(tk->entry, "sdk_version", el_jget_str(item, "version"));
	{
		cJSON *components = el_jset_obj(tk->entry, "components");
		const char *best = NULL;

		cJSON_ArrayForEach(item, doc) {
			const char *v = el_jget_str(item, "version");

			if (!v || strcmp(item->string, "cuda") == 0)
				continue;
			el_cuda_tk_component(tk, components, item->string, v);
			if (strcmp(item->string, "cuda_nvcc") == 0 ||
			    (!best && strcmp(item->string, "cuda_cudart") == 0))
				best = v;
		}
		el_cuda_tk_version(tk, best ? best : el_jget_str(el_jget(doc, "cuda"), "version"), path);
	}
	ok = true;
done:
	cJSON_Delete(doc);
	el_buf_release(&b);
	free(path);
	return ok;
}

static bool version_txt(el_probe *p, const char *home, el_cuda_cand *tk)
{
	char *path = el_path_join(home, "version.txt");
	el_buf b = EL_BUF_INIT(EL_LIMIT_SMALL);
	const char *pos, *line;
	size_t len;
	cJSON *patches = NULL;
	bool ok = false;

	if (el_probe_read_text(p, path, &b) != 0)
		goto done;
	pos = b.data;
	while (el_next_line(&pos, b.data + b.len, &line, &len)) {
		static const char ver[] = "CUDA Version ", patch[] = "CUDA Patch Version ";
		const char *v;
		size_t vl;

		if (len > sizeof(patch) - 1 && strncmp(line, patch, sizeof(patch) - 1) == 0) {
			if (!patches)
				patches = el_jset_arr(tk->entry, "patches");
			v = line + sizeof(patch) - 1;
			vl = len - (sizeof(patch) - 1);
			el_trim(&v, &vl);
			{
				char *s = el_xstrndup(v, vl);
				el_jpush_str(patches, s);
				free(s);
			}
		} else if (!ok && len > sizeof(ver) - 1 && strncmp(line, ver, sizeof(ver) - 1) == 0) {
			v = line + sizeof(ver) - 1;
			vl = len - (sizeof(ver) - 1);
			el_trim(&v, &vl);
			{
				char *s = el_xstrndup(v, vl);

				el_cuda_tk_version(tk, s, path);
				free(s);
			}
			ok = true;
		}
	}
	if (!ok)
		el_probe_warn(p, "'%s': no \"CUDA Version\" line", path);
done:
	el_buf_release(&b);
	free(path);
	return ok;
}

/* A toolkit assembled from NVIDIA's wheels keeps their dist-info folders. */
static bool version_dist_info(el_probe *p, const char *home, el_cuda_cand *tk)
{
	char *dir = el_path_join(home, "dist-info"), **names = NULL;
	cJSON *components = NULL;
	bool ok = false, found = false;

	if (el_root_list(&p->root, dir, &names, NULL) == 0) {
		for (char **n = names; *n; n++) {
			char *stem, *dash, *name, *v;

			if (!el_ends_with(*n, ".dist-info"))
				continue;
			stem = el_xstrndup(*n, strlen(*n) - strlen(".dist-info"));
			dash = strrchr(stem, '-');
			if (!dash) {
				free(stem);
				continue;
			}
			name = el_xstrndup(stem, (size_t)(dash - stem));
			v = el_xstrdup(dash + 1);
			free(stem);
			if (!components)
				components = el_jset_obj(tk->entry, "components");
			el_cuda_tk_component(tk, components, name, v);
			/* nvcc's package carries the number nvcc --version prints */
			if (strcmp(name, "nvidia_cuda_nvcc") == 0 ||
			    (!ok && strcmp(name, "nvidia_cuda_runtime") == 0)) {
				char *src = el_path_join(dir, *n);

				el_cuda_tk_version(tk, v, src);
				free(src);
				ok = strcmp(name, "nvidia_cuda_nvcc") == 0 || ok;
				found = true;
			}
			free(name);
			free(v);
		}
	}
	el_strv_free(names);
	free(dir);
	return found;
}

/* cuda.h: #define CUDA_VERSION 13000 -> "13.0" (major.minor only). */
static bool version_header(el_probe *p, const char *home, el_cuda_cand *tk)
{
	char *path = el_path_join(home, "include/cuda.h");
	el_buf b = EL_BUF_INIT(EL_LIMIT_CUDA_H);
	long v;
	bool ok = false;

	if (el_probe_read_text(p, path, &b) == 0 && el_c_define_int(b.data, b.len, "CUDA_VERSION", &v)) {
		char *s = el_xasprintf("%ld.%ld", v / 1000, (v % 1000) / 10);

		el_cuda_tk_version(tk, s, path);
		free(s);
		ok = true;
	}
	el_buf_release(&b);
	free(path);
	return ok;
}


/* Debian's toolkit libraries are in the multiarch folder, with every other library. */
static void probe_multiarch_libs(el_probe *p, el_cuda_cand *tk)
{
	cJSON *libs = el_jset_arr(tk->entry, "libraries");

	for (const char *const *d = multiarch_dirs; *d; d++)
		el_probe_libraries(p, libs, *d, el_cuda_lib_prefixes, NULL);
}

/*
 * Debian's toolkit has no version.json: its version is nvcc's own (read
 * from the binary, after el_probe_cuda_nvcc), else the one in the file name of the
 * libcudart it ships (libcudart.so.11.8.89), else cuda_runtime_api.h's
 * CUDART_VERSION.
 */
static bool version_debian(el_probe *p, el_cuda_cand *tk)
{
	el_buf b = EL_BUF_INIT(EL_LIMIT_TEXT);
	long n;
	bool ok = false;

	if (tk->nvcc_version) {
		el_cuda_tk_version(tk, tk->nvcc_version, tk->nvcc_version_source);
		return true;
	}
	for (const char *const *d = multiarch_dirs; *d && !ok; d++) {
		char **names = NULL;

		if (el_root_list(&p->root, *d, &names, NULL) != 0)
			continue;
		for (char **f = names; *f && !ok; f++) {
			const char *rest = *f + strlen("libcudart.so.");

			if (!el_starts_with(*f, "libcudart.so.") || strspn(rest, "0123456789.") != strlen(rest) ||
			    !strchr(rest, '.') || strchr(strchr(rest, '.') + 1, '.') == NULL)
				continue;
			{
				char *src = el_path_join(*d, *f);

				el_cuda_tk_version(tk, rest, src);
				free(src);
				ok = true;
			}
		}
		el_strv_free(names);
	}
	if (!ok && el_probe_read_text(p, "/usr/include/cuda_runtime_api.h", &b) == 0 &&
	    el_c_define_int(b.data, b.len, "CUDART_VERSION", &n)) {
		char *s = el_xasprintf("%ld.%ld", n / 1000, (n % 1000) / 10);

		el_cuda_tk_version(tk, s, "/usr/include/cuda_runtime_api.h");
		free(s);
		ok = true;
	}
	el_buf_release(&b);
	return ok;
}

/*
 * Probe the toolkit tk (its entry written with its layout, aliases and
 * home): a vendor's (layout NULL) is recorded as one.
 */
static void probe_toolkit(el_probe *p, el_cuda_cand *tk)
{
	const char *home = tk->home;
	bool found;

	if (tk->layout && strcmp(tk->layout, "debian") == 0) {
		el_probe_cuda_nvcc(p, home, tk, tk->layout);
		found = version_debian(p, tk);
	} else if (el_env_layout(tk->layout)) {
		found = el_probe_env_toolkit(p, tk, home, tk->layout);
	} else {
		free(tk->layout);
		tk->layout = el_xstrdup("vendor");
		el_jset_str(tk->entry, "layout", tk->layout);
		found = version_json(p, home, tk) || version_txt(p, home, tk) ||
			version_dist_info(p, home, tk) || version_header(p, home, tk);
	}
	if (!found) {
		el_jset_str(tk->entry, "status", "unknown");
		if (!el_env_layout(tk->layout)) /* the environment's own say why themselves */
			el_probe_warn(p, "'%s': no version.json, version.txt or cuda.h says which CUDA this is", home);
	} else {
		el_jset_str(tk->entry, "status", "present");
	}
	if (tk->version) {
		char *r = el_cuda_release_of(tk->version);

		el_jset_str(tk->entry, "release", r);
		free(r);
	}
	if (strcmp(tk->layout, "debian") == 0) {
		probe_multiarch_libs(p, tk);
	} else if (!el_env_layout(tk->layout)) {
		el_probe_cuda_nvcc(p, home, tk, tk->layout);
		el_probe_cuda_libs(p, el_jset_arr(tk->entry, "libraries"), home);
	}
}

/* The toolkit whose home, or one of whose aliases, resolves to real; NULL when none. */
static el_cuda_cand *toolkit_of(el_probe *p, el_cuda_cands *toolkits, const char *real)
{
	for (size_t i = 0; i < toolkits->n; i++) {
		el_cuda_cand *tk = &toolkits->v[i];

		if (strcmp(tk->home, real) == 0)
			return tk;
		for (size_t j = 0; j < tk->aliases.n; j++) {
			char *ar = NULL;
			bool same = el_root_realpath(&p->root, tk->aliases.v[j], &ar, NULL) == 0 && strcmp(ar, real) == 0;

			free(ar);
			if (same)
				return tk;
		}
	}
	return NULL;
}

static void add_alias(el_cuda_cand *tk, const char *alias)
{
	if (strcmp(tk->home, alias) != 0 && !el_strvec_has(&tk->aliases, alias))
		el_strvec_push(&tk->aliases, alias);
}

/* Add candidate (in-root, unresolved) to the toolkit list, merging aliases; the toolkit, or NULL. */
static el_cuda_cand *add_candidate(el_probe *p, el_cuda_cands *toolkits, const char *cand)
{
	char *real = NULL;
	int e = 0, rc = el_root_realpath(&p->root, cand, &real, &e);
	struct stat st;
	el_cuda_cand *tk;

	if (rc != 0) {
		char *target = NULL;

		if (el_root_readlink(&p->root, cand, &target) == 0)
			el_probe_warn(p, "'%s': %s symlink to '%s'", cand,
				      e == ELOOP || rc == ENVLOCK_ELIMIT ? "looping" : "dangling", target);
		free(target);
		return NULL;
	}
	if (el_root_lstat(&p->root, real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		return NULL;
	}
	tk = toolkit_of(p, toolkits, real);
	if (!tk)
		tk = el_cuda_cand_add(toolkits, real, NULL);
	add_alias(tk, cand);
	free(real);
	return tk;
}

/* Debian's nvidia-cuda-toolkit, when its nvcc is there; /usr/lib/cuda is its CUDA_HOME folder. */
static void add_debian(el_probe *p, el_cuda_cands *toolkits)
{
	struct stat st;
	el_cuda_cand *tk;

	if (el_root_stat(&p->root, DEB_TK_NVCC, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	tk = el_cuda_cand_add(toolkits, DEB_TK_HOME, "debian");
	if (el_root_stat(&p->root, DEB_TK_LINKS, &st) == 0 && S_ISDIR(st.st_mode))
		add_alias(tk, DEB_TK_LINKS);
}

/* By home, then in the order found (pointers into one array). */
static int cmp_home(const void *a, const void *b)
{
	const el_cuda_cand *x = *(const el_cuda_cand *const *)a, *y = *(const el_cuda_cand *const *)b;
	int c = strcmp(x->home, y->home);

	return c ? c : (x > y) - (x < y);
}

/* Sort the toolkits by home so the order does not depend on how they were found. */
static void sort_toolkits(el_cuda_cands *toolkits)
{
	el_cuda_cand **by = el_xcalloc(toolkits->n + 1, sizeof(*by)), *v;

	for (size_t i = 0; i < toolkits->n; i++)
		by[i] = &toolkits->v[i];
	qsort(by, toolkits->n, sizeof(*by), cmp_home);
	v = el_xcalloc(toolkits->cap ? toolkits->cap : 1, sizeof(*v));
	for (size_t i = 0; i < toolkits->n; i++)
		v[i] = *by[i];
	free(by);
	free(toolkits->v);
	toolkits->v = v;
}

/* tk's entry in arr, with what finding it says: its layout when known, its aliases and its home. */
static void write_toolkit(cJSON *arr, el_cuda_cand *tk)
{
	tk->entry = el_jpush_obj(arr);
	el_jset_str(tk->entry, "layout", tk->layout);
	if (tk->aliases.n) {
		cJSON *aliases = el_jset_arr(tk->entry, "aliases");

		for (size_t i = 0; i < tk->aliases.n; i++)
			el_jpush_str(aliases, tk->aliases.v[i]);
	}
	el_jset_str(tk->entry, "home", tk->home);
}

/* The first nvcc in PATH (an executable regular file, as execvp finds it), in-root and unresolved, or NULL. */
static char *nvcc_in_path(el_probe *p)
{
	const char *path = el_probe_getenv(p, "PATH");
	const char *s, *end;

	if (!path)
		path = EL_DEFAULT_PATH;
	for (s = path; *s; s = *end ? end + 1 : end) {
		char *dir, *nvcc;
		struct stat st;

		end = s + strcspn(s, ":");
		if (s[0] != '/')
			continue;
		dir = el_xstrndup(s, (size_t)(end - s));
		nvcc = el_path_join(dir, "nvcc");
		free(dir);
		if (el_root_stat(&p->root, nvcc, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			return nvcc;
		free(nvcc);
	}
	return NULL;
}

#define EL_NVCC_WRAPPER_MAX 4096 /* a wrapper script is a few lines */
#define EL_NVCC_WRAPPER_HOPS 4

/*
 * The program a small wrapper script in PATH hands over to, as
 * /usr/local/bin/nvcc's `exec /usr/local/cuda-13.0/bin/nvcc "$@"` does
 * (malloc'd, absolute), or NULL: not a script, or no `exec /path` line.
 */
static char *wrapper_target(el_probe *p, const char *real)
{
	el_buf text = EL_BUF_INIT(EL_NVCC_WRAPPER_MAX);
	char *target = NULL;

	/* a real nvcc (tens of MB) is over the cap: el_root_read refuses it from its size, unread */
	if (el_root_read(&p->root, real, &text, NULL) != 0 || text.len < 2 || memcmp(text.data, "#!", 2) != 0) {
		el_buf_release(&text);
		return NULL;
	}
	for (const char *line = text.data, *eol; line && !target; line = eol ? eol + 1 : NULL) {
		const char *s = line + strspn(line, " \t");
		size_t n;

		eol = strchr(line, '\n');
		if (strncmp(s, "exec", 4) != 0 || (s[4] != ' ' && s[4] != '\t'))
			continue;
		s += 4 + strspn(s + 4, " \t");
		if (*s == '"' || *s == '\'')
			s++;
		n = strcspn(s, " \t\n\"'");
		if (s[0] == '/' && n > 1)
			target = el_xstrndup(s, n);
	}
	el_buf_release(&text);
	return target;
}

/*
 * The toolkit home an nvcc belongs to (resolved, malloc'd): Debian's for
 * its wrapper or binary, else the folder above <home>/bin/nvcc, after
 * the wrapper scripts it execs through; NULL when it, or the program a
 * wrapper execs, resolves nowhere.
 * *debian says which.
 */
static char *nvcc_home(el_probe *p, const char *nvcc, bool *debian)
{
	char *real = NULL, *bin, *home, *target;

	*debian = false;
	if (!nvcc || el_root_realpath(&p->root, nvcc, &real, NULL) != 0)
		return NULL;
	for (int hop = 0; hop < EL_NVCC_WRAPPER_HOPS && strcmp(real, DEB_TK_WRAPPER) != 0 &&
			  (target = wrapper_target(p, real)) != NULL; hop++) {
		char *next = NULL;
		struct stat st;

		if (el_root_realpath(&p->root, target, &next, NULL) != 0 || el_root_stat(&p->root, next, &st) != 0 ||
		    !S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
			free(next); /* it execs nothing there: no toolkit */
			free(target);
			free(real);
			return NULL;
		}
		free(target);
		free(real);
		real = next;
	}
	if (strcmp(real, DEB_TK_WRAPPER) == 0 || strcmp(real, DEB_TK_NVCC) == 0) {
		free(real);
		*debian = true;
		return el_xstrdup(DEB_TK_HOME);
	}
	bin = el_path_dir(real);
	home = strcmp(el_path_base(bin), "bin") == 0 ? el_path_dir(bin) : NULL;
	free(bin);
	free(real);
	return home;
}

/*
 * The toolkit of the nvcc PATH finds, wherever it is installed
 * (/opt/cuda-11.8/bin/nvcc), is a candidate like /usr/local/cuda-*, so
 * that the PATH lookup can name it.
 */
static void add_path_toolkit(el_probe *p, el_cuda_cands *toolkits, const char *nvcc)
{
	bool debian;
	char *home = nvcc_home(p, nvcc, &debian);

	if (home && !debian && strcmp(home, "/") != 0 && !toolkit_of(p, toolkits, home))
		add_candidate(p, toolkits, home);
	free(home);
}

/* One rule's answer in cuda.lookups; returns whether it names a recorded toolkit. */
static bool add_lookup(cJSON *lookups, const char *rule, const char *value, const el_cuda_cand *tk)
{
	cJSON *l = el_jpush_obj(lookups);

	el_jset_str(l, "rule", rule);
	el_jset_str(l, "value", value);
	if (tk)
		el_jset_str(l, "toolkit", tk->home);
	return tk != NULL;
}

/* The toolkit a folder names (resolved), or NULL. */
static el_cuda_cand *toolkit_named(el_probe *p, el_cuda_cands *toolkits, const char *dir)
{
	char *real = NULL;
	el_cuda_cand *tk = NULL;

	if (dir[0] == '/' && el_root_realpath(&p->root, dir, &real, NULL) == 0)
		tk = toolkit_of(p, toolkits, real);
	free(real);
	return tk;
}

/*
 * The default toolkit, by the rules a build meets in the order
 * torch.utils.cpp_extension's _find_cuda_home applies them (and mmcv's
 * setup.py with it): $CUDA_HOME, $CUDA_PATH, the nvcc PATH finds,
 * /usr/local/cuda. Each rule that names something is recorded; the first
 * that names a recorded toolkit chooses it.
 */
static void choose_default(el_probe *p, cJSON *cuda, el_cuda_cands *toolkits, const char *nvcc)
{
	static const char *const env_vars[] = { "CUDA_HOME", "CUDA_PATH", NULL };
	cJSON *lookups = el_jset_arr(cuda, "lookups");
	el_cuda_cand *chosen = NULL, *tk;
	const char *by = NULL;
	struct stat st;
	bool debian;
	char *path_home;

	for (const char *const *v = env_vars; *v; v++) {
		const char *home = el_probe_getenv(p, *v);

		if (!home || !home[0])
			continue;
		tk = toolkit_named(p, toolkits, home);
		if (add_lookup(lookups, *v, home, tk) && !chosen) {
			chosen = tk;
			by = *v;
		}
	}
	path_home = nvcc_home(p, nvcc, &debian);
	tk = path_home ? toolkit_of(p, toolkits, path_home) : NULL;
	free(path_home);
	if (nvcc && add_lookup(lookups, "PATH", nvcc, tk) && !chosen) {
		chosen = tk;
		by = "PATH";
	}
	if (el_root_lstat(&p->root, "/usr/local/cuda", &st) == 0) {
		tk = toolkit_named(p, toolkits, "/usr/local/cuda");
		if (add_lookup(lookups, "/usr/local/cuda", "/usr/local/cuda", tk) && !chosen) {
			chosen = tk;
			by = "/usr/local/cuda";
		}
	}
	if (chosen) {
		el_jset_str(cuda, "default", chosen->home);
		el_jset_str(cuda, "default_by", by);
		p->cuda.default_home = el_xstrdup(chosen->home);
	}
}

void el_probe_cuda(el_probe *p)
{
	cJSON *cuda = el_probe_section(p, EL_SEC_CUDA), *arr = el_jset_arr(cuda, "toolkits");
	static const char *const env_vars[] = { "CUDA_HOME", "CUDA_PATH", NULL };
	el_cuda_cands toolkits = { NULL, 0, 0 };
	char **names = NULL, *nvcc;

	el_probe_env_toolkits(p, &toolkits); /* first: a CUDA_HOME naming one of them is an alias */
	add_debian(p, &toolkits);
	if (el_root_list(&p->root, "/usr/local", &names, NULL) == 0)
		for (char **n = names; *n; n++)
			if (strcmp(*n, "cuda") == 0 || el_starts_with(*n, "cuda-")) {
				char *c = el_path_join("/usr/local", *n);

				add_candidate(p, &toolkits, c);
				free(c);
			}
	el_strv_free(names);
	for (const char *const *v = env_vars; *v; v++) {
		const char *home = el_probe_getenv(p, *v);

		if (home && home[0] == '/')
			add_candidate(p, &toolkits, home);
	}
	if (p->opts->cuda_home)
		add_candidate(p, &toolkits, p->opts->cuda_home);
	nvcc = nvcc_in_path(p); /* PATH is walked once, for the candidate and the lookup */
	add_path_toolkit(p, &toolkits, nvcc);

	sort_toolkits(&toolkits);
	/* what the cuDNN probe is told: each toolkit's home and layout */
	p->cuda.v = el_xcalloc(toolkits.n + 1, sizeof(*p->cuda.v));
	for (size_t i = 0; i < toolkits.n; i++) {
		el_cuda_cand *tk = &toolkits.v[i];
		el_cuda_tk *t = &p->cuda.v[p->cuda.n++];

		write_toolkit(arr, tk);
		probe_toolkit(p, tk);
		t->home = el_xstrdup(tk->home);
		t->layout = el_xstrdup(tk->layout);
	}
	choose_default(p, cuda, &toolkits, nvcc);
	free(nvcc);
	el_jset_str(cuda, "status", toolkits.n ? "present" : "absent");
	el_cuda_cands_release(&toolkits);
}
