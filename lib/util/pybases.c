/*
 * The _base_ of an OpenMMLab Python config, read from its text: the
 * logical lines of util/pytok.c's tokens that start a top-level statement,
 * and the literal paths of `_base_ = ...`.
 *
 * The last top-level assignment wins, as in mmcv 1.x's Config, which runs
 * the file as a module and pops `_base_` from what the module holds
 * (Config._file2dict): this is what a saved lock records of the trees
 * that Config reads. mmengine's Config (Config._get_base_files), which the
 * config evaluator follows (config/exec.c), walks the file's ast instead
 * and takes the first `_base_ = ...` before anything runs; the two differ
 * only for a file that assigns `_base_` twice.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pybases.h"
#include "pytok.h"
#include "xalloc.h"

#define EL_PY_BASES_MAX (1u << 20) /* a config is a short text file */

/* One logical line's tokens. */
typedef struct {
	el_py_tok *t;
	size_t n, cap;
} line_toks;

/*
 * The next logical line of lx into l; false at the end of the text, and
 * where the text stops tokenizing (with nothing of that line: Python
 * would not run it).
 */
static bool next_line(el_py_lexer *lx, line_toks *l)
{
	el_py_tok t;

	l->n = 0;
	for (;;) {
		el_py_kind k = el_py_lex(lx, &t);

		if (k == EL_PY_NEWLINE)
			return true;
		if (k == EL_PY_ERROR)
			l->n = 0;
		if (k == EL_PY_END || k == EL_PY_ERROR)
			return false;
		EL_GROW(l->t, l->n + 1, l->cap);
		l->t[l->n++] = t;
	}
}

static bool tok_is(const char *s, const el_py_tok *t, el_py_kind kind, const char *text)
{
	return t->kind == kind && t->len == strlen(text) && memcmp(s + t->start, text, t->len) == 0;
}

static size_t tok_end(const el_py_tok *t)
{
	return t->start + t->len;
}

/* The tokens of the line's first statement: up to a ';' outside brackets. */
static size_t first_statement(const char *s, const el_py_tok *t, size_t n)
{
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i].kind != EL_PY_OP || t[i].len != 1)
			continue;
		if (strchr("([{", s[t[i].start]))
			depth++;
		else if (strchr(")]}", s[t[i].start]))
			depth--;
		else if (s[t[i].start] == ';' && depth == 0)
			return i;
	}
	return n;
}

/*
 * The string t appended to out: plain or r/u-prefixed, any quote style.
 * Byte and f-strings, and escapes other than \\ \' \" and a continuation,
 * are not literal paths: false.
 */
static bool literal(const char *s, const el_py_tok *t, el_buf *out)
{
	bool raw = t->prefix == 1 && (s[t->start] == 'r' || s[t->start] == 'R');
	size_t j = t->start + t->prefix + t->quote, end = tok_end(t) - t->quote;

	if (t->kind != EL_PY_STRING || t->prefix > 1 || (t->prefix && !raw && s[t->start] != 'u' && s[t->start] != 'U'))
		return false;
	for (; j < end; j++) {
		if (s[j] == '\\' && !raw) {
			char e = s[++j];

			if (e == '\\' || e == '\'' || e == '"') {
				if (el_buf_putc(out, e) != 0)
					return false;
			} else if (e == '\r' && s[j + 1] == '\n') {
				j++;
			} else if (e != '\n') {
				return false;
			}
			continue;
		}
		if (el_buf_putc(out, s[j]) != 0)
			return false;
	}
	return true;
}

/* Adjacent strings from t[*i] ('a' 'b'), concatenated as Python does; malloc'd or NULL. */
static char *path(const char *s, const el_py_tok *t, size_t n, size_t *i)
{
	el_buf b = EL_BUF_INIT(EL_PY_BASES_MAX);
	int parts = 0;

	while (*i < n && literal(s, &t[*i], &b)) {
		parts++;
		(*i)++;
	}
	/* mmcv fills {{ fileDirname }} and the like in before it runs the file */
	if (parts == 0 || strstr(el_buf_cstr(&b), "{{") || el_buf_put(&b, "", 0) != 0) {
		el_buf_release(&b);
		return NULL;
	}
	return el_buf_detach(&b);
}

