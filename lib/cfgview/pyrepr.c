/* Python's own text for the values of a config: repr of floats and strings, identifiers, key paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgview.h"
#include "lock/model.h"
#include "util/text.h"
#include "util/xalloc.h"

size_t el_py_float(char buf[EL_PY_FLOAT_SIZE], double d)
{
	char sci[EL_PY_FLOAT_SIZE], digits[24];
	const char *p;
	int prec, exp, nd = 0, point, n = 0;
	bool neg;

	if (isnan(d))
		return (size_t)snprintf(buf, EL_PY_FLOAT_SIZE, "nan");
	if (isinf(d))
		return (size_t)snprintf(buf, EL_PY_FLOAT_SIZE, "%s", d < 0 ? "-inf" : "inf");
	/* the fewest significant digits that read back as d, as repr does since Python 3.1 */
	for (prec = 0; prec < 17; prec++) {
		snprintf(sci, sizeof(sci), "%.*e", prec, d);
		if (strtod(sci, NULL) == d)
			break;
	}
	neg = sci[0] == '-';
	for (p = sci + neg; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[nd++] = *p;
	exp = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (neg)
		buf[n++] = '-';
	/* Python's float_repr_style 'short': an exponent below 1e-04 and from 1e16 on */
	if (exp < -4 || exp >= 16) {
		buf[n++] = digits[0];
		if (nd > 1) {
			buf[n++] = '.';
			memcpy(buf + n, digits + 1, (size_t)nd - 1);
			n += nd - 1;
		}
		n += snprintf(buf + n, EL_PY_FLOAT_SIZE - (size_t)n, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
		return (size_t)n;
	}
	point = exp + 1; /* digits before the point */
	if (point <= 0) {
		buf[n++] = '0';
		buf[n++] = '.';
		for (int i = 0; i < -point; i++)
			buf[n++] = '0';
		memcpy(buf + n, digits, (size_t)nd);
		n += nd;
	} else {
		for (int i = 0; i < point; i++)
			buf[n++] = i < nd ? digits[i] : '0';
		buf[n++] = '.';
		if (nd > point) {
			memcpy(buf + n, digits + point, (size_t)(nd - point));
			n += nd - point;
		} else {
			buf[n++] = '0';
		}
	}
	buf[n] = '\0';
	return (size_t)n;
}

/*
 * Whether repr writes code point cp as it is: Python's str.isprintable,
 * for the characters a config may hold (controls, the format characters
 * that reorder or hide text, spaces other than ' ', line and paragraph
 * separators, surrogates, private use and noncharacters are escaped).
 * A character escaped that repr would not escape changes the look only,
 * never the value.
 */
static bool py_printable(long cp)
{
	static const long ranges[][2] = {
		{ 0x0, 0x1f }, { 0x7f, 0xa0 }, { 0xad, 0xad }, { 0x600, 0x605 }, { 0x61c, 0x61c },
		{ 0x6dd, 0x6dd }, { 0x70f, 0x70f }, { 0x180e, 0x180e }, { 0x1680, 0x1680 },
		{ 0x2000, 0x200f }, { 0x2028, 0x202f }, { 0x205f, 0x2064 }, { 0x2066, 0x206f },
		{ 0x3000, 0x3000 }, { 0xd800, 0xf8ff }, { 0xfeff, 0xfeff }, { 0xfff9, 0xfffb },
		{ 0xfffe, 0xffff }, { 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f }, { 0xf0000, 0x10ffff },
	};

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return false;
	return true;
}

/* A surrogate as the evaluator encodes '\udc80' (three bytes, ED A0-BF 80-BF), or -1. */
static long surrogate_at(const unsigned char *p, const unsigned char *end)
{
	if (end - p >= 3 && p[0] == 0xed && p[1] >= 0xa0 && p[1] <= 0xbf && (p[2] & 0xc0) == 0x80)
		return 0xd000L | ((long)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
	return -1;
}

int el_py_str(el_buf *b, const char *s)
{
	const char *p = s, *end = s + strlen(s);
	char quote = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
	int rc = el_buf_putc(b, quote);

	while (rc == 0 && p < end) {
		const char *at = p;
		long cp = el_utf8_next(&p, end);

		if (cp < 0 && (cp = surrogate_at((const unsigned char *)at, (const unsigned char *)end)) >= 0)
			p = at + 3;
		if (cp < 0) /* a byte that is no character at all: shown, never raw */
			rc = el_buf_printf(b, "\\x%02x", (unsigned char)*at);
		else if (cp == '\\' || cp == quote)
			rc = el_buf_printf(b, "\\%c", (char)cp);
		else if (cp == '\n' || cp == '\r' || cp == '\t')
			rc = el_buf_printf(b, "\\%c", cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
		else if (!py_printable(cp))
			rc = el_buf_printf(b, cp < 0x100 ? "\\x%02lx" : cp < 0x10000 ? "\\u%04lx" : "\\U%08lx", cp);
		else
			rc = el_buf_put(b, at, (size_t)(p - at));
	}
	return rc ? rc : el_buf_putc(b, quote);
}

bool el_py_identifier(const char *s)
{
	static const char *const keywords[] = {
		"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
		"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
		"in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
		"with", "yield",
	};

	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strcmp(s, keywords[i]) == 0)
			return false;
	return true;
}

bool el_py_scalar(el_buf *b, const cJSON *v)
{
	char num[EL_PY_FLOAT_SIZE];
	const char *digits;

	if (cJSON_IsNull(v) || cJSON_IsInvalid(v))
		el_buf_adds(b, "None");
	else if (cJSON_IsTrue(v))
		el_buf_adds(b, "True");
	else if (cJSON_IsFalse(v))
		el_buf_adds(b, "False");
	else if (cJSON_IsString(v))
		el_py_str(b, v->valuestring);
	else if (cJSON_IsRaw(v))
		el_buf_adds(b, (digits = el_jraw_int(v)) ? digits : v->valuestring ? v->valuestring : "None");
	else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9007199254740992.0)
		/* an integer; a float with no fraction looks the same in the evaluator's value (see the man page) */
		el_buf_addf(b, "%.0f", v->valuedouble == 0 ? 0.0 : v->valuedouble);
	else if (cJSON_IsNumber(v))
		el_buf_add(b, num, el_py_float(num, v->valuedouble));
	else
		return false;
	return true;
}

bool el_py_keyword_form(const cJSON *dict)
{
	for (const cJSON *c = dict->child; c; c = c->next)
		if (!el_py_identifier(c->string))
			return false;
	return true;
}

int el_py_inline(el_buf *b, const cJSON *v)
{
	bool kw = cJSON_IsObject(v) && el_py_keyword_form(v);
	int rc = 0;

	if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) {
		el_py_scalar(b, v);
		return el_buf_failed(b);
	}
	el_buf_adds(b, cJSON_IsArray(v) ? "[" : kw ? "dict(" : "{");
	for (const cJSON *c = v->child; rc == 0 && c; c = c->next) {
		if (c != v->child)
			el_buf_adds(b, ", ");
		if (cJSON_IsObject(v) && kw) {
			el_buf_addf(b, "%s=", c->string);
		} else if (cJSON_IsObject(v)) {
			el_py_str(b, c->string);
			el_buf_adds(b, ": ");
		}
		rc = el_py_inline(b, c);
	}
	return rc ? rc : el_buf_puts(b, cJSON_IsArray(v) ? "]" : kw ? ")" : "}");
}

