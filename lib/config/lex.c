/*
 * Reading a config's text: mmcv's {{ }} substitutions, then Python's
 * tokens as util/pytok.c reads them for every Python reader in envlock,
 * with the bracket depth capped so no text can drive the evaluator's
 * recursion.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/internal.h"
#include "util/buf.h"
#include "util/pytok.h"
#include "util/xalloc.h"

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
		if (k >= len || !(el_py_is_word((unsigned char)t[k]) || t[k] == '.'))
			return 0;
		while (k < len && (el_py_is_word((unsigned char)t[k]) || t[k] == '.'))
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

static void push(el_toks *ts, tk_kind kind, const el_py_tok *pt)
{
	el_tok *t;

	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? ts->cap * 2 : 256;
		ts->t = el_xrealloc(ts->t, ts->cap * sizeof(el_tok));
	}
	t = &ts->t[ts->n++];
	t->kind = kind;
	t->start = (uint32_t)pt->start;
	t->len = (uint32_t)pt->len;
	t->line = pt->line;
	t->col = pt->col;
	t->bol = pt->bol;
}

int el_cfg_lex(el_cfg_run *r, const char *path, const char *s, size_t len, el_toks *ts)
{
	static const tk_kind kinds[] = {
		[EL_PY_NAME] = TK_NAME, [EL_PY_NUMBER] = TK_NUM, [EL_PY_STRING] = TK_STR,
		[EL_PY_OP] = TK_OP, [EL_PY_NEWLINE] = TK_NEWLINE, [EL_PY_END] = TK_EOF,
	};
	el_py_lexer lx;
	el_py_tok t;
	el_py_kind k;

	el_py_lex_init(&lx, s, len, EL_CFG_MAX_DEPTH);
	while ((k = el_py_lex(&lx, &t)) != EL_PY_ERROR) {
		push(ts, kinds[k], &t);
		if (k == EL_PY_END)
			return 0;
	}
	switch (lx.error) {
	case EL_PY_EBACKSLASH:
		return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a backslash outside a string", path, lx.error_line);
	case EL_PY_ESTRING:
		return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a string that is not closed", path, lx.error_line);
	case EL_PY_ECHAR:
		return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a character Python does not allow here (0x%02x)", path,
				   lx.error_line, lx.error_char);
	case EL_PY_EDEEP:
		return el_cfg_fail(r, ENVLOCK_ELIMIT, "%s:%d: brackets nested deeper than %d", path, lx.error_line,
				   EL_CFG_MAX_DEPTH);
	case EL_PY_ECLOSE:
		return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a '%c' that closes nothing", path, lx.error_line,
				   lx.error_char);
	default:
		return el_cfg_fail(r, ENVLOCK_EPARSE, "%s:%d: a bracket that is not closed", path, lx.error_line);
	}
}
