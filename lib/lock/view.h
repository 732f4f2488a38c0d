/*
 * The typed view of a lock: what a lock's facts are and mean, defined
 * once, for every consumer (show, check, diff, restore, export, report,
 * bundle, verify, sign). It is built once from the document, when a
 * consumer first asks for it (el_lock_view), and consumers read the lock
 * through it and nothing else.
 *
 * A document reaching the view has passed the schema at load (or was
 * built by the probes), so the types are known; the view still reads
 * every member with a type check, so a hand-made document in a unit test
 * cannot crash a consumer: a member of the wrong type reads as absent.
 *
 * Strings are borrowed from the document: they live as long as the lock,
 * until the document changes (el_lock_touch), after which el_lock_view
 * builds a new view. A string that is not recorded is NULL; a number that
 * is not recorded is -1 (every counted fact is >= 0); a yes/no that may be
 * unrecorded is an el_tri.
 */
#ifndef EL_VIEW_H
#define EL_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "envlock/lock.h"

/* A yes/no fact that the lock may not record. */
typedef enum { EL_UNSET = -1, EL_NO = 0, EL_YES = 1 } el_tri;

/* A list of strings (borrowed). */
typedef struct {
	const char *const *v;
	size_t n;
} el_strlist;

/* A string-to-string map, in the document's (sorted) key order. */
typedef struct {
	const char *key, *val;
} el_pair;

typedef struct {
	const el_pair *v;
	size_t n;
} el_pairs;

/*
 * Where a section or item stands. "recorded": the lock has it at all;
 * "present": the one rule of when it counts (view.c, present()):
 * an object whose "status" is "present", or that has no status.
 * status is the text as recorded ("absent", "unknown", ...) or NULL.
 */
typedef struct {
	bool recorded, present;
	const char *status;
} el_state;

/* A shared library the lock records (cuda, cudnn). */
typedef struct {
	const char *name, *target;
} el_link;

typedef struct {
	const char *name, *path, *soname, *sha256;
	long long size;
	const el_link *links; /* the soname symlink chain, outermost first */
	size_t nlinks;
	const char *soname_link;   /* "self", "ok", "missing", "other", "copy" */
	const char *copy_of;       /* a plain copy of this library (its name) in the same folder */
	const char *ld_cache;      /* "listed", "missing", "other", "stale", "unknown" */
	const char *ld_cache_path; /* what ld.so.cache maps the soname to */
} el_library;

/* The Debian/Ubuntu package that installed a recorded file ("deb"). */
typedef struct {
	bool recorded;
	const char *package, *version, *arch;
} el_deb;

/* system */
typedef struct {
	bool recorded;
	const char *arch;
	const char *kernel; /* kernel.release */
	struct {
		el_state st;
		const char *source, *id, *version_id, *name, *pretty_name, *version_codename, *id_like, *version;
	} os;
	struct {
		el_state st;
		const char *version, *path, *file, *banner;
		el_deb deb;
	} glibc;
	struct {
		bool recorded, detected;
		const char *kind, *evidence;
	} container;
	struct {
		const char *model;
		long long logical_cores, physical_cores, sockets;
	} cpu;
	long long memory_total_bytes;
	struct {
		el_state st;
		const char *path, *format;
		long long entries;
	} ld_cache;
	el_strlist ld_so_conf;
	/* /dev/shm (system.shm); not recorded in older locks and for trees without a mount table */
	struct {
		bool recorded, present;
		const char *fs, *source;
		long long size_bytes, free_bytes;
	} shm;
	/* the cgroup's limits (system.cgroup); a limit that is EL_NO limited is none, EL_UNSET not known */
	struct {
		bool recorded;
		long long version;
		el_tri cpu_limited, memory_limited;
		double cpu_limit;               /* CPUs, when cpu_limited */
		long long cpu_quota_us, cpu_period_us;
		long long cpuset_cpus;
		long long memory_limit_bytes;   /* when memory_limited */
		const char *cpu_source, *cpuset_source, *memory_source;
	} cgroup;
} el_system;

/*
 * The CPUs the cgroup lets the machine's processes use: the smaller of
 * its CPU limit and its cpuset's count; -1 when it records neither.
 */
