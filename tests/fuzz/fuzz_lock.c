/*
 * A lockfile from elsewhere: load (JSON, format, schema), the untrusted
 * check restore and export make, then what show, check, diff and export
 * do with what loaded. Input: one lock, or two split at FZ_SEP (diffed).
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "lock/untrusted.h"

static FILE *devnull;
static envlock_rules *rules;

static envlock_lock *load(envlock_ctx *ctx, const char *name, const fz_part *part)
{
	envlock_lock *lock = NULL;

	if (envlock_lock_load(&lock, ctx, fz_write(name, part->data, part->len)) != 0)
		return NULL;
	return lock;
}

static void consume(envlock_ctx *ctx, envlock_lock *lock)
{
	envlock_findings *f = NULL;

	(void)envlock_lock_id(lock);
	(void)el_lock_check_untrusted(ctx, lock);
	envlock_show_print(lock, ctx, devnull);
	if (envlock_check(&f, ctx, rules, lock) == 0) {
		envlock_show_findings(f, ctx, devnull, 0);
		envlock_show_findings_json(f, ctx, devnull);
	}
	envlock_findings_free(f);
	for (int fmt = ENVLOCK_EXPORT_CONDA_EXPLICIT; fmt <= ENVLOCK_EXPORT_DOCKERFILE; fmt++) {
		char *out = NULL;
		size_t len;

		if (envlock_export(&out, &len, ctx, lock, (envlock_export_format)fmt, NULL) == 0)
			free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	envlock_ctx *ctx = fz_ctx();
	envlock_lock *a, *b = NULL;
	fz_part parts[2];
	size_t n = fz_split(data, size, parts, 2);

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!devnull || envlock_rules_load_default(&rules, ctx) != 0)
			abort();
	}
	if ((a = load(ctx, "a.lock.json", &parts[0])) != NULL) {
		envlock_diff_opts opts = { 0 };
		envlock_diff *d = NULL;

		consume(ctx, a);
		if (n > 1 && (b = load(ctx, "b.lock.json", &parts[1])) != NULL)
			consume(ctx, b);
		opts.rules = rules;
		if (envlock_diff_locks(&d, ctx, a, "a", b ? b : a, "b", &opts) == 0) {
			envlock_diff_print(d, ctx, devnull, 0);
			envlock_diff_print_json(d, ctx, devnull);
		}
		envlock_diff_free(d);
	}
	envlock_lock_free(a);
	envlock_lock_free(b);
	envlock_ctx_free(ctx);
	return 0;
}
