/*
 * The CPU reference of the training step in mlp.cu: the same maths in
 * the same order of operations, one loop for each CUDA kernel, so a
 * correct GPU reproduces its losses up to the rounding of expf and logf
 * (see reference.c for the bound that follows from that).
 */
#ifndef EL_VERIFY_REFERENCE_H
#define EL_VERIFY_REFERENCE_H

#include "mlp.h"

typedef struct {
	el_mlp_shape s;
	float *x;                     /* the batch of the last step: inputs and labels */
	int *y;
	float *w1, *b1, *w2, *b2;     /* parameters */
	float *gw1, *gb1, *gw2, *gb2; /* gradients from the last el_mlp_forward_backward */
	float *z1, *dl, *dz1, *lossv; /* hidden pre-activations, d loss / d logits, d loss / d z1, per-sample losses */
	/* expf and logf (NULL); the tests put the GPU's rounding error in here */
	float (*exp_fn)(float);
	float (*log_fn)(float);
	/* the plain build of the step even on a CPU with FMA (the tests compare the two) */
	int generic;
} el_mlp;

/* Set up a model of shape s (at most 256 classes) with its initial weights. */
void el_mlp_setup(el_mlp *m, const el_mlp_shape *s);
void el_mlp_release(el_mlp *m);

/* The mean loss of step's batch and its gradients; the weights are unchanged. */
float el_mlp_forward_backward(el_mlp *m, int step);

/* One SGD update with the gradients of the last el_mlp_forward_backward. */
void el_mlp_sgd(el_mlp *m);

/* Train m for steps steps from its current weights; losses[i] is step i's loss before its update. */
void el_mlp_train(el_mlp *m, int steps, float *losses);

#endif
