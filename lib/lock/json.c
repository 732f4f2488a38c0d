/* Building, reading and writing the lock's JSON document. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "model.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

static cJSON *checked(cJSON *item)
{
	if (!item)
		el_oom();
	return item;
}

cJSON *el_jnew_obj(void)
{
	return checked(cJSON_CreateObject());
}

void el_jset(cJSON *parent, const char *key, cJSON *item)
{
	checked(item);
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	if (!cJSON_AddItemToObject(parent, key, item))
		el_oom();
}

cJSON *el_jset_obj(cJSON *parent, const char *key)
{
	cJSON *o = checked(cJSON_CreateObject());

	el_jset(parent, key, o);
	return o;
}

cJSON *el_jset_arr(cJSON *parent, const char *key)
{
	cJSON *a = checked(cJSON_CreateArray());

	el_jset(parent, key, a);
	return a;
}

void el_jset_str(cJSON *parent, const char *key, const char *val)
{
	if (val)
		el_jset(parent, key, cJSON_CreateString(val));
}

void el_jset_strn(cJSON *parent, const char *key, const char *val, size_t n)
{
	char *s = el_xstrndup(val, n);

	el_jset_str(parent, key, s);
	free(s);
}

void el_jset_str_or_null(cJSON *parent, const char *key, const char *val)
{
	if (val)
		el_jset_str(parent, key, val);
	else
		el_jset(parent, key, cJSON_CreateNull());
}

/* 2^53: from here on a double does not hold every integer */
#define EXACT_LIMIT 9007199254740992ULL

bool el_json_int_text(const char *s, size_t n, bool *big)
{
	const char *d = s + (n && *s == '-');
	size_t nd = n - (size_t)(d - s);
	unsigned long long u = 0;

	/* none, a leading zero, -0 (the writer writes 0) or more digits than 2^64 has */
	if (nd == 0 || nd > 20 || (*d == '0' && (nd > 1 || d > s)))
		return false;
	for (size_t i = 0; i < nd; i++) {
		unsigned k = (unsigned)(d[i] - '0');

		if (k > 9 || u > (~0ULL - k) / 10)
			return false;
		u = u * 10 + k;
	}
	if (d > s && u > 1ULL << 63)
		return false;
	if (big)
		*big = u >= EXACT_LIMIT;
	return true;
}

/* item made Raw with the n bytes of digits, its double kept for readers that look at valuedouble */
static void make_raw(cJSON *item, const char *digits, size_t n, double d)
{
	char *s = cJSON_malloc(n + 1);

	if (!s)
		el_oom();
	memcpy(s, digits, n);
	s[n] = '\0';
	item->type = cJSON_Raw | (item->type & cJSON_StringIsConst);
	item->valuestring = s;
	item->valuedouble = d;
	item->valueint = d >= 2147483647.0 ? 2147483647 : d <= -2147483648.0 ? -2147483647 - 1 : (int)d;
}

const char *el_jraw_int(const cJSON *v)
{
	return cJSON_IsRaw(v) && v->valuestring && el_json_int_text(v->valuestring, strlen(v->valuestring), NULL)
		       ? v->valuestring
		       : NULL;
}

cJSON *el_jnew_int(long long val)
{
	unsigned long long mag = val < 0 ? 0ULL - (unsigned long long)val : (unsigned long long)val;
	cJSON *item = checked(cJSON_CreateNumber((double)val));
	char digits[24];

	if (mag >= EXACT_LIMIT)
		make_raw(item, digits, (size_t)snprintf(digits, sizeof(digits), "%lld", val), (double)val);
	return item;
}

void el_jset_int(cJSON *parent, const char *key, long long val)
{
	el_jset(parent, key, el_jnew_int(val));
}

void el_jset_bool(cJSON *parent, const char *key, bool val)
{
	el_jset(parent, key, cJSON_CreateBool(val));
}

cJSON *el_jpush_obj(cJSON *arr)
{
	cJSON *o = checked(cJSON_CreateObject());

	if (!cJSON_AddItemToArray(arr, o))
		el_oom();
	return o;
}