double el_cgroup_cpus(const el_system *s);

/* The cgroup's memory limit in bytes when it records one below the machine's memory (or the memory is unknown), else -1. */
long long el_cgroup_memory(const el_system *s);

/* gpu */
typedef struct {
	const char *bus, *name, *compute_capability, *power_limit_w, *uuid, *details_source;
	/* numbers nvidia-smi may give as text ("[N/A]"): the number or -1, and the value as text */
	long long memory_mib, pcie_gen_max, pcie_width_max;
	const char *memory_mib_text, *pcie_gen_max_text, *pcie_width_max_text;
	el_pairs extra; /* the string members not named above */
} el_gpu_device;

/* One file of the driver's user-space: kind "libcuda", "libnvidia-ml", "nvidia-smi". */
typedef struct {
	const char *kind, *path, *version, *version_source;
} el_driver_file;

typedef struct {
	el_state st;
	long long count;
	struct {
		el_state st; /* the kernel module's (/proc/driver/nvidia/version) */
		const char *source, *raw, *version, *flavour, *arch, *built_with, *max_cuda, *max_cuda_source;
		long long major;
		struct {
			el_state st;
			const char *version; /* libcuda's, else libnvidia-ml's, else nvidia-smi's */
			const el_driver_file *files;
			size_t nfiles;
		} user_space;
	} driver;
	const el_gpu_device *devices;
	size_t ndevices;
} el_gpu;

/* cuda */
typedef struct {
	const char *home;
	const char *layout; /* "vendor", "debian", the environment's "conda", "wheel", "bundled"; NULL in older locks */
	el_state st;
	el_strlist aliases;
	const char *version, *version_source, *sdk_version, *release;
	el_strlist patches;
	el_pairs components;
	struct {
		bool recorded;
		const char *path, *version, *release;
		const char *binary;         /* what path runs when it is a wrapper (Debian's /usr/bin/nvcc) */
		const char *version_source; /* the file version was read from; NULL: nvcc --version */
	} nvcc;
	const el_library *libraries;
	size_t nlibraries;
} el_toolkit;

/* A rule a user meets that names a toolkit: CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda. */
typedef struct {
	const char *rule, *value;
	const char *toolkit; /* the recorded toolkit's home, or NULL */
} el_cuda_lookup;

typedef struct {
	el_state st;
	const char *default_home;       /* cuda.default as recorded */
	const char *default_by;         /* the rule that chose it (cuda.default_by), or NULL */
	const el_cuda_lookup *lookups;  /* in the order the rules are tried */
	size_t nlookups;
	const el_toolkit *default_tk;   /* the one definition of "the default toolkit" (el_default_toolkit) */
	const el_toolkit *toolkits;
	size_t ntoolkits;
} el_cuda;

/* cudnn */
typedef struct {
	const char *path, *version;
} el_cudnn_header;

/* The Python environment's own cuDNN (conda's, NVIDIA's wheel, torch's copies). */
typedef struct {
	const char *home, *layout;
	const char *version, *version_source; /* NULL when nothing says (torch's copies) */
	const el_library *libraries;
	size_t nlibraries;
} el_cudnn_install;

typedef struct {
	el_state st;
	const char *version, *header;
	const el_cudnn_header *headers;
	size_t nheaders;
	const el_library *libraries;
	size_t nlibraries;
	const el_cudnn_install *installs;
	size_t ninstalls;
} el_cudnn;

/* compilers */
typedef struct {
	const char *dir, *triplet, *major, *version, *version_source, *driver;
	bool gxx;
	el_deb deb;
} el_gcc;

typedef struct {
	el_state st;
	struct {
		bool recorded;
		const char *name, *path, *version, *version_source;
	} def;
	const el_gcc *gcc;
	size_t ngcc;
} el_compilers;

/* python */
typedef struct {
	const char *prefix, *kind, *version;
} el_python_candidate;

typedef struct {
	el_state st;
	const char *kind, *prefix, *executable, *version, *version_source, *selected_by;
	el_deb deb; /* the package of the executable */
	el_strlist site_packages;
	const el_python_candidate *candidates;
	size_t ncandidates;
} el_python;

