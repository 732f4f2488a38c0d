/*
 * Python source read without running it (pysource.h): logical lines of
 * util/pytok.c's tokens, and enough of Python's expression grammar to
 * follow the version asserts OpenMMLab's __init__.py files make, and
 * nothing more.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pysource.h"
#include "pytok.h"
#include "vec.h"
#include "xalloc.h"

/* One statement's tokens are kept; a longer statement is only looked over. */
#define MAX_TOKENS 4096
/* Names whose values are followed; later ones read as unknown. */
#define MAX_NAMES 256
/* A bound longer than this is no version. */
#define MAX_BOUND 64

typedef enum { TK_NAME, TK_STR, TK_NUM, TK_OP } tk_kind;

typedef struct {
	tk_kind kind;
	const char *s; /* the token's text; a string's contents, without prefix and quotes */
	size_t n;
	bool plain;    /* a string literal as written: no f or b prefix, no backslash */
} tok;

/*
 * What an operand is: a string literal; a version made from one
 * (digit_version('1.8.0')); the installed mmcv's version
 * (digit_version(mmcv.__version__)); or something else.
 */
typedef enum { V_OTHER, V_STR, V_BOUND, V_MMCV } val_kind;

typedef struct {
	val_kind kind;
	const char *s; /* V_STR, V_BOUND: the literal */
	size_t n;
} val;

typedef struct {
	const char *name;
	size_t n;
	val v;
	bool from_mmcv; /* its value was computed from mmcv (mmcv_version = ...) */
} name_val;

typedef struct {
	el_py_lexer lx;
	bool bad;          /* text that does not tokenize */
	tok *t;            /* the logical line being read */
	size_t n, cap;
	size_t indent;     /* its first token's column */
	bool truncated;    /* longer than MAX_TOKENS: the rest was not kept */
	bool names_mmcv;   /* a name in the part not kept says mmcv */
	name_val names[MAX_NAMES];
	size_t nnames, nfrom_mmcv;
	long skip_indent;  /* the indent of the def or class whose body is being skipped, or -1 */
	/* what the asserts say */
	bool unknown, have_min, have_max, max_inclusive;
	val min, max;
} scan;

typedef struct {
	const tok *t;
	size_t n;
} span;

static bool tok_is(const tok *t, tk_kind kind, const char *s)
{
	return t->kind == kind && t->n == strlen(s) && memcmp(t->s, s, t->n) == 0;
}

static bool says_mmcv(const char *s, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (strncasecmp(s + i, "mmcv", 4) == 0)
			return true;
	return false;
}

static void push(scan *s, tk_kind kind, const char *text, size_t n, bool plain)
{
	if (s->n >= MAX_TOKENS) {
		s->truncated = true;
		if (kind == TK_NAME && says_mmcv(text, n))
			s->names_mmcv = true;
		return;
	}
	EL_GROW(s->t, s->n + 1, s->cap);
	s->t[s->n].kind = kind;
	s->t[s->n].s = text;
	s->t[s->n].n = n;
	s->t[s->n].plain = plain;
	s->n++;
}

/*
 * The next logical line into s->t (util/pytok.c's tokens; a string's
 * contents without prefix and quotes). false at the end of the text, or
 * where it does not tokenize (s->bad).
 */
static bool next_line(scan *s)
{
	el_py_tok t;

	s->n = 0;
	s->truncated = s->names_mmcv = false;
	for (;;) {
		el_py_kind k = el_py_lex(&s->lx, &t);
		const char *text = s->lx.s + t.start;

		if (k == EL_PY_NEWLINE)
			return true;
		if (k == EL_PY_END)
			return false;
		if (k == EL_PY_ERROR) {
			s->bad = true;
			return false;
		}
		if (t.bol)
			s->indent = (size_t)t.col;
		if (k == EL_PY_STRING) {
			bool plain = !t.backslash;

			for (unsigned i = 0; i < t.prefix; i++)
				if (strchr("fFbB", text[i]))
					plain = false;
			push(s, TK_STR, text + t.prefix + t.quote, t.len - t.prefix - 2 * t.quote, plain);
		} else {
			push(s, k == EL_PY_NAME ? TK_NAME : k == EL_PY_NUMBER ? TK_NUM : TK_OP, text, t.len, false);
		}
	}
}

