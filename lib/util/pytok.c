/* Python's tokens (pytok.h). */
#include <string.h>

#include "pytok.h"

void el_py_lex_init(el_py_lexer *lx, const char *s, size_t len, int max_depth)
{
	lx->s = s;
	lx->len = len;
	lx->i = lx->line_start = 0;
	lx->line = 1;
	lx->depth = 0;
	lx->max_depth = max_depth < EL_PY_MAX_DEPTH ? max_depth : EL_PY_MAX_DEPTH;
	lx->bol = true;
	lx->error = 0;
	lx->error_line = 0;
	lx->error_char = 0;
}

static el_py_kind fail(el_py_lexer *lx, el_py_tok *t, el_py_error why, int line, unsigned char c)
{
	lx->error = why;
	lx->error_line = line;
	lx->error_char = c;
	t->kind = EL_PY_ERROR;
	return EL_PY_ERROR;
}

static el_py_kind token(el_py_lexer *lx, el_py_tok *t, el_py_kind kind, size_t start, size_t len, int line)
{
	t->kind = kind;
	t->start = start;
	t->len = len;
	t->line = line;
	t->col = (int)(start - lx->line_start);
	t->bol = lx->bol;
	lx->bol = false;
	lx->i = start + len;
	return kind;
}

/* The length of the operator at s (left bytes there), 0 when none starts there. */
static size_t op_len(const char *s, size_t left)
{
	char c = s[0], n = left >= 2 ? s[1] : 0, m = left >= 3 ? s[2] : 0;

	/* ** // << >> and their augmented forms **= //= <<= >>= */
	if (n == c && (c == '*' || c == '/' || c == '<' || c == '>'))
		return m == '=' ? 3 : 2;
	if (c == '.' && n == '.' && m == '.')
		return 3;
	if (n == '=' && c && strchr("=!<>+-*/%&|^@:", c))
		return 2;
	if (c == '-' && n == '>')
		return 2;
	return c && strchr("()[]{},:.;@=+-*/%<>&|^~", c) ? 1 : 0;
}

/* A string at s[i], its prefix [i, j) and its quote at s[j]. */
static el_py_kind string(el_py_lexer *lx, el_py_tok *t, size_t i, size_t j)
{
	const char *s = lx->s;
	size_t len = lx->len;
	char q = s[j];
	bool triple = j + 2 < len && s[j + 1] == q && s[j + 2] == q, backslash = false;
	int start_line = lx->line, col = (int)(i - lx->line_start);
	size_t k = j + (triple ? 3 : 1);

	for (;;) {
		if (k >= len)
			return fail(lx, t, EL_PY_ESTRING, start_line, 0);
		if (s[k] == '\\' && k + 1 < len) {
			backslash = true;
			if (s[k + 1] == '\n') {
				lx->line++;
				lx->line_start = k + 2;
			}
			k += 2;
			continue;
		}
		if (s[k] == '\n') {
			if (!triple)
				return fail(lx, t, EL_PY_ESTRING, start_line, 0);
			lx->line++;
			lx->line_start = k + 1;
		}
		if (s[k] == q && (!triple || (k + 2 < len && s[k + 1] == q && s[k + 2] == q)))
			break;
		k++;
	}
	k += triple ? 3 : 1;
	token(lx, t, EL_PY_STRING, i, k - i, start_line);
	t->col = col; /* its first line's, not its last's */
	t->prefix = (unsigned)(j - i);
	t->quote = triple ? 3 : 1;
	t->backslash = backslash;
	return EL_PY_STRING;
}

el_py_kind el_py_lex(el_py_lexer *lx, el_py_tok *t)
{
	const char *s = lx->s;
	size_t len = lx->len, i = lx->i;

	if (lx->error) {
		t->kind = EL_PY_ERROR;
		return EL_PY_ERROR;
	}
	while (i < len) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n') {
			if (!lx->depth && !lx->bol) {
				token(lx, t, EL_PY_NEWLINE, i, 1, lx->line);
				lx->bol = true;
				lx->line++;
				lx->line_start = lx->i;
				return EL_PY_NEWLINE;
			}
			if (!lx->depth)
				lx->bol = true;
			lx->line++;
			lx->line_start = ++i;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
			i++;
			continue;
		}
		if (c == '#') {
			const char *nl = memchr(s + i, '\n', len - i);

			i = nl ? (size_t)(nl - s) : len;
			continue;
		}
		if (c == '\\') {
			size_t j = i + 1;

			if (j < len && s[j] == '\r')
				j++;
			if (j < len && s[j] == '\n') {
				lx->line++;
				lx->line_start = i = j + 1;
				continue;
			}
			return fail(lx, t, EL_PY_EBACKSLASH, lx->line, c);
		}
		/* a string, with its prefix (at most two of rRbBuUfF) */
		{
			size_t j = i;

			while (j < len && j - i < 2 && s[j] && strchr("rRbBuUfF", s[j]))
				j++;
			if (j < len && (s[j] == '\'' || s[j] == '"') &&
			    (j == i || i == 0 || !el_py_is_word((unsigned char)s[i - 1])))
				return string(lx, t, i, j);
		}
		if (el_py_is_word(c) && !(c >= '0' && c <= '9')) {
			size_t j = i;

			while (j < len && el_py_is_word((unsigned char)s[j]))
				j++;
			return token(lx, t, EL_PY_NAME, i, j - i, lx->line);
		}
		if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9')) {
			bool hex = c == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X');
			size_t j = i;

			/* 1e-5 is one number; 0x1e-5 is a subtraction */
			while (j < len && (el_py_is_word((unsigned char)s[j]) || s[j] == '.' ||
					   ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') && !hex)))
				j++;
			return token(lx, t, EL_PY_NUMBER, i, j - i, lx->line);
		}
		{
			size_t n = op_len(s + i, len - i);

			if (!n)
				return fail(lx, t, EL_PY_ECHAR, lx->line, c);
			if (n == 1 && (c == '(' || c == '[' || c == '{')) {
				if (lx->depth >= lx->max_depth)
					return fail(lx, t, EL_PY_EDEEP, lx->line, c);
				lx->opened[lx->depth] = lx->line;
				lx->closers[lx->depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
			} else if (n == 1 && (c == ')' || c == ']' || c == '}')) {
				if (!lx->depth || lx->closers[lx->depth - 1] != c)
					return fail(lx, t, EL_PY_ECLOSE, lx->line, c);
				lx->depth--;
			}
			return token(lx, t, EL_PY_OP, i, n, lx->line);
		}
	}
	lx->i = len;
	if (lx->depth)
		return fail(lx, t, EL_PY_EOPEN, lx->opened[lx->depth - 1], 0);
	if (!lx->bol) {
		token(lx, t, EL_PY_NEWLINE, len, 0, lx->line);
		t->col = 0;
		lx->bol = true;
		return EL_PY_NEWLINE;
	}
	token(lx, t, EL_PY_END, len, 0, lx->line);
	t->col = 0;
	t->bol = true;
	lx->bol = true;
	return EL_PY_END;
}
