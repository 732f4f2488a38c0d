/*
 * envlock — offline restore kits (`envlock pack LOCK -o DIR|FILE.tar.zst`):
 * everything needed to rebuild a lock's Python environment with no
 * network, each item verified: the conda archives from the package
 * caches (checked against the lock's md5/sha256), the wheels from pip's
 * caches and --wheels folders (identified by their own METADATA), wheels
 * rebuilt from installed files that still match pip's RECORD, extra
 * files (a cuDNN archive, a CUDA runfile), and the lock itself.
 *
 * Layout (`restore --kit` reads exactly this):
 *
 *   envlock.kit.json   manifest: format, version, created_by, lock, items, missing
 *   envlock.lock       byte copy of the lock
 *   conda/<fn>         fn: the basename of the lock's conda url
 *   wheels/<f>.whl     PEP 427 names (rebuilt ones too)
 *   files/<basename>   the added files
 *
 * A .tar.zst kit is that folder, named after the archive without
 * ".tar.zst", written by the bundle writer (envlock bundle verify passes)
 * in one pass from the caches: each file read once, hashed, checked
 * against the lock and stored from the same reads, envlock.kit.json last.
 */
#ifndef ENVLOCK_PACK_H
#define ENVLOCK_PACK_H

#include <stdio.h>
#include "common.h"
#include "lock.h"

/** How to build a kit. Zero-initialise, then set what you need. */
typedef struct {
	const char *const *conda_pkgs;  /**< package caches searched after <root_prefix>/pkgs and $CONDA_PKGS_DIRS */
	size_t conda_pkgs_count;
	const char *pip_cache;          /**< NULL: $PIP_CACHE_DIR, else $XDG_CACHE_HOME/pip, else ~/.cache/pip */
	const char *const *wheel_dirs;  /**< folders of wheels, searched first */
	size_t wheel_dir_count;
	const char *const *add_files;   /**< files copied into files/ */
	size_t add_count;
	int force;                      /**< replace a non-empty output folder */
	int link;                       /**< hard link instead of copying where the file system allows */
	int progress;                   /**< progress bar on stderr (caller checks the tty) */
	void (*on_warning)(const char *message, void *data);
	void *warning_data;
} envlock_pack_opts;

/** What a pack put in the kit. */
typedef struct {
	size_t items;      /**< items in the manifest (the lock not counted) */
	size_t missing;    /**< things the kit lacks, each listed with its fetch command */
	size_t not_needed; /**< distributions restore gets elsewhere (editable, conda's own) */
} envlock_pack_report;

/**
 * Build the kit of lock, loaded from lock_path (whose bytes the kit
 * keeps), into out: a folder (which must
 * not exist or be empty, unless opts->force) or, for a name ending in
 * ".tar.zst", a bundle archive. Nothing is left at out on failure: the
 * kit is built beside it and renamed into place. Each item and each
 * missing one is printed to stream (may be NULL) as one line. Returns 0
 * when the kit was written (report->missing says whether it is
 * complete), or ENVLOCK_E... with the detail on ctx: the lock has values
 * no command may hand on (ENVLOCK_EPARSE), out is in the way
 * (ENVLOCK_EEXISTS), a write failed (ENVLOCK_EIO), a bad option value
 * (ENVLOCK_EINVAL).
 */
ENVLOCK_EXTERN(int) envlock_pack(envlock_pack_report *report, envlock_ctx *ctx, const envlock_lock *lock,
				 const char *lock_path, const char *out, const envlock_pack_opts *opts, FILE *stream);

#endif
