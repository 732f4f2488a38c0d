/*
 * envlock verify's training program. envlock carries this file as text,
 * writes it with mlp.h into a private folder and compiles it with the
 * machine's own nvcc and host compiler; running it is the test of the
 * driver, the runtime and the GPU.
 *
 * It prints "key=value" lines on stdout, flushed one by one, so what it
 * said before a crash still counts: the CUDA runtime and driver versions
 * and the devices; then, with a device, each training step's loss for
 * envlock to compare with its CPU reference (reference.c), the step rate,
 * the host-to-device bandwidth and, given --cudnn LIB, one cuDNN
 * operation checked against the CPU.
 *
 * Usage: mlp [--steps N] [--h2d-mib N] [--cudnn LIBRARY]
 *
 * The kernels are plain CUDA (no cuBLAS), one thread per output value,
 * each accumulating in a fixed order with fmaf, and sums over the batch
 * are done by one thread: no atomics, so a run is bit-for-bit repeatable
 * and matches the CPU reference up to the rounding of expf and logf.
 * Built with -fmad=false, so nvcc fuses nothing the source does not.
 */
#ifndef EL_EMULATE
#include <cuda_runtime.h>
#define EL_LAUNCH(kernel, blocks, threads, ...) kernel<<<(blocks), (threads)>>>(__VA_ARGS__)
#endif
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"

#define THREADS 128
#define MAX_DEVICES 16

static int blocks_for(int n)
{
	return (n + THREADS - 1) / THREADS;
}

/* One "key=value" line, flushed at once. */
static void say(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("%s=", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void say_error(const char *key, const char *what, cudaError_t e)
{
	say(key, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* ---- the kernels; reference.c has the same loops in the same order ---- */

__global__ void k_data(el_mlp_shape s, int step, float *x, int *y)
{
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t n = (uint64_t)step * (uint64_t)s.batch + (uint64_t)b;
	int d;

	if (b >= s.batch)
		return;
	for (d = 0; d < s.in; d++)
		x[b * s.in + d] = el_mlp_input(&s, n, d);
	y[b] = el_mlp_label(&s, n);
}

__global__ void k_hidden(el_mlp_shape s, const float *x, const float *w1, const float *b1, float *z1)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x, b, h, d;
	float acc;

	if (i >= s.batch * s.hidden)
		return;
	b = i / s.hidden;
	h = i % s.hidden;
	acc = b1[h];
	for (d = 0; d < s.in; d++)
		acc = fmaf(x[b * s.in + d], w1[d * s.hidden + h], acc);
	z1[i] = acc;
}

__global__ void k_softmax(el_mlp_shape s, const float *z1, const float *w2, const float *b2,
			  const int *y, float *lossv, float *dl)
{
	int b = blockIdx.x * blockDim.x + threadIdx.x, c, h;
	float logit[EL_MLP_CLASSES], e[EL_MLP_CLASSES], mx, sum = 0.0f;

	if (b >= s.batch || s.classes > EL_MLP_CLASSES)
		return;
	for (c = 0; c < s.classes; c++) {
		float acc = b2[c];

		for (h = 0; h < s.hidden; h++) {
			float a = z1[b * s.hidden + h] > 0.0f ? z1[b * s.hidden + h] : 0.0f;

			acc = fmaf(a, w2[h * s.classes + c], acc);
		}
		logit[c] = acc;
	}
	mx = logit[0];
	for (c = 1; c < s.classes; c++)
		if (logit[c] > mx)
			mx = logit[c];
	for (c = 0; c < s.classes; c++) {
		e[c] = expf(logit[c] - mx);
		sum += e[c];
	}
	lossv[b] = logf(sum) - (logit[y[b]] - mx);
	for (c = 0; c < s.classes; c++) {
		float p = e[c] / sum;

		dl[b * s.classes + c] = (p - (c == y[b] ? 1.0f : 0.0f)) / (float)s.batch;
	}
}

/* one thread: the batch's mean loss, samples in order */
__global__ void k_loss(el_mlp_shape s, const float *lossv, float *loss)
{
	float total = 0.0f;
	int b;

	if (blockIdx.x * blockDim.x + threadIdx.x != 0)
		return;
	for (b = 0; b < s.batch; b++)
		total += lossv[b];
	*loss = total / (float)s.batch;
}

__global__ void k_grad_out(el_mlp_shape s, const float *z1, const float *dl, float *gw2, float *gb2)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x, b;
	float acc = 0.0f;

	if (i < s.hidden * s.classes) {
		int h = i / s.classes, c = i % s.classes;

		for (b = 0; b < s.batch; b++) {
			float a = z1[b * s.hidden + h] > 0.0f ? z1[b * s.hidden + h] : 0.0f;

			acc = fmaf(a, dl[b * s.classes + c], acc);
		}
		gw2[i] = acc;
	} else if (i < s.hidden * s.classes + s.classes) {
		int c = i - s.hidden * s.classes;

		for (b = 0; b < s.batch; b++)
			acc += dl[b * s.classes + c];
		gb2[c] = acc;
	}
}

__global__ void k_grad_hidden(el_mlp_shape s, const float *z1, const float *dl, const float *w2, float *dz1)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x, b, h, c;
	float acc = 0.0f;

	if (i >= s.batch * s.hidden)
		return;
	b = i / s.hidden;
	h = i % s.hidden;
	for (c = 0; c < s.classes; c++)
		acc = fmaf(dl[b * s.classes + c], w2[h * s.classes + c], acc);
	dz1[i] = z1[i] > 0.0f ? acc : 0.0f;
}

__global__ void k_grad_in(el_mlp_shape s, const float *x, const float *dz1, float *gw1, float *gb1)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x, b;
	float acc = 0.0f;

	if (i < s.in * s.hidden) {
		int d = i / s.hidden, h = i % s.hidden;

		for (b = 0; b < s.batch; b++)
			acc = fmaf(x[b * s.in + d], dz1[b * s.hidden + h], acc);
		gw1[i] = acc;
	} else if (i < s.in * s.hidden + s.hidden) {
		int h = i - s.in * s.hidden;

		for (b = 0; b < s.batch; b++)
			acc += dz1[b * s.hidden + h];
		gb1[h] = acc;
	}
}

