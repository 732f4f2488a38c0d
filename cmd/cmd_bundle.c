/* envlock bundle: seal a work_dir with its environment; verify, list, extract bundles. */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fputs("usage: envlock bundle WORK_DIR [-o OUT] [--lock FILE] [--exclude GLOB]...\n"
	      "                      [--checkpoints include|hash] [--level N] [--threads N] [--redact]\n"
	      "                      [--quiet]\n"
	      "       envlock bundle verify ARCHIVE\n"
	      "       envlock bundle list ARCHIVE [--json]\n"
	      "       envlock bundle extract ARCHIVE [DIR] [--force] [--max-size BYTES]\n"
	      "                      [--max-entries N] [--max-ratio R]\n"
	      "\n"
	      "  -o, --output OUT        archive to write (default <work_dir name>.envlock.tar.zst)\n"
	      "      --lock FILE         the lockfile to include (default: save this machine now,\n"
	      "                          with the work_dir's configs and checkpoints)\n"
	      "      --exclude GLOB      leave out matching paths (relative to WORK_DIR) or names\n"
	      "      --checkpoints hash  leave the weights out, keep their digests in the manifest\n"
	      "      --level N           zstd level (default 3)\n"
	      "      --threads N         zstd compression threads (default 1; any N of 2 or more\n"
	      "                          gives the same bytes, which differ from one thread's)\n"
	      "      --redact            seal the lock as save --redact writes it (the work_dir's\n"
	      "                          own files are sealed as they are)\n"
	      "  -q, --quiet             do not print warnings on stderr\n"
	      "\n"
	      "list --json prints the entries as JSON.\n"
	      "\n"
	      "verify exits 0 only when every digest, the lock id and the entry list match.\n"
	      "\n"
	      "extract stops at these limits (the lockfile and manifest count too):\n"
	      "      --max-size BYTES    bytes written in all (default 64G; K, M, G, T: powers of 1024)\n"
	      "      --max-entries N     entries (default 1000000)\n"
	      "      --max-ratio R       bytes written per compressed byte read (default 1000)\n"
	      "      --force             extract into an existing DIR\n", out);
}

/* "runs/exp1/" -> "exp1.envlock.tar.zst" */
static char *default_output(const char *work_dir)
{
	size_t n = strlen(work_dir);
	const char *base;
	char *copy, *out;

	while (n > 1 && work_dir[n - 1] == '/')
		n--;
	copy = strndup(work_dir, n);
	if (!copy)
		return NULL;
	base = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		base = "bundle";
	if (asprintf(&out, "%s.envlock.tar.zst", base) < 0)
		out = NULL;
	free(copy);
	return out;
}

static int bundle_create(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "lock", required_argument, NULL, 'l' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "checkpoints", required_argument, NULL, 'c' },
		{ "level", required_argument, NULL, 'L' },
		{ "threads", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "redact", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_bundle_opts opts;
	envlock_lock *lock = NULL;
	const char **excludes = NULL, *output = NULL;
	char *def = NULL;
	int c, rc = CMD_USAGE, quiet = 0;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "o:qh", options, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'l': opts.lock_path = optarg; break;
		case 'x': cmd_push_arg(&excludes, &opts.exclude_count, optarg); break;
		case 'c':
			if (strcmp(optarg, "hash") != 0 && strcmp(optarg, "include") != 0) {
				cmd_error("bundle: --checkpoints takes include or hash, not '%s'", optarg);
				goto done;
			}
			opts.checkpoints_hash_only = strcmp(optarg, "hash") == 0;
			break;
		case 'L': opts.level = atoi(optarg);
			if (opts.level < 1 || opts.level > 19) {
				cmd_error("bundle: --level takes 1 to 19, not '%s'", optarg);
				goto done;
			}
			break;
		case 't': opts.threads = atoi(optarg);
			if (opts.threads < 1 || opts.threads > 256) {
				cmd_error("bundle: --threads takes 1 to 256, not '%s'", optarg);
				goto done;
			}
			break;
		case 'q': quiet = 1; break;
		case 'D': opts.redact = 1; break;
		case 'h': usage(stdout); rc = CMD_OK; goto done;
		default: rc = cmd_bad_option("bundle", argv, usage); goto done;
		}
	}
	if (argc - optind != 1) {
		cmd_error("bundle: expected one WORK_DIR");
		usage(stderr);
		goto done;
	}
	if (!output && !(output = def = default_output(argv[optind]))) {
		cmd_error("out of memory");
		goto done;
	}
	opts.excludes = excludes;
	opts.progress = isatty(STDERR_FILENO);
	if (!quiet)
		opts.on_warning = cmd_warning;
	/* a --lock that does not load is refused as every command refuses it, before any file is read */
	if (opts.lock_path && (rc = cmd_lock_load(&lock, ctx, opts.lock_path)) != 0)
		goto done;
	envlock_lock_free(lock);
	if (envlock_bundle_create(ctx, argv[optind], output, &opts) != 0) {
		cmd_error("bundle: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
		goto done;
	}
	printf("%s\n", output);
	rc = CMD_OK;
done:
	free(excludes);
	free(def);
	return rc;
}

/* The options of bundle verify and bundle list (list takes --json): -1 to go on, else the status to exit with. */
static int verb_options(const char *verb, int argc, char **argv, int *json)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", options + (json ? 0 : 1), NULL)) != -1) {
		switch (c) {
		case 'j': *json = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option(verb, argv, usage);
		}
	}
	if (argc - optind != 1) {
		cmd_error("%s: expected one ARCHIVE", verb);
		usage(stderr);
		return CMD_USAGE;
	}
	return -1;
}

