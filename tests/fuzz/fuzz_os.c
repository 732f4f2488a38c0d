/* os-release, the kernel's release and the host name (el_probe_os) over a scratch root. Input: files split at FZ_SEP. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/etc/os-release", "/usr/lib/os-release", "/proc/sys/kernel/osrelease",
		"/etc/hostname", "/etc/debian_version", NULL };
	envlock_probe_opts opts = { 0 };
	envlock_ctx *ctx = fz_ctx();
	el_probe p;

	opts.root = fz_root(paths, data, size);
	fz_probe_init(&p, ctx, &opts);
	el_probe_os(&p);
	fz_probe_release(&p);
	envlock_ctx_free(ctx);
	return 0;
}
