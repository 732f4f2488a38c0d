/*
 * One config file read as data: the subset of Python that OpenMMLab
 * configs are written in (literals, dict(...), displays, arithmetic on
 * numbers, + on sequences, names defined above, subscripts, _base_.x),
 * evaluated by recursive descent over the tokens. Anything else (calls,
 * lambdas, f-strings, comprehensions, conditionals, statements that run
 * code) is never run: the value it would give is "not evaluated", noted
 * with the file and line, and the key it belongs to is left out.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"
#include "util/buf.h"
#include "util/xalloc.h"

typedef struct {
	el_cfg_run *r;
	const char *path, *s;
	el_tok *t;
	size_t n, pos;
	cv *names;
	const cv *base;
	int depth;
	bool failed; /* the expression being read cannot be evaluated */
	int fail_line;
	char what[200];
	char key[512]; /* the key path being read, for notes */
} parser;

static el_tok *tok(parser *p)
{
	return &p->t[p->pos];
}

static el_tok *peek(parser *p, size_t k)
{
	return p->pos + k < p->n ? &p->t[p->pos + k] : &p->t[p->n - 1];
}

static bool tok_is(parser *p, const el_tok *t, tk_kind kind, const char *text)
{
	return t->kind == kind && (!text || (t->len == strlen(text) && !memcmp(p->s + t->start, text, t->len)));
}

static bool at_op(parser *p, const char *op)
{
	return tok_is(p, tok(p), TK_OP, op);
}

static bool at_name(parser *p, const char *name)
{
	return tok_is(p, tok(p), TK_NAME, name);
}

static bool at_end(parser *p)
{
	return tok(p)->kind == TK_NEWLINE || tok(p)->kind == TK_EOF || at_op(p, ";");
}

static char *tok_text(parser *p, const el_tok *t)
{
	return el_xstrndup(p->s + t->start, t->len);
}

