/*
 * The _base_ of an OpenMMLab Python config, read from its text: top-level
 * statements found by stepping over strings, comments, brackets and
 * backslash continuations, and the literal paths of `_base_ = ...`.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pybases.h"
#include "xalloc.h"

#define EL_PY_BASES_MAX (1u << 20) /* a config is a short text file */

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/*
 * Python source scanning: just enough to find top-level statements and the
 * extent of one, stepping over strings, comments, brackets and backslash
 * continuations.
 */

/*
 * s[i] is a quote: the index just past the string it opens, or len when
 * it is not closed before len (or, for a one-line string, the newline).
 */
static size_t skip_string(const char *s, size_t i, size_t len, bool *closed)
{
	char q = s[i];
	bool triple = i + 2 < len && s[i + 1] == q && s[i + 2] == q;

	*closed = false;
	i += triple ? 3 : 1;
	while (i < len) {
		if (s[i] == '\\') {
			i += 2;
			continue;
		}
		if (!triple && s[i] == '\n')
			return len;
		if (s[i] == q && (!triple || (i + 2 < len && s[i + 1] == q && s[i + 2] == q))) {
			*closed = true;
			return i + (triple ? 3 : 1);
		}
		i++;
	}
	return len;
}

/* The length of a backslash-newline continuation at s[i], or 0. */
static size_t continuation(const char *s, size_t i, size_t len)
{
	if (s[i] != '\\')
		return 0;
	if (i + 1 < len && s[i + 1] == '\n')
		return 2;
	if (i + 2 < len && s[i + 1] == '\r' && s[i + 2] == '\n')
		return 3;
	return 0;
}

/*
 * The end of the statement starting at i: the newline (or ';' with
 * at_semicolon) outside brackets, or len. *last gets the index just past
 * its last character that is not a blank, a comment or a continuation.
 */
static size_t stmt_end(const char *s, size_t i, size_t len, bool at_semicolon, size_t *last)
{
	int depth = 0;

	*last = i;
	while (i < len) {
		char c = s[i];

		if (c == '#') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (continuation(s, i, len)) {
			i += continuation(s, i, len);
			continue;
		}
		if (c == '\n' && depth == 0)
			return i;
		if (c == ';' && depth == 0 && at_semicolon)
			return i;
		if (c == '\'' || c == '"') {
			bool closed;

			i = skip_string(s, i, len, &closed);
			*last = i;
			continue;
		}
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && depth > 0)
			depth--;
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f')
			*last = i + 1;
		i++;
	}
	return len;
}

/* Step over blanks, newlines, comments and continuations inside [i, end). */
static size_t skip_blank(const char *s, size_t i, size_t end)
{
	while (i < end) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' || s[i] == '\f')
			i++;
		else if (continuation(s, i, end))
			i += continuation(s, i, end);
		else if (s[i] == '#')
			while (i < end && s[i] != '\n')
				i++;
		else
			break;
	}
	return i;
}

/*
 * One string literal at s[*i] appended to out: plain or r/u-prefixed, any
 * quote style. Byte and f-strings, and escapes other than \\ \' \" and a
 * continuation, are not literal paths: false.
 */
static bool parse_literal(const char *s, size_t *i, size_t end, el_buf *out)
{
	size_t k = *i, close, quote;
	bool raw = false, closed;

	if (k < end && (s[k] == 'r' || s[k] == 'R')) {
		raw = true;
		k++;
	} else if (k < end && (s[k] == 'u' || s[k] == 'U')) {
		k++;
	}
	if (k >= end || (s[k] != '\'' && s[k] != '"'))
		return false;
	close = skip_string(s, k, end, &closed);
	if (!closed)
		return false;
	quote = close - k >= 6 && s[k + 1] == s[k] && s[k + 2] == s[k] ? 3 : 1;
	for (size_t j = k + quote; j < close - quote; j++) {
		if (s[j] == '\\' && !raw) {
			char e = s[++j];

			if (e == '\\' || e == '\'' || e == '"')
				el_buf_putc(out, e);
			else if (e == '\r' && s[j + 1] == '\n')
				j++;
			else if (e != '\n')
				return false;
			continue;
		}
		el_buf_putc(out, s[j]);
	}
	*i = close;
	return true;
}

/* Adjacent literals ('a' 'b'), concatenated as Python does; malloc'd or NULL. */
static char *parse_path(const char *s, size_t *i, size_t end)
{
	el_buf b = EL_BUF_INIT(EL_PY_BASES_MAX);
	size_t k = *i;
	int n = 0;

	while (parse_literal(s, &k, end, &b)) {
		n++;
		*i = k;
		k = skip_blank(s, k, end);
	}
	/* mmcv fills {{ fileDirname }} and the like in before it runs the file */
	if (n == 0 || strstr(el_buf_cstr(&b), "{{")) {
		el_buf_release(&b);
		return NULL;
	}
	el_buf_put(&b, "", 0);
	return el_buf_detach(&b);
}

