/*
 * The signal handler and its registry of temporary files (interrupt.h).
 *
 * The handler may run on any thread, beside a thread that is changing the
 * registry, so the registry is guarded by a spinlock that an updater
 * takes with the signals blocked in its own thread. A handler that finds
 * the lock taken (by another thread) leaves the kill pending, and the
 * updater carries it out as soon as it lets go of the lock: a pointer in
 * the registry is never read while its owner frees it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "interrupt.h"

#define EL_INTERRUPT_SLOTS 32

static const int handled[] = { SIGINT, SIGTERM, SIGHUP };

/* the temporary files to remove, read and written only under reg_lock */
static const char *slots[EL_INTERRUPT_SLOTS];
static atomic_flag reg_lock = ATOMIC_FLAG_INIT;
static atomic_int received;   /* the first signal */
static atomic_int pending;    /* a signal that kills, waiting for reg_lock */
static atomic_int polling;    /* depth of the polling sections */
static atomic_int said;       /* el_interrupt_error has been called */
static pid_t owner;           /* a child between fork and exec inherits the handler: not its files */

static const char *sig_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

static void sig_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(handled) / sizeof(*handled); i++)
		sigaddset(set, handled[i]);
}

/* Append s to line[*n..size), control bytes as '?' (names come from the command line). */
static void put(char *line, size_t *n, size_t size, const char *s)
{
	for (; *s && *n + 1 < size; s++)
		line[(*n)++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
}

/* Die of sig as if envlock had no handler. Async-signal-safe. */
static _Noreturn void die_of(int sig)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
	/* blocked here (in the handler, or in an updater): delivered, and fatal, once unblocked */
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	_exit(128 + sig);
}

/*
 * With reg_lock held: remove the registered files, say so in one line
 * (unless quiet and there was nothing to remove), and die of sig.
 * Async-signal-safe: unlink(2) and write(2) only.
 */
static _Noreturn void kill_locked(int sig, int quiet)
{
	char line[1024];
	size_t n = 0;
	int removed = 0;

	put(line, &n, sizeof(line), "envlock: interrupted by ");
	put(line, &n, sizeof(line), sig_name(sig));
	for (size_t i = 0; i < EL_INTERRUPT_SLOTS; i++) {
		if (!slots[i] || unlink(slots[i]) != 0)
			continue;
		put(line, &n, sizeof(line), removed++ ? ", '" : "; removed '");
		put(line, &n, sizeof(line), slots[i]);
		put(line, &n, sizeof(line), "'");
	}
	line[n++] = '\n';
	if (removed || !quiet)
		(void)!write(STDERR_FILENO, line, n);
	die_of(sig);
}

static void on_signal(int sig)
{
	int saved = errno, none = 0;

	if (getpid() != owner)
		die_of(sig);
	/* the first signal inside a polling section: the section unwinds, main re-raises it */
	if (atomic_compare_exchange_strong(&received, &none, sig) && atomic_load(&polling) > 0) {
		errno = saved;
		return;
	}
	atomic_store(&pending, sig);
	if (atomic_flag_test_and_set(&reg_lock)) {
		/* another thread is changing the registry: it kills as soon as it is done */
		errno = saved;
		return;
	}
	/* a second signal while the first unwinds: its line is said (or about to be) already */
	kill_locked(sig, atomic_load(&said));
}

void el_interrupt_install(void)
{
	struct sigaction sa, was;

	owner = getpid();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* one of them at a time on a thread; the others may run it meanwhile (the registry's lock) */
	sig_set(&sa.sa_mask);
	/* a read or a wait goes on after the flag is set: the sections poll it between pieces */
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof(handled) / sizeof(*handled); i++)
		if (sigaction(handled[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
			sigaction(handled[i], &sa, NULL);
}

static void lock_registry(sigset_t *old)
{
	sigset_t set;

	sig_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, old);
	while (atomic_flag_test_and_set(&reg_lock))
		sched_yield();
}

static void unlock_registry(const sigset_t *old)
{
	int sig;

	atomic_flag_clear(&reg_lock);
	/* a handler found the lock taken: kill now, as it would have */
	if ((sig = atomic_load(&pending)) != 0) {
		while (atomic_flag_test_and_set(&reg_lock))
			sched_yield();
		kill_locked(sig, atomic_load(&said));
	}
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void add_locked(const char *path)
{
	for (size_t i = 0; i < EL_INTERRUPT_SLOTS; i++)
		if (!slots[i]) {
			slots[i] = path;
			return;
		}
}

int el_interrupt_mkstemp(char *tmpl)
{
	sigset_t old;
	int fd, e;

	/* made and registered at once: no signal falls between the two */
	lock_registry(&old);
	fd = mkostemp(tmpl, O_CLOEXEC);
	e = errno;
	if (fd >= 0)
		add_locked(tmpl);
	unlock_registry(&old);
	errno = e;
	return fd;
}

void el_interrupt_forget(const char *path)
{
	sigset_t old;

	if (!path)
		return;
	lock_registry(&old);
	for (size_t i = 0; i < EL_INTERRUPT_SLOTS; i++)
		if (slots[i] == path)
			slots[i] = NULL;
	unlock_registry(&old);
}

void el_interrupt_poll_begin(void)
{
	atomic_fetch_add(&polling, 1);
}

void el_interrupt_poll_end(void)
{
	atomic_fetch_sub(&polling, 1);
}

int el_interrupted(void)
{
	return atomic_load(&received);
}

int el_interrupt_error(envlock_ctx *ctx, const char *what)
{
	/* without a context (a cache written on the way out) nobody says it: main will */
	if (ctx)
		atomic_store(&said, 1);
	return el_error_set(ctx, ENVLOCK_ERROR, "'%s': interrupted by %s; nothing written", what,
			    sig_name(atomic_load(&received)));
}

void el_interrupt_reraise(int said_why)
{
	int sig = atomic_load(&received);
	sigset_t old;

	if (!sig)
		return;
	lock_registry(&old);
	kill_locked(sig, said_why || atomic_load(&said));
}
