/*
 * The restore plan inside the library: steps of items, each "do" item
 * carrying the action apply performs. One planner file per subject
 * (system.c: driver and CUDA; compilers.c; cudnn.c; conda.c; repos.c;
 * pip.c; files.c: configs and checkpoints; verify.c), each comparing the lock's
 * view with the live view of this machine (built by the same probes);
 * apply.c runs the items; step.c and host.c hold what the planners share
 * (items, argument lists, host paths). What a lock may hand on is checked
 * by lock/untrusted.h, and by el_restore_check_cudnn for the cuDNN links.
 */
#ifndef EL_RESTORE_PLAN_H
#define EL_RESTORE_PLAN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "envlock/restore.h"
#include "lock/untrusted.h"
#include "lock/view.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/hashcache.h"
#include "util/root.h"
#include "util/vec.h"

enum {
	EL_STEP_DRIVER,
	EL_STEP_CUDA,
	EL_STEP_COMPILERS,
	EL_STEP_CUDNN,
	EL_STEP_CONDA,
	EL_STEP_REPOS,     /* before pip: an editable install's source is a restored checkout */
	EL_STEP_PIP,
	EL_STEP_CONFIGS,
	EL_STEP_CHECKPOINTS,
	EL_STEP_VERIFY,
	EL_STEP_COUNT
};

typedef struct el_item el_item;
typedef struct el_apply el_apply;

/* An offline restore kit (kit.c): its files, each checked against its manifest and the lock. */
typedef enum { EL_KIT_CONDA, EL_KIT_WHEEL, EL_KIT_FILE } el_kit_kind;

typedef struct {
	el_kit_kind kind;
	char *path;               /* as the manifest names it: "conda/<fn>", "wheels/<f>.whl", "files/<b>" */
	const char *file;         /* its last component */
	char *host;               /* its host path */
	char *name, *version;     /* wheels: the lock's name, the file name's version */
	char *norm;               /* wheels: the PEP 503 name */
	char *build, *role, *from;
	uint64_t size;
	char sha256[EL_SHA256_HEX];
	char md5[33];             /* conda: as computed; others: the manifest's or "" */
	bool checked;             /* hashed and compared: only the items of the steps that run are */
} el_kit_item;

/* What the kit's maker could not put in it, and how to fetch it (the manifest's "missing"). */
typedef struct {
	char *kind, *name, *version, *reason, *fetch;
} el_kit_missing;

/* A file of a .tar.zst kit as unpacking checked it against the archive's manifest, while it streamed. */
typedef struct {
	char *path;               /* in the kit folder */
	char sha256[EL_SHA256_HEX];
	uint64_t size;
} el_kit_streamed;

typedef struct {
	char *shown;              /* the kit as the user named it (an archive: ARCHIVE/TOP) */
	el_kit_streamed *streamed; /* a .tar.zst kit: its files' digests, checked as it was unpacked */
	size_t nstreamed, streamed_cap;
	char *dir;                /* host path of the kit folder, real */
	el_kit_item *items;
	size_t n, cap;
	el_kit_missing *missing;
	size_t nmissing, missing_cap;
} el_kit;

/* Perform a "do" item; on failure return nonzero after el_item_fail(). */
typedef int (*el_item_fn)(el_item *it, el_apply *ap);

/* What the plan saw at an item's path, for apply's re-check before it replaces it. */
typedef enum {
	EL_SEEN_ANY,          /* not checked */
	EL_SEEN_NO_LINK,      /* no symbolic link (nothing, or a file) */
	EL_SEEN_LINK,         /* a symbolic link to seen_target */
} el_seen;

struct el_item {
	envlock_item_state state;
	char *text;           /* what, one line */
	char *note;           /* manual: why and what to do; failed: why; may be NULL */
	el_item_fn run;       /* the action of a "do" item */
	char *path;           /* host path the action works on */
	char *target;         /* symlink target, archive, source URL ... */
	el_seen seen;         /* what the plan saw at path (el_apply_symlink re-checks it) */
	char *seen_target;
	char *data;           /* bytes to write */
	size_t data_len;
	mode_t mode;
	el_strvec argv;       /* program to run (argv.v is NULL-terminated) */
	el_strvec envv;       /* KEY=VALUE added to its environment */
	bool chroot;          /* argv runs chroot'ed into the root (--chroot), by in-tree paths */
	void *extra;          /* action-specific data, freed with free_extra */
	void (*free_extra)(void *extra);
};

