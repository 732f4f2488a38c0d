/* A rules file (envlock check --rules): load, then evaluate on a lock. Input: rules, FZ_SEP, a lock. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	envlock_ctx *ctx = fz_ctx();
	envlock_rules *rules = NULL;
	envlock_lock *lock = NULL;
	fz_part parts[2];
	size_t n = fz_split(data, size, parts, 2);

	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	if (envlock_rules_load(&rules, ctx, fz_write("rules.json", parts[0].data, parts[0].len)) == 0 && n > 1 &&
	    envlock_lock_load(&lock, ctx, fz_write("lock.json", parts[1].data, parts[1].len)) == 0) {
		envlock_findings *f = NULL;

		if (envlock_check(&f, ctx, rules, lock) == 0)
			envlock_show_findings(f, ctx, devnull, 0);
		envlock_findings_free(f);
	}
	envlock_lock_free(lock);
	envlock_rules_free(rules);
	envlock_ctx_free(ctx);
	return 0;
}
