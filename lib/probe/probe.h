/*
 * The probes: read-only, one file per subject, each reading under the
 * root and writing its section of the lock document. A probe that finds
 * nothing records "status": "absent"; a problem with what it finds is a
 * warning (el_probe_warn), never a failure of the save.
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

/* Read limits for the files probes read. */
#define EL_LIMIT_SMALL (64u << 10)  /* os-release, version files, /proc entries */
#define EL_LIMIT_TEXT (1u << 20)    /* headers, METADATA, conda-meta records */
#define EL_LIMIT_RECORD (8u << 20)  /* one conda-meta record with its file list */

/* The Python environment chosen for pip and frameworks (python.c). */
typedef struct {
	char *prefix;            /* in-root, resolved; NULL when none found */
	char *kind;              /* "conda", "venv", "system", "pyenv" */
	char **site_dirs;        /* resolved in-root site-packages dirs, NULL-terminated */
	char *version;           /* "3.7.16" or NULL */
} el_pyenv;

/* A package of dpkg's status file (dpkg.c); borrowed from the probe. */
typedef struct {
	const char *package, *arch, *version; /* arch NULL when the stanza has none */
	bool installed; /* Status "... installed"; else removed with its config files left, or half-done */
} el_dpkg_pkg;

typedef struct el_dpkg el_dpkg;

typedef struct {
	envlock_ctx *ctx;
	const envlock_probe_opts *opts;
	el_root root;
	cJSON *doc;            /* the lock document being filled */
	cJSON *warnings;       /* its "warnings" array */
	el_hashcache *hashes;
	char **environ;        /* KEY=VALUE strings of the probed process, NULL-terminated */
	el_ldcache *ldcache;   /* NULL when the root has no readable ld.so.cache */
	char *ldcache_status;  /* "present", "absent", "unreadable" */
	el_pyenv py;
	el_dpkg *dpkg;         /* dpkg's status and file lists, read on first use (dpkg.c) */
	bool dpkg_read;        /* read already (dpkg NULL: the root has no status file) */
	cJSON *errors;         /* request errors: see envlock_lock_error_count */
	struct el_probe_loads *loads; /* the loads probe's resolution, between its start and finish (loads.c) */
} el_probe;

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

/*
 * Describe the shared libraries in directory dir (in-root, any form)
 * whose file names start with one of the NULL-terminated prefixes
 * ("libcudnn", ...): one object per real file with name, path, soname,
 * sha256, size, the symlinks that lead to it, whether its soname link
 * exists and points to it, and whether ld.so.cache lists it. Appends to
 * arr and returns how many files it added (libraries.c).
 */
int el_probe_libraries(el_probe *p, cJSON *arr, const char *dir,
		       const char *const prefixes[]);

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

/* Set obj's "deb" ({package, version, arch}) to the package owning abs, if one does. */
void el_probe_set_deb(el_probe *p, cJSON *obj, const char *abs);

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

/* The probes, in the order envlock_lock_probe (lock.c) runs them (the loads between its start and finish). */
void el_probe_environ(el_probe *p);   /* environ.c: the process environment (live) or /etc/environment, writes "env" */
void el_probe_os(el_probe *p);        /* os.c: system.os, kernel, host */
void el_probe_glibc(el_probe *p);     /* glibc.c: system.glibc, system.arch */
void el_probe_container(el_probe *p); /* container.c */
void el_probe_hardware(el_probe *p);  /* hardware.c: system.cpu, system.memory */
void el_probe_limits(el_probe *p);    /* limits.c: system.shm, system.cgroup */
void el_probe_ldconfig(el_probe *p);  /* ldcache.c: loads ld.so.cache for the next probes */
void el_probe_driver(el_probe *p);    /* driver.c: gpu.driver */
void el_probe_gpus(el_probe *p);      /* gpu.c: gpu.devices */
void el_probe_python(el_probe *p);    /* python.c: chooses p->py, writes "python" */
void el_probe_conda(el_probe *p);     /* conda.c */
void el_probe_pip(el_probe *p);       /* pip.c */
void el_probe_pip_origins(el_probe *p); /* pipsource.c: after frameworks, each distribution's "origin" */
void el_probe_frameworks(el_probe *p);/* frameworks.c */
void el_probe_cuda(el_probe *p);      /* cuda.c: after the environment, whose own CUDA it records too */
void el_probe_cudnn(el_probe *p);     /* cudnn.c */
void el_probe_compilers(el_probe *p); /* compiler.c */
/* loads.c: what ld.so would load for python and the frameworks' modules; resolved on a thread between the two */
void el_probe_loads_start(el_probe *p);  /* after frameworks: takes python, frameworks and env */
void el_probe_loads_finish(el_probe *p); /* writes "loads" */
void el_probe_checkpoints(el_probe *p);/* checkpoints.c: opts->checkpoints */
void el_probe_configs(el_probe *p);   /* configs.c: opts->configs and their _base_ chains */
void el_probe_repos(el_probe *p);     /* git.c: opts->repos, or the current directory's */
void el_probe_dpkg(el_probe *p);      /* dpkg.c: "deb" of the recorded files dpkg installed */

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

/* tk's "nvcc" from home/bin/nvcc (Debian's layout: its wrapper), when there. */
void el_probe_cuda_nvcc(el_probe *p, const char *home, cJSON *tk);

/* The CUDA libraries of home's lib64, lib and targets/<arch>/lib into libs, each real folder once. */
void el_probe_cuda_libs(el_probe *p, cJSON *libs, const char *home);

/*
 * The version the CUDNN_MAJOR/MINOR/PATCHLEVEL macros of the header at path
 * say (malloc'd), or NULL: none there (warned, but for a cudnn.h of 8.x+,
 * which only includes cudnn_version.h), or no such file.
 */
char *el_probe_cudnn_header(el_probe *p, const char *path);

/* Add the environment's CUDA installs to toolkits, with home and layout only (envcuda.c). */
void el_probe_env_toolkits(el_probe *p, cJSON *toolkits);

/* Fill one of them (layout conda, wheel or bundled); whether its version is known. */
bool el_probe_env_toolkit(el_probe *p, cJSON *tk);

/* The environment's cuDNN installs into cudnn's "installs" (envcuda.c). */
void el_probe_env_cudnn(el_probe *p, cJSON *cudnn);

/* rel resolved under base (an already-resolved in-root directory) if it is a directory; malloc'd or NULL. */
char *el_probe_resolve_dir(el_probe *p, const char *base, const char *rel);

/* pip's index options from its configuration files and PIP_* variables into pip's "index_options" (pipsource.c). */
void el_probe_pip_config(el_probe *p, cJSON *pip);

/* The section object key in the document, created on first use. */
cJSON *el_probe_section(el_probe *p, const char *key);

#endif
