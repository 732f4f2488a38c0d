/*
 * envlock — the lockfile: probe a machine into one, read one, write one.
 *
 * A lock is the in-memory model every consumer works from: probes fill
 * it (envlock_lock_probe), envlock_lock_load reads one from a file, and
 * envlock_lock_write serialises it in the canonical layout (sorted keys,
 * 2-space indent, final newline).
 */
#ifndef ENVLOCK_LOCK_H
#define ENVLOCK_LOCK_H

#include <stdio.h>
#include "common.h"

typedef struct envlock_lock envlock_lock;

/** What and where to probe. Zero-initialise, then set what you need. */
typedef struct {
	/** Directory every absolute path is resolved under; NULL means "/". */
	const char *root;
	/** Conda environment to record; NULL: $CONDA_PREFIX, then a search. */
	const char *conda_prefix;
	/** Python executable whose environment to record; NULL: search. */
	const char *python;
	/** Skip the library-digest cache and hash every file again. */
	int no_cache;
	/**
	 * Called once for each warning as it is found (may be NULL). The
	 * warnings are also stored in the lock's "warnings" list.
	 */
	void (*on_warning)(const char *message, void *data);
	void *warning_data;
} envlock_probe_opts;

/**
 * Probe the machine (or the tree under opts->root) and build a lock.
 * Problems with what is found become warnings, never failures; the call
 * fails only on bad options or exhausted resources. *out belongs to the
 * caller: free with envlock_lock_free().
 */
ENVLOCK_EXTERN(int) envlock_lock_probe(envlock_lock **out, envlock_ctx *ctx,
				       const envlock_probe_opts *opts);

/**
 * Read a lockfile. Fails with ENVLOCK_ENOTFOUND, ENVLOCK_EIO,
 * ENVLOCK_ELIMIT (file over 64 MiB), ENVLOCK_EPARSE (not JSON, not a
 * lockfile) or ENVLOCK_EVERSION (a format this version does not read).
 */
ENVLOCK_EXTERN(int) envlock_lock_load(envlock_lock **out, envlock_ctx *ctx,
				      const char *path);

/**
 * Write the lock to path atomically (temporary file in the same
 * directory, fsync, rename); "-" writes to stdout. On failure the
 * previous file at path is untouched.
 */
ENVLOCK_EXTERN(int) envlock_lock_write(const envlock_lock *lock,
				       envlock_ctx *ctx, const char *path);

/** The lock's id, "sha256:<64 hex>". Borrowed from the lock. */
ENVLOCK_EXTERN(const char *) envlock_lock_id(const envlock_lock *lock);

/** Number of warnings recorded in the lock. */
ENVLOCK_EXTERN(size_t) envlock_lock_warning_count(const envlock_lock *lock);

/** Warning i (0-based), or NULL past the end. Borrowed from the lock. */
ENVLOCK_EXTERN(const char *) envlock_lock_warning(const envlock_lock *lock,
						  size_t i);

/** Free a lock. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_lock_free(envlock_lock *lock);

#endif