/* conda */
typedef struct {
	const char *name, *version, *build, *channel, *subdir, *url, *md5, *sha256;
	long long build_number;
} el_conda_package;

typedef struct {
	const char *name, *prefix;
} el_conda_env;

typedef struct {
	el_state st;
	const char *prefix, *name, *root_prefix;
	const el_conda_env *envs;
	size_t nenvs;
	long long package_count;
	const el_conda_package *packages;
	size_t npackages;
} el_conda;

/* pip */
typedef struct {
	const char *path, *version, *installer;
} el_pip_shadow;

typedef struct {
	const char *name, *version;
	const char *kind; /* "dist-info", "egg-info", "egg-link", "requirement" */
	const char *path, *installer, *source, *egg_info;
	el_tri requested;
	bool editable, also_conda;
	struct {
		bool recorded;
		const char *url, *vcs, *commit_id, *requested_revision, *archive_hash;
		bool editable;
	} direct_url;
	struct {
		bool recorded;
		const char *kind;   /* "direct_url", "config", "inferred" */
		const char *option; /* "index-url", "extra-index-url", "find-links" (not for direct_url) */
		const char *url, *from, *note;
	} origin; /* where it came from, when that can be known (the direct_url member for direct_url) */
	el_strlist tags;
	const el_pip_shadow *shadows; /* the same distribution later on sys.path, never imported */
	size_t nshadows;
} el_pip_dist;

/* One of pip's index options as its configuration set it (pip.index_options). */
typedef struct {
	const char *option; /* "index-url", "extra-index-url", "find-links" */
	const char *url, *from;
} el_pip_index_option;

typedef struct {
	el_state st;
	el_strlist site_packages;
	long long count;
	el_strlist conda_and_pip;
	const el_pip_index_option *index_options; /* in the order pip applies them */
	size_t nindex_options;
	const el_pip_dist *dists;
	size_t ndists;
} el_pip;

/* frameworks: envlock's registry of what it knows, and what a lock records of each */
enum {
	EL_FW_OPENMMLAB = 1 << 0, /* an OpenMMLab codebase */
	EL_FW_MMCV_OPS = 1 << 1,  /* its models call mmcv's compiled ops (mmcv-full, or mmcv 2.x with ops) */
	EL_FW_CITED = 1 << 2,     /* a library a paper builds on: named in report's citation line */
	EL_FW_MMCV_RANGE = 1 << 3, /* its __init__.py asserts the mmcv versions it accepts */
	EL_FW_MMCV_FAMILY = 1 << 4, /* mmcv: which distribution (mmcv-full, mmcv, mmcv-lite) is its package */
};

typedef struct {
	const char *key;      /* the key under "frameworks", also its import name */
	const char *dists[4]; /* its distributions (PEP 503 names), preferred first; NULL-ended */
	unsigned flags;       /* EL_FW_* */
	const char *conda;    /* its conda package's name, where it has one */
} el_framework_info;

/* The frameworks envlock records, in the order show and report list them; NULL-ended by key. */
extern const el_framework_info el_frameworks[];
#define EL_FW_COUNT 12

/* The framework whose key is key, or NULL. */
const el_framework_info *el_framework_find(const char *key);

typedef struct {
	const el_framework_info *info;
	el_state st;
	const char *version, *version_source, *path, *dist_version;
	el_deb deb; /* the package of path (Debian's python3-torch) */
	/* torch and torchvision: the CUDA (or HIP) they were built for; *_none: recorded as None */
	const char *cuda, *hip;
	bool cuda_none, hip_none;
	el_tri cpu_only, debug;
	const char *git_version;
	/* torch: the Python its own files say it is for; each with the file it came from */
	el_strlist python_tags; /* "3.11": that CPython only; "3.8+": the stable ABI, 3.8 and later */
	const char *python_tags_source;
	const char *requires_python, *requires_python_source; /* ">=3.8.0", its METADATA */
	/* mmcv: its distribution, and its compiled ops */
	const char *package;
	el_tri ops;
	const char *ops_cudart;
	el_strlist ops_files;
	/* an OpenMMLab codebase: the mmcv versions its __init__.py asserts at import */
	struct {
		bool recorded;
		const char *min, *max; /* NULL: that side unbounded (neither: the file checks none) */
		bool max_inclusive;    /* mmcv <= max (mmdet 2.x), not mmcv < max (3.x) */
		const char *source;    /* the __init__.py read */
	} mmcv_range;
} el_framework;

