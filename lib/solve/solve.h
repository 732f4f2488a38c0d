/*
 * Inside lib/solve: the machine as the solver sees it, what was asked
 * for, the search over envlock's knowledge and the stacks it finds.
 *
 *   facts.c    the machine's facts, from a lock's view
 *   request.c  the specs asked for and the scopes a config needs, checked against the knowledge
 *   search.c   every (torch wheel, mmcv release, codebase releases) the facts allow, ranked
 *   explain.c  each chosen layer's why, what rules out newer choices, the smallest change
 *   commands.c the install commands, the script and the requirements file
 *   print.c    text and JSON
 *   text.c     the words: option names, the requests
 *   judge.c    --check --stack: a proposed stack's problems as findings
 */
#ifndef EL_SOLVE_H
#define EL_SOLVE_H

#include <stdbool.h>
#include <stddef.h>

#include "envlock/solve.h"
#include "knowledge/knowledge.h"
#include "lock/view.h"
#include "util/buf.h"

/* --- the machine (facts.c) ---------------------------------------------- */

typedef struct {
	const char *name;
	const char *cc;        /* compute capability; NULL: unknown */
	const char *cc_source; /* "nvidia-smi" or the knowledge row's */
	const el_kb_gpu_arch *arch;
} sv_gpu;

typedef struct {
	const char *host, *os, *glibc, *gcc, *python; /* NULL: not recorded */
	const char *driver;       /* the NVIDIA driver; NULL: none */
	bool gpu_recorded;        /* the lock says anything about the GPU at all */
	sv_gpu *gpus;
	size_t ngpus;
	const char **nvcc;        /* the CUDA releases ("10.2") of the toolkits with nvcc */
	size_t nnvcc;
	/* what a relaxation assumes instead (explain.c): 0 / NULL when the facts stand */
	long driver_branch;       /* any driver of this branch */
	bool any_glibc, any_nvcc;
} sv_machine;

void sv_machine_read(sv_machine *m, const el_view *v);
void sv_machine_release(sv_machine *m);

/* Does the machine's driver meet min ("465.19.01")? */
bool sv_driver_meets(const sv_machine *m, const char *min);

/* The newest driver branch every GPU's architecture supports (the newest known when none ends); 0 when no GPU is known. */
long sv_newest_branch(const sv_machine *m, const el_kb *kb);

/* --- what was asked for (request.c) -------------------------------------- */

typedef enum { SV_PYTHON, SV_TORCH, SV_TORCHVISION, SV_MMCV, SV_MMENGINE, SV_CODEBASE } sv_kind;

/* The layer a PEP 503 name asks for; the mmcv family's package or the codebase with it. False when envlock knows no such layer. */
bool sv_layer_of(const el_kb *kb, const char *canon, sv_kind *kind, const char **package, const el_kb_codebase **cb);

#define SV_MAX_REQUESTS 32

typedef struct {
	sv_kind kind;
	const el_kb_codebase *codebase; /* SV_CODEBASE */
	const char *package;            /* SV_MMCV asked as "mmcv-full" or "mmcv"; else NULL */
	char *name;                     /* as written: for messages */
	char *spec;                     /* a PEP 440 specifier set; "" for any release */
	char *origin;                   /* where it comes from: the specs option and the spec, a config's key */
	bool from_config;               /* a config needs it (else it was asked for) */
	bool pinned;                    /* the spec names one release (==) */
} sv_request;

/* Does version v meet the request's spec (a local part counts only when the spec names one; pre-releases only when it names one)? */
bool sv_request_allows(const sv_request *r, const char *v);

/*
 * Parse "name<spec>" into r (origin: where it comes from). Errors set on
 * ctx: a name envlock does not plan (ENVLOCK_EINVAL), a spec that does
 * not parse, a spec no release in the knowledge meets.
 */
struct sv_problem;
int sv_request_parse(sv_request *r, envlock_ctx *ctx, const struct sv_problem *p, const char *text, const char *origin);

