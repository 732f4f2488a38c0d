/*
 * The root every probe reads under (util-linux's path context): "/" for
 * the live machine, or a directory holding a captured tree, a mounted
 * disk or a container image. Symlinks are resolved the way a chroot
 * would see them: an absolute target starts again at the root and ".."
 * never climbs above it, so nothing outside the root is ever read.
 */
#ifndef EL_ROOT_H
#define EL_ROOT_H

#include <stddef.h>
#include <sys/stat.h>

#include "buf.h"
#include "vec.h"
#include "envlock/common.h"

typedef struct {
	char *prefix; /* host path of the root without trailing '/'; "" for "/" */
	int live;     /* the root is the running machine's "/" */
	int stable;   /* nothing under it changes while it is read (a probe): el_root_set_stable */
} el_root;

/* The live machine's "/", without el_root_init. */
#define EL_ROOT_LIVE_INIT { (char *)"", 1, 0 }

/* Open dir as the root (NULL or "/" is the live machine). */
int el_root_init(el_root *r, envlock_ctx *ctx, const char *dir);
void el_root_release(el_root *r);

/* Host path of an in-root absolute path, without resolving symlinks. */
char *el_root_host(const el_root *r, const char *abs);

/*
 * Resolve rel (absolute, or relative to base) under the root, following
 * symlinks. base must itself be resolved already ("/" if in doubt).
 * On success *out is the resolved in-root absolute path (malloc'd).
 * Errors: ENVLOCK_ENOTFOUND (a component is missing: a dangling link),
 * ENVLOCK_ELIMIT (more than 40 links: a loop), ENVLOCK_EIO (*err_no set).
 */
int el_root_realpath_at(const el_root *r, const char *base, const char *rel,
			char **out, int *err_no);
int el_root_realpath(const el_root *r, const char *abs, char **out, int *err_no);

/* lstat / stat (following links under the root) of an in-root path. */
int el_root_lstat(const el_root *r, const char *abs, struct stat *st);
int el_root_stat(const el_root *r, const char *abs, struct stat *st);

/* The target of the symlink at abs, as stored (malloc'd). */
int el_root_readlink(const el_root *r, const char *abs, char **out);

/*
 * Read the regular file at abs (links resolved under the root) into out,
 * whose limit is the size cap. Errors: ENVLOCK_ENOTFOUND, ENVLOCK_ELIMIT
 * (larger than the cap, or a link loop), ENVLOCK_EINVAL (not a regular
 * file), ENVLOCK_EIO (*err_no set, e.g. EACCES).
 */
int el_root_read(const el_root *r, const char *abs, el_buf *out, int *err_no);

/*
 * el_root_read of name inside dir, an in-root directory already resolved
 * (from el_root_realpath): an openat(2) from that folder, kept open per
 * thread for the next call, instead of a walk of every component. A name
 * that is a symlink is resolved under the root.
 */
int el_root_read_at(const el_root *r, const char *dir, const char *name, el_buf *out, int *err_no);

/* el_root_lstat of name inside the resolved directory dir, the same way. */
int el_root_lstat_at(const el_root *r, const char *dir, const char *name, struct stat *st);

/* Close the folder el_root_read_at keeps open for this thread. */
void el_root_thread_done(void);

/*
 * Say that nothing under the root changes while it is read, as in one
 * probe of a machine: el_root_realpath_at then remembers, per thread, the
 * folders it found to be real directories and skips their lstat on every
 * later path through them (a save resolves thousands of paths under a few
 * folders), and el_root_list keeps the names of a folder of 256 entries
 * or more (the multiarch library folder, listed by several probes).
 * Forgotten by el_root_thread_done. Not for a root being written.
 */
void el_root_set_stable(el_root *r);

/*
 * The names in directory abs (links resolved under the root), sorted
 * bytewise, without "." and "..". *names is a NULL-terminated malloc'd
 * array freed with el_strv_free(). A missing directory is ENOTFOUND.
 */
int el_root_list(const el_root *r, const char *abs, char ***names, size_t *count);

/* A short reason for a failed el_root_* call: "no such file", ... */
const char *el_root_reason(int code, int err_no);

/* Join an in-root directory and a name ("/a" + "b" -> "/a/b"); malloc'd. */
char *el_path_join(const char *dir, const char *name);

/* A regular file this process may run (stat follows links). */
bool el_is_executable(const char *path);

/* The first regular executable file named name in a folder of PATH (absolute folders only), or NULL. malloc'd. */
char *el_which(const char *name);

/* The last component of path (borrowed, inside path). */
const char *el_path_base(const char *path);

/* The directory part of path ("/a/b" -> "/a", "/a" -> "/"); malloc'd. */
char *el_path_dir(const char *path);

/* The absolute path abs with ".", ".." and repeated slashes taken out, lexically, like os.path.normpath; malloc'd. */
char *el_path_normalise(const char *abs);

#endif
