/* envlock save: probe this machine (or a tree under --root) into a lockfile. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock save [-o FILE] [--root DIR] [--conda-prefix PREFIX]\n"
	      "                    [--python EXE] [--no-cache] [--json] [--quiet]\n"
	      "\n"
	      "  -o, --output FILE     lockfile to write (default envlock.lock.json; - for stdout)\n"
	      "      --root DIR        probe the tree under DIR instead of this machine\n"
	      "      --conda-prefix P  the conda environment to record (default $CONDA_PREFIX)\n"
	      "      --python EXE      the Python whose packages to record\n"
	      "      --no-cache        hash every library again, ignoring the digest cache\n"
	      "      --json            print {\"path\", \"id\", \"warnings\"} on stdout\n"
	      "  -q, --quiet           do not print warnings on stderr\n", out);
}

static void print_json_summary(const envlock_lock *lock, const char *path)
{
	size_t n = envlock_lock_warning_count(lock);

	/* the strings printed here are envlock's own or paths; escape the minimum */
	printf("{\"id\": \"%s\", \"path\": \"", envlock_lock_id(lock));
	for (const char *s = path; *s; s++)
		printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
	printf("\", \"warnings\": %zu}\n", n);
}

int cmd_save(int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "root", required_argument, NULL, 'r' },
		{ "conda-prefix", required_argument, NULL, 'c' },
		{ "python", required_argument, NULL, 'p' },
		{ "no-cache", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_probe_opts opts;
	envlock_ctx *ctx = NULL;
	envlock_lock *lock = NULL;
	const char *output = "envlock.lock.json";
	int json = 0, quiet = 0, c, rc = CMD_FAIL;

	memset(&opts, 0, sizeof(opts));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:qh", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'r': opts.root = optarg; break;
		case 'c': opts.conda_prefix = optarg; break;
		case 'p': opts.python = optarg; break;
		case 'n': opts.no_cache = 1; break;
		case 'j': json = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default:
			cmd_error("save: unknown or incomplete option '%s'", argv[optind - 1]);
			usage(stderr);
			return CMD_USAGE;
		}
	}
	if (optind < argc) {
		cmd_error("save: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return CMD_USAGE;
	}
	if (json && strcmp(output, "-") == 0) {
		cmd_error("save: --json and -o - both want stdout");
		return CMD_USAGE;
	}
	if (!quiet)
		opts.on_warning = cmd_warning;
	if (envlock_ctx_new(&ctx) != 0) {
		cmd_error("out of memory");
		return CMD_USAGE;
	}
	if ((rc = envlock_lock_probe(&lock, ctx, &opts)) != 0) {
		cmd_error("save: %s", envlock_error_last(ctx));
		rc = rc == ENVLOCK_EINVAL || rc == ENVLOCK_ENOTFOUND ? CMD_USAGE : CMD_FAIL;
		goto done;
	}
	if (envlock_lock_write(lock, ctx, output) != 0) {
		cmd_error("save: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
		goto done;
	}
	if (json)
		print_json_summary(lock, output);
	rc = CMD_OK;
done:
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	return rc;
}
