/*
 * The probes: read-only, one file per subject, each reading under the
 * root and writing its sections of the lock (el_probe_section), which
 * lib/lock assembles into the document (el_lock_build). A probe never
 * reads JSON it wrote, the document or an object of its own: what it
 * knows it keeps in C, and what a later probe needs of an earlier one is
 * handed over typed, on the context (p->py, p->conda, p->pip, p->fw,
 * p->cuda, ...; tools/probe-reads.sh checks it), and the order that
 * makes that valid is a table (el_probe_steps) that says what each
 * probe needs and gives, checked before a probe runs. A probe that finds nothing records "status":
 * "absent"; a problem with what it finds is a warning (el_probe_warn),
 * never a failure of the save.
 */
#ifndef EL_PROBE_H
#define EL_PROBE_H

#include <cJSON.h>
#include <stdbool.h>

#include "envlock/lock.h"
#include "util/buf.h"
#include "util/hashcache.h"
#include "util/ldcache.h"
#include "util/root.h"
#include "util/vec.h"

/* Read limits for the files probes read. */
#define EL_LIMIT_SMALL (64u << 10)  /* os-release, version files, /proc entries */
#define EL_LIMIT_TEXT (1u << 20)    /* headers, METADATA, conda-meta records */
#define EL_LIMIT_RECORD (8u << 20)  /* one conda-meta record with its file list */

/* The lock's sections the probes write, each created on first use (el_probe_section). */
typedef enum {
	EL_SEC_ENV, EL_SEC_HOST, EL_SEC_SYSTEM, EL_SEC_GPU, EL_SEC_PYTHON, EL_SEC_CONDA, EL_SEC_PIP,
	EL_SEC_FRAMEWORKS, EL_SEC_CUDA, EL_SEC_CUDNN, EL_SEC_COMPILERS, EL_SEC_LOADS,
	EL_SEC_CHECKPOINTS, EL_SEC_CONFIGS, EL_SEC_REPOS,
	EL_SEC_COUNT
} el_probe_sec;

/* The Python environment chosen for pip and frameworks (python.c). */
typedef struct {
	char *prefix;            /* in-root, resolved; NULL when none found */
	char *kind;              /* "conda", "venv", "system", "pyenv" */
	char **site_dirs;        /* resolved in-root site-packages dirs, NULL-terminated */
	char *version;           /* "3.7.16" or NULL */
	char *executable;        /* the python the lock names (in-root), or NULL */
} el_pyenv;

/* A package of the conda environment (conda.c): what pip and the environment's CUDA (envcuda.c) use. */
typedef struct {
	char *name, *version;
	char *build;             /* NULL when its record has none */
} el_conda_pkg;

/* The conda environment described (conda.c), packages in the lock's order. */
typedef struct {
	char *prefix;            /* resolved, in-root; NULL: none found */
	el_conda_pkg *pkgs;
	size_t n;
} el_conda_found;

/* A distribution pip's probe recorded (pip.c), for frameworks, envcuda.c and the origins (pipsource.c). */
typedef struct {
	char *name, *version, *kind, *path;
	char *installer, *source;  /* NULL when not recorded */
	char **tags;               /* its WHEEL's binary tags, NULL-terminated, or NULL */
	bool also_conda, editable;
	bool direct_url;           /* its direct_url.json names a URL */
	cJSON *entry;              /* its entry in the pip section, where pipsource.c writes "origin" */
} el_dist_found;

/* One of pip's index options as its configuration sets it (pipsource.c): an entry of pip's "index_options". */
typedef struct {
	const char *option;        /* "index-url", "extra-index-url" or "find-links" (static) */
	char *url, *from;          /* without credentials; the file or variable that set it */
} el_pip_option;

/* The distributions pip's probe recorded, in the lock's order, and pip's index options. */
typedef struct {
	el_dist_found *v;
	size_t n;
	el_pip_option *options;    /* in the order pip applies them (pipsource.c gives them, for the origins) */
	size_t noptions, options_cap;
} el_pip_found;

