/*
 * Config statements: assignments to names, attributes and items (tuple
 * unpacking and augmented assignment included), del, expression
 * statements (x.update(...), x.append(...)), if/elif/else on conditions
 * that are known, for loops over values that are known (each step
 * counted), and mmengine's `with read_base():` imports. A statement that
 * is not run (a while loop, a try, a def's body, an if whose condition
 * is not known) makes every name it assigns, and every value it may
 * edit, "not evaluated": nothing it might have changed is kept as if it
 * had not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/parser.h"
#include "util/buf.h"
#include "util/xalloc.h"

static void statement(parser *p);

/* A token range's first top-level token that is op (or an augmented assignment when op is NULL), else end. */
static size_t find_top(parser *p, size_t start, size_t end, const char *op)
{
	int depth = 0;

	for (size_t i = start; i < end; i++) {
		el_tok *t = &p->t[i];

		if (t->kind != TK_OP)
			continue;
		if (t->len == 1 && strchr("([{", p->s[t->start]))
			depth++;
		else if (t->len == 1 && strchr(")]}", p->s[t->start]))
			depth--;
		else if (!depth && op && tok_is(p, t, TK_OP, op))
			return i;
		else if (!depth && !op && is_aug_assign(p, t))
			return i;
	}
	return end;
}

/* The end of the statement at p->pos: its NEWLINE, ';' or EOF (not consumed). */
static size_t statement_end(parser *p)
{
	size_t at = p->pos, end;

	while (!at_end(p)) {
		skip_until(p, SKIP_COLON);
		if (!at_end(p))
			p->pos++;
	}
	end = p->pos;
	p->pos = at;
	return end;
}

/* The bound object a target's root names: a name's value, or _base_.x's. NULL when there is none. */
static cv *target_root(parser *p, size_t start, size_t end)
{
	el_tok *t = &p->t[start];
	char *name;
	cv *v;

	if (t->kind != TK_NAME)
		return NULL;
	name = tok_text(p, t);
	if (!strcmp(name, "_base_") && p->base) {
		v = NULL;
		if (start + 2 < end && tok_is(p, &p->t[start + 1], TK_OP, ".") && p->t[start + 2].kind == TK_NAME) {
			char *attr = tok_text(p, &p->t[start + 2]);

			v = cv_dict_get(p->base, attr);
			free(attr);
		}
	} else {
		v = cv_dict_get(p->names, name);
	}
	free(name);
	return v;
}

/* A value an unevaluated statement may have changed: every holder now sees it as not evaluated. */
static void taint_root(parser *p, size_t start, size_t end, int line, const char *what)
{
	cv *v = target_root(p, start, end);

	if (v && (v->kind == CV_DICT || v->kind == CV_LIST || v->kind == CV_TUPLE))
		cv_taint(v, p->path, line, what);
}

/* Every container named in a statement that failed: a call not run may have changed any of them. */
static void taint_named(parser *p, size_t start, size_t end, int line, const char *what)
{
	for (size_t i = start; i < end; i++)
		if (p->t[i].kind == TK_NAME && !(i > start && tok_is(p, &p->t[i - 1], TK_OP, ".")))
			taint_root(p, i, end, line, what);
}

static void bind_unknown(parser *p, const char *name, int line, const char *what)
{
	cv_dict_set(p->r, p->names, name, cv_unknown(p->r, p->path, line, what));
}

/* The last '.' or '[' at bracket depth 0 of the target [start, end): the part stored into; end when none. */
static size_t last_trailer(parser *p, size_t start, size_t end)
{
	size_t last = end;
	int depth = 0;

	for (size_t i = start; i < end; i++) {
		el_tok *t = &p->t[i];

		if (t->kind != TK_OP)
			continue;
		if (!depth && t->len == 1 && (p->s[t->start] == '.' || p->s[t->start] == '['))
			last = i;
		if (t->len == 1 && strchr("([{", p->s[t->start]))
			depth++;
		else if (t->len == 1 && strchr(")]}", p->s[t->start]))
			depth--;
	}
	return last;
}

/*
 * Assign v (taken) to the target tokens [start, end): a name, a.b.c,
 * a[k], or a tuple or list of targets to unpack into. false when the
 * target could not be assigned (p->failed or fatal).
 */
