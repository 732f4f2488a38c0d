/*
 * The nvidia/cuda base image for a lock: the published tag that matches
 * its CUDA release, cuDNN major and Ubuntu release, or the closest one.
 * The tags are data (data/nvidia-cuda-tags.json, from NVIDIA's lists),
 * compiled in like the rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lock/model.h"
#include "lock/view.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

extern const char el_cuda_tags_builtin[];

__asm__(".section .rodata\n"
	".global el_cuda_tags_builtin\n"
	".type el_cuda_tags_builtin, @object\n"
	"el_cuda_tags_builtin:\n"
	".incbin \"data/nvidia-cuda-tags.json\"\n"
	".byte 0\n"
	".previous\n");

/* "11.8.0-cudnn8-devel-ubuntu22.04" taken apart. */
typedef struct {
	const char *tag;
	int major, minor, patch;
	int cudnn;          /* cuDNN major; "-cudnn-" tags carry cuDNN 9 (the data file says why) */
	int os_major, os_minor;
	int supported;
} tag_info;

static int parse_tag(const char *tag, int supported, tag_info *t)
{
	int used = 0, n;

	memset(t, 0, sizeof(*t));
	t->tag = tag;
	t->supported = supported;
	if (sscanf(tag, "%d.%d.%d-cudnn%n", &t->major, &t->minor, &t->patch, &used) != 3 || !used)
		return -1;
	tag += used;
	if (*tag == '-') {
		t->cudnn = 9;
	} else if (sscanf(tag, "%d%n", &t->cudnn, &n) == 1) {
		tag += n;
	} else {
		return -1;
	}
	if (sscanf(tag, "-devel-ubuntu%d.%d%n", &t->os_major, &t->os_minor, &n) != 2 || tag[n])
		return -1;
	return 0;
}

/* "10.2.89" -> 10, 2; -1 when not a version */
static int major_minor(const char *v, int *major, int *minor)
{
	return v && sscanf(v, "%d.%d", major, minor) == 2 ? 0 : -1;
}

/* The lock's CUDA: the default toolkit's version (or release), else torch's build CUDA. */
static const char *lock_cuda(const el_view *v, const char **from)
{
	const char *tk = el_toolkit_version(v->cuda.default_tk), *torch;

	if (tk) {
		*from = "toolkit";
		return tk;
	}
	torch = el_view_framework(v, "torch")->cuda;
	if (torch) {
		*from = "torch";
		return torch;
	}
	return NULL;
}

static long os_key(int major, int minor)
{
	return major * 100L + minor;
}

