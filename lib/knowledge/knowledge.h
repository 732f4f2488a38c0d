/*
 * What envlock knows about the stack, release by release: the data of
 * the JSON files of knowledge/, compiled into the binary, each row with its source.
 *
 * - openmmlab.json: the mmcv and mmengine ranges each release of mmdet,
 *   mmseg, mmpose, mmcls and mmpretrain asserts in its own __init__.py;
 *   which mmcv / mmcv-full releases exist and the CUDA x torch pairs of
 *   their prebuilt Linux wheels; the package names and index URL.
 * - pytorch.json: each torch release's Linux wheels (variant, CUDA, the
 *   torch and torchvision pins and the index of the install command of
 *   that era), its Python range, the cuDNN it bundles, the GPU
 *   architectures each variant was built for and the glibc it needs.
 * - nvidia.json: CUDA -> driver (with minor-version compatibility),
 *   nvcc -> newest gcc, cuDNN -> CUDA, GPU -> compute capability, the
 *   driver branches of each architecture, and where GPU code runs.
 *
 * The rules (lib/rules) read the tables by name; the solver (lib/solve)
 * and the fixes read the typed rows below. Versions are never written in
 * C: a release envlock does not know is a release these tables lack.
 * Everything returned is borrowed from the knowledge, which lives as
 * long as the process.
 */
#ifndef EL_KNOWLEDGE_H
#define EL_KNOWLEDGE_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/* A list of borrowed strings. */
typedef struct {
	const char *const *v;
	size_t n;
} el_kb_list;

/* An OpenMMLab codebase: its import package and pip distribution. */
typedef struct {
	const char *package;      /* "mmseg" */
	const char *distribution; /* "mmsegmentation" */
	el_kb_list aliases;       /* other names users give it */
	const char *source;
} el_kb_codebase;

/* The mmcv (and mmengine) range one release's __init__.py asserts. */
typedef struct {
	const char *package, *version;   /* "mmdet", "2.25.1" */
	const char *mmcv_min, *mmcv_max; /* NULL: the release asserts no such bound */
	bool mmcv_max_inclusive;         /* mmcv <= max (mmdet 2.x), not mmcv < max */
	const char *mmengine_min, *mmengine_max;
	bool mmengine_max_inclusive;
	const char *source;
} el_kb_guard;

/* One prebuilt wheel of an mmcv release: its cells in mmcv's version.json. */
typedef struct {
	const char *cuda;  /* "10.2", or "cpu" */
	const char *torch; /* "1.10.x" */
} el_kb_wheel;

/* An mmcv or mmcv-full release and its prebuilt Linux wheels. */
typedef struct {
	const char *package, *version; /* "mmcv-full", "1.7.0" */
	const el_kb_wheel *wheels;
	size_t nwheels;
	const char *source;
} el_kb_mmcv;

/* One Linux wheel variant of a torch release, as its install command of that era gives it. */
typedef struct {
	const char *torch;        /* "1.10.0" */
	const char *variant;      /* "cu102", "cpu" */
	const char *cuda;         /* "10.2"; NULL for cpu */
	const char *torch_pin;    /* "torch==1.10.0+cu102" */
	const char *vision_pin;   /* "torchvision==0.11.0+cu102" */
	const char *index_option; /* "find-links", "extra-index-url", "index-url"; NULL: PyPI */
	const char *index_url;
	const char *source;
} el_kb_torch_wheel;

/* The Python releases a torch release has wheels for. */
typedef struct {
	const char *torch, *python_min, *python_max, *source; /* "1.10", "3.6", "3.9" */
} el_kb_torch_python;

/* The GPU code in a torch release's wheels for some of its CUDA variants. */
typedef struct {
	const char *torch;  /* "1.10" */
	el_kb_list cuda;    /* the variants' CUDA releases */
	el_kb_list sm, ptx; /* "8.6": cubins for, and PTX for, these compute capabilities */
	const char *source;
} el_kb_torch_arch;

/* The glibc a torch release's wheels need; variants: only those (else every variant without a row of its own). */
typedef struct {
	const char *torch;
	el_kb_list variants;
	const char *glibc, *tag, *source;
} el_kb_torch_glibc;

/* The cuDNN a torch release's wheels of one CUDA variant bundle. */
typedef struct {
	const char *torch, *cuda, *cudnn, *source;
} el_kb_torch_cudnn;

/* The driver a CUDA release needs. */
typedef struct {
	const char *cuda;                /* "11.1" */
	const char *toolkit;             /* "11.1.0": the first toolkit of the release */
	const char *min_driver;          /* what that toolkit needs */
	const char *minor_compat_driver; /* what minor-version compatibility needs (CUDA 11 and later); NULL before */
	const char *source;
} el_kb_cuda_driver;