bool assign_target(parser *p, size_t start, size_t end, cv *v, int line)
{
	size_t comma = find_top(p, start, end, ","), save = p->pos, save_limit = p->limit, last;
	el_tok save_eof = p->eof;
	bool ok = false;

	if (start >= end) {
		cv_free(v);
		syntax(p, "an assignment with no target");
		return false;
	}
	/* (a, b) and [a, b] are the tuple a, b */
	if (comma == end && (tok_is(p, &p->t[start], TK_OP, "(") || tok_is(p, &p->t[start], TK_OP, "["))) {
		int d = 0;
		size_t i;

		for (i = start; i < end; i++) {
			if (p->t[i].kind == TK_OP && p->t[i].len == 1 && strchr("([{", p->s[p->t[i].start]))
				d++;
			else if (p->t[i].kind == TK_OP && p->t[i].len == 1 && strchr(")]}", p->s[p->t[i].start]) && !--d)
				break;
		}
		if (i == end - 1)
			return assign_target(p, start + 1, end - 1, v, line);
	}
	if (comma < end) {
		size_t parts[64], np = 0, from = start, n;
		cv *items = NULL;

		while (from < end && np < 63) {
			size_t c = find_top(p, from, end, ",");

			parts[np++] = from;
			from = c + 1;
			if (c >= end)
				break;
		}
		parts[np] = end + 1;
		if (from < end && np == 63) {
			cv_free(v);
			fail(p, line, "an unpacking into more than 63 targets");
			return false;
		}
		n = np;
		if (p->t[parts[n - 1]].kind == TK_NEWLINE || parts[n - 1] >= end) /* a, b, = ... */
			n--;
		for (size_t i = 0; i < n; i++)
			if (tok_is(p, &p->t[parts[i]], TK_OP, "*")) {
				cv_free(v);
				fail(p, line, "a starred unpacking (*x)");
				for (size_t k = 0; k < n; k++)
					taint_root(p, parts[k], parts[k + 1] - 1, line, "a starred unpacking (*x)");
				return false;
			}
		if (v->kind == CV_UNKNOWN) {
			for (size_t i = 0; i < n && !p->r->fatal; i++)
				assign_target(p, parts[i], parts[i + 1] - 1, cv_ref(v), line);
			cv_free(v);
			return !p->r->fatal;
		}
		if (!(items = iter_items(p, v, line)))
			return false;
		if (items->u.seq.n != n) {
			raises(p, line, "cannot unpack %zu values into %zu targets", items->u.seq.n, n);
			cv_free(items);
			return false;
		}
		for (size_t i = 0; i < n && !stopped(p); i++)
			assign_target(p, parts[i], parts[i + 1] - 1, cv_ref(items->u.seq.v[i]), line);
		cv_free(items);
		return !stopped(p);
	}
	if (end == start + 1 && p->t[start].kind == TK_NAME) {
		char *name = tok_text(p, &p->t[start]);

		if (strcmp(name, "_base_")) /* mmengine removes assignments to _base_ before it runs a file */
			bind(p, name, v);
		else
			cv_free(v);
		free(name);
		return !p->r->fatal;
	}
	/* the last trailer at depth 0 is the store; what comes before it is the container */
	last = last_trailer(p, start, end);
	if (last == end || last == start || p->t[start].kind != TK_NAME) {
		cv_free(v);
		syntax(p, "a target Python cannot assign to");
		return false;
	}
	{
		cv *c, *key = NULL;

		p->pos = start;
		p->limit = last;
		p->eof = (el_tok){ .kind = TK_EOF, .line = line };
		c = or_test(p);
		p->limit = save_limit;
		p->eof = save_eof;
		if (c && p->pos != last) {
			cv_free(c);
			c = NULL;
			syntax(p, "a target Python cannot assign to");
		}
		if (!c) {
			cv_free(v);
			goto out;
		}
		p->pos = last;
		if (at_op(p, ".")) {
			char *attr;

			if (peek(p, 1)->kind != TK_NAME || last + 2 != end) {
				cv_free(c);
				cv_free(v);
				syntax(p, "a target Python cannot assign to");
				goto out;
			}
			attr = tok_text(p, peek(p, 1));
			ok = store_attr(p, c, attr, v, line);
			free(attr);
		} else {
			p->pos++;
			if (!(key = test(p)) || !known(p, key) || !at_op(p, "]") || p->pos + 1 != end) {
				if (key && !stopped(p))
					fail(p, line, "a slice or tuple as an assignment target");
				cv_free(key);
				cv_free(c);
				cv_free(v);
				goto out;
			}
			ok = store_item(p, c, key, v, line);
			cv_free(key);
		}
		cv_free(c);
	}
out:
	p->pos = save;
	return ok;
}

