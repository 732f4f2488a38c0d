/* `conda list --explicit` and `pip freeze` files (envlock import / diff against one), then show and export of the partial lock. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	envlock_ctx *ctx = fz_ctx();
	envlock_lock *lock = NULL;
	envlock_import_kind kind;

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	if (envlock_import(&lock, &kind, ctx, fz_write("import.txt", data, size)) == 0) {
		char *out = NULL;
		size_t len;

		(void)envlock_lock_id(lock);
		envlock_show_print(lock, ctx, devnull);
		if (envlock_export(&out, &len, ctx, lock,
				   kind == ENVLOCK_IMPORT_CONDA_EXPLICIT ? ENVLOCK_EXPORT_CONDA_EXPLICIT : ENVLOCK_EXPORT_REQUIREMENTS,
				   NULL) == 0)
			free(out);
	}
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	return 0;
}
