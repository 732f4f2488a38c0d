/* The sections of a diff, the section filters, and how severe a change is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/text.h"
#include "util/error.h"
#include "util/xalloc.h"

const char *const el_diff_sections[EL_SEC_COUNT] = {
	"system", "gpu", "cuda", "cudnn", "compilers", "python", "conda", "pip",
	"frameworks", "loads", "repos", "configs", "checkpoints", "env"
};

/*
 * The core of the stack: a change here is risky even when no rule says
 * it breaks. parts: how many leading version parts must match (0: all).
 * A loads key is "<module> <soname stem>": module says any module
 * (torch, torchvision, mmcv's ops: each runs in torch's process).
 */
static const struct {
	int section;
	const char *key;
	int parts;
	const char *label;
	bool module; /* loads: key is the stem after the module, the value's version its first word ("8.9.2 <file>") */
} core[] = {
	{ EL_SEC_GPU, "driver", 1, "driver major", false },
	{ EL_SEC_CUDA, "version", 2, "CUDA release", false },
	{ EL_SEC_CUDNN, "version", 0, "cuDNN", false },
	{ EL_SEC_COMPILERS, "gcc", 1, "gcc major", false },
	{ EL_SEC_PYTHON, "version", 2, "Python", false },
	{ EL_SEC_FRAMEWORKS, "torch", 0, "torch", false },
	{ EL_SEC_FRAMEWORKS, "mmcv", 0, "mmcv", false },
	{ EL_SEC_FRAMEWORKS, "mmdet", 0, "mmdet", false },
	{ EL_SEC_LOADS, "libcudnn", 0, "cuDNN", true },
	{ EL_SEC_LOADS, "libcudart", 2, "CUDA runtime", true },
};

size_t envlock_diff_section_count(void)
{
	return EL_SEC_COUNT;
}

const char *envlock_diff_section_name(size_t i)
{
	return i < EL_SEC_COUNT ? el_diff_sections[i] : NULL;
}

int el_diff_section_index(const char *name)
{
	for (int i = 0; name && i < EL_SEC_COUNT; i++)
		if (strcmp(name, el_diff_sections[i]) == 0)
			return i;
	return -1;
}

static int unknown_section(envlock_ctx *ctx, const char *what, const char *name)
{
	char list[256] = "";

	for (int i = 0; i < EL_SEC_COUNT; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, el_diff_sections[i], sizeof(list) - strlen(list) - 1);
	}
	return el_error_set(ctx, ENVLOCK_EINVAL, "the section '%s' to %s does not exist (sections: %s)", name, what, list);
}

int el_diff_section_mask(uint32_t *mask, envlock_ctx *ctx, const envlock_diff_opts *opts)
{
	uint32_t m = opts && opts->only_count ? 0 : (1u << EL_SEC_COUNT) - 1;
	int s;

	*mask = 0;
	for (size_t i = 0; opts && i < opts->only_count; i++) {
		if ((s = el_diff_section_index(opts->only[i])) < 0)
			return unknown_section(ctx, "compare alone", opts->only[i]);
		m |= 1u << s;
	}
	for (size_t i = 0; opts && i < opts->ignore_count; i++) {
		if ((s = el_diff_section_index(opts->ignore[i])) < 0)
			return unknown_section(ctx, "leave out", opts->ignore[i]);
		m &= ~(1u << s);
	}
	*mask = m;
	return 0;
}

/* Length of the first parts dot-separated parts of v (all of v for 0). */
static size_t version_part_len(const char *v, int parts, bool word)
{
	size_t i = 0, end = word ? strcspn(v, " ") : strlen(v);

	if (parts <= 0)
		return end;
	for (; i < end; i++)
		if (v[i] == '.' && --parts == 0)
			break;
	return i;
}

/*
 * A torch value's release and build: pip's "1.10.0+cu113 ..." (the local
 * part: "cu113", "cpu"), conda's "1.10.0 py3.7_cuda10.2_cudnn7.6.5_0 ..."
 * (the build string's "cuda10.2", or "cpu"). NULL when it names no build.
 */
typedef struct {
	size_t nrel, nbuild;
	const char *build;
} torch_value;

static bool torch_value_of(const char *v, bool conda, torch_value *t)
{
	const char *w;

	if (!v)
		return false;
	t->nrel = strcspn(v, conda ? " " : "+ ");
	if (!conda) {
		if (v[t->nrel] != '+')
			return false;
		t->build = v + t->nrel + 1;
		t->nbuild = strcspn(t->build, " ");
		return true;
	}
	w = v + t->nrel + strspn(v + t->nrel, " ");
	if (!*w)
		return false;
	if (strstr(w, "cpu") && strstr(w, "cpu") < w + strcspn(w, " ")) {
		t->build = "cpu", t->nbuild = 3;
		return true;
	}
	if (!(t->build = strstr(w, "cuda")) || t->build >= w + strcspn(w, " "))
		return false;
	t->nbuild = 4 + strspn(t->build + 4, "0123456789.");
	return t->nbuild > 4;
}

