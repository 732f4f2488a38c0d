/*
 * envlock verify inside the library: the stages' records, what the
 * training program reports, and the parts the unit tests reach into.
 */
#ifndef EL_VERIFY_H
#define EL_VERIFY_H

#include <cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "envlock/check.h"
#include "envlock/verify.h"
#include "lock/view.h"
#include "util/buf.h"

/* mlp.cu and mlp.h as text, NUL-terminated (kernel.c). */
extern const char el_verify_mlp_cu[];
extern const char el_verify_mlp_h[];
/* programs/cudnn_load.c as text, NUL-terminated (cudnn.c). */
extern const char el_verify_cudnn_load_c[];
/* programs/envcheck.py as text, NUL-terminated (pyenv.c). */
extern const char el_verify_envcheck_py[];

enum { EL_VERIFY_TOOLCHAIN, EL_VERIFY_RUNTIME, EL_VERIFY_TRAINING, EL_VERIFY_CUDNN,
       EL_VERIFY_TORCH, EL_VERIFY_CONV, EL_VERIFY_MMCV, EL_VERIFY_OPENMMLAB, EL_VERIFY_LOCK,
       EL_VERIFY_STAGES };

typedef struct {
	envlock_verify_stage pub; /* reason and fix malloc'd */
	cJSON *figures;           /* the stage's numbers and names, for --json and the lock */
	bool no_gpu;              /* skipped for want of a GPU (or by --cpu-only) */
	bool done;                /* a status has been set */
} el_verify_stage;

struct envlock_verify {
	el_verify_stage stage[EL_VERIFY_STAGES];
	int steps;
};

