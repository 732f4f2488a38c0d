/*
 * Config expressions, evaluated by recursive descent over the tokens:
 * literals, displays and comprehensions, names, attributes, subscripts
 * and slices, arithmetic, comparisons, boolean operators, conditional
 * expressions, f-strings, and calls to the builtins and methods configs
 * use (dict, range, len, enumerate, zip, update, append, pop, format...).
 * Nothing else is run: anything outside this subset fails softly and the
 * value it would give is "not evaluated", never guessed. Containers are
 * shared as Python shares them, so an edit through one name is seen
 * through every other.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/parser.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/xalloc.h"

/* tokens */

el_tok *tok(parser *p)
{
	return p->pos < p->limit ? &p->t[p->pos] : &p->eof;
}

el_tok *peek(parser *p, size_t k)
{
	return p->pos + k < p->limit ? &p->t[p->pos + k] : &p->eof;
}

bool tok_is(parser *p, const el_tok *t, tk_kind kind, const char *text)
{
	return t->kind == kind && (!text || (t->len == strlen(text) && !memcmp(p->s + t->start, text, t->len)));
}

bool at_op(parser *p, const char *op)
{
	return tok_is(p, tok(p), TK_OP, op);
}

bool at_name(parser *p, const char *name)
{
	return tok_is(p, tok(p), TK_NAME, name);
}

bool at_end(parser *p)
{
	return tok(p)->kind == TK_NEWLINE || tok(p)->kind == TK_EOF || at_op(p, ";");
}

char *tok_text(parser *p, const el_tok *t)
{
	return el_xstrndup(p->s + t->start, t->len);
}

/* failures */

static void set_failure(parser *p, const char *file, int line, const char *what)
{
	if (p->failed)
		return;
	p->failed = true;
	p->fail_line = line;
	snprintf(p->fail_file, sizeof(p->fail_file), "%s", file);
	snprintf(p->what, sizeof(p->what), "%s", what);
}

void *fail(parser *p, int line, const char *fmt, ...)
{
	char what[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	set_failure(p, p->path, line, what);
	return NULL;
}

void *fail_from(parser *p, const cv *u)
{
	if (u->kind == CV_UNKNOWN)
		set_failure(p, u->file, u->line, u->why);
	else
		set_failure(p, p->path, tok(p)->line, "an imported name");
	return NULL;
}

void *syntax(parser *p, const char *what)
{
	if (!p->r->fatal)
		el_cfg_fail(p->r, ENVLOCK_EPARSE, "%s:%d: %s", p->path, tok(p)->line, what);
	return NULL;
}

void *raises(parser *p, int line, const char *fmt, ...)
{
	char what[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!p->r->fatal)
		el_cfg_fail(p->r, ENVLOCK_EPARSE, "%s:%d: %s", p->path, line, what);
	return NULL;
}

bool stopped(parser *p)
{
	return p->failed || p->r->fatal;
}

cv *failure_value(parser *p)
{
	cv *u = cv_unknown(p->r, p->fail_file, p->fail_line, p->what);

	p->failed = false;
	return u;
}

bool usable(parser *p, cv *v)
{
	if (v->kind != CV_UNKNOWN && v->kind != CV_MODULE && v->kind != CV_BASEREF)
		return true;
	if (v->kind == CV_BASEREF)
		fail(p, v->line, "a {{_base_.%s}} used in an expression", v->u.str.s);
	else
		fail_from(p, v);
	cv_free(v);
	return false;
}

bool known(parser *p, const cv *v)
{
	if (v->kind != CV_UNKNOWN && v->kind != CV_MODULE && v->kind != CV_BASEREF)
		return true;
	if (v->kind == CV_BASEREF)
		fail(p, v->line, "a {{_base_.%s}} used in an expression", v->u.str.s);
	else
		fail_from(p, v);
	return false;
}

/* +1 for an opening bracket, -1 for a closing one, else 0 */
int bracket_delta(parser *p, const el_tok *t)
{
	if (t->kind != TK_OP || t->len != 1)
		return 0;
	return strchr("([{", p->s[t->start]) ? 1 : strchr(")]}", p->s[t->start]) ? -1 : 0;
}

bool is_aug_assign(parser *p, const el_tok *t)
{
	return t->kind == TK_OP && t->len >= 2 && p->s[t->start + t->len - 1] == '=' && !tok_is(p, t, TK_OP, "==") &&
	       !tok_is(p, t, TK_OP, ":=") && !tok_is(p, t, TK_OP, "!=") && !tok_is(p, t, TK_OP, "<=") &&
	       !tok_is(p, t, TK_OP, ">=");
}

/* skipping */

void skip_until(parser *p, unsigned stops)
{
	int depth = 0;

	for (; tok(p)->kind != TK_EOF; p->pos++) {
		el_tok *t = tok(p);

		if (t->kind == TK_NEWLINE && !depth)
			return;
		if (!depth && t->kind == TK_NAME &&
		    (((stops & SKIP_FOR) && tok_is(p, t, TK_NAME, "for")) ||
		     ((stops & SKIP_IF) && (tok_is(p, t, TK_NAME, "if") || tok_is(p, t, TK_NAME, "else"))) ||
		     ((stops & SKIP_BOOL) && (tok_is(p, t, TK_NAME, "and") || tok_is(p, t, TK_NAME, "or")))))
			return;
		if (t->kind != TK_OP)
			continue;
		if (t->len == 1 && strchr("([{", p->s[t->start]))
			depth++;
		else if (t->len == 1 && strchr(")]}", p->s[t->start])) {
			if (!depth)
				return;
			depth--;
		} else if (!depth && t->len == 1 && strchr(",;=", p->s[t->start]))
			return;
		else if (!depth && (stops & SKIP_COLON) && t->len == 1 && p->s[t->start] == ':')
			return;
		else if (!depth && is_aug_assign(p, t))
			return;
	}
}

cv *catch_value(parser *p, size_t start)
{
	if (p->r->fatal)
		return NULL;
	p->pos = start;
	skip_until(p, 0);
	return failure_value(p);
}

bool step(parser *p)
{
	if (p->r->fatal)
		return false;
	if (++p->r->steps > EL_CFG_MAX_STEPS) {
		el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: more than %d loop steps: evaluation stopped", p->path,
			    tok(p)->line, EL_CFG_MAX_STEPS);
		return false;
	}
	return true;
}

/* One level deeper into an expression; false (the run stopped) past the nesting limit. */
static bool deeper(parser *p, int line)
{
	if (++p->depth <= EL_CFG_MAX_DEPTH)
		return true;
	el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: an expression nested deeper than %d", p->path, line, EL_CFG_MAX_DEPTH);
	return false;
}

/* numbers */

