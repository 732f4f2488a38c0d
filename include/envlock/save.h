/*
 * envlock — save a machine into a lockfile (`envlock save`, and the lock
 * `envlock bundle` seals when it is given none).
 *
 * The policy: a saved lock holds everything that was asked for (a lock
 * that lacks a requested config, checkpoint or repository is never
 * written), the rule results at save time ("checks") and, when asked,
 * verify's result ("verify").
 */
#ifndef ENVLOCK_SAVE_H
#define ENVLOCK_SAVE_H

#include <stdio.h>
#include "common.h"
#include "lock.h"
#include "verify.h"

/** What envlock_save() does. Zero-initialise, then set what you need. */
typedef struct {
	/** What and where to probe. */
	envlock_probe_opts probe;
	/**
	 * The lockfile to write (envlock_lock_write: atomically; "-" is
	 * stdout). NULL writes nothing: the caller takes the lock from *out.
	 */
	const char *path;
	/**
	 * Also run envlock_verify_run() against the probed lock and record
	 * its result in the lock. Verify runs programs on this machine, so
	 * probe.root must be NULL.
	 */
	int verify;
	/**
	 * Redact the lock before it is written (envlock_lock_redact: users,
	 * host, environment values, URLs beyond host and path). Secrets are
	 * masked with or without it.
	 */
	int redact;
	/**
	 * Told each request error (envlock_lock_error) before envlock_save()
	 * refuses the lock; may be NULL.
	 */
	void (*on_request_error)(const char *message, void *data);
	void *request_error_data;
} envlock_save_opts;

/**
 * Probe (envlock_lock_probe with opts->probe), refuse a lock that lacks
 * what was asked for, record the built-in rules' results and, with
 * opts->verify, verify's, then write the lock to opts->path.
 *
 * On success *out is the lock as written and, when verified is not NULL,
 * *verified is verify's result (NULL without opts->verify); both belong
 * to the caller: free with envlock_lock_free() and envlock_verify_free().
 * A failed verify stage is not a failed save: the lock is written with
 * it, and envlock_verify_result() says so.
 *
 * On failure *out and *verified are NULL and nothing was written:
 * - ENVLOCK_EINVAL, ENVLOCK_ENOTFOUND: bad options (see
 *   envlock_lock_probe), or verify asked for with a root;
 * - ENVLOCK_ERROR with the first request error as the message, after
 *   opts->on_request_error was told each one;
 * - another code when the root cannot be opened, the rules or verify
 *   cannot run, or the write fails (the file at path is then untouched).
 */
ENVLOCK_EXTERN(int) envlock_save(envlock_lock **out, envlock_verify **verified,
				 envlock_ctx *ctx, const envlock_save_opts *opts);

/**
 * Print the summary of a saved lock as one JSON document: "id", "path"
 * (path as given; a byte that is not UTF-8 becomes U+FFFD), "warnings"
 * (their number) and "hashed" (envlock_lock_hash_stats: "files",
 * "cached", "bytes_read"). Returns 0, or ENVLOCK_EIO when out fails.
 */
ENVLOCK_EXTERN(int) envlock_save_print_json(const envlock_lock *lock, envlock_ctx *ctx,
					    const char *path, FILE *out);

#endif