void el_jpush_str(cJSON *arr, const char *val)
{
	if (!cJSON_AddItemToArray(arr, checked(cJSON_CreateString(val))))
		el_oom();
}

cJSON *el_jget(const cJSON *obj, const char *key)
{
	return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

const char *el_jget_str(const cJSON *obj, const char *key)
{
	cJSON *v = el_jget(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * A lock is untrusted: converting 1e300, an infinity or a NaN to long long
 * is undefined behaviour, and 1.5 is not a count, so anything but a whole
 * number in long long's range [-2^63, 2^63) is the fallback.
 */
long long el_jget_int(const cJSON *obj, const char *key, long long fallback)
{
	return el_jint(el_jget(obj, key), fallback);
}

long long el_jint(const cJSON *v, long long fallback)
{
	const char *digits = el_jraw_int(v);
	double d;

	if (digits) {
		long long x;

		/* an integer a double cannot hold, kept as its digits (el_jnew_int, el_json_exact_ints) */
		errno = 0;
		x = strtoll(digits, NULL, 10);
		return errno ? fallback : x;
	}
	if (!cJSON_IsNumber(v))
		return fallback;
	d = v->valuedouble;
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != (double)(long long)d)
		return fallback;
	return (long long)d;
}

bool el_jget_bool(const cJSON *obj, const char *key, bool fallback)
{
	cJSON *v = el_jget(obj, key);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : fallback;
}

/* Length of a valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	int n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (end - p < n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* reject overlong and surrogate forms */
	if (c == 0xe0 && p[1] < 0xa0)
		return 0;
	if (c == 0xed && p[1] >= 0xa0)
		return 0;
	if (c == 0xf0 && p[1] < 0x90)
		return 0;
	if (c == 0xf4 && p[1] >= 0x90)
		return 0;
	return n;
}

/* el_buf_putc without a call when there is room: the writer puts a byte per comma and quote */
static inline int put1(el_buf *out, char c)
{
	if (out->len + 2 > out->alloc || out->len >= out->limit || out->failed)
		return el_buf_putc(out, c);
	out->data[out->len++] = c;
	out->data[out->len] = '\0';
	return 0;
}

/* the bytes a JSON string holds as they are: printable ASCII but '"' and '\\' (never NUL, the end) */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1, /* 0x22 '"', 0x5c '\\' */
};

/* the same for a terminal: DEL is escaped too */
static const unsigned char plain_term[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};

/*
 * Whether the code point of the n-byte UTF-8 sequence at p is one a
 * terminal acts on rather than shows: a C1 control (U+0080-U+009F) or a
 * bidi control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).
 */
static bool terminal_unsafe(const unsigned char *p, int n, unsigned *cp)
{
	if (n == 2)
		*cp = ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu);
	else if (n == 3)
		*cp = ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
	else
		return false;
	return (*cp >= 0x80 && *cp <= 0x9f) || *cp == 0x061c || *cp == 0x200e || *cp == 0x200f ||
	       (*cp >= 0x202a && *cp <= 0x202e) || (*cp >= 0x2066 && *cp <= 0x2069);
}

