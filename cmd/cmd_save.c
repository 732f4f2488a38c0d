/* envlock save: probe this machine (or a tree under --root) into a lockfile. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock save [-o FILE] [--root DIR] [--conda-prefix PREFIX] [--python EXE]\n"
	      "                    [--checkpoint PATH|GLOB]... [--config FILE]... [--cfg-options K=V...]...\n"
	      "                    [--repo DIR]...\n"
	      "                    [--no-repo] [--no-patch] [--no-cache] [--verify] [--redact] [--json] [--quiet]\n"
	      "\n"
	      "  -o, --output FILE     lockfile to write (default envlock.lock.json; - for stdout)\n"
	      "      --root DIR        probe the tree under DIR instead of this machine\n"
	      "      --conda-prefix P  the conda environment to record (default $CONDA_PREFIX)\n"
	      "      --python EXE      the Python whose packages to record\n"
	      "      --checkpoint P    a weights file, a folder of them, or a glob; hashed (SHA-256)\n"
	      "      --config FILE     a config, recorded with its text and its _base_ chain\n"
	      "      --cfg-options K=V...  overrides of the config (as mmcv's --cfg-options:\n"
	      "                        every K=V up to the next option), merged into its\n"
	      "                        effective value\n"
	      "      --repo DIR        a git repository (default: the one holding the current\n"
	      "                        directory, when saving this machine)\n"
	      "      --no-repo         record no repository\n"
	      "      --no-patch        keep only the digest of uncommitted changes, not their text\n"
	      "      --no-cache        hash every file again, ignoring the digest cache\n"
	      "      --verify          also run envlock verify and record its result in the\n"
	      "                        lockfile (\"verify\"); exit 1 if a stage fails\n"
	      "      --redact          replace home folders, user names, the host name, GPU\n"
	      "                        UUIDs, environment values and URLs beyond host and path\n"
	      "                        with placeholders (<user1>, <host1>, <env1>), to publish\n"
	      "                        (secrets in configs and URLs are masked even without it)\n"
	      "      --json            print {\"id\", \"path\", \"warnings\", \"hashed\"} on stdout\n"
	      "  -q, --quiet           do not print warnings on stderr\n"
	      "\n"
	      "Paths given to --checkpoint, --config and --repo are on this machine, relative\n"
	      "to the current directory, even with --root.\n", out);
}

/* Each request error on its own line; counted, so the refusal is said once after them. */
static void request_error(const char *msg, void *data)
{
	cmd_error("save: %s", msg);
	(*(size_t *)data)++;
}

int cmd_save(int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "root", required_argument, NULL, 'r' },
		{ "conda-prefix", required_argument, NULL, 'c' },
		{ "python", required_argument, NULL, 'p' },
		{ "no-cache", no_argument, NULL, 'n' },
		{ "checkpoint", required_argument, NULL, 'k' },
		{ "config", required_argument, NULL, 'C' },
		{ "cfg-options", required_argument, NULL, 'O' },
		{ "repo", required_argument, NULL, 'R' },
		{ "no-repo", no_argument, NULL, 'N' },
		{ "no-patch", no_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verify", no_argument, NULL, 'V' },
		{ "redact", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_save_opts so;
	envlock_probe_opts *opts = &so.probe;
	envlock_ctx *ctx = NULL;
	envlock_lock *lock = NULL;
	envlock_verify *verified = NULL;
	size_t request_errors = 0;
	const char *output = "envlock.lock.json";
	const char **checkpoints = NULL, **configs = NULL, **repos = NULL, **cfg_options = NULL;
	int json = 0, quiet = 0, verify = 0, c, rc = CMD_FAIL;

	memset(&so, 0, sizeof(so));
	opts->default_repo = 1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'r': opts->root = optarg; break;
		case 'c': opts->conda_prefix = optarg; break;
		case 'p': opts->python = optarg; break;
		case 'n': opts->no_cache = 1; break;
		case 'k': cmd_push_arg(&checkpoints, &opts->checkpoint_count, optarg); break;
		case 'C': cmd_push_arg(&configs, &opts->config_count, optarg); break;
		case 'O': cmd_push_arg(&cfg_options, &opts->cfg_option_count, optarg); break;
		case 'R': cmd_push_arg(&repos, &opts->repo_count, optarg); break;
		case 'N': opts->default_repo = 0; break;
		case 'P': opts->no_patch = 1; break;
		case 'j': json = 1; break;
		case 'q': quiet = 1; break;
		case 'V': verify = 1; break;
		case 'D': so.redact = 1; break;
		case 'h':
			usage(stdout);
			rc = CMD_OK;
			goto done;
		default:
			cmd_error("save: unknown or incomplete option '%s'", argv[optind - 1]);
			usage(stderr);
			rc = CMD_USAGE;
			goto done;
		}
	}
	rc = CMD_USAGE;
	if (optind < argc) {
		cmd_error("save: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		goto done;
	}
	if (verify && opts->root) {
		cmd_error("save: --verify runs programs on this machine; it cannot be combined with --root");
		goto done;
	}
	if (json && strcmp(output, "-") == 0) {
		cmd_error("save: --json and -o - both want stdout");
		goto done;
	}
	opts->checkpoints = checkpoints;
	opts->configs = configs;
	opts->cfg_options = cfg_options;
	opts->repos = repos;
	opts->progress = isatty(STDERR_FILENO);
	if (!quiet)
		opts->on_warning = cmd_warning;
	if (envlock_ctx_new(&ctx) != 0) {
		cmd_error("out of memory");
		goto done;
	}
	so.path = output;
	so.verify = verify;
	so.on_request_error = request_error;
	so.request_error_data = &request_errors;
	if ((rc = envlock_save(&lock, &verified, ctx, &so)) != 0) {
		/* what was asked for is not all there: each named above, and nothing was written */
		if (request_errors > 0)
			cmd_error("save: nothing written");
		else
			cmd_error("save: %s", envlock_error_last(ctx));
		rc = request_errors == 0 && (rc == ENVLOCK_EINVAL || rc == ENVLOCK_ENOTFOUND) ? CMD_USAGE : CMD_FAIL;
		goto done;
	}
	if (json && envlock_save_print_json(lock, ctx, output, stdout) != 0) {
		cmd_error("save: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
		goto done;
	}
	rc = CMD_OK;
	if (verified && envlock_verify_result(verified) == ENVLOCK_VERIFY_FAILED) {
		for (size_t i = 0; i < envlock_verify_stage_count(verified); i++) {
			const envlock_verify_stage *st = envlock_verify_stage_get(verified, i);

			if (st->status == ENVLOCK_VERIFY_FAIL)
				cmd_error("save: verify: %s: %s", st->name, st->reason);
		}
		rc = CMD_FAIL;
	}
done:
	envlock_verify_free(verified);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	free(checkpoints);
	free(configs);
	free(cfg_options);
	free(repos);
	return rc;
}