static int bundle_verify(int argc, char **argv, envlock_ctx *ctx)
{
	envlock_bundle_report rep;
	int rc;

	if ((rc = verb_options("bundle verify", argc, argv, NULL)) >= 0)
		return rc;
	rc = envlock_bundle_verify(&rep, ctx, argv[optind], stdout);
	if (rc != 0) {
		cmd_error("bundle verify: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
	} else if (rep.problems) {
		printf("%zu of %zu entries do not match: the bundle is not what was sealed\n", rep.problems, rep.entries);
		rc = CMD_FAIL;
	} else {
		printf("ok: %zu entries, every digest and the lock id match\n", rep.entries);
	}
	return rc;
}

static int bundle_list(int argc, char **argv, envlock_ctx *ctx)
{
	int json = 0, rc;

	if ((rc = verb_options("bundle list", argc, argv, &json)) >= 0)
		return rc;
	if (envlock_bundle_list(ctx, argv[optind], stdout, json) != 0) {
		cmd_error("bundle list: %s", envlock_error_last(ctx));
		return CMD_FAIL;
	}
	return CMD_OK;
}

/*
 * A byte count: digits with an optional K, M, G, T, P or E (powers of
 * 1024, as in GNU coreutils' sizes; "10G" and "10GiB" alike). Returns 0,
 * or -1 for anything else, zero, or a value past 2^64 - 1.
 */
static int parse_size(const char *s, unsigned long long *out)
{
	static const char units[] = "KMGTPE";
	unsigned long long v = 0;
	const char *p = s, *u;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (ULLONG_MAX - (unsigned)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (*p && (u = strchr(units, toupper((unsigned char)*p))) != NULL) {
		for (long i = 0; i <= u - units; i++) {
			if (v > ULLONG_MAX / 1024)
				return -1;
			v *= 1024;
		}
		p++;
		if (strcmp(p, "iB") == 0)
			p += 2;
	}
	if (*p || v == 0)
		return -1;
	*out = v;
	return 0;
}

/* A count: digits only, at least 1. */
static int parse_count(const char *s, unsigned long long *out)
{
	return *s >= '0' && *s <= '9' && strspn(s, "0123456789") == strlen(s) && parse_size(s, out) == 0 ? 0 : -1;
}

static int bundle_extract(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "max-size", required_argument, NULL, 's' },
		{ "max-entries", required_argument, NULL, 'n' },
		{ "max-ratio", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_extract_opts opts;
	const char *archive = NULL, *dir = NULL;
	char *def = NULL;
	int c, rc = CMD_USAGE;

	memset(&opts, 0, sizeof(opts));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'f': opts.force = 1; break;
		case 's':
			if (parse_size(optarg, &opts.max_total_bytes) != 0) {
				cmd_error("bundle extract: --max-size takes a size in bytes such as 500M or 10G "
					  "(K, M, G, T: powers of 1024), not '%s'", optarg);
				goto done;
			}
			break;
		case 'n':
			if (parse_count(optarg, &opts.max_entries) != 0) {
				cmd_error("bundle extract: --max-entries takes a whole number of at least 1, not '%s'", optarg);
				goto done;
			}
			break;
		case 'r':
			if (parse_count(optarg, &opts.max_ratio) != 0) {
				cmd_error("bundle extract: --max-ratio takes a whole number of at least 1, not '%s'", optarg);
				goto done;
			}
			break;
		case 'h': usage(stdout); rc = CMD_OK; goto done;
		default: rc = cmd_bad_option("bundle extract", argv, usage); goto done;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (!archive)
			archive = argv[i];
		else if (!dir)
			dir = argv[i];
		else {
			cmd_error("bundle extract: unexpected argument '%s'", argv[i]);
			goto done;
		}
	}
	if (!archive) {
		cmd_error("bundle extract: expected ARCHIVE [DIR]");
		goto done;
	}
	if (!dir) {
		/* exp1.envlock.tar.zst -> exp1 */
		const char *base = strrchr(archive, '/') ? strrchr(archive, '/') + 1 : archive;
		const char *dot = strstr(base, ".envlock.tar.zst");

		def = strndup(base, dot && dot > base ? (size_t)(dot - base) : strlen(base));
		if (!def || !strcmp(def, base)) {
			cmd_error("bundle extract: name the target DIR for '%s'", archive);
			goto done;
		}
		dir = def;
	}
	rc = CMD_OK;
	if ((c = envlock_bundle_extract(ctx, archive, dir, &opts)) != 0) {
		cmd_error("bundle extract: %s%s", envlock_error_last(ctx),
			  c == ENVLOCK_EEXISTS ? " (use --force to extract into it)" : "");
		rc = CMD_FAIL;
	}
done:
	free(def);
	return rc;
}

int cmd_bundle(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **, envlock_ctx *);
	} verbs[] = {
		{ "verify", bundle_verify },
		{ "list", bundle_list },
		{ "extract", bundle_extract },
		{ NULL, NULL }
	};

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return CMD_OK;
	}
	for (int i = 0; argc >= 2 && verbs[i].name; i++)
		if (strcmp(argv[1], verbs[i].name) == 0)
			return verbs[i].fn(argc - 1, argv + 1, ctx);
	return bundle_create(argc, argv, ctx);
}
