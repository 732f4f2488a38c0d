/*
 * The in-memory lock: a JSON document (cJSON) with typed helpers. cJSON
 * stays inside the library; the public API sees only envlock_lock.
 */
#ifndef EL_MODEL_H
#define EL_MODEL_H

#include <cJSON.h>
#include <stdbool.h>

#include "envlock/lock.h"
#include "util/buf.h"
#include "util/hash.h"

struct envlock_lock {
	cJSON *doc;
	struct el_arena *arena;     /* where a loaded lock's document lives (arena.h), or NULL: malloc */
	char id[8 + EL_SHA256_HEX]; /* "sha256:" + hex, once computed */
	int id_ready;               /* id is computed lazily: loading a lock does not need it */
	int doc_id_stale;           /* the document changed since its "id" was set (a probe, checks) */
	cJSON *errors;              /* request errors (strings); not part of the document */
	int untrusted_checked;      /* el_lock_check_untrusted ran: its verdict is untrusted_why */
	char *untrusted_why;        /* the first value restore and export may not hand on, or NULL */
	envlock_hash_stats stats;
	struct el_view *view;       /* the typed view, built on first use (el_lock_view) */
	int view_stale;             /* the document changed since the view was built */
};

/*
 * envlock_lock_load, with the schema check on or off. Off only for the
 * unit tests of consumers, which feed them small hand-made documents (and
 * shapes the schema refuses, to show a consumer never trusts one).
 */
int el_lock_load(envlock_lock **out, envlock_ctx *ctx, const char *path, bool validate);

/* Builders: they never return NULL (memory exhaustion ends the program). */
cJSON *el_jnew_obj(void);
cJSON *el_jset_obj(cJSON *parent, const char *key);
cJSON *el_jset_arr(cJSON *parent, const char *key);
void el_jset(cJSON *parent, const char *key, cJSON *item);
/* Set a string member; NULL val sets nothing. */
void el_jset_str(cJSON *parent, const char *key, const char *val);
void el_jset_strn(cJSON *parent, const char *key, const char *val, size_t n);
/* Set a string member, or null when val is NULL. */
void el_jset_str_or_null(cJSON *parent, const char *key, const char *val);
void el_jset_int(cJSON *parent, const char *key, long long val);
void el_jset_bool(cJSON *parent, const char *key, bool val);
cJSON *el_jpush_obj(cJSON *arr);
void el_jpush_str(cJSON *arr, const char *val);

/*
 * Readers; NULL / fallback when the member is missing or of another type
 * (for el_jget_int also when the number is not a whole number that fits
 * a long long: 1.5, 1e300, an infinity or a NaN).
 */
cJSON *el_jget(const cJSON *obj, const char *key);
const char *el_jget_str(const cJSON *obj, const char *key);
long long el_jget_int(const cJSON *obj, const char *key, long long fallback);
bool el_jget_bool(const cJSON *obj, const char *key, bool fallback);
/* v as el_jget_int reads a member: its whole number, else fallback. */
long long el_jint(const cJSON *v, long long fallback);

/*
 * Serialise item with keys sorted bytewise: indent 2 gives the lockfile
 * layout (final newline included), indent 0 the compact canonical form
 * the id is computed over. Strings that are not valid UTF-8 have each
 * bad byte written as U+FFFD, so the output is always valid JSON.
 */
int el_json_write(const cJSON *item, el_buf *out, int indent);

/*
 * el_json_write for a command's --json output, which is often read on a
 * terminal: DEL, C1 controls (U+0080-U+009F) and bidi controls (U+061C,
 * U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) are written as \uXXXX,
 * so a hostile lock cannot move the cursor, retitle the window or reorder
 * what a reader sees. The string values are the same once parsed. The
 * lockfile and the canonical form the id is computed on keep raw UTF-8
 * (el_json_write), so ids do not change.
 */
int el_json_write_term(const cJSON *item, el_buf *out, int indent);

/* The canonical form's size cap: a lock's document is at most this large. */
#define EL_LOCK_CANONICAL_MAX ((size_t)1 << 30)

/*
 * Append the canonical form of the lock to out: the document without
 * "id", "created" and "verify" (measurements at save time), keys sorted, compact (el_json_write with indent 0).
 * These are the bytes the lock id is the SHA-256 of (and what a format 1
 * signature, before envlock signed the whole document, covered);
 * re-indenting or reordering the file does not change them, changing any
 * value does. The document is unchanged afterwards.
 */
void el_lock_canonical(envlock_lock *lock, el_buf *out);

/* "sha256:" + 64 hex digits + NUL */
#define EL_LOCK_DIGEST_SIZE (7 + EL_SHA256_HEX)

/*
 * Append the form a signature of the lock covers (envlock sign): the
 * whole document, "id", "created" and "verify" included, keys sorted
 * bytewise, compact (el_json_write with indent 0). Re-indenting or
 * reordering the file does not change it; changing any value, the date
 * or the verify section does.
 */
void el_lock_document(const envlock_lock *lock, el_buf *out);

/*
 * "sha256:<hex>" of the compact form of the lock's "verify" section into
 * out, and true; "" and false when the lock has none.
 */
bool el_lock_verify_digest(const envlock_lock *lock, char out[EL_LOCK_DIGEST_SIZE]);

/*
 * Rewrite a lock file's text, in place, into its canonical form (the
 * bytes el_lock_canonical appends) when the text is as el_json_write
 * writes each value (every lock envlock wrote), and set *len to its
 * length: no document is written. -1 when the text is in any other form
 * (then the text is garbage, and the id is computed from the document).
 */
int el_lock_canonical_text(char *text, size_t *len);

/* Compute lock->id from the document (without "id", "created" and "verify"); the document is unchanged. */
void el_lock_compute_id(envlock_lock *lock);

/* Set "created": now, or SOURCE_DATE_EPOCH when set, for reproducible builds. */
void el_lock_set_created(cJSON *doc);

/* Compute lock->id and store it as the document's "id". */
void el_lock_update_id(envlock_lock *lock);

/* The document changed: its id is recomputed when next needed (once, however many changes). */
void el_lock_touch(envlock_lock *lock);

/* Make the document's "id" current before it is written out. */
void el_lock_settle(envlock_lock *lock);

/*
 * Append the lockfile text of lock (el_json_write, indent 2) to out,
 * settling its id on the way: a lock whose id is stale is written once
 * and its id hashed from the canonical form of that text (as loading
 * takes it, el_lock_canonical_text), not from a second, compact
 * serialisation of the document. ELIMIT as el_json_write.
 */
int el_lock_write_settled(envlock_lock *lock, el_buf *out);

#endif