/* del a, b.c, d[k] */
static void del_target(parser *p, size_t start, size_t end, int line)
{
	size_t last, save = p->pos, save_limit = p->limit;
	el_tok save_eof = p->eof;
	cv *c;

	if (end == start + 1 && p->t[start].kind == TK_NAME) {
		char *name = tok_text(p, &p->t[start]);
		cv *gone = cv_dict_pop(p->names, name);

		if (!gone && !p->star_unknown)
			raises(p, line, "name '%s' is not defined", name);
		cv_free(gone);
		free(name);
		return;
	}
	last = last_trailer(p, start, end);
	if (last == end || last == start) {
		syntax(p, "a del of something Python cannot delete");
		return;
	}
	p->pos = start;
	p->limit = last;
	p->eof = (el_tok){ .kind = TK_EOF, .line = line };
	c = or_test(p);
	p->limit = save_limit;
	p->eof = save_eof;
	if (c && known(p, c)) {
		p->pos = last;
		if (at_op(p, ".") && c->kind == CV_DICT && c->cfgdict && peek(p, 1)->kind == TK_NAME) {
			char *attr = tok_text(p, peek(p, 1));
			cv *gone = cv_dict_pop(c, attr);

			if (!gone)
				raises(p, line, "AttributeError: %s", attr);
			cv_free(gone);
			free(attr);
		} else if (at_op(p, "[")) {
			cv *k;

			p->pos++;
			if ((k = test(p)) && known(p, k)) {
				if (c->kind == CV_DICT && (k->kind == CV_STR || k->kind == CV_INT)) {
					char *ks = k->kind == CV_STR ? el_xstrdup(k->u.str.s) : el_xasprintf("%lld", k->u.i);
					cv *gone = cv_dict_pop(c, ks);

					if (!gone)
						raises(p, line, "KeyError: '%s'", ks);
					cv_free(gone);
					free(ks);
				} else if (c->kind == CV_LIST && k->kind == CV_INT) {
					long long i = k->u.i < 0 ? k->u.i + (long long)c->u.seq.n : k->u.i;

					if (i < 0 || i >= (long long)c->u.seq.n)
						raises(p, line, "IndexError: list assignment index out of range");
					else {
						cv_free(c->u.seq.v[i]);
						memmove(c->u.seq.v + i, c->u.seq.v + i + 1,
							(c->u.seq.n - (size_t)i - 1) * sizeof(cv *));
						c->u.seq.n--;
					}
				} else
					fail(p, line, "a del of a %s item", cv_kind_name(c->kind));
			}
			cv_free(k);
		} else
			fail(p, line, "a del of an attribute of a %s", cv_kind_name(c->kind));
	}
	cv_free(c);
	p->pos = save;
}

/* The end of the suite after a compound statement's ':' at p->pos (the ':' itself). */
static size_t suite_end(parser *p, int col)
{
	size_t i = p->pos + 1;

	if (i < p->n && p->t[i].kind != TK_NEWLINE) { /* if x: a = 1 */
		while (i < p->n && p->t[i].kind != TK_NEWLINE && p->t[i].kind != TK_EOF)
			i++;
		return i < p->n && p->t[i].kind == TK_NEWLINE ? i + 1 : i;
	}
	for (i++; i < p->n && p->t[i].kind != TK_EOF; i++)
		if (p->t[i].bol && p->t[i].col <= col)
			break;
	return i;
}

/* The ':' ending a compound statement's header at p->pos, or n when there is none. */
static size_t header_colon(parser *p)
{
	size_t at = p->pos;
	int depth = 0;

	for (; p->pos < p->n && tok(p)->kind != TK_EOF; p->pos++) {
		el_tok *t = tok(p);

		if (t->kind == TK_NEWLINE && !depth)
			break;
		depth += bracket_delta(p, t);
		if (!depth && tok_is(p, t, TK_OP, ":")) {
			size_t c = p->pos;

			p->pos = at;
			return c;
		}
	}
	p->pos = at;
	return p->n;
}

/* The ':' of the compound statement's header at p->pos (*colon) and the end of its suite (*end); false after a syntax error. */
static bool suite(parser *p, int col, size_t *colon, size_t *end)
{
	*colon = header_colon(p);
	if (*colon >= p->n) {
		syntax(p, "expected ':'");
		return false;
	}
	p->pos = *colon;
	*end = suite_end(p, col);
	return true;
}

/*
 * Statements in [start, end) that will not be run: each name they
 * assign becomes "not evaluated" with what, each value they may edit
 * too.
 */