void el_choose_base_image(el_base_image *out, const el_view *v)
{
	const char *os_id = v->system.os.id, *os_ver = v->system.os.version_id;
	const char *pretty = v->system.os.pretty_name, *from = NULL;
	const char *cudnn_ver = v->cudnn.version;
	const char *cuda_ver = lock_cuda(v, &from);
	int want_major, want_minor, cudnn = 0, os_major = 0, os_minor = 0, ubuntu;
	const tag_info *best = NULL;
	tag_info *tags = NULL;
	size_t ntags = 0, cap = 0;
	el_buf c = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a few fixed sentences round the lock's versions and OS name");
	cJSON *data;

	memset(out, 0, sizeof(*out));
	ubuntu = os_id && strcmp(os_id, "ubuntu") == 0 && os_ver && sscanf(os_ver, "%d.%d", &os_major, &os_minor) == 2;
	if (!el_export_line(pretty) || strlen(pretty) > 100)
		pretty = NULL;
	if (!cuda_ver || major_minor(cuda_ver, &want_major, &want_minor) != 0) {
		/* no CUDA version: the lock's own OS, as an official image */
		if (v->cuda.ntoolkits > 0)
			el_buf_adds(&c, "# The lock's CUDA toolkit has no recorded version, so no nvidia/cuda tag can be chosen.\n");
		else
			el_buf_adds(&c, "# The lock has no CUDA toolkit.\n");
		if (os_id && el_export_word(os_ver) && (strcmp(os_id, "ubuntu") == 0 || strcmp(os_id, "debian") == 0)) {
			out->os_base = el_xasprintf("%s:%s", os_id, os_ver);
			el_buf_addf(&c, "# The base is the lock's own OS, %s.\n", out->os_base);
		} else {
			out->os_base = el_xstrdup("ubuntu:22.04");
			el_buf_adds(&c, "# The lock names no Ubuntu or Debian release: ubuntu:22.04 is a guess.\n");
		}
		out->comment = el_buf_detach(&c);
		return;
	}
	if (cudnn_ver)
		sscanf(cudnn_ver, "%d", &cudnn);

	/* the tag list is envlock's own data, not the lock's */
	data = cJSON_Parse(el_cuda_tags_builtin);
	for (int s = 0; s < 2; s++) {
		const cJSON *list = el_jget(data, s == 0 ? "supported" : "unsupported"), *t;

		cJSON_ArrayForEach(t, list) {
			if (!cJSON_IsString(t))
				continue;
			EL_GROW(tags, ntags + 1, cap);
			if (parse_tag(t->valuestring, s == 0, &tags[ntags]) == 0)
				ntags++;
		}
	}
	/*
	 * Closest: the CUDA release first (what torch was built for and what
	 * nvcc compiles extensions with), then the cuDNN major, then the Ubuntu
	 * release (newer before older: newer glibc runs older wheels), then a
	 * supported tag before one NVIDIA no longer updates, then the latest update.
	 */
	for (size_t i = 0; i < ntags; i++) {
		const tag_info *t = &tags[i];
		long d = labs((t->major * 1000L + t->minor) - (want_major * 1000L + want_minor));
		long od = ubuntu ? labs(os_key(t->os_major, t->os_minor) - os_key(os_major, os_minor)) : 0;
		int cm = cudnn && t->cudnn != cudnn;

		if (best) {
			long bd = labs((best->major * 1000L + best->minor) - (want_major * 1000L + want_minor));
			long bod = ubuntu ? labs(os_key(best->os_major, best->os_minor) - os_key(os_major, os_minor)) : 0;
			int bcm = cudnn && best->cudnn != cudnn;
			long ok = os_key(t->os_major, t->os_minor), bok = os_key(best->os_major, best->os_minor);

			if (d != bd ? d > bd : cm != bcm ? cm > bcm : od != bod ? od > bod :
			    ok != bok ? ok < bok : t->supported != best->supported ? !t->supported :
			    t->patch <= best->patch)
				continue;
		}
		best = t;
	}
	if (!best) {
		out->os_base = el_xstrdup("ubuntu:22.04");
		el_buf_adds(&c, "# envlock's list of nvidia/cuda tags is empty: ubuntu:22.04 without CUDA.\n");
	} else {
		int same_cuda = best->major == want_major && best->minor == want_minor;
		int same_cudnn = !cudnn || best->cudnn == cudnn;
		int same_os = ubuntu && best->os_major == os_major && best->os_minor == os_minor;

		out->tag = el_xstrdup(best->tag);
		if (same_cuda && same_cudnn && same_os) {
			el_buf_addf(&c, "# Matches the lock: CUDA %d.%d, cuDNN %d, Ubuntu %d.%02d.\n",
				      want_major, want_minor, best->cudnn, os_major, os_minor);
		} else {
			el_buf_addf(&c, "# The lock has CUDA %s (%s)", cuda_ver, from);
			if (cudnn)
				el_buf_addf(&c, ", cuDNN %s", cudnn_ver);
			el_buf_addf(&c, " on %s.\n# No published nvidia/cuda tag matches it:\n", pretty ? pretty : "an unknown OS");
			if (!same_cuda)
				el_buf_addf(&c, "# NVIDIA publishes no image of CUDA %d.%d with cuDNN%s.\n", want_major, want_minor,
					      want_major <= 10 ? " (the tags of CUDA 10 and older were deleted)" : "");
			else if (!same_cudnn)
				el_buf_addf(&c, "# no CUDA %d.%d image comes with cuDNN %d.\n", want_major, want_minor, cudnn);
			if (!ubuntu)
				el_buf_adds(&c, "# the images are Ubuntu ones; the lock's OS is not Ubuntu.\n");
			else if (!same_os)
				el_buf_addf(&c, "# the image's Ubuntu is %d.%02d, not %d.%02d.\n",
					      best->os_major, best->os_minor, os_major, os_minor);
			el_buf_addf(&c, "# Closest published tag: CUDA %d.%d.%d, cuDNN %d, Ubuntu %d.%02d.\n",
				      best->major, best->minor, best->patch, best->cudnn, best->os_major, best->os_minor);
			if (!same_cuda)
				el_buf_adds(&c, "# Frameworks bring their own CUDA runtime, but code compiled in this image\n"
						"# (mmcv ops, custom kernels) is built with its nvcc, not the lock's.\n");
		}
	}
	out->comment = el_buf_detach(&c);
	free(tags);
	cJSON_Delete(data);
}

void el_base_image_release(el_base_image *b)
{
	free(b->tag);
	free(b->os_base);
	free(b->comment);
	memset(b, 0, sizeof(*b));
}
