/*
 * A small thread pool for one batch of independent jobs: up to nthreads
 * threads (the caller's included) take the next job index from a shared
 * counter until none is left. Jobs should be ordered largest first so the
 * threads finish together. Results go into per-job slots, so the outcome
 * never depends on the scheduling.
 */
#ifndef EL_POOL_H
#define EL_POOL_H

#include <stddef.h>

#define EL_POOL_MAX_THREADS 64

/* One thread per online core, at most EL_POOL_MAX_THREADS. */
size_t el_pool_default_threads(void);

/*
 * Run fn(i, data) for every i in [0, n). fn must touch only its own
 * slot and data that is read-only or synchronised. If a thread cannot be
 * started, the others (at least the caller) do its share.
 */
void el_pool_run(size_t n, size_t nthreads, void (*fn)(size_t i, void *data), void *data);

#endif
