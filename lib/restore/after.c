/*
 * After apply: probe this machine again (the locked environment: its conda
 * prefix and Python) and compare it with the lock the way `envlock diff`
 * does, over the sections restore works on. What is left is printed; a
 * breaking difference means the restore is not done.
 */
#include <stdio.h>

#include "envlock/check.h"
#include "envlock/diff.h"
#include "plan.h"
#include "util/text.h"

int envlock_restore_remaining(size_t *breaking, envlock_restore *r, envlock_ctx *ctx,
			      const envlock_lock *lock, FILE *stream, unsigned flags)
{
	static const char *const sections[] = { "gpu", "cuda", "cudnn", "python", "conda", "pip", "frameworks" };
	envlock_probe_opts popts;
	envlock_diff_opts dopts = { 0 };
	envlock_rules *rules = NULL;
	envlock_lock *live = NULL;
	envlock_diff *d = NULL;
	size_t shown = 0;
	int rc;

	*breaking = 0;
	/* the locked environment, which apply may have made: the Python the lock names, not the first on PATH */
	el_restore_env_probe(r, &popts);
	dopts.only = sections;
	dopts.only_count = sizeof(sections) / sizeof(sections[0]);
	if ((rc = envlock_rules_load_default(&rules, ctx)) != 0 ||
	    (rc = envlock_lock_probe(&live, ctx, &popts)) != 0)
		goto done;
	dopts.rules = rules;
	if ((rc = envlock_diff_locks(&d, ctx, lock, "lock", live, "this machine", &dopts)) != 0)
		goto done;
	*breaking = envlock_diff_tally(d, ENVLOCK_SEV_BREAKING);
	for (size_t i = 0; i < envlock_diff_count(d); i++) {
		const envlock_diff_entry *e = envlock_diff_get(d, i);

		if (e->change == ENVLOCK_DIFF_SAME || e->severity < ENVLOCK_SEV_RISKY)
			continue;
		if (!shown++)
			fputs("\nStill different from the lock:\n", stream);
		fprintf(stream, "  %s%-8s%s %s ",
			(flags & ENVLOCK_PRINT_COLOR) ? (e->severity == ENVLOCK_SEV_BREAKING ? "\033[31m" : "\033[33m") : "",
			envlock_severity_name(e->severity), (flags & ENVLOCK_PRINT_COLOR) ? "\033[0m" : "", e->section);
		/* keys and values come from the lock and the machine: escaped for the terminal */
		el_term_put(stream, e->key);
		fputs(": ", stream);
		el_term_put(stream, e->a ? e->a : "(none)");
		fputs(" -> ", stream);
		el_term_put(stream, e->b ? e->b : "(none)");
		if (e->reason) {
			fputs(" — ", stream);
			el_term_put(stream, e->reason);
		}
		fputc('\n', stream);
	}
	fprintf(stream, "%sthis machine against the lock: %s\n", shown ? "" : "\n", envlock_diff_verdict(d));
done:
	envlock_diff_free(d);
	envlock_lock_free(live);
	envlock_rules_free(rules);
	return rc;
}
