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

int cmd_export(int argc, char **argv, envlock_ctx *ctx)
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
	int c, quiet = 0, rc;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "f:o:qh", options, NULL)) != -1) {
		switch (c) {
		case 'f': fname = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("export", argv, usage);
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
	if ((rc = cmd_lock_load(&lock, ctx, argv[optind])) != 0)
		return rc;
	if ((c = envlock_export_write(ctx, lock, format, output, &opts)) != 0) {
		/*
		 * nothing to export, or a value restore would refuse too, is about the lock: name it
		 * (write errors name the output already); a refused value exits as restore does
		 */
		if (c == ENVLOCK_EINVAL || c == ENVLOCK_EPARSE)
			cmd_error("export: '%s': %s", argv[optind], envlock_error_last(ctx));
		else
			cmd_error("export: %s", envlock_error_last(ctx));
		rc = c == ENVLOCK_EPARSE ? CMD_USAGE : CMD_FAIL;
	}
	envlock_lock_free(lock);
	return rc;
}
