#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "envlock/common.h"
#include "text.h"
#include "xalloc.h"

bool el_next_line(const char **pos, const char *end, const char **line, size_t *len)
{
	const char *p = *pos, *nl;

	if (p >= end)
		return false;
	nl = memchr(p, '\n', (size_t)(end - p));
	*line = p;
	*len = (size_t)((nl ? nl : end) - p);
	if (*len && p[*len - 1] == '\r')
		(*len)--;
	*pos = nl ? nl + 1 : end;
	return true;
}

void el_trim(const char **s, size_t *len)
{
	while (*len && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' || (*s)[*len - 1] == '\r'))
		(*len)--;
}

bool el_is_text(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c;
		int n;

		/* fast path: eight printable ASCII bytes at a time */
		while (end - p >= 8) {
			uint64_t w;

			memcpy(&w, p, 8);
			if ((w & 0x8080808080808080ULL) ||
			    ((w - 0x2020202020202020ULL) & ~w & 0x8080808080808080ULL))
				break;
			p += 8;
		}
		if (p >= end)
			break;
		c = *p;
		if (c == 0)
			return false;
		if (c < 0x80) {
			if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v')
				return false;
			p++;
			continue;
		}
		if ((c & 0xe0) == 0xc0 && c >= 0xc2)
			n = 1;
		else if ((c & 0xf0) == 0xe0)
			n = 2;
		else if ((c & 0xf8) == 0xf0 && c <= 0xf4)
			n = 3;
		else
			return false;
		if (end - p <= n)
			return false;
		for (int i = 1; i <= n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return false;
		p += n + 1;
	}
	return true;
}

size_t el_fmt_double(char buf[EL_FMT_DOUBLE_SIZE], double d)
{
	if (!isfinite(d))
		return (size_t)snprintf(buf, EL_FMT_DOUBLE_SIZE, "%s", isnan(d) ? "nan" : d < 0 ? "-inf" : "inf");
	if (d == floor(d) && fabs(d) < 9007199254740992.0) {
		/* every whole number below 2^53 is exact: its digits (and -0.0 is 0) */
		char digits[24], *e = digits + sizeof(digits), *q = e;
		long long v = (long long)d;
		unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

		do
			*--q = (char)('0' + u % 10);
		while ((u /= 10) != 0);
		if (v < 0)
			*--q = '-';
		memcpy(buf, q, (size_t)(e - q));
		buf[e - q] = '\0';
		return (size_t)(e - q);
	}
	/* 17 significant digits always read back as the same double; fewer often do */
	for (int prec = 15;; prec++) {
		int n = snprintf(buf, EL_FMT_DOUBLE_SIZE, "%.*g", prec, d);

		if (prec == 17 || strtod(buf, NULL) == d)
			return (size_t)n;
	}
}

bool el_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool el_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

char *el_unquote(const char *s, size_t len)
{
	el_buf b = EL_BUF_FITS(len + 1, "the unquoted text is at most the bytes it is taken from");

	el_trim(&s, &len);
	if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0]) {
		char q = s[0];

		for (size_t i = 1; i + 1 < len; i++) {
			if (q == '"' && s[i] == '\\' && i + 2 < len)
				i++;
			el_buf_addc(&b, s[i]);
		}
	} else {
		el_buf_add(&b, s, len);
	}
	return el_buf_detach(&b);
}

/* Is `name` at text[i..] followed by a non-identifier character? */
static bool word_at(const char *p, const char *end, const char *name)
{
	size_t n = strlen(name);

	if ((size_t)(end - p) < n || memcmp(p, name, n) != 0)
		return false;
	return p + n == end || !(isalnum((unsigned char)p[n]) || p[n] == '_');
}

/* The text after "#define NAME" on a line, or NULL. */
static const char *define_value(const char *text, size_t len, const char *name,
				const char **vend)
{
	const char *pos = text, *end = text + len, *line;
	size_t ll;

	while (el_next_line(&pos, end, &line, &ll)) {
		const char *p = line, *e = line + ll;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= e || *p != '#')
			continue;
		p++;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (!word_at(p, e, "define"))
			continue;
		p += 6;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (!word_at(p, e, name))
			continue;
		p += strlen(name);
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		*vend = e;
		return p;
	}
	return NULL;
}

bool el_c_define_int(const char *text, size_t len, const char *name, long *value)
{
	const char *e, *p = define_value(text, len, name, &e);
	char *stop;
	long v;

	if (!p || p >= e || !isdigit((unsigned char)*p))
		return false;
	v = strtol(p, &stop, 10);
	if (stop < e && (isalnum((unsigned char)*stop) || *stop == '.'))
		return false;
	*value = v;
	return true;
}

