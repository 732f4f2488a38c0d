/*
 * The pieces of lockfile validation that the validator generated from
 * schemas/envlock.lock.schema.json at build time (tools/schema-gen.py,
 * $(BUILD)/gen/lock_schema.c) calls: the error line with the path to the
 * field, the annotations unevaluatedProperties reads, duplicates, and
 * patterns C does not match directly. The schema interpreter the
 * generator transcribes (tests/schema/schema.c) shares them, so both
 * give the same verdict in the same words (schema_rt.h).
 */
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_rt.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* ECMA regular expressions as envlock's schemas write them (\S, \s, \d, a leading (?i)), as POSIX ERE. */
int el_sv_regcomp(regex_t *re, const char *pattern)
{
	char buf[512];
	size_t o = 0;
	int flags = REG_EXTENDED | REG_NOSUB;
	const char *p = pattern;

	if (strncmp(p, "(?i)", 4) == 0) {
		flags |= REG_ICASE;
		p += 4;
	}
	for (; *p && o + 16 < sizeof(buf); p++) {
		const char *rep = NULL;

		if (p[0] == '\\' && p[1])
			rep = p[1] == 'S' ? "[^[:space:]]" : p[1] == 's' ? "[[:space:]]" : p[1] == 'd' ? "[0-9]" : NULL;
		if (rep) {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s", rep);
			p++;
		} else {
			buf[o++] = *p;
		}
	}
	buf[o] = '\0';
	return *p == '\0' && regcomp(re, buf, flags) == 0 ? 0 : -1;
}

void el_sv_eval_grow(el_sv_evaluated *e)
{
	const char **grown = el_xcalloc(e->cap * 2, sizeof(*grown));

	memcpy(grown, e->names, e->n * sizeof(*grown));
	el_sv_eval_release(e);
	e->names = grown;
	e->cap *= 2;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const char *const *)a, y = (uintptr_t) * (const char *const *)b;

	return x < y ? -1 : x > y;
}

/*
 * names are the instance's own member strings, so a pointer identifies
 * one; a long list (a hostile object of many members) is sorted once and
 * searched, so the check stays n log n.
 */
int el_sv_eval_has(el_sv_evaluated *e, const char *name, int *sorted)
{
	if (e->n > 32) {
		if (!*sorted) {
			qsort(e->names, e->n, sizeof(*e->names), cmp_ptr);
			*sorted = 1;
		}
		return bsearch(&name, e->names, e->n, sizeof(*e->names), cmp_ptr) != NULL;
	}
	for (size_t i = 0; i < e->n; i++)
		if (e->names[i] == name)
			return 1;
	return 0;
}

/*
 * s as a terminal may show it (control, bidi and non-UTF-8 bytes escaped:
 * the message names values from an untrusted lock), cut to fit out.
 */
const char *el_sv_esc(char *out, size_t n, const char *s)
{
	el_buf b = EL_BUF_INIT(4096);

	if (el_term_text(&b, s) != 0 && !b.data)
		snprintf(out, n, "?");
	else
		snprintf(out, n, "%s", b.data ? b.data : "");
	el_buf_release(&b);
	return out;
}

int el_sv_fail(el_sv *v, const char *fmt, ...)
{
	va_list ap;
	size_t o = 0, max = sizeof(v->path) / sizeof(v->path[0]);
	char shown[256];

	if (v->quiet || v->reported)
		return -1;
	v->reported = 1;
	v->why[0] = '\0';
	for (size_t i = 0; i < v->depth && i < max && o + 1 < v->why_size; i++) {
		if (v->path[i].name)
			o += (size_t)snprintf(v->why + o, v->why_size - o, "%s%s", i ? "." : "",
					      el_sv_esc(shown, sizeof(shown), v->path[i].name));
		else
			o += (size_t)snprintf(v->why + o, v->why_size - o, "[%ld]", v->path[i].index);
	}
	if (!v->depth)
		o = (size_t)snprintf(v->why, v->why_size, "the document");
	if (o + 2 >= v->why_size)
		return -1;
	o += (size_t)snprintf(v->why + o, v->why_size - o, ": ");
	va_start(ap, fmt);
	vsnprintf(v->why + o, v->why_size - o, fmt, ap);
	va_end(ap);
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * An item of the array x appears twice. Arrays of strings (all the schemas
 * ask this of) are sorted, so a hostile lock's 100,000 names cost
 * n log n, not n squared; anything else is compared pair by pair.
 */
int el_sv_has_duplicate(const cJSON *x)
{
	size_t n = 0, strings = 0;
	const char **all;
	int dup = 0;

	for (const cJSON *e = x->child; e; e = e->next, n++)
		strings += J_STRING(e);
	if (strings != n) {
		for (const cJSON *a = x->child; a; a = a->next)
			for (const cJSON *b = a->next; b; b = b->next)
				if (cJSON_Compare(a, b, 1))
					return 1;
		return 0;
	}
	if (n < 2)
		return 0;
	all = el_xcalloc(n, sizeof(*all));
	n = 0;
	for (const cJSON *e = x->child; e; e = e->next)
		all[n++] = e->valuestring;
	qsort(all, n, sizeof(*all), cmp_str);
	for (size_t i = 1; i < n && !dup; i++)
		dup = strcmp(all[i - 1], all[i]) == 0;
	free(all);
	return dup;
}
