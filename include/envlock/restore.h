/*
 * envlock — make this machine match a lockfile (`envlock restore`).
 *
 * Restore is plan, then apply. The planner compares the lock with a fresh
 * probe of this machine (the same probes as `save`, under the same root)
 * and lists ordered steps — driver, cuda, compilers, cudnn, conda, repos,
 * pip, configs, checkpoints, verify — each made of items that are "ok" (already as
 * locked), "do" (what apply will change, exactly) or "manual" (what
 * envlock cannot or will not do, with the instruction). Apply performs
 * the "do" items in order with every program run from an argv array,
 * its output logged, a journal of each step, and anything it would
 * replace moved aside first. Planning again after an apply, or after an
 * interrupted one, finds the finished items "ok": the steps are
 * idempotent, so a rerun resumes.
 *
 * A lock is untrusted input: every name, version, URL and path it gives
 * is validated before it reaches a program or the file system.
 */
#ifndef ENVLOCK_RESTORE_H
#define ENVLOCK_RESTORE_H

#include <stdio.h>
#include "common.h"
#include "lock.h"

/** The state of one item of the plan (and, worst of its items, of a step). */
typedef enum {
	ENVLOCK_ITEM_OK = 0,   /**< already as locked */
	ENVLOCK_ITEM_DO,       /**< apply will change it as described */
	ENVLOCK_ITEM_MANUAL,   /**< needs the user: why, and the instruction */
	ENVLOCK_ITEM_DONE,     /**< applied in this run */
	ENVLOCK_ITEM_FAILED    /**< applying it failed (the reason is its note) */
} envlock_item_state;

/** Options of envlock_restore_plan(). Zero-initialise, then set what you need. */
typedef struct {
	/** Root, Python and conda prefix of the live probe (as for `save`). */
	envlock_probe_opts probe;
	/** Steps to plan (names from envlock_restore_step_name()); none: all. */
	const char *const *only;
	size_t only_count;
	/** Steps to leave out. */
	const char *const *skip;
	size_t skip_count;
	/** A CUDA runfile to install a missing toolkit with (toolkit only, no driver). */
	const char *cuda_runfile;
	/** NVIDIA's cuDNN archive (.tgz, .tar.xz) to install missing cuDNN files from. */
	const char *cudnn_archive;
	/** A folder of wheels: pip installs with --no-index --find-links from it. */
	const char *wheels;
	/**
	 * An offline kit (`envlock pack`'s folder, or its .tar.zst): checked
	 * whole before anything runs; conda installs from its archives
	 * (--offline), pip from its wheels (--no-index, hashes), and its
	 * cuDNN archive and CUDA runfile stand in for cudnn_archive and
	 * cuda_runfile when those are not given.
	 */
	const char *kit;
	/** The conda-compatible program to create environments with; NULL: search. */
	const char *conda_exe;
	/**
	 * With kit: envlock links the kit's conda archives itself, as conda's
	 * package format defines it, and runs no conda (as it does when none
	 * is found).
	 */
	int no_conda;
	/** Create the conda environment here instead of the locked prefix. */
	const char *conda_target;
	/** Or under this name in the locked conda install (<root_prefix>/envs/NAME). */
	const char *conda_name;
	/** Replace a conda environment that differs (the old one is moved aside). */
	int force;
	/** Where configs, checkpoints and repositories are restored; NULL: ".". */
	const char *dest;
	/**
	 * With probe.root: run the conda and pip programs inside the tree,
	 * chroot(2) to it and chdir("/") before they start, with the tree's
	 * own paths (needs root). Without it, those items are "manual" under
	 * a root: run from here, they would bake this machine's path to the
	 * tree into the environment and load this machine's libraries.
	 */
	int chroot;
	/** Where the journal, log and generated spec files go; NULL: ".envlock". */
	const char *state_dir;
	/**
	 * How the caller spells an option in the plan's advice ("rerun with
	 * ..."): given an option's name, the text to show, or NULL for the
	 * default, "the 'NAME' option". The names are this struct's fields
	 * ("cuda_runfile", "cudnn_archive", "conda_exe", "conda_target",
	 * "conda_name", "force", "dest", "chroot"), the probe's ("python", "root") and
	 * save's ("repo", "no_patch"). A command line maps them to its flags.
	 */
	const char *(*option_text)(const char *option);
} envlock_restore_opts;

typedef struct envlock_restore envlock_restore;

/** Number of steps, and their names in order ("driver" ... "checkpoints", "verify"). */
ENVLOCK_EXTERN(size_t) envlock_restore_step_count(void);
ENVLOCK_EXTERN(const char *) envlock_restore_step_name(size_t i);

/** "ok", "do", "manual", "done", "failed". */
ENVLOCK_EXTERN(const char *) envlock_item_state_name(envlock_item_state s);

/**
 * Plan the restore of lock on this machine (or opts->probe.root). Fails
 * with ENVLOCK_EINVAL for an unknown step name and ENVLOCK_EPARSE when
 * the lock itself is unusable (the error names the field); a lock value
 * that is merely unsafe makes its item "manual" with the reason.
 */
ENVLOCK_EXTERN(int) envlock_restore_plan(envlock_restore **out, envlock_ctx *ctx,
					 const envlock_lock *lock,
					 const envlock_restore_opts *opts);

/** How many items of the plan are in state s. */
ENVLOCK_EXTERN(size_t) envlock_restore_count(const envlock_restore *r, envlock_item_state s);

/** Print the plan (or, after apply, what was done) for a person. flags: ENVLOCK_PRINT_*. */
ENVLOCK_EXTERN(void) envlock_restore_print(const envlock_restore *r, FILE *out, unsigned flags);

/** Print the plan as JSON: {"lock": id, "steps": [{"step", "state", "items": [...]}]}. */
ENVLOCK_EXTERN(int) envlock_restore_print_json(const envlock_restore *r, envlock_ctx *ctx, FILE *out);

/**
 * Perform the plan's "do" items, step by step, stopping at the first
 * failure. progress (may be NULL) gets a line per item as it runs. The
 * journal and log are <state_dir>/restore-<id>.journal and .log. Returns
 * 0 when every item succeeded, ENVLOCK_ERROR when one failed (its state
 * says which and why), ENVLOCK_EIO when the state folder is unusable.
 */
ENVLOCK_EXTERN(int) envlock_restore_apply(envlock_restore *r, envlock_ctx *ctx, FILE *progress);

/**
 * After apply: probe this machine again, compare it with lock (the one
 * planned from) over the sections restore works on — gpu, cuda, cudnn,
 * python, conda, pip, frameworks — and print the risky and breaking
 * differences left to stream, then the verdict. *breaking gets their
 * count.
 */
ENVLOCK_EXTERN(int) envlock_restore_remaining(size_t *breaking, envlock_restore *r,
					      envlock_ctx *ctx, const envlock_lock *lock,
					      FILE *stream, unsigned flags);

/** The log file apply writes (valid after envlock_restore_plan). Borrowed. */
ENVLOCK_EXTERN(const char *) envlock_restore_log_path(const envlock_restore *r);

/**
 * When the journal shows that an earlier apply of the same lock stopped
 * during a step, that step's name; NULL otherwise. Borrowed.
 */
ENVLOCK_EXTERN(const char *) envlock_restore_interrupted(const envlock_restore *r);

ENVLOCK_EXTERN(void) envlock_restore_free(envlock_restore *r);

#endif