/* The right-hand side t[0, n) as a string, a list of strings or a string in brackets, into d. */
static bool rhs(const char *s, const el_py_tok *t, size_t n, el_py_bases *d)
{
	size_t i = 0;
	char *name;

	if (n && tok_is(s, &t[0], EL_PY_OP, "[")) {
		for (i = 1; i < n && !tok_is(s, &t[i], EL_PY_OP, "]");) {
			if (!(name = path(s, t, n, &i)))
				return false;
			el_strvec_push_owned(&d->names, name);
			if (i < n && tok_is(s, &t[i], EL_PY_OP, ","))
				i++;
			else if (i >= n || !tok_is(s, &t[i], EL_PY_OP, "]"))
				return false;
		}
		if (i >= n)
			return false;
		i++;
	} else if (n && tok_is(s, &t[0], EL_PY_OP, "(")) {
		/* a string in brackets; a tuple is not a list to mmcv */
		i = 1;
		if (!(name = path(s, t, n, &i)))
			return false;
		el_strvec_push_owned(&d->names, name);
		if (i >= n || !tok_is(s, &t[i], EL_PY_OP, ")"))
			return false;
		i++;
	} else {
		if (!(name = path(s, t, n, &i)))
			return false;
		el_strvec_push_owned(&d->names, name);
	}
	return i == n;
}

/* The statement t[0, n), which starts with _base_, into d. */
static void assignment(const char *s, const el_py_tok *t, size_t n, el_py_bases *d)
{
	size_t from = 0;

	el_strvec_release(&d->names);
	free(d->unresolved);
	d->unresolved = NULL;
	if (n > 1 && tok_is(s, &t[1], EL_PY_OP, "=")) {
		if (rhs(s, t + 2, n - 2, d))
			return;
		el_strvec_release(&d->names);
		from = 2;
	}
	/* else _base_ += [...], _base_.append(...): changed, not assigned; unresolved as a whole */
	d->unresolved = from < n ? el_xstrndup(s + t[from].start, tok_end(&t[n - 1]) - t[from].start) : el_xstrdup("");
}

/* `from MODULE import ...` in t[0, n): MODULE as written (".._base_.models.resnet18") into d->modules. */
static void from_import(const char *s, const el_py_tok *t, size_t n, el_py_bases *d)
{
	size_t m = 1;

	if (n < 3 || !tok_is(s, &t[0], EL_PY_NAME, "from"))
		return;
	while (m < n && (t[m].kind == EL_PY_NAME || tok_is(s, &t[m], EL_PY_OP, ".") || tok_is(s, &t[m], EL_PY_OP, "...")) &&
	       (m == 1 || t[m].start == tok_end(&t[m - 1])))
		m++;
	if (m > 1 && m < n && tok_is(s, &t[m], EL_PY_NAME, "import"))
		el_strvec_push_owned(&d->modules, el_xstrndup(s + t[1].start, tok_end(&t[m - 1]) - t[1].start));
}

void el_py_bases_read(el_py_bases *d, const char *s, size_t len)
{
	el_py_lexer lx;
	line_toks l = { 0 };
	bool more = true, in_read_base = false;

	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3; /* a UTF-8 byte order mark, which Python skips */
		len -= 3;
	}
	el_py_lex_init(&lx, s, len, EL_PY_MAX_DEPTH);
	while (more) {
		const el_py_tok *t;

		more = next_line(&lx, &l);
		if (!l.n)
			continue;
		t = l.t;
		/* the block of `with read_base():` is what is indented below it */
		if (in_read_base && t[0].col > 0) {
			from_import(s, t, l.n, d);
			continue;
		}
		in_read_base = false;
		if (t[0].col != 0)
			continue;
		if (tok_is(s, &t[0], EL_PY_NAME, "_base_")) {
			assignment(s, t, first_statement(s, t, l.n), d);
		} else if (l.n > 1 && tok_is(s, &t[0], EL_PY_NAME, "with") && tok_is(s, &t[1], EL_PY_NAME, "read_base")) {
			size_t colon = 2;
			int depth = 0;

			d->read_base = in_read_base = true;
			/* an import on the same line, after the colon that ends the with clause */
			for (; colon < l.n && !(depth == 0 && tok_is(s, &t[colon], EL_PY_OP, ":")); colon++)
				depth += tok_is(s, &t[colon], EL_PY_OP, "(") ? 1 : tok_is(s, &t[colon], EL_PY_OP, ")") ? -1 : 0;
			if (colon < l.n)
				from_import(s, t + colon + 1, l.n - colon - 1, d);
		}
	}
	free(l.t);
}

void el_py_bases_release(el_py_bases *d)
{
	el_strvec_release(&d->names);
	el_strvec_release(&d->modules);
	free(d->unresolved);
	d->unresolved = NULL;
	d->read_base = false;
}
