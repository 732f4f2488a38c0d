/*
 * The CPU reference of mlp.cu's training step. Each loop below is one
 * CUDA kernel there, with the same accumulation order (the bias first,
 * then fmaf over the inner index in increasing order) and the same
 * single-thread sum for the batch loss, so the two sides round alike.
 */
#include <math.h>
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

/* mlp.cu: k_hidden, one thread per (sample, unit) */
static void hidden(el_mlp *m, const float *x)
{
	const el_mlp_shape *s = &m->s;

	for (int b = 0; b < s->batch; b++)
		for (int h = 0; h < s->hidden; h++) {
			float acc = m->b1[h];

			for (int d = 0; d < s->in; d++)
				acc = fmaf(x[b * s->in + d], m->w1[d * s->hidden + h], acc);
			m->z1[b * s->hidden + h] = acc;
		}
}

/* mlp.cu: k_softmax, one thread per sample: logits, softmax, loss, d loss / d logits */
static void softmax(el_mlp *m, const int *y)
{
	const el_mlp_shape *s = &m->s;
	float (*ex)(float) = m->exp_fn ? m->exp_fn : expf;
	float (*lg)(float) = m->log_fn ? m->log_fn : logf;
	float logit[256], e[256];

	for (int b = 0; b < s->batch; b++) {
		float mx, sum = 0.0f;

		for (int c = 0; c < s->classes; c++) {
			float acc = m->b2[c];

			for (int h = 0; h < s->hidden; h++) {
				float a = m->z1[b * s->hidden + h] > 0.0f ? m->z1[b * s->hidden + h] : 0.0f;

				acc = fmaf(a, m->w2[h * s->classes + c], acc);
			}
			logit[c] = acc;
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

float el_mlp_forward_backward(el_mlp *m, int step)
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
	/* k_grad_out: one thread per (unit, class), and one per class for the bias */
	for (int h = 0; h < s->hidden; h++)
		for (int c = 0; c < s->classes; c++) {
			float acc = 0.0f;

			for (int b = 0; b < s->batch; b++) {
				float a = m->z1[b * s->hidden + h] > 0.0f ? m->z1[b * s->hidden + h] : 0.0f;

				acc = fmaf(a, m->dl[b * s->classes + c], acc);
			}
			m->gw2[h * s->classes + c] = acc;
		}
	for (int c = 0; c < s->classes; c++) {
		float acc = 0.0f;

		for (int b = 0; b < s->batch; b++)
			acc += m->dl[b * s->classes + c];
		m->gb2[c] = acc;
	}
	/* k_grad_hidden: one thread per (sample, unit), through the ReLU */
	for (int b = 0; b < s->batch; b++)
		for (int h = 0; h < s->hidden; h++) {
			float acc = 0.0f;

			for (int c = 0; c < s->classes; c++)
				acc = fmaf(m->dl[b * s->classes + c], m->w2[h * s->classes + c], acc);
			m->dz1[b * s->hidden + h] = m->z1[b * s->hidden + h] > 0.0f ? acc : 0.0f;
		}
	/* k_grad_in: one thread per (input, unit), and one per unit for the bias */
	for (int d = 0; d < s->in; d++)
		for (int h = 0; h < s->hidden; h++) {
			float acc = 0.0f;

			for (int b = 0; b < s->batch; b++)
				acc = fmaf(x[b * s->in + d], m->dz1[b * s->hidden + h], acc);
			m->gw1[d * s->hidden + h] = acc;
		}
	for (int h = 0; h < s->hidden; h++) {
		float acc = 0.0f;

		for (int b = 0; b < s->batch; b++)
			acc += m->dz1[b * s->hidden + h];
		m->gb1[h] = acc;
	}
	return total / (float)s->batch;
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
