/* envlock check: run the compatibility rules on a lockfile or on this machine. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock check [FILE] [--root DIR] [--rules FILE] [--json]\n"
	      "\n"
	      "  FILE          the lockfile to check; without it, this machine is probed\n"
	      "  --root DIR    probe the tree under DIR (when no FILE is given)\n"
	      "  --rules FILE  use these rules instead of the built-in ones\n"
	      "  --json        print the findings as JSON\n"
	      "\n"
	      "Exit status: 0 when nothing is breaking, 1 when something is, 2 on error.\n", out);
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_json(FILE *out, const envlock_findings *f)
{
	size_t n = envlock_findings_count(f);

	fputs("{\"findings\": [", out);
	for (size_t i = 0; i < n; i++) {
		const envlock_finding *x = envlock_findings_get(f, i);

		fputs(i ? ",\n  {" : "\n  {", out);
		fputs("\"rule\": ", out);
		json_string(out, x->rule);
		fprintf(out, ", \"severity\": \"%s\", \"section\": ", envlock_severity_name(x->severity));
		json_string(out, x->section);
		fputs(", \"subject\": ", out);
		json_string(out, x->subject);
		fputs(", \"message\": ", out);
		json_string(out, x->message);
		fputs(", \"fix\": ", out);
		json_string(out, x->fix);
		fputs(", \"source\": ", out);
		json_string(out, x->source);
		fputc('}', out);
	}
	fprintf(out, "%s], \"worst\": \"%s\"}\n", n ? "\n" : "",
		n ? envlock_severity_name(envlock_findings_worst(f)) : "none");
}

int cmd_check(int argc, char **argv)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "rules", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_probe_opts opts;
	envlock_ctx *ctx = NULL;
	envlock_lock *lock = NULL;
	envlock_rules *rules = NULL;
	envlock_findings *found = NULL;
	const char *rules_path = NULL;
	int c, rc = CMD_USAGE, json = 0;

	memset(&opts, 0, sizeof(opts));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': opts.root = optarg; break;
		case 'R': rules_path = optarg; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default:
			cmd_error("check: unknown or incomplete option '%s'", argv[optind - 1]);
			usage(stderr);
			return CMD_USAGE;
		}
	}
	if (envlock_ctx_new(&ctx) != 0) {
		cmd_error("out of memory");
		return CMD_USAGE;
	}
	if (cmd_lock_arg("check", argc, argv, optind, &opts, ctx, &lock) != 0)
		goto done;
	if ((rules_path ? envlock_rules_load(&rules, ctx, rules_path)
			: envlock_rules_load_default(&rules, ctx)) != 0 ||
	    envlock_check(&found, ctx, rules, lock) != 0) {
		cmd_error("check: %s", envlock_error_last(ctx));
		goto done;
	}
	if (json) {
		print_json(stdout, found);
	} else if (envlock_show_findings(found, ctx, stdout, isatty(STDOUT_FILENO) && !getenv("NO_COLOR")
							      ? ENVLOCK_PRINT_COLOR : 0) != 0) {
		cmd_error("check: %s", envlock_error_last(ctx));
		goto done;
	}
	rc = envlock_findings_worst(found) == ENVLOCK_SEV_BREAKING && envlock_findings_count(found) ? CMD_FAIL : CMD_OK;
done:
	envlock_findings_free(found);
	envlock_rules_free(rules);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	return rc;
}
