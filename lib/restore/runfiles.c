/*
 * rules/cuda-runfiles.json, compiled in: the runfile NVIDIA publishes for
 * each CUDA toolkit release, so a "manual" CUDA step can name the exact
 * file and flags.
 */
#include <stdio.h>
#include <string.h>

#include "knowledge/knowledge.h"
#include "lock/model.h"
#include "plan.h"
#include "util/xalloc.h"

__asm__(".section .rodata\n"
	".global el_cuda_runfiles\n"
	".type el_cuda_runfiles, @object\n"
	"el_cuda_runfiles:\n"
	".incbin \"rules/cuda-runfiles.json\"\n"
	".byte 0\n"
	".previous\n");

extern const char el_cuda_runfiles[];

void el_restore_runfile_note(envlock_restore *r, el_item *it, const char *version, const char *home)
{
	cJSON *doc = cJSON_Parse(el_cuda_runfiles), *row;
	const char *file = NULL, *url = NULL;

	cJSON_ArrayForEach(row, el_jget(doc, "rows")) {
		if (strcmp(el_jget_str(row, "toolkit") ?: "", version) == 0) {
			file = el_jget_str(row, "file");
			url = el_jget_str(row, "url");
		}
	}
	if (file && url)
		el_item_note(it, "download %s (%s), then rerun with %s %s, or run it yourself: sh %s %s --toolkitpath=%s; it installs no driver",
			     file, url, el_restore_option(r, "cuda_runfile"), file, file, EL_RUNFILE_FLAGS, home);
	else
		el_item_note(it, "download the CUDA %s runfile from %s, then rerun with %s FILE, or run it yourself with %s --toolkitpath=%s",
			     version, el_kb_nvidia_archive(el_kb_builtin(), "cuda_toolkit") ?: "NVIDIA's CUDA toolkit archive",
			     el_restore_option(r, "cuda_runfile"), EL_RUNFILE_FLAGS, home);
	cJSON_Delete(doc);
}