static cv *fail(parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static cv *fail(parser *p, int line, const char *fmt, ...)
{
	va_list ap;

	if (!p->failed) {
		p->failed = true;
		p->fail_line = line;
		va_start(ap, fmt);
		vsnprintf(p->what, sizeof(p->what), fmt, ap);
		va_end(ap);
	}
	return NULL;
}

static cv *syntax(parser *p, const char *what)
{
	if (!p->r->fatal)
		el_cfg_fail(p->r, ENVLOCK_EPARSE, "%s:%d: %s", p->path, tok(p)->line, what);
	return NULL;
}

static bool stopped(parser *p)
{
	return p->failed || p->r->fatal;
}

static size_t key_push(parser *p, const char *k)
{
	size_t len = strlen(p->key);

	snprintf(p->key + len, sizeof(p->key) - len, "%s%s", len ? "." : "", k);
	return len;
}

static void note_failure(parser *p)
{
	el_cfg_note(p->r, p->path, p->fail_line, p->key, p->what);
	p->failed = false;
}

/* Step over one expression's tokens: to a ',' or a closing bracket at this level, or the statement's end. */
static void skip_value(parser *p)
{
	int depth = 0;

	for (; tok(p)->kind != TK_EOF; p->pos++) {
		el_tok *t = tok(p);

		if (t->kind == TK_NEWLINE && !depth)
			return;
		if (!depth && tok_is(p, t, TK_NAME, "for"))
			return;
		if (t->kind != TK_OP)
			continue;
		if (t->len == 1 && strchr("([{", p->s[t->start]))
			depth++;
		else if (t->len == 1 && strchr(")]}", p->s[t->start])) {
			if (!depth)
				return;
			depth--;
		} else if (!depth && t->len == 1 && (p->s[t->start] == ',' || p->s[t->start] == ';'))
			return;
	}
}

static void skip_statement(parser *p)
{
	while (!at_end(p)) {
		skip_value(p);
		if (!at_end(p))
			p->pos++;
	}
}

static cv *expr(parser *p);

/* numbers */

static cv *number(parser *p)
{
	el_tok *t = tok(p);
	char buf[128], *end;
	size_t n = 0;
	bool is_float = false;
	cv *v;

	for (uint32_t i = 0; i < t->len; i++) {
		char c = p->s[t->start + i];

		if (c == '_')
			continue;
		if (n + 1 >= sizeof(buf))
			return fail(p, t->line, "a number literal longer than %zu characters", sizeof(buf) - 1);
		buf[n++] = c;
	}
	buf[n] = '\0';
	p->pos++;
	if (n && (buf[n - 1] == 'j' || buf[n - 1] == 'J'))
		return fail(p, t->line, "a complex number");
	if (n > 1 && buf[0] == '0' && strchr("xXoObB", buf[1])) {
		int base = strchr("xX", buf[1]) ? 16 : strchr("oO", buf[1]) ? 8 : 2;
		unsigned long long u;

		errno = 0;
		u = strtoull(buf + 2, &end, base);
		if (*end || end == buf + 2)
			return syntax(p, "a number that is not one");
		if (errno || u > LLONG_MAX)
			return fail(p, t->line, "an integer too large for 64 bits");
		v = cv_new(p->r, CV_INT);
		v->u.i = (long long)u;
		return v;
	}
	for (size_t i = 0; i < n; i++)
		if (strchr(".eE", buf[i]))
			is_float = true;
	errno = 0;
	if (is_float) {
		double f = strtod(buf, &end);

		if (*end)
			return syntax(p, "a number that is not one");
		if (!isfinite(f))
			return fail(p, t->line, "a float literal that is not finite");
		v = cv_new(p->r, CV_FLOAT);
		v->u.f = f;
		return v;
	}
	{
		long long i = strtoll(buf, &end, 10);

		if (*end)
			return syntax(p, "a number that is not one");
		if (errno)
			return fail(p, t->line, "an integer too large for 64 bits");
		v = cv_new(p->r, CV_INT);
		v->u.i = i;
		return v;
	}
}

/* strings */

static void put_utf8(el_buf *b, unsigned long cp, int *err)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	*err |= el_buf_put(b, u, n);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Append string token t's value to b; false (with p->failed) when it is not a plain str. */
static bool string_piece(parser *p, const el_tok *t, el_buf *b)
{
	const char *s = p->s + t->start, *end = s + t->len;
	bool raw = false;
	int err = 0;
	size_t q;

	for (; *s != '\'' && *s != '"'; s++) {
		if (*s == 'f' || *s == 'F')
			return fail(p, t->line, "an f-string"), false;
		if (*s == 'b' || *s == 'B')
			return fail(p, t->line, "a bytes literal"), false;
		if (*s == 'r' || *s == 'R')
			raw = true;
	}
	q = (s + 2 < end && s[1] == s[0] && s[2] == s[0] && end - s >= 6) ? 3 : 1;
	s += q;
	end -= q;
	while (s < end && !err) {
		if (*s != '\\' || raw) {
			if (raw && *s == '\\' && s + 1 < end) { /* a raw string keeps the backslash and what it protects */
				err |= el_buf_put(b, s, 2);
				s += 2;
				continue;
			}
			err |= el_buf_putc(b, *s++);
			continue;
		}
		s++;
		switch (*s) {
		case '\n': s++; break;
		case '\\': err |= el_buf_putc(b, '\\'); s++; break;
		case '\'': err |= el_buf_putc(b, '\''); s++; break;
		case '"': err |= el_buf_putc(b, '"'); s++; break;
		case 'n': err |= el_buf_putc(b, '\n'); s++; break;
		case 't': err |= el_buf_putc(b, '\t'); s++; break;
		case 'r': err |= el_buf_putc(b, '\r'); s++; break;
		case 'a': err |= el_buf_putc(b, '\a'); s++; break;
		case 'b': err |= el_buf_putc(b, '\b'); s++; break;
		case 'f': err |= el_buf_putc(b, '\f'); s++; break;
		case 'v': err |= el_buf_putc(b, '\v'); s++; break;
		case 'x': case 'u': case 'U': {
			int digits = *s == 'x' ? 2 : *s == 'u' ? 4 : 8;
			unsigned long cp = 0;

			s++;
			for (int i = 0; i < digits; i++, s++) {
				if (s >= end || hexval(*s) < 0)
					return syntax(p, "a \\x, \\u or \\U escape without its hex digits"), false;
				cp = cp * 16 + (unsigned long)hexval(*s);
			}
			if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
				return fail(p, t->line, "a string escape that is not a Unicode character"), false;
			put_utf8(b, cp, &err);
			break;
		}
		case 'N':
			return fail(p, t->line, "a \\N{...} escape"), false;
		default:
			if (*s >= '0' && *s <= '7') {
				unsigned long cp = 0;

				for (int i = 0; i < 3 && s < end && *s >= '0' && *s <= '7'; i++, s++)
					cp = cp * 8 + (unsigned long)(*s - '0');
				put_utf8(b, cp, &err);
			} else /* Python keeps an unknown escape as written */
				err |= el_buf_putc(b, '\\');
			break;
		}
	}
	if (err) {
		el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a string longer than %u bytes", p->path, t->line, EL_CFG_MAX_STR);
		return false;
	}
	return true;
}

static cv *string(parser *p)
{
	el_buf b = EL_BUF_INIT(EL_CFG_MAX_STR);
	int line = tok(p)->line;
	cv *v;

	while (tok(p)->kind == TK_STR) {
		if (!string_piece(p, tok(p), &b)) {
			el_buf_release(&b);
			return NULL;
		}
		p->pos++;
	}
	if (memchr(el_buf_cstr(&b), '\0', b.len)) {
		el_buf_release(&b);
		return fail(p, line, "a string with a NUL character");
	}
	if (memchr(el_buf_cstr(&b), EL_CFG_BASEREF_MARK, b.len)) {
		const char *s = el_buf_cstr(&b);

		if (b.len > 2 && s[0] == EL_CFG_BASEREF_MARK && s[b.len - 1] == EL_CFG_BASEREF_MARK &&
		    !memchr(s + 1, EL_CFG_BASEREF_MARK, b.len - 2)) {
			v = cv_new(p->r, CV_BASEREF);
			v->u.str.s = el_xstrndup(s + 1, b.len - 2);
			v->u.str.n = b.len - 2;
			v->line = line;
			el_buf_release(&b);
			return v;
		}
		el_buf_release(&b);
		return fail(p, line, "a {{_base_.x}} inside a string literal (mmcv leaves a random name there)");
	}
	v = cv_str(p->r, el_buf_cstr(&b), b.len);
	el_buf_release(&b);
	return v;
}

/* arithmetic */

static bool is_num(const cv *v)
{
	return v->kind == CV_INT || v->kind == CV_FLOAT || v->kind == CV_BOOL;
}

static double as_float(const cv *v)
{
	return v->kind == CV_FLOAT ? v->u.f : v->kind == CV_INT ? (double)v->u.i : v->u.b;
}

static long long as_int(const cv *v)
{
	return v->kind == CV_INT ? v->u.i : v->u.b;
}

static cv *make_int(parser *p, long long i)
{
	cv *v = cv_new(p->r, CV_INT);

	v->u.i = i;
	return v;
}

static cv *make_float(parser *p, int line, double f)
{
	cv *v;

	if (!isfinite(f))
		return fail(p, line, "a float result that is not finite");
	v = cv_new(p->r, CV_FLOAT);
	v->u.f = f;
	return v;
}

static cv *int_pow(parser *p, int line, long long b, long long e)
{
	long long acc = 1;

	while (e > 0) {
		if ((e & 1) && __builtin_mul_overflow(acc, b, &acc))
			return fail(p, line, "an integer result too large for 64 bits");
		e >>= 1;
		if (e && __builtin_mul_overflow(b, b, &b))
			return fail(p, line, "an integer result too large for 64 bits");
	}
	return make_int(p, acc);
}

static cv *concat(parser *p, int line, cv *a, cv *b)
{
	if (a->kind == CV_STR) {
		char *s;

		if (a->u.str.n + b->u.str.n > EL_CFG_MAX_STR) {
			el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a string longer than %u bytes", p->path, line, EL_CFG_MAX_STR);
			cv_free(a);
			cv_free(b);
			return NULL;
		}
		s = el_xmalloc(a->u.str.n + b->u.str.n + 1);
		memcpy(s, a->u.str.s, a->u.str.n);
		memcpy(s + a->u.str.n, b->u.str.s, b->u.str.n + 1);
		free(a->u.str.s);
		a->u.str.s = s;
		a->u.str.n += b->u.str.n;
		cv_free(b);
		return a;
	}
	for (size_t i = 0; i < b->u.seq.n; i++)
		cv_seq_push(p->r, a, b->u.seq.v[i]);
	b->u.seq.n = 0;
	cv_free(b);
	return a;
}

/* a op b, consuming both */
static cv *binop(parser *p, int line, const char *op, cv *a, cv *b)
{
	cv *v = NULL;

	if (!strcmp(op, "+") && a->kind == b->kind && (a->kind == CV_STR || a->kind == CV_LIST || a->kind == CV_TUPLE))
		return concat(p, line, a, b);
	if (!is_num(a) || !is_num(b)) {
		fail(p, line, "'%s' on a %s and a %s", op, cv_kind_name(a->kind), cv_kind_name(b->kind));
		goto done;
	}
	if (a->kind != CV_FLOAT && b->kind != CV_FLOAT && strcmp(op, "/")) {
		long long x = as_int(a), y = as_int(b), z = 0;

		if (!strcmp(op, "**")) {
			v = y >= 0 ? int_pow(p, line, x, y) : make_float(p, line, pow((double)x, (double)y));
			goto done;
		}
		if ((!strcmp(op, "//") || !strcmp(op, "%")) && !y) {
			fail(p, line, "a division by zero");
			goto done;
		}
		if ((!strcmp(op, "+") && __builtin_add_overflow(x, y, &z)) ||
		    (!strcmp(op, "-") && __builtin_sub_overflow(x, y, &z)) ||
		    (!strcmp(op, "*") && __builtin_mul_overflow(x, y, &z)) ||
		    ((!strcmp(op, "//") || !strcmp(op, "%")) && x == LLONG_MIN && y == -1)) {
			fail(p, line, "an integer result too large for 64 bits");
			goto done;
		}
		if (!strcmp(op, "//")) {
			z = x / y;
			if ((x % y) && ((x < 0) != (y < 0)))
				z--;
		} else if (!strcmp(op, "%")) {
			z = x % y;
			if (z && ((z < 0) != (y < 0)))
				z += y;
		}
		v = make_int(p, z);
	} else {
		double x = as_float(a), y = as_float(b), z = 0;

		if ((!strcmp(op, "/") || !strcmp(op, "//") || !strcmp(op, "%")) && y == 0) {
			fail(p, line, "a division by zero");
			goto done;
		}
		if (!strcmp(op, "+")) z = x + y;
		else if (!strcmp(op, "-")) z = x - y;
		else if (!strcmp(op, "*")) z = x * y;
		else if (!strcmp(op, "/")) z = x / y;
		else if (!strcmp(op, "//")) z = floor(x / y);
		else if (!strcmp(op, "%")) {
			z = fmod(x, y);
			if (z != 0 && ((z < 0) != (y < 0)))
				z += y;
		} else if (!strcmp(op, "**")) {
			if (x < 0 && y != floor(y)) {
				fail(p, line, "a complex power");
				goto done;
			}
			z = pow(x, y);
		}
		v = make_float(p, line, z);
	}
done:
	cv_free(a);
	cv_free(b);
	return v;
}

/* atoms */

/*
 * An element that failed from start: when a `for` follows it at this level
 * it was a comprehension, and that is what the note says.
 */
static void comprehension_check(parser *p, size_t start, int line, const char *what)
{
	size_t at = p->pos;

	if (p->r->fatal)
		return;
	p->pos = start;
	skip_value(p);
	if (at_name(p, "for")) {
		p->failed = false;
		fail(p, line, "%s", what);
	}
	p->pos = at;
}

static cv *list_or_tuple(parser *p, cv_kind kind, const char *close)
{
	cv *v = cv_new(p->r, kind);

	p->pos++;
	while (!at_op(p, close)) {
		cv *item;
		int line = tok(p)->line;
		size_t start = p->pos;

		if (at_op(p, "*")) {
			cv_free(v);
			return fail(p, line, "an unpacking (*x)");
		}
		if (!(item = expr(p))) {
			comprehension_check(p, start, line, kind == CV_LIST ? "a list comprehension" : "a generator expression");
			cv_free(v);
			return NULL;
		}
		if (at_name(p, "for")) {
			cv_free(item);
			cv_free(v);
			return fail(p, line, kind == CV_LIST ? "a list comprehension" : "a generator expression");
		}
		if (cv_seq_push(p->r, v, item)) {
			cv_free(v);
			return NULL;
		}
		if (kind == CV_TUPLE && v->u.seq.n == 1 && at_op(p, close)) {
			/* (x) is x, not a tuple */
			cv *only = v->u.seq.v[0];

			v->u.seq.n = 0;
			cv_free(v);
			p->pos++;
			return only;
		}
		if (at_op(p, ","))
			p->pos++;
		else if (!at_op(p, close)) {
			cv_free(v);
			return syntax(p, "expected ',' or a closing bracket");
		}
	}
	p->pos++;
	return v;
}

/* The value of one dict entry; a value that cannot be evaluated is noted and kept as unknown. */
static cv *entry_value(parser *p, const char *key)
{
	size_t start = p->pos, klen = key_push(p, key);
	cv *v = expr(p);

	if (!v && !p->r->fatal) {
		size_t at = p->pos;

		p->pos = start;
		skip_value(p);
		if (at_name(p, "for")) { /* {k: v for ...}: the whole dict is a comprehension */
			p->failed = false;
			fail(p, tok(p)->line, "a dict comprehension");
			p->pos = at;
			p->key[klen] = '\0';
			return NULL;
		}
		note_failure(p);
		v = cv_new(p->r, CV_UNKNOWN);
	}
	p->key[klen] = '\0';
	return v;
}

/* **x inside dict(...) or {...}: x's keys into d */
static bool splat_into(parser *p, cv *d)
{
	int line = tok(p)->line;
	cv *x;

	p->pos++;
	if (!(x = expr(p)))
		return false;
	if (x->kind != CV_DICT) {
		fail(p, line, "a ** of a %s", cv_kind_name(x->kind));
		cv_free(x);
		return false;
	}
	for (size_t i = 0; i < x->u.d->n; i++) {
		cv_dict_set(p->r, d, x->u.d->keys[i], x->u.d->vals[i]);
		x->u.d->vals[i] = NULL;
	}
	cv_free(x);
	return !p->r->fatal;
}

/* dict(m, k=v, **x): a keyword given twice (by name or by **) is Python's TypeError */
static bool kw_once(parser *p, cv *seen, const char *k, int line)
{
	if (cv_dict_find(seen, k) >= 0) {
		fail(p, line, "a dict() call that gives the key '%s' twice", k);
		return false;
	}
	cv_dict_set(p->r, seen, k, cv_new(p->r, CV_NONE));
	return true;
}

static cv *dict_call(parser *p)
{
	cv *d = cv_new(p->r, CV_DICT), *seen = cv_new(p->r, CV_DICT);

	p->pos += 2; /* dict ( */
	while (!at_op(p, ")")) {
		int line = tok(p)->line;

		if (at_op(p, "**")) {
			cv *x = cv_new(p->r, CV_DICT);

			if (!splat_into(p, x)) {
				cv_free(x);
				goto bad;
			}
			for (size_t i = 0; i < x->u.d->n; i++) {
				if (!kw_once(p, seen, x->u.d->keys[i], line)) {
					cv_free(x);
					goto bad;
				}
				cv_dict_set(p->r, d, x->u.d->keys[i], x->u.d->vals[i]);
				x->u.d->vals[i] = NULL;
			}
			cv_free(x);
		} else if (tok(p)->kind == TK_NAME && tok_is(p, peek(p, 1), TK_OP, "=")) {
			char *k = tok_text(p, tok(p));
			cv *v;

			p->pos += 2;
			if (!kw_once(p, seen, k, line)) {
				free(k);
				goto bad;
			}
			v = entry_value(p, k);
			if (!v || cv_dict_set(p->r, d, k, v)) {
				free(k);
				goto bad;
			}
			free(k);
		} else {
			cv *x = expr(p);

			if (!x)
				goto bad;
			if (x->kind != CV_DICT || d->u.d->n) {
				fail(p, line, "dict() of a %s", d->u.d->n ? "second positional argument" : cv_kind_name(x->kind));
				cv_free(x);
				goto bad;
			}
			for (size_t i = 0; i < x->u.d->n; i++) {
				cv_dict_set(p->r, d, x->u.d->keys[i], x->u.d->vals[i]);
				x->u.d->vals[i] = NULL;
			}
			cv_free(x);
		}
		if (at_name(p, "for")) {
			fail(p, line, "a generator expression");
			goto bad;
		}
		if (at_op(p, ","))
			p->pos++;
		else if (!at_op(p, ")")) {
			syntax(p, "expected ',' or ')' in dict(...)");
			goto bad;
		}
	}
	p->pos++;
	cv_free(seen);
	return d;
bad:
	cv_free(seen);
	cv_free(d);
	return NULL;
}

static char *dict_key(parser *p, cv *k, int line)
{
	if (k->kind == CV_STR)
		return el_xstrdup(k->u.str.s);
	if (k->kind == CV_INT) /* as json.dumps writes an int key */
		return el_xasprintf("%lld", k->u.i);
	fail(p, line, "a dict key that is a %s", cv_kind_name(k->kind));
	return NULL;
}

static cv *dict_display(parser *p)
{
	cv *d = cv_new(p->r, CV_DICT);

	p->pos++;
	while (!at_op(p, "}")) {
		int line = tok(p)->line;

		if (at_op(p, "**")) {
			if (!splat_into(p, d))
				goto bad;
		} else {
			size_t start = p->pos;
			cv *k = expr(p), *v;
			char *key;

			if (!k) {
				comprehension_check(p, start, line, "a dict or set comprehension");
				goto bad;
			}
			if (!at_op(p, ":")) {
				cv_free(k);
				fail(p, line, at_name(p, "for") ? "a set comprehension" : "a set");
				goto bad;
			}
			p->pos++;
			key = dict_key(p, k, line);
			cv_free(k);
			if (!key)
				goto bad;
			v = entry_value(p, key);
			if (!v || cv_dict_set(p->r, d, key, v)) {
				free(key);
				goto bad;
			}
			free(key);
		}
		if (at_name(p, "for")) {
			fail(p, line, "a dict comprehension");
			goto bad;
		}
		if (at_op(p, ","))
			p->pos++;
		else if (!at_op(p, "}")) {
			syntax(p, "expected ',' or '}'");
			goto bad;
		}
	}
	p->pos++;
	return d;
bad:
	cv_free(d);
	return NULL;
}

/* The callee's text for a message: "foo", "x.update" (cut short). */
static void callee_text(parser *p, size_t from, char *out, size_t size)
{
	size_t a = p->t[from].start, b = tok(p)->start, n = b - a;

	if (n > 60)
		n = 60;
	snprintf(out, size, "%.*s", (int)n, p->s + a);
}

static const cv *lookup(parser *p, const el_tok *t)
{
	char *name = tok_text(p, t);
	const cv *v = NULL;

	if (!strcmp(name, "_base_")) {
		if (!p->base)
			fail(p, t->line, "_base_ used as a value in a file without bases");
		v = p->base;
	} else if (!(v = cv_dict_get(p->names, name))) {
		if (!strcmp(name, "__import__") || !strcmp(name, "eval") || !strcmp(name, "exec") ||
		    !strcmp(name, "open") || !strcmp(name, "getattr"))
			fail(p, t->line, "the builtin %s (never run)", name);
		else
			fail(p, t->line, "the name '%s', which is not defined above", name);
	} else if (v->kind == CV_UNKNOWN) {
		fail(p, t->line, "the name '%s', which is not evaluated", name);
		v = NULL;
	} else if (v->kind == CV_MODULE) {
		fail(p, t->line, "the name '%s', which is imported", name);
		v = NULL;
	}
	free(name);
	return v;
}

static const char *const keywords[] = { "lambda", "not", "await", "yield", "if", "else", "for", "in", "is",
					"and", "or", "import", "from", "def", "class", "return", NULL };

static cv *primary(parser *p)
{
	el_tok *t = tok(p);
	size_t start = p->pos;
	const cv *cur = NULL;
	cv *own = NULL, *v;
	char what[80];

	if (t->kind == TK_NAME) {
		char *name = tok_text(p, t);
		bool kw = false;

		for (int i = 0; keywords[i]; i++)
			kw |= !strcmp(name, keywords[i]);
		if (kw) {
			v = !strcmp(name, "lambda") ? fail(p, t->line, "a lambda")
			    : !strcmp(name, "not") ? fail(p, t->line, "a boolean operator (not)")
						  : fail(p, t->line, "the keyword '%s' in an expression", name);
			free(name);
			return v;
		}
		if (!strcmp(name, "True") || !strcmp(name, "False")) {
			own = cv_new(p->r, CV_BOOL);
			own->u.b = name[0] == 'T';
			p->pos++;
		} else if (!strcmp(name, "None")) {
			own = cv_new(p->r, CV_NONE);
			p->pos++;
		} else if (tok_is(p, peek(p, 1), TK_OP, ":=")) {
			free(name);
			return fail(p, t->line, "an assignment expression (:=)");
		} else if (cv_dict_get(p->names, name) && cv_dict_get(p->names, name)->kind == CV_MODULE) {
			/* os.path.join(...): name what is done with the module */
			p->pos++;
			while (at_op(p, ".") && peek(p, 1)->kind == TK_NAME)
				p->pos += 2;
			callee_text(p, start, what, sizeof(what));
			v = at_op(p, "(") ? fail(p, t->line, "a call to %s()", what)
			    : p->pos == start + 1 ? fail(p, t->line, "the name '%s', which is imported", what)
						  : fail(p, t->line, "%s, from an imported module", what);
			free(name);
			return v;
		} else if (tok_is(p, peek(p, 1), TK_OP, "(")) {
			if (!strcmp(name, "dict") && !cv_dict_get(p->names, "dict"))
				own = dict_call(p);
			else
				own = fail(p, t->line, "a call to %s()%s", name,
					   !strcmp(name, "__import__") || !strcmp(name, "eval") || !strcmp(name, "exec")
						   ? " (never run)" : "");
			free(name);
			if (!own)
				return NULL;
			goto trailers;
		} else {
			cur = lookup(p, t);
			p->pos++;
		}
		free(name);
		if (!cur && !own)
			return NULL;
	} else if (t->kind == TK_NUM)
		own = number(p);
	else if (t->kind == TK_STR)
		own = string(p);
	else if (at_op(p, "("))
		own = list_or_tuple(p, CV_TUPLE, ")");
	else if (at_op(p, "["))
		own = list_or_tuple(p, CV_LIST, "]");
	else if (at_op(p, "{"))
		own = dict_display(p);
	else if (at_op(p, "..."))
		return fail(p, t->line, "an Ellipsis (...)");
	else
		return syntax(p, "expected a value");
	if (!own && !cur)
		return NULL;
trailers:
	for (;;) {
		const cv *x = cur ? cur : own;
		int line = tok(p)->line;

		if (at_op(p, "(")) {
			callee_text(p, start, what, sizeof(what));
			v = fail(p, line, "a call to %s()", what);
			goto out;
		}
		if (at_op(p, ".")) {
			el_tok *a = peek(p, 1);
			char *attr;

			if (a->kind != TK_NAME) {
				v = syntax(p, "expected a name after '.'");
				goto out;
			}
			if (tok_is(p, peek(p, 2), TK_OP, "(")) {
				p->pos += 2;
				callee_text(p, start, what, sizeof(what));
				v = fail(p, line, "a call to %s()", what);
				goto out;
			}
			if (x->kind != CV_DICT || !x->cfgdict) {
				callee_text(p, start, what, sizeof(what));
				v = fail(p, line, "an attribute of %s, a %s%s", what, cv_kind_name(x->kind),
					 x->kind == CV_DICT ? " that is not from _base_" : "");
				goto out;
			}
			attr = tok_text(p, a);
			cur = cv_dict_get(x, attr);
			if (!cur) {
				callee_text(p, start, what, sizeof(what));
				v = fail(p, line, "%s.%s, which is not there", what, attr);
				free(attr);
				goto out;
			}
			free(attr);
			p->pos += 2;
			continue;
		}
		if (at_op(p, "[")) {
			cv *idx;

			p->pos++;
			if (!(idx = expr(p))) {
				v = NULL;
				goto out;
			}
			if (!at_op(p, "]")) {
				cv_free(idx);
				v = at_op(p, ":") || at_op(p, ",") ? fail(p, line, "a slice or a tuple index")
								   : syntax(p, "expected ']'");
				goto out;
			}
			p->pos++;
			if (x->kind == CV_DICT && (idx->kind == CV_STR || idx->kind == CV_INT)) {
				char *k = dict_key(p, idx, line);

				cur = cv_dict_get(x, k);
				if (!cur)
					fail(p, line, "the key '%s', which is not there", k);
				free(k);
			} else if ((x->kind == CV_LIST || x->kind == CV_TUPLE) && (idx->kind == CV_INT || idx->kind == CV_BOOL)) {
				long long i = as_int(idx), n = (long long)x->u.seq.n;

				if (i < 0)
					i += n;
				cur = i >= 0 && i < n ? x->u.seq.v[i] : NULL;
				if (!cur)
					fail(p, line, "an index out of range");
			} else {
				fail(p, line, "a %s index into a %s", cv_kind_name(idx->kind), cv_kind_name(x->kind));
				cur = NULL;
			}
			cv_free(idx);
			if (!cur) {
				v = NULL;
				goto out;
			}
			continue;
		}
		break;
	}
	if (cur && (cur->kind == CV_UNKNOWN || cur->kind == CV_MODULE)) {
		v = fail(p, tok(p)->line, "a value that is not evaluated");
		goto out;
	}
	v = cur ? cv_copy(p->r, cur) : own;
	if (v == own)
		own = NULL;
out:
	cv_free(own);
	return v;
}

static cv *unary(parser *p);

static cv *power(parser *p)
{
	cv *a = primary(p), *b;
	int line;

	if (!a || !at_op(p, "**"))
		return a;
	line = tok(p)->line;
	p->pos++;
	if (!(b = unary(p))) {
		cv_free(a);
		return NULL;
	}
	return binop(p, line, "**", a, b);
}

static cv *unary(parser *p)
{
	int line = tok(p)->line;
	char op;
	cv *v;

	if (!(at_op(p, "-") || at_op(p, "+") || at_op(p, "~")))
		return power(p);
	op = p->s[tok(p)->start];
	p->pos++;
	if (++p->depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: an expression nested deeper than %d", p->path, line, EL_CFG_MAX_DEPTH);
		return NULL;
	}
	v = unary(p);
	p->depth--;
	if (!v)
		return NULL;
	if (!is_num(v) || (op == '~' && v->kind == CV_FLOAT)) {
		fail(p, line, "a unary '%c' on a %s", op, cv_kind_name(v->kind));
		cv_free(v);
		return NULL;
	}
	if (v->kind == CV_BOOL) {
		long long i = v->u.b;

		v->kind = CV_INT;
		v->u.i = i;
	}
	if (op == '-') {
		if (v->kind == CV_FLOAT)
			v->u.f = -v->u.f;
		else if (v->u.i == LLONG_MIN) {
			cv_free(v);
			return fail(p, line, "an integer result too large for 64 bits");
		} else
			v->u.i = -v->u.i;
	} else if (op == '~')
		v->u.i = ~v->u.i;
	return v;
}

static cv *term(parser *p)
{
	cv *a = unary(p);

	while (a && (at_op(p, "*") || at_op(p, "/") || at_op(p, "//") || at_op(p, "%") || at_op(p, "@"))) {
		char op[3] = { 0 };
		int line = tok(p)->line;
		cv *b;

		memcpy(op, p->s + tok(p)->start, tok(p)->len);
		p->pos++;
		if (!strcmp(op, "@")) {
			cv_free(a);
			return fail(p, line, "a matrix product (@)");
		}
		if (!(b = unary(p))) {
			cv_free(a);
			return NULL;
		}
		if (!strcmp(op, "*") && (!is_num(a) || !is_num(b))) {
			fail(p, line, "a repetition (a sequence * an int)");
			cv_free(a);
			cv_free(b);
			return NULL;
		}
		a = binop(p, line, op, a, b);
	}
	return a;
}

static cv *arith(parser *p)
{
	cv *a = term(p);

	while (a && (at_op(p, "+") || at_op(p, "-"))) {
		char op[2] = { p->s[tok(p)->start], 0 };
		int line = tok(p)->line;
		cv *b;

		p->pos++;
		if (!(b = term(p))) {
			cv_free(a);
			return NULL;
		}
		a = binop(p, line, op, a, b);
	}
	return a;
}

static cv *expr(parser *p)
{
	int line = tok(p)->line;
	cv *v;

	if (stopped(p))
		return NULL;
	if (++p->depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: an expression nested deeper than %d", p->path, line, EL_CFG_MAX_DEPTH);
		return NULL;
	}
	v = arith(p);
	p->depth--;
	if (!v)
		return NULL;
	line = tok(p)->line;
	if (at_name(p, "if"))
		v = (cv_free(v), fail(p, line, "a conditional expression (x if c else y)"));
	else if (at_name(p, "and") || at_name(p, "or"))
		v = (cv_free(v), fail(p, line, "a boolean operator (and, or)"));
	else if (at_name(p, "in") || at_name(p, "not") || at_name(p, "is") || at_op(p, "==") || at_op(p, "!=") ||
		 at_op(p, "<") || at_op(p, ">") || at_op(p, "<=") || at_op(p, ">="))
		v = (cv_free(v), fail(p, line, "a comparison"));
	else if (at_op(p, ":="))
		v = (cv_free(v), fail(p, line, "an assignment expression (:=)"));
	else if (at_op(p, "|") || at_op(p, "&") || at_op(p, "^") || at_op(p, "<<") || at_op(p, ">>"))
		v = (cv_free(v), fail(p, line, "a bitwise operator"));
	return v;
}

/* statements */

static void bind(parser *p, const char *name, cv *v)
{
	cv_dict_set(p->r, p->names, name, v);
}

static void bind_unknown(parser *p, const char *name, int line, const char *what)
{
	el_cfg_note(p->r, p->path, line, name, what);
	bind(p, name, cv_new(p->r, CV_UNKNOWN));
}

/*
 * After "from": the module's leading dots (counted in *dots, and kept in
 * mod's text when keep_dots), its dotted name into mod, then "import".
 * false after a syntax error.
 */
static bool from_module(parser *p, el_buf *mod, int *dots, bool keep_dots)
{
	while (at_op(p, ".") || at_op(p, "...")) {
		if (keep_dots)
			el_buf_put(mod, p->s + tok(p)->start, tok(p)->len);
		*dots += (int)tok(p)->len;
		p->pos++;
	}
	while (tok(p)->kind == TK_NAME && !at_name(p, "import")) {
		el_buf_put(mod, p->s + tok(p)->start, tok(p)->len);
		p->pos++;
		if (at_op(p, ".")) {
			el_buf_putc(mod, '.');
			p->pos++;
		}
	}
	if (!at_name(p, "import")) {
		syntax(p, "expected 'import'");
		return false;
	}
	p->pos++;
	return true;
}

/* import a.b as c, d / from x import y as z, * */
static void import_stmt(parser *p)
{
	int line = tok(p)->line;
	bool from = at_name(p, "from");
	el_buf mod = EL_BUF_INIT(1024);

	p->pos++;
	if (from) {
		int dots = 0;

		if (!from_module(p, &mod, &dots, true))
			goto out;
		{
			cJSON *rec = cJSON_CreateObject();

			cJSON_AddStringToObject(rec, "file", p->path);
			cJSON_AddNumberToObject(rec, "line", line);
			cJSON_AddStringToObject(rec, "module", el_buf_cstr(&mod));
			cJSON_AddItemToArray(p->r->imports, rec);
		}
		if (at_op(p, "("))
			p->pos++;
		while (tok(p)->kind == TK_NAME || at_op(p, "*")) {
			char *name;

			if (at_op(p, "*")) {
				el_cfg_note(p->r, p->path, line, "", "an import * (the names it brings are not known)");
				p->pos++;
				break;
			}
			name = tok_text(p, tok(p));
			p->pos++;
			if (at_name(p, "as") && peek(p, 1)->kind == TK_NAME) {
				free(name);
				name = tok_text(p, peek(p, 1));
				p->pos += 2;
			}
			bind(p, name, cv_new(p->r, CV_MODULE));
			free(name);
			if (!at_op(p, ","))
				break;
			p->pos++;
		}
	} else {
		while (tok(p)->kind == TK_NAME) {
			char *first = tok_text(p, tok(p)), *bound;

			el_buf_reset(&mod);
			while (tok(p)->kind == TK_NAME) {
				el_buf_put(&mod, p->s + tok(p)->start, tok(p)->len);
				p->pos++;
				if (!at_op(p, "."))
					break;
				el_buf_putc(&mod, '.');
				p->pos++;
			}
			bound = first;
			if (at_name(p, "as") && peek(p, 1)->kind == TK_NAME) {
				bound = tok_text(p, peek(p, 1));
				free(first);
				p->pos += 2;
			}
			{
				cJSON *rec = cJSON_CreateObject();

				cJSON_AddStringToObject(rec, "file", p->path);
				cJSON_AddNumberToObject(rec, "line", line);
				cJSON_AddStringToObject(rec, "module", el_buf_cstr(&mod));
				cJSON_AddItemToArray(p->r->imports, rec);
			}
			bind(p, bound, cv_new(p->r, CV_MODULE));
			free(bound);
			if (!at_op(p, ","))
				break;
			p->pos++;
		}
	}
out:
	el_buf_release(&mod);
	skip_statement(p);
}

/* with read_base(): from .a import * / from ..b import x, y as z */
static void read_base_line(parser *p)
{
	int line = tok(p)->line, dots = 0;
	el_buf mod = EL_BUF_INIT(1024);
	cv *names = NULL;

	if (!at_name(p, "from")) {
		el_cfg_note(p->r, p->path, line, "", "a statement inside read_base() that is not a from-import");
		goto out;
	}
	p->pos++;
	if (!from_module(p, &mod, &dots, false))
		goto out;
	names = p->r->load_module(p->r, p->path, line, dots, el_buf_cstr(&mod));
	if (p->r->fatal)
		goto out;
	if (at_op(p, "("))
		p->pos++;
	if (at_op(p, "*")) {
		/* import * brings the names that do not start with '_' */
		for (size_t i = 0; names && i < names->u.d->n; i++)
			if (names->u.d->keys[i][0] != '_') {
				bind(p, names->u.d->keys[i], names->u.d->vals[i]);
				names->u.d->vals[i] = NULL;
			}
		goto out;
	}
	while (tok(p)->kind == TK_NAME) {
		char *name = tok_text(p, tok(p)), *as = NULL;
		cv *v = names ? cv_dict_get(names, name) : NULL;

		p->pos++;
		if (at_name(p, "as") && peek(p, 1)->kind == TK_NAME) {
			as = tok_text(p, peek(p, 1));
			p->pos += 2;
		}
		if (v)
			bind(p, as ? as : name, cv_copy(p->r, v));
		else
			bind_unknown(p, as ? as : name, line,
				     names ? "a read_base() import of a name the base does not define"
					   : "a read_base() import from a base that is not evaluated");
		free(name);
		free(as);
		if (!at_op(p, ","))
			break;
		p->pos++;
	}
out:
	cv_free(names);
	el_buf_release(&mod);
	skip_statement(p);
}

static void skip_header(parser *p)
{
	skip_statement(p);
	while (!at_end(p) || at_op(p, ";"))
		p->pos++;
}

/* A compound statement that is not run: step over it, its assignments noted. */
static void skip_block(parser *p, const char *kw)
{
	int col = tok(p)->col, line = tok(p)->line;
	bool defines = !strcmp(kw, "def") || !strcmp(kw, "class");
	char what[128];

	if (defines && peek(p, 1)->kind == TK_NAME) {
		char *name = tok_text(p, peek(p, 1));

		snprintf(what, sizeof(what), "a %s statement (not run)", kw);
		bind_unknown(p, name, line, what);
		free(name);
	} else
		el_cfg_note(p->r, p->path, line, "", (snprintf(what, sizeof(what), "a%s %s statement (not run)",
							       strchr("aeiou", kw[0]) ? "n" : "", kw), what));
	/* the header, then every line indented under it */
	skip_header(p);
	for (;;) {
		while (tok(p)->kind == TK_NEWLINE)
			p->pos++;
		if (tok(p)->kind == TK_EOF || (tok(p)->bol && tok(p)->col <= col &&
					       !(at_name(p, "else") || at_name(p, "elif") || at_name(p, "except") ||
						 at_name(p, "finally"))))
			break;
		if (!defines && tok(p)->kind == TK_NAME && tok_is(p, peek(p, 1), TK_OP, "=")) {
			char *name = tok_text(p, tok(p));

			snprintf(what, sizeof(what), "an assignment inside a%s %s statement (not run)",
				 strchr("aeiou", kw[0]) ? "n" : "", kw);
			bind_unknown(p, name, tok(p)->line, what);
			free(name);
		}
		skip_header(p);
	}
}

static void read_base_block(parser *p)
{
	int col = tok(p)->col;
	size_t start;

	skip_header(p);
	for (;;) {
		while (tok(p)->kind == TK_NEWLINE)
			p->pos++;
		if (tok(p)->kind == TK_EOF || tok(p)->col <= col || p->r->fatal)
			break;
		if (at_op(p, ";")) { /* from .a import *; from .b import * */
			p->pos++;
			continue;
		}
		start = p->pos;
		read_base_line(p);
		if (p->pos == start) /* a line it cannot read stops where it is: step past it */
			p->pos++;
	}
}

static bool is_read_base(parser *p)
{
	return tok_is(p, peek(p, 1), TK_NAME, "read_base") && tok_is(p, peek(p, 2), TK_OP, "(") &&
	       tok_is(p, peek(p, 3), TK_OP, ")") && tok_is(p, peek(p, 4), TK_OP, ":");
}

/* A statement that is neither a plain assignment nor handled above. */
static void other_statement(parser *p)
{
	el_tok *t = tok(p);
	int line = t->line;
	char *name = t->kind == TK_NAME ? tok_text(p, t) : NULL;
	size_t save = p->pos;
	bool assigns = false, aug = false;
	char what[160];

	/* an assignment operator at this level? */
	for (int depth = 0; !(tok(p)->kind == TK_NEWLINE || tok(p)->kind == TK_EOF || (!depth && at_op(p, ";"))); p->pos++) {
		el_tok *x = tok(p);

		if (x->kind != TK_OP)
			continue;
		if (x->len == 1 && strchr("([{", p->s[x->start]))
			depth++;
		else if (x->len == 1 && strchr(")]}", p->s[x->start]))
			depth--;
		else if (!depth && (at_op(p, "=") || (x->len >= 2 && p->s[x->start + x->len - 1] == '=' &&
						     !at_op(p, "==") && !at_op(p, "!=") && !at_op(p, "<=") &&
						     !at_op(p, ">=")))) {
			assigns = true;
			aug = !at_op(p, "=");
			break;
		}
	}
	p->pos = save;
	if (t->kind == TK_STR && !assigns)
		; /* a docstring */
	else if (name && assigns) {
		el_tok *n1 = peek(p, 1);

		if (aug)
			snprintf(what, sizeof(what), "an augmented assignment to '%s'", name);
		else if (tok_is(p, n1, TK_OP, ",")) {
			snprintf(what, sizeof(what), "an unpacking assignment");
			/* every name before the '=' */
			for (; !at_op(p, "="); p->pos++)
				if (tok(p)->kind == TK_NAME) {
					char *n = tok_text(p, tok(p));

					bind_unknown(p, n, line, what);
					free(n);
				}
			p->pos = save;
			free(name);
			skip_statement(p);
			return;
		} else
			snprintf(what, sizeof(what), "an assignment into part of '%s'", name);
		bind_unknown(p, name, line, what);
	} else if (name && tok_is(p, peek(p, 1), TK_OP, ".") && cv_dict_get(p->names, name)) {
		/* x.update(...), x.merge(...): x may change */
		snprintf(what, sizeof(what), "a method call on '%s' (not run; it may change it)", name);
		bind_unknown(p, name, line, what);
	} else if (name && tok_is(p, peek(p, 1), TK_OP, "(")) {
		snprintf(what, sizeof(what), "a call to %s() (not run)", name);
		el_cfg_note(p->r, p->path, line, "", what);
	} else if (name && !strcmp(name, "del")) {
		for (p->pos++; tok(p)->kind == TK_NAME;) {
			char *n = tok_text(p, tok(p));

			cv_free(cv_dict_pop(p->names, n));
			free(n);
			p->pos++;
			if (!at_op(p, ","))
				break;
			p->pos++;
		}
	} else if (name && (!strcmp(name, "pass") || !strcmp(name, "global")))
		;
	else
		el_cfg_note(p->r, p->path, line, "", "a statement envlock does not evaluate");
	free(name);
	skip_statement(p);
}

static void statement(parser *p)
{
	el_tok *t = tok(p);
	static const char *const compound[] = { "if", "for", "while", "def", "class", "try", "with", "async", "match", NULL };
	char *targets[16];
	int nt = 0;

	if (t->kind == TK_NAME) {
		char *kw = tok_text(p, t);
		bool is_compound = false;

		for (int i = 0; compound[i]; i++)
			is_compound |= !strcmp(kw, compound[i]);
		if (!strcmp(kw, "match") && (tok_is(p, peek(p, 1), TK_OP, "=") || tok_is(p, peek(p, 1), TK_OP, ".")))
			is_compound = false;
		if (is_compound) {
			if (!strcmp(kw, "with") && is_read_base(p))
				read_base_block(p);
			else
				skip_block(p, kw);
			free(kw);
			return;
		}
		free(kw);
		if (at_name(p, "import") || at_name(p, "from")) {
			import_stmt(p);
			return;
		}
	}
	if (at_op(p, "@")) {
		skip_block(p, "decorated");
		return;
	}
	while (nt < 16 && tok(p)->kind == TK_NAME && tok_is(p, peek(p, 1), TK_OP, "=")) {
		targets[nt++] = tok_text(p, tok(p));
		p->pos += 2;
	}
	if (!nt) {
		other_statement(p);
		return;
	}
	{
		int line = tok(p)->line;
		cv *v;

		p->key[0] = '\0';
		key_push(p, targets[nt - 1]);
		v = expr(p);
		if (v && !at_end(p)) {
			cv_free(v);
			v = fail(p, line, "an expression envlock does not read past its first part");
		}
		if (!v && !p->r->fatal)
			note_failure(p);
		p->key[0] = '\0';
		for (int i = 0; i < nt; i++) {
			if (strcmp(targets[i], "_base_")) /* read first, by el_cfg_eval */
				bind(p, targets[i], !v ? cv_new(p->r, CV_UNKNOWN)
						       : i == nt - 1 ? v : cv_copy(p->r, v));
			else if (i == nt - 1)
				cv_free(v);
			free(targets[i]);
		}
	}
	skip_statement(p);
}

/* The value of the last top-level `_base_ = ...`, read before anything else. */
static cv *find_bases(parser *p, int *line)
{
	cv *bases = NULL;

	for (p->pos = 0; tok(p)->kind != TK_EOF && !p->r->fatal; p->pos++) {
		if (!(tok(p)->bol && tok(p)->col == 0 && at_name(p, "_base_") && tok_is(p, peek(p, 1), TK_OP, "=")))
			continue;
		*line = tok(p)->line;
		p->pos += 2;
		cv_free(bases);
		p->failed = false;
		bases = expr(p);
		if (!bases && !p->r->fatal) {
			el_cfg_fail(p->r, ENVLOCK_EPARSE, "%s:%d: a _base_ envlock cannot read: %s", p->path, *line, p->what);
			return NULL;
		}
	}
	p->pos = 0;
	return bases;
}

int el_cfg_eval(el_cfg_run *r, const char *path, const char *text, size_t len, el_cfg_file *out)
{
	el_toks ts = { 0 };
	parser p;
	size_t n;
	char *sub;
	cv *bases;
	int line = 0, err;

	memset(out, 0, sizeof(*out));
	if (!(sub = el_cfg_substitute(r, path, text, len, &n)))
		return r->fatal;
	if ((err = el_cfg_lex(r, path, sub, n, &ts))) {
		free(sub);
		free(ts.t);
		return err;
	}
	memset(&p, 0, sizeof(p));
	p.r = r;
	p.path = path;
	p.s = sub;
	p.t = ts.t;
	p.n = ts.n;
	out->names = p.names = cv_new(r, CV_DICT);
	bases = find_bases(&p, &line);
	if (bases && !r->fatal) {
		out->base = r->load_bases(r, path, line, bases);
		p.base = out->base;
	}
	cv_free(bases);
	while (!r->fatal && tok(&p)->kind != TK_EOF) {
		if (tok(&p)->kind == TK_NEWLINE || at_op(&p, ";")) {
			p.pos++;
			continue;
		}
		if (tok(&p)->bol && tok(&p)->col > 0) {
			syntax(&p, "an unexpected indent");
			break;
		}
		p.failed = false;
		p.depth = 0;
		statement(&p);
	}
	free(sub);
	free(ts.t);
	return r->fatal;
}

void el_cfg_file_release(el_cfg_file *f)
{
	cv_free(f->names);
	cv_free(f->base);
	f->names = f->base = NULL;
}
