/* envlock report: a lockfile made ready for a paper (citation line, appendix table, HTML page). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock report LOCK [--format md|latex|html|json|text] [-o FILE] [--short]\n"
	      "                      [--against LOCK2] [--rules FILE] [--redact]\n"
	      "\n"
	      "  LOCK               the lockfile to report on\n"
	      "  --format F         md or latex: the citation line and an appendix table;\n"
	      "                     html: one self-contained page with the package lists and rule findings;\n"
	      "                     json: the summary as data; text (default): for a terminal\n"
	      "  -o, --output FILE  write FILE atomically instead of stdout\n"
	      "  --short            only the citation line (escaped for the format)\n"
	      "  --against LOCK2    html, json, text: also what differs from LOCK to LOCK2, by severity\n"
	      "  --rules FILE       use these rules instead of the built-in ones\n"
	      "  --redact           report the locks as save --redact would have written them:\n"
	      "                     no home folder, user name, host name or environment value\n", out);
}

int cmd_report(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "short", no_argument, NULL, 's' },
		{ "against", required_argument, NULL, 'a' },
		{ "rules", required_argument, NULL, 'R' },
		{ "redact", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_report_opts opts;
	envlock_lock *lock = NULL, *against = NULL;
	envlock_rules *rules = NULL;
	const char *format = "text", *output = "-", *rules_path = NULL;
	int c, rc, redact = 0;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 's': opts.short_only = 1; break;
		case 'a': opts.against_name = optarg; break;
		case 'R': rules_path = optarg; break;
		case 'D': redact = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("report", argv, usage);
		}
	}
	if (argc - optind != 1) {
		cmd_error("report: expected one lockfile, got %d", argc - optind);
		usage(stderr);
		return CMD_USAGE;
	}
	opts.name = argv[optind];
	opts.on_warning = cmd_warning;
	if ((rc = envlock_report_format_parse(&opts.format, ctx, format)) != 0 ||
	    (rc = cmd_lock_load(&lock, ctx, opts.name)) != 0 ||
	    (opts.against_name && (rc = cmd_lock_load(&against, ctx, opts.against_name)) != 0) ||
	    (rules_path && (rc = envlock_rules_load(&rules, ctx, rules_path)) != 0))
		goto done;
	if (redact) {
		envlock_lock_redact(lock);
		if (against)
			envlock_lock_redact(against);
	}
	opts.against = against;
	opts.rules = rules;
	/* a bad combination of options is an error (2); a report that cannot be written, a failure (1) */
	if ((rc = envlock_report_write(ctx, lock, &opts, output)) != 0 && rc != ENVLOCK_EINVAL) {
		cmd_error("report: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
	}
done:
	envlock_rules_free(rules);
	envlock_lock_free(against);
	envlock_lock_free(lock);
	return rc;
}
