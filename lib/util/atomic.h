/* Atomic file replacement: temporary file in the same directory, fsync, rename. */
#ifndef EL_ATOMIC_H
#define EL_ATOMIC_H

#include <stddef.h>
#include <sys/types.h>

#include "envlock/common.h"

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

/* mkdir -p for dir with mode; 0 or ENVLOCK_EIO. */
int el_mkdir_p(const char *dir, mode_t mode);

#endif
