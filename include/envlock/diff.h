/*
 * envlock — what differs between lockfiles (`envlock diff`).
 *
 * Each lock is flattened into items (section, key, value): the CUDA
 * toolkit's version, one pip distribution, one environment variable...
 * Two locks are compared item by item, each difference with a severity:
 * breaking (a rule finds a problem on B that A does not have), risky (a
 * core part changed: CUDA release, cuDNN version, driver major, gcc major,
 * Python major.minor, torch, mmcv or mmdet) or info. Many locks give a
 * drift table: for each item not the same everywhere, the majority value
 * and the files that differ from it.
 *
 * Items, by section (keys as printed):
 *   system       os, arch, kernel, glibc, container, cpu, cpu cores, memory
 *                (GiB, one decimal), ld.so.cache, "ld.so.conf <dir>"
 *   gpu          driver, driver flavour, driver max CUDA, devices
 *                ("2 × Tesla V100-PCIE-16GB"), compute capability
 *   cuda         version (the default toolkit's), default, "toolkit <home>",
 *                "toolkit <home> nvcc", "toolkit <home> <libstem>" (file and
 *                SHA-256, plus a missing soname link or ld.so.cache entry)
 *   cudnn        version, header, "<libstem>" (path and SHA-256, as above)
 *   compilers    the default compiler by name ("gcc"), "gcc-<major>"
 *   python       version, kind, prefix
 *   conda        env, prefix, each package by name: "version build channel"
 *   pip          each distribution by PEP 503 name: version, "editable <src>",
 *                "<vcs> <commit>", "(<installer>)" when not pip
 *   frameworks   each by name (version), "<name> cuda", "mmcv ops", ...
 *   repos        "<path> head|branch|tag|changes|remote <n>|submodule <p>"
 *   configs, checkpoints   each path: "sha256:<hex>" (or the error)
 *   env          each recorded variable
 * Left out on purpose, as they describe the save rather than the
 * environment: the lock's id and created time, host.hostname (different
 * on every node of a fleet), warnings (their causes are items), the saved
 * "checks" (the rules are run again), python.candidates, conda.envs,
 * device bus ids, UUIDs and IRQs, file sizes and modification times.
 */
#ifndef ENVLOCK_DIFF_H
#define ENVLOCK_DIFF_H

#include <stdio.h>
#include "common.h"
#include "lock.h"
#include "check.h"

/** What happened to one item between A and B. */
typedef enum {
	ENVLOCK_DIFF_SAME = 0,  /**< equal in A and B (listed only with opts.all) */
	ENVLOCK_DIFF_ADDED,     /**< only in B */
	ENVLOCK_DIFF_REMOVED,   /**< only in A */
	ENVLOCK_DIFF_CHANGED,   /**< in both, different values */
	ENVLOCK_DIFF_FINDING,   /**< a rule finding on B that A does not have */
	ENVLOCK_DIFF_RESOLVED   /**< a rule finding on A that B no longer has (info) */
} envlock_diff_change;

/** One difference. Every string is borrowed from the diff. */
typedef struct {
	const char *section;  /**< one of envlock_diff_section_name() */
	const char *key;      /**< the item ("version", "toolkit /usr/local/cuda-10.2",
				   a package name); for findings, the rule's subject */
	const char *a;        /**< value in A; NULL when A lacks the item (and for findings) */
	const char *b;        /**< value in B; NULL when B lacks it (and for findings) */
	envlock_diff_change change;
	envlock_severity severity; /**< ENVLOCK_SEV_INFO for SAME */
	const char *reason;   /**< why this severity, one line ("CUDA release 10.2 → 11.8",
				   the rule's message); NULL for a plain info difference */
	const char *rule;     /**< findings: rule id, fix (may be "") and source; NULL otherwise */
	const char *fix;
	const char *source;
} envlock_diff_entry;

/** Options of envlock_diff_locks() and envlock_drift_new(). Zero-initialise. */
typedef struct {
	/** Sections to compare (names from envlock_diff_section_name()); none: all. */
	const char *const *only;
	size_t only_count;
	/** Sections to leave out. */
	const char *const *ignore;
	size_t ignore_count;
	/** Also list the items that are the same. */
	int all;
	/** Rules to run on every lock for findings; NULL: no findings. Borrowed. */
	const envlock_rules *rules;
} envlock_diff_opts;

