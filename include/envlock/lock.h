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
	/** A CUDA toolkit to record besides those found (as $CUDA_HOME would be); absolute. */
	const char *cuda_home;
	/** Skip the library-digest cache and hash every file again. */
	int no_cache;
	/*
	 * Experiment provenance. These are paths on this machine as the user
	 * typed them (relative to the current directory), never resolved
	 * under root: the experiment lives where envlock runs.
	 */
	/** Checkpoint files, directories (their *.pth, *.pt, *.ckpt,
	 *  *.safetensors, *.bin) or glob patterns. */
	const char *const *checkpoints;
	size_t checkpoint_count;
	/** Config files; their _base_ chains are followed. */
	const char *const *configs;
	size_t config_count;
	/** --cfg-options "key.path=value" overrides, merged last into each
	 *  requested config's effective value (mmcv's DictAction). */
	const char *const *cfg_options;
	size_t cfg_option_count;
	/** Repositories (any folder inside one). */
	const char *const *repos;
	size_t repo_count;
	/** Record the repository holding the current directory when no repos
	 *  are given and root is the live machine. */
	int default_repo;
	/** Leave the text of uncommitted changes out (the digest stays). */
	int no_patch;
	/** Show a progress bar on stderr for long hashing (the caller checks
	 *  that stderr is a terminal). */
	int progress;
	/**
	 * Called once for each warning as it is found (may be NULL). The
	 * warnings are also stored in the lock's "warnings" list.
	 */
	void (*on_warning)(const char *message, void *data);
	void *warning_data;
} envlock_probe_opts;

/**
 * Probe the machine (or the tree under opts->root) and build a lock.
 * Problems with what is found become warnings, never failures. The call
 * fails only on bad options: ENVLOCK_EINVAL for a conda_prefix, python
 * or cuda_home that is not an absolute path or a root that is not a
 * folder, ENVLOCK_ENOTFOUND for a root that does not exist, ENVLOCK_EIO
 * for one that cannot be opened. Problems with what was asked for
 * (configs, checkpoints, repos) are request errors, not failures (see
 * envlock_lock_error_count; envlock_save refuses to write such a lock).
 * *out belongs to the caller: free with envlock_lock_free().
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

/**
 * Whether lock was edited after it was saved: 1 when the id it stores is
 * not the id of its content (envlock_lock_id), with *stored set to the
 * stored one (borrowed from the lock); else 0. A lock that holds values
 * restore and export refuse is 0: their refusal, naming the field, is
 * what such a lock gets.
 */
ENVLOCK_EXTERN(int) envlock_lock_edited(const envlock_lock *lock, const char **stored);

/** Number of warnings recorded in the lock. */
ENVLOCK_EXTERN(size_t) envlock_lock_warning_count(const envlock_lock *lock);

/** Warning i (0-based), or NULL past the end. Borrowed from the lock. */
ENVLOCK_EXTERN(const char *) envlock_lock_warning(const envlock_lock *lock,
						  size_t i);

/**
 * Problems with what the caller asked for (a --config that does not
 * exist, a checkpoint glob that matches nothing, a --repo that cannot be
 * opened): unlike warnings about the machine, these mean the lock does
 * not hold what was requested, so a caller should not write it.
 */
ENVLOCK_EXTERN(size_t) envlock_lock_error_count(const envlock_lock *lock);

/** Request error i (0-based), one line naming the path; NULL past the end. */
ENVLOCK_EXTERN(const char *) envlock_lock_error(const envlock_lock *lock, size_t i);

/** What hashing files cost during envlock_lock_probe (for --json and benchmarks). */
typedef struct {
	size_t files;        /**< files whose digest was needed */
	size_t cached;       /**< of those, answered by the digest cache without reading */
	unsigned long long bytes_read; /**< bytes read to hash the others */
} envlock_hash_stats;

/** Hashing statistics of the probe that built lock (zeros for a loaded lock). */
ENVLOCK_EXTERN(void) envlock_lock_hash_stats(const envlock_lock *lock, envlock_hash_stats *out);

/** Free a lock. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_lock_free(envlock_lock *lock);

#endif
