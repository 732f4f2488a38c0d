/* envlock ldd: what the loader will load for an ELF file, and why; the file is never run. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock ldd [--root DIR] [--json] [--library-path PATHS] FILE\n"
	      "\n"
	      "  -r, --root DIR            resolve under DIR, as a chroot would (FILE is a path inside it)\n"
	      "  -L, --library-path PATHS  the LD_LIBRARY_PATH the program would get (':'-separated);\n"
	      "                            envlock's own environment is never used\n"
	      "      --json                the tree as JSON\n"
	      "\n"
	      "Every DT_NEEDED of FILE, and theirs, resolved as glibc's ld.so does (DT_RPATH,\n"
	      "LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache, the default folders, $ORIGIN), with\n"
	      "what found each library, and the symbol versions a library lacks. For a library\n"
	      "not found, the same library with another version in the folders searched, and\n"
	      "the command that makes a missing soname link.\n"
	      "\n"
	      "Exit status: 0 everything found, 1 something missing, 2 an error.\n", out);
}

int cmd_ldd(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "library-path", required_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_ldd_opts opts = { NULL, NULL };
	envlock_ldd *l = NULL;
	int c, json = 0, rc;

	while ((c = getopt_long(argc, argv, "r:L:h", options, NULL)) != -1) {
		switch (c) {
		case 'r': opts.root = optarg; break;
		case 'L': opts.library_path = optarg; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("ldd", argv, usage);
		}
	}
	if (argc - optind != 1) {
		cmd_error("ldd: expected one FILE, got %d", argc - optind);
		usage(stderr);
		return CMD_USAGE;
	}
	if ((rc = envlock_ldd_resolve(&l, ctx, argv[optind], &opts)) != 0)
		return rc;
	rc = json ? envlock_ldd_print_json(l, ctx, stdout) : envlock_ldd_print(l, ctx, stdout, cmd_print_flags());
	if (rc == 0)
		rc = envlock_ldd_complete(l) ? CMD_OK : CMD_FAIL;
	envlock_ldd_free(l);
	return rc;
}