typedef struct envlock_diff envlock_diff;
typedef struct envlock_drift envlock_drift;

/** Number of sections, and their names in lock order ("system" ... "env"). */
ENVLOCK_EXTERN(size_t) envlock_diff_section_count(void);
ENVLOCK_EXTERN(const char *) envlock_diff_section_name(size_t i);

/** "same", "added", "removed", "changed", "finding", "resolved". */
ENVLOCK_EXTERN(const char *) envlock_diff_change_name(envlock_diff_change c);

/**
 * Compare lock a with lock b. name_a and name_b (may be NULL: "A", "B")
 * are the files as the user named them; they appear in errors and in
 * JSON output. Fails with ENVLOCK_EINVAL (an unknown section in
 * opts->only or opts->ignore) or with what envlock_check() returns.
 * *out belongs to the caller: free with envlock_diff_free().
 *
 * Entries are sorted for reading: sections with the most severe
 * difference first (then in lock order), within a section most severe
 * first, then by key.
 */
ENVLOCK_EXTERN(int) envlock_diff_locks(envlock_diff **out, envlock_ctx *ctx,
				       const envlock_lock *a, const char *name_a,
				       const envlock_lock *b, const char *name_b,
				       const envlock_diff_opts *opts);

/** Number of entries (differences, and identical items with opts.all). */
ENVLOCK_EXTERN(size_t) envlock_diff_count(const envlock_diff *d);

/** Entry i, or NULL past the end. Borrowed from d. */
ENVLOCK_EXTERN(const envlock_diff_entry *) envlock_diff_get(const envlock_diff *d, size_t i);

/** Number of differences of severity s (identical items never count). */
ENVLOCK_EXTERN(size_t) envlock_diff_tally(const envlock_diff *d, envlock_severity s);

/** 1 when nothing differs (after the section filters), else 0. */
ENVLOCK_EXTERN(int) envlock_diff_identical(const envlock_diff *d);

/**
 * One line: "identical", or "2 breaking, 3 risky, 14 info differences:
 * B cannot run what A runs". Borrowed from d.
 */
ENVLOCK_EXTERN(const char *) envlock_diff_verdict(const envlock_diff *d);

/**
 * Print d for a person: a header line per section, aligned
 * "key  A → B  severity" lines, then the verdict. Returns 0, or
 * ENVLOCK_EIO when writing fails.
 */
ENVLOCK_EXTERN(int) envlock_diff_print(const envlock_diff *d, envlock_ctx *ctx,
				       FILE *out, unsigned flags);

/** Print d as one JSON document (the same entries, counts and verdict). */
ENVLOCK_EXTERN(int) envlock_diff_print_json(const envlock_diff *d, envlock_ctx *ctx, FILE *out);

/** Free a diff. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_diff_free(envlock_diff *d);

/*
 * Drift across many locks. Locks are added one at a time (and can be
 * freed right after), so a fleet of any size needs memory for its items
 * only: envlock_drift_new, envlock_drift_add for each file,
 * envlock_drift_finish, then read or print. To add from several threads:
 * envlock_drift_expect names the files, then envlock_drift_put adds each.
 */

/** A file whose value of an item differs from the majority. */
typedef struct {
	const char *file;  /**< as given to envlock_drift_add */
	const char *name;  /**< its base name, or the name as given when base names clash */
	const char *value; /**< NULL when the file lacks the item */
} envlock_drift_odd;

/** One item that is not the same in every file. Borrowed from the drift. */
typedef struct {
	const char *section;
	const char *key;
	const char *majority;      /**< most common value (ties: the earliest file's); NULL: most files lack it */
	size_t majority_count;     /**< files with the majority value */
	envlock_severity severity; /**< the most severe of the odd values against the majority */
	const envlock_drift_odd *odd; /**< the files that differ, in the order of the files */
	size_t odd_count;
} envlock_drift_item;

/** Start a drift table. Fails with ENVLOCK_EINVAL for an unknown section. */
ENVLOCK_EXTERN(int) envlock_drift_new(envlock_drift **out, envlock_ctx *ctx,
				      const envlock_diff_opts *opts);

/**
 * Add one lock; name is the file as given (copied). Fails with what
 * envlock_check() returns when opts.rules is set, or ENVLOCK_EINVAL
 * after envlock_drift_finish.
 */
ENVLOCK_EXTERN(int) envlock_drift_add(envlock_drift *d, envlock_ctx *ctx,
				      const envlock_lock *lock, const char *name);