/* A framework as its own files say (frameworks.c): one per el_frameworks entry, in that order, then a NULL key. */
typedef struct {
	const char *key;           /* el_frameworks' key */
	bool present;              /* status "present" */
	char *path;                /* its version.py, or its package folder; NULL when absent */
	char *version;
	char *cuda;                /* torch, torchvision: the CUDA its version.py says, or NULL */
	bool cuda_none;            /* ... says None: built without CUDA */
	bool ops;                  /* mmcv: its compiled ops are there */
} el_fw_found;

/* A CUDA toolkit the cuda probe recorded (cuda.c), by home. */
typedef struct {
	char *home;                /* resolved, in-root */
	char *layout;              /* "vendor", "debian", or the environment's own: "conda", "wheel", "bundled" */
} el_cuda_tk;

typedef struct {
	el_cuda_tk *v;
	size_t n;
	char *default_home;        /* the default toolkit's home, or NULL */
} el_cuda_found;

/*
 * An object of the lock that may hold a file dpkg installed: the dpkg
 * probe sets its "deb" to the package that owns path (else alt's).
 */
typedef struct {
	cJSON *obj;
	char *path, *alt;          /* alt NULL when there is no second file to try */
} el_deb_want;

/* A package of dpkg's status file (dpkg.c); borrowed from the probe. */
typedef struct {
	const char *package, *arch, *version; /* arch NULL when the stanza has none */
	bool installed; /* Status "... installed"; else removed with its config files left, or half-done */
} el_dpkg_pkg;

typedef struct el_dpkg el_dpkg;

/*
 * The probe context. Each probe writes its sections (sec, through
 * el_probe_section) and hands what later probes need over in the typed
 * members below it, which the step that gives them fills (el_probe_steps).
 */
typedef struct {
	envlock_ctx *ctx;
	const envlock_probe_opts *opts;
	el_root root;
	cJSON *sec[EL_SEC_COUNT]; /* the sections written, NULL until first used; for lib/lock to assemble */
	cJSON *warnings;       /* the lock's "warnings" */
	el_hashcache *hashes;
	char **environ;        /* KEY=VALUE strings of the probed process, NULL-terminated (environ.c) */
	char **env_recorded;   /* KEY=VALUE of the variables the lock records, later ones winning (environ.c) */
	el_ldcache *ldcache;   /* NULL when the root has no readable ld.so.cache */
	char *ldcache_status;  /* "present", "absent", "unreadable" */
	char *driver_status;   /* gpu.driver's status (driver.c) */
	el_pyenv py;
	el_conda_found conda;
	el_pip_found pip;
	el_fw_found *fw;       /* NULL before frameworks.c ran */
	el_cuda_found cuda;
	el_deb_want *debs;     /* what dpkg.c attributes, registered by the probes (el_probe_want_deb) */
	size_t ndebs, debs_cap;
	el_dpkg *dpkg;         /* dpkg's status and file lists, read on first use (dpkg.c) */
	bool dpkg_read;        /* read already (dpkg NULL: the root has no status file) */
	cJSON *errors;         /* request errors: see envlock_lock_error_count */
	struct el_probe_loads *loads; /* the loads probe's resolution, between its start and finish (loads.c) */
} el_probe;

/*
 * Start a context for opts (the root resolved: ENVLOCK_E... with the
 * detail in ctx when it cannot be), and release one: everything it holds
 * but what el_probe_take_sections took.
 */
int el_probe_init(el_probe *p, envlock_ctx *ctx, const envlock_probe_opts *opts);
void el_probe_release(el_probe *p);

/* The section of the lock key names, created on first use: for writing. */
cJSON *el_probe_section(el_probe *p, el_probe_sec key);

/* The lock's key of each section: "env", "host", "system", ... */
extern const char *const el_probe_sec_keys[EL_SEC_COUNT];

/* Ask the dpkg probe to set obj's "deb" to the package owning path (else alt); NULL paths are nothing to ask. */
void el_probe_want_deb(el_probe *p, cJSON *obj, const char *path, const char *alt);

/* A variable as the lock records it (environ.c's allow-list), or NULL. */
const char *el_probe_recorded_env(const el_probe *p, const char *name);