bool el_c_define_str(const char *text, size_t len, const char *name, char **value)
{
	const char *e, *p = define_value(text, len, name, &e), *q;

	if (!p || p >= e || *p != '"')
		return false;
	q = memchr(p + 1, '"', (size_t)(e - p - 1));
	if (!q)
		return false;
	*value = el_xstrndup(p + 1, (size_t)(q - p - 1));
	return true;
}

/* PEP 503: lowercase, and every run of '-', '_', '.' becomes one '-'. */
char *el_pep503_name(const char *name)
{
	char *out = el_xmalloc(strlen(name) + 1), *o = out;

	for (const char *s = name; *s; s++) {
		if (*s == '-' || *s == '_' || *s == '.') {
			if (o == out || o[-1] != '-')
				*o++ = '-';
		} else {
			*o++ = (char)tolower((unsigned char)*s);
		}
	}
	*o = '\0';
	return out;
}

/*
 * The value of the last top-level `name = value` or `name: <annotation> =
 * value` (torch 2.x writes `cuda: Optional[str] = '11.8'`), trimmed;
 * Python keeps the last assignment.
 */
static bool py_assignment(const char *text, size_t len, const char *name,
			  const char **val, size_t *vlen)
{
	const char *pos = text, *end = text + len, *line;
	size_t ll, n = strlen(name);
	bool found = false;

	while (el_next_line(&pos, end, &line, &ll)) {
		const char *p = line + n, *e = line + ll;

		if (ll <= n || memcmp(line, name, n) != 0 ||
		    isalnum((unsigned char)*p) || *p == '_')
			continue;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p < e && *p == ':') {
			while (p < e && *p != '=')
				p++;
		}
		if (p >= e || *p != '=' || (p + 1 < e && p[1] == '='))
			continue;
		p++;
		*vlen = (size_t)(e - p);
		el_trim(&p, vlen);
		*val = p;
		found = true;
	}
	return found;
}

/*
 * A string literal or None assigned to name. *present says whether the
 * last assignment is such a literal: `__version__ = '.'.join(...)` is
 * computed, not a version.
 */
char *el_py_assign_str(const char *text, size_t len, const char *name, bool *present)
{
	const char *val, *q, *rest;
	size_t vl, rl;

	*present = false;
	if (!py_assignment(text, len, name, &val, &vl))
		return NULL;
	if (vl >= 4 && memcmp(val, "None", 4) == 0) {
		rest = val + 4;
		rl = vl - 4;
		q = NULL;
	} else if (vl >= 2 && (val[0] == '\'' || val[0] == '"') &&
		   (q = memchr(val + 1, val[0], vl - 1)) != NULL &&
		   !memchr(val + 1, '\\', (size_t)(q - val - 1))) {
		rest = q + 1;
		rl = vl - (size_t)(rest - val);
	} else {
		return NULL;
	}
	el_trim(&rest, &rl);
	if (rl && rest[0] != '#')
		return NULL;
	*present = true;
	return q ? el_xstrndup(val + 1, (size_t)(q - val - 1)) : NULL;
}

/* `debug = False`: 1 true, 0 false, -1 not a literal */
int el_py_assign_bool(const char *text, size_t len, const char *name)
{
	const char *val;
	size_t vl;

	if (!py_assignment(text, len, name, &val, &vl))
		return -1;
	if (vl >= 4 && memcmp(val, "True", 4) == 0 && (vl == 4 || !isalnum((unsigned char)val[4])))
		return 1;
	if (vl >= 5 && memcmp(val, "False", 5) == 0 && (vl == 5 || !isalnum((unsigned char)val[5])))
		return 0;
	return -1;
}

