/*
 * The lockfiles of envlock diff, loaded in parallel: parsing and
 * validating them is most of a diff's time. The threads are
 * util/pool.c's; what each file gave (its lock, a warning, an error)
 * stays in its own slot, so what is said, and in which order, never
 * depends on the scheduling.
 */
#ifndef EL_DIFF_LOAD_H
#define EL_DIFF_LOAD_H

#include <stddef.h>

#include "envlock/diff.h"

/* at most this many files parsed at once: each holds a whole lock */
#define EL_DIFF_LOADERS 8

/*
 * How a file is loaded: envlock_lock_load and what the caller notes about
 * the lock (*warning, NULL for nothing, freed with free()).
 */
typedef int el_lock_loader(envlock_lock **out, envlock_ctx *ctx, const char *path, char **warning);

/* What became of one file. */
typedef struct {
	envlock_lock *lock; /* el_diff_load only: the lock, NULL when it failed */
	char *warning;      /* the loader's note, when it loaded */
	char *error;        /* why it failed, NULL when it did not (or was not tried) */
} el_loaded;

/*
 * Load paths[0..n) into out[0..n), each file on its own context, every
 * file tried whatever became of the others. Free with el_loaded_release().
 */
void el_diff_load(el_loaded *out, char *const *paths, size_t n, el_lock_loader *load);

/*
 * The same for a drift table: lock i is put into d as its file i
 * (envlock_drift_expect named them) on the thread that loaded it, then
 * freed, so memory stays a lock a thread whatever the fleet's size; the
 * files after the first that failed are not needed and may be left
 * untried. Returns the index of the first that failed, or n.
 */
size_t el_drift_load(envlock_drift *d, el_loaded *out, char *const *paths, size_t n, el_lock_loader *load);

/* Free what out[0..n) holds (the locks too). */
void el_loaded_release(el_loaded *out, size_t n);

#endif
