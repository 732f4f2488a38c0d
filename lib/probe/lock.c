/*
 * envlock_lock_probe: run every probe, in the order of the table below,
 * and hand their sections to lib/lock, which builds the lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "probe.h"
#include "util/error.h"
#include "util/root.h"
#include "util/xalloc.h"

#define N EL_GIVES_ENVIRON
#define LD EL_GIVES_LDCACHE
#define PY EL_GIVES_PYTHON
#define CONDA EL_GIVES_CONDA
#define PIP EL_GIVES_PIP
#define FW EL_GIVES_FRAMEWORKS
#define ENVPY (N | PY | CONDA | PIP | FW) /* the Python environment, whose own CUDA the CUDA probes record */

/*
 * The probe order. A probe reads what an earlier one found only from
 * what that one gives (probe.h's EL_GIVES_*), so each row names what it
 * needs; el_probe_steps_check refuses a table in which a row needs what
 * no row above it gives. The loads resolve on a thread from their start
 * to their finish, while the probes between run.
 */
const el_probe_step el_probe_steps[] = {
	{ "environ", el_probe_environ, 0, N },
	{ "os", el_probe_os, 0, 0 },
	{ "glibc", el_probe_glibc, 0, EL_GIVES_GLIBC_DEB },
	{ "container", el_probe_container, N, 0 },
	{ "hardware", el_probe_hardware, 0, 0 },
	{ "limits", el_probe_limits, 0, 0 },
	{ "ldconfig", el_probe_ldconfig, 0, LD },
	{ "driver", el_probe_driver, 0, EL_GIVES_DRIVER },
	{ "gpus", el_probe_gpus, EL_GIVES_DRIVER, 0 },
	{ "python", el_probe_python, N, PY },
	{ "conda", el_probe_conda, N | PY, CONDA },
	{ "pip", el_probe_pip, N | PY | CONDA, PIP },
	{ "frameworks", el_probe_frameworks, PY | PIP, FW },
	{ "loads start", el_probe_loads_start, N | PY | FW, EL_GIVES_LOADS },
	{ "pip origins", el_probe_pip_origins, PIP | FW, 0 },
	{ "cuda", el_probe_cuda, ENVPY | LD, EL_GIVES_CUDA },
	{ "cudnn", el_probe_cudnn, ENVPY | LD | EL_GIVES_CUDA, 0 },
	{ "compilers", el_probe_compilers, 0, EL_GIVES_COMPILER_DEB },
	{ "checkpoints", el_probe_checkpoints, 0, 0 },
	{ "configs", el_probe_configs, PY, 0 },
	{ "repos", el_probe_repos, 0, 0 },
	{ "dpkg", el_probe_dpkg, EL_GIVES_DEBS, 0 },
	{ "loads finish", el_probe_loads_finish, EL_GIVES_LOADS, 0 },
	{ NULL, NULL, 0, 0 }
};

#undef N
#undef LD
#undef PY
#undef CONDA
#undef PIP
#undef FW
#undef ENVPY

/* The names of the EL_GIVES_* bits, for a refusal. */
static const char *const gives_names[] = {
	"the environment", "the loader cache", "the driver", "the Python environment", "the conda environment",
	"pip's distributions", "the frameworks", "the CUDA toolkits", "the loads", "glibc's file", "the compilers' files",
};

int el_probe_steps_check(const el_probe_step *steps, char *why, size_t size)
{
	unsigned given = 0;

	for (const el_probe_step *s = steps; s->name; s++) {
		unsigned missing = s->needs & ~given;

		if (missing) {
			size_t bit = 0;

			while (!(missing & (1u << bit)))
				bit++;
			snprintf(why, size, "the %s probe needs %s, which no probe before it gives", s->name,
				 bit < sizeof(gives_names) / sizeof(gives_names[0]) ? gives_names[bit] : "something");
			return -1;
		}
		given |= s->gives;
	}
	return 0;
}

static int check_opt_path(envlock_ctx *ctx, const char *what, const char *path)
{
	if (path && path[0] != '/')
		return el_error_set(ctx, ENVLOCK_EINVAL, "the %s '%s' must be an absolute path", what, path);
	return 0;
}