static void not_run(parser *p, size_t start, size_t end, const char *what)
{
	for (size_t i = start; i < end && !p->r->fatal; i++) {
		el_tok *t = &p->t[i];
		bool first = i == start || t->bol || tok_is(p, &p->t[i - 1], TK_OP, ";") ||
			     tok_is(p, &p->t[i - 1], TK_OP, ":");

		if (!first || t->kind != TK_NAME)
			continue;
		if (tok_is(p, t, TK_NAME, "for") || tok_is(p, t, TK_NAME, "del") || tok_is(p, t, TK_NAME, "global")) {
			/* their names, up to 'in' or the line's end */
			for (size_t k = i + 1; k < end && p->t[k].kind == TK_NAME; k += 2) {
				char *n;

				if (tok_is(p, &p->t[k], TK_NAME, "in"))
					break;
				n = tok_text(p, &p->t[k]);
				bind_unknown(p, n, t->line, what);
				free(n);
				if (k + 1 >= end || !tok_is(p, &p->t[k + 1], TK_OP, ","))
					break;
			}
			continue;
		}
		if (tok_is(p, t, TK_NAME, "def") || tok_is(p, t, TK_NAME, "class") || tok_is(p, t, TK_NAME, "import") ||
		    tok_is(p, t, TK_NAME, "from")) {
			if ((tok_is(p, t, TK_NAME, "def") || tok_is(p, t, TK_NAME, "class")) && i + 1 < end &&
			    p->t[i + 1].kind == TK_NAME) {
				char *n = tok_text(p, &p->t[i + 1]);

				bind_unknown(p, n, t->line, what);
				free(n);
			}
			continue;
		}
		{
			/* a statement: NAME ... = ..., NAME ... += ..., NAME.method(...) */
			size_t k = i, stop;
			int depth = 0;

			for (stop = i; stop < end; stop++) {
				el_tok *x = &p->t[stop];

				if (x->kind == TK_NEWLINE || (x->bol && stop > i) || (!depth && tok_is(p, x, TK_OP, ";")))
					break;
				if (x->kind == TK_OP && x->len == 1 && strchr("([{", p->s[x->start]))
					depth++;
				else if (x->kind == TK_OP && x->len == 1 && strchr(")]}", p->s[x->start]))
					depth--;
			}
			if (find_top(p, i, stop, "=") < stop || find_top(p, i, stop, NULL) < stop) {
				size_t eq = find_top(p, i, stop, "=");
				size_t aug = find_top(p, i, stop, NULL);
				size_t tend = eq < aug ? eq : aug;

				/* every simple name among the targets, every root of an attribute or item target */
				for (k = i; k < tend; k++)
					if (p->t[k].kind == TK_NAME && (k == i || tok_is(p, &p->t[k - 1], TK_OP, ",") ||
									tok_is(p, &p->t[k - 1], TK_OP, "(") ||
									tok_is(p, &p->t[k - 1], TK_OP, "["))) {
						bool plain = k + 1 >= tend || tok_is(p, &p->t[k + 1], TK_OP, ",") ||
							     tok_is(p, &p->t[k + 1], TK_OP, ")") ||
							     tok_is(p, &p->t[k + 1], TK_OP, "]") ||
							     tok_is(p, &p->t[k + 1], TK_OP, "=");

						if (plain && !(k > i && tok_is(p, &p->t[k - 1], TK_OP, "["))) {
							char *n = tok_text(p, &p->t[k]);

							bind_unknown(p, n, t->line, what);
							free(n);
						} else
							taint_root(p, k, tend, t->line, what);
					}
			} else {
				taint_named(p, i, stop, t->line, what);
			}
		}
	}
}

/* Run the statements in [start, end) */
static void run_range(parser *p, size_t start, size_t end)
{
	p->pos = start;
	while (p->pos < end && !p->r->fatal && !p->jump && tok(p)->kind != TK_EOF) {
		if (tok(p)->kind == TK_NEWLINE || at_op(p, ";")) {
			p->pos++;
			continue;
		}
		p->failed = false;
		p->depth = 0;
		statement(p);
	}
	p->pos = end;
}

