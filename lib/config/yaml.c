/*
 * Reading a YAML config base as PyYAML's SafeLoader does (scanner.py,
 * resolver.py and constructor.py of PyYAML 6 are the reference): block
 * and flow collections, comments, plain and quoted scalars. Each node of
 * a collection is read with the nesting counted, so the recursion is no
 * deeper than YAML_DEPTH_MAX levels.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "config/yaml.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/xalloc.h"

#define YAML_DEPTH_MAX 200
/* PyYAML forgets a possible simple key 1024 characters on: a longer key is an error there */
#define YAML_KEY_MAX 1024
#define EXACT_LIMIT (1ULL << 53)

struct yp {
	const char *t, *path;
	size_t len, pos, bol;	/* bol: where the line of pos begins */
	int line, ccol;		/* ccol: column of the next content line, -1 at the end */
	bool started, ended;	/* a content line or "---" was seen; "..." was */
	int err;
	char *msg;
	size_t msg_size;
};

struct scalar {
	char *s;
	size_t n;
	bool plain;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct yp *p, int code, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (p->err)
		return p->err;
	p->err = code;
	k = snprintf(p->msg, p->msg_size, "%s:%d: ", p->path, p->line);
	if (k >= 0 && (size_t)k < p->msg_size) {
		va_start(ap, fmt);
		vsnprintf(p->msg + k, p->msg_size - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return code;
}

static cJSON *made(cJSON *j)
{
	if (!j)
		el_oom();
	return j;
}

/* The byte k on from pos, 0 at the end (NULs are refused before). */
static int ch(const struct yp *p, size_t k)
{
	return p->pos + k < p->len ? (unsigned char)p->t[p->pos + k] : 0;
}

static bool is_break(int c)
{
	return c == 0 || c == '\n' || c == '\r';
}

static bool is_blank(int c)
{
	return is_break(c) || c == ' ' || c == '\t';
}

static bool is_seq_entry(const struct yp *p)
{
	return ch(p, 0) == '-' && is_blank(ch(p, 1));
}

/* PyYAML reads printable Unicode only; \r alone and NEL, LS, PS (line breaks to it) are refused too. */
static int check_text(struct yp *p)
{
	const unsigned char *t = (const unsigned char *)p->t;

	for (size_t i = 0; i < p->len; p->line += t[i] == '\n', i++) {
		uint32_t cp, min;
		size_t k;

		if (t[i] == '\n' || t[i] == '\t' || (t[i] >= 0x20 && t[i] < 0x7f) ||
		    (t[i] == '\r' && i + 1 < p->len && t[i + 1] == '\n'))
			continue;
		if (t[i] < 0x80)
			return fail(p, ENVLOCK_EPARSE, "a control character (0x%02x) is not read", t[i]);
		k = t[i] >= 0xf0 ? 3 : t[i] >= 0xe0 ? 2 : t[i] >= 0xc0 ? 1 : 0;
		min = k == 3 ? 0x10000 : k == 2 ? 0x800 : 0x80;
		cp = t[i] & (0x3f >> k);
		if (k == 0 || t[i] > 0xf4 || p->len - i <= k)
			return fail(p, ENVLOCK_EPARSE, "the text is not UTF-8");
		for (size_t j = 1; j <= k; j++) {
			if ((t[i + j] & 0xc0) != 0x80)
				return fail(p, ENVLOCK_EPARSE, "the text is not UTF-8");
			cp = cp << 6 | (t[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
			return fail(p, ENVLOCK_EPARSE, "the text is not UTF-8");
		if (cp < 0xa0 || cp == 0x2028 || cp == 0x2029 || cp == 0xfffe || cp == 0xffff)
			return fail(p, ENVLOCK_EPARSE, "the character U+%04X is not read", (unsigned)cp);
		i += k;
	}
	p->line = 1;
	return 0;
}

/* Past spaces on this line; a tab there is refused, as PyYAML's scanner does. */
static int skip_sp(struct yp *p)
{
	while (ch(p, 0) == ' ')
		p->pos++;
	if (ch(p, 0) == '\t')
		return fail(p, ENVLOCK_EPARSE, "a tab outside a quoted string is not read");
	return 0;
}

/* Whether the rest of the line is a comment or nothing (a comment is skipped). */
static bool line_done(struct yp *p)
{
	if (skip_sp(p))
		return false;
	if (ch(p, 0) == '#')
		while (!is_break(ch(p, 0)))
			p->pos++;
	return is_break(ch(p, 0));
}

/* To the next content, over comments and line ends: its column, or -1 at the end (or on an error). */
static int next_content(struct yp *p)
{
	for (;;) {
		if (!line_done(p))
			break;
		if (p->pos >= p->len)
			return -1;
		p->pos += ch(p, 0) == '\r' ? 2 : 1;
		p->bol = p->pos;
		p->line++;
		if ((ch(p, 0) == '-' || ch(p, 0) == '.') && ch(p, 1) == ch(p, 0) && ch(p, 2) == ch(p, 0) && is_blank(ch(p, 3))) {
			if (ch(p, 0) == '-' && !p->started) {
				p->started = true;
			} else if (ch(p, 0) == '.' && !p->ended) {
				p->ended = true;
			} else {
				fail(p, ENVLOCK_EPARSE, "a second document is not read");
				return -1;
			}
			p->pos += 3;
			if (!line_done(p)) {
				fail(p, ENVLOCK_EPARSE, "a value on the line of '%.3s' is not read", p->t + p->bol);
				return -1;
			}
		}
	}
	if (p->err)
		return -1;
	if (p->ended) {
		fail(p, ENVLOCK_EPARSE, "text after the document's end '...' is not read");
		return -1;
	}
	p->started = true;
	return (int)(p->pos - p->bol);
}

static void put_utf8(char *o, size_t *n, uint32_t cp)
{
	if (cp < 0x80) {
		o[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		o[(*n)++] = (char)(0xc0 | cp >> 6);
		o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		o[(*n)++] = (char)(0xe0 | cp >> 12);
		o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		o[(*n)++] = (char)(0xf0 | cp >> 18);
		o[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3f));
		o[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

/* One escape of a double-quoted string (PyYAML's ESCAPE_REPLACEMENTS and ESCAPE_CODES) at pos, past the backslash. */
static int unescape(struct yp *p, char *o, size_t *n)
{
	static const char simple[] = "abtnvfre \t\"\\/", value[] = "\a\b\t\n\v\f\r\x1b \t\"\\/";
	int c = ch(p, 0), digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
	const char *s = c ? strchr(simple, c) : NULL;
	uint32_t cp = 0;

	p->pos++;
	if (s) {
		o[(*n)++] = value[s - simple];
		return 0;
	}
	if (c == 'N' || c == '_' || c == 'L' || c == 'P') {
		put_utf8(o, n, c == 'N' ? 0x85 : c == '_' ? 0xa0 : c == 'L' ? 0x2028 : 0x2029);
		return 0;
	}
	if (!digits)
		return fail(p, ENVLOCK_EPARSE, c == '0' ? "a NUL character (\\0) is not read" :
				   is_break(c) ? "a quoted string not closed on its line is not read" : "an unknown escape in a quoted string");
	for (int i = 0; i < digits; i++, p->pos++) {
		int d = ch(p, 0);

		if (!((d >= '0' && d <= '9') || ((d | 0x20) >= 'a' && (d | 0x20) <= 'f')))
			return fail(p, ENVLOCK_EPARSE, "\\%c wants %d hexadecimal digits", c, digits);
		cp = cp << 4 | (uint32_t)(d <= '9' ? d - '0' : (d | 0x20) - 'a' + 10);
	}
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		return fail(p, ENVLOCK_EPARSE, "the escape for U+%04X is not read", (unsigned)cp);
	put_utf8(o, n, cp);
	return 0;
}

static int read_quoted(struct yp *p, struct scalar *s)
{
	int q = ch(p, 0);
	size_t start = ++p->pos, cap;

	for (;;) {
		int c = ch(p, 0);

		if (p->pos >= p->len || is_break(c))
			return fail(p, ENVLOCK_EPARSE, "a quoted string not closed on its line is not read");
		if (c == q && !(q == '\'' && ch(p, 1) == '\''))
			break;
		p->pos += (c == '\\' && q == '"') || (c == '\'' && q == '\'') ? 2 : 1;
	}
	/* \L and \P: 2 bytes for 3 */
	cap = (p->pos - start) * 2 + 1;
	s->s = el_xmalloc(cap);
	s->n = 0;
	for (p->pos = start;;) {
		int c = ch(p, 0);

		if (c == q && !(q == '\'' && ch(p, 1) == '\'')) {
			p->pos++;
			break;
		}
		if (q == '\'' && c == '\'') {
			p->pos++;
		} else if (c == '\\' && q == '"') {
			p->pos++;
			if (unescape(p, s->s, &s->n)) {
				free(s->s);
				s->s = NULL;
				return p->err;
			}
			continue;
		}
		s->s[s->n++] = (char)c;
		p->pos++;
	}
	s->s[s->n] = '\0';
	return 0;
}

/* The scalar at pos, quoted or plain (flow: inside [ ] or { }), as scanner.py's scan_plain reads it. */
static int read_scalar(struct yp *p, bool flow, struct scalar *s)
{
	int c = ch(p, 0), next = ch(p, 1);
	size_t start = p->pos, end = p->pos;

	s->s = NULL;
	s->plain = false;
	if (c == '\'' || c == '"')
		return read_quoted(p, s);
	if (c && strchr("&*!|>%@`", c))
		return fail(p, ENVLOCK_EPARSE, "%s ('%c') are not read", c == '&' ? "anchors" : c == '*' ? "aliases" :
			    c == '!' ? "tags" : c == '|' || c == '>' ? "block scalars" : c == '%' ? "directives" :
			    "reserved characters", c);
	if (c == '?' && (flow || is_blank(next)))
		return fail(p, ENVLOCK_EPARSE, "complex keys ('? ') are not read");
	if ((c == '-' && is_blank(next)) || (c && strchr(",[]{}", c)) || (c == ':' && (flow || is_blank(next))))
		return fail(p, ENVLOCK_EPARSE, "'%c' is not read here", c);
	for (;;) {
		size_t n = 0, sp = 0;

		for (;; n++) {
			c = ch(p, n);
			next = ch(p, n + 1);
			if (is_blank(c) || (c == ':' && (is_blank(next) || (flow && strchr(",[]{}", next)))) ||
			    (flow && strchr(",?[]{}", c)))
				break;
		}
		if (n == 0)
			break;
		p->pos += n;
		end = p->pos;
		while (ch(p, sp) == ' ')
			sp++;
		if (sp == 0 || ch(p, sp) == '#' || is_blank(ch(p, sp)))
			break;
		p->pos += sp;
	}
	s->s = el_xstrndup(p->t + start, end - start);
	s->n = end - start;
	s->plain = true;
	return 0;
}

/* The end of [i, n) of s that is of set, from i on. */
static size_t run(const char *s, size_t i, size_t n, const char *set)
{
	while (i < n && strchr(set, s[i]))
		i++;
	return i;
}

/* [eE][-+][0-9]+ at i if there (its end), else i. */
static size_t exponent(const char *s, size_t i, size_t n)
{
	if (n - i >= 3 && (s[i] | 0x20) == 'e' && (s[i + 1] == '-' || s[i + 1] == '+') && s[i + 2] >= '0' && s[i + 2] <= '9')
		return run(s, i + 2, n, "0123456789");
	return i;
}

/* (:[0-5]?[0-9])+ at i: its end, or i when none is there. */
static size_t base60(const char *s, size_t i, size_t n)
{
	while (i + 1 < n && s[i] == ':' && s[i + 1] >= '0' && s[i + 1] <= '9')
		i += i + 2 < n && s[i + 1] <= '5' && s[i + 2] >= '0' && s[i + 2] <= '9' ? 3 : 2;
	return i;
}

static bool digits(const char *s, size_t *i, size_t n, size_t lo, size_t hi)
{
	size_t k = 0;

	while (*i + k < n && k < hi && s[*i + k] >= '0' && s[*i + k] <= '9')
		k++;
	if (k < lo)
		return false;
	*i += k;
	return true;
}

static bool lit(const char *s, size_t *i, size_t n, char c)
{
	return *i < n && s[*i] == c && ++*i;
}

/* resolver.py's timestamp: 2001-12-14, 2001-12-14 21:59:43.10 -5 and the like */
static bool is_timestamp(const char *s, size_t n)
{
	size_t i = 0, j;

	if (!digits(s, &i, n, 4, 4) || !lit(s, &i, n, '-') || !digits(s, &i, n, 1, 2) || !lit(s, &i, n, '-') ||
	    !digits(s, &i, n, 1, 2))
		return false;
	if (i == n)
		return i == 10;
	j = i;
	if (!lit(s, &i, n, 'T') && !lit(s, &i, n, 't') && (i = run(s, i, n, " \t")) == j)
		return false;
	if (!digits(s, &i, n, 1, 2) || !lit(s, &i, n, ':') || !digits(s, &i, n, 2, 2) || !lit(s, &i, n, ':') ||
	    !digits(s, &i, n, 2, 2))
		return false;
	if (lit(s, &i, n, '.'))
		digits(s, &i, n, 0, n);
	i = run(s, i, n, " \t");
	if (i < n && !lit(s, &i, n, 'Z') && (lit(s, &i, n, '-') || lit(s, &i, n, '+')) && digits(s, &i, n, 1, 2) &&
	    lit(s, &i, n, ':'))
		digits(s, &i, n, 2, 2);
	return i == n;
}

/* [-+]? then the rest of resolver.py's float pattern (the 1:30.5 form aside): whether s is one. */
static bool is_float(const char *s, size_t n, bool *sexagesimal)
{
	size_t i = n && (s[0] == '-' || s[0] == '+'), j;

	*sexagesimal = false;
	if (n - i == 4 && s[i] == '.' && (!strncmp(s + i + 1, "inf", 3) || !strncmp(s + i + 1, "Inf", 3) ||
					  !strncmp(s + i + 1, "INF", 3)))
		return true;
	if (n == 4 && (!strncmp(s, ".nan", 4) || !strncmp(s, ".NaN", 4) || !strncmp(s, ".NAN", 4)))
		return true;
	if (i == 0 && n >= 2 && s[0] == '.' && s[1] >= '0' && s[1] <= '9')
		return exponent(s, run(s, 1, n, "0123456789_"), n) == n;
	if (i == n || s[i] < '0' || s[i] > '9')
		return false;
	j = run(s, i, n, "0123456789_");
	if (j < n && s[j] == ':') {
		j = base60(s, j, n);
		*sexagesimal = j < n && s[j] == '.';
		return *sexagesimal && run(s, j + 1, n, "0123456789_") == n;
	}
	return j < n && s[j] == '.' && exponent(s, run(s, j + 1, n, "0123456789_"), n) == n;
}

/* resolver.py's int pattern: whether s is one. */
static bool is_int(const char *s, size_t n)
{
	size_t i = n && (s[0] == '-' || s[0] == '+');

	if (n - i >= 3 && s[i] == '0' && (s[i + 1] == 'b' || s[i + 1] == 'x'))
		return run(s, i + 2, n, s[i + 1] == 'b' ? "01_" : "0123456789abcdefABCDEF_") == n;
	if (n - i >= 2 && s[i] == '0')
		return run(s, i + 1, n, "01234567_") == n;
	if (n - i == 1 && s[i] == '0')
		return true;
	if (i == n || s[i] < '1' || s[i] > '9')
		return false;
	i = run(s, i, n, "0123456789_");
	return i == n || base60(s, i, n) == n;
}

/* An integer as constructor.py's construct_yaml_int makes it, within 64 bits. */
static cJSON *make_int(struct yp *p, const char *text, size_t n)
{
	char *s = el_xmalloc(n + 1), *d = s;
	bool neg = text[0] == '-';
	unsigned long long mag = 0, part = 0;
	unsigned base = 10;
	cJSON *out = NULL;
	char digits_of[24];

	for (size_t i = text[0] == '-' || text[0] == '+'; i < n; i++)
		if (text[i] != '_')
			*d++ = text[i];
	*d = '\0';
	d = s;
	if (d[0] == '0' && (d[1] == 'b' || d[1] == 'x')) {
		base = d[1] == 'b' ? 2 : 16;
		d += 2;
		if (!*d)
			goto bad;
	} else if (d[0] == '0') {
		base = 8;
	}
	for (; *d; d++) {
		unsigned k = *d >= 'a' ? (unsigned)(*d - 'a' + 10) : *d >= 'A' ? (unsigned)(*d - 'A' + 10) : (unsigned)(*d - '0');

		if (*d == ':') {
			if (mag > (~0ULL - part) / 60)
				goto big;
			mag = mag * 60 + part;
			part = 0;
			continue;
		}
		if (part > (~0ULL - k) / base)
			goto big;
		part = part * base + k;
	}
	if (mag && mag > (~0ULL - part) / 60)
		goto big;
	mag = mag * 60 + part;
	if (mag == 0)
		neg = false;
	if (mag < EXACT_LIMIT)
		out = made(cJSON_CreateNumber(neg ? -(double)mag : (double)mag));
	else if (neg && mag <= 1ULL << 63)
		out = el_jnew_int(mag == 1ULL << 63 ? LLONG_MIN : -(long long)mag);
	else if (!neg && mag < 1ULL << 63)
		out = el_jnew_int((long long)mag);
	else if (!neg) {
		snprintf(digits_of, sizeof(digits_of), "%llu", mag);
		out = made(cJSON_CreateRaw(digits_of));
		out->valuedouble = (double)mag;
	} else
		goto big;
	free(s);
	return out;
big:
	fail(p, ENVLOCK_EPARSE, "the integer '%.40s' is past 64 bits", text);
	free(s);
	return NULL;
bad:
	fail(p, ENVLOCK_EPARSE, "'%.40s' is an integer PyYAML cannot read", text);
	free(s);
	return NULL;
}

static cJSON *make_float(struct yp *p, const char *text, size_t n)
{
	char *s = el_xmalloc(n + 1), *d = s;
	double v;

	for (size_t i = 0; i < n; i++)
		if (text[i] != '_')
			*d++ = text[i];
	*d = '\0';
	v = strtod(s, &d);
	if (*d || !isfinite(v)) {
		fail(p, ENVLOCK_EPARSE, "the float '%.40s' has no JSON value", text);
		free(s);
		return NULL;
	}
	free(s);
	return made(cJSON_CreateNumber(v));
}

/* A plain scalar's value as PyYAML's resolver and SafeConstructor make it; *fl: it is a float. */
static cJSON *resolve(struct yp *p, const struct scalar *s, bool *fl)
{
	static const char *const bools[] = { "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
					     "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF" };
	const char *t = s->s;
	bool sexagesimal;

	*fl = false;
	if (!s->plain)
		return made(cJSON_CreateString(t));
	if (!strcmp(t, "") || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "NULL"))
		return made(cJSON_CreateNull());
	for (size_t i = 0; i < sizeof(bools) / sizeof(*bools); i++)
		if (!strcmp(t, bools[i]))
			return made(cJSON_CreateBool(i < 9));
	if (strchr("-+0123456789.", t[0]) && is_float(t, s->n, &sexagesimal)) {
		*fl = true;
		if (sexagesimal || strchr(t, 'n') || strchr(t, 'N')) {
			fail(p, ENVLOCK_EPARSE, "the float '%.40s' is not read (no JSON for it, or base 60)", t);
			return NULL;
		}
		return make_float(p, t, s->n);
	}
	if (strchr("-+0123456789", t[0]) && is_int(t, s->n))
		return make_int(p, t, s->n);
	if (is_timestamp(t, s->n) || !strcmp(t, "<<") || !strcmp(t, "=")) {
		fail(p, ENVLOCK_EPARSE, "'%.40s' is not read (a date, a merge key or a value key)", t);
		return NULL;
	}
	return made(cJSON_CreateString(t));
}

/*
 * A key as Python's str() writes the value PyYAML makes of it; *seen
 * gathers KEY_BOOL and KEY_01: True and 1 are one key in a dict, not read.
 */
#define KEY_BOOL 1
#define KEY_01 2
static char *key_text(struct yp *p, struct scalar *k, int *seen)
{
	bool fl;
	cJSON *v = resolve(p, k, &fl);
	char *out = NULL;

	if (!v)
		return NULL;
	if (fl)
		fail(p, ENVLOCK_EPARSE, "a float as a key ('%.40s') is not read", k->s);
	else if (cJSON_IsString(v) || cJSON_IsRaw(v))
		out = el_xstrdup(v->valuestring);
	else if (cJSON_IsNumber(v))
		out = el_xasprintf("%.0f", v->valuedouble);
	else
		out = el_xstrdup(cJSON_IsNull(v) ? "None" : cJSON_IsTrue(v) ? "True" : "False");
	*seen |= cJSON_IsBool(v) ? KEY_BOOL : cJSON_IsNumber(v) && (v->valuedouble == 0 || v->valuedouble == 1) ? KEY_01 : 0;
	if (*seen == (KEY_BOOL | KEY_01)) {
		fail(p, ENVLOCK_EPARSE, "a mapping with keys true and 1 (or false and 0), one key in Python, is not read");
		free(out);
		out = NULL;
	}
	cJSON_Delete(v);
	return out;
}

struct kslot {
	cJSON *item;
	size_t i;
};

static int kslot_cmp(const void *a, const void *b)
{
	const struct kslot *x = a, *y = b;
	int r = strcmp(x->item->string, y->item->string);

	return r ? r : (x->i > y->i) - (x->i < y->i);
}

/* As a dict is filled: a key given again keeps its first place and takes the last value. */
static void dedup_keys(cJSON *map)
{
	size_t n = 0, i = 0;
	struct kslot *slots;

	if (!cJSON_IsObject(map))
		return;
	for (const cJSON *it = map->child; it; it = it->next)
		n++;
	if (n < 2)
		return;
	slots = el_xmalloc(n * sizeof(*slots));
	for (cJSON *it = map->child; it; it = it->next, i++)
		slots[i] = (struct kslot){ it, i };
	qsort(slots, n, sizeof(*slots), kslot_cmp);
	for (i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && !strcmp(slots[j].item->string, slots[i].item->string))
			j++;
		if (j - i > 1) {
			for (size_t k = i + 1; k < j - 1; k++)
				cJSON_Delete(cJSON_DetachItemViaPointer(map, slots[k].item));
			cJSON_ReplaceItemViaPointer(map, slots[i].item, cJSON_DetachItemViaPointer(map, slots[j - 1].item));
		}
		i = j;
	}
	free(slots);
}

static bool enter(struct yp *p, int depth)
{
	if (depth > YAML_DEPTH_MAX)
		fail(p, ENVLOCK_ELIMIT, "nesting deeper than %d", YAML_DEPTH_MAX);
	return !p->err;
}

static cJSON *flow_node(struct yp *p, int depth);

/* To the next token inside [ ] or { } (line ends and comments are space there), the one opened at line. */
static bool flow_space(struct yp *p, int open, int line)
{
	if (next_content(p) < 0 && !p->err) {
		p->line = line;
		fail(p, ENVLOCK_EPARSE, "a '%c' is not closed", open);
	}
	return !p->err;
}

static cJSON *flow_coll(struct yp *p, int depth)
{
	int open = ch(p, 0), close = open == '{' ? '}' : ']', open_line = p->line;
	cJSON *out, *v = NULL;
	struct scalar k = { 0 };
	int seen = 0;

	if (!enter(p, depth))
		return NULL;
	out = made(open == '{' ? cJSON_CreateObject() : cJSON_CreateArray());
	for (p->pos++;;) {
		if (!flow_space(p, open, open_line))
			goto err;
		if (ch(p, 0) == close)
			break;
		if (open == '{') {
			size_t start = p->pos;
			int line = p->line;
			char *key;

			if (ch(p, 0) == '[' || ch(p, 0) == '{') {
				fail(p, ENVLOCK_EPARSE, "a [ ] or { } as a key is not read");
				goto err;
			}
			if (read_scalar(p, true, &k) || !flow_space(p, open, open_line))
				goto err;
			if (ch(p, 0) == ':' && (p->line != line || p->pos - start > YAML_KEY_MAX)) {
				fail(p, ENVLOCK_EPARSE, "a key across lines or longer than %d characters is not read", YAML_KEY_MAX);
				goto err;
			}
			if (ch(p, 0) == ':') {
				p->pos++;
				if (!flow_space(p, open, open_line))
					goto err;
				v = ch(p, 0) == ',' || ch(p, 0) == close ? made(cJSON_CreateNull()) : flow_node(p, depth + 1);
			} else {
				v = made(cJSON_CreateNull());
			}
			key = v ? key_text(p, &k, &seen) : NULL;
			free(k.s);
			k.s = NULL;
			if (!key)
				goto err;
			cJSON_AddItemToObject(out, key, v);
			free(key);
		} else {
			if (!(v = flow_node(p, depth + 1)))
				goto err;
			cJSON_AddItemToArray(out, v);
		}
		v = NULL;
		if (!flow_space(p, open, open_line))
			goto err;
		if (ch(p, 0) == ',')
			p->pos++;
		else if (ch(p, 0) != close) {
			fail(p, ENVLOCK_EPARSE, ch(p, 0) == ':' ? "a key: value inside [ ] is not read" :
				"expected ',' or '%c' in a flow collection", close);
			goto err;
		}
	}
	p->pos++;
	dedup_keys(out);
	return out;
err:
	free(k.s);
	cJSON_Delete(v);
	cJSON_Delete(out);
	return NULL;
}

static cJSON *flow_node(struct yp *p, int depth)
{
	struct scalar s;
	cJSON *v;
	bool fl;

	if (ch(p, 0) == '[' || ch(p, 0) == '{')
		return flow_coll(p, depth);
	if (read_scalar(p, true, &s))
		return NULL;
	v = resolve(p, &s, &fl);
	free(s.s);
	return v;
}

static cJSON *block_node(struct yp *p, int parent, int depth, bool compact);

/* A key read at pos, with its ': ' passed. */
static int read_key(struct yp *p, struct scalar *k)
{
	size_t start = p->pos;

	if (ch(p, 0) == '[' || ch(p, 0) == '{')
		return fail(p, ENVLOCK_EPARSE, "a [ ] or { } as a key is not read");
	if (read_scalar(p, false, k) || skip_sp(p))
		return p->err;
	if (ch(p, 0) != ':' || !is_blank(ch(p, 1)))
		return fail(p, ENVLOCK_EPARSE, is_seq_entry(p) ? "a '- ' entry among a mapping's keys" : "expected 'key: value'");
	if (p->pos - start > YAML_KEY_MAX)
		return fail(p, ENVLOCK_EPARSE, "a key longer than %d characters is not read", YAML_KEY_MAX);
	p->pos++;
	return 0;
}

static cJSON *block_seq(struct yp *p, int col, int depth)
{
	cJSON *out;

	if (!enter(p, depth))
		return NULL;
	out = made(cJSON_CreateArray());
	do {
		cJSON *v;

		p->pos++;
		if (!line_done(p))
			v = p->err ? NULL : block_node(p, col, depth + 1, true);
		else if ((p->ccol = next_content(p)) > col)
			v = block_node(p, col, depth + 1, true);
		else
			v = p->err ? NULL : made(cJSON_CreateNull());
		if (!v) {
			cJSON_Delete(out);
			return NULL;
		}
		cJSON_AddItemToArray(out, v);
	} while (p->ccol == col && is_seq_entry(p));
	if (p->ccol > col) {
		fail(p, ENVLOCK_EPARSE, "a line indented more than its '- ' entries");
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

/* The block mapping at column col whose first key k is read. */
static cJSON *block_map(struct yp *p, int col, struct scalar *k, int depth)
{
	cJSON *out = made(cJSON_CreateObject()), *v = NULL;
	char *key = NULL;
	int seen = 0;

	if (!enter(p, depth))
		goto err;
	for (;;) {
		key = key_text(p, k, &seen);
		free(k->s);
		k->s = NULL;
		if (!key)
			goto err;
		if (!line_done(p))
			v = p->err ? NULL : block_node(p, col, depth + 1, false);
		else if ((p->ccol = next_content(p)) > col)
			v = block_node(p, col, depth + 1, true);
		else if (p->ccol == col && is_seq_entry(p))
			v = block_seq(p, col, depth + 1);
		else
			v = p->err ? NULL : made(cJSON_CreateNull());
		if (!v)
			goto err;
		cJSON_AddItemToObject(out, key, v);
		free(key);
		key = NULL;
		if (p->ccol != col)
			break;
		if (read_key(p, k))
			goto err;
	}
	if (p->ccol > col) {
		fail(p, ENVLOCK_EPARSE, "a line indented more than its mapping's keys");
		goto err;
	}
	dedup_keys(out);
	return out;
err:
	free(k->s);
	k->s = NULL;
	free(key);
	cJSON_Delete(out);
	return NULL;
}

/*
 * The node whose content starts at pos, on a line of its own or after
 * "- " (compact: a mapping or sequence may start there) or "key: ";
 * p->ccol is then the column of the next content line, which may be no
 * deeper than parent.
 */
static cJSON *block_node(struct yp *p, int parent, int depth, bool compact)
{
	int col = (int)(p->pos - p->bol);
	struct scalar s = { 0 };
	cJSON *v = NULL;
	bool fl;

	if (is_seq_entry(p)) {
		if (compact)
			return block_seq(p, col, depth);
		fail(p, ENVLOCK_EPARSE, "a '- ' entry on the line of its key is not read");
		return NULL;
	}
	if (ch(p, 0) == '[' || ch(p, 0) == '{') {
		v = flow_coll(p, depth);
	} else {
		size_t start = p->pos;

		if (read_scalar(p, false, &s) || skip_sp(p))
			goto err;
		if (ch(p, 0) == ':' && is_blank(ch(p, 1))) {
			if (!compact) {
				fail(p, ENVLOCK_EPARSE, "a second 'key:' on one line is not read");
				goto err;
			}
			free(s.s);
			s.s = NULL;
			p->pos = start;
			if (read_key(p, &s))
				goto err;
			return block_map(p, col, &s, depth);
		}
		v = resolve(p, &s, &fl);
		free(s.s);
		s.s = NULL;
	}
	if (!v)
		return NULL;
	if (!line_done(p)) {
		fail(p, ENVLOCK_EPARSE, "unexpected '%c' after a value", ch(p, 0));
		goto err;
	}
	if ((p->ccol = next_content(p)) > parent) {
		fail(p, ENVLOCK_EPARSE, "a value continued on a more-indented line is not read");
		goto err;
	}
	if (!p->err)
		return v;
err:
	free(s.s);
	cJSON_Delete(v);
	return NULL;
}

int el_cfg_yaml_parse(const char *path, const char *text, size_t len, cJSON **out, char *msg, size_t msg_size)
{
	struct yp p = { .t = text, .path = path, .len = len, .line = 1, .msg = msg, .msg_size = msg_size };
	cJSON *top = NULL;
	int top_line;

	*out = NULL;
	if (msg_size)
		msg[0] = '\0';
	if (check_text(&p))
		return p.err;
	/* a byte order mark at the start is skipped, as PyYAML's scanner does */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		p.pos = p.bol = 3;
	/* the first line is looked at for "---" as next_content looks at the others */
	if (ch(&p, 0) == '-' && ch(&p, 1) == '-' && ch(&p, 2) == '-' && is_blank(ch(&p, 3))) {
		p.started = true;
		p.pos += 3;
		if (!line_done(&p))
			fail(&p, ENVLOCK_EPARSE, "a value on the line of '---' is not read");
	}
	p.ccol = p.err ? -1 : next_content(&p);
	top_line = p.line;
	if (p.ccol >= 0)
		top = block_node(&p, -1, 1, true);
	if (!p.err && !cJSON_IsObject(top)) {
		p.line = top_line;
		fail(&p, ENVLOCK_EPARSE, "the top of the document is not a mapping");
	}
	if (!p.err && p.ccol >= 0)
		fail(&p, ENVLOCK_EPARSE, "a line indented less than the top mapping");
	if (p.err) {
		cJSON_Delete(top);
		return p.err;
	}
	*out = top;
	return 0;
}
