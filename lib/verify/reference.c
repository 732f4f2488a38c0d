/*
 * The CPU reference of mlp.cu's training step. Each loop below is one
 * CUDA kernel there, with the same accumulation order (the bias first,
 * then fmaf over the inner index in increasing order) and the same
 * single-thread sum for the batch loss, so the two sides round alike.
 */
#include <math.h>
#include <stdatomic.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <cpuid.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "util/xalloc.h"

static float *floats(int n)
{
	return el_xcalloc((size_t)n, sizeof(float));
}

void el_mlp_setup(el_mlp *m, const el_mlp_shape *s)
{
	memset(m, 0, sizeof(*m));
	m->s = *s;
	m->x = floats(s->batch * s->in);
	m->y = el_xcalloc((size_t)s->batch, sizeof(int));
	m->w1 = floats(s->in * s->hidden);
	m->b1 = floats(s->hidden);
	m->w2 = floats(s->hidden * s->classes);
	m->b2 = floats(s->classes);
	m->gw1 = floats(s->in * s->hidden);
	m->gb1 = floats(s->hidden);
	m->gw2 = floats(s->hidden * s->classes);
	m->gb2 = floats(s->classes);
	m->z1 = floats(s->batch * s->hidden);
	m->dl = floats(s->batch * s->classes);
	m->dz1 = floats(s->batch * s->hidden);
	m->lossv = floats(s->batch);
	el_mlp_init_weights(s, m->w1, m->b1, m->w2, m->b2);
}

void el_mlp_release(el_mlp *m)
{
	float *v[] = { m->x, m->w1, m->b1, m->w2, m->b2, m->gw1, m->gb1,
		       m->gw2, m->gb2, m->z1, m->dl, m->dz1, m->lossv };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		free(v[i]);
	free(m->y);
	memset(m, 0, sizeof(*m));
}

/*
 * The loops run in another order than the CUDA threads do, so that the
 * innermost one walks a row and vectorises: each output still
 * accumulates its terms in the kernel's order (bias or 0 first, then the
 * inner index increasing), so every output is rounded as the GPU rounds
 * it. On a CPU with FMA the same code is compiled a second time with it
 * (fb_fma), where fmaf is one instruction instead of a call into libm;
 * a fused multiply-add is exact-then-rounded either way, so both give
 * the same bits.
 */
#define EL_REF_BODY static inline __attribute__((always_inline))
#if defined(__GNUC__) && !defined(__clang__)
/* -O2's "very cheap" model vectorises only loops whose length is known: these rows' lengths are the shape's */
#pragma GCC optimize("vect-cost-model=dynamic")
#endif

/* mlp.cu: k_hidden, one thread per (sample, unit) */
EL_REF_BODY void hidden(el_mlp *m, const float *x)
{
	const el_mlp_shape *s = &m->s;

	for (int b = 0; b < s->batch; b++) {
		float *z = m->z1 + b * s->hidden;

		memcpy(z, m->b1, (size_t)s->hidden * sizeof(float));
		for (int d = 0; d < s->in; d++) {
			const float xv = x[b * s->in + d], *w = m->w1 + d * s->hidden;

			for (int h = 0; h < s->hidden; h++)
				z[h] = fmaf(xv, w[h], z[h]);
		}
	}
}

/* mlp.cu: k_softmax, one thread per sample: logits, softmax, loss, d loss / d logits */
EL_REF_BODY void softmax(el_mlp *m, const int *y)
{
	const el_mlp_shape *s = &m->s;
	float (*ex)(float) = m->exp_fn ? m->exp_fn : expf;
	float (*lg)(float) = m->log_fn ? m->log_fn : logf;
	float logit[256], e[256];

	for (int b = 0; b < s->batch; b++) {
		float mx, sum = 0.0f;

		memcpy(logit, m->b2, (size_t)s->classes * sizeof(float));
		for (int h = 0; h < s->hidden; h++) {
			const float z = m->z1[b * s->hidden + h], a = z > 0.0f ? z : 0.0f, *w = m->w2 + h * s->classes;

			for (int c = 0; c < s->classes; c++)
				logit[c] = fmaf(a, w[c], logit[c]);
		}
		mx = logit[0];
		for (int c = 1; c < s->classes; c++)
			if (logit[c] > mx)
				mx = logit[c];
		for (int c = 0; c < s->classes; c++) {
			e[c] = ex(logit[c] - mx);
			sum += e[c];
		}
		m->lossv[b] = lg(sum) - (logit[y[b]] - mx);
		for (int c = 0; c < s->classes; c++) {
			float p = e[c] / sum;

			m->dl[b * s->classes + c] = (p - (c == y[b] ? 1.0f : 0.0f)) / (float)s->batch;
		}
	}
}