static int write_string(el_buf *out, const char *s, bool safe)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	const unsigned char *keep = safe ? plain_term : plain;
	int rc = put1(out, '"');

	while (rc == 0 && p < end) {
		const unsigned char *run = p;
		unsigned c;
		int n;

		/* copy the longest run that needs no escaping in one go */
		while (keep[*p])
			p++;
		if (p > run && (rc = el_buf_put(out, run, (size_t)(p - run))) != 0)
			break;
		if (p >= end)
			break;
		c = *p;

		switch (c) {
		case '"':
			rc = el_buf_puts(out, "\\\"");
			p++;
			continue;
		case '\\':
			rc = el_buf_puts(out, "\\\\");
			p++;
			continue;
		case '\n':
			rc = el_buf_puts(out, "\\n");
			p++;
			continue;
		case '\r':
			rc = el_buf_puts(out, "\\r");
			p++;
			continue;
		case '\t':
			rc = el_buf_puts(out, "\\t");
			p++;
			continue;
		case '\b':
			rc = el_buf_puts(out, "\\b");
			p++;
			continue;
		case '\f':
			rc = el_buf_puts(out, "\\f");
			p++;
			continue;
		}
		if (c < 0x20 || (safe && c == 0x7f)) {
			rc = el_buf_printf(out, "\\u%04x", c);
			p++;
			continue;
		}
		n = utf8_len(p, end);
		if (n == 0) {
			rc = el_buf_puts(out, "\\ufffd");
			p++;
		} else if (safe && terminal_unsafe(p, n, &c)) {
			rc = el_buf_printf(out, "\\u%04x", c);
			p += n;
		} else {
			rc = el_buf_put(out, p, (size_t)n);
			p += n;
		}
	}
	return rc ? rc : put1(out, '"');
}

static int cmp_keys(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	return strcmp(x->string, y->string);
}

static int newline(el_buf *out, int indent, int depth)
{
	static const char spaces[] = "\n                                                                ";
	size_t n = (size_t)indent * (size_t)depth + 1;
	int rc = 0;

	if (!indent)
		return 0;
	rc = el_buf_put(out, spaces, n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1);
	for (n = n < sizeof(spaces) - 1 ? 0 : n - (sizeof(spaces) - 1); rc == 0 && n > 0;) {
		size_t k = n < sizeof(spaces) - 2 ? n : sizeof(spaces) - 2;

		rc = el_buf_put(out, spaces + 1, k);
		n -= k;
	}
	return rc;
}

static int write_value(const cJSON *item, el_buf *out, int indent, int depth, bool safe)
{
	int rc = 0;

	if (cJSON_IsString(item))
		return write_string(out, item->valuestring, safe);
	if (cJSON_IsNumber(item)) {
		char num[EL_FMT_DOUBLE_SIZE];

		if (!isfinite(item->valuedouble))
			return el_buf_puts(out, "null");
		return el_buf_put(out, num, el_fmt_double(num, item->valuedouble));
	}
	if (cJSON_IsRaw(item)) {
		/* an integer past 2^53 as its digits; no other raw text reaches a lock */
		const char *digits = el_jraw_int(item);

		return el_buf_puts(out, digits ? digits : "null");
	}
	if (cJSON_IsTrue(item))
		return el_buf_puts(out, "true");
	if (cJSON_IsFalse(item))
		return el_buf_puts(out, "false");
	if (cJSON_IsNull(item) || cJSON_IsInvalid(item))
		return el_buf_puts(out, "null");
	if (cJSON_IsArray(item)) {
		const cJSON *c;

		if (!item->child)
			return el_buf_puts(out, "[]");
		rc = el_buf_putc(out, '[');
		for (c = item->child; rc == 0 && c; c = c->next) {
			rc = newline(out, indent, depth + 1);
			if (rc == 0)
				rc = write_value(c, out, indent, depth + 1, safe);
			if (rc == 0 && c->next)
				rc = put1(out, ',');
		}
		if (rc == 0)
			rc = newline(out, indent, depth);
		return rc ? rc : el_buf_putc(out, ']');
	}
	if (cJSON_IsObject(item)) {
		const cJSON *small[32], **keys = small;
		size_t n = 0, i;
		bool sorted = true;
		const cJSON *c;

		for (c = item->child; c; c = c->next) {
			/* a lock as envlock wrote it is sorted already: no sort, no allocation */
			sorted = sorted && (!c->next || strcmp(c->string, c->next->string) < 0);
			n++;
		}
		if (!n)
			return el_buf_puts(out, "{}");
		if (n > sizeof(small) / sizeof(small[0]))
			keys = el_xmalloc(n * sizeof(*keys));
		for (i = 0, c = item->child; c; c = c->next)
			keys[i++] = c;
		if (!sorted && n <= sizeof(small) / sizeof(small[0])) {
			/* an object of a few members (a package's): insertion, without qsort's calls through a pointer */
			for (i = 1; i < n; i++) {
				const cJSON *k = keys[i];
				size_t j = i;

				for (; j > 0 && strcmp(keys[j - 1]->string, k->string) > 0; j--)
					keys[j] = keys[j - 1];
				keys[j] = k;
			}
		} else if (!sorted) {
			qsort(keys, n, sizeof(*keys), cmp_keys);
		}
		rc = put1(out, '{');
		for (i = 0; rc == 0 && i < n; i++) {
			rc = newline(out, indent, depth + 1);
			if (rc == 0)
				rc = write_string(out, keys[i]->string, safe);
			if (rc == 0)
				rc = indent ? el_buf_put(out, ": ", 2) : put1(out, ':');
			if (rc == 0)
				rc = write_value(keys[i], out, indent, depth + 1, safe);
			if (rc == 0 && i + 1 < n)
				rc = put1(out, ',');
		}
		if (keys != small)
			free(keys);
		if (rc == 0)
			rc = newline(out, indent, depth);
		return rc ? rc : el_buf_putc(out, '}');
	}
	return el_buf_puts(out, "null");
}