/* env */
typedef struct {
	el_state st;
	const char *source;
	el_pairs variables;
} el_env;

/* loads: what ld.so would load for each compiled module (lib/probe/loads.c) */
typedef struct {
	const char *soname, *needed_by;
	const char *found_by;   /* "rpath", "runpath", "ld_library_path", "ld.so.cache", "default", "path", "not_found", "error" */
	const char *path, *realpath, *error;
	el_strlist searched;    /* not found: where the loader looked */
	const char *without_library_path; /* found through LD_LIBRARY_PATH: what it finds without */
} el_load_need;

typedef struct {
	const char *file, *version, *library, *library_path;
} el_load_missing;

typedef struct {
	const char *framework;  /* "torch", "torchvision", "mmcv", "python" */
	const char *path, *error;
	bool truncated;
	const el_load_need *needed;
	size_t nneeded;
	const el_load_missing *missing;
	size_t nmissing;
} el_load_module;

typedef struct {
	el_state st;
	const char *library_path;
	const el_load_module *modules;
	size_t nmodules;
} el_loads;

/* The first entry of the framework's modules that loads a soname starting with prefix ("libcudnn.so"), or NULL. */
const el_load_need *el_loads_find(const el_loads *loads, const char *framework, const char *prefix);

/* The version a library's file name carries ("libcudnn.so.8.2.1" -> "8.2.1"), or NULL; borrowed from path. */
const char *el_so_version(const char *path);

/* checkpoints, configs */
typedef struct {
	const char *path, *mtime, *sha256, *error;
	long long size;
} el_checkpoint;

typedef struct {
	el_state st;
	long long count, total_bytes;
	const el_checkpoint *files;
	size_t nfiles;
} el_checkpoints;

/* A file a config's value names, as the saving machine had it (configs.files[].effective.files). */
typedef struct {
	const char *role;          /* "annotations", "checkpoint", "work_dir" */
	const char *key, *phase, *path, *resolved, *error;
	bool url;                  /* a URL: fetched when the run starts, not looked at */
	el_tri exists, last_checkpoint, writable;
	long long size, categories; /* -1 when not recorded */
} el_config_use;

typedef struct {
	const char *path, *sha256, *text, *unresolved_base, *error;
	bool requested;
	long long size;
	el_strlist bases;
	/* the effective config (lib/config): its merged value as JSON, borrowed from the lock, or NULL */
	const cJSON *effective;
	const char *effective_error, *effective_missing;
	el_strlist cfg_options;
	const el_config_use *uses;
	size_t nuses;
} el_config;

typedef struct {
	el_state st;
	const el_config *files;
	size_t nfiles;
} el_configs;

/* repos */
typedef struct {
	const char *name, *url;
} el_remote;

typedef struct {
	const char *path, *commit, *url, *workdir_commit;
} el_submodule;

/*
 * A new, untracked, non-ignored file of a repository's work tree: its
 * text when the lock holds it, else only its digest and why ("omitted").
 */
typedef struct {
	const char *path; /* relative to the repository's work tree */
	const char *sha256, *text;
	const char *omitted; /* NULL with text; else "binary", "too_large", "over_repo_limit", "no_patch", "symlink" */
	long long size;
	bool executable;
} el_untracked_file;

typedef struct {
	const char *path, *requested;
	const char *status; /* "present", "not_a_repository", "error" */
	bool bare, shallow, dirty;
	bool dirty_recorded; /* "dirty" is in the lock: a failed git status leaves it out */
	const char *state, *tag;
	struct {
		bool recorded, detached, unborn;
		const char *commit, *branch;
	} head;
	const el_remote *remotes;
	size_t nremotes;
	const el_submodule *submodules;
	size_t nsubmodules;
	struct {
		bool recorded, truncated;
		el_strlist staged, modified, untracked, conflicted;
	} changes;
	struct {
		bool recorded, truncated;
		const char *sha256, *text;
		long long size;
	} patch;
	const el_untracked_file *untracked_files; /* sorted by path */
	size_t nuntracked_files;
} el_repo;

