/* envlock diff: what differs between two lockfiles, or how a fleet drifts. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "util/xalloc.h"

static void usage(FILE *out)
{
	fputs("usage: envlock diff [options] A B\n"
	      "       envlock diff [options] F1 F2 F3 ...\n"
	      "\n"
	      "  A B             what differs from A to B, each difference breaking, risky or info\n"
	      "  F1 F2 F3 ...    three or more: a drift table (majority value, files that differ)\n"
	      "  --json          print the result as JSON\n"
	      "  --all           also list identical items\n"
	      "  --only SECTION  compare only SECTION (repeatable)\n"
	      "  --ignore SECTION  leave SECTION out (repeatable)\n"
	      "\n"
	      "sections: ", out);
	for (size_t i = 0; i < envlock_diff_section_count(); i++)
		fprintf(out, "%s%s", i ? ", " : "", envlock_diff_section_name(i));
	fputs("\nexit status: 0 identical, 1 different, 2 error\n", out);
}

/*
 * Load files[0..n) into locks[] (envlock_diff_load); say what they say in the
 * files' order, the warnings of those that loaded and the first error.
 * On an error, free them all.
 */
static int load_all(char **files, int n, envlock_lock **locks)
{
	envlock_loaded out[2];
	int rc = 0;

	envlock_diff_load(out, files, (size_t)n, cmd_lock_load_noting);
	for (int i = 0; i < n; i++) {
		if (!out[i].error && out[i].warning)
			fputs(out[i].warning, stderr);
		if (out[i].error && rc == 0) {
			cmd_error("diff: %s", out[i].error);
			rc = -1;
		}
		/* after an error, out keeps the lock, for envlock_loaded_release */
		locks[i] = rc ? NULL : out[i].lock;
		if (!rc)
			out[i].lock = NULL;
	}
	if (rc)
		for (int i = 0; i < n; i++)
			envlock_lock_free(locks[i]);
	envlock_loaded_release(out, (size_t)n);
	return rc;
}

static int diff_two(envlock_ctx *ctx, char **files, const envlock_diff_opts *opts, int json)
{
	envlock_lock *l[2] = { NULL, NULL };
	envlock_diff *d = NULL;
	int rc = CMD_USAGE;

	if (load_all(files, 2, l))
		return CMD_USAGE;
	if (envlock_diff_locks(&d, ctx, l[0], files[0], l[1], files[1], opts) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		goto done;
	}
	if ((json ? envlock_diff_print_json(d, ctx, stdout)
		  : envlock_diff_print(d, ctx, stdout, cmd_print_flags())) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		goto done;
	}
	rc = envlock_diff_identical(d) ? CMD_OK : CMD_DIFFER;
done:
	envlock_diff_free(d);
	envlock_lock_free(l[0]);
	envlock_lock_free(l[1]);
	return rc;
}

/*
 * A fleet: the files loaded and added to the table in parallel
 * (envlock_diff_load); what they say (warnings, the first error) is said in the
 * files' order, after them all.
 */
static int drift(envlock_ctx *ctx, char **files, int n, const envlock_diff_opts *opts, int json)
{
	envlock_drift *d = NULL;
	envlock_loaded *out = NULL;
	size_t failed;
	int rc = CMD_USAGE;

	if (envlock_drift_new(&d, ctx, opts) != 0 ||
	    envlock_drift_expect(d, ctx, (const char *const *)files, (size_t)n) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		envlock_drift_free(d);
		return CMD_USAGE;
	}
	out = el_xcalloc((size_t)n, sizeof(*out));
	failed = envlock_drift_load(d, out, files, (size_t)n, cmd_lock_load_noting);
	for (size_t i = 0; i < failed; i++)
		if (out[i].warning)
			fputs(out[i].warning, stderr);
	if (failed < (size_t)n) {
		cmd_error("diff: %s", out[failed].error);
		goto done;
	}
	if (envlock_drift_finish(d, ctx) != 0 ||
	    (json ? envlock_drift_print_json(d, ctx, stdout)
		  : envlock_drift_print(d, ctx, stdout, cmd_print_flags())) != 0) {
		cmd_error("diff: %s", envlock_error_last(ctx));
		goto done;
	}
	rc = envlock_drift_drifting(d) ? CMD_DIFFER : CMD_OK;
done:
	envlock_loaded_release(out, (size_t)n);
	free(out);
	envlock_drift_free(d);
	return rc;
}

static const cmd_choices sections = { "not a section", "sections", envlock_diff_section_count, envlock_diff_section_name };


int cmd_diff(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "only", required_argument, NULL, 'o' },
		{ "ignore", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char **only = NULL, **ignore = NULL;
	envlock_diff_opts opts;
	envlock_rules *rules = NULL;
	int c, json = 0, nfiles, rc;

	memset(&opts, 0, sizeof(opts));
	/* options may follow the files: envlock diff A B --json */
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'a': opts.all = 1; break;
		case 'o': cmd_push_arg(&only, &opts.only_count, optarg); break;
		case 'i': cmd_push_arg(&ignore, &opts.ignore_count, optarg); break;
		case 'h': usage(stdout); rc = CMD_OK; goto out;
		default: rc = cmd_bad_option("diff", argv, usage); goto out;
		}
	}
	opts.only = only;
	opts.ignore = ignore;
	nfiles = argc - optind;
	rc = CMD_USAGE;
	if (nfiles < 2) {
		cmd_error("diff: expected two lockfiles (or more for a drift table), got %d", nfiles);
		goto out;
	}
	if ((rc = cmd_check_choices("diff", "--only", only, opts.only_count, &sections)) != 0 ||
	    (rc = cmd_check_choices("diff", "--ignore", ignore, opts.ignore_count, &sections)) != 0 ||
	    (rc = envlock_rules_load_default(&rules, ctx)) != 0)
		goto out;
	opts.rules = rules;
	rc = nfiles == 2 ? diff_two(ctx, argv + optind, &opts, json)
			 : drift(ctx, argv + optind, nfiles, &opts, json);
out:
	envlock_rules_free(rules);
	free(only);
	free(ignore);
	return rc;
}
