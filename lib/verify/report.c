/*
 * What the training program prints ("key=value" lines, mlp.cu), read
 * with limits and a check of every number, and the training stage's
 * judgement of it against the CPU reference.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "verify.h"

#define EL_REPORT_MAX_LINES 100000
#define EL_REPORT_MAX_LINE 4096
#define EL_REPORT_MAX_VALUE 512

void el_verify_report_init(el_verify_report *r, int steps)
{
	memset(r, 0, sizeof(*r));
	r->runtime_version = -1;
	r->driver_version = -1;
	r->device_count = -1;
	r->first_run_ms = r->timed_run_ms = -1.0;
	r->repeatable = -1;
	r->h2d_pinned = -1;
	r->h2d_median_ms = r->h2d_best_ms = -1.0;
	r->cudnn_version = -1;
	r->cudnn_max_abs_err = -1.0;
	r->steps = steps;
	r->losses = el_xcalloc((size_t)(steps > 0 ? steps : 1), sizeof(float));
	r->seen = el_xcalloc((size_t)(steps > 0 ? steps : 1), 1);
	for (int i = 0; i < steps; i++)
		r->losses[i] = NAN;
}

void el_verify_report_release(el_verify_report *r)
{
	free(r->devices_error);
	for (int i = 0; i < r->ndev; i++) {
		free(r->dev[i].name);
		free(r->dev[i].cc);
		free(r->dev[i].bus);
	}
	free(r->shape);
	free(r->losses);
	free(r->seen);
	free(r->training_error);
	free(r->h2d_error);
	free(r->cudnn_op);
	free(r->cudnn_error);
	memset(r, 0, sizeof(*r));
}

/* an integer in [lo, hi] into a slot that is still unknown (-1): the first value stays */
static bool parse_long(const char *v, long lo, long hi, long *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return false;
	if (*out < 0)
		*out = x;
	return true;
}

static bool parse_ull(const char *v, unsigned long long *out)
{
	char *end;

	unsigned long long x;

	errno = 0;
	if (*v < '0' || *v > '9')
		return false;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return false;
	if (*out == 0)
		*out = x;
	return true;
}

/* a finite, non-negative number */
static bool parse_double(const char *v, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x) || x < 0)
		return false;
	if (*out < 0)
		*out = x;
	return true;
}

/* keep the first value only: a second line of the same key changes nothing */
static bool set_text(char **slot, const char *v)
{
	if (*slot)
		return true;
	*slot = el_xstrdup(v);
	return true;
}

/* "loss=<step> <value>": the value may be any float the GPU produced, NaN included */
static bool parse_loss(el_verify_report *r, const char *v)
{
	char *end, *num;
	long step;
	float x;

	errno = 0;
	step = strtol(v, &end, 10);
	if (errno || end == v || *end != ' ' || step < 0 || step >= r->steps)
		return false;
	num = end + 1;
	x = strtof(num, &end);
	if (end == num || *end)
		return false;
	if (!r->seen[step])
		r->nlosses++;
	r->seen[step] = 1;
	r->losses[step] = x;
	return true;
}

static bool parse_device(el_verify_report *r, const char *key, const char *v)
{
	char *end;
	long i;
	const char *field;

	errno = 0;
	i = strtol(key, &end, 10);
	if (errno || end == key || *end != '.' || i < 0 || i >= EL_VERIFY_MAX_DEVICES || i > r->ndev)
		return false;
	field = end + 1;
	if (i == r->ndev) {
		if (strcmp(field, "name") != 0)
			return false; /* each device starts with its name */
		r->ndev++;
	}
	if (strcmp(field, "name") == 0)
		return set_text(&r->dev[i].name, v);
	if (strcmp(field, "cc") == 0)
		return set_text(&r->dev[i].cc, v);
	if (strcmp(field, "bus") == 0)
		return set_text(&r->dev[i].bus, v);
	if (strcmp(field, "memory") == 0)
		return parse_ull(v, &r->dev[i].memory);
	return false;
}