int el_json_write(const cJSON *item, el_buf *out, int indent)
{
	int rc = write_value(item, out, indent, 0, false);

	if (rc == 0 && indent)
		rc = el_buf_putc(out, '\n');
	return rc;
}

int el_json_write_term(const cJSON *item, el_buf *out, int indent)
{
	int rc = write_value(item, out, indent, 0, true);

	if (rc == 0 && indent)
		rc = el_buf_putc(out, '\n');
	return rc;
}

void el_lock_canonical(envlock_lock *lock, el_buf *out)
{
	cJSON *id = cJSON_DetachItemFromObjectCaseSensitive(lock->doc, "id");
	cJSON *created = cJSON_DetachItemFromObjectCaseSensitive(lock->doc, "created");
	/* a measurement at save time (timings), like "created": not part of what the id names */
	cJSON *verify = cJSON_DetachItemFromObjectCaseSensitive(lock->doc, "verify");

	if (el_json_write(lock->doc, out, 0) != 0)
		el_oom();
	/* the writer sorts keys, so where they go back does not matter */
	if (created)
		cJSON_AddItemToObject(lock->doc, "created", created);
	if (verify)
		cJSON_AddItemToObject(lock->doc, "verify", verify);
	if (id)
		cJSON_AddItemToObject(lock->doc, "id", id);
}

void el_lock_compute_id(envlock_lock *lock)
{
	el_buf b = EL_BUF_INIT(EL_LOCK_CANONICAL_MAX);
	char hex[EL_SHA256_HEX];

	el_lock_canonical(lock, &b);
	el_sha256_buf(b.data, b.len, hex);
	el_buf_release(&b);
	snprintf(lock->id, sizeof(lock->id), "sha256:%s", hex);
	lock->id_ready = 1;
}

void el_lock_update_id(envlock_lock *lock)
{
	el_lock_compute_id(lock);
	el_jset_str(lock->doc, "id", lock->id);
	lock->view_stale = 1; /* the view's id was the old member's */
}

void el_lock_touch(envlock_lock *lock)
{
	lock->id_ready = 0;
	lock->doc_id_stale = 1;
	lock->view_stale = 1;
}

void el_lock_settle(envlock_lock *lock)
{
	if (lock->doc_id_stale) {
		el_lock_update_id(lock);
		lock->doc_id_stale = 0;
	}
}