/* A GPU architecture: its compute capabilities and the driver branches that support it. */
typedef struct {
	const char *name;
	el_kb_list compute_capabilities;
	long first_branch, last_branch; /* last: -1 while NVIDIA still supports it */
	const char *source;
} el_kb_gpu_arch;

typedef struct el_kb el_kb;

/*
 * The built-in knowledge, read on first use (thread-safe) and kept for
 * the life of the process: a table is parsed the first time it is asked
 * for, a part's typed rows built the first time one of its readers runs.
 * A built-in file that does not parse ends envlock with a fatal line:
 * the tests keep that from ever shipping.
 */
const el_kb *el_kb_builtin(void);

/* Add the digest of the built-in knowledge (each table file's path and bytes) to h: what a lock's checks.rules covers. */
struct el_sha256;
void el_kb_digest_into(struct el_sha256 *h);

/* A table by name ({"source", "rows"}), or NULL. */
const cJSON *el_kb_table(const el_kb *kb, const char *name);

/*
 * The same without the typed rows: only that table is parsed (the first
 * time), which is all the rules engine needs of the knowledge.
 */
const cJSON *el_kb_find_table(const char *name);

/* Is there a table name? (Nothing is parsed: what loading rules checks.) */
bool el_kb_has_table(const char *name);

/* The source of a row: its own, else its table's. */
const char *el_kb_row_source(const cJSON *table, const cJSON *row);

/* --- OpenMMLab (openmmlab.c) --- */

/* The codebase whose package, distribution or alias is name (PEP 503 comparison), or NULL. */
const el_kb_codebase *el_kb_codebase_find(const el_kb *kb, const char *name);
const el_kb_codebase *el_kb_codebases(const el_kb *kb, size_t *n);

/* The releases of package, oldest first (*n of them; none: NULL). */
const el_kb_guard *el_kb_guards(const el_kb *kb, const char *package, size_t *n);

/* The row of package's release version, or NULL. */
const el_kb_guard *el_kb_guard_find(const el_kb *kb, const char *package, const char *version);

/* "1.3.17 <= mmcv <= 1.7.0", "mmcv < 2.2.0": g's range as its assert reads; malloc'd. */
char *el_kb_guard_range(const el_kb_guard *g);

/* Does mmcv version v lie in g's range? A side g does not bound counts as met. */
bool el_kb_guard_accepts_mmcv(const el_kb_guard *g, const char *v);

/* The mmcv and mmcv-full releases, oldest first. */
const el_kb_mmcv *el_kb_mmcv_releases(const el_kb *kb, size_t *n);

/* The release of mmcv version (any package name when package is NULL), or NULL: no such release. */
const el_kb_mmcv *el_kb_mmcv_find(const el_kb *kb, const char *package, const char *version);

/*
 * The package name mmcv's version v is published under ("mmcv-full" for
 * 1.x, "mmcv" for 0.x and 2.x), and whether that package has the
 * compiled ops; *source the row's. NULL when no row covers v.
 */
const char *el_kb_mmcv_package(const el_kb *kb, const char *v, bool *ops, const char **source);

/* Has m a prebuilt wheel for torch release torch ("1.10.1") and CUDA release cuda ("10.2"; NULL: CPU)? */
bool el_kb_mmcv_has_wheel(const el_kb_mmcv *m, const char *torch, const char *cuda);

/*
 * The find-links index of mmcv's prebuilt wheels for torch and cuda
 * (NULL: CPU), from the wheel index template; malloc'd. *source the
 * template's.
 */
char *el_kb_mmcv_index_url(const el_kb *kb, const char *torch, const char *cuda, const char **source);

/* The lowest mmengine mmcv version v needs (its runtime requirements), or NULL; *source its row's. */
const char *el_kb_mmcv_mmengine_min(const el_kb *kb, const char *v, const char **source);

/* --- PyTorch (pytorch.c) --- */

/* Every torch wheel variant, newest release first, then newest CUDA, then CPU. */
const el_kb_torch_wheel *el_kb_torch_wheels(const el_kb *kb, size_t *n);

/* The wheel of torch version ("1.10.0") and variant ("cu102", "cpu"), or NULL. */
const el_kb_torch_wheel *el_kb_torch_wheel_find(const el_kb *kb, const char *torch, const char *variant);

/* Every torch release's Python range. */
const el_kb_torch_python *el_kb_torch_pythons(const el_kb *kb, size_t *n);

/* Rows of the release torch ("1.10.2" or "1.10") belongs to, or NULL. */
const el_kb_torch_python *el_kb_torch_python_of(const el_kb *kb, const char *torch);
const el_kb_torch_arch *el_kb_torch_arch_of(const el_kb *kb, const char *torch, const char *cuda);
const el_kb_torch_glibc *el_kb_torch_glibc_of(const el_kb *kb, const char *torch, const char *variant);
const el_kb_torch_cudnn *el_kb_torch_cudnn_of(const el_kb *kb, const char *torch, const char *cuda);

