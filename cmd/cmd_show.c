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

int cmd_show(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_probe_opts opts;
	envlock_lock *lock = NULL;
	int c, rc;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': opts.root = optarg; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("show", argv, usage);
		}
	}
	if ((rc = cmd_lock_arg(&lock, ctx, "show", argc, argv, optind, &opts)) == 0)
		rc = envlock_show_print(lock, ctx, stdout);
	envlock_lock_free(lock);
	return rc;
}
