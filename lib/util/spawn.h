/*
 * The one way envlock runs another program: an argv array (never a shell),
 * a timeout, stdout captured into a capped buffer, stderr discarded (or
 * captured too, with el_spawn_ex).
 * Kept in its own file so tests can link a replacement.
 */
#ifndef EL_SPAWN_H
#define EL_SPAWN_H

#include "buf.h"

/*
 * Run argv[0] (searched in PATH) with argv; wait at most timeout_ms.
 * On return 0, *exit_status is the program's exit code (or 128+signal)
 * and out holds what it printed (up to out's limit; the rest is read and
 * dropped). ENVLOCK_ENOTFOUND: could not be started; ENVLOCK_ETIMEOUT: it
 * was killed after timeout_ms, with every process it started (it runs in
 * a process group of its own).
 */
int el_spawn(const char *const argv[], int timeout_ms, el_buf *out, int *exit_status);

/*
 * Run argv[0] (searched in PATH) with stdout and stderr going to log_fd,
 * stdin from /dev/null, and envv's KEY=VALUE strings (NULL-terminated,
 * may be NULL) added to the environment, for as long as it takes (an
 * installer): it stays in envlock's process group, so Ctrl-C reaches it.
 * Errors as el_spawn.
 */
int el_spawn_logged(const char *const argv[], const char *const envv[], int log_fd, int *exit_status);
/*
 * el_spawn_logged inside a tree: the child does chroot(root) and
 * chdir("/") before it runs argv[0], an absolute path inside the tree (no
 * PATH search: the host's PATH names host folders). Needs root.
 * ENVLOCK_ENOTFOUND: the chroot, chdir or exec failed (*child_errno says
 * why); otherwise as el_spawn_logged.
 */
int el_spawn_logged_in(const char *root, const char *const argv[], const char *const envv[], int log_fd,
		       int *exit_status, int *child_errno);
/* What el_spawn_ex can change. Zero-initialise. */
typedef struct {
	char *const *envp; /* the program's environment; NULL: envlock's own */
	int merge_stderr;  /* capture stderr with stdout, in order (compilers report there) */
} el_spawn_opts;

/* el_spawn with opts (NULL: el_spawn's behaviour). */
int el_spawn_ex(const char *const argv[], int timeout_ms, el_buf *out, int *exit_status,
		const el_spawn_opts *opts);

#endif
