/* /proc/driver/nvidia/version and gpus/<bus>/information (el_probe_driver, el_probe_gpus) over a scratch root. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/proc/driver/nvidia/version",
		"/proc/driver/nvidia/gpus/0000:3b:00.0/information", "/proc/driver/nvidia/params", NULL };
	envlock_probe_opts opts = { 0 };
	envlock_ctx *ctx = fz_ctx();
	el_probe p;

	opts.root = fz_root(paths, data, size);
	fz_probe_init(&p, ctx, &opts);
	el_probe_driver(&p);
	el_probe_gpus(&p);
	fz_probe_release(&p);
	envlock_ctx_free(ctx);
	return 0;
}