/* The version of a pin ("torch==1.10.0+cu102" -> "1.10.0+cu102"), borrowed. */
const char *sv_pin_version(const char *pin);
void sv_request_release(sv_request *r);

/*
 * The scopes and imports an OpenMMLab config needs, as requests for the
 * codebases the knowledge has (any release), and the mmcv family its
 * dialect needs (mmengine's: mmcv 2.x; mmcv 1.x's: mmcv-full 1.x).
 */
int sv_config_requests(sv_request *reqs, size_t *n, envlock_ctx *ctx, const struct sv_problem *p, const char *path);

/* --- the search (search.c) ----------------------------------------------- */

/* Why a candidate does not fit: the constraint, one line, its source. */
typedef struct {
	const char *constraint; /* "spec", "python", "driver", "gpu", "gpu-code", "glibc", "mmcv-wheel", "guard", "mmengine" */
	int depth;              /* how far the candidate got: a deeper failure is closer to fitting */
	char *why;
	const char *source;
} sv_fail;

void sv_fail_set(sv_fail *f, const char *constraint, int depth, const char *source, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void sv_fail_release(sv_fail *f);

typedef struct {
	const char *python;              /* "3.7" */
	const el_kb_torch_wheel *torch;
	int driver_fit;                  /* 2 natively, 1 through minor-version compatibility, 0 CPU */
	const el_kb_mmcv *mmcv;          /* NULL: no mmcv in this plan */
	bool prebuilt;                   /* a prebuilt wheel of mmcv for this torch and CUDA */
	const char *build_nvcc;          /* else the machine's nvcc that builds it */
	const el_kb_guard *codebase[SV_MAX_REQUESTS]; /* per request index; NULL for other requests */
	const char *engine_lo, *engine_hi; /* mmengine's range (NULL: unbounded) */
	bool engine_hi_incl;
	const char *engine_lo_from, *engine_hi_from; /* who sets each bound, for the why */
} sv_choice;

typedef struct sv_problem {
	const el_kb *kb;
	const envlock_solve_opts *opts;
	const el_view *view;
	sv_machine m;
	bool gpu;                        /* planning GPU stacks */
	sv_request req[SV_MAX_REQUESTS];
	size_t nreq;
	bool needs_mmcv;                 /* a codebase or mmcv was asked for */
	char **pythons;                  /* the Python releases the knowledge's torch rows span, oldest first */
	size_t npythons;
	/* what the requests allow, worked out once (sv_problem_prepare) */
	bool *mmcv_allowed;              /* per release of el_kb_mmcv_releases: allowed, with compiled ops */
	const el_kb_guard **cands[SV_MAX_REQUESTS]; /* per codebase request: the releases its spec allows that assert a range, newest first */
	size_t ncands[SV_MAX_REQUESTS];
} sv_problem;

/* Work out what the requests allow (p->mmcv_allowed, p->cands); sv_problem_release frees it. */
void sv_problem_prepare(sv_problem *p);
void sv_problem_release(sv_problem *p);

/* Every candidate Python the knowledge knows of: the releases between each torch row's min and max. */
void sv_pythons_build(sv_problem *p);

/*
 * Does torch wheel w fit the problem? *python gets the Python chosen for
 * it, *fit how the driver runs its CUDA; else f says why not.
 */
bool sv_torch_fits(const sv_problem *p, const el_kb_torch_wheel *w, const char **python, int *fit, sv_fail *f);

/* Does mmcv release mm fit torch wheel w (a prebuilt wheel, or a build with the machine's nvcc)? */
bool sv_mmcv_fits(const sv_problem *p, const el_kb_torch_wheel *w, const el_kb_mmcv *mm, bool *prebuilt,
		  const char **nvcc, sv_fail *f);

/* The codebases' releases for mmcv release mm (c->mmcv), newest that fit, and mmengine's range; else f says why. */
bool sv_codebases_fit(const sv_problem *p, sv_choice *c, sv_fail *f);

/* Is c better than d (the ranking: codebases, a prebuilt mmcv, torch, the driver natively, CUDA, mmcv, Python)? */
int sv_choice_cmp(const sv_problem *p, const sv_choice *c, const sv_choice *d);

typedef struct {
	sv_choice *v;                    /* the best choice of each torch release that fits, best first */
	size_t n;
	sv_fail deepest;                 /* the failure of the candidate that came closest, when none fits */
	const el_kb_torch_wheel *deepest_torch;
} sv_result;

void sv_search(const sv_problem *p, sv_result *r);
void sv_result_release(sv_result *r);

/* --- explanations (explain.c) --------------------------------------------- */

typedef struct {
	const char *name;  /* "python", "torch", "torchvision", "mmcv-full", "mmengine", "mmdet" */
	char *version;     /* "1.13.1+cu117", "3.7", ">=0.7.1,<1.0.0" */
	const char *variant; /* "cu117", "cpu"; NULL */
	char *why;
	char *source;
} sv_layer;

typedef struct {
	const char *layer;
	char *candidate;
	const char *constraint;
	char *why;
	const char *source;
} sv_ruled;

typedef struct {
	sv_choice c;
	sv_layer layers[SV_MAX_REQUESTS + 6];
	size_t nlayers;
	sv_ruled ruled[SV_MAX_REQUESTS + 6];
	size_t nruled;
	char *notes[8];
	size_t nnotes;
	char *pins[SV_MAX_REQUESTS + 6];
	size_t npins;
	char *commands[SV_MAX_REQUESTS + 8];
	size_t ncommands;
} sv_stack;

/* The layers, pins, commands and notes of choice c, and what rules out the next newer choice of each layer. */
void sv_stack_build(sv_stack *s, const sv_problem *p, const sv_choice *c);
void sv_stack_release(sv_stack *s);

typedef struct {
	const char *binding;   /* the constraint: "driver", "python", "glibc", "nvcc", ... */
	char *why;
	const char *source;
	char *change;          /* the smallest change that makes a stack fit; NULL: none found */
	bool cpu_stacks;       /* a GPU plan found nothing, and --cpu would find stacks */
} sv_none;

/* Why nothing fits p (r found nothing): the binding constraint and the smallest change. */
void sv_none_explain(sv_none *n, const sv_problem *p, const sv_result *r);
void sv_none_release(sv_none *n);

/* --- commands (commands.c) ----------------------------------------------- */

/* The conda environment's name: --name, else the first codebase asked for, else torch. */
const char *sv_env_name(const sv_problem *p);

/* Append the install commands of s (s->commands) and its pins. */
void sv_commands_build(sv_stack *s, const sv_problem *p);

/* The stack as a shell script or as a requirements file; NULL past SV_SCRIPT_MAX bytes. */
#define SV_SCRIPT_MAX ((size_t)1 << 20)
char *sv_script(const sv_problem *p, const sv_stack *s, size_t rank, size_t of);
char *sv_requirements(const sv_problem *p, const sv_stack *s, size_t rank, size_t of);

/* --- the whole solution --------------------------------------------------- */

struct envlock_solution {
	envlock_solve_opts opts; /* the caller's, copied (its strings stay the caller's) */
	sv_problem p;
	sv_stack *stacks;
	size_t nstacks;
	sv_none none;
	const char *from; /* where the facts come from: the lock's path or "this machine" */
};

/* The problem of sol (whose opts are set) from the lock and the options; errors for bad input. */
int sv_solution_init(envlock_solution *sol, envlock_ctx *ctx, const envlock_lock *lock);

/* How the text names option (envlock_solve_opts.option_text), "the 'python' option" by default. */
const char *sv_opt(const sv_problem *p, const char *option);

/* The requests for humans: "mmdet==2.25.1, mmpretrain"; malloc'd. */
char *sv_requests_text(const sv_problem *p);

#endif
