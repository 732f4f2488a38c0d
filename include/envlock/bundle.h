/*
 * envlock — bundles: one deterministic .tar.zst of an experiment's
 * work_dir with the lockfile of the environment that produced it and a
 * manifest of every file's digest (`envlock bundle`).
 *
 * Layout (pax tar, zstd): "envlock.lock.json", "MANIFEST.json", then the
 * work_dir's entries under "<work_dir name>/" in sorted order. The zstd
 * stream is three runs of concatenated frames (the lockfile's entry;
 * the manifest's, in raw blocks; the work_dir's), which any zstd reader
 * decodes as one tar archive.
 */
#ifndef ENVLOCK_BUNDLE_H
#define ENVLOCK_BUNDLE_H

#include <stdio.h>
#include "common.h"
#include "lock.h"

/** How to build a bundle. Zero-initialise, then set what you need. */
typedef struct {
	const char *lock_path;              /**< lockfile to include; NULL: probe this machine */
	const char *const *excludes;        /**< glob patterns on paths relative to the work_dir */
	size_t exclude_count;
	int checkpoints_hash_only;          /**< leave weights out, keep their digests */
	int level;                          /**< zstd level (0: default 3) */
	int threads;                        /**< 0 or 1: compress on one thread; N >= 2: zstd's
						     N worker threads (the same bytes for every such N,
						     not those of one thread) */
	int progress;                       /**< progress bar on stderr (caller checks the tty) */
	int redact;                         /**< seal the lock redacted (envlock_lock_redact); the
						     work_dir's own files are sealed as they are */
	void (*on_warning)(const char *message, void *data);
	void *warning_data;
} envlock_bundle_opts;

/**
 * Write the bundle of work_dir to out_path atomically (nothing is left at
 * out_path on failure). Each stored file is read once, hashed and
 * compressed from the same buffers; files left out by
 * checkpoints_hash_only are hashed through the digest cache. Files that
 * change while being bundled make it fail with ENVLOCK_ERROR, naming the
 * file.
 */
ENVLOCK_EXTERN(int) envlock_bundle_create(envlock_ctx *ctx, const char *work_dir,
					  const char *out_path, const envlock_bundle_opts *opts);

/** Result of envlock_bundle_verify. */
typedef struct {
	size_t entries;      /**< entries checked */
	size_t problems;     /**< mismatches, missing and extra entries */
} envlock_bundle_report;

/**
 * Stream through the archive, recompute every digest and compare with its
 * manifest and the lock id. Each problem is printed to stream as one line
 * ("<path>: <what>"); returns 0 when the archive could be read (check
 * report->problems), or an error code for an unreadable archive.
 */
ENVLOCK_EXTERN(int) envlock_bundle_verify(envlock_bundle_report *report, envlock_ctx *ctx,
					  const char *archive, FILE *stream);

/** Print the manifest's entries (path, type, size, digest), or as JSON. */
ENVLOCK_EXTERN(int) envlock_bundle_list(envlock_ctx *ctx, const char *archive, FILE *out, int json);

/** Limits and options for extraction. Zero means the default. */
typedef struct {
	unsigned long long max_total_bytes;  /**< default 64 GiB */
	unsigned long long max_entries;      /**< default 1,000,000 */
	unsigned long long max_ratio;        /**< uncompressed / compressed, default 1000 */
	int force;                           /**< extract into an existing directory */
} envlock_extract_opts;

/**
 * Extract archive into dir safely: no absolute paths, no "..", no links
 * leading outside dir, no device or fifo entries, no writing through an
 * earlier symlink; stops at the limits. Every file's digest is checked
 * against the manifest. Fails with ENVLOCK_EINVAL (unsafe entry),
 * ENVLOCK_ELIMIT (a limit), ENVLOCK_EPARSE (not a bundle), ENVLOCK_EIO,
 * ENVLOCK_EEXISTS (dir exists and opts->force is not set).
 */
ENVLOCK_EXTERN(int) envlock_bundle_extract(envlock_ctx *ctx, const char *archive,
					   const char *dir, const envlock_extract_opts *opts);

#endif
