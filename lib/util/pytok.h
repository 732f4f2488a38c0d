/*
 * Python's tokens, for every reader of Python text in envlock: the config
 * evaluator (config/lex.c), the probes' reading of an __init__.py's
 * version asserts (pysource.c) and of a config's _base_ (pybases.c).
 * Names, numbers, strings (with their prefix), operators, and the ends of
 * logical lines: brackets and backslashes join physical lines, comments
 * vanish, as in CPython's tokenizer. Text that is not Python (a backslash
 * outside a string and not before a newline, a character Python refuses
 * outside a string, a string or bracket left open, a bracket closing
 * another's) stops the reading with the reason and its line. Brackets
 * nest at most max_depth deep, so no text can drive a reader's recursion.
 */
#ifndef EL_PYTOK_H
#define EL_PYTOK_H

#include <stdbool.h>
#include <stddef.h>

#define EL_PY_MAX_DEPTH 200

typedef enum { EL_PY_NAME, EL_PY_NUMBER, EL_PY_STRING, EL_PY_OP, EL_PY_NEWLINE, EL_PY_END, EL_PY_ERROR } el_py_kind;

/* Why the text does not tokenize. */
typedef enum {
	EL_PY_EBACKSLASH = 1, /* a backslash outside a string, not before a newline */
	EL_PY_ESTRING,        /* a string not closed (error_line: where it starts) */
	EL_PY_ECHAR,          /* a character Python does not allow outside a string (error_char) */
	EL_PY_EDEEP,          /* brackets nested deeper than max_depth */
	EL_PY_ECLOSE,         /* a closing bracket (error_char) that closes nothing open */
	EL_PY_EOPEN,          /* a bracket open at the end (error_line: where it opens) */
} el_py_error;

typedef struct {
	el_py_kind kind;
	size_t start, len;  /* its text; a string's with its prefix and quotes */
	int line, col;      /* where it starts: line from 1, column from its physical line's start */
	bool bol;           /* the first token of a logical line */
	unsigned prefix;    /* EL_PY_STRING: the length of its prefix (r, b, f, u, rb, ...) */
	unsigned quote;     /* EL_PY_STRING: 1 or 3 */
	bool backslash;     /* EL_PY_STRING: a backslash inside */
} el_py_tok;

typedef struct {
	const char *s;
	size_t len, i, line_start;
	int line, depth, max_depth;
	bool bol;
	el_py_error error;        /* 0 while the text tokenizes */
	int error_line;
	unsigned char error_char;
	char closers[EL_PY_MAX_DEPTH];
	int opened[EL_PY_MAX_DEPTH];
} el_py_lexer;

/* Read the text [s, s + len) with brackets nested at most max_depth (<= EL_PY_MAX_DEPTH) deep. */
void el_py_lex_init(el_py_lexer *lx, const char *s, size_t len, int max_depth);

/*
 * The next token into *t, and its kind. After a logical line's last token
 * comes an EL_PY_NEWLINE (an empty one at the end of the text when the
 * text does not end in a newline), then at the end EL_PY_END, again on
 * every call. EL_PY_ERROR, again on every call, when the text does not
 * tokenize: lx->error says why, lx->error_line where.
 */
el_py_kind el_py_lex(el_py_lexer *lx, el_py_tok *t);

/* Whether c may be part of a name: ASCII letters, digits, '_', and every byte of a UTF-8 sequence. */
static inline bool el_py_is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

#endif
