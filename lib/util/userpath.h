/*
 * Paths the user typed (--checkpoint, --config, --repo): resolved on this
 * machine, relative to the current directory, and shown back the way
 * they would write them.
 */
#ifndef EL_USERPATH_H
#define EL_USERPATH_H

/*
 * How to show the absolute path abs: relative to the current directory
 * when inside it ("." for the directory itself), else abs. malloc'd.
 */
char *el_userpath_display(const char *abs);

#include "buf.h"
#include "envlock/common.h"

/*
 * Read the file the user named (relative to the current directory) into
 * b, whose limit is the size cap. On failure the error on ctx names the
 * file and why, e.g. "'x.json': larger than 64 MiB, not a lockfile"
 * (what = "lockfile").
 */
int el_userpath_read(el_buf *b, envlock_ctx *ctx, const char *path, const char *what);

#endif