/* --- NVIDIA (nvidia.c) --- */

/* The driver row of a CUDA release ("10.2.89" or "10.2"), or NULL. */
const el_kb_cuda_driver *el_kb_cuda_driver_of(const el_kb *kb, const char *cuda);

/* The newest driver any row names (what "the newest driver" means to envlock). */
const char *el_kb_newest_driver(const el_kb *kb);

/* The highest gcc major nvcc of CUDA release cuda accepts, or -1; *source its row's. */
long el_kb_nvcc_max_gcc(const el_kb *kb, const char *cuda, const char **source);
/* The same over a table of that shape (a rules file's own). */
long el_kb_nvcc_max_gcc_in(const cJSON *table, const char *cuda, const char **source);

/*
 * The compute capability of the GPU named name ("NVIDIA GeForce RTX
 * 4070"): the row whose match is the longest part of the name; NULL when
 * none matches. *source its row's.
 */
const char *el_kb_gpu_compute_capability(const el_kb *kb, const char *name, const char **source);
/* The same over a table of that shape (a rules file's own). */
const char *el_kb_gpu_cc_in(const cJSON *table, const char *name, const char **source);

/* The architecture of compute capability cc ("8.9"), or NULL. */
const el_kb_gpu_arch *el_kb_gpu_arch_of(const el_kb *kb, const char *cc);

/*
 * Does GPU code built for sm (cubins) and ptx run on a GPU of compute
 * capability cc? A cubin runs on the same major and the same or a higher
 * minor; PTX on the same or a higher capability (gpu_code_compatibility).
 * Returns the entry that runs there ("8.6"), preferring a cubin, with
 * *ptx saying which kind, or NULL.
 */
const char *el_kb_code_runs_on(const el_kb_list *sm, const el_kb_list *ptx, const char *cc, bool *is_ptx);

/* The source of the rule of where a kind of GPU code ("cubin", "ptx") runs. */
const char *el_kb_code_rule_source(const el_kb *kb, const char *code);

/* The page where NVIDIA lists the earlier releases of product ("cuda_toolkit", "cudnn"; nvidia_archives), or NULL. */
const char *el_kb_nvidia_archive(const el_kb *kb, const char *product);

/* --- install commands (install.c) --- */

/* pip's flag for an index option as the install pages write it: "-f", "--extra-index-url", "--index-url". */
const char *el_kb_pip_flag(const char *option);

/* "pip install torch==... torchvision==... [-f|--extra-index-url|--index-url URL]"; malloc'd. */
char *el_kb_torch_pip(const el_kb_torch_wheel *w);

/*
 * "pip install mmcv-full==1.7.0 -f <index for torch and cuda>", or
 * without -f when m has no prebuilt wheel for them (pip then builds it);
 * malloc'd. cuda NULL: the CPU wheels.
 */
char *el_kb_mmcv_pip(const el_kb *kb, const el_kb_mmcv *m, const char *torch, const char *cuda);

/* How the family of mmcv release v is built with its ops (mmcv_builds); strings borrowed from the table. */
typedef struct {
	const char *package;     /* the distribution that carries the ops */
	const char *without_ops; /* what installs that family without them */
	const char *build;       /* the pip command that builds them, {package} and {version} left to fill */
	const char *source;
} el_kb_mmcv_build;

/* The row of mmcv release v into *out (openmmlab.c); false when no row covers v. */
bool el_kb_mmcv_build_of(const el_kb *kb, const char *v, el_kb_mmcv_build *out);

/* b's build command for release version, filled in; malloc'd. */
char *el_kb_mmcv_build_pip(const el_kb_mmcv_build *b, const char *version);

/* Where torch's CUDA builds come from (torch_sources, pytorch.c): the host of its pip wheels and its conda package. */
void el_kb_torch_sources(const el_kb *kb, const char **pip_host, const char **conda_package);

/* The pip index of torch's wheels of variant ("cu113", "cpu": a local version's), from torch_sources; malloc'd. *source its row's. */
char *el_kb_torch_index_url(const el_kb *kb, const char *variant, const char **source);

/*
 * The newest mmcv release in [lo, hi] (hi included when incl; NULL: no
 * bound) that has a prebuilt wheel for torch and cuda (torch NULL: any
 * release), or NULL.
 */
const el_kb_mmcv *el_kb_mmcv_newest(const el_kb *kb, const char *lo, const char *hi, bool incl,
				    const char *torch, const char *cuda);

/* The newest release of package whose guard accepts mmcv version mmcv (a final release before a pre-release), or NULL. */
const el_kb_guard *el_kb_newest_accepting(const el_kb *kb, const char *package, const char *mmcv);

/* "1.10.1" -> "1.10": the release a version belongs to; malloc'd. */
char *el_kb_release(const char *version);

#endif
