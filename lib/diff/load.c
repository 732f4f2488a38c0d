/* Lockfiles loaded in parallel on util/pool.c's threads (include/envlock/diff.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/diff.h"
#include "util/pool.h"
#include "util/xalloc.h"

/* at most this many files parsed at once: each holds a whole lock */
#define LOADERS 8

typedef struct {
	char *const *paths;
	envlock_loaded *out;
	envlock_lock_loader *load;
	envlock_drift *drift; /* NULL: keep the locks */
	atomic_size_t failed; /* a drift's first file that failed; n while none has */
} load_batch;

static void load_one(size_t i, void *data)
{
	load_batch *b = data;
	envlock_loaded *o = &b->out[i];
	envlock_ctx *ctx;

	if (b->drift && i > atomic_load(&b->failed))
		return; /* the table will not be printed */
	if (envlock_ctx_new(&ctx) != 0) {
		o->error = el_xstrdup("out of memory");
		return;
	}
	if (b->load(&o->lock, ctx, b->paths[i], &o->warning) != 0 ||
	    (b->drift && envlock_drift_put(b->drift, ctx, o->lock, i) != 0)) {
		o->error = el_xstrdup(envlock_error_last(ctx));
		if (b->drift) {
			size_t seen = atomic_load(&b->failed);

			while (i < seen && !atomic_compare_exchange_weak(&b->failed, &seen, i))
				;
		}
	}
	if (b->drift || o->error) {
		envlock_lock_free(o->lock);
		o->lock = NULL;
	}
	envlock_ctx_free(ctx);
}

static size_t load_all(load_batch *b, size_t n)
{
	size_t threads = el_pool_default_threads();

	memset(b->out, 0, n * sizeof(*b->out));
	atomic_init(&b->failed, n);
	el_pool_run(n, threads < LOADERS ? threads : LOADERS, load_one, b);
	return atomic_load(&b->failed);
}

void envlock_diff_load(envlock_loaded *out, char *const *paths, size_t n, envlock_lock_loader *load)
{
	load_batch b = { .paths = paths, .out = out, .load = load };

	load_all(&b, n);
}

size_t envlock_drift_load(envlock_drift *d, envlock_loaded *out, char *const *paths, size_t n, envlock_lock_loader *load)
{
	load_batch b = { .paths = paths, .out = out, .load = load, .drift = d };

	return load_all(&b, n);
}

void envlock_loaded_release(envlock_loaded *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		envlock_lock_free(out[i].lock);
		free(out[i].warning);
		free(out[i].error);
	}
}