int el_cfg_path_key(el_buf *b, const char *key, bool first)
{
	int rc;

	if (el_py_identifier(key))
		return first ? el_buf_puts(b, key) : el_buf_printf(b, ".%s", key);
	rc = el_buf_putc(b, '[');
	if (rc == 0)
		rc = el_py_str(b, key);
	return rc ? rc : el_buf_putc(b, ']');
}

int el_cfg_path_index(el_buf *b, int index)
{
	return el_buf_printf(b, "[%d]", index);
}

int el_cfg_note_path(el_buf *b, const char *key)
{
	const char *p = key;
	int rc = 0;

	if (!*key)
		return 0;
	while (rc == 0) {
		size_t n = strcspn(p, ".");
		char *step = el_xstrndup(p, n);

		rc = el_cfg_path_key(b, step, p == key);
		free(step);
		if (!p[n])
			break;
		p += n + 1;
	}
	return rc;
}

int el_cfg_note_where(el_buf *b, const cJSON *note)
{
	const cJSON *file = cJSON_GetObjectItemCaseSensitive(note, "file");
	const cJSON *line = cJSON_GetObjectItemCaseSensitive(note, "line");
	int rc = el_term_text(b, cJSON_IsString(file) ? file->valuestring : "?");

	if (rc == 0 && cJSON_IsNumber(line))
		rc = el_buf_printf(b, ":%d", line->valueint);
	return rc;
}

bool el_cfg_note_covers(const char *key, const char *const *steps, size_t n)
{
	const char *p = key;
	size_t i = 0;

	if (!*key)
		return false;
	for (;;) {
		size_t len = strcspn(p, ".");

		while (i < n && !steps[i])
			i++;
		if (i == n || strlen(steps[i]) != len || strncmp(steps[i], p, len) != 0)
			return false;
		i++;
		if (!p[len])
			return true;
		p += len + 1;
	}
}