/* What a step of the probe order needs from earlier steps, and gives to later ones. */
enum {
	EL_GIVES_ENVIRON = 1u << 0,    /* p->environ, p->env_recorded */
	EL_GIVES_LDCACHE = 1u << 1,    /* p->ldcache: the loader cache el_probe_libraries asks */
	EL_GIVES_DRIVER = 1u << 2,     /* p->driver_status */
	EL_GIVES_PYTHON = 1u << 3,     /* p->py */
	EL_GIVES_CONDA = 1u << 4,      /* p->conda */
	EL_GIVES_PIP = 1u << 5,        /* p->pip */
	EL_GIVES_FRAMEWORKS = 1u << 6, /* p->fw */
	EL_GIVES_CUDA = 1u << 7,       /* p->cuda */
	EL_GIVES_LOADS = 1u << 8,      /* p->loads: the resolution running on its thread */
	EL_GIVES_GLIBC_DEB = 1u << 9,  /* the deb wanted of system.glibc */
	EL_GIVES_COMPILER_DEB = 1u << 10, /* ... of each gcc */
	/* every object dpkg attributes: python's and the frameworks' are given with them */
	EL_GIVES_DEBS = EL_GIVES_GLIBC_DEB | EL_GIVES_PYTHON | EL_GIVES_COMPILER_DEB | EL_GIVES_FRAMEWORKS,
};

/* One step of the probe order: a probe, what it needs of the steps before it, what it gives the ones after. */
typedef struct {
	const char *name;
	void (*run)(el_probe *p);
	unsigned needs, gives;
} el_probe_step;

/* The order envlock_lock_probe runs the probes in (lock.c), ended by a NULL name. */
extern const el_probe_step el_probe_steps[];

/*
 * 0 when every step of steps (ended by a NULL name) needs only what a step
 * before it gives; else -1, with why (size bytes) naming the first step
 * that needs what no earlier step gives, and what.
 */
int el_probe_steps_check(const el_probe_step *steps, char *why, size_t size);

