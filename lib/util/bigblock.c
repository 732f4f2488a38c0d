/* Large scratch blocks (see bigblock.h). */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "bigblock.h"

#define KEEP 8                       /* blocks kept: a lock loading on each of diff's 8 threads at most */
#define KEEP_MAX ((size_t)32 << 20)  /* larger ones (a lock near the 64 MiB cap) go back to the kernel */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept {
	void *p;
	size_t size;
} kept[KEEP];
static size_t nkept;

static void *map_new(size_t size)
{
	const size_t huge = EL_BIGBLOCK_MIN;
	char *m, *al;

	/* one alignment's worth more than needed, the ends given back: what is left starts on a 2 MiB line */
	m = mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	al = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
	if (al > m)
		munmap(m, (size_t)(al - m));
	if (al + size < m + size + huge)
		munmap(al + size, (size_t)(m + size + huge - (al + size)));
#ifdef MADV_HUGEPAGE
	madvise(al, size, MADV_HUGEPAGE); /* a hint: where huge pages are off, 4 KiB pages as before */
#endif
	return al;
}

void *el_bigblock_get(size_t want, size_t *size)
{
	size_t best = KEEP, n;
	void *p;

	if (want > SIZE_MAX - 2 * EL_BIGBLOCK_MIN)
		return NULL;
	n = (want + EL_BIGBLOCK_MIN - 1) / EL_BIGBLOCK_MIN * EL_BIGBLOCK_MIN;
	if (n == 0)
		n = EL_BIGBLOCK_MIN;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nkept; i++)
		if (kept[i].size >= n && (best == KEEP || kept[i].size <= kept[best].size)) /* the last kept of the best fit */
			best = i;
	if (best < KEEP) {
		p = kept[best].p;
		*size = kept[best].size;
		kept[best] = kept[--nkept];
		pthread_mutex_unlock(&mu);
		return p;
	}
	pthread_mutex_unlock(&mu);
	p = map_new(n);
	if (p)
		*size = n;
	return p;
}

void el_bigblock_put(void *block, size_t size)
{
	if (!block)
		return;
	if (size <= KEEP_MAX) {
		pthread_mutex_lock(&mu);
		if (nkept < KEEP) {
			kept[nkept].p = block;
			kept[nkept++].size = size;
			block = NULL;
		}
		pthread_mutex_unlock(&mu);
	}
	if (block)
		munmap(block, size);
}
