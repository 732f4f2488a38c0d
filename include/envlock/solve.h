/*
 * envlock — which stack a machine can run, and exactly how to install it
 * (`envlock solve`): Python, torch and its CUDA variant, torchvision,
 * mmcv / mmcv-full, mmengine and the OpenMMLab codebases asked for,
 * chosen from envlock's knowledge (each release's own version guards,
 * mmcv's wheel lists, PyTorch's wheels, NVIDIA's driver and GPU tables)
 * against the machine's driver, GPUs, glibc, gcc and nvcc as a lock
 * records them. Each stack comes ranked, each layer with why it was
 * chosen and the first constraint that rules out the next newer choice,
 * with the commands that install it; when nothing fits, the binding
 * constraint and the smallest change that makes something fit.
 */
#ifndef ENVLOCK_SOLVE_H
#define ENVLOCK_SOLVE_H

#include <stdio.h>
#include "common.h"
#include "lock.h"
#include "check.h"

typedef struct envlock_solution envlock_solution;

typedef struct {
	const char *const *specs; /**< what to plan for, in pip syntax: "mmdet==2.25.1", "mmpose>=1.2,<1.4", "mmpretrain", "torch>=1.10" */
	size_t nspecs;
	const char *const *configs; /**< OpenMMLab configs whose scopes and imports add to specs */
	size_t nconfigs;
	const char *python;       /**< "3.7": plan for this Python release only; NULL: choose */
	int cpu;                  /**< plan CPU stacks even on a machine with an NVIDIA GPU */
	int allow_driver_upgrade; /**< plan with the newest driver branch each GPU's architecture supports */
	size_t max_stacks;        /**< how many stacks to rank; 0: 3 */
	const char *env_name;     /**< the conda environment the commands create; NULL: after the first codebase */
	/**
	 * How the text names an option, by its field name here ("python",
	 * "cpu", "allow_driver_upgrade", "specs", "configs", "max_stacks")
	 * or by what a caller offers beside ("output", "pick", "format",
	 * "json", "stack"): NULL, or a function returning NULL, gives "the
	 * 'python' option". A command line maps them to its flags.
	 */
	const char *(*option_text)(const char *option);
} envlock_solve_opts;

/**
 * Plan stacks for the machine lock records. A plan that finds nothing is
 * still a solution (envlock_solution_count() is 0; it says why).
 * Errors, each one line naming the problem: ENVLOCK_EINVAL (a package
 * envlock does not plan, a spec that does not parse or that no release
 * meets, a Python release that does not parse, a lock that records
 * nothing of the GPU without opts->cpu), and what reading a config
 * gives (ENVLOCK_ENOTFOUND, ENVLOCK_EPARSE, ENVLOCK_ELIMIT).
 */
ENVLOCK_EXTERN(int) envlock_solve(envlock_solution **out, envlock_ctx *ctx, const envlock_lock *lock,
				  const envlock_solve_opts *opts);

/** How many stacks were found (0: none fits). */
ENVLOCK_EXTERN(size_t) envlock_solution_count(const envlock_solution *s);

/**
 * The stacks for a person: the machine's facts, each stack with its
 * layers and why, what rules out newer choices, and the commands; when
 * none fits, the binding constraint and the smallest change. Prose wraps
 * at width columns (0: never); commands are never wrapped, so that they
 * paste. ENVLOCK_PRINT_COLOR tints the headings. Returns 0 or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_solution_print(const envlock_solution *s, envlock_ctx *ctx, FILE *out,
					   unsigned flags, int width);

/**
 * The same as JSON: {"machine": {...}, "mode": "gpu" | "cpu", "requests":
 * [...], "stacks": [{"rank", "layers": [{"name", "version", "variant",
 * "why", "source"}], "pins", "commands", "ruled_out": [{"layer",
 * "candidate", "constraint", "why", "source"}], "notes"}], "none_fits":
 * null | {"binding", "why", "smallest_change", "cpu_stacks"}}; keys
 * sorted, 2-space indent. Returns 0 or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_solution_print_json(const envlock_solution *s, envlock_ctx *ctx, FILE *out);

/**
 * Write stack pick (1 is the best) to path, atomically: format "script"
 * (a POSIX shell script: set -e, a comment with each reason, the
 * commands) or "requirements" (pip's requirements file with its index
 * lines). ENVLOCK_EINVAL: no such stack or format; ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_solution_write(const envlock_solution *s, envlock_ctx *ctx, size_t pick,
					   const char *format, const char *path);

ENVLOCK_EXTERN(void) envlock_solution_free(envlock_solution *s);

/**
 * Judge a proposed stack ("python==3.7 torch==1.10.0+cu102
 * mmcv-full==1.7.5 mmdet==2.25.1") on the machine lock records: each
 * problem a finding with its source (a release that does not exist, a
 * guard it breaks, a missing prebuilt wheel, a driver, glibc, Python or
 * GPU architecture it cannot use). ENVLOCK_EINVAL for a stack that does
 * not parse (one line naming the part).
 */
ENVLOCK_EXTERN(int) envlock_solve_check(envlock_findings **out, envlock_ctx *ctx, const envlock_lock *lock,
					const char *stack, const envlock_solve_opts *opts);

#endif