/* The name t among those followed, or NULL. */
static name_val *lookup(const scan *s, const tok *t)
{
	for (size_t i = s->nnames; i-- > 0;)
		if (s->names[i].n == t->n && memcmp(s->names[i].name, t->s, t->n) == 0)
			return (name_val *)&s->names[i];
	return NULL;
}

/* Does the span name mmcv: a name that says it, or one whose value came from it? */
static bool mentions_mmcv(const scan *s, span x)
{
	for (size_t i = 0; i < x.n; i++) {
		const name_val *nv;

		if (x.t[i].kind != TK_NAME)
			continue;
		if (says_mmcv(x.t[i].s, x.t[i].n))
			return true;
		if (s->nfrom_mmcv && (nv = lookup(s, &x.t[i])) != NULL && nv->from_mmcv)
			return true;
	}
	return false;
}

static int bracket(const tok *t)
{
	if (t->kind != TK_OP || t->n != 1)
		return 0;
	return strchr("([{", t->s[0]) ? 1 : strchr(")]}", t->s[0]) ? -1 : 0;
}

/* The index of the bracket closing the one at i, or x.n. */
static size_t closing(span x, size_t i)
{
	int depth = 0;

	for (size_t j = i; j < x.n; j++) {
		depth += bracket(&x.t[j]);
		if (depth == 0)
			return j;
	}
	return x.n;
}

/* (expr) -> expr, as often as it is wrapped. */
static span strip_parens(span x)
{
	while (x.n >= 2 && tok_is(&x.t[0], TK_OP, "(") && closing(x, 0) == x.n - 1) {
		x.t++;
		x.n -= 2;
	}
	return x;
}

/* The index of the first token at the span's own bracket level that test accepts, from i; x.n if none. */
static size_t find_top(span x, size_t i, bool (*test)(const tok *t))
{
	int depth = 0;

	for (size_t j = 0; j < x.n; j++) {
		if (depth == 0 && j >= i && test(&x.t[j]))
			return j;
		depth += bracket(&x.t[j]);
	}
	return x.n;
}

static bool is_and(const tok *t) { return tok_is(t, TK_NAME, "and"); }
static bool is_comma(const tok *t) { return tok_is(t, TK_OP, ","); }
static bool is_semicolon(const tok *t) { return tok_is(t, TK_OP, ";"); }
/* = and the augmented assignments (+=, //=, ...), which the tokens hold as one operator */
static bool is_assign(const tok *t)
{
	return t->kind == TK_OP && t->s[t->n - 1] == '=' &&
	       (t->n == 1 || (!tok_is(t, TK_OP, "==") && !tok_is(t, TK_OP, "<=") && !tok_is(t, TK_OP, ">=") &&
			      !tok_is(t, TK_OP, "!=") && !tok_is(t, TK_OP, ":=")));
}
static bool is_colon(const tok *t) { return tok_is(t, TK_OP, ":"); }

static bool is_compare(const tok *t)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=", NULL };

	for (const char *const *o = ops; *o; o++)
		if (tok_is(t, TK_OP, *o))
			return true;
	return tok_is(t, TK_NAME, "in") || tok_is(t, TK_NAME, "is") || tok_is(t, TK_NAME, "not");
}

/* Words that make an expression more than comparisons joined by "and". */
static bool is_logic(const tok *t)
{
	return tok_is(t, TK_NAME, "or") || tok_is(t, TK_NAME, "not") || tok_is(t, TK_NAME, "if") ||
	       tok_is(t, TK_NAME, "lambda") || tok_is(t, TK_OP, ":=");
}