/* The right-hand side [i, end) as a string or a list of strings, into d. */
static bool parse_rhs(const char *s, size_t i, size_t end, el_py_bases *d)
{
	char *name;

	i = skip_blank(s, i, end);
	if (i < end && s[i] == '[') {
		i = skip_blank(s, i + 1, end);
		while (i < end && s[i] != ']') {
			if (!(name = parse_path(s, &i, end)))
				return false;
			el_strvec_push_owned(&d->names, name);
			i = skip_blank(s, i, end);
			if (i < end && s[i] == ',')
				i = skip_blank(s, i + 1, end);
			else if (i >= end || s[i] != ']')
				return false;
		}
		if (i >= end)
			return false;
		i++;
	} else if (i < end && s[i] == '(') {
		/* a parenthesised string; a tuple is not a list to mmcv */
		i = skip_blank(s, i + 1, end);
		if (!(name = parse_path(s, &i, end)))
			return false;
		el_strvec_push_owned(&d->names, name);
		i = skip_blank(s, i, end);
		if (i >= end || s[i] != ')')
			return false;
		i++;
	} else {
		if (!(name = parse_path(s, &i, end)))
			return false;
		el_strvec_push_owned(&d->names, name);
	}
	return skip_blank(s, i, end) == end;
}

/* "_base_ ..." at the start of a top-level statement at s[i]. */
static void parse_assignment(const char *s, size_t i, size_t len, el_py_bases *d)
{
	size_t rhs, last;

	/* the last assignment wins, as when Python runs the file */
	el_strvec_release(&d->names);
	free(d->unresolved);
	d->unresolved = NULL;
	rhs = i + strlen("_base_");
	while (rhs < len && (s[rhs] == ' ' || s[rhs] == '\t'))
		rhs++;
	if (rhs < len && s[rhs] == '=' && (rhs + 1 >= len || s[rhs + 1] != '=')) {
		stmt_end(s, ++rhs, len, true, &last);
		if (parse_rhs(s, rhs, last, d))
			return;
		el_strvec_release(&d->names);
		rhs = skip_blank(s, rhs, last);
	} else {
		/* _base_ += [...], _base_.append(...): changed, not assigned */
		rhs = i;
		stmt_end(s, rhs, len, true, &last);
	}
	d->unresolved = el_xstrndup(s + rhs, last > rhs ? last - rhs : 0);
}

/* Does the statement at s[i] read `with read_base():` (mmengine's new style)? */
static bool is_read_base(const char *s, size_t i, size_t len)
{
	if (len - i < 5 || strncmp(s + i, "with", 4) != 0 || (s[i + 4] != ' ' && s[i + 4] != '\t'))
		return false;
	i += 4;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return len - i > 9 && strncmp(s + i, "read_base", 9) == 0 && !is_ident(s[i + 9]);
}

/* `from MODULE import ...` at s[i]: MODULE as written (".._base_.models.resnet18") into d->modules. */
static void parse_from(const char *s, size_t i, size_t end, el_py_bases *d)
{
	size_t m;

	if (end - i < 5 || strncmp(s + i, "from", 4) != 0 || (s[i + 4] != ' ' && s[i + 4] != '\t'))
		return;
	i = skip_blank(s, i + 4, end);
	for (m = i; m < end && (s[m] == '.' || is_ident(s[m])); m++)
		;
	if (m == i || m == end || (s[m] != ' ' && s[m] != '\t'))
		return;
	if (skip_blank(s, m, end) + 6 <= end && strncmp(s + skip_blank(s, m, end), "import", 6) == 0)
		el_strvec_push_owned(&d->modules, el_xstrndup(s + i, m - i));
}

/*
 * The block of the `with read_base():` statement at s[i]: each `from ...
 * import` in it, on the same line after the colon or indented below.
 * Returns where the next top-level statement starts.
 */
static size_t read_base_block(const char *s, size_t i, size_t len, el_py_bases *d)
{
	size_t last, end = stmt_end(s, i, len, false, &last), k;
	int depth = 0;

	/* the colon that ends the with clause, after read_base()'s brackets */
	for (k = i; k < last && !(s[k] == ':' && depth == 0); k++)
		depth += s[k] == '(' ? 1 : s[k] == ')' ? -1 : 0;
	if (k < last)
		parse_from(s, skip_blank(s, k + 1, last), last, d);
	while (end < len) {
		size_t line = end + 1, body = line;

		while (body < len && (s[body] == ' ' || s[body] == '\t'))
			body++;
		if (body >= len)
			return len;
		if (s[body] == '\n' || s[body] == '\r' || s[body] == '#') {
			/* a blank or comment line does not end the block */
			for (end = body; end < len && s[end] != '\n'; end++)
				;
			continue;
		}
		if (body == line)
			return line;
		end = stmt_end(s, body, len, false, &last);
		parse_from(s, body, last, d);
	}
	return len;
}

void el_py_bases_read(el_py_bases *d, const char *s, size_t len)
{
	size_t i = 0, last;

	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3; /* a UTF-8 byte order mark, which Python skips */
	while (i < len) {
		if (len - i > 6 && strncmp(s + i, "_base_", 6) == 0 && !is_ident(s[i + 6])) {
			parse_assignment(s, i, len, d);
		} else if (is_read_base(s, i, len)) {
			d->read_base = true;
			i = read_base_block(s, i, len, d);
			continue;
		}
		/* to the end of the line, past any ';' and what follows it */
		i = stmt_end(s, i, len, false, &last);
		if (i < len)
			i++;
	}
}

void el_py_bases_release(el_py_bases *d)
{
	el_strvec_release(&d->names);
	el_strvec_release(&d->modules);
	free(d->unresolved);
	d->unresolved = NULL;
	d->read_base = false;
}
