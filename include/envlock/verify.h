/*
 * envlock — prove this machine trains (`envlock verify`).
 *
 * envlock carries a small CUDA training program (a 2-layer MLP on
 * synthetic data made from a fixed seed: forward, softmax cross-entropy,
 * backward, SGD, in plain CUDA kernels) and the same maths in C. Verify
 * runs nine stages, each ending pass, fail or skipped with a one-line
 * reason (and, for a failure envlock knows the cause of, the fix):
 *
 *   toolchain  compile the program with this machine's nvcc and its
 *              default host compiler, for the GPUs' architectures when
 *              they are known, else as PTX any supported GPU can run
 *   runtime    run it: CUDA runtime and driver versions, the devices
 *   training   train on the GPU; every step's loss must match the CPU
 *              reference within ENVLOCK_VERIFY_TOLERANCE (relative) and
 *              fall by ENVLOCK_VERIFY_LOSS_FALL; step rate and the
 *              host-to-device bandwidth of a 256 MiB copy
 *   cudnn      load cuDNN, check cudnnGetVersion() against the locked
 *              (or installed header's) version, and on a GPU run one
 *              cuDNN operation against a CPU result
 *
 * Then the Python environment's own python (opts.python, else the
 * lockfile's when this machine's probe knows it, else the probe's)
 * runs a script envlock carries (programs/envcheck.py); skipped, saying
 * why, when the lock has no Python environment or no torch:
 *
 *   torch      import torch: its version, torch.version.cuda, the cuDNN
 *              it loads (torch.backends.cudnn.version()), whether it
 *              can use a GPU, each against the lock; a CPU-only build
 *              where the lock's torch had CUDA fails, naming the cause
 *   conv       a convolution forward and backward on the CPU (float64),
 *              then on the GPU (float32, TF32 off), which must match it
 *              within ENVLOCK_VERIFY_CONV_TOLERANCE (relative)
 *   mmcv       with mmcv in the lock: import mmcv, its compiled ops
 *              (mmcv._ext), mmcv.ops.nms on the CPU and on CUDA against
 *              a reference
 *   openmmlab  import each OpenMMLab codebase the lock has (mmdet,
 *              mmpose, mmpretrain, ...), each version against the lock
 *
 *   lock       with a lockfile, compare this machine with it as
 *              `envlock diff` does; a breaking difference fails
 *
 * Nothing is written outside a private temporary folder, which is
 * removed before envlock_verify_run returns; the program runs with
 * CUDA_CACHE_DISABLE=1, so no JIT cache lands in the home folder.
 */
#ifndef ENVLOCK_VERIFY_H
#define ENVLOCK_VERIFY_H

#include <stdio.h>
#include "common.h"
#include "lock.h"

/** Training steps when none are asked for, and the range allowed. */
#define ENVLOCK_VERIFY_DEFAULT_STEPS 200
#define ENVLOCK_VERIFY_MIN_STEPS 50
#define ENVLOCK_VERIFY_MAX_STEPS 2000

/**
 * Largest relative difference allowed between a GPU step's loss and the
 * CPU reference's. The two compute the same operations in the same order;
 * only expf and logf may round differently (CUDA documents up to 2 and 1
 * ulp, glibc under 1), which, simulated on the CPU at 3 and 2 ulp, moves
 * the losses by at most 1.2e-6 over 2000 steps, while a 0.1 % change of
 * the learning rate moves them by 1e-3. See README "envlock verify".
 */
#define ENVLOCK_VERIFY_TOLERANCE 1e-4

/** The mean loss of the last 10 steps must be at most the first step's / this. */
#define ENVLOCK_VERIFY_LOSS_FALL 4.0

/** The cuDNN operation's largest absolute error allowed (sigmoid values lie in (0, 1)). */
#define ENVLOCK_VERIFY_CUDNN_TOLERANCE 1e-5

/**
 * The conv stage's largest error allowed, relative to the largest CPU
 * value (or absolute below 1): float32 sums of 27 products round at
 * about 1e-6, a wrong result is off by far more.
 */
#define ENVLOCK_VERIFY_CONV_TOLERANCE 1e-4

typedef enum {
	ENVLOCK_VERIFY_PASS = 0,
	ENVLOCK_VERIFY_SKIPPED = 1,
	ENVLOCK_VERIFY_FAIL = 2
} envlock_verify_status;

