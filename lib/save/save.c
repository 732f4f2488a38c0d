/* envlock_save: probe, refuse what lacks a request, record checks (and verify), write. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/check.h"
#include "envlock/save.h"
#include "lock/model.h"
#include "redact/redact.h"
#include "util/error.h"

/* Tell each request error; the context keeps the first (and how many more). */
static int refuse_request_errors(envlock_ctx *ctx, const envlock_lock *lock, const envlock_save_opts *opts)
{
	size_t n = envlock_lock_error_count(lock);

	if (opts->on_request_error)
		for (size_t i = 0; i < n; i++)
			opts->on_request_error(envlock_lock_error(lock, i), opts->request_error_data);
	if (n == 1)
		return el_error_set(ctx, ENVLOCK_ERROR, "%s", envlock_lock_error(lock, 0));
	return el_error_set(ctx, ENVLOCK_ERROR, "%s (and %zu more problems with what was asked for)",
			    envlock_lock_error(lock, 0), n - 1);
}

static int record_verify(envlock_verify **out, envlock_ctx *ctx, envlock_lock *lock,
			 const envlock_save_opts *opts)
{
	envlock_verify_opts vo;
	int rc;

	memset(&vo, 0, sizeof(vo));
	vo.live = lock;
	vo.cuda_home = opts->probe.cuda_home;
	if ((rc = envlock_verify_run(out, ctx, &vo)) != 0)
		return rc;
	return envlock_lock_record_verify(lock, ctx, *out);
}

typedef struct {
	void (*fn)(const char *message, void *data);
	void *data;
} warning_to;

/* A warning quotes what it refuses (an index URL with a token in its query): told without the secret. */
static void masked_warning(const char *message, void *data)
{
	const warning_to *to = data;
	char *masked = el_redact_message(message);

	to->fn(masked ? masked : message, to->data);
	free(masked);
}

int envlock_save(envlock_lock **out, envlock_verify **verified, envlock_ctx *ctx,
		 const envlock_save_opts *opts)
{
	envlock_lock *lock = NULL;
	envlock_rules *rules = NULL;
	envlock_verify *v = NULL;
	envlock_probe_opts probe = opts->probe;
	warning_to to = { opts->probe.on_warning, opts->probe.warning_data };
	int rc;

	*out = NULL;
	if (verified)
		*verified = NULL;
	if (opts->verify && opts->probe.root)
		return el_error_set(ctx, ENVLOCK_EINVAL,
				    "verify runs programs on this machine; it cannot be combined with a root");
	if (probe.on_warning) {
		probe.on_warning = masked_warning;
		probe.warning_data = &to;
	}
	if ((rc = envlock_lock_probe(&lock, ctx, &probe)) != 0)
		return rc;
	/* what was asked for is not all there: write nothing rather than a partial lock */
	if (envlock_lock_error_count(lock) > 0) {
		rc = refuse_request_errors(ctx, lock, opts);
		goto done;
	}
	/* the rule results at save time travel with the lock */
	if ((rc = envlock_rules_load_default(&rules, ctx)) != 0 ||
	    (rc = envlock_lock_record_checks(lock, ctx, rules)) != 0)
		goto done;
	if (opts->verify && (rc = record_verify(&v, ctx, lock, opts)) != 0)
		goto done;
	/* secrets never reach a lock; with redact, nothing that names a person or a machine either */
	if (opts->redact)
		el_redact_all(lock->doc);
	else
		el_redact_secrets(lock->doc);
	el_lock_touch(lock);
	if (opts->path && (rc = envlock_lock_write(lock, ctx, opts->path)) != 0)
		goto done;
	*out = lock;
	lock = NULL;
	if (verified) {
		*verified = v;
		v = NULL;
	}
done:
	envlock_verify_free(v);
	envlock_rules_free(rules);
	envlock_lock_free(lock);
	return rc;
}

int envlock_save_print_json(const envlock_lock *lock, envlock_ctx *ctx, const char *path, FILE *out)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 20);
	envlock_hash_stats st;
	cJSON *doc = el_jnew_obj(), *hashed;
	int rc;

	envlock_lock_hash_stats(lock, &st);
	el_jset_str(doc, "id", envlock_lock_id(lock));
	el_jset_str(doc, "path", path);
	el_jset_int(doc, "warnings", (long long)envlock_lock_warning_count(lock));
	hashed = el_jset_obj(doc, "hashed");
	el_jset_int(hashed, "files", (long long)st.files);
	el_jset_int(hashed, "cached", (long long)st.cached);
	el_jset_int(hashed, "bytes_read", (long long)st.bytes_read);
	rc = el_json_write_term(doc, &b, 2);
	cJSON_Delete(doc);
	if (rc != 0)
		rc = el_error_set(ctx, ENVLOCK_ELIMIT, "the summary of '%s' is larger than 1 MiB", path);
	else if (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0)
		rc = el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	el_buf_release(&b);
	return rc;
}