typedef struct {
	const char *name;
	el_item *items;       /* EL_GROW'n */
	size_t n, cap;
	bool skipped;         /* left out by --only / --skip */
} el_step;

struct envlock_restore {
	const envlock_lock *lock_obj; /* the caller's lock (borrowed) */
	const el_view *lock;      /* its view: what the planners read of it */
	envlock_lock *live_obj;   /* this machine, probed */
	const el_view *live;      /* its view */
	envlock_probe_opts live_opts; /* how it was probed (no repositories): apply's re-checks probe again */
	envlock_restore_opts opts;
	el_root root;             /* what the live probe read */
	char *named_target;       /* <root_prefix>/envs/<--name>, when given */
	char *moved_python;       /* the locked Python under --conda-target, when probed there */
	/*
	 * The locked environment has no pip of its own (a uv venv, a venv made
	 * --without-pip): what runs pip for it instead, a pip of 22.3 or later
	 * elsewhere ("python3 -m pip --python PY") or uv ("uv pip ... --python
	 * PY"); pip_runner.n is 0 when the environment's own pip runs.
	 */
	el_strvec pip_runner;
	bool pip_runner_uv;
	char *dest;               /* host folder configs, checkpoints and repos go under */
	el_root dest_root;
	el_hashcache *hashes;
	el_step steps[EL_STEP_COUNT];
	char *id;                 /* the lock's id */
	char *short_id;           /* its first 12 hex digits, for file names */
	char *state_dir;
	char *journal_path;
	char *log_path;
	char *interrupted;        /* step an earlier apply stopped in, or NULL */
	el_strvec created;        /* host paths (conda envs, clones) earlier applies left half made */
	el_strvec option_texts;   /* el_restore_option's default texts */
	el_kit *kit;              /* --kit, checked; NULL without one */
};

struct el_apply {
	envlock_restore *r;
	envlock_ctx *ctx;
	FILE *progress;
	int log_fd;
	int journal_fd;
	const char *step;
	char stamp[32];           /* this run's time, for backup names */
};

/*
 * Read the journal an earlier apply of this lock left (apply.c writes
 * it): the step it stopped in (r->interrupted) and what it began to
 * create but never finished (r->created).
 */
void el_restore_read_journal(envlock_restore *r);
/* Did an earlier apply of this lock begin to create host_path and never finish? */
bool el_restore_created(const envlock_restore *r, const char *host_path);

/*
 * Planners: add the items of one step (r->lock against r->live). They
 * run in the steps' order, so a planner may read the items of the steps
 * before it (pip reads conda's and repos').
 */
void el_plan_driver(envlock_restore *r, el_step *s);
void el_plan_cuda(envlock_restore *r, el_step *s);
void el_plan_compilers(envlock_restore *r, el_step *s);
void el_plan_cudnn(envlock_restore *r, el_step *s);
void el_plan_conda(envlock_restore *r, el_step *s);
void el_plan_repos(envlock_restore *r, el_step *s);
void el_plan_pip(envlock_restore *r, el_step *s);
void el_plan_configs(envlock_restore *r, el_step *s);
void el_plan_checkpoints(envlock_restore *r, el_step *s);
void el_plan_verify(envlock_restore *r, el_step *s);

