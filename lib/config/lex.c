/*
 * Reading a config's text: mmcv's {{ }} substitutions, then Python's
 * tokens (names, numbers, strings, operators, logical line ends; brackets
 * and backslashes join lines, comments vanish), with the bracket depth
 * capped so no text can drive the reader's recursion.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/internal.h"
#include "util/buf.h"
#include "util/xalloc.h"

static bool is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

/* At text[i] "{{": the length of "{{ <ws> name <ws> }}" with name matched by want (NULL: _base_.x), else 0. */
static size_t match_braces(const char *t, size_t i, size_t len, const char *want, size_t *name_at, size_t *name_len)
{
	size_t j = i + 2, k;

	while (j < len && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n' || t[j] == '\r'))
		j++;
	k = j;
	if (want) {
		size_t wl = strlen(want);

		if (len - j < wl || memcmp(t + j, want, wl))
			return 0;
		k = j + wl;
	} else {
		if (len - j < 7 || memcmp(t + j, "_base_.", 7))
			return 0;
		k = j + 7;
		if (k >= len || !(is_word((unsigned char)t[k]) || t[k] == '.'))
			return 0;
		while (k < len && (is_word((unsigned char)t[k]) || t[k] == '.'))
			k++;
		*name_at = j + 7;
		*name_len = k - (j + 7);
	}
	while (k < len && (t[k] == ' ' || t[k] == '\t' || t[k] == '\n' || t[k] == '\r'))
		k++;
	if (len - k < 2 || t[k] != '}' || t[k + 1] != '}')
		return 0;
	return k + 2 - i;
}

char *el_cfg_substitute(el_cfg_run *r, const char *path, const char *text, size_t len, size_t *out_len)
{
	el_buf b = EL_BUF_INIT(EL_CFG_MAX_TEXT);
	char cwd[PATH_MAX], *abs, *slash, *dot;
	const char *base;
	static const char *const var_names[4] = { "fileDirname", "fileBasename", "fileBasenameNoExtension",
						    "fileExtname" };
	char *vars[4];
	int err = 0;

	/* mmcv's predefined variables, from the file's absolute path, '\\' written '/' */
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		abs = el_xstrdup(path);
	else
		abs = el_xasprintf("%s/%s", cwd, path);
	slash = strrchr(abs, '/');
	base = slash ? slash + 1 : abs;
	dot = strrchr(base, '.');
	vars[0] = slash ? el_xstrndup(abs, (size_t)(slash - abs)) : el_xstrdup("");
	vars[1] = el_xstrdup(base);
	vars[2] = dot ? el_xstrndup(base, (size_t)(dot - base)) : el_xstrdup(base);
	vars[3] = el_xstrdup(dot ? dot : "");
	free(abs);

	for (size_t i = 0; i < len && !err;) {
		size_t m = 0, at = 0, nl = 0;

		if (text[i] == '{' && i + 1 < len && text[i + 1] == '{') {
			for (int v = 0; v < 4 && !m; v++)
				if ((m = match_braces(text, i, len, var_names[v], &at, &nl)))
					err = el_buf_puts(&b, vars[v]);
			if (!m && (m = match_braces(text, i, len, NULL, &at, &nl))) {
				/* mmcv writes "<random name>" here and swaps the value in after the bases merge */
				err = el_buf_putc(&b, '"') || el_buf_putc(&b, EL_CFG_BASEREF_MARK) ||
				      el_buf_put(&b, text + at, nl) || el_buf_putc(&b, EL_CFG_BASEREF_MARK) ||
				      el_buf_putc(&b, '"');
			}
		}
		if (m) {
			i += m;
			continue;
		}
		err = el_buf_putc(&b, text[i]);
		i++;
	}
	for (int v = 0; v < 4; v++)
		free(vars[v]);
	if (err) {
		el_buf_release(&b);
		el_cfg_fail(r, ENVLOCK_ELIMIT, "%s: longer than %u bytes once its {{ }} are substituted", path,
			    EL_CFG_MAX_TEXT);
		return NULL;
	}
	*out_len = b.len;
	if (!b.data)
		return el_xstrdup("");
	return el_buf_detach(&b);
}

static void push(el_toks *ts, tk_kind kind, size_t start, size_t len, int line, int col, bool bol)
{
	el_tok *t;

	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? ts->cap * 2 : 256;
		ts->t = el_xrealloc(ts->t, ts->cap * sizeof(el_tok));
	}
	t = &ts->t[ts->n++];
	t->kind = kind;
	t->start = (uint32_t)start;
	t->len = (uint32_t)len;
	t->line = line;
	t->col = col;
	t->bol = bol;
}