int el_probe_init(el_probe *p, envlock_ctx *ctx, const envlock_probe_opts *opts)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->ctx = ctx;
	p->opts = opts;
	if ((rc = el_root_init(&p->root, ctx, opts->root)) != 0)
		return rc;
	el_root_set_stable(&p->root); /* a probe only reads */
	p->warnings = cJSON_CreateArray();
	p->errors = cJSON_CreateArray();
	if (!p->warnings || !p->errors)
		el_oom();
	return 0;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
}

void el_probe_release(el_probe *p)
{
	for (int i = 0; i < EL_SEC_COUNT; i++)
		cJSON_Delete(p->sec[i]);
	cJSON_Delete(p->warnings);
	cJSON_Delete(p->errors);
	el_hashcache_free(p->hashes);
	el_ldcache_free(p->ldcache);
	el_dpkg_free(p->dpkg);
	free(p->ldcache_status);
	free(p->driver_status);
	el_strv_free(p->environ);
	el_strv_free(p->env_recorded);
	free(p->py.prefix);
	free(p->py.kind);
	free(p->py.version);
	free(p->py.executable);
	el_strv_free(p->py.site_dirs);
	free(p->conda.prefix);
	for (size_t i = 0; i < p->conda.n; i++)
		free_strs((char *[]){ p->conda.pkgs[i].name, p->conda.pkgs[i].version, p->conda.pkgs[i].build }, 3);
	free(p->conda.pkgs);
	for (size_t i = 0; i < p->pip.n; i++) {
		el_dist_found *d = &p->pip.v[i];

		free_strs((char *[]){ d->name, d->version, d->kind, d->path, d->installer, d->source }, 6);
		el_strv_free(d->tags);
	}
	free(p->pip.v);
	for (size_t i = 0; i < p->pip.noptions; i++)
		free_strs((char *[]){ p->pip.options[i].url, p->pip.options[i].from }, 2);
	free(p->pip.options);
	for (el_fw_found *f = p->fw; f && f->key; f++)
		free_strs((char *[]){ f->path, f->version, f->cuda }, 3);
	free(p->fw);
	for (size_t i = 0; i < p->cuda.n; i++)
		free_strs((char *[]){ p->cuda.v[i].home, p->cuda.v[i].layout }, 2);
	free(p->cuda.v);
	free(p->cuda.default_home);
	for (size_t i = 0; i < p->ndebs; i++)
		free_strs((char *[]){ p->debs[i].path, p->debs[i].alt }, 2);
	free(p->debs);
	el_root_thread_done();
	el_root_release(&p->root);
	memset(p, 0, sizeof(*p));
}

int envlock_lock_probe(envlock_lock **out, envlock_ctx *ctx, const envlock_probe_opts *opts)
{
	static const envlock_probe_opts defaults;
	el_lock_section parts[EL_SEC_COUNT];
	envlock_hash_stats stats;
	el_probe p;
	char *warning = NULL, why[256];
	int rc;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if ((rc = check_opt_path(ctx, "conda prefix", opts->conda_prefix)) != 0 ||
	    (rc = check_opt_path(ctx, "Python executable", opts->python)) != 0 ||
	    (rc = check_opt_path(ctx, "CUDA toolkit folder", opts->cuda_home)) != 0)
		return rc;
	if (el_probe_steps_check(el_probe_steps, why, sizeof(why)) != 0)
		return el_error_set(ctx, ENVLOCK_ERROR, "probe order: %s", why);
	if ((rc = el_probe_init(&p, ctx, opts)) != 0)
		return rc;

	/* a problem with envlock's own cache says nothing about the machine: stderr only */
	p.hashes = el_hashcache_open(opts->no_cache, &warning);
	if (warning && opts->on_warning)
		opts->on_warning(warning, opts->warning_data);
	free(warning);

	for (const el_probe_step *s = el_probe_steps; s->name; s++)
		s->run(&p);

	el_hashcache_stats(p.hashes, &stats);
	el_hashcache_save(p.hashes);
	for (int i = 0; i < EL_SEC_COUNT; i++) {
		parts[i].key = el_probe_sec_keys[i];
		parts[i].value = p.sec[i];
		p.sec[i] = NULL;
	}
	/* its id is computed when written or asked for */
	*out = el_lock_build(parts, EL_SEC_COUNT, p.warnings, p.errors, &stats, false);
	p.warnings = p.errors = NULL;
	el_probe_release(&p);
	return 0;
}
