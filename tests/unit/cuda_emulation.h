/*
 * Just enough of the CUDA runtime for lib/verify/mlp.cu to run on the
 * CPU, one thread after another, compiled by g++ with -DEL_EMULATE and
 * -include of this file. It is not CUDA: it lets test_verify.c check the
 * program's kernels (their indexing, their order of operations) and its
 * output against envlock's CPU reference on a machine without a GPU.
 * The device is reported as "CPU emulation"; cuDNN is not emulated.
 */
#ifndef EL_CUDA_EMULATION_H
#define EL_CUDA_EMULATION_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define __global__
#define __host__
#define __device__

struct el_dim3 {
	unsigned x;
};
static el_dim3 threadIdx, blockIdx, blockDim;

typedef int cudaError_t;
typedef struct timespec *cudaEvent_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

struct cudaDeviceProp {
	char name[256];
	int major, minor;
	size_t totalGlobalMem;
	int pciDomainID, pciBusID, pciDeviceID;
};

/* every thread of every block, in order */
#define EL_LAUNCH(kernel, blocks, threads, ...) \
	do { \
		blockDim.x = (unsigned)(threads); \
		for (unsigned b_ = 0; b_ < (unsigned)(blocks); b_++) \
			for (unsigned t_ = 0; t_ < (unsigned)(threads); t_++) { \
				blockIdx.x = b_; \
				threadIdx.x = t_; \
				kernel(__VA_ARGS__); \
			} \
	} while (0)

static inline const char *cudaGetErrorName(cudaError_t e)
{
	return e ? "cudaErrorMemoryAllocation" : "cudaSuccess";
}

static inline const char *cudaGetErrorString(cudaError_t e)
{
	return e ? "out of memory" : "no error";
}

static inline cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
static inline cudaError_t cudaDriverGetVersion(int *v) { *v = 13000; return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int i) { (void)i; return cudaSuccess; }
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }

static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int i)
{
	(void)i;
	memset(p, 0, sizeof(*p));
	strcpy(p->name, "CPU emulation");
	p->major = 9;
	p->minor = 0;
	p->totalGlobalMem = (size_t)1 << 30;
	return cudaSuccess;
}

static inline cudaError_t cudaMalloc(void **p, size_t n)
{
	*p = calloc(1, n);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

static inline cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
static inline cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
static inline cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }

static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
	(void)kind;
	memcpy(dst, src, n);
	return cudaSuccess;
}

static inline cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	*e = (cudaEvent_t)calloc(1, sizeof(struct timespec));
	return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

static inline cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
static inline cudaError_t cudaEventRecord(cudaEvent_t e, int stream) { (void)stream; clock_gettime(CLOCK_MONOTONIC, e); return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { (void)e; return cudaSuccess; }

static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	*ms = (float)((double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6);
	return cudaSuccess;
}

#endif