/* Add an item with printf-style text; returns it for the action's fields (step.c, with the notes and el_args_push). */
el_item *el_step_add(el_step *s, envlock_item_state state, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set (replace) an item's note. */
void el_item_note(el_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void el_item_vnote(el_item *it, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* A "manual" item for a recorded path that is absolute and outside --dest (files.c). */
el_item *el_restore_outside(envlock_restore *r, el_step *s, const char *what, const char *path);
/* Free what an item holds (its text, note, action fields and extra); it is left zeroed. */
void el_item_release(el_item *it);
/* Append a copy of each string to v (NULL ends the list): an argument list in one call. */
void el_args_push(el_strvec *v, const char *first, ...) __attribute__((sentinel));

/*
 * The locked repository the repos step restores at host_path or at a
 * folder above it (its path as the lock records it, borrowed), or NULL;
 * *doing: this run's repos step clones it or checks it out (a "do"
 * item), so the tree is there once that step has run (repos.c).
 */
const char *el_restore_repo_at(const envlock_restore *r, const char *host_path, bool *doing);
/*
 * Write a repository's untracked file rel (text, checked against sha256)
 * under its work tree top_path: no link followed on the way, nothing
 * already there overwritten (the same content is fine). 0, or -1 after
 * el_item_fail (untracked.c).
 */
int el_restore_write_untracked(el_item *it, el_apply *ap, const char *top_path, const char *rel,
			       const char *text, const char *sha256, bool executable);

/* The checks of what a lock may hand to programs and the file system: lib/lock/untrusted.h */
/* ... and what only the cuDNN step hands on: the files it unpacks, the links it makes (cudnn.c) */
int el_restore_check_cudnn(envlock_ctx *ctx, const el_view *lock);

/*
 * A path the user recorded (config, checkpoint, repository) as an in-root
 * path under the destination (malloc'd), or NULL when it is absolute and
 * outside it (files.c).
 */
char *el_restore_dest_path(const envlock_restore *r, const char *path);

/*
 * The host path of an in-root path, its folders resolved under the root
 * but its last component left as it is: what an action creates or
 * replaces, or a program run by that name (a venv's bin/python is a link
 * that must not be followed). malloc'd.
 */
char *el_restore_host(const el_root *root, const char *abs);
/* The same with the last component resolved too: a file to read. Both in host.c. */
char *el_restore_host_real(const el_root *root, const char *abs);

/*
 * The runfile flags of a toolkit-only, driver-free, non-interactive
 * install (rules/cuda-runfiles.json cites them), without --toolkitpath.
 */
#define EL_RUNFILE_FLAGS "--silent --toolkit --override"
/* Note on it which runfile installs CUDA version into home, and how (runfiles.c). */
void el_restore_runfile_note(envlock_restore *r, el_item *it, const char *version, const char *home);

/*
 * A file envlock writes for a program that runs inside the tree (an
 * @EXPLICIT spec, a requirements file): "/tmp/envlock-restore-<id>.<name>"
 * in the tree (malloc'd, in *in_tree) and its host path (returned); the
 * tree's /tmp is resolved under the root (host.c).
 */
char *el_restore_tree_file(const envlock_restore *r, const char *name, char **in_tree);
/* The argument of argv that is such a file (its in-tree path), or NULL. */
const char *el_restore_tree_file_in(const envlock_restore *r, const el_strvec *argv);
/* The in-tree path of a host path under the root (malloc'd), or NULL when it is outside (host.c). */
char *el_restore_in_tree(const envlock_restore *r, const char *host_path);
/*
 * Under --root without --chroot: make the "do" item that runs a program
 * of the tree "manual", saying why and how to run it inside the tree
 * (chroot ROOT argv...); file_hint says how to write the file it reads
 * (step.c).
 */
void el_restore_needs_chroot(envlock_restore *r, el_item *it, const char *file_hint);
/* Does this plan run the tree's programs with host paths, were it allowed (--root, no --chroot)? */
#define EL_RESTORE_REFUSE_TREE(r) (!(r)->root.live && !(r)->opts.chroot)

/*
 * The probe options for the environment the lock describes as it is on this
 * machine now: --conda-prefix/--python as given, else the conda prefix (or
 * --conda-target) and the locked Python (moved with the target) where they
 * exist. No repositories, configs or checkpoints. Plan probes with it, and
 * the comparison after apply again, when a step may have made them.
 */
void el_restore_env_probe(envlock_restore *r, envlock_probe_opts *popts);


/* How the caller names option in advice (envlock_restore_opts.option_text), or "the 'option' option". */
const char *el_restore_option(envlock_restore *r, const char *option);

/*
 * Open the kit at given (a folder, or a .tar.zst unpacked under
 * state_dir/kit-<short_id>) and check it before anything runs: its
 * manifest (untrusted: size limit, paths, kinds) and its lock's id against
 * lock's; then each file the restore uses (uses: EL_KIT_USE_*, the steps
 * that run), on a thread per core: its size and digests against the
 * manifest, conda archives against the lock's packages and wheels against
 * its pip distributions. An item not checked is not handed out by
 * el_kit_conda/wheel/file. ENVLOCK_EINVAL with "kit 'FILE': what differs"
 * (kit.c).
 */
int el_kit_open(el_kit **out, envlock_ctx *ctx, const char *given, const char *state_dir, const char *short_id,
		const envlock_lock *lock, const el_view *v, unsigned uses);
/* What a restore uses of a kit (el_kit_open's uses): the items of the steps that run. */
enum { EL_KIT_USE_CONDA = 1u, EL_KIT_USE_WHEELS = 2u, EL_KIT_USE_CUDNN = 4u, EL_KIT_USE_RUNFILE = 8u };
void el_kit_free(el_kit *k);
/* The kit's conda archive named fn, wheel of norm (PEP 503) and version, file of role; or NULL. */
const el_kit_item *el_kit_conda(const el_kit *k, const char *fn);
const el_kit_item *el_kit_wheel(const el_kit *k, const char *norm, const char *version);
const el_kit_item *el_kit_file(const el_kit *k, const char *role);
/* The manifest's "missing" entry of that kind ("conda", "wheel") and name, or NULL. */
const el_kit_missing *el_kit_missing_of(const el_kit *k, const char *kind, const char *name);
/* "file://" URL of dir/rel, percent-encoded (malloc'd). */
char *el_kit_file_url(const char *dir, const char *rel);
/*
 * Under --chroot: put the kit's files of kind into host_dir/conda or
 * host_dir/wheels in the tree (hard links, else copies) for the program
 * that runs there; el_kit_unstage takes them out again.
 */
int el_kit_stage(el_apply *ap, el_item *it, const el_kit *k, el_kit_kind kind, const char *host_dir);
void el_kit_unstage(el_apply *ap, const el_kit *k, el_kit_kind kind, const char *host_dir);

/*
 * When this machine's default gcc is newer than the locked toolkit's
 * nvcc takes and a gcc-N that fits is installed: its names for CC and
 * CXX (malloc'd), true; else false and NULLs (compilers.c).
 */
bool el_restore_nvcc_gcc(envlock_restore *r, char **cc, char **cxx);

/* Apply helpers (apply.c). */
void el_item_fail(el_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append a line to the journal (fsync'd): "<time> <what>". */
void el_apply_journal(el_apply *ap, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append a line to the log. */
void el_apply_log(el_apply *ap, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Rename host_path aside to host_path.envlock-bak-<time>; its new name in *aside (may be NULL). */
int el_apply_aside(el_apply *ap, el_item *it, const char *host_path, char **aside);
/* Keep a copy of host_path as host_path.envlock-bak-<time> (a hard link, else a copy). */
int el_apply_backup_copy(el_apply *ap, el_item *it, const char *host_path);
/*
 * Write it->data, the input file of it's program, to host_path; in_tree:
 * it is in the tree's /tmp (made, mode 1777, when the tree has none).
 */
int el_apply_write_input(el_apply *ap, el_item *it, const char *host_path, bool in_tree);
/* Remove that file from the tree again once the program has run. */
void el_apply_remove_input(el_apply *ap, const char *host_path);
/*
 * Run it->argv with it->envv added, output to the log, no time limit (in
 * a chroot of the root when it->chroot); 0 on exit 0.
 */
int el_apply_run_argv(el_item *it, el_apply *ap);
/*
 * Generic actions: symlink it->path -> it->target (what is there moved
 * aside first, after checking it is still what the plan saw: it->seen).
 */
int el_apply_symlink(el_item *it, el_apply *ap);
/* Write it->data to it->path (parents created; a different file there kept as a backup copy). */
int el_apply_write(el_item *it, el_apply *ap);

#endif
