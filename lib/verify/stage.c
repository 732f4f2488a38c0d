/*
 * What every verify stage shares: its result (status, reason, fix), the
 * rule findings of the run, progress for the caller and timing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lock/model.h"
#include "util/error.h"
#include "verify.h"

void el_verify_stage_init(el_verify_stage *st, const char *name)
{
	memset(st, 0, sizeof(*st));
	st->pub.name = name;
	st->pub.status = ENVLOCK_VERIFY_SKIPPED;
	st->figures = el_jnew_obj();
}

void el_verify_stage_release(el_verify_stage *st)
{
	free((char *)st->pub.reason);
	free((char *)st->pub.fix);
	cJSON_Delete(st->figures);
	memset(st, 0, sizeof(*st));
}

static char *vline(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		el_oom();
	/* one line, whatever a program printed */
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return s;
}

void el_verify_set(el_verify_stage *st, envlock_verify_status status, const char *fmt, ...)
{
	va_list ap;

	if (st->done)
		return;
	va_start(ap, fmt);
	st->pub.reason = vline(fmt, ap);
	va_end(ap);
	st->pub.status = status;
	st->done = true;
}

void el_verify_fix(el_verify_stage *st, const char *fmt, ...)
{
	va_list ap;

	if (st->pub.fix)
		return;
	va_start(ap, fmt);
	st->pub.fix = vline(fmt, ap);
	va_end(ap);
}

const envlock_finding *el_verify_finding(const el_verify_run *run, const char *rule,
					 const char *subject, const char *subject_end)
{
	for (size_t i = 0; i < envlock_findings_count(run->findings); i++) {
		const envlock_finding *f = envlock_findings_get(run->findings, i);
		size_t n = strlen(f->subject), m = subject_end ? strlen(subject_end) : 0;

		if (strcmp(f->rule, rule) != 0)
			continue;
		if (subject && strcmp(f->subject, subject) == 0)
			return f;
		if (subject_end && n > m && strcmp(f->subject + n - m, subject_end) == 0 && f->subject[n - m - 1] == ' ')
			return f;
	}
	return NULL;
}

void el_verify_progress(const el_verify_run *run, const char *what)
{
	if (run->opts->on_progress)
		run->opts->on_progress(what, run->opts->progress_data);
}

double el_verify_seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}