int el_lock_write_settled(envlock_lock *lock, el_buf *out)
{
	static const char key[] = "\n  \"id\": \"sha256:";
	char placeholder[EL_LOCK_DIGEST_SIZE], hex[EL_SHA256_HEX];
	const char *at;
	size_t start = out->len, len;
	char *copy;
	int rc;

	if (!lock->doc_id_stale)
		return el_json_write(lock->doc, out, 2);
	/* an id of the right length, so that the real one can be written over it */
	memcpy(placeholder, "sha256:", 7);
	memset(placeholder + 7, '0', EL_SHA256_HEX - 1);
	placeholder[EL_LOCK_DIGEST_SIZE - 1] = '\0';
	el_jset_str(lock->doc, "id", placeholder);
	if ((rc = el_json_write(lock->doc, out, 2)) != 0)
		return rc;
	/* the id is the hash of the canonical form, which the written text gives as loading reads it */
	len = out->len - start;
	copy = el_xmalloc(len + 1);
	memcpy(copy, out->data + start, len);
	copy[len] = '\0';
	/* the one top-level "id" (members inside are indented deeper, and a string holds no raw newline) */
	at = memmem(out->data + start, len, key, sizeof(key) - 1);
	if (at && el_lock_canonical_text(copy, &len) == 0) {
		el_sha256_buf(copy, len, hex);
		snprintf(lock->id, sizeof(lock->id), "sha256:%s", hex);
		lock->id_ready = 1;
		memcpy((char *)at + sizeof(key) - 1, hex, EL_SHA256_HEX - 1);
		el_jset_str(lock->doc, "id", lock->id);
		lock->doc_id_stale = 0;
		lock->view_stale = 1;
		free(copy);
		return 0;
	}
	free(copy);
	/* not the writer's own form (it always is): the id from the document, and the text written again */
	out->len = start;
	el_lock_settle(lock);
	return el_json_write(lock->doc, out, 2);
}

/*
 * The canonical form read straight from a lock's text, when the text is
 * in the form el_json_write gives each value: then the canonical form is
 * the text without its whitespace and without the top-level "id",
 * "created" and "verify" members, and no document needs writing. Each
 * token is checked to be exactly what the writer would write for it
 * (strings escaped as write_string does, whole numbers in plain digits,
 * keys strictly in order); anything else returns -1, and the caller
 * writes the document instead. The text is rewritten as it is read;
 * text[len] must be a NUL.
 */
typedef struct {
	const unsigned char *p, *end;
	unsigned char *w;
} canon;

static const unsigned char json_space[256] = { [' '] = 1, ['\n'] = 1, ['\t'] = 1, ['\r'] = 1 };

/*
 * Sixteen bytes at a time where the machine has SSE2 (every x86-64):
 * a lock is mostly strings (digests, paths, names) and indentation, and
 * a byte at a time was a fifth of loading one. The tail goes a byte at a
 * time; the text ends in a NUL (el_buf keeps one), which is neither
 * space nor plain, so no end test per byte.
 */
static const unsigned char *skip_plain(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* below 0x20 as signed bytes: the controls, and every byte from 0x80 up */
		__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
					    _mm_cmplt_epi8(v, space));
		int m = _mm_movemask_epi8(stop);

		if (m)
			return p + __builtin_ctz((unsigned)m);
		p += 16;
	}
#else
	(void)end;
#endif
	while (plain[*p])
		p++;
	return p;
}

static void canon_space(canon *c)
{
	const unsigned char *p = c->p;

	/* most tokens follow none or one byte of space (": "); the text's NUL ends it */
	if (!json_space[p[0]])
		return;
	if (!json_space[p[1]]) {
		c->p = p + 1;
		return;
	}
#ifdef __SSE2__
	{
		const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t'),
			      cr = _mm_set1_epi8('\r');

		/* the writer's indentation: a newline and two spaces a level */
		while (c->end - p >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
			__m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
						  _mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, cr)));
			unsigned m = ~(unsigned)_mm_movemask_epi8(ws) & 0xffffu;

			if (m) {
				c->p = p + __builtin_ctz(m);
				return;
			}
			p += 16;
		}
	}
#endif
	while (json_space[*p])
		p++;
	c->p = p;
}

