/* Internal error reporting into an envlock_ctx. */
#ifndef EL_ERROR_H
#define EL_ERROR_H

#include "envlock/common.h"
#include "xalloc.h" /* el_oom, which callers of cJSON end in */

struct envlock_ctx {
	char message[1024];
};

/* Record a one-line failure detail on ctx and return code (for chaining). */
int el_error_set(envlock_ctx *ctx, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A failure inside a staging place (a temporary file or folder beside the
 * output) said of the output instead: "'<staged>/kit/envlock.lock': write
 * failed: no space left on device" becomes "'<out>': staging kit/envlock.lock:
 * write failed: ...", and "'<out>.new': ..." becomes "'<out>': ...". A
 * message about another path stays. Returns code.
 */
int el_error_restate_staged(envlock_ctx *ctx, int code, const char *staged, const char *out);

/* strerror(err_no) starting lowercase, for one-line messages. */
const char *el_strerror(int err_no);

#endif