/* The functions that turn a version string into something ordered. */
static bool is_version_func(const tok *t)
{
	static const char *const fns[] = { "digit_version", "parse_version_info", "parse_version", "parse",
					   "LooseVersion", "Version", NULL };

	for (const char *const *f = fns; *f; f++)
		if (tok_is(t, TK_NAME, *f))
			return true;
	return false;
}

/* What the expression x is, as far as the asserts on mmcv's version care. */
static val classify(const scan *s, span x)
{
	val v = { V_OTHER, NULL, 0 };
	size_t open;

	x = strip_parens(x);
	if (x.n == 1 && x.t[0].kind == TK_STR && x.t[0].plain) {
		v.kind = V_STR;
		v.s = x.t[0].s;
		v.n = x.t[0].n;
	} else if (x.n == 1 && x.t[0].kind == TK_NAME) {
		const name_val *nv = lookup(s, &x.t[0]);

		if (nv)
			v = nv->v;
	} else if (x.n >= 3 && tok_is(&x.t[x.n - 1], TK_OP, ")")) {
		/* a call f(arg) or a.b.f(arg), f one of the version functions */
		for (open = 0; open < x.n && !tok_is(&x.t[open], TK_OP, "("); open++)
			if (open % 2 == 0 ? x.t[open].kind != TK_NAME : !tok_is(&x.t[open], TK_OP, "."))
				return v;
		if (open == 0 || open >= x.n || closing(x, open) != x.n - 1 || !is_version_func(&x.t[open - 1]))
			return v;
		{
			span arg = strip_parens((span){ x.t + open + 1, x.n - open - 2 });
			val a = classify(s, arg);

			if (a.kind == V_STR) {
				v = a;
				v.kind = V_BOUND;
			} else if (arg.n == 3 && tok_is(&arg.t[0], TK_NAME, "mmcv") && tok_is(&arg.t[1], TK_OP, ".") &&
				   tok_is(&arg.t[2], TK_NAME, "__version__")) {
				v.kind = V_MMCV;
			}
		}
	}
	return v;
}

/* A bound's text must be a version: a digit first, one word, not too long. */
static bool version_text(const val *v)
{
	if (v->n == 0 || v->n > MAX_BOUND || !(v->s[0] >= '0' && v->s[0] <= '9'))
		return false;
	for (size_t i = 0; i < v->n; i++)
		if ((unsigned char)v->s[i] <= ' ' || v->s[i] == 0x7f)
			return false;
	return true;
}

static bool same_text(const val *a, const val *b)
{
	return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
}

static void set_min(scan *s, const val *v)
{
	if (s->have_min && !same_text(&s->min, v))
		s->unknown = true;
	s->have_min = true;
	s->min = *v;
}

static void set_max(scan *s, const val *v, bool inclusive)
{
	if (s->have_max && (!same_text(&s->max, v) || s->max_inclusive != inclusive))
		s->unknown = true;
	s->have_max = true;
	s->max = *v;
	s->max_inclusive = inclusive;
}

/* mmcv's version (on the left) op bound: what the assert demands of it. */
static void constrain(scan *s, const tok *op, const val *bound)
{
	if (!version_text(bound)) {
		s->unknown = true;
	} else if (tok_is(op, TK_OP, ">=")) {
		set_min(s, bound);
	} else if (tok_is(op, TK_OP, "<=")) {
		set_max(s, bound, true);
	} else if (tok_is(op, TK_OP, "<")) {
		set_max(s, bound, false);
	} else if (tok_is(op, TK_OP, "==")) {
		set_min(s, bound);
		set_max(s, bound, true);
	} else {
		s->unknown = true;
	}
}