/**
 * The overall outcome. The CLI maps it to its exit status (0, 1, 3); the
 * values are not exit statuses.
 */
typedef enum {
	ENVLOCK_VERIFY_OK = 0,  /**< every stage that ran passed, and nothing was skipped for want of a GPU */
	ENVLOCK_VERIFY_FAILED,  /**< a stage failed */
	ENVLOCK_VERIFY_NO_GPU   /**< no GPU (or cpu_only), and every stage that could run passed */
} envlock_verify_outcome;

/** Options of envlock_verify_run(). Zero-initialise, then set what you need. */
typedef struct {
	/** Toolkit to compile with; NULL: the lock's, $CUDA_HOME, /usr/local/cuda, then PATH. */
	const char *cuda_home;
	/** The lockfile to compare with (may be NULL) and its name as the user gave it. Borrowed. */
	const envlock_lock *lock;
	const char *lock_name;
	/**
	 * This machine's lock, when the caller has just probed it (save --verify);
	 * NULL: verify probes. Borrowed. Its toolkits should include cuda_home.
	 */
	const envlock_lock *live;
	/**
	 * The Python environment's python for the torch, conv, mmcv and
	 * openmmlab stages (NULL: the lockfile's, else the probe's); the
	 * probe of this machine records its environment too. Borrowed.
	 */
	const char *python;
	/** Training steps, ENVLOCK_VERIFY_MIN_STEPS..MAX_STEPS; 0 means the default. */
	int steps;
	/** Compile, and run the CPU parts only: no program is run on a GPU. */
	int cpu_only;
	/** Told what is being done before each slow part (may be NULL). */
	void (*on_progress)(const char *what, void *data);
	void *progress_data;
} envlock_verify_opts;

/** One stage's result. Strings are borrowed from the verify result. */
typedef struct {
	const char *name;     /**< "toolchain", "runtime", "training", "cudnn", "torch", "conv", "mmcv", "openmmlab", "lock" */
	envlock_verify_status status;
	const char *reason;   /**< one line */
	const char *fix;      /**< one line, or NULL */
} envlock_verify_stage;

typedef struct envlock_verify envlock_verify;

/**
 * Run every stage. Fails only on bad options (ENVLOCK_EINVAL: steps out
 * of range, a cuda_home that is not a folder, a python that is not an
 * absolute path to an executable file) or when no temporary
 * folder can be made (ENVLOCK_EIO); what the stages find is in the
 * result. cuDNN is loaded into the calling process and stays loaded.
 * *out belongs to the caller: free with envlock_verify_free().
 */
ENVLOCK_EXTERN(int) envlock_verify_run(envlock_verify **out, envlock_ctx *ctx,
				       const envlock_verify_opts *opts);

/** Number of stages (9), and stage i in the order above (NULL past the end). */
ENVLOCK_EXTERN(size_t) envlock_verify_stage_count(const envlock_verify *v);
ENVLOCK_EXTERN(const envlock_verify_stage *) envlock_verify_stage_get(const envlock_verify *v, size_t i);

/** The overall outcome. */
ENVLOCK_EXTERN(envlock_verify_outcome) envlock_verify_result(const envlock_verify *v);

/** "pass", "skipped", "fail". */
ENVLOCK_EXTERN(const char *) envlock_verify_status_name(envlock_verify_status s);

/**
 * Print for a person: one line per stage (name, status, reason, and a
 * "fix:" line), then the verdict. Returns 0 or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_verify_print(const envlock_verify *v, envlock_ctx *ctx, FILE *out,
					 unsigned flags);

/** Print every stage with its figures as one JSON document. */
ENVLOCK_EXTERN(int) envlock_verify_print_json(const envlock_verify *v, envlock_ctx *ctx, FILE *out);

/**
 * Store the result in lock's "verify" section (replacing any earlier
 * one). The section records a measurement at save time, like "created",
 * so it is left out of the lock's id.
 */
ENVLOCK_EXTERN(int) envlock_lock_record_verify(envlock_lock *lock, envlock_ctx *ctx,
					       const envlock_verify *v);

/** Free a result. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_verify_free(envlock_verify *v);

#endif