/* parameters and gradients are laid out alike: W1 | b1 | W2 | b2 */
__global__ void k_sgd(int n, float lr, float *w, const float *g)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		w[i] = fmaf(-lr, g[i], w[i]);
}

/* ---- training ---- */

typedef struct {
	el_mlp_shape s;
	int nparams;
	float *params, *grads, *x, *z1, *dl, *dz1, *lossv, *losses;
	int *y;
} model;

static int n_params(const el_mlp_shape *s)
{
	return s->in * s->hidden + s->hidden + s->hidden * s->classes + s->classes;
}

static void step(model *m, int t)
{
	const el_mlp_shape s = m->s;
	float *w1 = m->params, *b1 = w1 + s.in * s.hidden, *w2 = b1 + s.hidden, *b2 = w2 + s.hidden * s.classes;
	float *gw1 = m->grads, *gb1 = gw1 + s.in * s.hidden, *gw2 = gb1 + s.hidden, *gb2 = gw2 + s.hidden * s.classes;

	EL_LAUNCH(k_data, blocks_for(s.batch), THREADS, s, t, m->x, m->y);
	EL_LAUNCH(k_hidden, blocks_for(s.batch * s.hidden), THREADS, s, m->x, w1, b1, m->z1);
	EL_LAUNCH(k_softmax, blocks_for(s.batch), THREADS, s, m->z1, w2, b2, m->y, m->lossv, m->dl);
	EL_LAUNCH(k_loss, 1, 1, s, m->lossv, m->losses + t);
	EL_LAUNCH(k_grad_out, blocks_for(s.hidden * s.classes + s.classes), THREADS, s, m->z1, m->dl, gw2, gb2);
	EL_LAUNCH(k_grad_hidden, blocks_for(s.batch * s.hidden), THREADS, s, m->z1, m->dl, w2, m->dz1);
	EL_LAUNCH(k_grad_in, blocks_for(s.in * s.hidden + s.hidden), THREADS, s, m->x, m->dz1, gw1, gb1);
	EL_LAUNCH(k_sgd, blocks_for(m->nparams), THREADS, m->nparams, s.lr, m->params, m->grads);
}

/* Train steps steps from the initial weights; the losses stay on the device. */
static cudaError_t train(model *m, const float *initial, int steps, float *ms)
{
	cudaEvent_t start, stop;
	cudaError_t e;
	int t;

	if ((e = cudaMemcpy(m->params, initial, (size_t)m->nparams * sizeof(float), cudaMemcpyHostToDevice)) != cudaSuccess)
		return e;
	if ((e = cudaEventCreate(&start)) != cudaSuccess)
		return e;
	if ((e = cudaEventCreate(&stop)) != cudaSuccess) {
		cudaEventDestroy(start);
		return e;
	}
	cudaEventRecord(start, 0);
	for (t = 0; t < steps; t++)
		step(m, t);
	e = cudaGetLastError();
	cudaEventRecord(stop, 0);
	if (e == cudaSuccess)
		e = cudaEventSynchronize(stop);
	if (e == cudaSuccess)
		e = cudaEventElapsedTime(ms, start, stop);
	cudaEventDestroy(start);
	cudaEventDestroy(stop);
	return e;
}