/* a string token as write_string writes its value; *s, *n: its content, as written out */
static int canon_string(canon *c, const unsigned char **s, size_t *n, bool *plain_only)
{
	const unsigned char *p = c->p + 1;

	*plain_only = true;
	if (c->p >= c->end || *c->p != '"')
		return -1;
	for (;;) {
		p = skip_plain(p, c->end);
		if (p >= c->end)
			return -1;
		if (*p == '"')
			break;
		if (*p == '\\') {
			unsigned x;

			*plain_only = false;
			if (c->end - p < 2)
				return -1;
			if (strchr("\"\\nrtbf", p[1]) && p[1]) {
				p += 2;
				continue;
			}
			/* only the writer's \u00XX for a control byte with no short form; never \u0000 */
			if (p[1] != 'u' || c->end - p < 6 || p[2] != '0' || p[3] != '0' || !strchr("01", p[4]) ||
			    !p[4] || !strchr("0123456789abcdef", p[5]) || !p[5])
				return -1;
			x = (unsigned)(p[4] - '0') * 16 + (unsigned)(p[5] <= '9' ? p[5] - '0' : p[5] - 'a' + 10);
			if (x == 0 || x == '\b' || x == '\f' || x == '\n' || x == '\r' || x == '\t')
				return -1;
			p += 6;
			continue;
		}
		if (*p < 0x80)
			return -1; /* a raw control byte: the writer escapes it */
		{
			int k = utf8_len(p, c->end);

			if (k == 0)
				return -1; /* not UTF-8: the writer writes U+FFFD */
			*plain_only = false;
			p += k;
		}
	}
	*s = c->w + 1;
	*n = (size_t)(p - (c->p + 1));
	memmove(c->w, c->p, (size_t)(p + 1 - c->p));
	c->w += p + 1 - c->p;
	c->p = p + 1;
	return 0;
}

static int canon_value(canon *c, int depth, bool top);

/*
 * A whole number in plain digits below 2^53, as write_value writes it;
 * nothing else. Past 15 digits the text is not proved here: an integer
 * from 2^53 up loads as a Raw node with the text's digits
 * (el_json_exact_ints), one past 64 bits as a double, and the document
 * path writes each as loading left it, so both ways give the same id.
 */
static int canon_number(canon *c)
{
	const unsigned char *p = c->p, *digits;

	if (p < c->end && *p == '-')
		p++;
	digits = p;
	while (p < c->end && *p >= '0' && *p <= '9')
		p++;
	if (p == digits || p - digits > 15 || (*digits == '0' && p - digits > 1) ||
	    (*digits == '0' && digits > c->p))
		return -1; /* none, too long to be sure, a leading zero, or -0 */
	if (p < c->end && (*p == '.' || *p == 'e' || *p == 'E'))
		return -1;
	memmove(c->w, c->p, (size_t)(p - c->p));
	c->w += p - c->p;
	c->p = p;
	return 0;
}

static int canon_word(canon *c, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return -1;
	memmove(c->w, word, n);
	c->w += n;
	c->p += n;
	return 0;
}

/* the members a lock's id leaves out (el_lock_canonical) */
static bool canon_skipped(const unsigned char *key, size_t n)
{
	return (n == 2 && memcmp(key, "id", 2) == 0) || (n == 7 && memcmp(key, "created", 7) == 0) ||
	       (n == 6 && memcmp(key, "verify", 6) == 0);
}

static int canon_object(canon *c, int depth, bool top)
{
	const unsigned char *prev = NULL;
	size_t prev_n = 0;
	bool first = true;

	*c->w++ = *c->p++;
	canon_space(c);
	if (c->p < c->end && *c->p == '}') {
		*c->w++ = *c->p++;
		return 0;
	}
	for (;;) {
		unsigned char *mark = c->w;
		const unsigned char *key;
		size_t n;
		bool plain_key;
		int cmp;

		if (!first)
			*c->w++ = ',';
		if (canon_string(c, &key, &n, &plain_key) != 0 || !plain_key)
			return -1;
		/* keys in strictly increasing order, as the writer sorts them (most differ in their first byte) */
		if (!prev)
			cmp = -1;
		else if (prev_n && n && prev[0] != key[0])
			cmp = prev[0] < key[0] ? -1 : 1;
		else
			cmp = memcmp(prev, key, prev_n < n ? prev_n : n);
		if (prev && (cmp > 0 || (cmp == 0 && prev_n >= n)))
			return -1;
		canon_space(c);
		if (c->p >= c->end || *c->p != ':')
			return -1;
		*c->w++ = *c->p++;
		if (canon_value(c, depth + 1, false) != 0)
			return -1;
		if (top && canon_skipped(key, n)) {
			c->w = mark; /* not part of what the id names: the next member is written over it */
		} else {
			first = false;
			prev = key; /* in the output, which only a skipped member rewrites */
			prev_n = n;
		}
		canon_space(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			canon_space(c);
			continue;
		}
		if (c->p < c->end && *c->p == '}') {
			*c->w++ = *c->p++;
			return 0;
		}
		return -1;
	}
}