/* if c: ... elif d: ... else: ... */
static void if_stmt(parser *p)
{
	int col = tok(p)->col, line = tok(p)->line;
	size_t chain = p->pos, end, run_start = 0, run_end = 0;
	bool decided = false, unknown = false;
	char what[400];

	what[0] = '\0';
	for (;;) {
		bool is_else = at_name(p, "else");
		size_t colon, sfx;
		int t = 0;

		p->pos++;
		if (!is_else && !decided && !unknown) {
			size_t cstart = p->pos;
			cv *c = test(p);

			(void)cstart;
			if (!c) {
				if (p->r->fatal)
					return;
				snprintf(what, sizeof(what), "an if statement whose condition is not evaluated: %s", p->what);
				p->failed = false;
				unknown = true;
			} else {
				t = cv_truthy(c);
				if (t < 0) {
					snprintf(what, sizeof(what), "an if statement whose condition is not evaluated: %s",
						 c->why ? c->why : "an imported name");
					unknown = true;
				}
				cv_free(c);
			}
		}
		if (!suite(p, col, &colon, &sfx))
			return;
		if (!decided && !unknown && (is_else || t == 1)) {
			decided = true;
			run_start = colon + 1;
			run_end = sfx;
		}
		p->pos = sfx;
		if (!(tok(p)->bol && tok(p)->col == col && (at_name(p, "elif") || at_name(p, "else"))))
			break;
	}
	end = p->pos;
	if (unknown) {
		not_run(p, chain, end, what);
		el_cfg_note(p->r, p->path, line, "", what);
		p->pos = end;
		return;
	}
	if (decided)
		run_range(p, run_start, run_end);
	p->pos = end;
}

/* for target in iterable: body [else: body] */
static void for_stmt(parser *p)
{
	int col = tok(p)->col, line = tok(p)->line;
	size_t stmt = p->pos, tstart = p->pos + 1, tend, colon, body_end, else_start = 0, else_end = 0, end;
	cv *it, *items = NULL;
	bool broke = false;
	char what[400];

	p->pos++;
	while (!at_name(p, "in") && !at_end(p))
		p->pos++;
	if (!at_name(p, "in")) {
		syntax(p, "expected 'in'");
		return;
	}
	tend = p->pos;
	p->pos++;
	it = test_list(p);
	if (!suite(p, col, &colon, &body_end)) {
		cv_free(it);
		return;
	}
	p->pos = body_end;
	if (tok(p)->bol && tok(p)->col == col && at_name(p, "else")) {
		p->pos++;
		else_start = header_colon(p) + 1;
		p->pos = else_start - 1;
		else_end = suite_end(p, col);
	}
	end = else_end ? else_end : body_end;
	if (it)
		items = iter_items(p, it, line);
	if (!items) {
		if (p->r->fatal)
			return;
		snprintf(what, sizeof(what), "a for loop over a value not evaluated: %s", p->what);
		p->failed = false;
		not_run(p, stmt, end, what);
		el_cfg_note(p->r, p->path, line, "", what);
		p->pos = end;
		return;
	}
	p->loops++;
	for (size_t i = 0; i < items->u.seq.n && !p->r->fatal; i++) {
		if (!step(p))
			break;
		p->failed = false;
		if (!assign_target(p, tstart, tend, cv_ref(items->u.seq.v[i]), line)) {
			if (p->r->fatal)
				break;
			snprintf(what, sizeof(what), "a for loop whose target is not assigned: %s", p->what);
			p->failed = false;
			not_run(p, stmt, end, what);
			break;
		}
		run_range(p, colon + 1, body_end);
		if (p->jump == 1) {
			broke = true;
			p->jump = 0;
			break;
		}
		p->jump = 0;
	}
	p->loops--;
	cv_free(items);
	if (!broke && else_end && !p->r->fatal)
		run_range(p, else_start, else_end);
	p->pos = end;
}

/* A compound statement that is not run: step over it, what it assigns and edits made "not evaluated". */
static void skip_compound(parser *p, const char *kw)
{
	int col = tok(p)->col, line = tok(p)->line;
	size_t start = p->pos, colon, end;
	bool defines = !strcmp(kw, "def") || !strcmp(kw, "class");
	char what[160];

	snprintf(what, sizeof(what), "a%s %s statement (not run)", strchr("aeiou", kw[0]) ? "n" : "", kw);
	if (!strcmp(kw, "decorated")) {
		while (at_op(p, "@")) {
			while (!at_end(p))
				p->pos++;
			p->pos++;
		}
		defines = at_name(p, "def") || at_name(p, "class") || at_name(p, "async");
		if (at_name(p, "async"))
			p->pos++;
	}
	if (defines && peek(p, 1)->kind == TK_NAME) {
		char *name = tok_text(p, peek(p, 1));

		snprintf(what, sizeof(what), "a %s defined by %s (never run)", at_name(p, "class") ? "class" : "function", name);
		bind_unknown(p, name, line, what);
		free(name);
	}
	if (!suite(p, col, &colon, &end))
		return;
	/* the clauses that belong to it: else, elif, except, finally */
	for (;;) {
		p->pos = end;
		if (!(tok(p)->kind != TK_EOF && tok(p)->bol && tok(p)->col == col &&
		      (at_name(p, "else") || at_name(p, "elif") || at_name(p, "except") || at_name(p, "finally"))))
			break;
		colon = header_colon(p);
		if (colon >= p->n)
			break;
		p->pos = colon;
		end = suite_end(p, col);
	}
	if (!defines) {
		not_run(p, start, end, what);
		el_cfg_note(p->r, p->path, line, "", what);
	}
	p->pos = end;
}

