/* Lockfiles loaded in parallel on util/pool.c's threads (load.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "util/pool.h"
#include "util/xalloc.h"

typedef struct {
	char *const *paths;
	el_loaded *out;
	el_lock_loader *load;
	envlock_drift *drift; /* NULL: keep the locks */
	atomic_size_t failed; /* a drift's first file that failed; n while none has */
} load_batch;

static void load_one(size_t i, void *data)
{
	load_batch *b = data;
	el_loaded *o = &b->out[i];
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
	el_pool_run(n, threads < EL_DIFF_LOADERS ? threads : EL_DIFF_LOADERS, load_one, b);
	return atomic_load(&b->failed);
}

void el_diff_load(el_loaded *out, char *const *paths, size_t n, el_lock_loader *load)
{
	load_batch b = { .paths = paths, .out = out, .load = load };

	load_all(&b, n);
}

size_t el_drift_load(envlock_drift *d, el_loaded *out, char *const *paths, size_t n, el_lock_loader *load)
{
	load_batch b = { .paths = paths, .out = out, .load = load, .drift = d };

	return load_all(&b, n);
}

void el_loaded_release(el_loaded *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		envlock_lock_free(out[i].lock);
		free(out[i].warning);
		free(out[i].error);
	}
}
