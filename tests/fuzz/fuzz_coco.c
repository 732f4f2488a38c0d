/* A COCO annotation file's categories (lib/config/coco.c): the streamed skip of every other value. */
#include <stdlib.h>

#include "config/facts.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	envlock_ctx *ctx;
	cJSON *names = NULL;
	long long n = 0;

	if (envlock_ctx_new(&ctx) != 0)
		return 0;
	if (el_coco_categories_mem(ctx, "fuzz.json", (const char *)data, size, &n, &names, 16) == 0 &&
	    (n < 0 || (names && cJSON_GetArraySize(names) > 16)))
		abort();
	cJSON_Delete(names);
	envlock_ctx_free(ctx);
	return 0;
}
