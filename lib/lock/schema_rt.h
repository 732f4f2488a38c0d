/*
 * What the two validators of lib/lock share: schema.c's interpreter and
 * the lockfile schema's validator generated from it at build time
 * (tools/schema-gen.py). The path to a field, the error line, the
 * annotations unevaluatedProperties reads and the pattern forms matched
 * in C are one piece of code, so both give the same verdict in the same
 * words. Internal to lib/lock; not an API.
 */
#ifndef EL_SCHEMA_RT_H
#define EL_SCHEMA_RT_H

#include <math.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

/* cJSON's own type tests are calls into the library: on every value of a lock, that shows */
#define J_TYPE(x) ((x)->type & 0xff)
#define J_STRING(x) (J_TYPE(x) == cJSON_String)
#define J_NUMBER(x) (J_TYPE(x) == cJSON_Number)
#define J_OBJECT(x) (J_TYPE(x) == cJSON_Object)
#define J_ARRAY(x) (J_TYPE(x) == cJSON_Array)

enum { T_STRING = 1, T_INTEGER = 2, T_NUMBER = 4, T_OBJECT = 8, T_ARRAY = 16, T_BOOLEAN = 32, T_NULL = 64 };

/* One step of the path from the document to the value being checked. */
typedef struct {
	const char *name; /* a member, or NULL for an array index */
	long index;
} el_sv_step;

/* A validation under way: where it is, and the first error. */
typedef struct {
	char *why;
	size_t why_size;
	int quiet;    /* > 0 inside anyOf, oneOf, not and if: a failure there is an answer, not an error */
	int reported; /* why holds the first error */
	el_sv_step path[128];
	size_t depth;
} el_sv;

/* deeper than this, a value is refused ("nested too deeply") */
#define EL_SV_MAX_DEPTH 512

/*
 * The names of the properties evaluated at one instance location (for
 * unevaluatedProperties): a lock's objects have a few dozen members at
 * most, so they live in the struct and the heap is the exception.
 */
typedef struct {
	const char **names; /* inline, or a heap copy once that is full */
	size_t n, cap;
	const char *inline_names[48];
} el_sv_evaluated;

#define EL_SV_EVALUATED_INIT(e) \
	((e).names = (e).inline_names, (e).n = 0, (e).cap = sizeof((e).inline_names) / sizeof((e).inline_names[0]))

static inline void el_sv_eval_release(el_sv_evaluated *e)
{
	if (e->names != e->inline_names)
		free(e->names);
}

void el_sv_eval_grow(el_sv_evaluated *e);

static inline void el_sv_eval_add(el_sv_evaluated *e, const char *name)
{
	if (!e)
		return; /* nothing at this value asks what was evaluated */
	if (e->n == e->cap)
		el_sv_eval_grow(e);
	e->names[e->n++] = name; /* twice is harmless: only membership is asked */
}

/* name (an instance's own member string: its pointer identifies it) was evaluated */
int el_sv_eval_has(el_sv_evaluated *e, const char *name, int *sorted);

static inline void el_sv_push(el_sv *v, const char *name, long index)
{
	if (v->depth < sizeof(v->path) / sizeof(v->path[0]))
		v->path[v->depth] = (el_sv_step){ name, index };
	v->depth++;
}

static inline void el_sv_pop(el_sv *v)
{
	v->depth--;
}

/* -1, and (unless quiet, or an error is written already) "<path>: <fmt>" in v->why */
int el_sv_fail(el_sv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as a terminal may show it (el_term_text), cut to fit out */
const char *el_sv_esc(char *out, size_t n, const char *s);

/* an item of the array x appears twice */
int el_sv_has_duplicate(const cJSON *x);

/* an ECMA pattern as the schemas write them (\S, \s, \d, a leading (?i)) compiled as POSIX ERE */
int el_sv_regcomp(regex_t *re, const char *pattern);

static inline const char *el_sv_type_name(const cJSON *x)
{
	if (J_STRING(x))
		return "a string";
	if (J_NUMBER(x))
		return "a number";
	if (J_OBJECT(x))
		return "an object";
	if (J_ARRAY(x))
		return "an array";
	if (cJSON_IsBool(x))
		return "a boolean";
	return "null";
}

static inline int el_sv_is_integer(double d)
{
	return isfinite(d) && floor(d) == d;
}

static inline unsigned el_sv_type_of(const cJSON *x)
{
	if (J_STRING(x))
		return T_STRING;
	if (J_NUMBER(x))
		return el_sv_is_integer(x->valuedouble) ? T_NUMBER | T_INTEGER : T_NUMBER;
	if (J_OBJECT(x))
		return T_OBJECT;
	if (J_ARRAY(x))
		return T_ARRAY;
	if (cJSON_IsBool(x))
		return T_BOOLEAN;
	return T_NULL;
}

/* Code points of a UTF-8 string (continuation bytes are not counted), up to enough. */
static inline size_t el_sv_utf8_length(const char *s, size_t enough)
{
	size_t n = 0;

	for (; *s && n <= enough; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* ---- the pattern forms the schemas use, matched without a regular expression ---- */

/* the n bytes of s (its length) are all of [0-9a-f] */
static inline int el_sv_all_hex(const char *s, size_t n)
{
	static const unsigned char hex[256] = {
		['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
		['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	};
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	unsigned ok = 1;
	size_t i = 0;

	/*
	 * eight bytes at a time (a lock holds thousands of digests): ASCII
	 * bytes plus a constant carry nothing into the next byte, so the top
	 * bit of each says whether it reached the bound
	 */
	for (; i + 8 <= n; i += 8) {
		uint64_t w, digit, af;

		memcpy(&w, s + i, 8);
		if (w & high)
			return 0;
		digit = (w + ones * (0x80 - '0')) & ~(w + ones * (0x7f - '9'));
		af = (w + ones * (0x80 - 'a')) & ~(w + ones * (0x7f - 'f'));
		if (((digit | af) & high) != high)
			return 0;
	}
	for (; i < n; i++)
		ok &= hex[(unsigned char)s[i]];
	return ok && s[n] == '\0';
}

/* ^\S+$ */
static inline int el_sv_nospace(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s == ' ' || (*s >= '\t' && *s <= '\r'))
			return 0;
	return 1;
}

/* ^[0-9a-f]{n}$ */
static inline int el_sv_hex(const char *s, size_t n)
{
	return strnlen(s, n + 1) == n && el_sv_all_hex(s, n);
}

/* ^sha256:[0-9a-f]{64}$ */
static inline int el_sv_sha256_id(const char *s)
{
	return strncmp(s, "sha256:", 7) == 0 && el_sv_hex(s + 7, 64);
}

/* ^[0-9]+$ */
static inline int el_sv_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* min to max numbers joined by dots: ^[0-9]+(\.[0-9]+){1,2}$ and its kin */
static inline int el_sv_dotted(const char *s, int min, int max)
{
	int parts = 0;

	for (;;) {
		const char *start = s;

		while (*s >= '0' && *s <= '9')
			s++;
		if (s == start)
			return 0;
		parts++;
		if (*s != '.')
			break;
		s++;
	}
	return !*s && parts >= min && parts <= max;
}

/* ^[0-9a-f]{40}([0-9a-f]{24})?$ */
static inline int el_sv_commit(const char *s)
{
	size_t len = strnlen(s, 65);

	return (len == 40 || len == 64) && el_sv_all_hex(s, len);
}

#endif
