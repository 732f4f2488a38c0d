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
 * a long long: 1.5, 1e300, an infinity or a NaN). An integer held as its
 * digits (el_jnew_int, el_json_exact_ints) is read from them, exactly.
 */
cJSON *el_jget(const cJSON *obj, const char *key);
const char *el_jget_str(const cJSON *obj, const char *key);
long long el_jget_int(const cJSON *obj, const char *key, long long fallback);
bool el_jget_bool(const cJSON *obj, const char *key, bool fallback);
/* v as el_jget_int reads a member: its whole number, else fallback. */
long long el_jint(const cJSON *v, long long fallback);

/*
 * An integer as a JSON value: a number, or, when its magnitude is 2^53 or
 * more (a double cannot hold every such integer: 2^60 + 1 would become
 * 2^60), a Raw node with its digits, which el_json_write writes as they
 * are and el_jint reads back exactly. Never NULL.
 */
cJSON *el_jnew_int(long long val);

/*
 * Whether the n bytes at s are an integer as JSON writes it (an optional
 * '-', digits, no leading zero, not -0) within [-2^63, 2^64); *big (may
 * be NULL) says whether its magnitude is 2^53 or more.
 */
bool el_json_int_text(const char *s, size_t n, bool *big);

/* The digits of v when it is such an integer held as a Raw node (el_jnew_int), else NULL. */
const char *el_jraw_int(const cJSON *v);

/*
 * The integers of a JSON text whose magnitude is 2^53 or more (within
 * the 64-bit range of el_json_int_text), each by its place among the
 * text's numbers, with its digits. Found before the text is rewritten
 * (el_lock_canonical_text), applied to the document cJSON parsed from
 * the same text: each such number node becomes a Raw node holding the
 * text's digits (its valuedouble kept), so the document writes back the
 * number the text holds, and el_jint reads it. A number past 64 bits, a
 * fraction or an exponent (1.152921504606847e+18, as envlock wrote such
 * integers before) stays a double. text[len] must be a NUL.
 */
typedef struct {
	size_t index;    /* the number's place among the text's numbers, from 0 */
	char digits[24]; /* as the text writes it */
} el_json_bigint;
typedef struct {
	el_json_bigint *v;
	size_t n, cap;
} el_json_bigints;
void el_json_bigints_find(el_json_bigints *out, const char *text, size_t len);
void el_json_bigints_apply(cJSON *doc, const el_json_bigints *found);
void el_json_bigints_release(el_json_bigints *found);
/* The three at once, for a document parsed from text. */
void el_json_exact_ints(cJSON *doc, const char *text, size_t len);

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

/* A section of a lock being built: its top-level key and its object. */
typedef struct {
	const char *key;
	cJSON *value; /* taken by el_lock_build; NULL: the lock has no such member */
} el_lock_section;

/*
 * The one constructor of a lock that is not read from a file (a probe of
 * a machine, an import): its format version and "created" time (now, or
 * SOURCE_DATE_EPOCH when set, for reproducible builds), the n sections,
 * warnings (an array of strings, or NULL: the lock has no "warnings"),
 * the request errors (an array of strings, not part of the document, or
 * NULL) and the hash cache's figures (or NULL). Every cJSON given is
 * taken. The id is settled now when settle is set; else when the lock is
 * first written or its id asked for (a probed lock is large: its id is
 * then hashed from the text written, not from a second serialisation).
 * Never NULL.
 */
envlock_lock *el_lock_build(const el_lock_section *sections, size_t n, cJSON *warnings, cJSON *errors,
			    const envlock_hash_stats *stats, bool settle);

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