static cv *number(parser *p)
{
	el_tok *t = tok(p);
	char buf[128], *end;
	size_t n = 0;
	bool is_float = false;

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
		return cv_int(p->r, (long long)u);
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
		return cv_float(p->r, f);
	}
	{
		long long i = strtoll(buf, &end, 10);
		cv *v;

		if (*end)
			return syntax(p, "a number that is not one");
		if (!errno)
			return cv_int(p->r, i);
		/* past 64 bits: kept as its digits, exact, for values (no arithmetic on it) */
		while (buf[0] == '0' && buf[1])
			memmove(buf, buf + 1, strlen(buf));
		v = cv_new(p->r, CV_BIGINT);
		v->u.str.s = el_xstrdup(buf);
		v->u.str.n = strlen(buf);
		v->file = el_xstrdup(p->path); /* where, should it be named for being too long for a lock */
		v->line = t->line;
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

/* A string the evaluation would make is past the cap: the whole evaluation stops, saying where. */
static cv *long_string(parser *p, int line)
{
	el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a string longer than %u bytes", p->path, line, EL_CFG_MAX_STR);
	return NULL;
}

/* Python's str() of a value evaluated: str, int, float, bool, None; false when it is something else (b: el_buf_add*). */
static bool str_of(parser *p, const cv *v, el_buf *b, int line)
{
	char num[EL_FMT_DOUBLE_SIZE + 4];

	switch (v->kind) {
	case CV_STR:
		el_buf_add(b, v->u.str.s, v->u.str.n);
		return true;
	case CV_BIGINT:
		el_buf_adds(b, v->u.str.s);
		return true;
	case CV_INT:
		snprintf(num, sizeof(num), "%lld", v->u.i);
		el_buf_adds(b, num);
		return true;
	case CV_BOOL:
		el_buf_adds(b, v->u.b ? "True" : "False");
		return true;
	case CV_NONE:
		el_buf_adds(b, "None");
		return true;
	case CV_FLOAT: {
		size_t n = el_fmt_double(num, v->u.f);

		if (!strpbrk(num, ".eni") && n + 3 < sizeof(num))
			strcat(num, ".0");
		el_buf_adds(b, num);
		return true;
	}
	case CV_UNKNOWN:
	case CV_MODULE:
		fail_from(p, v);
		return false;
	default:
		fail(p, line, "the text of a %s", cv_kind_name(v->kind));
		return false;
	}
}

static bool fstring_field(parser *p, const char *s, size_t n, el_buf *b, int line);

/* Append string token t's value to b; false (with p->failed) when it is not a plain str. */
static bool string_piece(parser *p, const el_tok *t, el_buf *b)
{
	const char *s = p->s + t->start, *end = s + t->len;
	bool raw = false, fmt = false;
	int err = 0;
	size_t q;

	for (; *s != '\'' && *s != '"'; s++) {
		if (*s == 'f' || *s == 'F')
			fmt = true;
		if (*s == 'b' || *s == 'B')
			return fail(p, t->line, "a bytes literal"), false;
		if (*s == 'r' || *s == 'R')
			raw = true;
	}
	q = (s + 2 < end && s[1] == s[0] && s[2] == s[0] && end - s >= 6) ? 3 : 1;
	s += q;
	end -= q;
	while (s < end && !err) {
		if (fmt && (*s == '{' || *s == '}')) {
			const char *close;
			int depth = 0;

			if (s + 1 < end && s[1] == *s) { /* {{ and }} are the braces themselves */
				err |= el_buf_putc(b, *s);
				s += 2;
				continue;
			}
			if (*s == '}')
				return syntax(p, "a single '}' in an f-string"), false;
			for (close = s + 1; close < end; close++) {
				if (*close == '{' || *close == '[' || *close == '(')
					depth++;
				else if ((*close == ']' || *close == ')') && depth)
					depth--;
				else if (*close == '}') {
					if (!depth)
						break;
					depth--;
				}
			}
			if (close >= end)
				return syntax(p, "an f-string field that is not closed"), false;
			if (!fstring_field(p, s + 1, (size_t)(close - s - 1), b, t->line))
				return false;
			s = close + 1;
			continue;
		}
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
	if (err || b->len > EL_CFG_MAX_STR) {
		el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a string longer than %u bytes", p->path, t->line, EL_CFG_MAX_STR);
		return false;
	}
	return true;
}

/* {expr}, {expr!r}, {expr!s} of an f-string: the expression read with the file's names */
static bool fstring_field(parser *p, const char *s, size_t n, el_buf *b, int line)
{
	el_toks ts = { 0 };
	parser sub;
	char conv = 0;
	size_t m = n;
	cv *v = NULL;
	bool ok = false;

	for (size_t i = 0; i < n; i++)
		if (s[i] == ':' || (s[i] == '!' && i + 1 < n && s[i + 1] != '=')) {
			if (s[i] == ':')
				return fail(p, line, "an f-string field with a format spec"), false;
			conv = i + 1 < n ? s[i + 1] : 0;
			m = i;
			break;
		}
	if (conv && conv != 's')
		return fail(p, line, "an f-string field with !%c", conv), false;
	if (el_cfg_lex(p->r, p->path, s, m, &ts)) {
		free(ts.t);
		return false;
	}
	sub = *p;
	sub.s = s;
	sub.t = ts.t;
	sub.n = ts.n;
	sub.pos = 0;
	sub.limit = ts.n - 1;
	sub.eof = ts.t[ts.n - 1];
	sub.failed = false;
	for (size_t i = 0; i < ts.n; i++)
		ts.t[i].line = line;
	v = test(&sub);
	if (v && tok(&sub)->kind != TK_EOF && tok(&sub)->kind != TK_NEWLINE) {
		cv_free(v);
		v = fail(&sub, line, "an f-string field envlock does not read");
	}
	if (v) {
		ok = str_of(&sub, v, b, line);
		cv_free(v);
	}
	if (sub.failed)
		set_failure(p, sub.fail_file, sub.fail_line, sub.what);
	p->star_unknown = sub.star_unknown;
	free(ts.t);
	return ok && !p->r->fatal;
}

static cv *string(parser *p)
{
	el_buf b = EL_BUF_INIT(EL_CFG_MAX_STR + 1);
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

static bool is_seq(const cv *v)
{
	return v->kind == CV_LIST || v->kind == CV_TUPLE;
}

static double as_float(const cv *v)
{
	return v->kind == CV_FLOAT ? v->u.f : v->kind == CV_INT ? (double)v->u.i : v->u.b;
}

static long long as_int(const cv *v)
{
	return v->kind == CV_INT ? v->u.i : v->u.b;
}

static cv *make_float(parser *p, int line, double f)
{
	if (!isfinite(f))
		return fail(p, line, "a float result that is not finite");
	return cv_float(p->r, f);
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
	return cv_int(p->r, acc);
}

static cv *concat(parser *p, int line, const cv *a, const cv *b)
{
	cv *v;

	if (a->kind == CV_STR) {
		if (a->u.str.n + b->u.str.n > EL_CFG_MAX_STR) {
			el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a string longer than %u bytes", p->path, line, EL_CFG_MAX_STR);
			return NULL;
		}
		v = cv_new(p->r, CV_STR);
		v->u.str.s = el_xmalloc(a->u.str.n + b->u.str.n + 1);
		memcpy(v->u.str.s, a->u.str.s, a->u.str.n);
		memcpy(v->u.str.s + a->u.str.n, b->u.str.s, b->u.str.n + 1);
		v->u.str.n = a->u.str.n + b->u.str.n;
		return v;
	}
	v = cv_shallow(p->r, a, a->kind);
	for (size_t i = 0; i < b->u.seq.n && !p->r->fatal; i++)
		cv_seq_push(p->r, v, cv_ref(b->u.seq.v[i]));
	return v;
}

/* seq * n: n references to each item, as Python repeats */
static cv *repeat(parser *p, int line, const cv *s, long long n)
{
	cv *v;

	if (n < 0)
		n = 0;
	if (s->kind == CV_STR) {
		el_buf b = EL_BUF_INIT(EL_CFG_MAX_STR);

		for (long long i = 0; i < n; i++)
			if (el_buf_put(&b, s->u.str.s, s->u.str.n)) {
				el_buf_release(&b);
				el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a string longer than %u bytes", p->path, line,
					    EL_CFG_MAX_STR);
				return NULL;
			}
		v = cv_str(p->r, b.data ? el_buf_cstr(&b) : "", b.len);
		el_buf_release(&b);
		return v;
	}
	if (s->u.seq.n && (unsigned long long)n > EL_CFG_MAX_NODES / s->u.seq.n) {
		el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a repetition longer than %d items", p->path, line, EL_CFG_MAX_NODES);
		return NULL;
	}
	v = cv_new(p->r, s->kind);
	for (long long i = 0; i < n && !p->r->fatal; i++)
		for (size_t k = 0; k < s->u.seq.n && !p->r->fatal; k++)
			cv_seq_push(p->r, v, cv_ref(s->u.seq.v[k]));
	return v;
}

/* a op b, consuming both */
cv *binop(parser *p, int line, const char *op, cv *a, cv *b)
{
	cv *v = NULL;

	if (!usable(p, a)) {
		cv_free(b);
		return NULL;
	}
	if (!usable(p, b)) {
		cv_free(a);
		return NULL;
	}
	if (!strcmp(op, "+") && a->kind == b->kind && (a->kind == CV_STR || is_seq(a))) {
		v = concat(p, line, a, b);
		goto done;
	}
	if (!strcmp(op, "*") && (a->kind == CV_STR || is_seq(a) || b->kind == CV_STR || is_seq(b))) {
		const cv *s = a->kind == CV_STR || is_seq(a) ? a : b, *n = s == a ? b : a;

		if (n->kind != CV_INT && n->kind != CV_BOOL)
			fail(p, line, "'*' on a %s and a %s", cv_kind_name(a->kind), cv_kind_name(b->kind));
		else
			v = repeat(p, line, s, as_int(n));
		goto done;
	}
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
		v = cv_int(p->r, z);
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

/* names */

static const char *const py_builtins[] = {
	"abs", "all", "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
	"classmethod", "compile", "complex", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec",
	"filter", "float", "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id",
	"input", "int", "isinstance", "issubclass", "iter", "len", "list", "locals", "map", "max", "memoryview",
	"min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "range", "repr", "reversed",
	"round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type",
	"vars", "zip", "__import__", "__build_class__", "Exception", "ValueError", "KeyError", "TypeError",
	"RuntimeError", "AttributeError", "NotImplementedError", "ImportError", "IndexError", "OSError",
	"FileNotFoundError", "AssertionError", "NotImplemented", "Ellipsis", "__name__", "__file__", NULL
};

static bool is_builtin(const char *name)
{
	for (int i = 0; py_builtins[i]; i++)
		if (!strcmp(py_builtins[i], name))
			return true;
	return false;
}

void bind(parser *p, const char *name, cv *v)
{
	cv_dict_set(p->r, p->n_locals ? p->locals[p->n_locals - 1] : p->names, name, v);
}

static cv *find_name(parser *p, const char *name)
{
	for (int i = p->n_locals - 1; i >= 0; i--) {
		cv *v = cv_dict_get(p->locals[i], name);

		if (v)
			return v;
	}
	return cv_dict_get(p->names, name);
}

cv *lookup_name(parser *p, const char *name, int line)
{
	cv *v;

	if (!strcmp(name, "_base_") && !find_name(p, name)) {
		if (!p->base)
			return p->star_unknown ? fail(p, line, "_base_ in a file without bases")
					       : raises(p, line, "name '_base_' is not defined (a file without _base_)");
		return cv_ref(p->base);
	}
	if ((v = find_name(p, name)))
		return cv_ref(v);
	if (!strcmp(name, "__name__")) /* mmengine runs a config with no __name__: the builtins module's is found */
		return cv_str(p->r, "builtins", 8);
	if (is_builtin(name))
		return fail(p, line, "the builtin %s", name);
	if (p->star_unknown)
		return fail(p, line, "the name '%s', which an import * not evaluated may define", name);
	return raises(p, line, "name '%s' is not defined", name);
}

/* containers */

static bool dict_key_text(parser *p, const cv *k, char **out, int line)
{
	if (k->kind == CV_STR) {
		*out = el_xstrdup(k->u.str.s);
		return true;
	}
	if (k->kind == CV_INT) { /* as json.dumps writes an int key */
		*out = el_xasprintf("%lld", k->u.i);
		return true;
	}
	if (k->kind == CV_UNKNOWN || k->kind == CV_MODULE)
		fail_from(p, k);
	else
		fail(p, line, "a dict key that is a %s", cv_kind_name(k->kind));
	return false;
}

bool store_item(parser *p, cv *c, const cv *key, cv *v, int line)
{
	char *k;

	if (c->kind == CV_DICT) {
		if (!dict_key_text(p, key, &k, line)) {
			cv_free(v);
			return false;
		}
		cv_dict_set(p->r, c, k, c->cfgdict ? (cv_hook(p->r, v)) : cv_ref(v));
		cv_free(v);
		free(k);
		return !p->r->fatal;
	}
	if (c->kind == CV_LIST && (key->kind == CV_INT || key->kind == CV_BOOL)) {
		long long i = as_int(key), n = (long long)c->u.seq.n;

		if (i < 0)
			i += n;
		if (i < 0 || i >= n) {
			cv_free(v);
			raises(p, line, "list assignment index out of range");
			return false;
		}
		cv_seq_set(p->r, c, (size_t)i, v);
		return !p->r->fatal;
	}
	cv_free(v);
	if (c->kind == CV_UNKNOWN || c->kind == CV_MODULE)
		fail_from(p, c);
	else if (key->kind == CV_UNKNOWN)
		fail_from(p, key);
	else
		fail(p, line, "an item assignment into a %s", cv_kind_name(c->kind));
	return false;
}

bool store_attr(parser *p, cv *c, const char *name, cv *v, int line)
{
	if (c->kind == CV_DICT && c->cfgdict) {
		cv_dict_set(p->r, c, name, cv_hook(p->r, v));
		cv_free(v);
		return !p->r->fatal;
	}
	cv_free(v);
	if (c->kind == CV_UNKNOWN || c->kind == CV_MODULE)
		fail_from(p, c);
	else
		raises(p, line, "'%s' object has no attribute '%s'", c->kind == CV_DICT ? "dict" : cv_kind_name(c->kind), name);
	return false;
}

cv *iter_items(parser *p, cv *v, int line)
{
	cv *items;

	if (!usable(p, v))
		return NULL;
	if (is_seq(v)) {
		return v; /* walked in place, as Python walks a list it may grow */
	} else if (v->kind == CV_DICT) {
		items = cv_shallow(p->r, v, CV_LIST);
	} else if (v->kind == CV_STR) {
		items = cv_new(p->r, CV_LIST);
		for (size_t i = 0; i < v->u.str.n && !p->r->fatal;) {
			size_t n = 1;
			unsigned char c = (unsigned char)v->u.str.s[i];

			n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
			if (i + n > v->u.str.n)
				n = v->u.str.n - i;
			cv_seq_push(p->r, items, cv_str(p->r, v->u.str.s + i, n));
			i += n;
		}
	} else {
		items = fail(p, line, "a loop over a %s", cv_kind_name(v->kind));
	}
	cv_free(v);
	return items;
}

/* arguments of a call: positional in args (a list), keywords in kw (a dict) */
typedef struct {
	cv *args, *kw;
	bool generator; /* f(x for x in y): one argument, a generator */
} call_args;

static cv *comprehension(parser *p, size_t elt, int kind, const char *close);

static void args_release(call_args *a)
{
	cv_free(a->args);
	cv_free(a->kw);
}

/* At '**': the dict after it (a reference), or NULL when it is not one that is known. */
static cv *splat_dict(parser *p, int line)
{
	cv *x;

	p->pos++;
	if (!(x = test(p)) || !usable(p, x))
		return NULL;
	if (x->kind != CV_DICT) {
		fail(p, line, "a ** of a %s", cv_kind_name(x->kind));
		cv_free(x);
		return NULL;
	}
	return x;
}

/* After '(': the arguments up to ')', consumed. false when failed (the call cannot be evaluated). */
static bool parse_args(parser *p, call_args *a)
{
	a->args = cv_new(p->r, CV_LIST);
	a->kw = cv_new(p->r, CV_DICT);
	a->generator = false;
	p->pos++;
	while (!at_op(p, ")") && !stopped(p)) {
		int line = tok(p)->line;
		size_t start = p->pos;

		if (at_op(p, "**")) {
			cv *x = splat_dict(p, line);

			if (!x)
				return false;
			for (size_t i = 0; i < x->u.d->n; i++) {
				if (cv_dict_find(a->kw, x->u.d->keys[i]) >= 0) {
					raises(p, line, "got multiple values for keyword argument '%s'", x->u.d->keys[i]);
					cv_free(x);
					return false;
				}
				cv_dict_set(p->r, a->kw, x->u.d->keys[i], cv_ref(x->u.d->vals[i]));
			}
			cv_free(x);
		} else if (at_op(p, "*")) {
			cv *x, *items;

			p->pos++;
			if (!(x = test(p)) || !(items = iter_items(p, x, line)))
				return false;
			for (size_t i = 0; i < items->u.seq.n; i++)
				cv_seq_push(p->r, a->args, cv_ref(items->u.seq.v[i]));
			cv_free(items);
		} else if (tok(p)->kind == TK_NAME && tok_is(p, peek(p, 1), TK_OP, "=")) {
			char *k = tok_text(p, tok(p));
			cv *v;

			p->pos += 2;
			if (cv_dict_find(a->kw, k) >= 0) {
				raises(p, line, "keyword argument repeated: %s", k);
				free(k);
				return false;
			}
			start = p->pos;
			if (!(v = test(p)))
				v = catch_value(p, start);
			if (v)
				cv_dict_set(p->r, a->kw, k, v);
			free(k);
		} else {
			cv *v;

			skip_until(p, SKIP_FOR);
			if (at_name(p, "for")) { /* f(x for x in y) */
				p->pos = start;
				skip_until(p, SKIP_FOR);
				v = comprehension(p, start, CV_LIST, ")");
				if (!v)
					return false;
				a->generator = true;
				cv_seq_push(p->r, a->args, v);
				return !p->r->fatal; /* comprehension consumed the ')' */
			}
			p->pos = start;
			if (!(v = test(p)))
				v = catch_value(p, start);
			if (v)
				cv_seq_push(p->r, a->args, v);
		}
		if (p->r->fatal)
			return false;
		if (at_op(p, ","))
			p->pos++;
		else if (!at_op(p, ")")) {
			syntax(p, "expected ',' or ')' in a call");
			return false;
		}
	}
	if (stopped(p))
		return false;
	p->pos++;
	return true;
}

static size_t n_args(const call_args *a)
{
	return a->args->u.seq.n;
}

static cv *arg(const call_args *a, size_t i)
{
	return i < a->args->u.seq.n ? a->args->u.seq.v[i] : NULL;
}

/* Every positional argument usable, and no keyword unless allowed. */
static bool plain_args(parser *p, const call_args *a, size_t min, size_t max, bool keywords, const char *fn, int line)
{
	if (n_args(a) < min || n_args(a) > max) {
		fail(p, line, "%s() with %zu arguments", fn, n_args(a));
		return false;
	}
	if (!keywords && a->kw->u.d->n) {
		fail(p, line, "%s() with a keyword argument", fn);
		return false;
	}
	for (size_t i = 0; i < n_args(a); i++)
		if (!known(p, arg(a, i)))
			return false;
	return true;
}

static cv *items_of(parser *p, const cv *v, int line)
{
	return iter_items(p, cv_ref((cv *)v), line);
}

/* dict(mapping or pairs, **kw) */
static cv *builtin_dict(parser *p, const call_args *a, int line)
{
	cv *d = cv_new(p->r, CV_DICT);

	if (n_args(a) > 1) {
		cv_free(d);
		return fail(p, line, "dict() with %zu positional arguments", n_args(a));
	}
	if (n_args(a) == 1) {
		cv *x = arg(a, 0);

		if (!known(p, x)) {
			cv_free(d);
			return NULL;
		}
		if (x->kind == CV_DICT) {
			for (size_t i = 0; i < x->u.d->n; i++)
				cv_dict_set(p->r, d, x->u.d->keys[i], cv_ref(x->u.d->vals[i]));
		} else {
			cv *items = items_of(p, x, line);

			for (size_t i = 0; items && i < items->u.seq.n; i++) {
				cv *pair = items->u.seq.v[i];
				char *k;

				if (!is_seq(pair) || pair->u.seq.n != 2) {
					fail(p, line, "dict() of items that are not pairs");
					break;
				}
				if (!dict_key_text(p, pair->u.seq.v[0], &k, line))
					break;
				cv_dict_set(p->r, d, k, cv_ref(pair->u.seq.v[1]));
				free(k);
			}
			cv_free(items);
			if (stopped(p)) {
				cv_free(d);
				return NULL;
			}
		}
	}
	for (size_t i = 0; i < a->kw->u.d->n; i++)
		cv_dict_set(p->r, d, a->kw->u.d->keys[i], cv_ref(a->kw->u.d->vals[i]));
	return d;
}

static cv *builtin_range(parser *p, const call_args *a, int line)
{
	long long v[3] = { 0, 0, 1 }, start, stop, stepv;
	cv *out;

	if (!plain_args(p, a, 1, 3, false, "range", line))
		return NULL;
	for (size_t i = 0; i < n_args(a); i++) {
		if (arg(a, i)->kind != CV_INT && arg(a, i)->kind != CV_BOOL)
			return fail(p, line, "range() of a %s", cv_kind_name(arg(a, i)->kind));
		v[i] = as_int(arg(a, i));
	}
	start = n_args(a) == 1 ? 0 : v[0];
	stop = n_args(a) == 1 ? v[0] : v[1];
	stepv = n_args(a) == 3 ? v[2] : 1;
	if (!stepv)
		return raises(p, line, "range() arg 3 must not be zero");
	out = cv_new(p->r, CV_LIST);
	for (long long i = start; (stepv > 0 ? i < stop : i > stop) && !p->r->fatal; i += stepv) {
		if (!step(p))
			break;
		cv_seq_push(p->r, out, cv_int(p->r, i));
		if ((stepv > 0 && i > LLONG_MAX - stepv) || (stepv < 0 && i < LLONG_MIN - stepv))
			break;
	}
	return out;
}

static int compare(parser *p, const cv *a, const cv *b, int line); /* <0, 0, >0; INT_MIN when failed */

static cv *builtin_minmax(parser *p, const call_args *a, bool max, int line)
{
	cv *items, *best = NULL;

	if (!plain_args(p, a, 1, SIZE_MAX, false, max ? "max" : "min", line))
		return NULL;
	items = n_args(a) == 1 ? items_of(p, arg(a, 0), line) : cv_shallow(p->r, a->args, CV_LIST);
	if (!items)
		return NULL;
	for (size_t i = 0; i < items->u.seq.n; i++) {
		cv *x = items->u.seq.v[i];
		int c;

		if (!known(p, x))
			break;
		if (!best) {
			best = x;
			continue;
		}
		if ((c = compare(p, x, best, line)) == INT_MIN)
			break;
		if (max ? c > 0 : c < 0)
			best = x;
	}
	if (!best && !stopped(p))
		raises(p, line, "%s() arg is an empty sequence", max ? "max" : "min");
	best = stopped(p) || !best ? NULL : cv_ref(best);
	cv_free(items);
	return best;
}

static int cmp_items(const void *x, const void *y, void *ctx);

static cv *builtin(parser *p, const char *name, const call_args *a, int line)
{
	cv *x, *out;

	if (!strcmp(name, "dict"))
		return builtin_dict(p, a, line);
	if (!strcmp(name, "range"))
		return builtin_range(p, a, line);
	if (!strcmp(name, "min") || !strcmp(name, "max"))
		return builtin_minmax(p, a, name[1] == 'a', line);
	if (!strcmp(name, "print")) {
		return cv_new(p->r, CV_NONE);
	}
	if (!strcmp(name, "list") || !strcmp(name, "tuple") || !strcmp(name, "sorted") || !strcmp(name, "reversed")) {
		if (!plain_args(p, a, 0, 1, false, name, line))
			return NULL;
		if (!n_args(a))
			return cv_new(p->r, name[0] == 't' ? CV_TUPLE : CV_LIST);
		if (!(x = items_of(p, arg(a, 0), line)))
			return NULL;
		out = cv_shallow(p->r, x, CV_LIST); /* a new list, never the argument itself */
		cv_free(x);
		x = out;
		if (name[0] == 't') {
			out = cv_shallow(p->r, x, CV_TUPLE);
			cv_free(x);
			return out;
		}
		if (name[0] == 'r') {
			for (size_t i = 0, j = x->u.seq.n ? x->u.seq.n - 1 : 0; i < j; i++, j--) {
				cv *t = x->u.seq.v[i];

				x->u.seq.v[i] = x->u.seq.v[j];
				x->u.seq.v[j] = t;
			}
		} else if (name[0] == 's') {
			for (size_t i = 0; i < x->u.seq.n; i++)
				if (!known(p, x->u.seq.v[i]) ||
				    (i && compare(p, x->u.seq.v[i], x->u.seq.v[0], line) == INT_MIN)) {
					cv_free(x);
					return NULL;
				}
			if (x->u.seq.n > 1)
				qsort_r(x->u.seq.v, x->u.seq.n, sizeof(cv *), cmp_items, p);
		}
		return x;
	}
	if (!strcmp(name, "len")) {
		if (!plain_args(p, a, 1, 1, false, name, line))
			return NULL;
		x = arg(a, 0);
		if (is_seq(x))
			return cv_int(p->r, (long long)x->u.seq.n);
		if (x->kind == CV_DICT)
			return cv_int(p->r, (long long)x->u.d->n);
		if (x->kind == CV_STR) {
			long long n = 0;

			for (size_t i = 0; i < x->u.str.n; i++)
				n += ((unsigned char)x->u.str.s[i] & 0xc0) != 0x80;
			return cv_int(p->r, n);
		}
		return fail(p, line, "len() of a %s", cv_kind_name(x->kind));
	}
	if (!strcmp(name, "enumerate") || !strcmp(name, "zip")) {
		bool en = name[0] == 'e';
		size_t n = SIZE_MAX;
		long long start = 0;
		cv *lists[16];
		size_t k = en ? 1 : n_args(a);

		if (!plain_args(p, a, en ? 1 : 0, en ? 2 : 16, false, name, line))
			return NULL;
		if (en && n_args(a) == 2) {
			if (arg(a, 1)->kind != CV_INT)
				return fail(p, line, "enumerate() from a %s", cv_kind_name(arg(a, 1)->kind));
			start = arg(a, 1)->u.i;
		}
		for (size_t i = 0; i < k; i++) {
			if (!(lists[i] = items_of(p, arg(a, i), line))) {
				while (i--)
					cv_free(lists[i]);
				return NULL;
			}
			if (lists[i]->u.seq.n < n)
				n = lists[i]->u.seq.n;
		}
		out = cv_new(p->r, CV_LIST);
		for (size_t i = 0; i < (k ? n : 0) && !p->r->fatal; i++) {
			cv *t = cv_new(p->r, CV_TUPLE);

			if (en)
				cv_seq_push(p->r, t, cv_int(p->r, start + (long long)i));
			for (size_t j = 0; j < k; j++)
				cv_seq_push(p->r, t, cv_ref(lists[j]->u.seq.v[i]));
			cv_seq_push(p->r, out, t);
		}
		for (size_t i = 0; i < k; i++)
			cv_free(lists[i]);
		return out;
	}
	if (!strcmp(name, "sum")) {
		cv *acc;

		if (!plain_args(p, a, 1, 2, false, name, line) || !(x = items_of(p, arg(a, 0), line)))
			return NULL;
		acc = n_args(a) == 2 ? cv_ref(arg(a, 1)) : cv_int(p->r, 0);
		for (size_t i = 0; i < x->u.seq.n && acc; i++)
			acc = binop(p, line, "+", acc, cv_ref(x->u.seq.v[i]));
		cv_free(x);
		return acc;
	}
	if (!strcmp(name, "abs") || !strcmp(name, "int") || !strcmp(name, "float") || !strcmp(name, "bool") ||
	    !strcmp(name, "str") || !strcmp(name, "round")) {
		if (!plain_args(p, a, !strcmp(name, "round") ? 1 : 0, !strcmp(name, "round") ? 2 : 1, false, name, line))
			return NULL;
		x = arg(a, 0);
		if (!strcmp(name, "bool"))
			return cv_bool(p->r, x && cv_truthy(x) == 1);
		if (!strcmp(name, "str")) {
			el_buf b = EL_BUF_INIT(EL_CFG_MAX_STR);

			if (x && !str_of(p, x, &b, line)) {
				el_buf_release(&b);
				return NULL;
			}
			if (el_buf_failed(&b)) {
				el_buf_release(&b);
				return long_string(p, line);
			}
			out = cv_str(p->r, b.data ? el_buf_cstr(&b) : "", b.len);
			el_buf_release(&b);
			return out;
		}
		if (!x)
			return !strcmp(name, "float") ? cv_float(p->r, 0) : !strcmp(name, "int") ? cv_int(p->r, 0)
											   : fail(p, line, "abs()");
		if (!is_num(x))
			return fail(p, line, "%s() of a %s", name, cv_kind_name(x->kind));
		if (!strcmp(name, "float"))
			return cv_float(p->r, as_float(x));
		if (!strcmp(name, "int") || (!strcmp(name, "round") && n_args(a) == 1)) {
			double f = as_float(x);

			if (x->kind != CV_FLOAT)
				return cv_int(p->r, as_int(x));
			if (name[0] == 'r') /* round half to even */
				f = f - floor(f) == 0.5 ? 2 * round(f / 2) : round(f);
			else
				f = trunc(f);
			if (!(f > (double)LLONG_MIN && f < (double)LLONG_MAX))
				return fail(p, line, "an integer result too large for 64 bits");
			return cv_int(p->r, (long long)f);
		}
		if (!strcmp(name, "round")) {
			char buf[64];

			if (arg(a, 1)->kind != CV_INT || arg(a, 1)->u.i < 0 || arg(a, 1)->u.i > 20)
				return fail(p, line, "round() to %s digits", cv_kind_name(arg(a, 1)->kind));
			if (x->kind != CV_FLOAT)
				return cv_int(p->r, as_int(x));
			/* the decimal nearest the exact binary value, ties to even, as Python rounds */
			snprintf(buf, sizeof(buf), "%.*f", (int)arg(a, 1)->u.i, x->u.f);
			return make_float(p, line, strtod(buf, NULL));
		}
		/* abs */
		if (x->kind == CV_FLOAT)
			return cv_float(p->r, fabs(x->u.f));
		if (as_int(x) == LLONG_MIN)
			return fail(p, line, "an integer result too large for 64 bits");
		return cv_int(p->r, llabs(as_int(x)));
	}
	return fail(p, line, "a call to %s()", name);
}

/* comparisons */

static int compare(parser *p, const cv *a, const cv *b, int line)
{
	if (is_num(a) && is_num(b)) {
		if (a->kind != CV_FLOAT && b->kind != CV_FLOAT)
			return as_int(a) < as_int(b) ? -1 : as_int(a) > as_int(b);
		return as_float(a) < as_float(b) ? -1 : as_float(a) > as_float(b);
	}
	if (a->kind == CV_STR && b->kind == CV_STR) {
		int c = strcmp(a->u.str.s, b->u.str.s);

		return c < 0 ? -1 : c > 0;
	}
	if (is_seq(a) && a->kind == b->kind) {
		for (size_t i = 0; i < a->u.seq.n && i < b->u.seq.n; i++) {
			int e = cv_equal(a->u.seq.v[i], b->u.seq.v[i]);

			if (e < 0) {
				fail(p, line, "a comparison of values not evaluated");
				return INT_MIN;
			}
			if (!e)
				return compare(p, a->u.seq.v[i], b->u.seq.v[i], line);
		}
		return a->u.seq.n < b->u.seq.n ? -1 : a->u.seq.n > b->u.seq.n;
	}
	fail(p, line, "an order comparison of a %s and a %s", cv_kind_name(a->kind), cv_kind_name(b->kind));
	return INT_MIN;
}

static int cmp_items(const void *x, const void *y, void *ctx)
{
	int c = compare(ctx, *(cv *const *)x, *(cv *const *)y, 0);

	return c == INT_MIN ? 0 : c;
}

/* methods */

static const char *const dict_methods[] = { "clear", "copy", "fromkeys", "get", "items", "keys", "pop", "popitem",
					    "setdefault", "update", "values", NULL };
static const char *const list_methods[] = { "append", "clear", "copy", "count", "extend", "index", "insert", "pop",
					    "remove", "reverse", "sort", NULL };

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

/* ConfigDict.update: a dict over a dict merges, anything else replaces (hooked) */
static void cfgdict_update(parser *p, cv *self, const cv *other, int depth)
{
	for (size_t i = 0; i < other->u.d->n && !p->r->fatal; i++) {
		const char *k = other->u.d->keys[i];
		cv *v = other->u.d->vals[i], *cur = cv_dict_get(self, k);

		if (cur && cur->kind == CV_DICT && v->kind == CV_DICT && depth < EL_CFG_MAX_DEPTH) {
			if (cur->cfgdict)
				cfgdict_update(p, cur, v, depth + 1);
			else
				for (size_t j = 0; j < v->u.d->n; j++)
					cv_dict_set(p->r, cur, v->u.d->keys[j], cv_ref(v->u.d->vals[j]));
		} else {
			cv_dict_set(p->r, self, k, cv_hook(p->r, v));
		}
	}
}

/* ConfigDict.merge's _merge_a_into_b on deep copies: a new value */
static cv *cfg_merge(parser *p, cv *a, cv *b, int depth)
{
	cv *out, *del;

	if (depth > EL_CFG_MAX_DEPTH) {
		el_cfg_fail(p->r, ENVLOCK_ELIMIT, "a value nested deeper than %d levels", EL_CFG_MAX_DEPTH);
		return NULL;
	}
	if (a->kind != CV_DICT)
		return cv_ref(a);
	if (b->kind != CV_DICT) {
		cv_free(cv_dict_pop(a, "_delete_"));
		return cv_ref(a);
	}
	if ((del = cv_dict_pop(a, "_delete_"))) {
		int t = cv_truthy(del);

		cv_free(del);
		if (t < 0)
			return fail(p, tok(p)->line, "a _delete_ that is not evaluated");
		if (t)
			b = NULL;
	}
	out = cv_new(p->r, CV_DICT);
	for (size_t i = 0; b && i < b->u.d->n && !stopped(p); i++) {
		cv *av = cv_dict_get(a, b->u.d->keys[i]), *m;

		m = av ? cfg_merge(p, av, b->u.d->vals[i], depth + 1) : cv_ref(b->u.d->vals[i]);
		if (m)
			cv_dict_set(p->r, out, b->u.d->keys[i], m);
	}
	for (size_t i = 0; i < a->u.d->n && !stopped(p); i++)
		if (!b || cv_dict_find(b, a->u.d->keys[i]) < 0) {
			cv *m = cfg_merge(p, a->u.d->vals[i], a->u.d->vals[i], depth + 1);

			if (m)
				cv_dict_set(p->r, out, a->u.d->keys[i], m);
		}
	if (stopped(p)) {
		cv_free(out);
		return NULL;
	}
	return out;
}

static cv *dict_method(parser *p, cv *d, const char *m, const call_args *a, int line)
{
	cv *x;

	if (!strcmp(m, "update")) {
		cv *other;

		if (n_args(a) > 1)
			return fail(p, line, "update() with %zu arguments", n_args(a));
		if (n_args(a) && !known(p, arg(a, 0)))
			return NULL;
		if (n_args(a) && arg(a, 0)->kind != CV_DICT)
			return fail(p, line, "update() from a %s", cv_kind_name(arg(a, 0)->kind));
		other = n_args(a) ? cv_shallow(p->r, arg(a, 0), CV_DICT) : cv_new(p->r, CV_DICT);
		for (size_t i = 0; i < a->kw->u.d->n; i++)
			cv_dict_set(p->r, other, a->kw->u.d->keys[i], cv_ref(a->kw->u.d->vals[i]));
		if (d->cfgdict)
			cfgdict_update(p, d, other, 0);
		else
			for (size_t i = 0; i < other->u.d->n; i++)
				cv_dict_set(p->r, d, other->u.d->keys[i], cv_ref(other->u.d->vals[i]));
		cv_free(other);
		return cv_new(p->r, CV_NONE);
	}
	if (!strcmp(m, "merge") && d->cfgdict) {
		cv *ca, *cb, *merged;

		if (!plain_args(p, a, 1, 1, false, m, line))
			return NULL;
		if (arg(a, 0)->kind != CV_DICT)
			return fail(p, line, "merge() from a %s", cv_kind_name(arg(a, 0)->kind));
		ca = cv_copy(p->r, arg(a, 0));
		cb = cv_copy(p->r, d);
		merged = ca && cb ? cfg_merge(p, ca, cb, 0) : NULL;
		cv_free(ca);
		cv_free(cb);
		if (!merged)
			return NULL;
		while (d->u.d->n)
			cv_free(cv_dict_pop(d, d->u.d->keys[d->u.d->n - 1]));
		for (size_t i = 0; i < merged->u.d->n; i++)
			cv_dict_set(p->r, d, merged->u.d->keys[i], cv_hook(p->r, merged->u.d->vals[i]));
		cv_free(merged);
		return cv_new(p->r, CV_NONE);
	}
	if (!plain_args(p, a, 0, 2, false, m, line))
		return NULL;
	if (!strcmp(m, "get") || !strcmp(m, "pop") || !strcmp(m, "setdefault")) {
		char *k;

		if (!n_args(a))
			return fail(p, line, "%s() with no key", m);
		if (!dict_key_text(p, arg(a, 0), &k, line))
			return NULL;
		x = cv_dict_get(d, k);
		if (!strcmp(m, "get"))
			x = x ? cv_ref(x) : n_args(a) > 1 ? cv_ref(arg(a, 1)) : cv_new(p->r, CV_NONE);
		else if (!strcmp(m, "setdefault")) {
			if (!x) {
				x = n_args(a) > 1 ? arg(a, 1) : NULL;
				cv_dict_set(p->r, d, k, x ? (d->cfgdict ? cv_hook(p->r, x) : cv_ref(x)) : cv_new(p->r, CV_NONE));
				x = cv_dict_get(d, k);
			}
			x = x ? cv_ref(x) : NULL;
		} else {
			x = cv_dict_pop(d, k);
			if (!x) /* ConfigDict.pop gives None for a missing key; dict.pop raises without a default */
				x = n_args(a) > 1 ? cv_ref(arg(a, 1))
				    : d->cfgdict ? cv_new(p->r, CV_NONE) : raises(p, line, "KeyError: '%s'", k);
		}
		free(k);
		return x;
	}
	if (!strcmp(m, "copy"))
		return d->cfgdict ? cv_hook(p->r, d) : cv_shallow(p->r, d, CV_DICT);
	if (!strcmp(m, "keys"))
		return cv_shallow(p->r, d, CV_LIST);
	if (!strcmp(m, "values") || !strcmp(m, "items")) {
		x = cv_new(p->r, CV_LIST);
		for (size_t i = 0; i < d->u.d->n; i++) {
			if (m[0] == 'v') {
				cv_seq_push(p->r, x, cv_ref(d->u.d->vals[i]));
				continue;
			}
			cv *t = cv_new(p->r, CV_TUPLE);

			cv_seq_push(p->r, t, cv_str(p->r, d->u.d->keys[i], strlen(d->u.d->keys[i])));
			cv_seq_push(p->r, t, cv_ref(d->u.d->vals[i]));
			cv_seq_push(p->r, x, t);
		}
		return x;
	}
	if (!strcmp(m, "clear")) {
		while (d->u.d->n)
			cv_free(cv_dict_pop(d, d->u.d->keys[d->u.d->n - 1]));
		return cv_new(p->r, CV_NONE);
	}
	if (!in_list(dict_methods, m) && !d->cfgdict)
		return raises(p, line, "'dict' object has no attribute '%s'", m);
	return fail(p, line, "a call to the dict method %s()", m);
}

static cv *list_method(parser *p, cv *l, const char *m, const call_args *a, int line)
{
	cv *x;

	if (l->kind == CV_TUPLE && strcmp(m, "index") && strcmp(m, "count"))
		return raises(p, line, "'tuple' object has no attribute '%s'", m);
	if (!strcmp(m, "append") || !strcmp(m, "insert")) {
		size_t at = l->u.seq.n;

		if (n_args(a) != (m[0] == 'a' ? 1u : 2u) || a->kw->u.d->n)
			return fail(p, line, "%s() with %zu arguments", m, n_args(a));
		if (m[0] == 'i') {
			long long i;

			if (!known(p, arg(a, 0)))
				return NULL;
			if (arg(a, 0)->kind != CV_INT)
				return fail(p, line, "insert() at a %s", cv_kind_name(arg(a, 0)->kind));
			i = arg(a, 0)->u.i;
			if (i < 0)
				i += (long long)l->u.seq.n;
			at = i < 0 ? 0 : (size_t)i > l->u.seq.n ? l->u.seq.n : (size_t)i;
		}
		if (cv_seq_push(p->r, l, cv_ref(arg(a, m[0] == 'a' ? 0 : 1))))
			return NULL;
		memmove(l->u.seq.v + at + 1, l->u.seq.v + at, (l->u.seq.n - 1 - at) * sizeof(cv *));
		l->u.seq.v[at] = arg(a, m[0] == 'a' ? 0 : 1);
		return cv_new(p->r, CV_NONE);
	}
	if (!strcmp(m, "extend")) {
		if (!plain_args(p, a, 1, 1, false, m, line) || !(x = items_of(p, arg(a, 0), line)))
			return NULL;
		for (size_t i = 0, n = x->u.seq.n; i < n && !p->r->fatal; i++) /* x.extend(x) doubles once */
			cv_seq_push(p->r, l, cv_ref(x->u.seq.v[i]));
		cv_free(x);
		return cv_new(p->r, CV_NONE);
	}
	if (!plain_args(p, a, 0, 2, false, m, line))
		return NULL;
	if (!strcmp(m, "pop")) {
		long long i = n_args(a) ? (arg(a, 0)->kind == CV_INT ? arg(a, 0)->u.i : LLONG_MIN) : -1;

		if (i == LLONG_MIN)
			return fail(p, line, "pop() of a %s index", cv_kind_name(arg(a, 0)->kind));
		if (i < 0)
			i += (long long)l->u.seq.n;
		if (i < 0 || i >= (long long)l->u.seq.n)
			return raises(p, line, "pop index out of range");
		x = l->u.seq.v[i];
		memmove(l->u.seq.v + i, l->u.seq.v + i + 1, (l->u.seq.n - (size_t)i - 1) * sizeof(cv *));
		l->u.seq.n--;
		return x;
	}
	if (!strcmp(m, "copy"))
		return cv_shallow(p->r, l, CV_LIST);
	if (!strcmp(m, "index") || !strcmp(m, "count") || !strcmp(m, "remove")) {
		long long count = 0;

		if (!n_args(a))
			return fail(p, line, "%s() with no value", m);
		for (size_t i = 0; i < l->u.seq.n; i++) {
			int e = cv_equal(l->u.seq.v[i], arg(a, 0));

			if (e < 0)
				return fail(p, line, "%s() over values not evaluated", m);
			if (!e)
				continue;
			if (m[0] == 'i')
				return cv_int(p->r, (long long)i);
			if (m[0] == 'r') {
				cv_free(l->u.seq.v[i]);
				memmove(l->u.seq.v + i, l->u.seq.v + i + 1, (l->u.seq.n - i - 1) * sizeof(cv *));
				l->u.seq.n--;
				return cv_new(p->r, CV_NONE);
			}
			count++;
		}
		return m[0] == 'c' ? cv_int(p->r, count) : raises(p, line, "%s(x): x not in list", m);
	}
	if (!strcmp(m, "reverse")) {
		for (size_t i = 0, j = l->u.seq.n ? l->u.seq.n - 1 : 0; i < j; i++, j--) {
			cv *t = l->u.seq.v[i];

			l->u.seq.v[i] = l->u.seq.v[j];
			l->u.seq.v[j] = t;
		}
		return cv_new(p->r, CV_NONE);
	}
	if (!strcmp(m, "clear")) {
		for (size_t i = 0; i < l->u.seq.n; i++)
			cv_free(l->u.seq.v[i]);
		l->u.seq.n = 0;
		return cv_new(p->r, CV_NONE);
	}
	if (!in_list(list_methods, m))
		return raises(p, line, "'list' object has no attribute '%s'", m);
	return fail(p, line, "a call to the list method %s()", m);
}

static cv *str_method(parser *p, const cv *s, const char *m, const call_args *a, int line)
{
	el_buf b = EL_BUF_INIT(EL_CFG_MAX_STR);
	cv *x = NULL;

	if (!plain_args(p, a, 0, SIZE_MAX, !strcmp(m, "format"), m, line))
		return NULL;
	if (!strcmp(m, "format")) {
		size_t next = 0;

		for (const char *c = s->u.str.s; *c && !stopped(p); c++) {
			const char *close;
			const cv *v;

			if ((*c == '{' || *c == '}') && c[1] == *c) {
				el_buf_addc(&b, *c++);
				continue;
			}
			if (*c != '{') {
				el_buf_addc(&b, *c);
				continue;
			}
			if (!(close = strchr(c, '}')) || memchr(c + 1, ':', (size_t)(close - c - 1)) ||
			    memchr(c + 1, '!', (size_t)(close - c - 1)) || memchr(c + 1, '.', (size_t)(close - c - 1)) ||
			    memchr(c + 1, '[', (size_t)(close - c - 1))) {
				fail(p, line, "a format() field envlock does not read");
				break;
			}
			if (close == c + 1)
				v = arg(a, next++);
			else if (strspn(c + 1, "0123456789") == (size_t)(close - c - 1))
				v = arg(a, strtoul(c + 1, NULL, 10));
			else {
				char *k = el_xstrndup(c + 1, (size_t)(close - c - 1));

				v = cv_dict_get(a->kw, k);
				free(k);
			}
			if (!v) {
				raises(p, line, "a format() field with no argument");
				break;
			}
			str_of(p, v, &b, line);
			c = close;
		}
		goto out;
	}
	if (!strcmp(m, "join")) {
		cv *items;

		if (n_args(a) != 1 || !(items = items_of(p, arg(a, 0), line)))
			goto out;
		for (size_t i = 0; i < items->u.seq.n && !stopped(p); i++) {
			cv *it = items->u.seq.v[i];

			if (it->kind != CV_STR) {
				it->kind == CV_UNKNOWN ? fail_from(p, it) : fail(p, line, "join() of a %s", cv_kind_name(it->kind));
				break;
			}
			if (i)
				el_buf_add(&b, s->u.str.s, s->u.str.n);
			el_buf_add(&b, it->u.str.s, it->u.str.n);
		}
		cv_free(items);
		goto out;
	}
	for (size_t i = 0; i < n_args(a); i++)
		if (arg(a, i)->kind != CV_STR && !(arg(a, i)->kind == CV_INT && !strcmp(m, "replace") && i == 2)) {
			fail(p, line, "%s() of a %s", m, cv_kind_name(arg(a, i)->kind));
			goto out;
		}
	if (!strcmp(m, "replace") && (n_args(a) == 2 || n_args(a) == 3) && arg(a, 0)->u.str.n) {
		const char *c = s->u.str.s, *hit;
		long long left = n_args(a) == 3 ? arg(a, 2)->u.i : -1;

		while ((hit = left ? strstr(c, arg(a, 0)->u.str.s) : NULL)) {
			el_buf_add(&b, c, (size_t)(hit - c));
			el_buf_add(&b, arg(a, 1)->u.str.s, arg(a, 1)->u.str.n);
			c = hit + arg(a, 0)->u.str.n;
			if (left > 0)
				left--;
		}
		el_buf_adds(&b, c);
	} else if ((!strcmp(m, "lower") || !strcmp(m, "upper")) && !n_args(a)) {
		for (size_t i = 0; i < s->u.str.n; i++) {
			char c = s->u.str.s[i];

			el_buf_addc(&b, m[0] == 'l' ? (c >= 'A' && c <= 'Z' ? c + 32 : c) : (c >= 'a' && c <= 'z' ? c - 32 : c));
		}
	} else if ((!strcmp(m, "strip") || !strcmp(m, "lstrip") || !strcmp(m, "rstrip")) && n_args(a) <= 1) {
		const char *set = n_args(a) ? arg(a, 0)->u.str.s : " \t\n\r\f\v";
		size_t i = 0, j = s->u.str.n;

		while (m[0] != 'r' && i < j && strchr(set, s->u.str.s[i]))
			i++;
		while (m[0] != 'l' && j > i && strchr(set, s->u.str.s[j - 1]))
			j--;
		el_buf_add(&b, s->u.str.s + i, j - i);
	} else if ((!strcmp(m, "startswith") || !strcmp(m, "endswith")) && n_args(a) == 1) {
		const cv *w = arg(a, 0);
		bool yes = w->u.str.n <= s->u.str.n &&
			   !memcmp(m[0] == 's' ? s->u.str.s : s->u.str.s + s->u.str.n - w->u.str.n, w->u.str.s, w->u.str.n);

		el_buf_release(&b);
		return cv_bool(p->r, yes);
	} else if (!strcmp(m, "split") && n_args(a) == 1 && arg(a, 0)->u.str.n) {
		const char *c = s->u.str.s, *hit, *sep = arg(a, 0)->u.str.s;

		x = cv_new(p->r, CV_LIST);
		while ((hit = strstr(c, sep)) && !p->r->fatal) {
			cv_seq_push(p->r, x, cv_str(p->r, c, (size_t)(hit - c)));
			c = hit + strlen(sep);
		}
		cv_seq_push(p->r, x, cv_str(p->r, c, strlen(c)));
		el_buf_release(&b);
		return x;
	} else {
		fail(p, line, "a call to the str method %s()", m);
	}
out:
	if (!stopped(p) && el_buf_failed(&b)) {
		el_buf_release(&b);
		return long_string(p, line);
	}
	if (!stopped(p))
		x = cv_str(p->r, b.data ? el_buf_cstr(&b) : "", b.len);
	el_buf_release(&b);
	return x;
}

static cv *call_method(parser *p, cv *recv, const char *m, const call_args *a, int line)
{
	if (recv->kind == CV_DICT)
		return dict_method(p, recv, m, a, line);
	if (is_seq(recv))
		return list_method(p, recv, m, a, line);
	if (recv->kind == CV_STR)
		return str_method(p, recv, m, a, line);
	if (recv->kind == CV_UNKNOWN || recv->kind == CV_MODULE)
		return fail_from(p, recv);
	return fail(p, line, "a call to the %s method %s()", cv_kind_name(recv->kind), m);
}

/* displays and comprehensions */

/*
 * A comprehension: elt is where its element starts, p->pos at its first
 * 'for'; the clauses run over values already known (each step counted),
 * binding their targets in a scope of their own. kind CV_LIST / CV_TUPLE
 * collects items, CV_DICT key: value pairs. p->pos ends past close.
 */
typedef struct {
	size_t target, iter; /* 'for' clauses: target tokens, then 'in' expression; 'if': iter is the condition */
	bool is_if;
} clause;


static void run_clauses(parser *p, const clause *cl, size_t n, size_t k, size_t elt, int kind, cv *out, size_t close)
{
	if (stopped(p))
		return;
	if (k == n) {
		int line;
		cv *key = NULL, *v;

		p->pos = elt;
		line = tok(p)->line;
		if (kind == CV_DICT) {
			char *ks;

			if (!(key = test(p)))
				return;
			if (!at_op(p, ":")) {
				cv_free(key);
				syntax(p, "expected ':' in a dict comprehension");
				return;
			}
			p->pos++;
			ks = NULL;
			if (!dict_key_text(p, key, &ks, line) || !(v = test(p))) {
				cv_free(key);
				free(ks);
				return;
			}
			cv_dict_set(p->r, out, ks, v);
			free(ks);
			cv_free(key);
			return;
		}
		if ((v = test(p)))
			cv_seq_push(p->r, out, v);
		return;
	}
	p->pos = cl[k].iter;
	if (cl[k].is_if) {
		cv *c = or_test(p);
		int t;

		if (!c)
			return;
		t = cv_truthy(c);
		if (t < 0)
			fail_from(p, c);
		cv_free(c);
		if (t == 1)
			run_clauses(p, cl, n, k + 1, elt, kind, out, close);
		return;
	}
	{
		cv *it = or_test(p), *items;
		size_t tend;

		if (!it || !(items = iter_items(p, it, tok(p)->line)))
			return;
		/* the target's tokens end at 'in' */
		p->pos = cl[k].target;
		while (!at_name(p, "in") && p->pos < close)
			p->pos++;
		tend = p->pos;
		for (size_t i = 0; i < items->u.seq.n && !stopped(p); i++) {
			if (!step(p))
				break;
			if (!assign_target(p, cl[k].target, tend, cv_ref(items->u.seq.v[i]), tok(p)->line))
				break;
			run_clauses(p, cl, n, k + 1, elt, kind, out, close);
		}
		cv_free(items);
	}
}

static cv *comprehension(parser *p, size_t elt, int kind, const char *close)
{
	clause cl[16];
	size_t n = 0, end;
	int line = tok(p)->line;
	cv *out, *scope;

	/* the clauses, up to the closing bracket */
	while (!at_op(p, close) && tok(p)->kind != TK_EOF) {
		if (n == 16) {
			skip_until(p, 0);
			p->pos++;
			return fail(p, line, "a comprehension of more than 16 clauses");
		}
		if (at_name(p, "for")) {
			cl[n].is_if = false;
			cl[n].target = ++p->pos;
			while (!at_name(p, "in") && !at_op(p, close) && tok(p)->kind != TK_EOF)
				p->pos++;
			if (!at_name(p, "in"))
				return syntax(p, "expected 'in' in a comprehension");
			cl[n++].iter = ++p->pos;
		} else if (at_name(p, "if")) {
			cl[n].is_if = true;
			cl[n++].iter = ++p->pos;
		} else if (at_name(p, "async")) {
			skip_until(p, 0);
			p->pos++;
			return fail(p, line, "an async comprehension");
		} else
			return syntax(p, "expected 'for' or 'if' in a comprehension");
		skip_until(p, SKIP_FOR | SKIP_IF);
		if (at_name(p, "else")) /* a conditional expression inside: step over it */
			skip_until(p, SKIP_FOR);
	}
	end = p->pos;
	if (p->n_locals == EL_CFG_MAX_SCOPES) {
		p->pos = end + 1;
		return fail(p, line, "comprehensions nested deeper than %d", EL_CFG_MAX_SCOPES);
	}
	out = cv_new(p->r, kind == CV_DICT ? CV_DICT : CV_LIST);
	scope = cv_new(p->r, CV_DICT);
	p->locals[p->n_locals++] = scope;
	run_clauses(p, cl, n, 0, elt, kind, out, end);
	p->n_locals--;
	cv_free(scope);
	p->pos = end + 1;
	if (stopped(p)) {
		cv_free(out);
		return NULL;
	}
	if (kind == CV_TUPLE) {
		cv *t = cv_shallow(p->r, out, CV_TUPLE);

		cv_free(out);
		return t;
	}
	return out;
}

/* Whether the element starting at p->pos is followed by 'for' at this level (a comprehension). */
static bool comprehension_ahead(parser *p, unsigned stops)
{
	size_t at = p->pos;
	bool yes;

	skip_until(p, SKIP_FOR | stops);
	yes = at_name(p, "for");
	p->pos = at;
	return yes;
}

static cv *list_or_tuple(parser *p, cv_kind kind, const char *close)
{
	cv *v;
	size_t start;

	p->pos++;
	start = p->pos;
	if (!at_op(p, close) && comprehension_ahead(p, 0)) {
		skip_until(p, SKIP_FOR);
		return comprehension(p, start, kind, close);
	}
	v = cv_new(p->r, kind);
	while (!at_op(p, close)) {
		cv *item;
		int line = tok(p)->line;

		start = p->pos;
		if (at_op(p, "*")) {
			cv *items;

			p->pos++;
			if (!(item = test(p)) || !(items = iter_items(p, item, line))) {
				cv_free(v);
				return NULL;
			}
			for (size_t i = 0; i < items->u.seq.n; i++)
				cv_seq_push(p->r, v, cv_ref(items->u.seq.v[i]));
			cv_free(items);
		} else {
			if (!(item = test(p)) && !(item = catch_value(p, start))) {
				cv_free(v);
				return NULL;
			}
			if (cv_seq_push(p->r, v, item)) {
				cv_free(v);
				return NULL;
			}
			if (kind == CV_TUPLE && v->u.seq.n == 1 && at_op(p, close)) {
				/* (x) is x, not a tuple */
				cv *only = cv_ref(v->u.seq.v[0]);

				cv_free(v);
				p->pos++;
				return only;
			}
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

static cv *dict_display(parser *p)
{
	cv *d;
	size_t start;

	p->pos++;
	start = p->pos;
	if (!at_op(p, "}") && !at_op(p, "**") && comprehension_ahead(p, 0)) {
		size_t at;
		bool is_dict;

		/* {k: v for ...} or {x for ...}: a ':' at this level before the 'for' says which */
		skip_until(p, SKIP_COLON | SKIP_FOR);
		is_dict = at_op(p, ":");
		at = p->pos;
		(void)at;
		skip_until(p, SKIP_FOR);
		if (!is_dict) {
			comprehension(p, start, CV_LIST, "}");
			return fail(p, tok(p)->line, "a set comprehension");
		}
		return comprehension(p, start, CV_DICT, "}");
	}
	d = cv_new(p->r, CV_DICT);
	while (!at_op(p, "}")) {
		int line = tok(p)->line;

		start = p->pos;
		if (at_op(p, "**")) {
			cv *x = splat_dict(p, line);

			if (!x)
				goto bad;
			for (size_t i = 0; i < x->u.d->n; i++)
				cv_dict_set(p->r, d, x->u.d->keys[i], cv_ref(x->u.d->vals[i]));
			cv_free(x);
		} else {
			cv *k = test(p), *v;
			char *key;

			if (!k)
				goto bad;
			if (!at_op(p, ":")) {
				cv_free(k);
				fail(p, line, "a set");
				goto bad;
			}
			p->pos++;
			if (!dict_key_text(p, k, &key, line)) {
				cv_free(k);
				goto bad;
			}
			cv_free(k);
			start = p->pos;
			if (!(v = test(p)) && !(v = catch_value(p, start))) {
				free(key);
				goto bad;
			}
			cv_dict_set(p->r, d, key, v);
			free(key);
		}
		if (p->r->fatal)
			goto bad;
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

/* primary: an atom and its trailers */

static const char *const keywords[] = { "lambda", "not", "await", "yield", "if", "else", "for", "in", "is",
					"and", "or", "import", "from", "def", "class", "return", "del", "pass",
					"while", "with", "try", "except", "raise", "global", "nonlocal", "assert",
					"break", "continue", "elif", "finally", "as", NULL };

/* The callee's text for a message: "foo", "x.update" (cut short). */
static void callee_text(parser *p, size_t from, char *out, size_t size)
{
	size_t a = p->t[from].start, b = tok(p)->start, n = b > a ? b - a : 0;

	if (n > 60)
		n = 60;
	snprintf(out, size, "%.*s", (int)n, p->s + a);
}

static cv *subscript(parser *p, cv *x, int line)
{
	cv *idx[3] = { NULL, NULL, NULL }, *v = NULL;
	int parts = 0;
	bool slice = false;

	p->pos++; /* [ */
	for (;;) {
		if (!at_op(p, ":") && !at_op(p, "]")) {
			if (!(idx[parts] = test(p)) || !usable(p, idx[parts])) {
				idx[parts] = NULL;
				goto out;
			}
		}
		if (at_op(p, ":") && parts < 2) {
			slice = true;
			parts++;
			p->pos++;
			continue;
		}
		break;
	}
	if (!at_op(p, "]")) {
		v = at_op(p, ",") ? fail(p, line, "a tuple index") : syntax(p, "expected ']'");
		goto out;
	}
	p->pos++;
	if (slice) {
		long long n, start, stop, st = 1;
		cv *outv;

		if (!is_seq(x) && x->kind != CV_STR) {
			v = fail(p, line, "a slice of a %s", cv_kind_name(x->kind));
			goto out;
		}
		for (int i = 0; i < 3; i++)
			if (idx[i] && idx[i]->kind != CV_INT && idx[i]->kind != CV_NONE) {
				v = fail(p, line, "a slice by a %s", cv_kind_name(idx[i]->kind));
				goto out;
			}
		if (x->kind == CV_STR)
			for (size_t i = 0; i < x->u.str.n; i++)
				if ((unsigned char)x->u.str.s[i] >= 0x80) {
					v = fail(p, line, "a slice of a non-ASCII str");
					goto out;
				}
		n = x->kind == CV_STR ? (long long)x->u.str.n : (long long)x->u.seq.n;
		if (idx[2] && idx[2]->kind == CV_INT)
			st = idx[2]->u.i;
		if (!st) {
			v = raises(p, line, "slice step cannot be zero");
			goto out;
		}
		start = idx[0] && idx[0]->kind == CV_INT ? idx[0]->u.i : st > 0 ? 0 : n - 1;
		stop = idx[1] && idx[1]->kind == CV_INT ? idx[1]->u.i : st > 0 ? n : -n - 1;
		if (idx[0] && idx[0]->kind == CV_INT && start < 0)
			start += n;
		if (idx[1] && idx[1]->kind == CV_INT && stop < 0)
			stop += n;
		if (st > 0) {
			start = start < 0 ? 0 : start > n ? n : start;
			stop = stop < 0 ? 0 : stop > n ? n : stop;
		} else {
			start = start < -1 ? -1 : start > n - 1 ? n - 1 : start;
			stop = stop < -1 ? -1 : stop > n - 1 ? n - 1 : stop;
		}
		if (x->kind == CV_STR) {
			el_buf b = EL_BUF_INIT(EL_CFG_MAX_STR);

			for (long long i = start; st > 0 ? i < stop : i > stop; i += st)
				el_buf_addc(&b, x->u.str.s[i]);
			if (el_buf_failed(&b)) {
				el_buf_release(&b);
				v = long_string(p, line);
				goto out;
			}
			v = cv_str(p->r, b.data ? el_buf_cstr(&b) : "", b.len);
			el_buf_release(&b);
			goto out;
		}
		outv = cv_new(p->r, x->kind);
		for (long long i = start; (st > 0 ? i < stop : i > stop) && !p->r->fatal; i += st)
			cv_seq_push(p->r, outv, cv_ref(x->u.seq.v[i]));
		v = outv;
		goto out;
	}
	if (x->kind == CV_DICT) {
		char *k;
		cv *got;

		if (!dict_key_text(p, idx[0], &k, line))
			goto out;
		got = cv_dict_get(x, k);
		v = got ? cv_ref(got) : raises(p, line, "KeyError: '%s'", k);
		free(k);
	} else if ((is_seq(x) || x->kind == CV_STR) && (idx[0]->kind == CV_INT || idx[0]->kind == CV_BOOL)) {
		long long i = as_int(idx[0]), n = x->kind == CV_STR ? (long long)x->u.str.n : (long long)x->u.seq.n;

		if (i < 0)
			i += n;
		if (i < 0 || i >= n)
			v = raises(p, line, "IndexError: index out of range");
		else if (x->kind == CV_STR)
			v = (unsigned char)x->u.str.s[i] < 0x80 ? cv_str(p->r, x->u.str.s + i, 1)
								  : fail(p, line, "an index into a non-ASCII str");
		else
			v = cv_ref(x->u.seq.v[i]);
	} else {
		v = fail(p, line, "a %s index into a %s", cv_kind_name(idx[0]->kind), cv_kind_name(x->kind));
	}
out:
	for (int i = 0; i < 3; i++)
		cv_free(idx[i]);
	return v;
}

static cv *primary(parser *p)
{
	el_tok *t = tok(p);
	size_t start = p->pos;
	cv *v = NULL;
	char what[80];

	if (t->kind == TK_NAME) {
		char *name = tok_text(p, t);
		bool kw = in_list(keywords, name);

		if (kw) {
			v = !strcmp(name, "lambda") ? fail(p, t->line, "a lambda")
			    : !strcmp(name, "yield") || !strcmp(name, "await") ? fail(p, t->line, "the keyword '%s'", name)
									       : syntax(p, "a keyword where a value belongs");
			free(name);
			return v;
		}
		if (!strcmp(name, "True") || !strcmp(name, "False")) {
			v = cv_bool(p->r, name[0] == 'T');
			p->pos++;
		} else if (!strcmp(name, "None")) {
			v = cv_new(p->r, CV_NONE);
			p->pos++;
		} else if (tok_is(p, peek(p, 1), TK_OP, ":=")) {
			free(name);
			return fail(p, t->line, "an assignment expression (:=)");
		} else if (tok_is(p, peek(p, 1), TK_OP, "(") && !find_name(p, name) &&
			   !(p->base && !strcmp(name, "_base_"))) {
			call_args a;
			int line = t->line;

			p->pos++;
			if (!is_builtin(name) && !p->star_unknown) {
				raises(p, line, "name '%s' is not defined", name);
				free(name);
				return NULL;
			}
			if (parse_args(p, &a))
				v = builtin(p, name, &a, line);
			args_release(&a);
			free(name);
			if (!v)
				return NULL;
			goto trailers;
		} else {
			cv *m = find_name(p, name);

			if (m && m->kind == CV_MODULE) {
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
			}
			v = lookup_name(p, name, t->line);
			p->pos++;
		}
		free(name);
		if (!v)
			return NULL;
	} else if (t->kind == TK_NUM)
		v = number(p);
	else if (t->kind == TK_STR)
		v = string(p);
	else if (at_op(p, "("))
		v = list_or_tuple(p, CV_TUPLE, ")");
	else if (at_op(p, "["))
		v = list_or_tuple(p, CV_LIST, "]");
	else if (at_op(p, "{"))
		v = dict_display(p);
	else if (at_op(p, "..."))
		return fail(p, t->line, "an Ellipsis (...)");
	else
		return syntax(p, "expected a value");
	if (!v)
		return NULL;
trailers:
	for (;;) {
		int line = tok(p)->line;

		if (at_op(p, "(")) {
			callee_text(p, start, what, sizeof(what));
			cv_free(v);
			return fail(p, line, "a call to %s()", what);
		}
		if (at_op(p, ".")) {
			el_tok *a = peek(p, 1);
			char *attr;
			cv *got;

			if (a->kind != TK_NAME) {
				cv_free(v);
				return syntax(p, "expected a name after '.'");
			}
			if (!usable(p, v))
				return NULL;
			attr = tok_text(p, a);
			p->pos += 2;
			if (at_op(p, "(")) {
				call_args ca;
				cv *res = NULL;

				if (parse_args(p, &ca))
					res = call_method(p, v, attr, &ca, line);
				args_release(&ca);
				free(attr);
				cv_free(v);
				if (!res)
					return NULL;
				v = res;
				continue;
			}
			if (v->kind != CV_DICT || !v->cfgdict) {
				bool plain_dict = v->kind == CV_DICT;

				callee_text(p, start, what, sizeof(what));
				cv_free(v);
				v = plain_dict ? raises(p, line, "'dict' object has no attribute '%s'", attr)
					       : fail(p, line, "an attribute of %s", what);
				free(attr);
				return v;
			}
			got = cv_dict_get(v, attr);
			if (!got) {
				callee_text(p, start, what, sizeof(what));
				raises(p, line, "'ConfigDict' object has no attribute '%s' (%s)", attr, what);
				free(attr);
				cv_free(v);
				return NULL;
			}
			free(attr);
			got = cv_ref(got);
			cv_free(v);
			v = got;
			continue;
		}
		if (at_op(p, "[")) {
			cv *got;

			if (!usable(p, v))
				return NULL;
			got = subscript(p, v, line);
			cv_free(v);
			if (!got)
				return NULL;
			v = got;
			continue;
		}
		break;
	}
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
	if (!deeper(p, line))
		return NULL;
	v = unary(p);
	p->depth--;
	if (!v || !usable(p, v))
		return NULL;
	if (v->kind == CV_BIGINT && op != '~') { /* -9223372036854775808 is a 64-bit integer; longer ones stay digits */
		const char *d = v->u.str.s;
		bool neg = d[0] == '-';
		cv *c;

		if (op == '+')
			return v;
		if (!neg && !strcmp(d, "9223372036854775808"))
			c = cv_int(p->r, LLONG_MIN);
		else {
			c = cv_new(p->r, CV_BIGINT);
			c->u.str.s = neg ? el_xstrdup(d + 1) : el_xasprintf("-%s", d);
			c->u.str.n = strlen(c->u.str.s);
			c->file = v->file ? el_xstrdup(v->file) : NULL;
			c->line = v->line;
		}
		cv_free(v);
		return c;
	}
	if (!is_num(v) || (op == '~' && v->kind == CV_FLOAT)) {
		fail(p, line, "a unary '%c' on a %s", op, cv_kind_name(v->kind));
		cv_free(v);
		return NULL;
	}
	if (v->kind == CV_BOOL || v->refs > 1) {
		cv *c = v->kind == CV_FLOAT ? cv_float(p->r, v->u.f) : cv_int(p->r, as_int(v));

		cv_free(v);
		v = c;
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
		if (!strcmp(op, "%") && a->kind == CV_STR) {
			cv_free(a);
			cv_free(b);
			return fail(p, line, "a %% format");
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
	if (a && (at_op(p, "|") || at_op(p, "&") || at_op(p, "^") || at_op(p, "<<") || at_op(p, ">>"))) {
		cv_free(a);
		return fail(p, tok(p)->line, "a bitwise operator");
	}
	return a;
}

/* a in b */
static int contains_value(parser *p, const cv *item, const cv *in, int line)
{
	if (in->kind == CV_DICT) {
		char *k;
		int r;

		if (item->kind != CV_STR && item->kind != CV_INT)
			return 0;
		if (!dict_key_text(p, item, &k, line))
			return -1;
		r = cv_dict_find(in, k) >= 0;
		free(k);
		return r;
	}
	if (is_seq(in)) {
		for (size_t i = 0; i < in->u.seq.n; i++) {
			int e = cv_equal(item, in->u.seq.v[i]);

			if (e)
				return e;
		}
		return 0;
	}
	if (in->kind == CV_STR && item->kind == CV_STR)
		return strstr(in->u.str.s, item->u.str.s) != NULL;
	fail(p, line, "'in' on a %s", cv_kind_name(in->kind));
	return -1;
}

static cv *comparison(parser *p)
{
	cv *a = arith(p);
	int result = 1;

	while (a) {
		const char *op = NULL;
		int line = tok(p)->line, r = -1;
		cv *b;

		if (at_op(p, "==") || at_op(p, "!=") || at_op(p, "<") || at_op(p, ">") || at_op(p, "<=") || at_op(p, ">="))
			op = at_op(p, "==") ? "==" : at_op(p, "!=") ? "!=" : at_op(p, "<=") ? "<=" : at_op(p, ">=") ? ">="
											     : at_op(p, "<") ? "<" : ">";
		else if (at_name(p, "in"))
			op = "in";
		else if (at_name(p, "not") && tok_is(p, peek(p, 1), TK_NAME, "in")) {
			op = "not in";
			p->pos++;
		} else if (at_name(p, "is")) {
			op = tok_is(p, peek(p, 1), TK_NAME, "not") ? "is not" : "is";
			if (op[2])
				p->pos++;
		}
		if (!op)
			break;
		p->pos++;
		if (!(b = arith(p))) {
			cv_free(a);
			return NULL;
		}
		if (!known(p, a) || !known(p, b)) {
			cv_free(a);
			cv_free(b);
			return NULL;
		}
		if (!strcmp(op, "==") || !strcmp(op, "!="))
			r = cv_equal(a, b) < 0 ? -1 : (cv_equal(a, b) == 1) == (op[0] == '=');
		else if (!strcmp(op, "in") || !strcmp(op, "not in")) {
			r = contains_value(p, a, b, line);
			if (r >= 0 && op[0] == 'n')
				r = !r;
		} else if (!strcmp(op, "is") || !strcmp(op, "is not")) {
			/* identity: known for None, True and False, and for one value held twice */
			if (a == b)
				r = 1;
			else if (a->kind == CV_NONE || b->kind == CV_NONE || a->kind == CV_BOOL || b->kind == CV_BOOL)
				r = a->kind == b->kind && (a->kind == CV_NONE || a->u.b == b->u.b);
			else
				r = (a->kind == CV_DICT || is_seq(a) || b->kind == CV_DICT || is_seq(b)) ? 0 : -1;
			if (r >= 0 && op[2])
				r = !r;
		} else {
			int c = compare(p, a, b, line);

			if (c != INT_MIN)
				r = op[0] == '<' ? (op[1] ? c <= 0 : c < 0) : (op[1] ? c >= 0 : c > 0);
		}
		cv_free(a);
		if (r < 0) {
			cv_free(b);
			return stopped(p) ? NULL : fail(p, line, "a comparison envlock cannot decide");
		}
		result = result && r;
		a = b;
		if (!(at_op(p, "==") || at_op(p, "!=") || at_op(p, "<") || at_op(p, ">") || at_op(p, "<=") ||
		      at_op(p, ">=") || at_name(p, "in") || at_name(p, "not") || at_name(p, "is"))) {
			cv_free(a);
			return cv_bool(p->r, result);
		}
	}
	return a;
}

static cv *not_test(parser *p)
{
	int line = tok(p)->line, t;
	cv *v;

	if (!at_name(p, "not"))
		return comparison(p);
	p->pos++;
	if (!deeper(p, line))
		return NULL;
	v = not_test(p);
	p->depth--;
	if (!v || !usable(p, v))
		return NULL;
	t = cv_truthy(v);
	cv_free(v);
	return t < 0 ? fail(p, line, "'not' of a value not evaluated") : cv_bool(p->r, !t);
}

static cv *bool_chain(parser *p, bool is_or)
{
	cv *a = is_or ? bool_chain(p, false) : not_test(p);
	const char *word = is_or ? "or" : "and";

	while (a && at_name(p, word)) {
		int t;

		if (!known(p, a)) {
			cv_free(a);
			return NULL;
		}
		t = cv_truthy(a);
		p->pos++;
		if (t < 0) {
			cv_free(a);
			return fail(p, tok(p)->line, "'%s' of a value not evaluated", word);
		}
		if (is_or ? t : !t) { /* decided: the rest is not evaluated, as Python does not */
			for (;;) {
				skip_until(p, SKIP_IF | SKIP_BOOL);
				if (at_name(p, "and") && is_or) { /* a or b and c: b and c is one operand */
					p->pos++;
					continue;
				}
				if (!at_name(p, word))
					break;
				p->pos++;
			}
			return a;
		}
		cv_free(a);
		a = is_or ? bool_chain(p, false) : not_test(p);
	}
	return a;
}

cv *or_test(parser *p)
{
	return bool_chain(p, true);
}

cv *test(parser *p)
{
	int line = tok(p)->line;
	size_t start = p->pos;
	cv *v, *c, *other;
	int t;

	if (stopped(p))
		return NULL;
	if (!deeper(p, line))
		return NULL;
	if (at_name(p, "lambda")) {
		p->depth--;
		skip_until(p, SKIP_COLON);
		if (at_op(p, ":")) {
			p->pos++;
			skip_until(p, 0);
		}
		return fail(p, line, "a lambda");
	}
	v = or_test(p);
	p->depth--;
	if (!at_name(p, "if") || p->r->fatal)
		return v;
	/* x if c else y: c decides which of x and y is evaluated */
	line = tok(p)->line;
	if (!v) { /* x failed just before its 'if': c may still say y is the value */
		if (p->r->fatal)
			return NULL;
		p->pos = start;
		skip_until(p, SKIP_IF);
		v = failure_value(p);
		if (!at_name(p, "if")) {
			cv_free(v);
			return syntax(p, "a conditional expression envlock cannot read");
		}
	}
	p->pos++;
	c = or_test(p);
	if (!c || !at_name(p, "else")) {
		cv_free(v);
		cv_free(c);
		return c ? syntax(p, "expected 'else'") : NULL;
	}
	p->pos++;
	t = cv_truthy(c);
	if (t < 0) {
		fail_from(p, c);
		cv_free(c);
		cv_free(v);
		return NULL;
	}
	cv_free(c);
	if (t) {
		skip_until(p, 0);
		if (v->kind == CV_UNKNOWN) {
			fail_from(p, v);
			cv_free(v);
			return NULL;
		}
		return v;
	}
	cv_free(v);
	other = test(p);
	return other;
}

cv *test_list(parser *p)
{
	size_t start = p->pos;
	cv *v = test(p), *t;

	if (!v || !at_op(p, ","))
		return v;
	t = cv_new(p->r, CV_TUPLE);
	cv_seq_push(p->r, t, v);
	while (at_op(p, ",")) {
		p->pos++;
		if (at_end(p) || at_op(p, "=") || at_op(p, ")") || at_op(p, ":"))
			break;
		start = p->pos;
		if (!(v = test(p))) {
			cv_free(t);
			return NULL;
		}
		cv_seq_push(p->r, t, v);
	}
	(void)start;
	return t;
}
