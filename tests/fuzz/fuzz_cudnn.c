/*
 * cuDNN under a toolkit (el_probe_cuda, then el_probe_cudnn): the version
 * header, the older cudnn.h, and a libcudnn.so.* ELF whose soname is
 * compared with the header's version (the soname overflow of issue 17).
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/usr/local/cuda-11.3/version.txt",
		"/usr/local/cuda-11.3/include/cudnn_version.h", "/usr/local/cuda-11.3/lib64/libcudnn.so.8.2.0",
		"/usr/include/cudnn.h", NULL };
	envlock_probe_opts opts = { 0 };
	envlock_ctx *ctx = fz_ctx();
	el_probe p;

	opts.root = fz_root(paths, data, size);
	fz_probe_init(&p, ctx, &opts);
	el_probe_cuda(&p);
	el_probe_cudnn(&p);
	fz_probe_release(&p);
	envlock_ctx_free(ctx);
	return 0;
}