static bool parse_line(el_verify_report *r, const char *key, const char *v)
{
	long l = -1;

	if (strcmp(key, "program") == 0)
		return (r->started = strcmp(v, "envlock-verify-mlp 1") == 0);
	if (!r->started)
		return false;
	if (strcmp(key, "loss") == 0)
		return parse_loss(r, v);
	if (strcmp(key, "runtime.version") == 0)
		return parse_long(v, 0, 1000000, &r->runtime_version);
	if (strcmp(key, "driver.version") == 0)
		return parse_long(v, 0, 1000000, &r->driver_version);
	if (strcmp(key, "devices.count") == 0)
		return parse_long(v, 0, 100000, &r->device_count);
	if (strcmp(key, "devices.error") == 0)
		return set_text(&r->devices_error, v);
	if (strncmp(key, "device.", 7) == 0)
		return parse_device(r, key + 7, v);
	if (strcmp(key, "training.shape") == 0)
		return set_text(&r->shape, v);
	if (strcmp(key, "training.first_run_ms") == 0)
		return parse_double(v, &r->first_run_ms);
	if (strcmp(key, "training.timed_run_ms") == 0)
		return parse_double(v, &r->timed_run_ms);
	if (strcmp(key, "training.repeatable") == 0 && parse_long(v, 0, 1, &l))
		return (r->repeatable = r->repeatable < 0 ? (int)l : r->repeatable), true;
	if (strcmp(key, "training.error") == 0)
		return set_text(&r->training_error, v);
	if (strcmp(key, "h2d.bytes") == 0)
		return parse_ull(v, &r->h2d_bytes);
	if (strcmp(key, "h2d.pinned") == 0 && parse_long(v, 0, 1, &l))
		return (r->h2d_pinned = r->h2d_pinned < 0 ? (int)l : r->h2d_pinned), true;
	if (strcmp(key, "h2d.median_ms") == 0)
		return parse_double(v, &r->h2d_median_ms);
	if (strcmp(key, "h2d.best_ms") == 0)
		return parse_double(v, &r->h2d_best_ms);
	if (strcmp(key, "h2d.error") == 0)
		return set_text(&r->h2d_error, v);
	if (strcmp(key, "cudnn.version") == 0)
		return parse_long(v, 0, 100000000, &r->cudnn_version);
	if (strcmp(key, "cudnn.op") == 0)
		return set_text(&r->cudnn_op, v);
	if (strcmp(key, "cudnn.max_abs_err") == 0) {
		/* a NaN result is a failed operation, not a bad line */
		if (strcmp(v, "nan") == 0 || strcmp(v, "-nan") == 0 || strcmp(v, "inf") == 0) {
			if (r->cudnn_max_abs_err < 0)
				r->cudnn_max_abs_err = INFINITY;
			return true;
		}
		return parse_double(v, &r->cudnn_max_abs_err);
	}
	if (strcmp(key, "cudnn.error") == 0)
		return set_text(&r->cudnn_error, v);
	if (strcmp(key, "done") == 0)
		return (r->done = strcmp(v, "1") == 0);
	return false;
}

void el_verify_report_parse(el_verify_report *r, const char *text, size_t len)
{
	const char *pos = text, *end = text + len, *line;
	size_t n, lines = 0;

	while (lines++ < EL_REPORT_MAX_LINES && el_next_line(&pos, end, &line, &n)) {
		const char *eq = memchr(line, '=', n);
		char key[64], value[EL_REPORT_MAX_VALUE];
		size_t kl, vl;

		if (!eq || n > EL_REPORT_MAX_LINE || (kl = (size_t)(eq - line)) == 0 || kl >= sizeof(key) ||
		    (vl = n - kl - 1) >= sizeof(value) || !el_is_text(line, n)) {
			r->ignored++;
			continue;
		}
		memcpy(key, line, kl);
		key[kl] = '\0';
		memcpy(value, eq + 1, vl);
		value[vl] = '\0';
		if (!parse_line(r, key, value))
			r->ignored++;
	}
}

double el_verify_tail_mean(const float *losses, int n)
{
	int k = n < 10 ? n : 10;
	double sum = 0.0;

	for (int i = n - k; i < n; i++)
		sum += losses[i];
	return k ? sum / k : NAN;
}

/* 3 significant digits */
static double sig3(double x)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3g", x);
	return strtod(buf, NULL);
}

