/* A CUDA toolkit's version.json, version.txt and cuda_runtime_api.h (el_probe_cuda) over a scratch root. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/usr/local/cuda-11.8/version.json", "/usr/local/cuda-10.2/version.txt",
		"/usr/local/cuda-12.1/include/cuda_runtime_api.h", NULL };
	envlock_probe_opts opts = { 0 };
	envlock_ctx *ctx = fz_ctx();
	el_probe p;

	opts.root = fz_root(paths, data, size);
	fz_probe_init(&p, ctx, &opts);
	el_probe_cuda(&p);
	fz_probe_release(&p);
	envlock_ctx_free(ctx);
	return 0;
}
