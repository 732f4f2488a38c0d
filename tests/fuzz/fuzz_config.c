/*
 * An OpenMMLab config: el_config_effective_text evaluates the text alone
 * (its _base_ files, if named, are looked up beside it in the scratch
 * folder: none are there, or the second part of the input is "base.py").
 * Input: the config, then optionally FZ_SEP and a base file "base.py".
 */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const options[] = { "model.backbone.depth=101", "optimizer.lr=[0.01,(1,2)]" };
	envlock_ctx *ctx = fz_ctx();
	fz_part parts[2];
	size_t n = fz_split(data, size, parts, 2);
	const char *path;
	cJSON *out = NULL;
	char *text;

	fz_write("cfg/base.py", n > 1 ? parts[1].data : (const uint8_t *)"", n > 1 ? parts[1].len : 0);
	path = fz_write("cfg/config.py", parts[0].data, parts[0].len);
	/* the evaluator takes a length, but callers hand it a string: keep the bytes exact, NUL after */
	text = malloc(parts[0].len + 1);
	memcpy(text, parts[0].data, parts[0].len);
	text[parts[0].len] = '\0';
	if (el_config_effective_text(&out, ctx, path, text, parts[0].len, options, size & 1 ? 2 : 0) == 0)
		cJSON_Delete(out);
	free(text);
	envlock_ctx_free(ctx);
	return 0;
}
