/*
 * The runtime and training stages: run the compiled program, read what
 * it says about the CUDA runtime, the driver and the devices, then
 * compare its losses with the CPU reference's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lock/model.h"
#include "reference.h"
#include "util/spawn.h"
#include "util/xalloc.h"
#include "verify.h"

#define EL_PROGRAM_MS 600000
#define EL_PROGRAM_OUTPUT (4u << 20)

char *el_verify_cuda_version(long v)
{
	return v > 0 ? el_xasprintf("%ld.%ld", v / 1000, (v % 1000) / 10) : el_xstrdup("none");
}

static void device_figures(el_verify_stage *st, const el_verify_report *r)
{
	cJSON *list = el_jset_arr(st->figures, "devices");

	for (int i = 0; i < r->ndev; i++) {
		cJSON *d = el_jpush_obj(list);

		el_jset_str(d, "name", r->dev[i].name);
		el_jset_str(d, "compute_capability", r->dev[i].cc);
		el_jset_int(d, "memory_bytes", (long long)r->dev[i].memory);
		el_jset_str(d, "bus", r->dev[i].bus);
	}
}

/* The driver is too old for the program's runtime: say so, with the rules' fix when they know this toolkit. */
static void driver_too_old(el_verify_run *run, el_verify_stage *st, const char *drv, const char *rt)
{
	char *tail = run->toolkit_version ? el_xasprintf("CUDA %s", run->toolkit_version) : NULL;
	const envlock_finding *f = tail ? el_verify_finding(run, "driver-too-old-for-cuda", NULL, tail) : NULL;

	el_verify_set(st, ENVLOCK_VERIFY_FAIL, "driver too old: it supports CUDA %s, the program's runtime is CUDA %s (%s)",
		      drv, rt, run->report.devices_error ? run->report.devices_error : "no device usable");
	if (f) {
		el_jset_str(st->figures, "rule", f->rule);
		el_verify_fix(st, "%s (%s)", f->fix, f->message);
	} else {
		el_verify_fix(st, "install an NVIDIA driver for CUDA %s or newer (envlock never installs drivers), or name a toolkit no newer than CUDA %s to compile with",
			      rt, drv);
	}
	free(tail);
}

void el_verify_runtime(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_RUNTIME];
	el_verify_report *r = &run->report;
	el_buf out = EL_BUF_INIT(EL_PROGRAM_OUTPUT);
	char steps[16];
	const char *argv[7];
	int k = 0, rc;

	if (run->opts->cpu_only) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "CPU parts only: the program was not run");
		st->no_gpu = true;
		return;
	}
	if (!run->program) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "nothing to run: the toolchain stage did not pass");
		return;
	}
	snprintf(steps, sizeof(steps), "%d", run->steps);
	argv[k++] = run->program;
	argv[k++] = "--steps";
	argv[k++] = steps;
	if (run->cudnn_path) {
		argv[k++] = "--cudnn";
		argv[k++] = run->cudnn_path;
	}
	argv[k] = NULL;
	el_verify_progress(run, "running the training program");
	{
		el_spawn_opts so = { run->envp, 1 };

		rc = el_spawn_ex(argv, EL_PROGRAM_MS, &out, &run->exit_status, &so);
	}
	if (rc == ENVLOCK_ETIMEOUT) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the program was still running after %d s and was stopped", EL_PROGRAM_MS / 1000);
		el_buf_release(&out);
		return;
	}
	if (rc != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' could not be started", run->program);
		el_buf_release(&out);
		return;
	}
	el_verify_report_parse(r, out.data, out.len);
	run->ran = true;
	el_jset_int(st->figures, "exit_status", run->exit_status);
	if (!r->started) {
		char *first = el_verify_first_error(out.data, out.len);

		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the program did not start (exit status %d): %s", run->exit_status,
			      first ? first : "it printed nothing");
		free(first);
		el_buf_release(&out);
		return;
	}
	el_buf_release(&out);
	el_verify_judge_runtime(run);
}

