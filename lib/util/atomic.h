/* Atomic file replacement: temporary file in the same directory, fsync, rename. */
#ifndef EL_ATOMIC_H
#define EL_ATOMIC_H

#include <stddef.h>
#include <sys/types.h>

#include "envlock/common.h"

/*
 * A file written under a temporary name in the folder of its final path,
 * and given that name only once complete: open, write into fd, then
 * commit (or roll back). el_write_atomic() and the bundle writer use it.
 */
typedef struct {
	envlock_ctx *ctx;
	char *path;   /* the final name */
	char *dir;    /* the folder of path, where the temporary file is */
	char *tmp;    /* the temporary file, "<dir>/.<name>.XXXXXX" */
	int fd;       /* open on tmp for reading and writing; -1 once ended */
} el_tmpfile;

/* An el_tmpfile not opened yet: rolling it back is a no-op. */
#define EL_TMPFILE_INIT { NULL, NULL, NULL, NULL, -1 }

/*
 * Create the temporary file for path with mode 0600 (mkstemp), open on
 * t->fd. ENVLOCK_EIO, "'<path>': cannot create a file in '<dir>': <why>",
 * when it cannot be made; t is then already ended.
 */
int el_tmpfile_open(el_tmpfile *t, envlock_ctx *ctx, const char *path);

/*
 * Give the file mode (as given: the caller applies the umask if it
 * wants it), fsync it, close it, rename it over path and fsync the
 * folder, so a crash leaves the old file or the complete new one. Ends t
 * either way: on failure the temporary file is removed and path is
 * unchanged; ENVLOCK_EIO, "'<path>': write failed: <why>" (mode, fsync)
 * or "'<path>': <why>" (close, rename).
 */
int el_tmpfile_commit(el_tmpfile *t, mode_t mode);

/*
 * Like el_tmpfile_commit, but path must not exist: the file appears there
 * by link(2), never replacing one, even one created meanwhile
 * (ENVLOCK_EINVAL, "'<path>' already exists").
 */
int el_tmpfile_commit_new(el_tmpfile *t, mode_t mode);

/* Close and remove the temporary file, leaving path as it was; a no-op once t has ended. */
void el_tmpfile_rollback(el_tmpfile *t);

/* fsync the folder holding path (best effort), so a rename or a link into it is durable. */
void el_fsync_parent(const char *path);

/*
 * Replace path with data. The new file gets mode (minus the umask). On
 * failure nothing at path changes and no temporary file is left behind;
 * the error names path.
 */
int el_write_atomic(envlock_ctx *ctx, const char *path, const void *data,
		    size_t len, mode_t mode);

/*
 * Like el_write_atomic, but path must not exist: the complete file appears
 * there at once (link(2) of the temporary file) or not at all, and an
 * existing file, even one created meanwhile, is never replaced
 * (ENVLOCK_EINVAL, "'<path>' already exists"). The temporary file is
 * created with mode 0600 (mkstemp) before it is set to mode, so a 0600
 * file is never readable by others, not even for a moment.
 */
int el_write_atomic_new(envlock_ctx *ctx, const char *path, const void *data,
			size_t len, mode_t mode);

/*
 * Where a command's output goes: "-" is stdout (written and flushed),
 * anything else a file replaced atomically with mode 0644. Errors name
 * the destination.
 */
int el_write_output(envlock_ctx *ctx, const char *path, const void *data, size_t len);

/* write(2) all of p, retrying short writes and EINTR; 0 or -1 (errno set). */
int el_write_all(int fd, const char *p, size_t len);

/*
 * Give the complete folder staged (beside path, on the same file system)
 * the name path. Without replace, path must not exist: a folder made
 * there meanwhile is not replaced (-1, EEXIST). With replace, path is a
 * folder and the two are exchanged at once (renameat2 RENAME_EXCHANGE;
 * where the kernel or the file system has none, the old folder is
 * renamed to "<staged>.old" first, and back if the new one cannot take
 * its place); the old folder is then removed. The parent is fsynced.
 * 0, or -1 with errno and nothing changed.
 */
int el_dir_rename(const char *staged, const char *path, int replace);

/*
 * rm -rf path, never following a symlink; a folder of ours without
 * owner rwx is opened up first. 0, or -1 with errno when something is
 * left (or path could not be read).
 */
int el_remove_tree(const char *path);

/* mkdir -p for dir with mode; 0 or ENVLOCK_EIO. */
int el_mkdir_p(const char *dir, mode_t mode);

#endif
