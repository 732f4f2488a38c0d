/*
 * envlock — common definitions: the context, error codes, export macro.
 *
 * Every library call takes an envlock_ctx. A call returns 0 on success or a
 * negative ENVLOCK_E* code for an expected failure; the one-line detail
 * (lowercase, no final period, naming the file) is then available from
 * envlock_error_last(ctx) until the next failing call.
 *
 * Arguments come in one order everywhere: out-parameters first, then
 * ctx, then the inputs (envlock_lock_load(&lock, ctx, path)). A call that
 * acts on an object of its own module and has no out-parameter takes that
 * object first (envlock_lock_write(lock, ctx, path)); a FILE * to print
 * to is an input. What comes back through an out-parameter belongs to
 * the caller, who frees it with the matching envlock_<thing>_free() or
 * _release() (NULL is fine).
 */
#ifndef ENVLOCK_COMMON_H
#define ENVLOCK_COMMON_H

#include <stddef.h>

#if defined(__GNUC__)
#define ENVLOCK_EXTERN(type) extern __attribute__((visibility("default"))) type
#else
#define ENVLOCK_EXTERN(type) extern type
#endif

/** The lockfile format version written by this library. */
#define ENVLOCK_FORMAT_VERSION 1

/** Error codes returned by library functions (always negative). */
typedef enum {
	ENVLOCK_OK = 0,
	ENVLOCK_ERROR = -1,     /**< generic failure */
	ENVLOCK_ENOTFOUND = -2, /**< a file or item does not exist */
	ENVLOCK_EPARSE = -3,    /**< input is malformed */
	ENVLOCK_ELIMIT = -4,    /**< input exceeds a size or count limit */
	ENVLOCK_EIO = -5,       /**< read or write failed */
	ENVLOCK_EINVAL = -6,    /**< invalid argument */
	ENVLOCK_ETIMEOUT = -7,  /**< an external program ran too long */
	ENVLOCK_EVERSION = -8,  /**< unsupported format version */
	ENVLOCK_EEXISTS = -9    /**< the file or folder to create is there already */
} envlock_error_code;

/** Flags for the human printers (show, diff, ldd, solve, check). */
#define ENVLOCK_PRINT_COLOR 1u /**< ANSI colours (the caller checks for a tty and NO_COLOR) */
/**
 * Wrap the prose a person reads at n columns (0: never; at most 65535):
 * at spaces only, so a command, a URL or a path is never broken and a line
 * holding a longer one runs past n. The printers that wrap say so.
 */
#define ENVLOCK_PRINT_WIDTH(n) ((unsigned)(n) << 16)
/** The width ENVLOCK_PRINT_WIDTH put into flags. */
#define ENVLOCK_PRINT_WIDTH_OF(flags) ((int)((flags) >> 16))

/** Library context: holds the last error. Not thread-safe; one per thread. */
typedef struct envlock_ctx envlock_ctx;

/**
 * Running out of memory is not an error code. Like git's xmalloc,
 * libenvlock then prints "envlock: fatal: out of memory" on stderr and
 * exits with status 2, from whatever function and thread ran out,
 * including inside cJSON (whose allocations go through the same policy
 * once a context exists). A program that embeds libenvlock and must not
 * exit installs a handler before its first call: it is called instead,
 * must not return (it may longjmp or abort), and if it does return the
 * process exits as above. NULL restores the default.
 */
ENVLOCK_EXTERN(void) envlock_set_oom_handler(void (*handler)(void));

/** Create a context: returns 0 and sets *out. Free with envlock_ctx_free(). */
ENVLOCK_EXTERN(int) envlock_ctx_new(envlock_ctx **out);

/** Free a context. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_ctx_free(envlock_ctx *ctx);

/**
 * The detail of the last failure on this context, or "" when there was
 * none. Borrowed: valid until the next call on ctx.
 */
ENVLOCK_EXTERN(const char *) envlock_error_last(const envlock_ctx *ctx);

/** The envlock version string, e.g. "0.1.0". */
ENVLOCK_EXTERN(const char *) envlock_version(void);

#endif