EL_REF_BODY float forward_backward(el_mlp *m, int step)
{
	const el_mlp_shape *s = &m->s;
	const float *x = m->x;
	const int *y = m->y;
	float total = 0.0f;

	/* k_data: one thread per sample */
	for (int b = 0; b < s->batch; b++) {
		uint64_t n = (uint64_t)step * (uint64_t)s->batch + (uint64_t)b;

		for (int d = 0; d < s->in; d++)
			m->x[b * s->in + d] = el_mlp_input(s, n, d);
		m->y[b] = el_mlp_label(s, n);
	}
	hidden(m, x);
	softmax(m, y);
	/* k_loss: one thread, samples in order */
	for (int b = 0; b < s->batch; b++)
		total += m->lossv[b];
	/* k_grad_out: one thread per (unit, class), and one per class for the bias; samples in order */
	memset(m->gw2, 0, (size_t)(s->hidden * s->classes) * sizeof(float));
	memset(m->gb2, 0, (size_t)s->classes * sizeof(float));
	for (int b = 0; b < s->batch; b++) {
		const float *dl = m->dl + b * s->classes;

		for (int h = 0; h < s->hidden; h++) {
			const float z = m->z1[b * s->hidden + h], a = z > 0.0f ? z : 0.0f;
			float *g = m->gw2 + h * s->classes;

			for (int c = 0; c < s->classes; c++)
				g[c] = fmaf(a, dl[c], g[c]);
		}
		for (int c = 0; c < s->classes; c++)
			m->gb2[c] += dl[c];
	}
	/* k_grad_hidden: one thread per (sample, unit), through the ReLU; classes in order */
	for (int b = 0; b < s->batch; b++) {
		float *dz = m->dz1 + b * s->hidden;
		const float *z = m->z1 + b * s->hidden;

		memset(dz, 0, (size_t)s->hidden * sizeof(float));
		for (int c = 0; c < s->classes; c++) {
			const float dv = m->dl[b * s->classes + c], *w = m->w2 + c;

			for (int h = 0; h < s->hidden; h++)
				dz[h] = fmaf(dv, w[h * s->classes], dz[h]);
		}
		for (int h = 0; h < s->hidden; h++)
			dz[h] = z[h] > 0.0f ? dz[h] : 0.0f;
	}
	/* k_grad_in: one thread per (input, unit), and one per unit for the bias; samples in order */
	memset(m->gw1, 0, (size_t)(s->in * s->hidden) * sizeof(float));
	memset(m->gb1, 0, (size_t)s->hidden * sizeof(float));
	for (int b = 0; b < s->batch; b++) {
		const float *dz = m->dz1 + b * s->hidden;

		for (int d = 0; d < s->in; d++) {
			const float xv = x[b * s->in + d];
			float *g = m->gw1 + d * s->hidden;

			for (int h = 0; h < s->hidden; h++)
				g[h] = fmaf(xv, dz[h], g[h]);
		}
		for (int h = 0; h < s->hidden; h++)
			m->gb1[h] += dz[h];
	}
	return total / (float)s->batch;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EL_REF_FMA 1
__attribute__((target("avx2,fma"))) static float fb_fma(el_mlp *m, int step)
{
	return forward_backward(m, step);
}

/*
 * AVX2 and FMA usable: the CPU has them and the kernel saves the AVX
 * state (XCR0). Asked here, the first time the reference runs, not with
 * __builtin_cpu_supports: that links libgcc's __cpu_indicator_init, a
 * constructor whose cpuid probe ran at every start of every command,
 * a trap to the hypervisor per leaf on a virtual machine (4 % of a
 * two-lock diff).
 */
static int avx2_fma(void)
{
	static atomic_int known = -1;
	unsigned a, b, c, d, lo, hi;
	int yes = 0;

	if (atomic_load(&known) >= 0)
		return atomic_load(&known);
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_FMA) && (c & bit_AVX) && (c & bit_OSXSAVE)) {
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		(void)hi;
		yes = (lo & 6) == 6 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
	}
	atomic_store(&known, yes);
	return yes;
}
#endif

float el_mlp_forward_backward(el_mlp *m, int step)
{
#ifdef EL_REF_FMA
	if (!m->generic && avx2_fma())
		return fb_fma(m, step);
#endif
	return forward_backward(m, step);
}

static void update(float *w, const float *g, int n, float lr)
{
	for (int i = 0; i < n; i++)
		w[i] = fmaf(-lr, g[i], w[i]);
}

void el_mlp_sgd(el_mlp *m)
{
	const el_mlp_shape *s = &m->s;

	update(m->w1, m->gw1, s->in * s->hidden, s->lr);
	update(m->b1, m->gb1, s->hidden, s->lr);
	update(m->w2, m->gw2, s->hidden * s->classes, s->lr);
	update(m->b2, m->gb2, s->classes, s->lr);
}

void el_mlp_train(el_mlp *m, int steps, float *losses)
{
	for (int i = 0; i < steps; i++) {
		losses[i] = el_mlp_forward_backward(m, i);
		el_mlp_sgd(m);
	}
}