/**
 * Name the next n files (copied), to be added by envlock_drift_put in
 * any order. Not to be called while a put runs.
 */
ENVLOCK_EXTERN(int) envlock_drift_expect(envlock_drift *d, envlock_ctx *ctx,
					 const char *const *files, size_t n);

/**
 * Add the lock of file number i (counted from the first file, added or
 * expected). Safe from several threads at once, each with its own ctx
 * and lock; each file once. Fails as envlock_drift_add does, or with
 * ENVLOCK_EINVAL for a file not expected or already added.
 */
ENVLOCK_EXTERN(int) envlock_drift_put(envlock_drift *d, envlock_ctx *ctx,
				      const envlock_lock *lock, size_t i);

/**
 * Compute majorities and the drift list; call once, after the last add.
 * ENVLOCK_EINVAL while an expected file has not been put.
 */
ENVLOCK_EXTERN(int) envlock_drift_finish(envlock_drift *d, envlock_ctx *ctx);

/** Items listed: those that drift (every item with opts.all), sorted by section, then key. */
ENVLOCK_EXTERN(size_t) envlock_drift_count(const envlock_drift *d);

/** Item i, or NULL past the end. */
ENVLOCK_EXTERN(const envlock_drift_item *) envlock_drift_get(const envlock_drift *d, size_t i);

/** Items that drift (odd_count > 0). */
ENVLOCK_EXTERN(size_t) envlock_drift_drifting(const envlock_drift *d);

/** Distinct items compared, over all files. */
ENVLOCK_EXTERN(size_t) envlock_drift_items(const envlock_drift *d);

/** Files added. */
ENVLOCK_EXTERN(size_t) envlock_drift_files(const envlock_drift *d);

/** Files that differ from the majority in at least one item. */
ENVLOCK_EXTERN(size_t) envlock_drift_odd_files(const envlock_drift *d);

/** "3 of 1234 items drift across 1 of 4 files", or "identical: ...". Borrowed. */
ENVLOCK_EXTERN(const char *) envlock_drift_verdict(const envlock_drift *d);

/** Print the drift table for a person, then the verdict. */
ENVLOCK_EXTERN(int) envlock_drift_print(const envlock_drift *d, envlock_ctx *ctx,
					FILE *out, unsigned flags);

/** Print the drift table as one JSON document. */
ENVLOCK_EXTERN(int) envlock_drift_print_json(const envlock_drift *d, envlock_ctx *ctx, FILE *out);

/** Free a drift table. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_drift_free(envlock_drift *d);

/*
 * The lockfiles of a diff or a drift table, loaded in parallel: parsing
 * and validating them is most of a diff's time. What each file gave (its
 * lock, a warning, an error) stays in its own slot, so what is said, and
 * in which order, never depends on the scheduling.
 */

/**
 * How a file is loaded: envlock_lock_load and what the caller notes about
 * the lock (*warning, NULL for nothing, freed with free()).
 */
typedef int envlock_lock_loader(envlock_lock **out, envlock_ctx *ctx, const char *path, char **warning);

/** What became of one file. */
typedef struct {
	envlock_lock *lock; /**< envlock_diff_load only: the lock, NULL when it failed */
	char *warning;      /**< the loader's note, when it loaded */
	char *error;        /**< why it failed, NULL when it did not (or was not tried) */
} envlock_loaded;

/**
 * Load paths[0..n) into out[0..n), each file on its own context, every
 * file tried whatever became of the others. Free with envlock_loaded_release().
 */
ENVLOCK_EXTERN(void) envlock_diff_load(envlock_loaded *out, char *const *paths, size_t n, envlock_lock_loader *load);

/**
 * The same for a drift table: lock i is put into d as its file i
 * (envlock_drift_expect named them) on the thread that loaded it, then
 * freed, so memory stays a lock a thread whatever the fleet's size; the
 * files after the first that failed are not needed and may be left
 * untried. Returns the index of the first that failed, or n.
 */
ENVLOCK_EXTERN(size_t) envlock_drift_load(envlock_drift *d, envlock_loaded *out, char *const *paths, size_t n,
					  envlock_lock_loader *load);

/** Free what out[0..n) holds (the locks too). */
ENVLOCK_EXTERN(void) envlock_loaded_release(envlock_loaded *out, size_t n);

#endif
