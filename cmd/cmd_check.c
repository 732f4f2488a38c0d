/* envlock check: run the compatibility rules on a lockfile or on this machine. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock check [FILE] [--root DIR] [--config FILE [--cfg-options K=V]...]... [--rules FILE] [--json]\n"
	      "\n"
	      "  FILE          the lockfile to check; without it, this machine is probed\n"
	      "  --root DIR    probe the tree under DIR (when no FILE is given)\n"
	      "  --config FILE an OpenMMLab config to check against this machine (or --root):\n"
	      "                its effective value, the files it names, what it needs installed\n"
	      "  --cfg-options K=V [K=V]...  overrides of the config, as tools/train.py takes them\n"
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
		{ "config", required_argument, NULL, 'C' },
		{ "cfg-options", required_argument, NULL, 'O' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_probe_opts opts;
	envlock_lock *lock = NULL;
	envlock_rules *rules = NULL;
	envlock_findings *found = NULL;
	const char *rules_path = NULL;
	const char **configs = NULL, **cfg_options = NULL;
	int c, rc, json = 0;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': opts.root = optarg; break;
		case 'R': rules_path = optarg; break;
		case 'j': json = 1; break;
		case 'C': cmd_push_arg(&configs, &opts.config_count, optarg); break;
		case 'O': cmd_push_arg(&cfg_options, &opts.cfg_option_count, optarg); break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("check", argv, usage);
		}
	}
	opts.configs = configs;
	opts.cfg_options = cfg_options;
	if (optind < argc && configs) {
		cmd_error("check: --config is checked against the machine probed; it cannot be combined with a lockfile");
		rc = CMD_USAGE;
		goto done;
	}
	if (cfg_options && !configs) {
		cmd_error("check: --cfg-options needs --config");
		rc = CMD_USAGE;
		goto done;
	}
	if ((rc = cmd_lock_arg(&lock, ctx, "check", argc, argv, optind, &opts)) != 0)
		goto done;
	/* a --config that cannot be read is the user's error, said as save says it */
	if (envlock_lock_error_count(lock) > 0) {
		for (size_t i = 0; i < envlock_lock_error_count(lock); i++)
			cmd_error("check: %s", envlock_lock_error(lock, i));
		rc = CMD_USAGE;
		goto done;
	}
	if ((rc = rules_path ? envlock_rules_load(&rules, ctx, rules_path) : envlock_rules_load_default(&rules, ctx)) != 0 ||
	    (rc = envlock_check(&found, ctx, rules, lock)) != 0 ||
	    (rc = json ? envlock_show_findings_json(found, ctx, stdout)
		       : envlock_show_findings(found, ctx, stdout, cmd_print_flags())) != 0)
		goto done;
	rc = envlock_findings_worst(found) == ENVLOCK_SEV_BREAKING && envlock_findings_count(found) ? CMD_FAIL : CMD_OK;
done:
	envlock_findings_free(found);
	envlock_rules_free(rules);
	envlock_lock_free(lock);
	free(configs);
	free(cfg_options);
	return rc;
}
