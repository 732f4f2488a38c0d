/* envlock verify: prove this machine compiles, runs and trains a CUDA program. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: envlock verify [LOCK] [--cuda-home DIR] [--python EXE] [--steps N] [--cpu-only] [--json]\n"
		"\n"
		"  LOCK            a lockfile to compare this machine with (as envlock diff does)\n"
		"  --cuda-home DIR the CUDA toolkit to compile with (default: the lock's,\n"
		"                  $CUDA_HOME, /usr/local/cuda, then the nvcc in PATH)\n"
		"  --python EXE    the Python environment to check (default: the lock's,\n"
		"                  when this machine has it, else the one save would record)\n"
		"  --steps N       training steps, %d to %d (default %d)\n"
		"  --cpu-only      compile, and run the CPU parts only\n"
		"  --json          print every stage with its figures as JSON\n"
		"\n"
		"Stages: toolchain (nvcc compiles the bundled training program), runtime\n"
		"(it runs: CUDA runtime, driver, devices), training (the GPU's loss matches\n"
		"the CPU reference within %g relative at every step and falls %g times;\n"
		"steps/s and host-to-device GB/s), cudnn (cudnnGetVersion() against the\n"
		"locked version; one cuDNN operation on the GPU); then, with the environment's\n"
		"own python: torch (version, torch.version.cuda, the cuDNN it loads, against\n"
		"the lock), conv (a convolution forward and backward, GPU against CPU), mmcv\n"
		"(compiled ops, mmcv.ops.nms on CUDA), openmmlab (mmdet, mmpose, ... import);\n"
		"and lock.\n"
		"\n"
		"Exit status: 0 every stage passed, 1 a stage failed, 2 usage error,\n"
		"3 no GPU (or --cpu-only) but every stage that could run passed.\n",
		ENVLOCK_VERIFY_MIN_STEPS, ENVLOCK_VERIFY_MAX_STEPS, ENVLOCK_VERIFY_DEFAULT_STEPS,
		ENVLOCK_VERIFY_TOLERANCE, ENVLOCK_VERIFY_LOSS_FALL);
}

static void progress(const char *what, void *data)
{
	(void)data;
	fprintf(stderr, "envlock: verify: %s...\n", what);
}

/* envlock verify's exit status for an outcome (DESIGN.md: 0 pass, 1 fail, 3 no GPU) */
static int exit_status(envlock_verify_outcome o)
{
	switch (o) {
	case ENVLOCK_VERIFY_OK: return CMD_OK;
	case ENVLOCK_VERIFY_NO_GPU: return CMD_NO_GPU;
	case ENVLOCK_VERIFY_FAILED: break;
	}
	return CMD_FAIL;
}

int cmd_verify(int argc, char **argv, envlock_ctx *ctx)
{
	static const struct option options[] = {
		{ "cuda-home", required_argument, NULL, 'c' },
		{ "python", required_argument, NULL, 'p' },
		{ "steps", required_argument, NULL, 's' },
		{ "cpu-only", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	envlock_verify_opts opts;
	envlock_lock *lock = NULL;
	envlock_verify *v = NULL;
	int c, rc, json = 0;
	char *end;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'c': opts.cuda_home = optarg; break;
		case 'p': opts.python = optarg; break;
		case 's':
			opts.steps = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || opts.steps < ENVLOCK_VERIFY_MIN_STEPS ||
			    opts.steps > ENVLOCK_VERIFY_MAX_STEPS) {
				cmd_error("verify: --steps '%s': a number from %d to %d", optarg,
					  ENVLOCK_VERIFY_MIN_STEPS, ENVLOCK_VERIFY_MAX_STEPS);
				return CMD_USAGE;
			}
			break;
		case 'C': opts.cpu_only = 1; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return CMD_OK;
		default: return cmd_bad_option("verify", argv, usage);
		}
	}
	if (argc - optind > 1) {
		cmd_error("verify: expected at most one lockfile, got %d", argc - optind);
		return CMD_USAGE;
	}
	if (optind < argc) {
		if ((rc = cmd_lock_load(&lock, ctx, argv[optind])) != 0)
			return rc;
		opts.lock = lock;
		opts.lock_name = argv[optind];
	}
	if (isatty(STDERR_FILENO))
		opts.on_progress = progress;
	/* a bad option value (2) is not a machine that fails (1) */
	if ((rc = envlock_verify_run(&v, ctx, &opts)) != 0 && rc != ENVLOCK_EINVAL && rc != ENVLOCK_ENOTFOUND) {
		cmd_error("verify: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
	}
	if (rc != 0)
		goto done;
	if ((json ? envlock_verify_print_json(v, ctx, stdout)
		  : envlock_verify_print(v, ctx, stdout, cmd_print_flags())) != 0) {
		cmd_error("verify: %s", envlock_error_last(ctx));
		rc = CMD_FAIL;
		goto done;
	}
	rc = exit_status(envlock_verify_result(v));
done:
	envlock_verify_free(v);
	envlock_lock_free(lock);
	return rc;
}
