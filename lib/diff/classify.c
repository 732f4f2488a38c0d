/* The sections of a diff, the section filters, and how severe a change is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/error.h"
#include "util/xalloc.h"

const char *const el_diff_sections[EL_SEC_COUNT] = {
	"system", "gpu", "cuda", "cudnn", "compilers", "python", "conda", "pip",
	"frameworks", "loads", "repos", "configs", "checkpoints", "env"
};

/*
 * The core of the stack: a change here is risky even when no rule says
 * it breaks. parts: how many leading version parts must match (0: all).
 */
static const struct {
	int section;
	const char *key;
	int parts;
	const char *label;
	bool stem; /* key is a prefix, and the value's version is its first word ("8.9.2 <file>": loads) */
} core[] = {
	{ EL_SEC_GPU, "driver", 1, "driver major", false },
	{ EL_SEC_CUDA, "version", 2, "CUDA release", false },
	{ EL_SEC_CUDNN, "version", 0, "cuDNN", false },
	{ EL_SEC_COMPILERS, "gcc", 1, "gcc major", false },
	{ EL_SEC_PYTHON, "version", 2, "Python", false },
	{ EL_SEC_FRAMEWORKS, "torch", 0, "torch", false },
	{ EL_SEC_FRAMEWORKS, "mmcv", 0, "mmcv", false },
	{ EL_SEC_FRAMEWORKS, "mmdet", 0, "mmdet", false },
	{ EL_SEC_LOADS, "torch libcudnn", 0, "cuDNN torch loads", true },
	{ EL_SEC_LOADS, "torch libcudart", 2, "CUDA runtime torch loads", true },
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

envlock_severity el_diff_classify(int section, const char *key, const char *a,
				  const char *b, char **reason)
{
	*reason = NULL;
	for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++) {
		size_t la, lb;

		if (core[i].section != section ||
		    (core[i].stem ? strncmp(core[i].key, key, strlen(core[i].key)) : strcmp(core[i].key, key)) != 0)
			continue;
		/* a module one lock does not record says nothing about what it loads */
		if (core[i].stem && (!a || !b))
			return ENVLOCK_SEV_INFO;
		la = a ? version_part_len(a, core[i].parts, core[i].stem) : 0;
		lb = b ? version_part_len(b, core[i].parts, core[i].stem) : 0;
		if (a && b && la == lb && strncmp(a, b, la) == 0)
			return ENVLOCK_SEV_INFO;
		*reason = el_xasprintf("%s %.*s → %.*s", core[i].label,
				       a ? (int)la : 4, a ? a : "none",
				       b ? (int)lb : 4, b ? b : "none");
		return ENVLOCK_SEV_RISKY;
	}
	return ENVLOCK_SEV_INFO;
}
