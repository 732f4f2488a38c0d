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

typedef struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} cmd_entry;

int cmd_save(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bundle(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify_sig(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_verify(int argc, char **argv);

/* Print "envlock: <subject>: <why>" style errors on stderr. */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Append arg to a growable list of borrowed strings (repeatable options). */
void cmd_push_arg(const char ***list, size_t *n, const char *arg);

/*
 * The lock a read-only command works on: the one lockfile left in
 * argv[optind..argc) or, with none, this machine (or opts->root) probed.
 * Returns 0 with *out set, or CMD_USAGE after printing "envlock: <name>:
 * <why>" for too many files, --root with a file, or a load failure.
 */
int cmd_lock_arg(const char *name, int argc, char **argv, int optind_,
		 const envlock_probe_opts *opts, envlock_ctx *ctx, envlock_lock **out);

/*
 * ENVLOCK_PRINT_COLOR for stdout on a terminal, unless NO_COLOR is set
 * (no-color.org) or TERM=dumb; else 0.
 */
unsigned cmd_print_flags(void);

/* Print a warning line "envlock: warning: ..." on stderr. */
void cmd_warning(const char *msg, void *data);

#endif