char *el_rfc822_header(const char *text, size_t len, const char *name)
{
	const char *pos = text, *end = text + len, *line;
	size_t ll, n = strlen(name);

	while (el_next_line(&pos, end, &line, &ll)) {
		const char *v;
		size_t vl;

		if (ll == 0)
			break; /* end of headers; the body follows */
		if (ll <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
			continue;
		v = line + n + 1;
		vl = ll - n - 1;
		el_trim(&v, &vl);
		return el_xstrndup(v, vl);
	}
	return NULL;
}

char *el_url_strip_credentials(const char *url, bool conda_token)
{
	const char *scheme = strstr(url, "://"), *auth, *at = NULL, *s, *t;
	el_buf b = EL_BUF_FITS(strlen(url) + 1, "the result is the url with parts left out");

	if (!scheme) {
		el_buf_adds(&b, url);
		return el_buf_detach(&b);
	}
	auth = scheme + 3;
	for (s = auth; *s && *s != '/' && *s != '?' && *s != '#'; s++)
		if (*s == '@')
			at = s;
	el_buf_add(&b, url, (size_t)(auth - url));
	s = auth;
	if (at) {
		size_t ulen = (size_t)(at - auth);
		/* PEP 610 keeps ssh's "git" user and ${VAR} placeholders: no secret in them */
		bool keep = (ulen == 3 && memcmp(auth, "git", 3) == 0) ||
			    (ulen > 3 && auth[0] == '$' && auth[1] == '{' && auth[ulen - 1] == '}' &&
			     !memchr(auth, ':', ulen));

		if (!keep)
			s = at + 1;
	}
	/* anaconda.org puts a token in the path: https://conda.anaconda.org/t/<token>/channel */
	while (conda_token && (t = strstr(s, "/t/")) != NULL && t[3] && t[3] != '/') {
		const char *end = strchr(t + 3, '/');

		el_buf_add(&b, s, (size_t)(t - s));
		s = end ? end : t + strlen(t);
	}
	el_buf_adds(&b, s);
	return el_buf_detach(&b);
}

bool el_is_checkpoint_name(const char *name)
{
	static const char *const suffixes[] = { ".pth", ".pt", ".ckpt", ".safetensors", ".bin", NULL };

	for (const char *const *s = suffixes; *s; s++)
		if (el_ends_with(name, *s))
			return true;
	return false;
}

long el_utf8_next(const char **p, const char *end)
{
	const unsigned char *s = (const unsigned char *)*p, *e = (const unsigned char *)end;
	unsigned c = s[0], lo = 0x80, hi = 0xBF;
	long cp;
	int n;

	if (c < 0x80) {
		*p += 1;
		return (long)c;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 1, cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 2, cp = c & 0x0F;
		lo = c == 0xE0 ? 0xA0 : 0x80;
		hi = c == 0xED ? 0x9F : 0xBF; /* no UTF-16 surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 3, cp = c & 0x07;
		lo = c == 0xF0 ? 0x90 : 0x80;
		hi = c == 0xF4 ? 0x8F : 0xBF;
	} else {
		*p += 1;
		return -1;
	}
	if (e - s <= n || s[1] < lo || s[1] > hi) {
		*p += 1;
		return -1;
	}
	for (int i = 1; i <= n; i++) {
		if (i > 1 && (s[i] < 0x80 || s[i] > 0xBF)) {
			*p += 1;
			return -1;
		}
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	*p += n + 1;
	return cp;
}

bool el_is_control_cp(long cp)
{
	return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || cp == 0x061C ||
	       cp == 0x200E || cp == 0x200F ||
	       (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Where the escaped text goes: a FILE, or a capped buffer (failed set past its cap). */
typedef struct {
	FILE *out;
	el_buf *b;
	int failed;
} term_sink;

static void sink_put(term_sink *k, const char *s, size_t n)
{
	if (k->out)
		fwrite(s, 1, n, k->out);
	else if (!k->failed && el_buf_put(k->b, s, n) != 0)
		k->failed = 1;
}

/*
 * The walk behind el_term_text and el_term_put: runs of printable text are
 * passed on whole (printable ASCII skipped byte by byte without decoding),
 * each control or invalid byte replaced by its escape.
 */
static void term_walk(term_sink *k, const char *s)
{
	const char *end = s + strlen(s), *run = s;
	char esc[16];

	while (s < end) {
		const char *start = s;
		long cp;

		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7F) {
			s++;
			continue;
		}
		cp = el_utf8_next(&s, end);
		if (cp >= 0 && !el_is_control_cp(cp))
			continue;
		sink_put(k, run, (size_t)(start - run));
		if (cp >= 0x100) {
			sink_put(k, esc, (size_t)snprintf(esc, sizeof(esc), "\\u%04lx", cp));
		} else {
			for (const char *b = start; b < s; b++)
				sink_put(k, esc, (size_t)snprintf(esc, sizeof(esc), "\\x%02x", (unsigned char)*b));
		}
		run = s;
	}
	sink_put(k, run, (size_t)(end - run));
}

int el_term_text(el_buf *b, const char *s)
{
	term_sink k = { NULL, b, 0 };

	term_walk(&k, s);
	return k.failed ? ENVLOCK_ELIMIT : 0;
}

void el_term_put(FILE *out, const char *s)
{
	term_sink k = { out, NULL, 0 };

	term_walk(&k, s);
}

bool el_term_safe(const char *s)
{
	const char *end = s + strlen(s);

	while (s < end) {
		long cp;

		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7F) {
			s++;
			continue;
		}
		cp = el_utf8_next(&s, end);
		if (cp < 0 || el_is_control_cp(cp))
			return false;
	}
	return true;
}

size_t el_term_width(const char *s)
{
	const char *end = s + strlen(s);
	size_t w = 0;

	while (s < end) {
		const char *start = s;
		long cp = el_utf8_next(&s, end);

		if (cp >= 0x100 && el_is_control_cp(cp))
			w += 6;                           /* \uNNNN */
		else if (cp < 0 || el_is_control_cp(cp))
			w += 4 * (size_t)(s - start);     /* \xNN per byte */
		else
			w++;
	}
	return w;
}

static bool word_is(const char *s, size_t n, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0)
			return true;
	return false;
}