typedef struct {
	el_state st;
	const el_repo *repos;
	size_t nrepos;
} el_repos;

/* checks: the rule results recorded at save time */
typedef struct {
	const char *rule, *severity, *section, *subject, *message;
} el_saved_finding;

typedef struct {
	bool recorded;
	const char *rules;
	long long breaking, risky, info;
	const el_saved_finding *findings;
	size_t nfindings;
} el_checks;

/* verify: the measurements a verify run added to the lock */
typedef struct {
	const char *stage, *status, *reason, *fix;
	el_pairs figures; /* numbers written as JSON writes them */
} el_verified_stage;

typedef struct {
	bool recorded;
	const char *result;
	long long exit_status, steps, version;
	const el_verified_stage *stages;
	size_t nstages;
} el_verified;

/* The whole lock. */
typedef struct el_view {
	long long format; /* "envlock" */
	const char *id, *created, *hostname;
	const char *partial_from; /* "conda-explicit", "pip-freeze": an imported partial lock */
	el_strlist warnings;
	el_system system;
	el_gpu gpu;
	el_cuda cuda;
	el_cudnn cudnn;
	el_compilers compilers;
	el_python python;
	el_conda conda;
	el_pip pip;
	el_framework frameworks[EL_FW_COUNT]; /* in el_frameworks' order */
	el_env env;
	el_loads loads;
	el_checkpoints checkpoints;
	el_configs configs;
	el_repos repos;
	el_checks checks;
	el_verified verify;
	struct el_view_arena *arena; /* everything the view allocated */
} el_view;

/*
 * The view of lock, built on first use and after the document changed;
 * borrowed from the lock. A lock is handed around as const, so the view
 * is a cache inside it (like its id).
 */
const el_view *el_lock_view(const envlock_lock *lock);

/*
 * A view of a bare document, for the unit tests of consumers (which feed
 * them small hand-made documents) and for the probes' own lock while it
 * is built. Free with el_view_free(); doc must outlive it.
 */
el_view *el_view_new(const cJSON *doc);
void el_view_free(el_view *view);

/* The framework key in view, or NULL when envlock does not know key. */
const el_framework *el_view_framework(const el_view *view, const char *key);

/* The pip distribution named name (PEP 503 comparison), or NULL. */
const el_pip_dist *el_view_pip_dist(const el_view *view, const char *name);

/*
 * An option pip needs to find a set of distributions (el_pip_indexes):
 * the configured ones first, then each one the distributions' origins
 * name, once. Strings are the lock's.
 */
typedef struct {
	const char *option;        /* "index-url", "extra-index-url", "find-links" */
	const char *url;
	const char *from;          /* the configuration it came from; NULL: only inferred */
	const el_pip_dist **dists; /* the given distributions whose origin it is */
	size_t ndists;
} el_pip_index;

/*
 * The options pip needs for dists (n of them, any of the lock's): the
 * lock's configured ones, then those their inferred or configured
 * origins name; malloc'd, freed with el_pip_indexes_free. An option that
 * is not one of the three is left out.
 */
void el_pip_indexes(const el_view *v, const el_pip_dist *const *dists, size_t n,
		    el_pip_index **out, size_t *nout);
void el_pip_indexes_free(el_pip_index *ix, size_t n);

/* The pip command-line flag of an option ("--extra-index-url"), or NULL when it is not one of the three. */
const char *el_pip_option_flag(const char *option);

/* The toolkit whose home or one of whose aliases is path, or NULL. */
const el_toolkit *el_view_toolkit_at(const el_view *view, const char *path);

/*
 * The version of the library file at path (a real path, as loads record
 * it): the version of the environment's install it belongs to (a conda,
 * wheel or torch-bundled toolkit, a cudnn.installs entry), else the one
 * its file name carries (el_so_version); NULL when neither says.
 */
const char *el_view_library_version(const el_view *v, const char *path);

/* Is layout the Python environment's own ("conda", "wheel", "bundled"), which ld.so.cache does not serve? */
bool el_env_layout(const char *layout);

/* A toolkit's version: the full one (version.json), else its release ("11.8"), else NULL. */
const char *el_toolkit_version(const el_toolkit *tk);

#endif