/* Set a stage's status and reason (the first call wins; later ones are ignored). stage.c. */
void el_verify_set(el_verify_stage *st, envlock_verify_status status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set its fix. */
void el_verify_fix(el_verify_stage *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void el_verify_stage_init(el_verify_stage *st, const char *name);
void el_verify_stage_release(el_verify_stage *st);

/* What the training program printed, parsed with limits. */
#define EL_VERIFY_MAX_DEVICES 16
typedef struct {
	bool started;               /* its first line was seen */
	bool done;                  /* its last line was seen */
	long runtime_version;       /* 13000 for CUDA 13.0; -1 unknown */
	long driver_version;        /* the CUDA version the driver supports; 0: no driver */
	long device_count;          /* -1 unknown */
	char *devices_error;
	struct {
		char *name, *cc, *bus;
		unsigned long long memory;
	} dev[EL_VERIFY_MAX_DEVICES];
	int ndev;
	char *shape;
	int steps;                  /* size of losses */
	float *losses;              /* NaN where a step was not reported */
	unsigned char *seen;        /* 1 where it was */
	int nlosses;                /* steps reported */
	double first_run_ms, timed_run_ms; /* -1 unknown */
	int repeatable;             /* -1 unknown */
	char *training_error;
	unsigned long long h2d_bytes;
	int h2d_pinned;
	double h2d_median_ms, h2d_best_ms;
	char *h2d_error;
	long cudnn_version;         /* -1 unknown */
	char *cudnn_op;
	double cudnn_max_abs_err;   /* -1 unknown */
	char *cudnn_error;
	int ignored;                /* lines that were not understood */
} el_verify_report;

void el_verify_report_init(el_verify_report *r, int steps);
/* Parse the program's output (at most 100,000 lines of 4 KiB are looked at). */
void el_verify_report_parse(el_verify_report *r, const char *text, size_t len);
void el_verify_report_release(el_verify_report *r);

/*
 * Judge the training stage from the program's report and the CPU
 * reference's losses for the same steps (as el_mlp_train makes them).
 */
void el_verify_judge_training(el_verify_stage *st, const el_verify_report *r,
			      const float *reference, int steps);

/* The mean of the last min(10, n) losses. */
double el_verify_tail_mean(const float *losses, int n);

/*
 * The first line of a compiler's output that says what went wrong: the
 * first "error" line (gcc's "file:line:col: error: ...", nvcc's "nvcc
 * fatal : ..."), else the first line that is not a note, a warning or an
 * "In file included from"; malloc'd, at most 400 bytes; NULL for none.
 */
char *el_verify_first_error(const char *text, size_t len);

/*
 * nvcc's architecture flags: for each compute capability in ccs ("9.0")
 * that nvcc's archs ("compute_90", any order) include, SASS and PTX for
 * it; a GPU newer than every arch gets PTX of the newest one older than
 * it. With no ccs, PTX of the lowest arch, which the driver compiles for
 * any supported GPU. NULL-terminated, malloc'd (el_strv_free), and a
 * description in *desc. Returns NULL with *desc saying why when a GPU is
 * older than every arch nvcc has (CUDA 13 dropped everything before 7.5).
 * With no archs at all (an nvcc too old to list them), no flags: nvcc's
 * default embeds PTX too.
 */
char **el_verify_arch_flags(const char *const *archs, const char *const *ccs, char **desc);

/* What the cuDNN loader (programs/cudnn_load.c) printed, parsed with limits. */
typedef struct {
	bool complete;          /* its report was seen, from "program=" to "end=1" */
	bool loaded;            /* the loader loaded it */
	char *loaded_path;      /* the file the loader picked; NULL when it did not say */
	char *error;            /* dlerror()'s text when it could not be loaded */
	long long version;      /* cudnnGetVersion(); -1 when not called */
	long long cudart;       /* cudnnGetCudartVersion(); -1 when not called */
} el_verify_cudnn_report;

/*
 * Parse the loader's output: the last report in it counts (what the
 * library printed while loading comes before it); at most 64 KiB and
 * lines of 4 KiB are looked at.
 */
void el_verify_cudnn_report_parse(el_verify_cudnn_report *r, const char *text, size_t len);
void el_verify_cudnn_report_release(el_verify_cudnn_report *r);

/* What the environment's python wrote (programs/envcheck.py), parsed with limits. */
#define EL_VERIFY_PY_MAX_KEYS 256
typedef struct {
	bool started;  /* its first line, "program=envlock-envcheck 1", was seen */
	bool complete; /* and its last, "end=1" */
	char *part;    /* the last part it began ("torch", "conv", "mmcv", "import"), or NULL */
	struct {
		char *key, *val;
	} kv[EL_VERIFY_PY_MAX_KEYS];
	size_t n;
} el_verify_py_report;

/*
 * Parse the report: at most 512 KiB, lines of 4 KiB and 256 keys of 128
 * bytes are looked at; the first value of a key counts.
 */
void el_verify_py_report_parse(el_verify_py_report *r, const char *text, size_t len);
/* The value of key, or NULL. Borrowed from r. */
const char *el_verify_py_get(const el_verify_py_report *r, const char *key);
void el_verify_py_report_release(el_verify_py_report *r);

#define EL_PY_MAX_IMPORTS 16 /* OpenMMLab codebases the script imports */

/* The environment's python's run, started before the compile and collected by its stages (pyenv.c). */
typedef struct {
	pthread_t thread;
	bool started;       /* a thread runs it */
	bool ran;           /* it ran: r and why are its outcome */
	char *python;       /* what runs; NULL: the stages are skipped, skip says why */
	char *skip;         /* why nothing runs though python is known (no torch) */
	char *why;          /* why the report is not complete, or that it could not be prepared */
	char *src, *report; /* the script and its report, in the private folder */
	const char *argv[8 + 2 * EL_PY_MAX_IMPORTS];
	el_verify_py_report r;
} el_verify_py_run;

/*
 * The first executable name in PATH's absolute folders, as an absolute
 * path (malloc'd), or NULL.
 */

/* One run of envlock verify, shared by the stages (verify.c runs them; their helpers are in stage.c). */
typedef struct {
	envlock_ctx *ctx;
	const envlock_verify_opts *opts;
	struct envlock_verify *v;
	int steps;
	const envlock_lock *live_lock; /* this machine (the caller's, or owned_live) */
	envlock_lock *owned_live;
	const el_view *live;        /* its view */
	const el_view *locked;      /* the lockfile's view, or NULL */
	envlock_findings *findings; /* the rules on this machine */
	char *dir;                  /* the private folder */
	char **envp;                /* environment for nvcc and the program */
	char *program;              /* the compiled program; NULL when there is none */
	char *toolkit_version;      /* the version of the toolkit that compiled it, as the live lock has it */
	char *cudnn_path;           /* the cuDNN for the program's operation; NULL: none */
	char *cudnn_summary;        /* what the loader's part found, for the stage's reason */
	el_verify_report report;
	bool ran;                   /* the program ran (report is filled) */
	int exit_status;            /* its exit status (128 + signal) */
	/* the CPU reference, trained on a thread of its own while nvcc compiles (runtime.c) */
	struct {
		pthread_t thread;
		bool started, done; /* a thread runs it; its losses are in */
		float *losses;      /* run->steps of them */
		double seconds;
	} cpu;
	el_verify_py_run py;        /* the environment's python, run beside the compile */
} el_verify_run;

/*
 * Start training the CPU reference on a thread of its own, so that it
 * overlaps nvcc's compile; el_verify_training collects it. When no
 * thread can be started, training runs it in place.
 */
void el_verify_reference_start(el_verify_run *run);
/* Wait for the reference thread, if one runs (verify.c's cleanup; training's own wait). */
void el_verify_reference_join(el_verify_run *run);

/* A finding of rule on this machine whose subject is subject, or ends with " <subject_end>". */
const envlock_finding *el_verify_finding(const el_verify_run *run, const char *rule,
					 const char *subject, const char *subject_end);

/* Tell the caller what is being done (opts->on_progress). */
void el_verify_progress(const el_verify_run *run, const char *what);

/* Seconds since t0 (CLOCK_MONOTONIC). */
double el_verify_seconds_since(const struct timespec *t0);

/* "13.0" for 13000 (cudaRuntimeGetVersion's form); malloc'd. */
char *el_verify_cuda_version(long v);

/* The stages, in the order envlock_verify_run calls them. */
void el_verify_toolchain(el_verify_run *run);     /* toolchain.c */
void el_verify_cudnn_load(el_verify_run *run);    /* cudnn.c: the loader's part, before the program runs */
void el_verify_runtime(el_verify_run *run);       /* runtime.c: runs the program */
void el_verify_judge_runtime(el_verify_run *run); /* runtime.c: the runtime stage from run->report */
void el_verify_training(el_verify_run *run);      /* runtime.c: the CPU reference and the comparison */
void el_verify_cudnn_op(el_verify_run *run);      /* cudnn.c: the program's cuDNN operation */
void el_verify_pyenv(el_verify_run *run);         /* pyenv.c: the torch, conv, mmcv and openmmlab stages */
/*
 * Choose the python and start the script on a thread of its own, so that
 * importing torch overlaps nvcc's compile (it writes nothing the other
 * stages read); el_verify_pyenv collects it, and runs it in place when
 * no thread could be started. _release waits for it and frees what it holds.
 */
void el_verify_pyenv_start(el_verify_run *run);
void el_verify_pyenv_release(el_verify_run *run);
/*
 * Their judgement from the report python (the path run) wrote; stopped:
 * why the report is not complete (it was killed, it timed out), or NULL.
 * el_verify_pyenv runs the script, then this; the unit tests feed reports.
 */
void el_verify_pyenv_judge(el_verify_run *run, const char *python, const el_verify_py_report *r, const char *stopped);
void el_verify_lock(el_verify_run *run);          /* verify.c */

#endif