/*
 * After "from": the module's leading dots (counted in *dots, and kept in
 * mod's text when keep_dots), its dotted name into mod, then "import".
 * false after a syntax error.
 */
/* A module name past mod's cap: the evaluation stops rather than import a cut name. */
static bool long_module(parser *p, const el_buf *mod, int line)
{
	if (!el_buf_failed(mod))
		return false;
	el_cfg_fail(p->r, ENVLOCK_ELIMIT, "%s:%d: a module name longer than %zu bytes", p->path, line, mod->limit);
	return true;
}

static bool from_module(parser *p, el_buf *mod, int *dots, bool keep_dots)
{
	while (at_op(p, ".") || at_op(p, "...")) {
		if (keep_dots)
			el_buf_add(mod, p->s + tok(p)->start, tok(p)->len);
		*dots += (int)tok(p)->len;
		p->pos++;
	}
	while (tok(p)->kind == TK_NAME && !at_name(p, "import")) {
		el_buf_add(mod, p->s + tok(p)->start, tok(p)->len);
		p->pos++;
		if (at_op(p, ".")) {
			el_buf_addc(mod, '.');
			p->pos++;
		}
	}
	if (long_module(p, mod, tok(p)->line))
		return false;
	if (!at_name(p, "import")) {
		syntax(p, "expected 'import'");
		return false;
	}
	p->pos++;
	return true;
}

static void record_import(parser *p, int line, const char *module)
{
	cJSON *rec = cJSON_CreateObject();

	cJSON_AddStringToObject(rec, "file", p->path);
	cJSON_AddNumberToObject(rec, "line", line);
	cJSON_AddStringToObject(rec, "module", module);
	cJSON_AddItemToArray(p->r->imports, rec);
}

