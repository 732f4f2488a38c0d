/*
 * envlock verify: the run around the stages (toolchain.c, cudnn.c,
 * runtime.c), the lock stage, and the result's lifecycle.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "envlock/diff.h"
#include "diff/diff.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/root.h"
#include "util/xalloc.h"
#include "verify.h"

extern char **environ;

static const char *const stage_names[EL_VERIFY_STAGES] = { "toolchain", "runtime", "training", "cudnn", "torch",
							    "conv", "mmcv", "openmmlab", "lock" };

/* ---- the private folder ---- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Remove the folder verify made (only it and what nvcc left in it: nothing else is reachable, FTW_PHYS). */
static void remove_dir(const char *dir)
{
	if (dir)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int make_dir(el_verify_run *run)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpl = el_xasprintf("%s/envlock-verify.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");

	if (!mkdtemp(tmpl)) {
		int rc = el_error_set(run->ctx, ENVLOCK_EIO, "'%s': cannot make a private folder: %s", tmpl,
				      el_strerror(errno));

		free(tmpl);
		return rc;
	}
	run->dir = tmpl;
	return 0;
}

/* envlock's environment, with TMPDIR in the private folder and no CUDA JIT cache in the home folder. */
static char **make_envp(const char *dir)
{
	size_t n = 0, k = 0;
	char **envp;

	while (environ && environ[n])
		n++;
	envp = el_xcalloc(n + 3, sizeof(*envp));
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "TMPDIR=", 7) != 0 && strncmp(environ[i], "CUDA_CACHE_DISABLE=", 19) != 0)
			envp[k++] = el_xstrdup(environ[i]);
	envp[k++] = el_xasprintf("TMPDIR=%s", dir);
	envp[k++] = el_xstrdup("CUDA_CACHE_DISABLE=1");
	envp[k] = NULL;
	return envp;
}

/* ---- the lock stage ---- */

void el_verify_lock(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_LOCK];
	envlock_rules *rules = NULL;
	envlock_diff *d = NULL;
	envlock_diff_opts dopts;
	const char *name = run->opts->lock_name ? run->opts->lock_name : "the lockfile";
	size_t breaking, risky, info;
	cJSON *list;

	if (!run->opts->lock) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "no lockfile given");
		return;
	}
	el_jset_str(st->figures, "lockfile", name);
	el_jset_str(st->figures, "lock_id", envlock_lock_id(run->opts->lock));
	memset(&dopts, 0, sizeof(dopts));
	if (envlock_rules_load_default(&rules, run->ctx) != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", envlock_error_last(run->ctx));
		return;
	}
	dopts.rules = rules;
	if (envlock_diff_locks(&d, run->ctx, run->opts->lock, name, run->live_lock, "this machine", &dopts) != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", envlock_error_last(run->ctx));
		envlock_rules_free(rules);
		return;
	}
	breaking = envlock_diff_tally(d, ENVLOCK_SEV_BREAKING);
	risky = envlock_diff_tally(d, ENVLOCK_SEV_RISKY);
	info = envlock_diff_tally(d, ENVLOCK_SEV_INFO);
	el_jset_int(st->figures, "breaking", (long long)breaking);
	el_jset_int(st->figures, "risky", (long long)risky);
	el_jset_int(st->figures, "info", (long long)info);
	list = el_jset_arr(st->figures, "differences");
	for (size_t i = 0, shown = 0; i < envlock_diff_count(d) && shown < 20; i++) {
		const envlock_diff_entry *e = envlock_diff_get(d, i);

		if (e->severity == ENVLOCK_SEV_INFO)
			continue;
		shown++;
		el_diff_entry_json(list, e); /* a: the lock, b: this machine */
	}
	if (breaking) {
		const envlock_diff_entry *e = envlock_diff_get(d, 0); /* sorted most severe first */

		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s: %s; the first: %s %s: %s", name, envlock_diff_verdict(d),
			      e->section, e->key, e->reason ? e->reason : "");
		if (e->fix && *e->fix)
			el_verify_fix(st, "%s", e->fix);
		else
			el_verify_fix(st, "envlock diff %s with a lock of this machine (envlock save) lists every difference", name);
	} else {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "nothing breaking against %s (%s)", name, envlock_diff_verdict(d));
	}
	envlock_diff_free(d);
	envlock_rules_free(rules);
}

/* ---- the run ---- */