static int canon_array(canon *c, int depth)
{
	*c->w++ = *c->p++;
	canon_space(c);
	if (c->p < c->end && *c->p == ']') {
		*c->w++ = *c->p++;
		return 0;
	}
	for (;;) {
		if (canon_value(c, depth + 1, false) != 0)
			return -1;
		canon_space(c);
		if (c->p < c->end && *c->p == ',') {
			*c->w++ = *c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			*c->w++ = *c->p++;
			return 0;
		}
		return -1;
	}
}

static int canon_value(canon *c, int depth, bool top)
{
	const unsigned char *s;
	size_t n;
	bool plain_only;

	canon_space(c);
	if (c->p >= c->end || depth > 64)
		return -1;
	switch (*c->p) {
	case '{':
		return canon_object(c, depth, top);
	case '[':
		return canon_array(c, depth);
	case '"':
		return canon_string(c, &s, &n, &plain_only);
	case 't':
		return canon_word(c, "true");
	case 'f':
		return canon_word(c, "false");
	case 'n':
		return canon_word(c, "null");
	default:
		return canon_number(c);
	}
}

int el_lock_canonical_text(char *text, size_t *len)
{
	canon c;

	/* in place: the canonical form only leaves bytes out, so the writer never passes the reader */
	c.p = (const unsigned char *)text;
	c.end = c.p + *len;
	c.w = (unsigned char *)text;
	canon_space(&c);
	if (c.p >= c.end || *c.p != '{' || canon_value(&c, 0, true) != 0)
		return -1;
	*len = (size_t)((char *)c.w - text);
	return 0;
}

/* the bytes that start a string or a number, outside strings; the text's NUL is not one */
static const unsigned char token_start[256] = {
	['"'] = 1, ['-'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1,
};

/* what cJSON reads as one number (parse_number's characters) */
static const unsigned char number_byte[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['+'] = 1, ['-'] = 1, ['e'] = 1, ['E'] = 1, ['.'] = 1,
};

/* past space, structure and the letters of true, false and null: to a string or a number, or the end */
static const unsigned char *skip_to_token(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), minus = _mm_set1_epi8('-'), below = _mm_set1_epi8('0' - 1),
		      above = _mm_set1_epi8('9' + 1);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above));
		int m = _mm_movemask_epi8(
			_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, minus)), digit));

		if (m)
			return p + __builtin_ctz((unsigned)m);
		p += 16;
	}
#endif
	while (p < end && !token_start[*p])
		p++;
	return p;
}

/* a number starts after space (cJSON skips every byte up to ' ') or : , [ -; a digest's digits follow a letter or '"' */
static bool number_may_follow(const unsigned char *text, const unsigned char *start)
{
	return start == text || start[-1] <= ' ' || start[-1] == ':' || start[-1] == ',' || start[-1] == '[' ||
	       start[-1] == '-';
}

/*
 * Whether text may hold an integer of 2^53 or more: a run of 16 digits
 * or more where a number can start. A lock's digests have such runs
 * now and then, after a letter or a quote; most locks hold no such
 * integer, and this pass (sixteen bytes at a time) spares them the
 * token by token one.
 */