void el_verify_judge_training(el_verify_stage *st, const el_verify_report *r,
			      const float *reference, int steps)
{
	double worst = 0.0, first, tail, fall, steps_per_s = -1.0, gbps = -1.0;
	int worst_step = 0, missing = 0, first_missing = -1;

	for (int i = 0; i < steps; i++) {
		double d;

		if (!isfinite(r->losses[i])) {
			if (first_missing < 0)
				first_missing = i;
			missing++;
			continue;
		}
		d = fabs((double)r->losses[i] - (double)reference[i]) / fabs((double)reference[i]);
		if (!(d <= worst)) {
			worst = d;
			worst_step = i;
		}
	}
	el_jset_str(st->figures, "shape", r->shape);
	el_jset_int(st->figures, "gpu_steps_reported", r->nlosses);
	if (r->timed_run_ms > 0) {
		steps_per_s = steps / (r->timed_run_ms / 1000.0);
		el_jset(st->figures, "gpu_steps_per_s", cJSON_CreateNumber(sig3(steps_per_s)));
		el_jset(st->figures, "gpu_first_run_ms", cJSON_CreateNumber(sig3(r->first_run_ms)));
	}
	if (r->h2d_median_ms > 0 && r->h2d_bytes) {
		gbps = (double)r->h2d_bytes / (r->h2d_median_ms / 1000.0) / 1e9;
		el_jset(st->figures, "h2d_gb_per_s", cJSON_CreateNumber(sig3(gbps)));
		if (r->h2d_best_ms > 0)
			el_jset(st->figures, "h2d_gb_per_s_best",
				cJSON_CreateNumber(sig3((double)r->h2d_bytes / (r->h2d_best_ms / 1000.0) / 1e9)));
		el_jset_int(st->figures, "h2d_bytes", (long long)r->h2d_bytes);
		el_jset_bool(st->figures, "h2d_pinned", r->h2d_pinned == 1);
	}
	if (r->h2d_error)
		el_jset_str(st->figures, "h2d_error", r->h2d_error);
	if (r->repeatable >= 0)
		el_jset_bool(st->figures, "gpu_repeatable", r->repeatable == 1);

	if (r->training_error) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the GPU did not train: %s", r->training_error);
		if (strstr(r->training_error, "cudaErrorUnsupportedPtxVersion"))
			el_verify_fix(st, "the driver is older than the toolkit that compiled the PTX: install a driver for this CUDA release, or name an older toolkit to compile with");
		else if (strstr(r->training_error, "cudaErrorNoKernelImageForDevice"))
			el_verify_fix(st, "nvcc made no code this GPU can run: use a toolkit that supports its compute capability");
		return;
	}
	if (missing) {
		if (r->seen[first_missing])
			el_verify_set(st, ENVLOCK_VERIFY_FAIL, "step %d's loss on the GPU is %g (%d of %d steps not finite)",
				      first_missing, (double)r->losses[first_missing], missing, steps);
		else
			el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the GPU reported %d of %d steps (the first missing is step %d)",
				      r->nlosses, steps, first_missing);
		return;
	}
	el_jset(st->figures, "gpu_max_rel_deviation", cJSON_CreateNumber(sig3(worst)));
	el_jset_int(st->figures, "gpu_max_rel_deviation_step", worst_step);
	first = r->losses[0];
	tail = el_verify_tail_mean(r->losses, steps);
	fall = first / tail;
	el_jset(st->figures, "gpu_first_loss", cJSON_CreateNumber(sig3(first)));
	el_jset(st->figures, "gpu_last_loss", cJSON_CreateNumber(sig3(tail)));
	if (!(worst <= ENVLOCK_VERIFY_TOLERANCE)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL,
			      "step %d's loss on the GPU is %.9g, the CPU reference's %.9g: a relative difference of %.2g, over the %.0e allowed",
			      worst_step, (double)r->losses[worst_step], (double)reference[worst_step], worst,
			      ENVLOCK_VERIFY_TOLERANCE);
		return;
	}
	if (!(fall >= ENVLOCK_VERIFY_LOSS_FALL)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the GPU's loss fell only %.3g times (%.4g -> %.4g) in %d steps; it must fall %.0f times",
			      fall, first, tail, steps, ENVLOCK_VERIFY_LOSS_FALL);
		return;
	}
	if (r->repeatable == 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the GPU gave other losses when the same %d steps ran again", steps);
		return;
	}
	{
		char rate[64] = "", h2d[96] = "";

		if (steps_per_s > 0)
			snprintf(rate, sizeof(rate), "; %.3g steps/s", steps_per_s);
		if (gbps > 0)
			snprintf(h2d, sizeof(h2d), "; host to device %.3g GB/s (%llu MiB%s)", gbps,
				 r->h2d_bytes >> 20, r->h2d_pinned == 1 ? ", pinned" : ", pageable");
		else if (r->h2d_error)
			snprintf(h2d, sizeof(h2d), "; no bandwidth figure (%.60s)", r->h2d_error);
		el_verify_set(st, ENVLOCK_VERIFY_PASS,
			      "%d steps on the GPU: loss %.4g -> %.4g (%.3g times lower, %.0f needed), every step within %.0e of the CPU reference (largest %.2g, step %d)%s%s",
			      steps, first, tail, fall, ENVLOCK_VERIFY_LOSS_FALL, ENVLOCK_VERIFY_TOLERANCE, worst,
			      worst_step, rate, h2d);
	}
}
