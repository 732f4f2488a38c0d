/* envlock solve: which stack this machine can run, and exactly how to install it; or judge a proposed one. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock solve [LOCK | --root DIR] [--for SPEC]... [--config FILE]... [--python-version X.Y]\n"
	      "                     [--cpu] [--allow-driver-upgrade] [-n N] [--json]\n"
	      "                     [-o FILE [--pick N] [--format script|requirements]] [--name ENV]\n"
	      "       envlock solve [LOCK | --root DIR] --check --stack 'PIN...'\n"
	      "\n"
	      "  LOCK                    plan for the machine a lockfile records; without it, this machine\n"
	      "  --root DIR              plan for the tree under DIR (a mounted disk, a container image)\n"
	      "  --for SPEC              what to plan for, in pip's syntax (repeatable): mmdet==2.25.1,\n"
	      "                          'mmpose>=1.2,<1.4', mmpretrain, 'torch>=1.10'; none: torch alone\n"
	      "  --config FILE           an OpenMMLab config: the codebases its scopes and imports need\n"
	      "  --python-version X.Y    plan for this Python release only\n"
	      "  --cpu                   plan CPU stacks, also on a machine with an NVIDIA GPU\n"
	      "  --allow-driver-upgrade  plan with the newest driver branch each GPU's architecture supports\n"
	      "  -n, --stacks N          how many stacks to rank (default 3)\n"
	      "  --json                  the stacks as JSON, each layer with its source\n"
	      "  -o, --output FILE       write the best stack (or --pick N) as a script, or a requirements\n"
	      "                          file with --format requirements ('-' for stdout)\n"
	      "  --name ENV              the conda environment the commands create\n"
	      "  --check --stack 'PINS'  judge a proposed stack ('python==3.7 torch==1.10.0+cu102\n"
	      "                          mmcv-full==1.7.5 mmdet==2.25.1') on this machine\n"
	      "\n"
	      "Exit status: 0 a stack fits (--check: nothing breaking), 1 none fits (--check: something\n"
	      "breaking), 2 on error.\n", out);
}

/* The library's option names as this command line spells them. */
static const char *option_flag(const char *option)
{
	static const char *const flags[][2] = {
		{ "python", "--python-version" }, { "cpu", "--cpu" }, { "allow_driver_upgrade", "--allow-driver-upgrade" },
		{ "specs", "--for" }, { "configs", "--config" }, { "max_stacks", "-n" }, { "output", "-o" },
		{ "pick", "--pick" }, { "format", "--format" }, { "json", "--json" }, { "stack", "--stack" },
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(flags[i][0], option) == 0)
			return flags[i][1];
	return NULL;
}

/* A count option's value, 1 to max; 0 when it is not one. */
static size_t count_arg(const char *s, size_t max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < 1 || v > max)
		return 0;
	return (size_t)v;
}

static int check_stack(envlock_ctx *ctx, const envlock_lock *lock, const char *stack, const envlock_solve_opts *o, int json)
{
	envlock_findings *found = NULL;
	int rc;

	if ((rc = envlock_solve_check(&found, ctx, lock, stack, o)) != 0 ||
	    (rc = json ? envlock_show_findings_json(found, ctx, stdout)
		       : envlock_show_findings(found, ctx, stdout, cmd_print_flags())) != 0) {
		envlock_findings_free(found);
		return rc;
	}
	rc = envlock_findings_count(found) && envlock_findings_worst(found) == ENVLOCK_SEV_BREAKING ? CMD_FAIL : CMD_OK;
	envlock_findings_free(found);
	return rc;
}

