/* envlock pack: an offline restore kit of a lock (conda archives, wheels, the lock), verified. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock pack LOCK -o DIR|FILE.tar.zst [options]\n"
	      "\n"
	      "  -o, --output DIR|FILE.tar.zst  the kit: a new (or empty) folder, or a bundle archive\n"
	      "      --conda-pkgs DIR   a conda package cache to search too (repeatable); searched after\n"
	      "                         <root_prefix>/pkgs and $CONDA_PKGS_DIRS\n"
	      "      --pip-cache DIR    pip's cache (default $PIP_CACHE_DIR, $XDG_CACHE_HOME/pip, ~/.cache/pip)\n"
	      "      --wheels DIR       a folder of wheels, searched first (repeatable)\n"
	      "      --add FILE         a file to carry in files/: a cuDNN archive, a CUDA runfile (repeatable)\n"
	      "      --link             hard link cached files instead of copying, where the file system allows\n"
	      "      --force            replace an existing kit\n"
	      "  -q, --quiet            no warnings\n"
	      "\n"
	      "Exit status: 0 the kit is complete, 1 written but something is missing (each listed with\n"
	      "the command that fetches it), 2 an error.\n", out);
}

int cmd_pack(int argc, char **argv, envlock_ctx *ctx)
{
	enum { O_CONDA = 256, O_PIP, O_WHEELS, O_ADD, O_LINK, O_FORCE };
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "conda-pkgs", required_argument, NULL, O_CONDA },
		{ "pip-cache", required_argument, NULL, O_PIP },
		{ "wheels", required_argument, NULL, O_WHEELS },
		{ "add", required_argument, NULL, O_ADD },
		{ "link", no_argument, NULL, O_LINK },
		{ "force", no_argument, NULL, O_FORCE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char **conda = NULL, **wheels = NULL, **add = NULL, *output = NULL;
	envlock_pack_opts opts;
	envlock_pack_report report;
	envlock_lock *lock = NULL;
	int c, quiet = 0, rc;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "o:qh", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case O_CONDA: cmd_push_arg(&conda, &opts.conda_pkgs_count, optarg); break;
		case O_PIP: opts.pip_cache = optarg; break;
		case O_WHEELS: cmd_push_arg(&wheels, &opts.wheel_dir_count, optarg); break;
		case O_ADD: cmd_push_arg(&add, &opts.add_count, optarg); break;
		case O_LINK: opts.link = 1; break;
		case O_FORCE: opts.force = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); rc = CMD_OK; goto done;
		default: rc = cmd_bad_option("pack", argv, usage); goto done;
		}
	}
	if (argc - optind != 1 || !output || !*output) {
		cmd_error("pack: expected one LOCK and -o DIR|FILE.tar.zst");
		usage(stderr);
		rc = CMD_USAGE;
		goto done;
	}
	opts.conda_pkgs = conda;
	opts.wheel_dirs = wheels;
	opts.add_files = add;
	if (!quiet) {
		opts.on_warning = cmd_warning;
		opts.progress = isatty(STDERR_FILENO);
	}
	if ((rc = cmd_lock_load(&lock, ctx, argv[optind])) != 0)
		goto done;
	rc = envlock_pack(&report, ctx, lock, argv[optind], output, &opts, stdout);
	if (rc != 0) {
		cmd_error("pack: %s", envlock_error_last(ctx));
		rc = CMD_USAGE;
	} else {
		rc = report.missing ? CMD_FAIL : CMD_OK;
	}
done:
	envlock_lock_free(lock);
	free(conda);
	free(wheels);
	free(add);
	return rc;
}
