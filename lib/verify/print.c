/* envlock verify's result for a person, as JSON, and in a lockfile. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "envlock/diff.h"
#include "lock/model.h"
#include "util/error.h"
#include "verify.h"

static const char *result_name(envlock_verify_outcome o)
{
	return o == ENVLOCK_VERIFY_OK ? "pass" : o == ENVLOCK_VERIFY_NO_GPU ? "no-gpu" : "fail";
}

/*
 * The record's "exit_status": what `envlock verify` exits with for this
 * outcome, a field of the lockfile format (schemas/envlock.lock.schema.json).
 */
static int recorded_exit_status(envlock_verify_outcome o)
{
	return o == ENVLOCK_VERIFY_OK ? 0 : o == ENVLOCK_VERIFY_NO_GPU ? 3 : 1;
}

/* The whole result as one JSON object (the same for --json and the lock's "verify"). */
static cJSON *to_json(const envlock_verify *v)
{
	cJSON *doc = el_jnew_obj(), *stages;
	envlock_verify_outcome o = envlock_verify_result(v);

	el_jset_int(doc, "envlock_verify", 1);
	el_jset_str(doc, "result", result_name(o));
	el_jset_int(doc, "exit_status", recorded_exit_status(o));
	el_jset_int(doc, "steps", v->steps);
	stages = el_jset_arr(doc, "stages");
	for (int i = 0; i < EL_VERIFY_STAGES; i++) {
		const el_verify_stage *st = &v->stage[i];
		cJSON *s = el_jpush_obj(stages);
		cJSON *fig = cJSON_Duplicate(st->figures, 1);

		if (!fig)
			el_oom();
		el_jset_str(s, "stage", st->pub.name);
		el_jset_str(s, "status", envlock_verify_status_name(st->pub.status));
		el_jset_str(s, "reason", st->pub.reason ? st->pub.reason : "");
		if (st->pub.fix)
			el_jset_str(s, "fix", st->pub.fix);
		el_jset(s, "figures", fig);
	}
	return doc;
}

int envlock_verify_print_json(const envlock_verify *v, envlock_ctx *ctx, FILE *out)
{
	el_buf b = EL_BUF_INIT((size_t)64 << 20);
	cJSON *doc = to_json(v);
	int rc = el_json_write_term(doc, &b, 2);

	cJSON_Delete(doc);
	if (rc == 0 && (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0))
		rc = el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	el_buf_release(&b);
	return rc;
}

int envlock_verify_print(const envlock_verify *v, envlock_ctx *ctx, FILE *out, unsigned flags)
{
	static const char *const tint[] = { "\033[32m", "\033[33m", "\033[1;31m" };
	bool colour = (flags & ENVLOCK_PRINT_COLOR) != 0;
	envlock_verify_outcome o = envlock_verify_result(v);

	for (int i = 0; i < EL_VERIFY_STAGES; i++) {
		const envlock_verify_stage *st = &v->stage[i].pub;

		fprintf(out, "%-10s %s%-8s%s %s\n", st->name, colour ? tint[st->status] : "",
			envlock_verify_status_name(st->status), colour ? "\033[0m" : "", st->reason ? st->reason : "");
		if (st->fix)
			fprintf(out, "%20sfix: %s\n", "", st->fix);
	}
	if (o == ENVLOCK_VERIFY_OK) {
		fputs("verified: this machine compiles, runs and trains the CUDA program, and its losses match the CPU reference\n", out);
	} else if (o == ENVLOCK_VERIFY_NO_GPU) {
		fputs("no GPU: every stage that can run without one passed; the GPU stages were not proven\n", out);
	} else {
		fputs("failed:", out);
		for (int i = 0; i < EL_VERIFY_STAGES; i++)
			if (v->stage[i].pub.status == ENVLOCK_VERIFY_FAIL)
				fprintf(out, " %s", v->stage[i].pub.name);
		fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	return 0;
}

int envlock_lock_record_verify(envlock_lock *lock, envlock_ctx *ctx, const envlock_verify *v)
{
	(void)ctx;
	cJSON_DeleteItemFromObjectCaseSensitive(lock->doc, "verify");
	el_jset(lock->doc, "verify", to_json(v));
	el_lock_touch(lock);
	return 0;
}