int cmd_solve(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "for", required_argument, NULL, 'F' },
		{ "config", required_argument, NULL, 'C' },
		{ "python-version", required_argument, NULL, 'P' },
		{ "cpu", no_argument, NULL, 'c' },
		{ "allow-driver-upgrade", no_argument, NULL, 'D' },
		{ "stacks", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "pick", required_argument, NULL, 'k' },
		{ "format", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'N' },
		{ "check", no_argument, NULL, 'K' },
		{ "stack", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_probe_opts popts;
	envlock_solve_opts o;
	envlock_lock *lock = NULL;
	envlock_solution *sol = NULL;
	const char **specs = NULL, **configs = NULL, *output = NULL, *format = NULL, *stack = NULL;
	size_t pick = 0;
	int c, rc, json = 0, check = 0;

	memset(&popts, 0, sizeof(popts));
	memset(&o, 0, sizeof(o));
	o.option_text = option_flag;
	while ((c = getopt_long(argc, argv, "n:o:h", options, NULL)) != -1) {
		switch (c) {
		case 'r': popts.root = optarg; break;
		case 'F': cmd_push_arg(&specs, &o.nspecs, optarg); break;
		case 'C': cmd_push_arg(&configs, &o.nconfigs, optarg); break;
		case 'P': o.python = optarg; break;
		case 'c': o.cpu = 1; break;
		case 'D': o.allow_driver_upgrade = 1; break;
		case 'j': json = 1; break;
		case 'o': output = optarg; break;
		case 'f': format = optarg; break;
		case 'N': o.env_name = optarg; break;
		case 'K': check = 1; break;
		case 'S': stack = optarg; break;
		case 'n':
			if (!(o.max_stacks = count_arg(optarg, 100))) {
				cmd_error("solve: -n '%s': a number of stacks from 1 to 100", optarg);
				rc = CMD_USAGE;
				goto done;
			}
			break;
		case 'k':
			if (!(pick = count_arg(optarg, 100))) {
				cmd_error("solve: --pick '%s': a stack's rank, from 1", optarg);
				rc = CMD_USAGE;
				goto done;
			}
			break;
		case 'h': usage(stdout); rc = CMD_OK; goto done;
		default: rc = cmd_bad_option("solve", argv, usage); goto done;
		}
	}
	o.specs = specs;
	o.configs = configs;
	rc = CMD_USAGE;
	if (check != (stack != NULL))
		cmd_error("solve: --check judges the stack --stack gives: give both, or neither");
	else if (check && (o.nspecs || o.nconfigs || output))
		cmd_error("solve: --check --stack judges a stack; --for, --config and -o plan one: not both");
	else if (!output && (pick || format))
		cmd_error("solve: --pick and --format choose what -o FILE writes: give -o");
	else if (format && strcmp(format, "script") != 0 && strcmp(format, "requirements") != 0)
		cmd_error("solve: --format '%s': script or requirements", format);
	else if (output && json && strcmp(output, "-") == 0)
		cmd_error("solve: --json and -o - both write to stdout: give -o a file");
	else
		rc = 0;
	if (rc)
		goto done;
	if ((rc = cmd_lock_arg(&lock, ctx, "solve", argc, argv, optind, &popts)) != 0)
		goto done;
	if (check) {
		rc = check_stack(ctx, lock, stack, &o, json);
		goto done;
	}
	if ((rc = envlock_solve(&sol, ctx, lock, &o)) != 0)
		goto done;
	/* with -o - the script is the output; the plan goes nowhere else */
	if (!(output && strcmp(output, "-") == 0) &&
	    (rc = json ? envlock_solution_print_json(sol, ctx, stdout)
		       : envlock_solution_print(sol, ctx, stdout, cmd_print_flags(), cmd_term_width(stdout))) != 0)
		goto done;
	if (!envlock_solution_count(sol)) {
		if (output)
			cmd_error("solve: no stack fits, so nothing was written to '%s'", output);
		rc = CMD_FAIL;
		goto done;
	}
	if (output && (rc = envlock_solution_write(sol, ctx, pick ? pick : 1, format, output)) != 0)
		goto done;
	rc = CMD_OK;
done:
	envlock_solution_free(sol);
	envlock_lock_free(lock);
	free(specs);
	free(configs);
	return rc;
}