static void skip_statement(parser *p)
{
	while (!at_end(p)) {
		skip_until(p, SKIP_COLON);
		if (!at_end(p))
			p->pos++;
	}
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
		record_import(p, line, el_buf_cstr(&mod));
		if (at_op(p, "("))
			p->pos++;
		while (tok(p)->kind == TK_NAME || at_op(p, "*")) {
			char *name;

			if (at_op(p, "*")) {
				el_cfg_note(p->r, p->path, line, "", "an import * (the names it brings are not known)");
				p->star_unknown = true;
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
			cv_dict_set(p->r, p->names, name, cv_new(p->r, CV_MODULE));
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
				el_buf_add(&mod, p->s + tok(p)->start, tok(p)->len);
				p->pos++;
				if (!at_op(p, "."))
					break;
				el_buf_addc(&mod, '.');
				p->pos++;
			}
			if (long_module(p, &mod, line)) {
				free(first);
				goto out;
			}
			bound = first;
			if (at_name(p, "as") && peek(p, 1)->kind == TK_NAME) {
				bound = tok_text(p, peek(p, 1));
				free(first);
				p->pos += 2;
			}
			record_import(p, line, el_buf_cstr(&mod));
			{
				cv *m = cv_new(p->r, CV_MODULE);

				m->line = line; /* `import x`: a module object in the config's names */
				m->file = el_xstrdup(p->path);
				cv_dict_set(p->r, p->names, bound, m);
			}
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
		if (!names)
			p->star_unknown = true;
		for (size_t i = 0; names && i < names->u.d->n; i++)
			if (names->u.d->keys[i][0] != '_')
				cv_dict_set(p->r, p->names, names->u.d->keys[i], cv_ref(names->u.d->vals[i]));
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
			cv_dict_set(p->r, p->names, as ? as : name, cv_ref(v));
		else if (names)
			raises(p, line, "cannot import name '%s' from '%s'", name, el_buf_cstr(&mod));
		else
			bind_unknown(p, as ? as : name, line, "a read_base() import from a base that is not evaluated");
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

static void read_base_block(parser *p)
{
	int col = tok(p)->col;
	size_t colon, end, start;

	if (!suite(p, col, &colon, &end))
		return;
	p->pos = colon + 1;
	while (p->pos < end && !p->r->fatal) {
		if (tok(p)->kind == TK_NEWLINE || at_op(p, ";")) {
			p->pos++;
			continue;
		}
		start = p->pos;
		read_base_line(p);
		if (p->pos == start) /* a line it cannot read stops where it is: step past it */
			p->pos++;
	}
	p->pos = end;
}

static bool is_read_base(parser *p)
{
	return tok_is(p, peek(p, 1), TK_NAME, "read_base") && tok_is(p, peek(p, 2), TK_OP, "(") &&
	       tok_is(p, peek(p, 3), TK_OP, ")") && tok_is(p, peek(p, 4), TK_OP, ":");
}

/* x = y = value, a.b = value, a, b = value, x += value */
static void assignment(parser *p, size_t start, size_t end)
{
	size_t eq[32], ne = 0, from = start, aug = find_top(p, start, end, NULL);
	int line = tok(p)->line;
	cv *v;

	for (;;) {
		size_t e = find_top(p, from, end, "=");

		if (e >= end || ne == 32)
			break;
		eq[ne++] = e;
		from = e + 1;
	}
	if (aug < end && (!ne || aug < eq[0])) {
		/* target op= value: lists grow in place (Python's +=), anything else is rebound */
		char op[4] = { 0 };
		cv *cur, *rhs, *res = NULL;
		size_t save_limit = p->limit;
		el_tok save_eof = p->eof;

		memcpy(op, p->s + p->t[aug].start, p->t[aug].len - 1);
		p->pos = start;
		p->limit = aug;
		p->eof = (el_tok){ .kind = TK_EOF, .line = line };
		cur = or_test(p);
		p->limit = save_limit;
		p->eof = save_eof;
		p->pos = aug + 1;
		rhs = cur ? test_list(p) : NULL;
		if (cur && rhs && !strcmp(op, "+") && cur->kind == CV_LIST && known(p, rhs)) {
			cv *items = iter_items(p, cv_ref(rhs), line);

			for (size_t i = 0, n = items ? items->u.seq.n : 0; i < n; i++) /* a += a doubles once */
				cv_seq_push(p->r, cur, cv_ref(items->u.seq.v[i]));
			cv_free(items);
			res = stopped(p) ? NULL : cv_ref(cur);
			cv_free(cur);
			cv_free(rhs);
		} else if (cur && rhs) {
			res = binop(p, line, op, cur, rhs);
		} else {
			cv_free(cur);
			cv_free(rhs);
		}
		if (p->r->fatal)
			return;
		if (!res)
			res = failure_value(p);
		if (!assign_target(p, start, aug, res, line) && !p->r->fatal) {
			char what[400];

			snprintf(what, sizeof(what), "an augmented assignment not evaluated: %s", p->what);
			p->failed = false;
			taint_root(p, start, aug, line, what);
		}
		p->pos = end;
		return;
	}
	p->pos = eq[ne - 1] + 1;
	v = test_list(p);
	if (v && p->pos != end) {
		cv_free(v);
		v = fail(p, line, "an expression envlock does not read past its first part");
	}
	if (p->r->fatal) {
		cv_free(v);
		return;
	}
	if (!v)
		v = failure_value(p);
	for (size_t i = 0; i < ne && !p->r->fatal; i++) {
		size_t ts = i ? eq[i - 1] + 1 : start;

		p->failed = false;
		if (!assign_target(p, ts, eq[i], cv_ref(v), line) && !p->r->fatal) {
			char what[400];

			snprintf(what, sizeof(what), "an assignment not evaluated: %s", p->what);
			p->failed = false;
			taint_root(p, ts, eq[i], line, what);
			el_cfg_note(p->r, p->path, line, "", what);
		}
	}
	cv_free(v);
	p->pos = end;
}

static void statement(parser *p)
{
	static const char *const compound[] = { "while", "try", "with", "async", "match", NULL };
	el_tok *t = tok(p);
	int line = t->line;
	size_t start = p->pos, end;

	p->r->at_file = p->path;
	p->r->at_line = line;
	if (t->kind == TK_NAME) {
		char *kw = tok_text(p, t);
		bool is_compound = false;

		for (int i = 0; compound[i]; i++)
			is_compound |= !strcmp(kw, compound[i]);
		if (!strcmp(kw, "match") &&
		    (tok_is(p, peek(p, 1), TK_OP, "=") || tok_is(p, peek(p, 1), TK_OP, ".") ||
		     peek(p, 1)->kind == TK_NEWLINE || tok_is(p, peek(p, 1), TK_OP, "[")))
			is_compound = false;
		if (!strcmp(kw, "if")) {
			free(kw);
			if_stmt(p);
			return;
		}
		if (!strcmp(kw, "for")) {
			free(kw);
			for_stmt(p);
			return;
		}
		if (!strcmp(kw, "def") || !strcmp(kw, "class")) {
			skip_compound(p, kw);
			free(kw);
			return;
		}
		if (is_compound) {
			if (!strcmp(kw, "with") && is_read_base(p)) {
				p->lazy = true;
				read_base_block(p);
			}
			else
				skip_compound(p, kw);
			free(kw);
			return;
		}
		if (!strcmp(kw, "import") || !strcmp(kw, "from")) {
			free(kw);
			import_stmt(p);
			return;
		}
		if (!strcmp(kw, "pass") || !strcmp(kw, "global") || !strcmp(kw, "nonlocal")) {
			free(kw);
			skip_statement(p);
			return;
		}
		if ((!strcmp(kw, "break") || !strcmp(kw, "continue")) && p->loops) {
			p->jump = kw[0] == 'b' ? 1 : 2;
			free(kw);
			skip_statement(p);
			return;
		}
		if (!strcmp(kw, "del")) {
			free(kw);
			p->pos++;
			end = statement_end(p);
			for (size_t from = p->pos; from < end && !p->r->fatal;) {
				size_t c = find_top(p, from, end, ",");

				p->failed = false;
				del_target(p, from, c, line);
				if (p->failed) {
					char what[400];

					snprintf(what, sizeof(what), "a del not evaluated: %s", p->what);
					p->failed = false;
					taint_root(p, from, c, line, what);
					el_cfg_note(p->r, p->path, line, "", what);
				}
				from = c + 1;
			}
			p->pos = end;
			return;
		}
		if (!strcmp(kw, "raise") || !strcmp(kw, "return") || !strcmp(kw, "yield")) {
			raises(p, line, "a %s statement at the top level of a config", kw);
			free(kw);
			return;
		}
		if (!strcmp(kw, "assert")) {
			cv *c;
			int tv;

			free(kw);
			p->pos++;
			c = test(p);
			tv = c ? cv_truthy(c) : -1;
			cv_free(c);
			if (tv == 0)
				raises(p, line, "an assert that fails");
			else if (tv < 0 && !p->r->fatal) {
				p->failed = false;
				el_cfg_note(p->r, p->path, line, "", "an assert not evaluated");
			}
			skip_statement(p);
			return;
		}
		free(kw);
	}
	if (at_op(p, "@")) {
		skip_compound(p, "decorated");
		return;
	}
	end = statement_end(p);
	if (find_top(p, start, end, "=") < end || find_top(p, start, end, NULL) < end) {
		assignment(p, start, end);
		return;
	}
	/* an expression statement: a docstring, x.update(...), print(...) */
	{
		cv *v = test_list(p);

		if (v && p->pos != end && !p->r->fatal) {
			cv_free(v);
			v = NULL;
			fail(p, line, "an expression envlock does not read past its first part");
		}
		cv_free(v);
		if (!v && !p->r->fatal) {
			char what[400];

			snprintf(what, sizeof(what), "a statement not evaluated: %s", p->what);
			p->failed = false;
			taint_named(p, start, end, line, what);
			el_cfg_note(p->r, p->path, line, "", what);
		}
		p->pos = end;
	}
}

/* The value of the first top-level `_base_ = ...`, read before anything else (as mmcv's ast walk does). */
static cv *find_bases(parser *p, int *line)
{
	cv *bases = NULL;

	for (p->pos = 0; tok(p)->kind != TK_EOF && !p->r->fatal; p->pos++) {
		if (!(tok(p)->bol && tok(p)->col == 0 && at_name(p, "_base_") && tok_is(p, peek(p, 1), TK_OP, "=")))
			continue;
		*line = tok(p)->line;
		p->pos += 2;
		p->failed = false;
		bases = test(p);
		if (!bases && !p->r->fatal) {
			el_cfg_fail(p->r, ENVLOCK_EPARSE, "%s:%d: a _base_ envlock cannot read: %s", p->path, *line, p->what);
			return NULL;
		}
		break;
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
	p.limit = ts.n - 1;
	p.eof = ts.t[ts.n - 1];
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
		p.jump = 0;
		statement(&p);
	}
	out->lazy = p.lazy;
	r->at_file = NULL;
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
