#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"
#include "xalloc.h"

#define EL_PROGRESS_DELAY_MS 1000
#define EL_PROGRESS_TICK_MS 200

struct el_progress {
	char label[64];
	uint64_t total;
	atomic_uint_fast64_t done;
	int enabled, shown;
	pthread_t thread;
	int thread_started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop;
	struct timespec start;
};

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* 1536 -> "1.5 KiB" */
static void human(char *buf, size_t n, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static void draw(el_progress *p)
{
	double t = since(&p->start), done = (double)atomic_load(&p->done);
	double rate = t > 0 ? done / t : 0;
	char d[32], tot[32], r[32], eta[32] = "--";

	human(d, sizeof(d), done);
	human(tot, sizeof(tot), (double)p->total);
	human(r, sizeof(r), rate);
	if (rate > 0 && p->total > done) {
		long s = (long)(((double)p->total - done) / rate + 0.5);

		snprintf(eta, sizeof(eta), "%ld:%02ld", s / 60, s % 60);
	}
	fprintf(stderr, "\r%s %s / %s  %3.0f%%  %s/s  ETA %s\033[K", p->label, d, tot,
		p->total ? 100.0 * done / (double)p->total : 100.0, r, eta);
	fflush(stderr);
	p->shown = 1;
}

static void *redraw(void *arg)
{
	el_progress *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += EL_PROGRESS_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->wake, &p->lock, &until);
		if (!p->stop && since(&p->start) * 1000 >= EL_PROGRESS_DELAY_MS)
			draw(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

el_progress *el_progress_start(const char *label, uint64_t total, int enabled)
{
	el_progress *p = el_xcalloc(1, sizeof(*p));

	snprintf(p->label, sizeof(p->label), "%s", label);
	p->total = total;
	p->enabled = enabled;
	atomic_init(&p->done, 0);
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	if (enabled)
		p->thread_started = pthread_create(&p->thread, NULL, redraw, p) == 0;
	return p;
}

void el_progress_add(uint64_t n, void *progress)
{
	el_progress *p = progress;

	atomic_fetch_add(&p->done, n);
}

void el_progress_finish(el_progress *p)
{
	if (!p)
		return;
	if (p->thread_started) {
		pthread_mutex_lock(&p->lock);
		p->stop = 1;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
