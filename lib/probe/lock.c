/* envlock_lock_probe: run every probe, in order, into a new lock. */
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/error.h"
#include "util/root.h"
#include "util/xalloc.h"

static int check_opt_path(envlock_ctx *ctx, const char *what, const char *path)
{
	if (path && path[0] != '/')
		return el_error_set(ctx, ENVLOCK_EINVAL, "the %s '%s' must be an absolute path", what, path);
	return 0;
}

int envlock_lock_probe(envlock_lock **out, envlock_ctx *ctx, const envlock_probe_opts *opts)
{
	static const envlock_probe_opts defaults;
	envlock_lock *lock;
	el_probe p;
	char *warning = NULL;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if ((rc = check_opt_path(ctx, "conda prefix", opts->conda_prefix)) != 0 ||
	    (rc = check_opt_path(ctx, "Python executable", opts->python)) != 0 ||
	    (rc = check_opt_path(ctx, "CUDA toolkit folder", opts->cuda_home)) != 0)
		return rc;
	memset(&p, 0, sizeof(p));
	p.ctx = ctx;
	p.opts = opts;
	if ((rc = el_root_init(&p.root, ctx, opts->root)) != 0)
		return rc;
	el_root_set_stable(&p.root); /* a probe only reads */

	lock = el_xcalloc(1, sizeof(*lock));
	lock->doc = p.doc = el_jnew_obj();
	el_jset_int(p.doc, "envlock", ENVLOCK_FORMAT_VERSION);
	el_lock_set_created(p.doc);
	p.warnings = el_jset_arr(p.doc, "warnings");
	lock->errors = p.errors = cJSON_CreateArray();
	if (!p.errors)
		el_oom();

	/* a problem with envlock's own cache says nothing about the machine: stderr only */
	p.hashes = el_hashcache_open(opts->no_cache, &warning);
	if (warning && opts->on_warning)
		opts->on_warning(warning, opts->warning_data);
	free(warning);

	el_probe_environ(&p);
	el_probe_os(&p);
	el_probe_glibc(&p);
	el_probe_container(&p);
	el_probe_hardware(&p);
	el_probe_limits(&p);
	el_probe_ldconfig(&p);
	el_probe_driver(&p);
	el_probe_gpus(&p);
	el_probe_python(&p);
	el_probe_conda(&p);
	el_probe_pip(&p);
	el_probe_frameworks(&p);
	el_probe_loads_start(&p); /* resolves while the probes below run */
	el_probe_pip_origins(&p);
	el_probe_cuda(&p);
	el_probe_cudnn(&p);
	el_probe_compilers(&p);
	el_probe_checkpoints(&p);
	el_probe_configs(&p);
	el_probe_repos(&p);
	el_probe_dpkg(&p);
	el_probe_loads_finish(&p);

	el_hashcache_stats(p.hashes, &lock->stats);
	el_hashcache_save(p.hashes);
	el_hashcache_free(p.hashes);
	el_ldcache_free(p.ldcache);
	el_dpkg_free(p.dpkg);
	free(p.ldcache_status);
	el_strv_free(p.environ);
	free(p.py.prefix);
	free(p.py.kind);
	free(p.py.version);
	el_strv_free(p.py.site_dirs);
	el_root_thread_done();
	el_root_release(&p.root);

	el_lock_touch(lock); /* its id is computed when written or asked for */
	*out = lock;
	return 0;
}
