/*
 * SIGINT, SIGTERM and SIGHUP, with nothing half-written left behind.
 *
 * A command that writes does it under temporary names (el_tmpfile's
 * ".NAME.XXXXXX", a staging folder) and gives the final name only to the
 * complete result. The temporary files in use are registered here. By
 * default a signal kills at once: the handler removes the registered
 * files (unlink(2) only: async-signal-safe), says so in one line and
 * re-raises the signal, so that the exit status is the signal's. A
 * folder cannot be removed safely inside a handler, so the work that
 * stages one (bundle, bundle extract, pack) runs inside a polling
 * section: there the first signal only sets a flag, which that work
 * checks between pieces of a MiB and turns into a failure, unwinding
 * through its usual failure path (which removes its temporary files and
 * folders); main re-raises the signal at the end (el_interrupt_reraise).
 * A second signal kills at once, as outside a section.
 */
#ifndef EL_INTERRUPT_H
#define EL_INTERRUPT_H

#include "envlock/common.h"

/*
 * Install the handler for SIGINT, SIGTERM and SIGHUP, once, before a
 * command runs; a signal ignored when envlock started (nohup, a
 * background job of a non-interactive shell) stays ignored.
 */
void el_interrupt_install(void);

/*
 * mkostemp(tmpl, O_CLOEXEC), and tmpl registered to be removed if a
 * signal kills the process, with no moment between the two when a signal
 * would leave the file behind. tmpl is borrowed: it must stay valid and
 * unchanged until el_interrupt_forget. Without a free slot (32 files at
 * once) it is not registered: the failure paths still remove it, only a
 * kill would leave it. The fd, or -1 with errno.
 */
int el_interrupt_mkstemp(char *tmpl);
/* Forget path (the same pointer); a no-op for one not registered. */
void el_interrupt_forget(const char *path);

/*
 * A section that polls el_interrupted(): inside, the first signal only
 * sets the flag. Sections nest; each begin has its end.
 */
void el_interrupt_poll_begin(void);
void el_interrupt_poll_end(void);

/* The signal received (SIGINT, SIGTERM, SIGHUP), or 0. */
int el_interrupted(void);

/*
 * Fail for the signal received: ENVLOCK_ERROR, "'<what>': interrupted by
 * SIGINT; nothing written". The command's line then says it, and
 * el_interrupt_reraise says nothing more.
 */
int el_interrupt_error(envlock_ctx *ctx, const char *what);

/*
 * At the end of main, once everything is cleaned up: when a signal was
 * received, say "envlock: interrupted by SIGINT" (unless the command
 * has said why it failed: said is set, or el_interrupt_error was called)
 * and die of that signal. Returns only when there was none.
 */
void el_interrupt_reraise(int said);

#endif
