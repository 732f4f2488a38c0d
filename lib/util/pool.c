#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "pool.h"
#include "root.h"

typedef struct {
	atomic_size_t next;
	size_t n;
	void (*fn)(size_t i, void *data);
	void *data;
} pool_batch;

static void *worker(void *arg)
{
	pool_batch *b = arg;
	size_t i;

	while ((i = atomic_fetch_add(&b->next, 1)) < b->n)
		b->fn(i, b->data);
	return NULL;
}

static void *thread_main(void *arg)
{
	worker(arg);
	el_root_thread_done(); /* a folder a job kept open for its reads */
	return NULL;
}

size_t el_pool_default_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < 1)
		return 1;
	return (size_t)cpus > EL_POOL_MAX_THREADS ? EL_POOL_MAX_THREADS : (size_t)cpus;
}

void el_pool_run(size_t n, size_t nthreads, void (*fn)(size_t i, void *data), void *data)
{
	pthread_t tid[EL_POOL_MAX_THREADS];
	int started[EL_POOL_MAX_THREADS] = { 0 };
	pool_batch b;

	atomic_init(&b.next, 0);
	b.n = n;
	b.fn = fn;
	b.data = data;
	if (nthreads > n)
		nthreads = n;
	if (nthreads > EL_POOL_MAX_THREADS)
		nthreads = EL_POOL_MAX_THREADS;
	for (size_t t = 1; t < nthreads; t++)
		started[t] = pthread_create(&tid[t], NULL, thread_main, &b) == 0;
	worker(&b);
	for (size_t t = 1; t < nthreads; t++)
		if (started[t])
			pthread_join(tid[t], NULL);
}