void el_verify_judge_runtime(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_RUNTIME];
	const el_verify_report *r = &run->report;
	char *rt, *drv;

	rt = el_verify_cuda_version(r->runtime_version);
	drv = el_verify_cuda_version(r->driver_version);
	el_jset_str(st->figures, "runtime_version", rt);
	el_jset_str(st->figures, "driver_cuda_version", drv);
	el_jset_int(st->figures, "device_count", r->device_count);
	if (r->devices_error)
		el_jset_str(st->figures, "devices_error", r->devices_error);
	device_figures(st, r);
	if (r->device_count > 0 && r->ndev > 0) {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "CUDA runtime %s, driver for CUDA %s%s: %ld device%s, the first %s (compute capability %s, %.1f GiB)",
			      rt, drv, r->driver_version < r->runtime_version ? " (through minor version compatibility)" : "",
			      r->device_count, r->device_count == 1 ? "" : "s", r->dev[0].name,
			      r->dev[0].cc ? r->dev[0].cc : "?", (double)r->dev[0].memory / (1024.0 * 1024.0 * 1024.0));
	} else if (r->driver_version == 0) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "no GPU: no NVIDIA driver is loaded (CUDA runtime %s; %s)", rt,
			      r->devices_error ? r->devices_error : "no device");
		st->no_gpu = true;
	} else if (r->devices_error && strstr(r->devices_error, "cudaErrorNoDevice")) {
		const char *visible = getenv("CUDA_VISIBLE_DEVICES");

		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "no GPU: the driver (CUDA %s) sees no CUDA device%s%s%s", drv,
			      visible ? " (CUDA_VISIBLE_DEVICES='" : "", visible ? visible : "", visible ? "')" : "");
		st->no_gpu = true;
	} else if ((r->devices_error && strstr(r->devices_error, "cudaErrorInsufficientDriver")) ||
		   (r->driver_version > 0 && r->driver_version < r->runtime_version)) {
		driver_too_old(run, st, drv, rt);
	} else if (r->device_count < 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the program stopped before it counted the devices (exit status %d)",
			      run->exit_status);
	} else {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the CUDA runtime found no usable device: %s",
			      r->devices_error ? r->devices_error : "no reason given");
	}
	free(rt);
	free(drv);
}

static void *reference_thread(void *data)
{
	el_verify_run *run = data;
	el_mlp_shape shape = el_mlp_default_shape();
	struct timespec t0;
	el_mlp m;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	el_mlp_setup(&m, &shape);
	el_mlp_train(&m, run->steps, run->cpu.losses);
	el_mlp_release(&m);
	run->cpu.seconds = el_verify_seconds_since(&t0);
	return NULL;
}

void el_verify_reference_start(el_verify_run *run)
{
	run->cpu.losses = el_xcalloc((size_t)run->steps, sizeof(float));
	el_verify_progress(run, "training the CPU reference (beside the compile)");
	run->cpu.started = pthread_create(&run->cpu.thread, NULL, reference_thread, run) == 0;
}

void el_verify_reference_join(el_verify_run *run)
{
	if (run->cpu.started) {
		pthread_join(run->cpu.thread, NULL);
		run->cpu.started = false;
		run->cpu.done = true;
	}
}

void el_verify_training(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_TRAINING];
	const el_verify_stage *rt = &run->v->stage[EL_VERIFY_RUNTIME];
	el_mlp_shape shape = el_mlp_default_shape();
	float *reference = el_xcalloc((size_t)run->steps, sizeof(float));
	double first, tail, secs;
	struct timespec t0;
	el_mlp m;
	char num[32];

	el_verify_reference_join(run);
	if (run->cpu.done) {
		memcpy(reference, run->cpu.losses, (size_t)run->steps * sizeof(float));
		secs = run->cpu.seconds;
	} else {
		el_verify_progress(run, "training the CPU reference");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		el_mlp_setup(&m, &shape);
		el_mlp_train(&m, run->steps, reference);
		el_mlp_release(&m);
		secs = el_verify_seconds_since(&t0);
	}
	first = reference[0];
	tail = el_verify_tail_mean(reference, run->steps);
	el_jset_int(st->figures, "steps", run->steps);
	el_jset(st->figures, "tolerance", cJSON_CreateNumber(ENVLOCK_VERIFY_TOLERANCE));
	el_jset(st->figures, "loss_fall_needed", cJSON_CreateNumber(ENVLOCK_VERIFY_LOSS_FALL));
	snprintf(num, sizeof(num), "%.4g", first);
	el_jset(st->figures, "cpu_first_loss", cJSON_CreateNumber(strtod(num, NULL)));
	snprintf(num, sizeof(num), "%.4g", tail);
	el_jset(st->figures, "cpu_last_loss", cJSON_CreateNumber(strtod(num, NULL)));
	snprintf(num, sizeof(num), "%.3g", secs);
	el_jset(st->figures, "cpu_seconds", cJSON_CreateNumber(strtod(num, NULL)));

	if (!(first / tail >= ENVLOCK_VERIFY_LOSS_FALL)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL,
			      "the CPU reference did not learn: loss %.4g -> %.4g in %d steps (%.0f times lower needed); this machine's C maths library misbehaves",
			      first, tail, run->steps, ENVLOCK_VERIFY_LOSS_FALL);
	} else if (rt->pub.status != ENVLOCK_VERIFY_PASS) {
		char ref[160];

		snprintf(ref, sizeof(ref), "the CPU reference trained alone: loss %.4g -> %.4g in %d steps (%.3g times lower, %.0f needed)",
			 first, tail, run->steps, first / tail, ENVLOCK_VERIFY_LOSS_FALL);
		if (rt->no_gpu) {
			el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "%s: %s, with no GPU to compare it with",
				      run->opts->cpu_only ? "CPU parts only" : "no GPU", ref);
			st->no_gpu = true;
		} else {
			el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "the runtime stage did not pass; %s", ref);
		}
	} else {
		if (!run->report.done)
			el_jset_int(st->figures, "program_exit_status", run->exit_status);
		el_verify_judge_training(st, &run->report, reference, run->steps);
	}
	free(reference);
}