static int run_training(int steps)
{
	model m;
	el_mlp_shape s = el_mlp_default_shape();
	float *initial, *first, *second, ms1 = 0.0f, ms2 = 0.0f;
	cudaError_t e;
	int t, same = 1, rc = 1;

	memset(&m, 0, sizeof(m));
	m.s = s;
	m.nparams = n_params(&s);
	initial = (float *)calloc((size_t)m.nparams, sizeof(float));
	first = (float *)calloc((size_t)steps, sizeof(float));
	second = (float *)calloc((size_t)steps, sizeof(float));
	if (!initial || !first || !second) {
		say("training.error", "out of host memory");
		goto done;
	}
	{
		float *w1 = initial, *b1 = w1 + s.in * s.hidden, *w2 = b1 + s.hidden, *b2 = w2 + s.hidden * s.classes;

		el_mlp_init_weights(&s, w1, b1, w2, b2);
	}
	say("training.shape", "in %d hidden %d classes %d batch %d lr %.9g", s.in, s.hidden, s.classes, s.batch, (double)s.lr);
	if ((e = cudaMalloc((void **)&m.params, (size_t)m.nparams * sizeof(float))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.grads, (size_t)m.nparams * sizeof(float))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.x, (size_t)(s.batch * s.in) * sizeof(float))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.y, (size_t)s.batch * sizeof(int))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.z1, (size_t)(s.batch * s.hidden) * sizeof(float))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.dz1, (size_t)(s.batch * s.hidden) * sizeof(float))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.dl, (size_t)(s.batch * s.classes) * sizeof(float))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.lossv, (size_t)s.batch * sizeof(float))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&m.losses, (size_t)steps * sizeof(float))) != cudaSuccess) {
		say_error("training.error", "cudaMalloc", e);
		goto done;
	}
	/* the checked run: its first launch also loads (or JIT-compiles) the kernels */
	if ((e = train(&m, initial, steps, &ms1)) != cudaSuccess ||
	    (e = cudaMemcpy(first, m.losses, (size_t)steps * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) {
		say_error("training.error", "training", e);
		goto done;
	}
	for (t = 0; t < steps; t++)
		say("loss", "%d %.9g", t, (double)first[t]);
	/* the timed run, warm: the same steps again must give the same bits */
	if ((e = train(&m, initial, steps, &ms2)) != cudaSuccess ||
	    (e = cudaMemcpy(second, m.losses, (size_t)steps * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) {
		say_error("training.error", "second training run", e);
		goto done;
	}
	for (t = 0; t < steps; t++)
		same &= memcmp(&first[t], &second[t], sizeof(float)) == 0;
	say("training.first_run_ms", "%.3f", (double)ms1);
	say("training.timed_run_ms", "%.3f", (double)ms2);
	say("training.repeatable", "%d", same);
	rc = 0;
done:
	cudaFree(m.params);
	cudaFree(m.grads);
	cudaFree(m.x);
	cudaFree(m.y);
	cudaFree(m.z1);
	cudaFree(m.dz1);
	cudaFree(m.dl);
	cudaFree(m.lossv);
	cudaFree(m.losses);
	free(initial);
	free(first);
	free(second);
	return rc;
}

/* ---- host to device bandwidth: pinned memory, median of 5 copies after a warm-up ---- */

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static void run_h2d(size_t mib)
{
	size_t bytes = mib << 20;
	void *host = NULL, *dev = NULL;
	int pinned = 1, r;
	float ms[5];
	cudaEvent_t start, stop;
	cudaError_t e;

	if (cudaMallocHost(&host, bytes) != cudaSuccess) {
		cudaGetLastError();
		pinned = 0;
		host = malloc(bytes);
	}
	if (!host) {
		say("h2d.error", "cannot allocate %lu MiB of host memory", (unsigned long)mib);
		return;
	}
	memset(host, 1, bytes);
	if ((e = cudaMalloc(&dev, bytes)) != cudaSuccess) {
		say_error("h2d.error", "cudaMalloc", e);
		goto done;
	}
	cudaEventCreate(&start);
	cudaEventCreate(&stop);
	e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
	for (r = 0; r < 5 && e == cudaSuccess; r++) {
		cudaEventRecord(start, 0);
		e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
		cudaEventRecord(stop, 0);
		if (e == cudaSuccess)
			e = cudaEventSynchronize(stop);
		if (e == cudaSuccess)
			e = cudaEventElapsedTime(&ms[r], start, stop);
	}
	cudaEventDestroy(start);
	cudaEventDestroy(stop);
	if (e != cudaSuccess) {
		say_error("h2d.error", "cudaMemcpy", e);
		goto done;
	}
	qsort(ms, 5, sizeof(ms[0]), cmp_float);
	say("h2d.bytes", "%lu", (unsigned long)bytes);
	say("h2d.pinned", "%d", pinned);
	say("h2d.median_ms", "%.4f", (double)ms[2]);
	say("h2d.best_ms", "%.4f", (double)ms[0]);
done:
	cudaFree(dev);
	if (pinned)
		cudaFreeHost(host);
	else
		free(host);
}

/* ---- one cuDNN operation, loaded with dlopen so the build needs no cuDNN ---- */

/* cuDNN's C API (cudnn_graph.h, cudnn_ops.h): handles are pointers, enums ints */
typedef int (*cudnn_create_fn)(void **);
typedef int (*cudnn_destroy_fn)(void *);
typedef int (*cudnn_set_tensor_fn)(void *, int format, int type, int n, int c, int h, int w);
typedef int (*cudnn_set_activation_fn)(void *, int mode, int nan_opt, double coef);
typedef int (*cudnn_activation_fn)(void *, void *, const void *, void *, const void *,
				   const void *, void *, void *);
typedef const char *(*cudnn_error_fn)(int);
typedef size_t (*cudnn_version_fn)(void);

#define CUDNN_TENSOR_NCHW 0
#define CUDNN_DATA_FLOAT 0
#define CUDNN_ACTIVATION_SIGMOID 0
#define CUDNN_NOT_PROPAGATE_NAN 0

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p)
		say("cudnn.error", "%s: no symbol %s", "dlsym", name);
	return p;
}

static void run_cudnn(const char *path)
{
	enum { N = 1, C = 4, H = 16, W = 16, COUNT = N * C * H * W };
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL), *handle = NULL, *xd = NULL, *yd = NULL, *ad = NULL;
	float host_x[COUNT], host_y[COUNT], alpha = 1.0f, beta = 0.0f, *dx = NULL, *dy = NULL;
	cudnn_create_fn create, create_tensor, create_act;
	cudnn_destroy_fn destroy, destroy_tensor, destroy_act;
	cudnn_set_tensor_fn set_tensor;
	cudnn_set_activation_fn set_act;
	cudnn_activation_fn forward;
	cudnn_error_fn errstr;
	cudnn_version_fn version;
	double worst = 0.0;
	int st, i;
	cudaError_t e;

	if (!lib) {
		say("cudnn.error", "dlopen: %s", dlerror());
		return;
	}
	if (!(version = (cudnn_version_fn)sym(lib, "cudnnGetVersion")) ||
	    !(create = (cudnn_create_fn)sym(lib, "cudnnCreate")) ||
	    !(destroy = (cudnn_destroy_fn)sym(lib, "cudnnDestroy")) ||
	    !(create_tensor = (cudnn_create_fn)sym(lib, "cudnnCreateTensorDescriptor")) ||
	    !(destroy_tensor = (cudnn_destroy_fn)sym(lib, "cudnnDestroyTensorDescriptor")) ||
	    !(set_tensor = (cudnn_set_tensor_fn)sym(lib, "cudnnSetTensor4dDescriptor")) ||
	    !(create_act = (cudnn_create_fn)sym(lib, "cudnnCreateActivationDescriptor")) ||
	    !(destroy_act = (cudnn_destroy_fn)sym(lib, "cudnnDestroyActivationDescriptor")) ||
	    !(set_act = (cudnn_set_activation_fn)sym(lib, "cudnnSetActivationDescriptor")) ||
	    !(forward = (cudnn_activation_fn)sym(lib, "cudnnActivationForward")) ||
	    !(errstr = (cudnn_error_fn)sym(lib, "cudnnGetErrorString")))
		goto done;
	say("cudnn.version", "%lu", (unsigned long)version());
	say("cudnn.op", "activation forward (sigmoid), %dx%dx%dx%d float", N, C, H, W);
	for (i = 0; i < COUNT; i++)
		host_x[i] = el_mlp_uniform(EL_MLP_SEED + 77u + (uint64_t)i) * 8.0f;
	if ((e = cudaMalloc((void **)&dx, sizeof(host_x))) != cudaSuccess ||
	    (e = cudaMalloc((void **)&dy, sizeof(host_y))) != cudaSuccess ||
	    (e = cudaMemcpy(dx, host_x, sizeof(host_x), cudaMemcpyHostToDevice)) != cudaSuccess) {
		say_error("cudnn.error", "cudaMalloc", e);
		goto done;
	}
#define CUDNN_TRY(call, what) \
	if ((st = (call)) != 0) { \
		say("cudnn.error", "%s: %s", what, errstr(st)); \
		goto done; \
	}
	CUDNN_TRY(create(&handle), "cudnnCreate");
	CUDNN_TRY(create_tensor(&xd), "cudnnCreateTensorDescriptor");
	CUDNN_TRY(create_tensor(&yd), "cudnnCreateTensorDescriptor");
	CUDNN_TRY(set_tensor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W), "cudnnSetTensor4dDescriptor");
	CUDNN_TRY(set_tensor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W), "cudnnSetTensor4dDescriptor");
	CUDNN_TRY(create_act(&ad), "cudnnCreateActivationDescriptor");
	CUDNN_TRY(set_act(ad, CUDNN_ACTIVATION_SIGMOID, CUDNN_NOT_PROPAGATE_NAN, 0.0), "cudnnSetActivationDescriptor");
	CUDNN_TRY(forward(handle, ad, &alpha, xd, dx, &beta, yd, dy), "cudnnActivationForward");