static bool may_hold_bigint(const unsigned char *text, const unsigned char *end)
{
	const unsigned char *p = text;
	size_t run = 0; /* the digits just before p */

#ifdef __SSE2__
	const __m128i below = _mm_set1_epi8('0' - 1), above = _mm_set1_epi8('9' + 1);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above)));

		if (m == 0xffffu) {
			run += 16;
		} else {
			/* the run before p ends in this block after its first digits; then a new run ends the block */
			if (run + (size_t)__builtin_ctz(~m) >= 16 && number_may_follow(text, p - run))
				return true;
			run = (size_t)__builtin_clz(~(m << 16));
		}
		p += 16;
	}
#endif
	for (; p < end; p++) {
		if (*p >= '0' && *p <= '9') {
			run++;
			continue;
		}
		if (run >= 16 && number_may_follow(text, p - run))
			return true;
		run = 0;
	}
	return run >= 16 && number_may_follow(text, p - run);
}

/*
 * Integers a double cannot hold, found in a JSON text. cJSON keeps every
 * number as a double, so 2^60 + 1 would load as 2^60 and be written back
 * as 1.152921504606847e+18: the text's own digits are found here, by the
 * number's place among the text's numbers (cJSON makes one node for each,
 * in the text's order), and put back into the parsed document as Raw
 * nodes, which write_value writes as they are. The text is read before
 * el_lock_canonical_text rewrites it; the document changed after the
 * schema has judged it, which sees the double as every earlier envlock
 * did.
 */
void el_json_bigints_find(el_json_bigints *out, const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len;
	size_t index = 0;

	memset(out, 0, sizeof(*out));
	if (!may_hold_bigint(p, end))
		return;
	while ((p = skip_to_token(p, end)) < end) {
		const unsigned char *start = p;
		bool big = false;

		if (*p == '"') {
			/* a string's digits are not a number: to its closing quote, past any escaped one */
			for (p++;;) {
				p = skip_plain(p, end);
				if (p >= end || *p == '"')
					break;
				p += *p == '\\' && end - p >= 2 ? 2 : 1;
			}
			p += p < end;
			continue;
		}
		while (p < end && number_byte[*p])
			p++;
		if (p - start >= 16 && el_json_int_text((const char *)start, (size_t)(p - start), &big) && big) {
			el_json_bigint *b;

			if (out->n == out->cap) {
				out->cap = out->cap ? out->cap * 2 : 8;
				out->v = el_xrealloc(out->v, out->cap * sizeof(*out->v));
			}
			b = &out->v[out->n++];
			b->index = index;
			memcpy(b->digits, start, (size_t)(p - start));
			b->digits[p - start] = '\0';
		}
		index++;
	}
}

typedef struct {
	const el_json_bigints *found;
	size_t next, index;
} bigint_walk;

/* the numbers under item in document order; false once every one found is placed, or the text is not doc's */
static bool bigints_place(cJSON *item, bigint_walk *w)
{
	for (; item; item = item->next) {
		if (cJSON_IsNumber(item)) {
			if (w->index++ == w->found->v[w->next].index) {
				const el_json_bigint *b = &w->found->v[w->next];

				if (strtod(b->digits, NULL) != item->valuedouble)
					return false;
				make_raw(item, b->digits, strlen(b->digits), item->valuedouble);
				if (++w->next == w->found->n)
					return false;
			}
		} else if (item->child && !bigints_place(item->child, w)) {
			return false;
		}
	}
	return true;
}

void el_json_bigints_apply(cJSON *doc, const el_json_bigints *found)
{
	bigint_walk w = { found, 0, 0 };

	if (doc && found->n)
		bigints_place(doc, &w);
}

void el_json_bigints_release(el_json_bigints *found)
{
	free(found->v);
	memset(found, 0, sizeof(*found));
}

void el_json_exact_ints(cJSON *doc, const char *text, size_t len)
{
	el_json_bigints found;

	el_json_bigints_find(&found, text, len);
	el_json_bigints_apply(doc, &found);
	el_json_bigints_release(&found);
}