/* Record a warning (one line, "'<path>': <problem>" style). */
void el_probe_warn(el_probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Record a problem with what the caller asked for (a named config,
 * checkpoint or repository): the CLI then refuses to write the lock.
 */
void el_probe_request_error(el_probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A variable of the probed environment (environ.c), or NULL. */
const char *el_probe_getenv(const el_probe *p, const char *name);

/*
 * Read the file at abs under the root into b (b's limit is the cap).
 * A missing file returns ENVLOCK_ENOTFOUND silently; every other problem
 * (too big, permission denied, loop, not a regular file) is warned about
 * and returned.
 */
int el_probe_read(el_probe *p, const char *abs, el_buf *b);

/*
 * The warning el_probe_read gives for a failed read of path (rc and errno
 * from el_root_read / el_root_read_at); nothing for 0 or a missing file.
 */
void el_probe_warn_read(el_probe *p, const char *path, int rc, int err_no, size_t limit);

/* el_probe_read, then refuse (with a warning) what is not text. */
int el_probe_read_text(el_probe *p, const char *abs, el_buf *b);

/*
 * Run a program, only on the live root (elsewhere ENVLOCK_ENOTFOUND):
 * argv, a timeout in ms, stdout into out (capped at EL_LIMIT_SMALL).
 * A timeout is warned about. Returns 0 only when it exited 0.
 */
int el_probe_run(el_probe *p, const char *const argv[], int timeout_ms, el_buf *out);

/* A library el_probe_libraries recorded: what its callers go on with. */
typedef struct {
	char *name, *path;
	char *soname;              /* NULL when its ELF header could not be read */
} el_lib_found;

typedef struct {
	el_lib_found *v;
	size_t n, cap;
} el_libs_found;

void el_libs_found_release(el_libs_found *l);

/*
 * Describe the shared libraries in directory dir (in-root, any form)
 * whose file names start with one of the NULL-terminated prefixes
 * ("libcudnn", ...): one object per real file with name, path, soname,
 * sha256, size, the symlinks that lead to it, whether its soname link
 * exists and points to it, and whether ld.so.cache lists it. Appends to
 * arr, and to found when it is not NULL, and returns how many files it
 * added (libraries.c).
 */
int el_probe_libraries(el_probe *p, cJSON *arr, const char *dir,
		       const char *const prefixes[], el_libs_found *found);

/* Is name a shared library el_probe_libraries takes for one of the prefixes? */
bool el_probe_library_name(const char *name, const char *const prefixes[]);

/*
 * The package named name in dpkg's status file: the first installed one of
 * its architectures, else one removed with files left behind (what those
 * files came from), or NULL.
 */
const el_dpkg_pkg *el_dpkg_package(el_probe *p, const char *name);

/*
 * The installed package whose file list holds the file at abs (an in-root
 * path, also tried as resolved and through the merged-/usr links), or NULL.
 */
const el_dpkg_pkg *el_dpkg_owner(el_probe *p, const char *abs);

void el_dpkg_free(el_dpkg *d);

/*
 * The first NUL-terminated string in the file at abs (in-root) that is
 * prefix followed by the rest of a version with at least dots more dots
 * ("3.11." + "2"; "12." + "2.0"), read in pieces so large binaries cost
 * no memory; the version alone, malloc'd, or NULL (verstr.c).
 */
char *el_probe_file_version(el_probe *p, const char *abs, const char *prefix, int dots);

/*
 * The scan under el_probe_file_version: take is called with each
 * NUL-terminated string under 256 bytes in the file at abs, in order, until
 * it returns a result (malloc'd), which is returned; NULL when none did.
 */
char *el_probe_file_scan(el_probe *p, const char *abs, char *(*take)(const char *s, void *data), void *data);

/* Is <root>/proc a mounted procfs under a root that is not the live one (hardware.c)? */
bool el_probe_host_procfs(el_probe *p);

/*
 * The probes, in the order of el_probe_steps (lock.c), whose rows say what
 * each needs of the probes before it and gives to the ones after (the
 * EL_GIVES_* bits, checked before any probe runs): what a probe gives is
 * the typed member of el_probe named with it, never a section to read.
 */
void el_probe_environ(el_probe *p);   /* environ.c: the process environment (live) or /etc/environment, writes "env"; gives p->environ, p->env_recorded */
void el_probe_os(el_probe *p);        /* os.c: system.os, kernel, host */
void el_probe_glibc(el_probe *p);     /* glibc.c: system.glibc, system.arch; wants glibc's deb */
void el_probe_container(el_probe *p); /* container.c */
void el_probe_hardware(el_probe *p);  /* hardware.c: system.cpu, system.memory */
void el_probe_limits(el_probe *p);    /* limits.c: system.shm, system.cgroup */
void el_probe_ldconfig(el_probe *p);  /* ldcache.c: gives p->ldcache, which el_probe_libraries asks */
void el_probe_driver(el_probe *p);    /* driver.c: gpu.driver; gives p->driver_status */
void el_probe_gpus(el_probe *p);      /* gpu.c: gpu.devices, nvidia-smi's only when the driver is present */
void el_probe_python(el_probe *p);    /* python.c: chooses p->py, writes "python"; wants python's deb */
void el_probe_conda(el_probe *p);     /* conda.c: gives p->conda */
void el_probe_pip(el_probe *p);       /* pip.c: needs p->conda (also_conda); gives p->pip */
void el_probe_pip_origins(el_probe *p); /* pipsource.c: needs p->pip and p->fw; each distribution's "origin" */
void el_probe_frameworks(el_probe *p);/* frameworks.c: needs p->pip; gives p->fw, wants each one's deb */
void el_probe_cuda(el_probe *p);      /* cuda.c: needs the environment's (p->conda, p->pip, p->fw), whose own CUDA it records too; gives p->cuda */
void el_probe_cudnn(el_probe *p);     /* cudnn.c: needs p->cuda and the environment's */
void el_probe_compilers(el_probe *p); /* compiler.c: wants each gcc's deb */
/* loads.c: what ld.so would load for python and the frameworks' modules; resolved on a thread between the two */
void el_probe_loads_start(el_probe *p);  /* needs p->py, p->fw and p->env_recorded; gives p->loads */
void el_probe_loads_finish(el_probe *p); /* writes "loads" */
void el_probe_checkpoints(el_probe *p);/* checkpoints.c: opts->checkpoints */
void el_probe_configs(el_probe *p);   /* configs.c: opts->configs and their _base_ chains; needs p->py */
void el_probe_repos(el_probe *p);     /* git.c: opts->repos, or the current directory's */
void el_probe_dpkg(el_probe *p);      /* dpkg.c: "deb" of each object the probes wanted one for (el_probe_want_deb) */

/* ---- what the CUDA probes share (cudafiles.c; for cuda.c, cudnn.c, envcuda.c) ---- */

/* Debian's nvidia-cuda-toolkit (11.8.89~11.8.0-5): where its files are */
#define DEB_TK_HOME "/usr/lib/nvidia-cuda-toolkit"
#define DEB_TK_NVCC DEB_TK_HOME "/bin/nvcc"
#define DEB_TK_WRAPPER "/usr/bin/nvcc"
#define DEB_TK_LINKS "/usr/lib/cuda"

/* The prefixes of the CUDA libraries recorded: "libcudart", "libcublas", ... */
extern const char *const el_cuda_lib_prefixes[];

/* "10.2.89" -> "10.2" (malloc'd) */
char *el_cuda_release_of(const char *v);

/*
 * A CUDA toolkit as the CUDA probes find and describe it (cuda.c,
 * envcuda.c, cudafiles.c): what they go on with is kept here as they
 * write it into its entry of cuda.toolkits, which is never read back.
 */
typedef struct {
	char *home;                /* resolved, in-root */
	char *layout;              /* NULL: a vendor's (recorded "vendor" once probed) */
	el_strvec aliases;         /* the unresolved names that lead to it, but home, in the order found */
	cJSON *entry;              /* its object in cuda.toolkits, once written */
	char *version, *version_source;       /* as the entry records them, or NULL */
	char *cuda_nvcc, *nvidia_cuda_nvcc;   /* its "components" of those names (the nvcc package's version), or NULL */
	char *nvcc_version, *nvcc_version_source; /* as its "nvcc" records them, or NULL */
} el_cuda_cand;

/* The toolkits found, in the order found until cuda.c sorts them by home. */
typedef struct {
	el_cuda_cand *v;
	size_t n, cap;
} el_cuda_cands;

/* Record tk's version and where it comes from (each NULL: left as it is). */
void el_cuda_tk_version(el_cuda_cand *tk, const char *version, const char *source);

/* Record one of tk's components, name at version v, in components (its "components"). */
void el_cuda_tk_component(el_cuda_cand *tk, cJSON *components, const char *name, const char *v);

/* tk's "nvcc" from home/bin/nvcc (Debian's layout: its wrapper), when there; whether it was. */
bool el_probe_cuda_nvcc(el_probe *p, const char *home, el_cuda_cand *tk, const char *layout);

/* The CUDA libraries of home's lib64, lib and targets/<arch>/lib into libs, each real folder once. */
void el_probe_cuda_libs(el_probe *p, cJSON *libs, const char *home);

/*
 * The version the CUDNN_MAJOR/MINOR/PATCHLEVEL macros of the header at path
 * say (malloc'd), or NULL: none there (warned, but for a cudnn.h of 8.x+,
 * which only includes cudnn_version.h), or no such file.
 */
char *el_probe_cudnn_header(el_probe *p, const char *path);

/* Add the environment's CUDA installs to toolkits, with home and layout only (envcuda.c; cuda.c adds the rest). */
void el_probe_env_toolkits(el_probe *p, el_cuda_cands *toolkits);

/* A toolkit found at home with layout (its aliases none yet), added to toolkits. */
el_cuda_cand *el_cuda_cand_add(el_cuda_cands *toolkits, const char *home, const char *layout);

/* Free what toolkits holds. */
void el_cuda_cands_release(el_cuda_cands *toolkits);

/* Fill one of them, at home (layout conda, wheel or bundled); whether its version is known. */
bool el_probe_env_toolkit(el_probe *p, el_cuda_cand *tk, const char *home, const char *layout);

/* The environment's cuDNN installs into cudnn's "installs" (envcuda.c). */
void el_probe_env_cudnn(el_probe *p, cJSON *cudnn);

/* rel resolved under base (an already-resolved in-root directory) if it is a directory; malloc'd or NULL. */
char *el_probe_resolve_dir(el_probe *p, const char *base, const char *rel);

/* pip's index options from its configuration files and PIP_* variables into pip's "index_options" (pipsource.c). */
void el_probe_pip_config(el_probe *p, cJSON *pip);

#endif
