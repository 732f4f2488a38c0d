/* envlock export: a lock as conda, pip, environment.yml or Dockerfile input. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock export LOCK --format FORMAT [-o FILE]\n"
	      "\n"
	      "  -f, --format FORMAT  conda-explicit   @EXPLICIT URLs with #md5 (conda create --file)\n"
	      "                       requirements     pip freeze form, --hash where every line has one\n"
	      "                       environment-yml  conda env create -f: builds pinned, a pip: section\n"
	      "                       dockerfile       nvidia/cuda base matching the lock, conda and pip\n"
	      "                                        installs, the configs copied in\n"
	      "  -o, --output FILE    write FILE atomically (default: stdout)\n"
	      "  -q, --quiet          no warnings about what the format cannot carry\n", out);
}

int cmd_export(int argc, char **argv)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_export_format format = ENVLOCK_EXPORT_REQUIREMENTS;
	envlock_export_opts opts;
	const char *output = "-", *fname = NULL;
	envlock_lock *lock = NULL;
	envlock_ctx *ctx = NULL;
	int c, quiet = 0, rc = CMD_USAGE;

	memset(&opts, 0, sizeof(opts));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", options, NULL)) != -1) {
		switch (c) {
		case 'f': fname = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default:
			cmd_error("export: unknown or incomplete option '%s'", argv[optind - 1]);
			usage(stderr);
			return CMD_USAGE;
		}
	}
	if (argc - optind != 1 || !fname) {
		cmd_error("export: expected one LOCK and --format FORMAT");
		usage(stderr);
		return CMD_USAGE;
	}
	if (envlock_export_format_parse(fname, &format) != 0) {
		cmd_error("export: unknown format '%s' (conda-explicit, requirements, environment-yml, dockerfile)", fname);
		return CMD_USAGE;
	}
	if (!quiet)
		opts.on_warning = cmd_warning;
	if (envlock_ctx_new(&ctx) != 0) {
		cmd_error("out of memory");
		return CMD_USAGE;
	}
	if (envlock_lock_load(&lock, ctx, argv[optind]) != 0) {
		cmd_error("export: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
	} else if ((c = envlock_export_write(ctx, lock, format, output, &opts)) != 0) {
		/* nothing to export is about the lock: name it (write errors name the output already) */
		if (c == ENVLOCK_EINVAL)
			cmd_error("export: '%s': %s", argv[optind], envlock_error_last(ctx));
		else
			cmd_error("export: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
	} else {
		rc = CMD_OK;
	}
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	return rc;
}
