/*
 * The frameworks' own files (el_probe_pip, then el_probe_frameworks):
 * torch/version.py, mmcv/version.py and mmdet's __init__.py, with their
 * dist-info written once, as pip leaves them.
 */
#include "fuzz.h"

static const char *const fixed[] = { "/venv/site/torch-1.10.0.dist-info/METADATA",
	"/venv/site/mmcv_full-1.4.0.dist-info/METADATA", "/venv/site/mmdet-2.20.0.dist-info/METADATA", NULL };
static const char fixed_text[] = "Metadata-Version: 2.1\nName: torch\nVersion: 1.10.0\n" FZ_SEP
	"Metadata-Version: 2.1\nName: mmcv-full\nVersion: 1.4.0\n" FZ_SEP
	"Metadata-Version: 2.1\nName: mmdet\nVersion: 2.20.0\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/venv/site/torch/version.py", "/venv/site/mmcv/version.py",
		"/venv/site/mmdet/__init__.py", "/venv/site/torch/__init__.py", "/venv/site/mmcv/__init__.py", NULL };
	static int ready;
	envlock_probe_opts opts = { 0 };
	envlock_ctx *ctx = fz_ctx();
	el_probe p;

	if (!ready++)
		fz_root(fixed, (const uint8_t *)fixed_text, sizeof(fixed_text) - 1);
	opts.root = fz_root(paths, data, size);
	fz_probe_init(&p, ctx, &opts);
	fz_probe_python(&p, "/venv", "/venv/site");
	el_probe_pip(&p);
	el_probe_frameworks(&p);
	fz_probe_release(&p);
	envlock_ctx_free(ctx);
	return 0;
}
