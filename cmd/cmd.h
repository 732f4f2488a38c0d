/* The envlock command table: one cmd_<name>.c per subcommand. */
#ifndef ENVLOCK_CMD_H
#define ENVLOCK_CMD_H

#include <stdio.h>

#include "envlock/envlock.h"

/* Exit statuses shared by all commands (DESIGN.md). */
#define CMD_OK 0
#define CMD_DIFFER 1 /* differences or problems found */
#define CMD_FAIL 1
#define CMD_USAGE 2
#define CMD_NO_GPU 3 /* verify: no GPU, and every stage that could run passed */

/* What main does for a command before it runs it (cmd_entry.flags). */
#define CMD_NEED_CTX 0x1u /* main makes the envlock_ctx, passes it in and frees it after */
/*
 * The command's output says when the first lockfile it loads records an
 * id that is not the id of its content (show's "!!" line, report's
 * warning): cmd_lock_load does not say it again for that one.
 */
#define CMD_SAYS_ID 0x2u

/*
 * A command, run as fn(argc, argv, ctx) with argv[0] its name, opterr 0
 * and optind 1; ctx is NULL without CMD_NEED_CTX. fn returns the exit
 * status, or a negative ENVLOCK_E... code from a library call on ctx:
 * main then prints "envlock: <name>: <envlock_error_last(ctx)>" and
 * exits with cmd_exit_status(code). A command that exits 1 for a failed
 * operation prints its own line and returns CMD_FAIL.
 */
typedef struct {
	const char *name;
	int (*fn)(int argc, char **argv, envlock_ctx *ctx);
	unsigned flags;
	const char *summary;
} cmd_entry;

int cmd_save(int argc, char **argv); /* makes its own context (cmd/cmd_save.c) */
int cmd_show(int argc, char **argv, envlock_ctx *ctx);
int cmd_diff(int argc, char **argv, envlock_ctx *ctx);
int cmd_check(int argc, char **argv, envlock_ctx *ctx);
int cmd_bundle(int argc, char **argv, envlock_ctx *ctx);
int cmd_sign(int argc, char **argv, envlock_ctx *ctx);
int cmd_verify_sig(int argc, char **argv, envlock_ctx *ctx);
int cmd_keygen(int argc, char **argv, envlock_ctx *ctx);
int cmd_export(int argc, char **argv, envlock_ctx *ctx);
int cmd_import(int argc, char **argv, envlock_ctx *ctx);
int cmd_restore(int argc, char **argv, envlock_ctx *ctx);
int cmd_report(int argc, char **argv, envlock_ctx *ctx);
int cmd_verify(int argc, char **argv, envlock_ctx *ctx);
int cmd_ldd(int argc, char **argv, envlock_ctx *ctx);
int cmd_pack(int argc, char **argv, envlock_ctx *ctx);
int cmd_solve(int argc, char **argv, envlock_ctx *ctx);
int cmd_config(int argc, char **argv, envlock_ctx *ctx);

/*
 * The exit status for a library code a command returned: every
 * ENVLOCK_E... code is an error (CMD_USAGE, DESIGN.md's 2 "usage or
 * error"): a missing or unreadable input, a malformed one, a bad option
 * value. A non-negative rc is returned as it is.
 */
int cmd_exit_status(int rc);

/* Print "envlock: <subject>: <why>" style errors on stderr. */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * For getopt_long's '?': print "envlock: <cmd>: unknown or incomplete
 * option '<opt>'" and the usage on stderr; returns CMD_USAGE.
 */
int cmd_bad_option(const char *cmd, char **argv, void (*usage)(FILE *));

/* strerror(errnum) as envlock writes it: lowercase. Valid until the next call. */
const char *cmd_strerror(int errnum);

/* The names of one kind the library knows (diff's sections, restore's steps): how many, and the i-th. */
typedef struct {
	const char *not_one; /* "not a section", "no such step" */
	const char *plural;  /* "sections", "steps" */
	size_t (*count)(void);
	const char *(*name)(size_t i);
} cmd_choices;

/*
 * Each of given (n of them, from flag) must be one of choices; else one
 * line on stderr, "envlock: CMD: FLAG 'x': NOT_ONE (PLURAL: a, b, …)",
 * and CMD_USAGE.
 */
int cmd_check_choices(const char *cmd, const char *flag, const char *const *given, size_t n, const cmd_choices *choices);

/*
 * Load the lockfile at path: 0 with *out set, or the library's code
 * (its message names the file: "'<path>': <why>"), for the command to
 * return so that every command refuses a lockfile the same way. A lock
 * whose recorded id is not the id of its content (edited after it was
 * saved) gets one warning line on stderr, in every command (CMD_SAYS_ID),
 * unless it has values restore and export refuse: their refusal says it all.
 */
int cmd_lock_load(envlock_lock **out, envlock_ctx *ctx, const char *path);
/* The same, the warning line (malloc'd, or NULL) handed back instead of said: loads on threads say theirs in order. */
int cmd_lock_load_noting(envlock_lock **out, envlock_ctx *ctx, const char *path, char **warning);

/* Append arg to a growable list of borrowed strings (repeatable options); *list is freed with free(). */
void cmd_push_arg(const char ***list, size_t *n, const char *arg);

/*
 * The lock a read-only command works on: the one lockfile left in
 * argv[optind..argc) or, with none, this machine (or opts->root) probed.
 * Returns 0 with *out set; CMD_USAGE after printing "envlock: <name>:
 * <why>" for too many files or --root with a file; or the library's code
 * of a failed load or probe (for the command to return).
 */
int cmd_lock_arg(envlock_lock **out, envlock_ctx *ctx, const char *name, int argc,
		 char **argv, int optind_, const envlock_probe_opts *opts);

/*
 * ENVLOCK_PRINT_COLOR for stdout on a terminal, unless NO_COLOR is set
 * (no-color.org) or TERM=dumb; and ENVLOCK_PRINT_WIDTH(cmd_term_width(stdout)).
 */
unsigned cmd_print_flags(void);

/*
 * The columns prose written to out wraps at: COLUMNS when it is set (20
 * to 10000; 0: never wrap), else the terminal's width when out is one,
 * else 100 (a pipe or a file).
 */
int cmd_term_width(FILE *out);

/* Print a warning line "envlock: warning: ..." on stderr. */
void cmd_warning(const char *msg, void *data);

#endif