/* The operator as it reads with its operands swapped (a < b is b > a). */
static const tok *flipped(const tok *op)
{
	static const tok lt = { TK_OP, "<", 1, false }, le = { TK_OP, "<=", 2, false };
	static const tok gt = { TK_OP, ">", 1, false }, ge = { TK_OP, ">=", 2, false };

	if (tok_is(op, TK_OP, "<"))
		return &gt;
	if (tok_is(op, TK_OP, "<="))
		return &ge;
	if (tok_is(op, TK_OP, ">"))
		return &lt;
	if (tok_is(op, TK_OP, ">="))
		return &le;
	return op;
}

/* One comparison chain, a <= b < c: each link that compares mmcv's version with a bound. */
static void chain(scan *s, span x)
{
	size_t ops[64], nops = 0, at = 0, i;

	while ((i = find_top(x, at, is_compare)) < x.n) {
		if (nops == sizeof(ops) / sizeof(ops[0]) || x.t[i].kind == TK_NAME) {
			s->unknown = true; /* in, is, not in: no version bound */
			return;
		}
		ops[nops++] = i;
		at = i + 1;
	}
	if (nops == 0) {
		s->unknown = true; /* assert some_check(mmcv_version) */
		return;
	}
	for (size_t k = 0; k < nops; k++) {
		size_t from = k ? ops[k - 1] + 1 : 0, to = k + 1 < nops ? ops[k + 1] : x.n;
		span a = { x.t + from, ops[k] - from }, b = { x.t + ops[k] + 1, to - ops[k] - 1 };
		val va = classify(s, a), vb = classify(s, b);

		if (va.kind == V_MMCV && vb.kind == V_BOUND)
			constrain(s, &x.t[ops[k]], &vb);
		else if (vb.kind == V_MMCV && va.kind == V_BOUND)
			constrain(s, flipped(&x.t[ops[k]]), &va);
		else if (va.kind == V_MMCV || vb.kind == V_MMCV ||
			 (va.kind == V_OTHER && mentions_mmcv(s, a)) || (vb.kind == V_OTHER && mentions_mmcv(s, b)))
			s->unknown = true;
	}
}

/* An assert's condition: comparisons joined by "and", in brackets or not. */
static void conjunction(scan *s, span x)
{
	size_t at = 0, i;

	x = strip_parens(x);
	if (find_top(x, 0, is_and) < x.n) {
		while (at <= x.n) {
			i = find_top(x, at, is_and);
			conjunction(s, (span){ x.t + at, i - at });
			at = i + 1;
		}
		return;
	}
	if (find_top(x, 0, is_logic) < x.n) {
		if (mentions_mmcv(s, x))
			s->unknown = true;
		return;
	}
	if (mentions_mmcv(s, x))
		chain(s, x);
}

/* name = value: what the name holds from here on. */
static void assign(scan *s, span target, span value, bool conditional)
{
	name_val *nv;
	bool from_mmcv;

	if (target.n != 1 || target.t[0].kind != TK_NAME) {
		/* a, b = ...; x.y = ...: the names lose what they held */
		for (size_t i = 0; i < target.n; i++)
			if (target.t[i].kind == TK_NAME && (nv = lookup(s, &target.t[i])) != NULL)
				nv->v.kind = V_OTHER;
		return;
	}
	from_mmcv = mentions_mmcv(s, value);
	if ((nv = lookup(s, &target.t[0])) == NULL) {
		if (s->nnames == MAX_NAMES)
			return;
		nv = &s->names[s->nnames++];
		nv->name = target.t[0].s;
		nv->n = target.t[0].n;
		nv->from_mmcv = false;
	}
	if (from_mmcv && !nv->from_mmcv)
		s->nfrom_mmcv++;
	else if (!from_mmcv && nv->from_mmcv)
		s->nfrom_mmcv--;
	nv->from_mmcv = from_mmcv;
	nv->v = conditional ? (val){ V_OTHER, NULL, 0 } : classify(s, value);
}