#undef CUDNN_TRY
	if ((e = cudaMemcpy(host_y, dy, sizeof(host_y), cudaMemcpyDeviceToHost)) != cudaSuccess) {
		say_error("cudnn.error", "cudaMemcpy", e);
		goto done;
	}
	for (i = 0; i < COUNT; i++) {
		double want = 1.0 / (1.0 + exp(-(double)host_x[i])), err = fabs((double)host_y[i] - want);

		if (!(err <= worst))
			worst = err; /* a NaN stays */
	}
	say("cudnn.max_abs_err", "%.3g", worst);
done:
	if (ad)
		destroy_act(ad);
	if (xd)
		destroy_tensor(xd);
	if (yd)
		destroy_tensor(yd);
	if (handle)
		destroy(handle);
	cudaFree(dx);
	cudaFree(dy);
	/* cuDNN stays loaded: unloading it while the CUDA context lives helps nobody */
}

int main(int argc, char **argv)
{
	int steps = 200, runtime = 0, driver = 0, count = 0, i;
	size_t h2d_mib = 256;
	const char *cudnn = NULL;
	cudaError_t e;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--steps") == 0)
			steps = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--h2d-mib") == 0)
			h2d_mib = (size_t)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--cudnn") == 0)
			cudnn = argv[i + 1];
	}
	if (steps < 1 || steps > 1000000 || h2d_mib < 1 || h2d_mib > 4096) {
		fprintf(stderr, "usage: %s [--steps N] [--h2d-mib N] [--cudnn LIBRARY]\n", argv[0]);
		return 2;
	}
	say("program", "envlock-verify-mlp 1");
	cudaRuntimeGetVersion(&runtime);
	cudaDriverGetVersion(&driver);
	say("runtime.version", "%d", runtime);
	say("driver.version", "%d", driver);
	if ((e = cudaGetDeviceCount(&count)) != cudaSuccess) {
		say_error("devices.error", "cudaGetDeviceCount", e);
		count = 0;
	}
	say("devices.count", "%d", count);
	for (i = 0; i < count && i < MAX_DEVICES; i++) {
		cudaDeviceProp p;
		char key[64];

		if ((e = cudaGetDeviceProperties(&p, i)) != cudaSuccess) {
			say_error("devices.error", "cudaGetDeviceProperties", e);
			return 1;
		}
		snprintf(key, sizeof(key), "device.%d.name", i);
		say(key, "%s", p.name);
		snprintf(key, sizeof(key), "device.%d.cc", i);
		say(key, "%d.%d", p.major, p.minor);
		snprintf(key, sizeof(key), "device.%d.memory", i);
		say(key, "%llu", (unsigned long long)p.totalGlobalMem);
		snprintf(key, sizeof(key), "device.%d.bus", i);
		say(key, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
	}
	if (count == 0)
		return 0;
	if ((e = cudaSetDevice(0)) != cudaSuccess) {
		say_error("training.error", "cudaSetDevice", e);
		return 1;
	}
	if (run_training(steps) != 0)
		return 1;
	run_h2d(h2d_mib);
	if (cudnn)
		run_cudnn(cudnn);
	say("done", "1");
	return 0;
}
