/* envlock import: a partial lock from `conda list --explicit` or `pip freeze` output. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock import FILE [-o LOCK]\n"
	      "\n"
	      "  -o, --output LOCK   write the partial lock atomically (default: stdout)\n"
	      "\n"
	      "FILE is `conda list --explicit` output (it has an @EXPLICIT line) or `pip freeze`\n"
	      "output. The lock holds only that section and is marked partial; compare it with\n"
	      "a full lock section by section: envlock diff FULL LOCK --only pip\n", out);
}

int cmd_import(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *output = "-";
	envlock_import_kind kind;
	envlock_lock *lock = NULL;
	int c, rc = CMD_FAIL;

	while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("import", argv, usage);
		}
	}
	if (argc - optind != 1) {
		cmd_error("import: expected one FILE");
		usage(stderr);
		return CMD_USAGE;
	}
	if ((c = envlock_import(&lock, &kind, ctx, argv[optind])) != 0) {
		/* a file that cannot be read is refused as every command refuses an unreadable lockfile */
		if (c == ENVLOCK_ENOTFOUND || c == ENVLOCK_EIO || c == ENVLOCK_EINVAL)
			return c;
		/* what is wrong inside it names the file and line: "envlock: FILE:LINE: problem" */
		cmd_error("%s", envlock_error_last(ctx));
	} else if (envlock_lock_write(lock, ctx, output) != 0) {
		cmd_error("import: %s", envlock_error_last(ctx));
	} else {
		if (strcmp(output, "-") != 0)
			printf("%s: partial lock from %s output, %s\n", output,
			       kind == ENVLOCK_IMPORT_CONDA_EXPLICIT ? "conda list --explicit" : "pip freeze",
			       envlock_lock_id(lock));
		rc = CMD_OK;
	}
	envlock_lock_free(lock);
	return rc;
}
