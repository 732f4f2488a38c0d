/* conda-meta records and history of the environment at /opt/conda (el_probe_conda) over a scratch root. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/opt/conda/conda-meta/pytorch-1.10.0-py3.8_cuda11.3_cudnn8.2.0_0.json",
		"/opt/conda/conda-meta/history", "/opt/conda/conda-meta/cudatoolkit-11.3.1-h2bc3f7f_2.json",
		"/opt/conda/condarc", NULL };
	envlock_probe_opts opts = { 0 };
	envlock_ctx *ctx = fz_ctx();
	el_probe p;

	opts.root = fz_root(paths, data, size);
	opts.conda_prefix = "/opt/conda";
	fz_probe_init(&p, ctx, &opts);
	fz_probe_python(&p, "/opt/conda", "/opt/conda/lib/python3.8/site-packages");
	el_probe_conda(&p);
	fz_probe_release(&p);
	envlock_ctx_free(ctx);
	return 0;
}