static void statement(scan *s, span x, bool conditional)
{
	size_t eq;

	if (x.n == 0)
		return;
	if (tok_is(&x.t[0], TK_NAME, "assert")) {
		span cond = { x.t + 1, find_top(x, 1, is_comma) - 1 };

		if (!mentions_mmcv(s, cond))
			return;
		if (conditional || s->truncated)
			s->unknown = true;
		else
			conjunction(s, cond);
		return;
	}
	if ((eq = find_top(x, 0, is_assign)) < x.n) {
		span target = { x.t, eq }, value = { x.t + eq + 1, x.n - eq - 1 };

		/* x += ...: changed, not assigned; the operator makes it a target that is not a name */
		if (x.t[eq].n > 1)
			target.n++;

		/* an annotation (cuda: Optional[str] = ...) is not part of the target */
		if (target.n > 1 && target.t[0].kind == TK_NAME && tok_is(&target.t[1], TK_OP, ":"))
			target.n = 1;
		if (find_top(value, 0, is_assign) < value.n || s->truncated)
			conditional = true; /* a = b = ...: followed no further */
		assign(s, target, value, conditional);
	}
}

static bool is_compound(const tok *t)
{
	static const char *const kw[] = { "if", "elif", "else", "while", "for", "try", "except", "finally",
					  "with", "match", "case", "async", NULL };

	for (const char *const *k = kw; *k; k++)
		if (tok_is(t, TK_NAME, *k))
			return true;
	return false;
}

/* One logical line: skipped inside a def or class, else its statements. */
static void line(scan *s)
{
	span x = { s->t, s->n };
	size_t at = 0, i;
	bool conditional = s->indent > 0;

	if (s->skip_indent >= 0 && s->indent > (size_t)s->skip_indent)
		return;
	s->skip_indent = -1;
	if (tok_is(&x.t[0], TK_NAME, "def") || tok_is(&x.t[0], TK_NAME, "class") ||
	    (x.n > 1 && tok_is(&x.t[0], TK_NAME, "async") && tok_is(&x.t[1], TK_NAME, "def"))) {
		s->skip_indent = (long)s->indent; /* its body runs when called, not at import */
		return;
	}
	if (tok_is(&x.t[0], TK_OP, "@"))
		return;
	if (is_compound(&x.t[0])) {
		/* if mmcv_version < ...: raise ...: a check this does not follow */
		if ((mentions_mmcv(s, x) || s->names_mmcv) && find_top(x, 0, is_compare) < x.n)
			s->unknown = true;
		/* a body on the same line runs under the condition */
		if ((i = find_top(x, 0, is_colon)) < x.n) {
			x.t += i + 1;
			x.n -= i + 1;
			conditional = true;
		} else {
			return;
		}
	}
	if (s->truncated && s->names_mmcv)
		s->unknown = true;
	while (at <= x.n) {
		i = find_top(x, at, is_semicolon);
		statement(s, (span){ x.t + at, i - at }, conditional);
		at = i + 1;
	}
}

int el_py_mmcv_range(const char *text, size_t len, el_mmcv_range *r)
{
	scan s;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3; /* a UTF-8 byte order mark */
		len -= 3;
	}
	el_py_lex_init(&s.lx, text, len, EL_PY_MAX_DEPTH);
	s.skip_indent = -1;
	while (!s.unknown && next_line(&s))
		line(&s);
	free(s.t);
	if (s.bad || s.unknown)
		return -1;
	if (!s.have_min && !s.have_max)
		return 0;
	if (s.have_min)
		r->min = el_xstrndup(s.min.s, s.min.n);
	if (s.have_max) {
		r->max = el_xstrndup(s.max.s, s.max.n);
		r->max_inclusive = s.max_inclusive;
	}
	return 1;
}

void el_mmcv_range_release(el_mmcv_range *r)
{
	if (!r)
		return;
	free(r->min);
	free(r->max);
	r->min = r->max = NULL;
}