static bool is_cpu(const torch_value *t)
{
	return t->nbuild == 3 && strncmp(t->build, "cpu", 3) == 0;
}

/*
 * torch between two builds: from or to a CPU-only build where a lock
 * records an NVIDIA GPU is breaking (a CPU-only torch runs nothing on
 * it, and a CUDA one needs a driver the CPU machine was never judged
 * for); two CUDA builds of one release are risky (another CUDA runtime,
 * and every extension built against the old one, mmcv-full's ops among
 * them). -1 when neither (the same build, one without a build, or two
 * releases: the core rule says that).
 */
static int torch_builds(const char *a, const char *b, bool conda, const el_diff_scene *scene, char **reason)
{
	torch_value ta, tb;
	bool cpu;

	if (!torch_value_of(a, conda, &ta) || !torch_value_of(b, conda, &tb) ||
	    (ta.nbuild == tb.nbuild && strncmp(ta.build, tb.build, ta.nbuild) == 0))
		return -1;
	cpu = is_cpu(&ta) || is_cpu(&tb);
	if (cpu && scene && scene->gpu) {
		*reason = el_xasprintf("torch's build %.*s → %.*s where a lock records an NVIDIA GPU: %s",
				       (int)ta.nbuild, ta.build, (int)tb.nbuild, tb.build,
				       is_cpu(&tb) ? "a CPU-only torch runs nothing on the GPU"
				       : "a CUDA build of torch needs a driver and GPU code the CPU-only one never did");
		return ENVLOCK_SEV_BREAKING;
	}
	if (ta.nrel != tb.nrel || strncmp(a, b, ta.nrel) != 0)
		return -1; /* another release too: "torch 1.10.0+cu102 → 2.1.2+cu118" says it */
	*reason = el_xasprintf("torch's build %.*s → %.*s: %s", (int)ta.nbuild, ta.build, (int)tb.nbuild, tb.build,
			       cpu ? "torch changes between CPU-only and CUDA"
			       : "another CUDA runtime under torch, and extensions built against the old one (mmcv-full's ops) need rebuilding");
	return ENVLOCK_SEV_RISKY;
}

/* The framework a pip distribution (torch for "torch", mmcv for "mmcv-full") or a conda package (torch for "pytorch") is, or NULL. */
static const char *framework_of(const char *name, bool conda)
{
	char *canon = conda ? NULL : el_pep503_name(name);
	const char *key = NULL;

	for (size_t i = 0; el_frameworks[i].key && !key; i++) {
		if (conda && el_frameworks[i].conda && strcmp(name, el_frameworks[i].conda) == 0)
			key = el_frameworks[i].key;
		for (size_t d = 0; !conda && el_frameworks[i].dists[d] && !key; d++)
			if (strcmp(canon, el_frameworks[i].dists[d]) == 0)
				key = el_frameworks[i].key;
	}
	free(canon);
	return key;
}

envlock_severity el_diff_classify(int section, const char *key, const char *a,
				  const char *b, const el_diff_scene *scene, char **reason)
{
	const char *stem = NULL, *fw;
	char label[128];
	bool word = false, conda = section == EL_SEC_CONDA; /* word: the version is the value's first word */
	int rc;

	*reason = NULL;
	/* where the frameworks are not compared (an imported list), its entries speak for them */
	if ((section == EL_SEC_PIP || conda) && scene && !scene->frameworks && (fw = framework_of(key, conda)) != NULL)
		section = EL_SEC_FRAMEWORKS, key = fw, word = true; /* "2.25.1 editable /home/alice/mmdetection" */
	if (section == EL_SEC_FRAMEWORKS && strcmp(key, "torch") == 0 && (rc = torch_builds(a, b, conda, scene, reason)) >= 0)
		return (envlock_severity)rc;
	if (section == EL_SEC_LOADS && strchr(key, ' '))
		stem = strchr(key, ' ') + 1;
	for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
		size_t la, lb;

		if (core[i].section != section ||
		    (core[i].module ? !stem || strncmp(core[i].key, stem, strlen(core[i].key)) : strcmp(core[i].key, key)) != 0)
			continue;
		/* a module one lock does not record says nothing about what it loads */
		if (core[i].module && (!a || !b))
			return ENVLOCK_SEV_INFO;
		la = a ? version_part_len(a, core[i].parts, core[i].module || word) : 0;
		lb = b ? version_part_len(b, core[i].parts, core[i].module || word) : 0;
		if (a && b && la == lb && strncmp(a, b, la) == 0)
			return ENVLOCK_SEV_INFO;
		if (core[i].module)
			snprintf(label, sizeof(label), "%s %.*s loads", core[i].label, (int)(stem - key - 1), key);
		else
			snprintf(label, sizeof(label), "%s", core[i].label);
		*reason = el_xasprintf("%s %.*s → %.*s", label,
				       a ? (int)la : 4, a ? a : "none",
				       b ? (int)lb : 4, b ? b : "none");
		return ENVLOCK_SEV_RISKY;
	}
	return ENVLOCK_SEV_INFO;
}
