/* envlock config: the effective OpenMMLab config, computed from its text; what changed between two. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock config FILE [--cfg-options K=V [K=V]...]... [--site DIR]... [--json | --format text|py]\n"
	      "       envlock config --diff A [B] [--cfg-options K=V [K=V]...]... [--site DIR]... [--json]\n"
	      "\n"
	      "  FILE          an OpenMMLab config (mmcv 1.x or mmengine): its effective value, its _base_\n"
	      "                chain merged as Config.fromfile does, computed from the text (nothing is run)\n"
	      "  --cfg-options K=V [K=V]...  overrides, as tools/train.py takes them (with --diff: of the\n"
	      "                second config, B, or A when it is compared with its base)\n"
	      "  --site DIR    a site-packages folder where package bases (mmdet::x.py) and the packages\n"
	      "                a read_base() block imports from are found; repeatable\n"
	      "  --format text|py  text (the default) fits values to the terminal's width; py writes a\n"
	      "                Python file laid out for 79 columns, comments never wrapped\n"
	      "  --json        the value and what was not evaluated, as JSON\n"
	      "  --diff A [B]  what changed from A to B by key path; with A alone, from A's first base to A\n"
	      "\n"
	      "A key that could not be evaluated (a call to a function, a lambda, an imported object) is\n"
	      "left out and shown as a comment where it would be, with its file and line.\n"
	      "\n"
	      "Exit status: 0 the value is complete (--diff: the same), 1 some key was not evaluated\n"
	      "(--diff: they differ, or a key not evaluated on one side), 2 an error.\n", out);
}

static const char *const formats[] = { "text", "py" };

static size_t format_count(void)
{
	return sizeof(formats) / sizeof(formats[0]);
}

static const char *format_name(size_t i)
{
	return formats[i];
}

/* A config and what it differs from, loaded and compared: a's options are none, b's are opts's. */
static int run_diff(envlock_ctx *ctx, int n, char **files, const envlock_config_opts *opts, int json)
{
	envlock_config_opts plain = { NULL, 0, opts->site_dirs, opts->n_site_dirs };
	envlock_config *a = NULL, *b = NULL;
	envlock_config_diff *d = NULL;
	int rc;

	/* the config named first, so that a file that cannot be read is said as `envlock config FILE` says it */
	if (n == 2)
		rc = envlock_config_load(&a, ctx, files[0], &plain);
	else
		rc = envlock_config_load(&b, ctx, files[0], opts);
	if (rc == 0)
		rc = n == 2 ? envlock_config_load(&b, ctx, files[1], opts) : envlock_config_load_base(&a, ctx, files[0], opts);
	if (rc == 0)
		rc = envlock_config_compare(&d, ctx, a, b);
	if (rc == 0)
		rc = json ? envlock_config_diff_print_json(d, ctx, stdout)
			  : envlock_config_diff_print(d, ctx, stdout, cmd_print_flags());
	if (rc == 0)
		rc = envlock_config_diff_same(d) ? CMD_OK : CMD_DIFFER;
	envlock_config_diff_free(d);
	envlock_config_free(a);
	envlock_config_free(b);
	return rc;
}

int cmd_config(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "cfg-options", required_argument, NULL, 'O' },
		{ "site", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "diff", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const cmd_choices format_choices = { "not a format", "formats", format_count, format_name };
	envlock_config_opts opts = { NULL, 0, NULL, 0 };
	const char **cfg_options = NULL, **sites = NULL, *format = NULL;
	envlock_config *c = NULL;
	int ch, rc, json = 0, diff = 0, nfiles;

	while ((ch = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (ch) {
		case 'O': cmd_push_arg(&cfg_options, &opts.n_cfg_options, optarg); break;
		case 's': cmd_push_arg(&sites, &opts.n_site_dirs, optarg); break;
		case 'f': format = optarg; break;
		case 'j': json = 1; break;
		case 'd': diff = 1; break;
		case 'h': usage(stdout); rc = CMD_OK; goto done;
		default: rc = cmd_bad_option("config", argv, usage); goto done;
		}
	}
	opts.cfg_options = cfg_options;
	opts.site_dirs = sites;
	nfiles = argc - optind;
	rc = CMD_USAGE;
	if (format && cmd_check_choices("config", "--format", &format, 1, &format_choices) != 0)
		goto done;
	if (format && json) {
		cmd_error("config: give --json or --format, not both");
	} else if (format && diff) {
		cmd_error("config: --format is for a config's value; --diff prints changes (or --json)");
	} else if (diff && (nfiles < 1 || nfiles > 2)) {
		cmd_error("config: --diff compares A with B, or A with its first base: expected 1 or 2 files, got %d", nfiles);
		usage(stderr);
	} else if (!diff && nfiles != 1) {
		cmd_error("config: expected one config FILE, got %d", nfiles);
		usage(stderr);
	} else if (diff) {
		rc = run_diff(ctx, nfiles, argv + optind, &opts, json);
	} else if ((rc = envlock_config_load(&c, ctx, argv[optind], &opts)) == 0) {
		if (json)
			rc = envlock_config_print_json(c, ctx, stdout);
		else if (format && strcmp(format, "py") == 0)
			rc = envlock_config_print_py(c, ctx, stdout);
		else
			rc = envlock_config_print(c, ctx, stdout, cmd_print_flags());
		if (rc == 0)
			rc = envlock_config_not_evaluated(c) ? CMD_FAIL : CMD_OK;
	}
done:
	envlock_config_free(c);
	free(cfg_options);
	free(sites);
	return rc;
}
