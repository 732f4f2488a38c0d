/*
 * Restore step 10: prove the result trains, with `envlock verify` (the
 * bundled CUDA training step, checked against the CPU reference), and
 * that the restored Python environment's own python imports the locked
 * torch, runs a convolution, has mmcv's ops and imports the codebases
 * (verify's torch, conv, mmcv and openmmlab stages). It runs
 * only after this restore changed something on the live machine, or when
 * asked for with --only verify: a second restore of a restored machine
 * does no work beyond probing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envlock/verify.h"
#include "plan.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

/*
 * The restored environment's python, as the pip step installs into it:
 * --python, else the locked one (moved with --conda-target or --name);
 * NULL when there is none to run (verify then says why).
 */
static char *restored_python(const envlock_restore *r)
{
	const char *exe = r->lock->python.executable, *conda_prefix = r->lock->conda.prefix;
	char *python;

	if (r->opts.probe.python)
		python = el_xstrdup(r->opts.probe.python);
	else if (!exe)
		return NULL;
	else if (r->opts.conda_target && conda_prefix && el_starts_with(exe, conda_prefix) && exe[strlen(conda_prefix)] == '/')
		python = el_xasprintf("%s%s", r->opts.conda_target, exe + strlen(conda_prefix));
	else
		python = el_xstrdup(exe);
	if (access(python, X_OK) != 0) {
		free(python);
		return NULL;
	}
	return python;
}

static int run_verify(el_item *it, el_apply *ap)
{
	envlock_verify_opts vo = { 0 };
	envlock_verify *v = NULL;
	envlock_verify_outcome outcome;
	FILE *log = fdopen(dup(ap->log_fd), "a");
	char *python = restored_python(ap->r);
	int rc = 0;

	vo.lock = ap->r->lock_obj;
	vo.lock_name = "the lock";
	vo.python = python;
	if (envlock_verify_run(&v, ap->ctx, &vo) != 0) {
		el_item_fail(it, "%s", envlock_error_last(ap->ctx));
		if (log)
			fclose(log);
		free(python);
		return -1;
	}
	if (log) {
		envlock_verify_print(v, ap->ctx, log, 0);
		fclose(log);
	}
	outcome = envlock_verify_result(v);
	if (outcome == ENVLOCK_VERIFY_NO_GPU) {
		el_item_note(it, "no GPU here: the toolchain and CPU stages passed, and the Python environment's that could run (the report is in %s)", ap->r->log_path);
	} else if (outcome != ENVLOCK_VERIFY_OK) {
		for (size_t i = 0; i < envlock_verify_stage_count(v); i++) {
			const envlock_verify_stage *st = envlock_verify_stage_get(v, i);

			if (st->status == ENVLOCK_VERIFY_FAIL) {
				el_item_fail(it, "verify stage %s: %s%s%s", st->name, st->reason,
					     st->fix ? "; fix: " : "", st->fix ? st->fix : "");
				break;
			}
		}
		if (it->state != ENVLOCK_ITEM_FAILED)
			el_item_fail(it, "verify failed (its report is in %s)", ap->r->log_path);
		rc = -1;
	}
	envlock_verify_free(v);
	free(python);
	return rc;
}

void el_plan_verify(envlock_restore *r, el_step *s)
{
	bool changes = false, asked = false;
	el_item *it;

	for (int i = 0; i < EL_STEP_VERIFY; i++)
		for (size_t k = 0; k < r->steps[i].n; k++)
			changes |= r->steps[i].items[k].state == ENVLOCK_ITEM_DO;
	for (size_t i = 0; i < r->opts.only_count; i++)
		asked |= strcmp(r->opts.only[i], "verify") == 0;
	if (!r->root.live) {
		el_step_add(s, ENVLOCK_ITEM_OK, "not run: %s restores a tree, not this machine", el_restore_option(r, "root"));
	} else if (changes || asked) {
		it = el_step_add(s, ENVLOCK_ITEM_DO, "run envlock verify: compile and run the bundled CUDA training step, and import torch, mmcv and the codebases with the environment's python");
		it->run = run_verify;
	} else {
		el_step_add(s, ENVLOCK_ITEM_OK, "nothing changed (`envlock verify` proves this machine trains)");
	}
}
