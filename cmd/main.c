/* envlock: make a working GPU deep-learning machine reproducible. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd.h"
#include "util/interrupt.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* cmd_save.c makes its own context until its save policy moves into the library */
static int run_save(int argc, char **argv, envlock_ctx *ctx)
{
	(void)ctx;
	return cmd_save(argc, argv);
}

static const cmd_entry commands[] = {
	{ "save", run_save, 0, "probe this machine and write its lockfile" },
	{ "show", cmd_show, CMD_NEED_CTX | CMD_SAYS_ID, "summarise a lockfile (or this machine)" },
	{ "check", cmd_check, CMD_NEED_CTX, "run the compatibility rules on a lockfile (or this machine)" },
	{ "diff", cmd_diff, CMD_NEED_CTX, "what differs between lockfiles, or how a fleet drifts" },
	{ "restore", cmd_restore, CMD_NEED_CTX, "make this machine match a lockfile: plan, then apply" },
	{ "verify", cmd_verify, CMD_NEED_CTX, "prove this machine trains: compile, run and check a CUDA training step" },
	{ "bundle", cmd_bundle, CMD_NEED_CTX, "seal a work_dir with its environment; verify, list, extract" },
	{ "report", cmd_report, CMD_NEED_CTX | CMD_SAYS_ID, "a lockfile ready for a paper: citation line, appendix table, HTML page" },
	{ "sign", cmd_sign, CMD_NEED_CTX, "sign a lockfile with an Ed25519 key" },
	{ "verify-sig", cmd_verify_sig, CMD_NEED_CTX, "check a lockfile's Ed25519 signature" },
	{ "keygen", cmd_keygen, CMD_NEED_CTX, "make an Ed25519 key pair for signing lockfiles" },
	{ "export", cmd_export, CMD_NEED_CTX, "write a lock as conda, pip, environment.yml or Dockerfile input" },
	{ "import", cmd_import, CMD_NEED_CTX, "make a partial lock from conda list --explicit or pip freeze output" },
	{ "pack", cmd_pack, CMD_NEED_CTX, "an offline restore kit: the lock's conda archives and wheels, verified" },
	{ "ldd", cmd_ldd, CMD_NEED_CTX, "what the loader will load for an ELF file, and why; never runs it" },
	{ "solve", cmd_solve, CMD_NEED_CTX, "which stack this machine can run, and exactly how to install it" },
	{ "config", cmd_config, CMD_NEED_CTX, "an OpenMMLab config's effective value, without Python, and what changed" },
	{ NULL, NULL, 0, NULL }
};

/* The command main runs, and whether its first lockfile is loaded (CMD_SAYS_ID). */
static const cmd_entry *running;
static int first_lock_loaded;

int cmd_exit_status(int rc)
{
	return rc < 0 ? CMD_USAGE : rc;
}

/* Whether a command has said what went wrong (cmd_error), so main does not say it twice. */
static int said_error;

void cmd_error(const char *fmt, ...)
{
	va_list ap;

	char *msg = NULL;

	said_error = 1;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	/* messages name files and values from locks, configs and trees: never raw to the terminal */
	fputs("envlock: ", stderr);
	el_term_put(stderr, msg ? msg : fmt);
	fputc('\n', stderr);
	free(msg);
}

int cmd_bad_option(const char *cmd, char **argv, void (*usage)(FILE *))
{
	const char *arg = argv[optind - 1];

	/* a short option inside a cluster ("-qZ"): name the letter, not the word before it */
	if (optopt > 0 && optopt < 128 && isprint(optopt) && strncmp(arg, "--", 2) != 0)
		cmd_error("%s: unknown or incomplete option '-%c'", cmd, optopt);
	else
		cmd_error("%s: unknown or incomplete option '%s'", cmd, arg);
	usage(stderr);
	return CMD_USAGE;
}

const char *cmd_strerror(int errnum)
{
	static char why[128];

	snprintf(why, sizeof(why), "%s", strerror(errnum));
	why[0] = (char)tolower((unsigned char)why[0]);
	return why;
}

unsigned cmd_print_flags(void)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	unsigned width = ENVLOCK_PRINT_WIDTH(cmd_term_width(stdout));

	if ((no && *no) || (term && strcmp(term, "dumb") == 0) || !isatty(STDOUT_FILENO))
		return width;
	return ENVLOCK_PRINT_COLOR | width;
}

int cmd_term_width(FILE *out)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	char *end;
	long n;

	/* COLUMNS first, as ls and git take it (0: never wrap); then the terminal's; else 100, as for a file or a pipe */
	if (cols && *cols) {
		n = strtol(cols, &end, 10);
		if (!*end && n == 0)
			return 0;
		if (!*end && n >= 20 && n <= 10000)
			return (int)n;
	}
	if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 100;
}

void cmd_warning(const char *msg, void *data)
{
	(void)data;
	fputs("envlock: warning: ", stderr);
	el_term_put(stderr, msg);
	fputc('\n', stderr);
}

void cmd_push_arg(const char ***list, size_t *n, const char *arg)
{
	/* the callers keep no capacity: it is EL_GROW's (16, then doubling) for *n elements */
	size_t cap = 0;

	if (*n)
		for (cap = 16; cap < *n; cap *= 2)
			;
	EL_GROW(*list, *n + 1, cap);
	(*list)[(*n)++] = arg;
}

int cmd_lock_load_noting(envlock_lock **out, envlock_ctx *ctx, const char *path, char **warning)
{
	const char *stored;
	int rc = envlock_lock_load(out, ctx, path);

	*warning = NULL;
	if (rc != 0)
		return rc;
	/* diff loads in threads: only a CMD_SAYS_ID command (one thread) counts its loads */
	if (running && (running->flags & CMD_SAYS_ID) && !first_lock_loaded++)
		return 0;
	if (envlock_lock_edited(*out, &stored))
		*warning = el_xasprintf("envlock: warning: '%s': its stored id %s does not match its content (%s): "
					"it was edited after it was saved\n", path, stored, envlock_lock_id(*out));
	return 0;
}

