/*
 * What a lock may hand to programs, spec files and the file system. A lock
 * comes from another machine and is untrusted: every name, version, URL
 * and path that restore runs or writes, and that export writes into a
 * file another program reads, is checked here, once for both, so they can
 * never disagree about the same lock. show, report and diff only print
 * these values (escaped); they do not act on them.
 */
#ifndef EL_UNTRUSTED_H
#define EL_UNTRUSTED_H

#include <stddef.h>

#include <cJSON.h>

#include "envlock/common.h"
#include "envlock/lock.h"

/* Each returns NULL when value is acceptable, else a static reason ("contains a shell metacharacter"). */
const char *el_bad_name(const char *v);         /* package, distribution, soname */
const char *el_bad_version(const char *v);
const char *el_bad_url(const char *v);          /* http(s), file, git+..., ssh, scp-like */
const char *el_bad_index_url(const char *v);    /* an index or find-links URL for pip: http(s) or file, no credentials */
const char *el_bad_abs_path(const char *v);     /* absolute, no "..", no control chars */
const char *el_bad_rel_path(const char *v);     /* relative, no "..", no control chars */
/* a file inside a repository's work tree: relative, no "." or ".." or empty component, nothing in .git */
const char *el_bad_repo_file(const char *v);
const char *el_bad_hex(const char *v, size_t len);
const char *el_bad_sha256(const char *v);       /* 64 lowercase hex digits */

/* each element of arr (an array of objects), with its index */
#define EL_EACH(arr, i, el) \
	for (i = 0, el = cJSON_IsArray(arr) ? (arr)->child : NULL; el; el = el->next, i++)

/*
 * The string at key of obj, checked with bad (NULL: only a string); on a
 * problem, record "<field>: <reason>" on ctx (the first one only, *failed
 * set) and return NULL. field is printf-formatted like "pip.distributions[3].name".
 */
typedef const char *(*el_check_fn)(const char *v);
const char *el_lock_str(int *failed, envlock_ctx *ctx, const cJSON *obj, const char *key,
			el_check_fn bad, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * Record on ctx that value (NULL: not a string) at field was refused for
 * why, as "<field> '<value>': <why>" with a bounded, escaped excerpt of
 * the value: the first refusal only (*failed counts them).
 */
void el_lock_refuse(int *failed, envlock_ctx *ctx, const char *field, const char *value, const char *why);

/*
 * Check every value of lock that restore or export would hand on, once:
 * the verdict is kept in the lock, and later calls return it again. 0, or
 * ENVLOCK_EPARSE with "<field> '<value>': <reason>" on ctx, the value
 * escaped as every lock text is on a terminal.
 */
int el_lock_check_untrusted(envlock_ctx *ctx, const envlock_lock *lock);

#endif
