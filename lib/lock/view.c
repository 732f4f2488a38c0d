/* The typed view of a lock: one definition of each fact's meaning (view.h). */
#include <string.h>

#include "model.h"
#include "view.h"

bool el_present(const cJSON *o)
{
	const char *st = el_jget_str(o, "status");

	return cJSON_IsObject(o) && (!st || strcmp(st, "present") == 0);
}

const char *el_present_str(const cJSON *o, const char *key)
{
	return el_present(o) ? el_jget_str(o, key) : NULL;
}

const cJSON *el_toolkit_at(const cJSON *doc, const char *path)
{
	const cJSON *tk, *a;

	if (!path)
		return NULL;
	cJSON_ArrayForEach(tk, el_jget(el_jget(doc, "cuda"), "toolkits")) {
		const char *home = el_jget_str(tk, "home");

		if (home && strcmp(home, path) == 0)
			return tk;
		cJSON_ArrayForEach(a, el_jget(tk, "aliases"))
			if (cJSON_IsString(a) && strcmp(a->valuestring, path) == 0)
				return tk;
	}
	return NULL;
}

const cJSON *el_default_toolkit(const cJSON *doc)
{
	const cJSON *cuda = el_jget(doc, "cuda");

	return el_present(cuda) ? el_toolkit_at(doc, el_jget_str(cuda, "default")) : NULL;
}

const char *el_toolkit_version(const cJSON *toolkit)
{
	const char *v = el_jget_str(toolkit, "version");

	return v ? v : el_jget_str(toolkit, "release");
}

#define OMM (EL_FW_OPENMMLAB | EL_FW_MMCV_OPS | EL_FW_CITED)

const el_framework_info el_frameworks[] = {
	{ "torch", { "torch", NULL }, 0 },
	{ "torchvision", { "torchvision", NULL }, 0 },
	{ "mmcv", { "mmcv-full", "mmcv", "mmcv-lite", NULL }, EL_FW_OPENMMLAB },
	{ "mmengine", { "mmengine", NULL }, EL_FW_OPENMMLAB },
	{ "mmdet", { "mmdet", NULL }, OMM },
	{ "mmpose", { "mmpose", NULL }, OMM },
	{ "mmpretrain", { "mmpretrain", NULL }, OMM },
	{ "mmseg", { "mmsegmentation", NULL }, OMM },
	{ "mmdet3d", { "mmdet3d", NULL }, OMM },
	{ "mmaction", { "mmaction2", NULL }, OMM },
	{ "mmocr", { "mmocr", NULL }, OMM },
	{ "mmcls", { "mmcls", NULL }, OMM },
	{ NULL, { NULL }, 0 },
};

const el_framework_info *el_framework_find(const char *key)
{
	for (const el_framework_info *f = el_frameworks; f->key; f++)
		if (key && strcmp(f->key, key) == 0)
			return f;
	return NULL;
}