int envlock_verify_run(envlock_verify **out, envlock_ctx *ctx, const envlock_verify_opts *opts)
{
	static const envlock_verify_opts defaults;
	el_verify_run run;
	envlock_verify *v;
	envlock_rules *rules = NULL;
	envlock_probe_opts popts;
	char *home = NULL;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	memset(&run, 0, sizeof(run));
	run.ctx = ctx;
	run.steps = opts->steps ? opts->steps : ENVLOCK_VERIFY_DEFAULT_STEPS;
	if (run.steps < ENVLOCK_VERIFY_MIN_STEPS || run.steps > ENVLOCK_VERIFY_MAX_STEPS)
		return el_error_set(ctx, ENVLOCK_EINVAL, "%d training steps: must be from %d to %d (beyond %d, rounding differences between GPU and CPU can grow past the tolerance)",
				    run.steps, ENVLOCK_VERIFY_MIN_STEPS, ENVLOCK_VERIFY_MAX_STEPS, ENVLOCK_VERIFY_MAX_STEPS);
	if (opts->cuda_home) {
		struct stat st;

		home = realpath(opts->cuda_home, NULL);
		if (!home || stat(home, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "the CUDA toolkit folder '%s': %s", opts->cuda_home,
					  home ? "not a folder" : el_strerror(errno));
			free(home);
			return rc;
		}
	}
	if (opts->python) {
		struct stat st;

		/* a venv's bin/python is a link: it is run by the name given, which is its environment */
		if (opts->python[0] != '/')
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "the Python executable '%s': must be an absolute path", opts->python);
		else if (stat(opts->python, &st) != 0)
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "the Python executable '%s': %s", opts->python, el_strerror(errno));
		else if (!S_ISREG(st.st_mode) || access(opts->python, X_OK) != 0)
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "the Python executable '%s': not an executable file", opts->python);
		else
			rc = 0;
		if (rc != 0) {
			free(home);
			return rc;
		}
	}
	{
		/* the stages see the toolkit as a real path, so it matches the probe's */
		envlock_verify_opts *copy = el_xmalloc(sizeof(*copy));

		*copy = *opts;
		copy->cuda_home = home;
		run.opts = copy;
	}
	v = el_xcalloc(1, sizeof(*v));
	v->steps = run.steps;
	for (int i = 0; i < EL_VERIFY_STAGES; i++)
		el_verify_stage_init(&v->stage[i], stage_names[i]);
	run.v = v;

	if (opts->live) {
		run.live_lock = opts->live;
	} else {
		memset(&popts, 0, sizeof(popts));
		popts.cuda_home = home;
		popts.python = opts->python;
		el_verify_progress(&run, "probing this machine");
		if ((rc = envlock_lock_probe(&run.owned_live, ctx, &popts)) != 0)
			goto fail;
		run.live_lock = run.owned_live;
	}
	run.live = el_lock_view(run.live_lock);
	run.locked = opts->lock ? el_lock_view(opts->lock) : NULL;
	if ((rc = envlock_rules_load_default(&rules, ctx)) != 0 ||
	    (rc = envlock_check(&run.findings, ctx, rules, run.live_lock)) != 0)
		goto fail;
	if ((rc = make_dir(&run)) != 0)
		goto fail;
	run.envp = make_envp(run.dir);
	el_verify_report_init(&run.report, run.steps);

	el_verify_reference_start(&run);
	el_verify_pyenv_start(&run);
	el_verify_toolchain(&run);
	el_verify_cudnn_load(&run);
	el_verify_runtime(&run);
	el_verify_training(&run);
	el_verify_cudnn_op(&run);
	el_verify_pyenv(&run);
	el_verify_lock(&run);
	rc = 0;
	*out = v;
	v = NULL;
fail:
	el_verify_reference_join(&run);
	el_verify_pyenv_release(&run);
	free(run.cpu.losses);
	remove_dir(run.dir);
	free(run.dir);
	el_strv_free(run.envp);
	free(run.program);
	free(run.toolkit_version);
	free(run.cudnn_path);
	free(run.cudnn_summary);
	el_verify_report_release(&run.report);
	envlock_findings_free(run.findings);
	envlock_rules_free(rules);
	envlock_lock_free(run.owned_live);
	free((void *)run.opts);
	free(home);
	envlock_verify_free(v);
	return rc;
}

size_t envlock_verify_stage_count(const envlock_verify *v)
{
	return v ? EL_VERIFY_STAGES : 0;
}

const envlock_verify_stage *envlock_verify_stage_get(const envlock_verify *v, size_t i)
{
	return v && i < EL_VERIFY_STAGES ? &v->stage[i].pub : NULL;
}

envlock_verify_outcome envlock_verify_result(const envlock_verify *v)
{
	bool no_gpu = false;

	for (int i = 0; i < EL_VERIFY_STAGES; i++) {
		if (v->stage[i].pub.status == ENVLOCK_VERIFY_FAIL)
			return ENVLOCK_VERIFY_FAILED;
		no_gpu |= v->stage[i].no_gpu;
	}
	return no_gpu ? ENVLOCK_VERIFY_NO_GPU : ENVLOCK_VERIFY_OK;
}

const char *envlock_verify_status_name(envlock_verify_status s)
{
	return s == ENVLOCK_VERIFY_PASS ? "pass" : s == ENVLOCK_VERIFY_FAIL ? "fail" : "skipped";
}

void envlock_verify_free(envlock_verify *v)
{
	if (!v)
		return;
	for (int i = 0; i < EL_VERIFY_STAGES; i++)
		el_verify_stage_release(&v->stage[i]);
	free(v);
}
