/* envlock check: run the compatibility rules on a lockfile or on this machine. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock check [FILE] [--root DIR] [--rules FILE] [--json]\n"
	      "\n"
	      "  FILE          the lockfile to check; without it, this machine is probed\n"
	      "  --root DIR    probe the tree under DIR (when no FILE is given)\n"
	      "  --rules FILE  use these rules instead of the built-in ones\n"
	      "  --json        print the findings as JSON\n"
	      "\n"
	      "Exit status: 0 when nothing is breaking, 1 when something is, 2 on error.\n", out);
}

int cmd_check(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "rules", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_probe_opts opts;
	envlock_lock *lock = NULL;
	envlock_rules *rules = NULL;
	envlock_findings *found = NULL;
	const char *rules_path = NULL;
	int c, rc, json = 0;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': opts.root = optarg; break;
		case 'R': rules_path = optarg; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("check", argv, usage);
		}
	}
	if ((rc = cmd_lock_arg(&lock, ctx, "check", argc, argv, optind, &opts)) != 0 ||
	    (rc = rules_path ? envlock_rules_load(&rules, ctx, rules_path) : envlock_rules_load_default(&rules, ctx)) != 0 ||
	    (rc = envlock_check(&found, ctx, rules, lock)) != 0 ||
	    (rc = json ? envlock_show_findings_json(found, ctx, stdout)
		       : envlock_show_findings(found, ctx, stdout, cmd_print_flags())) != 0)
		goto done;
	rc = envlock_findings_worst(found) == ENVLOCK_SEV_BREAKING && envlock_findings_count(found) ? CMD_FAIL : CMD_OK;
done:
	envlock_findings_free(found);
	envlock_rules_free(rules);
	envlock_lock_free(lock);
	return rc;
}
