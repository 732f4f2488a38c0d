/* A site folder's dist-info (METADATA, RECORD, WHEEL, direct_url.json, INSTALLER) and egg-info (el_probe_pip). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/venv/site/mmdet-2.25.0.dist-info/METADATA",
		"/venv/site/mmdet-2.25.0.dist-info/RECORD", "/venv/site/mmdet-2.25.0.dist-info/WHEEL",
		"/venv/site/mmdet-2.25.0.dist-info/direct_url.json", "/venv/site/mmdet-2.25.0.dist-info/INSTALLER",
		"/venv/site/mmcv_full-1.6.0-py3.8.egg-info/PKG-INFO", "/venv/site/mmpose.egg-link", NULL };
	envlock_probe_opts opts = { 0 };
	envlock_ctx *ctx = fz_ctx();
	el_probe p;

	opts.root = fz_root(paths, data, size);
	fz_probe_init(&p, ctx, &opts);
	fz_probe_python(&p, "/venv", "/venv/site");
	el_probe_pip(&p);
	fz_probe_release(&p);
	envlock_ctx_free(ctx);
	return 0;
}