/* An environment assignment before a command: MMCV_WITH_OPS=1, CUDA_HOME=/usr/local/cuda */
static bool env_word(const char *s, size_t n)
{
	size_t eq = 0;

	while (eq < n && (isupper((unsigned char)s[eq]) || s[eq] == '_' || (eq && isdigit((unsigned char)s[eq]))))
		eq++;
	return eq > 0 && eq < n && s[eq] == '=';
}

/*
 * Does the word at s (n bytes), followed by the word at next (k bytes),
 * start a command a person pastes: a program envlock's fixes name with
 * its subcommand or an option ("pip install", "python -m", "ln -s",
 * "envlock solve"), --cfg-options, or environment assignments before one?
 * Prose that only names a program ("Python 3.7", "nvcc 10.2") is not one.
 */
static bool command_start(const char *s, size_t n, const char *next, size_t k)
{
	static const char *const programs[] = {
		"pip", "pip3", "mim", "conda", "mamba", "micromamba", "uv", "python", "python3", "ln", "ldconfig",
		"envlock", "docker", "nvcc", "sh", "apt", "apt-get", NULL
	};
	static const char *const verbs[] = {
		"install", "uninstall", "download", "create", "activate", "run", "pip", "solve", "restore", "pack",
		"save", "check", "diff", "verify", "bundle", "ldd", "export", "import", "show", "report", "sign",
		"keygen", NULL
	};
	static const char *const any_next[] = { "chroot", "cp", "sudo", "--cfg-options", NULL };

	if (word_is(s, n, any_next))
		return k > 0;
	if (env_word(s, n))
		return k > 0 && (env_word(next, k) || command_start(next, k, "", 0) || word_is(next, k, programs));
	return word_is(s, n, programs) && k > 0 && (next[0] == '-' || word_is(next, k, verbs));
}

/*
 * The length of the next piece wrapping keeps whole at s: a word, or a
 * command from its program up to the word that ends with ';' or ',' (kept)
 * or before one that opens a '(' remark, so that it can be pasted from one
 * line.
 */
static size_t wrap_unit(const char *s)
{
	size_t n = strcspn(s, " "), len = n;
	const char *next = s + n + strspn(s + n, " ");

	if (s[n - 1] == ';' || s[n - 1] == ',' || !command_start(s, n, next, strcspn(next, " ")))
		return n;
	for (const char *p = s + n; *p == ' ';) {
		const char *w = p + strspn(p, " ");
		size_t k = strcspn(w, " ");

		if (!k || *w == '(')
			break;
		len = (size_t)(w - s) + k;
		if (w[k - 1] == ';' || w[k - 1] == ',')
			break;
		p = w + k;
	}
	return len;
}

void el_wrap(el_buf *b, const char *text, int width, int first, int indent)
{
	int col = first;
	bool start = true;

	if (width <= 0 || width - indent < 20) {
		el_buf_adds(b, text);
		return;
	}
	for (const char *s = text; *s;) {
		size_t n = wrap_unit(s);
		char *word = el_xstrndup(s, n);
		int w = (int)el_term_width(word);

		if (!start && col + 1 + w > width) {
			el_buf_addf(b, "\n%*s", indent, "");
			col = indent;
		} else if (!start) {
			el_buf_addc(b, ' ');
			col++;
		}
		el_buf_adds(b, word);
		col += w;
		start = false;
		free(word);
		s += n;
		s += strspn(s, " ");
	}
}

void el_term_wrap(FILE *out, const char *text, int width, int first, int indent)
{
	el_buf safe = EL_BUF_INIT((size_t)1 << 30), wrapped = EL_BUF_INIT((size_t)1 << 30);

	if (el_term_text(&safe, text) != 0 || el_buf_putc(&safe, '\0') != 0)
		el_term_put(out, text);
	else {
		el_wrap(&wrapped, safe.data, width, first, indent);
		if (el_buf_failed(&wrapped))
			el_term_put(out, text);
		else
			fwrite(wrapped.data, 1, wrapped.len, out);
	}
	el_buf_release(&safe);
	el_buf_release(&wrapped);
}