int cmd_lock_load(envlock_lock **out, envlock_ctx *ctx, const char *path)
{
	char *warning;
	int rc = cmd_lock_load_noting(out, ctx, path, &warning);

	if (warning)
		fputs(warning, stderr);
	free(warning);
	return rc;
}

int cmd_lock_arg(envlock_lock **out, envlock_ctx *ctx, const char *name, int argc,
		 char **argv, int optind_, const envlock_probe_opts *opts)
{
	*out = NULL;
	if (argc - optind_ > 1) {
		cmd_error("%s: expected at most one lockfile, got %d", name, argc - optind_);
		return CMD_USAGE;
	}
	if (optind_ < argc && opts->root) {
		cmd_error("%s: --root probes a tree; it cannot be combined with a lockfile", name);
		return CMD_USAGE;
	}
	return optind_ < argc ? cmd_lock_load(out, ctx, argv[optind_]) : envlock_lock_probe(out, ctx, opts);
}

int cmd_check_choices(const char *cmd, const char *flag, const char *const *given, size_t n, const cmd_choices *c)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (k < c->count() && strcmp(c->name(k), given[i]) != 0)
			k++;
		if (k == c->count()) {
			fprintf(stderr, "envlock: %s: %s '%s': %s (%s: ", cmd, flag, given[i], c->not_one, c->plural);
			for (k = 0; k < c->count(); k++)
				fprintf(stderr, "%s%s", k ? ", " : "", c->name(k));
			fputs(")\n", stderr);
			return CMD_USAGE;
		}
	}
	return 0;
}

static void usage(FILE *out)
{
	fputs("usage: envlock <command> [options]\n\ncommands:\n", out);
	for (const cmd_entry *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fputs("\nRun 'envlock <command> --help' for a command's options.\n", out);
}

/*
 * Like git: a full disk, a closed pipe or a closed stdout is an error, even
 * when the command itself had nothing else to report (restore --dry-run's
 * "there is work to do", 1, and --version included): one line, status 2,
 * unless the command has already said what failed.
 */
static int finish(int rc)
{
	int failed = fflush(stdout) != 0 || ferror(stdout);

	if (!failed || (said_error && rc != CMD_OK))
		return rc;
	cmd_error("write error on stdout: %s", cmd_strerror(errno ? errno : EIO));
	return CMD_USAGE;
}

/*
 * mmcv's tools/train.py takes --cfg-options K=V [K=V ...]: every K=V after
 * it up to the next option. getopt takes one argument per option, so each
 * K=V that follows gets its own --cfg-options here, for every command
 * alike. A new vector (argv's strings, one more slot each at most); NULL
 * when argv has no --cfg-options.
 */
static char **expand_cfg_options(int *argc, char **argv)
{
	static char cfg_flag[] = "--cfg-options";
	char **out;
	int n = 0, taking = 0, i;

	for (i = 0; i < *argc; i++)
		if (strcmp(argv[i], "--cfg-options") == 0 || strncmp(argv[i], "--cfg-options=", 14) == 0)
			break;
	if (i == *argc)
		return NULL;
	out = el_xcalloc((size_t)*argc * 2 + 1, sizeof(*out));
	for (i = 0; i < *argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			while (i < *argc)
				out[n++] = argv[i++];
			break;
		}
		if (a[0] == '-') {
			/* --cfg-options takes the next word itself; --cfg-options=K=V holds its first */
			taking = strcmp(a, "--cfg-options") == 0 ? 2 : strncmp(a, "--cfg-options=", 14) == 0;
		} else if (taking == 2) {
			taking = 1;
		} else if (taking && strchr(a, '=')) {
			out[n++] = cfg_flag;
		} else {
			taking = 0;
		}
		out[n++] = argv[i];
	}
	*argc = n;
	return out;
}

int main(int argc, char **argv)
{
	const cmd_entry *c;
	envlock_ctx *ctx = NULL;
	char **expanded;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return CMD_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return finish(CMD_OK);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("envlock %s\n", envlock_version());
#ifdef ENVLOCK_BUILD_INFO
		puts(ENVLOCK_BUILD_INFO);
#endif
		return finish(CMD_OK);
	}
	for (c = commands; c->name; c++)
		if (strcmp(c->name, argv[1]) == 0)
			break;
	if (!c->name) {
		cmd_error("'%s' is not an envlock command; see 'envlock --help'", argv[1]);
		return CMD_USAGE;
	}
	if ((c->flags & CMD_NEED_CTX) && envlock_ctx_new(&ctx) != 0) {
		cmd_error("out of memory");
		return CMD_USAGE;
	}
	opterr = 0;
	optind = 1;
	running = c;
	if ((expanded = expand_cfg_options(&argc, argv)) != NULL)
		argv = expanded;
	/* SIGINT, SIGTERM, SIGHUP: nothing half-written is left behind (util/interrupt.h) */
	el_interrupt_install();
	rc = c->fn(argc - 1, argv + 1, ctx);
	free(expanded);
	if (rc < 0)
		cmd_error("%s: %s", c->name, ctx ? envlock_error_last(ctx) : "failed");
	rc = cmd_exit_status(rc);
	envlock_ctx_free(ctx);
	rc = finish(rc);
	/* a signal the command unwound from, cleaning up: die of it now, as shells expect */
	el_interrupt_reraise(said_error);
	return rc;
}
