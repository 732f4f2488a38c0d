/*
 * The model `envlock verify` trains, shared word for word by the CUDA
 * program (mlp.cu, compiled by the machine's nvcc) and envlock's CPU
 * reference (reference.c): its shape, the synthetic data set made from a
 * fixed seed, and the initial weights. Both sides include this file, so
 * the data and the starting point are bit-identical by construction.
 *
 * Plain C that also compiles as CUDA C++ (C++03 is enough: old nvcc with
 * gcc 5 defaults to it). Every multiply-add is an explicit fmaf and no
 * other expression mixes * and +, so no compiler can contract one side
 * differently from the other (the one
 * exception, in el_mlp_uniform, is exact whichever way it is computed).
 *
 * The model: x (IN) -> W1, b1 -> ReLU (HIDDEN) -> W2, b2 -> softmax
 * cross-entropy over CLASSES, mean over a batch, plain SGD. Row-major:
 * x[i * IN + d], W1[d * HIDDEN + h], W2[h * CLASSES + c].
 */
#ifndef EL_VERIFY_MLP_H
#define EL_VERIFY_MLP_H

#include <math.h>
#include <stdint.h>

/* mlp.cu calls these from its kernels too */
#ifdef __CUDACC__
#define EL_MLP_FN static inline __host__ __device__
#else
#define EL_MLP_FN static inline
#endif

#define EL_MLP_IN 32
#define EL_MLP_HIDDEN 64
#define EL_MLP_CLASSES 8
#define EL_MLP_BATCH 128          /* a power of two: dividing by it is exact */
#define EL_MLP_SEED 0x656e766c6f636bULL /* "envlock" */
#define EL_MLP_LR 0.25f
#define EL_MLP_NOISE 1.0f         /* spread of each class around its centre */

typedef struct {
	int in, hidden, classes, batch;
	uint64_t seed;
	float lr, noise;
} el_mlp_shape;

/* The shape both sides train (the unit tests also use smaller ones). */
EL_MLP_FN el_mlp_shape el_mlp_default_shape(void)
{
	el_mlp_shape s;

	s.in = EL_MLP_IN;
	s.hidden = EL_MLP_HIDDEN;
	s.classes = EL_MLP_CLASSES;
	s.batch = EL_MLP_BATCH;
	s.seed = EL_MLP_SEED;
	s.lr = EL_MLP_LR;
	s.noise = EL_MLP_NOISE;
	return s;
}

/*
 * splitmix64's finaliser (Steele, Lea, Flood 2014) as a counter-based
 * generator: every random number is a hash of its own index, so the
 * GPU makes each batch in parallel and the CPU the same numbers in a
 * loop; integer arithmetic only, the same everywhere.
 */
EL_MLP_FN uint64_t el_mlp_hash(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [-1, 1), a multiple of 2^-23: the conversion and the subtraction are exact. */
EL_MLP_FN float el_mlp_uniform(uint64_t key)
{
	return (float)(el_mlp_hash(key) >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/* Centre of class c, coordinate d: uniform in [-1, 1). */
EL_MLP_FN float el_mlp_centre(const el_mlp_shape *s, int c, int d)
{
	return el_mlp_uniform((s->seed ^ 0xc3a5c85c97cb3127ULL) + (uint64_t)c * (uint64_t)s->in + (uint64_t)d);
}

/*
 * The data: an endless stream of fresh samples, so the model cannot
 * learn the data set by heart and drive the loss towards 0 (where a
 * relative comparison would mean nothing). Sample n is of class
 * n % CLASSES and lies at its centre plus noise * (u1 + u2 + u3) in
 * each coordinate; the classes overlap. Step t trains on samples
 * t * BATCH ... t * BATCH + BATCH - 1; this is sample n's coordinate d.
 */
EL_MLP_FN float el_mlp_input(const el_mlp_shape *s, uint64_t n, int d)
{
	uint64_t key = s->seed + (n * (uint64_t)s->in + (uint64_t)d) * 4u;
	float u = el_mlp_uniform(key);

	u += el_mlp_uniform(key + 1u);
	u += el_mlp_uniform(key + 2u);
	return fmaf(s->noise, u, el_mlp_centre(s, (int)(n % (uint64_t)s->classes), d));
}

EL_MLP_FN int el_mlp_label(const el_mlp_shape *s, uint64_t n)
{
	return (int)(n % (uint64_t)s->classes);
}

/* Initial weights: uniform, scaled by powers of two (exact); biases 0. */
EL_MLP_FN void el_mlp_init_weights(const el_mlp_shape *s, float *w1, float *b1, float *w2, float *b2)
{
	uint64_t key = s->seed ^ 0x5bd1e995ULL;
	int i;

	for (i = 0; i < s->in * s->hidden; i++)
		w1[i] = el_mlp_uniform(key++) * 0.25f;
	for (i = 0; i < s->hidden; i++)
		b1[i] = 0.0f;
	for (i = 0; i < s->hidden * s->classes; i++)
		w2[i] = el_mlp_uniform(key++) * 0.125f;
	for (i = 0; i < s->classes; i++)
		b2[i] = 0.0f;
}

#endif