static size_t op_len(const char *s, size_t left)
{
	static const char *const ops3[] = { "**=", "//=", ">>=", "<<=", "...", NULL };
	static const char *const ops2[] = { "**", "//", "==", "!=", "<=", ">=", "->", "+=", "-=", "*=", "/=",
					    "%=", "&=", "|=", "^=", "@=", ":=", "<<", ">>", NULL };

	for (int i = 0; ops3[i]; i++)
		if (left >= 3 && !memcmp(s, ops3[i], 3))
			return 3;
	for (int i = 0; ops2[i]; i++)
		if (left >= 2 && !memcmp(s, ops2[i], 2))
			return 2;
	return strchr("()[]{},:.;@=+-*/%<>&|^~", *s) ? 1 : 0;
}

int el_cfg_lex(el_cfg_run *r, const char *path, const char *s, size_t len, el_toks *ts)
{
	size_t i = 0, line_start = 0;
	int line = 1, depth = 0;
	bool bol = true;
	char closers[EL_CFG_MAX_DEPTH];
	int opened[EL_CFG_MAX_DEPTH];

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		int col = (int)(i - line_start);

		if (c == '\n') {
			if (!depth && !bol)
				push(ts, TK_NEWLINE, i, 1, line, col, false);
			if (!depth)
				bol = true;
			line++;
			line_start = ++i;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
			i++;
			continue;
		}
		if (c == '#') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '\\') {
			size_t j = i + 1;

			if (j < len && s[j] == '\r')
				j++;
			if (j < len && s[j] == '\n') {
				line++;
				line_start = i = j + 1;
				continue;
			}
			return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a backslash outside a string", path, line);
		}
		/* a string, with its prefix */
		{
			size_t j = i;

			while (j < len && j - i < 2 && strchr("rRbBuUfF", s[j]) && s[j])
				j++;
			if (j < len && (s[j] == '\'' || s[j] == '"') && (j == i || i == 0 || !is_word((unsigned char)s[i - 1]))) {
				char q = s[j];
				bool triple = j + 2 < len && s[j + 1] == q && s[j + 2] == q;
				int start_line = line;
				size_t k = j + (triple ? 3 : 1);
				bool closed = false;

				while (k < len) {
					if (s[k] == '\\' && k + 1 < len) {
						if (s[k + 1] == '\n') {
							line++;
							line_start = k + 2;
						}
						k += 2;
						continue;
					}
					if (s[k] == '\n') {
						if (!triple)
							break;
						line++;
						line_start = k + 1;
					}
					if (s[k] == q && (!triple || (k + 2 < len && s[k + 1] == q && s[k + 2] == q))) {
						k += triple ? 3 : 1;
						closed = true;
						break;
					}
					k++;
				}
				if (!closed)
					return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a string that is not closed", path,
							   start_line);
				push(ts, TK_STR, i, k - i, start_line, col, bol);
				bol = false;
				i = k;
				continue;
			}
		}
		if (is_word(c) && !(c >= '0' && c <= '9')) {
			size_t j = i;

			while (j < len && is_word((unsigned char)s[j]))
				j++;
			push(ts, TK_NAME, i, j - i, line, col, bol);
			bol = false;
			i = j;
			continue;
		}
		if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9')) {
			size_t j = i;

			while (j < len && (is_word((unsigned char)s[j]) || s[j] == '.' ||
					   ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') &&
					    !(s[i] == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X')))))
				j++;
			push(ts, TK_NUM, i, j - i, line, col, bol);
			bol = false;
			i = j;
			continue;
		}
		{
			size_t n = op_len(s + i, len - i);

			if (!n)
				return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a character Python does not allow here (0x%02x)",
						   path, line, c);
			if (n == 1 && strchr("([{", c)) {
				if (depth >= EL_CFG_MAX_DEPTH)
					return el_cfg_fail(r, ENVLOCK_ELIMIT, "%s:%d: brackets nested deeper than %d", path,
							   line, EL_CFG_MAX_DEPTH);
				opened[depth] = line;
				closers[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
			} else if (n == 1 && strchr(")]}", c)) {
				if (!depth || closers[depth - 1] != c)
					return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a '%c' that closes nothing", path, line, c);
				depth--;
			}
			push(ts, TK_OP, i, n, line, col, bol);
			bol = false;
			i += n;
		}
	}
	if (depth)
		return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a bracket that is not closed", path, opened[depth - 1]);
	if (!bol)
		push(ts, TK_NEWLINE, len, 0, line, 0, false);
	push(ts, TK_EOF, len, 0, line, 0, true);
	return 0;
}
