/* envlock show: a five-second summary of a lockfile, or of this machine. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock show [FILE] [--root DIR]\n"
	      "\n"
	      "  FILE        the lockfile to summarise; without it, this machine is probed\n"
	      "  --root DIR  probe the tree under DIR (when no FILE is given)\n", out);
}

int cmd_show(int argc, char **argv)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_probe_opts opts;
	envlock_ctx *ctx = NULL;
	envlock_lock *lock = NULL;
	int c, rc;

	memset(&opts, 0, sizeof(opts));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': opts.root = optarg; break;
		case 'h': usage(stdout); return CMD_OK;
		default:
			cmd_error("show: unknown or incomplete option '%s'", argv[optind - 1]);
			usage(stderr);
			return CMD_USAGE;
		}
	}
	if (envlock_ctx_new(&ctx) != 0) {
		cmd_error("out of memory");
		return CMD_USAGE;
	}
	if ((rc = cmd_lock_arg("show", argc, argv, optind, &opts, ctx, &lock)) != 0)
		goto done;
	rc = envlock_show_print(lock, ctx, stdout) == 0 ? CMD_OK : CMD_USAGE;
	if (rc != CMD_OK)
		cmd_error("show: %s", envlock_error_last(ctx));
done:
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	return rc;
}
