/* Small helpers for reading text formats (os-release, headers, METADATA). */
#ifndef EL_TEXT_H
#define EL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "buf.h"

/*
 * Iterate lines of [*pos, end): sets *line and *len to the next line without
 * its "\n" or "\r\n" and advances *pos. Returns false at the end.
 */
bool el_next_line(const char **pos, const char *end, const char **line, size_t *len);

/* Trim spaces and tabs on both sides of [*s, *s + *len). */
void el_trim(const char **s, size_t *len);

/* True when the buffer looks like text: no NUL bytes, valid UTF-8. */
bool el_is_text(const char *s, size_t len);

/* Room for any el_fmt_double text and its NUL. */
#define EL_FMT_DOUBLE_SIZE 40

/*
 * d as the lockfile writes it and people read it: a whole number below
 * 2^53 in plain digits (32, not 32.0 or 3.2e+01), anything else the
 * shortest of %.15g, %.16g and %.17g that strtod reads back as the same
 * double (0.005 and 1e-05, not 0.0050000000000000001); an infinity or a
 * NaN as "inf", "-inf", "nan" (the lock writer writes null instead).
 * Returns the length written to buf, NUL excluded.
 */
size_t el_fmt_double(char buf[EL_FMT_DOUBLE_SIZE], double d);

/* True when s starts with prefix. */
bool el_starts_with(const char *s, const char *prefix);
bool el_ends_with(const char *s, const char *suffix);

/*
 * The value of a shell-style assignment as os-release(5) defines it:
 * optional double or single quotes, backslash escapes inside double
 * quotes. Returns a malloc'd string.
 */
char *el_unquote(const char *s, size_t len);

/*
 * Find "#define NAME <integer>" in a C header (LF or CRLF; spaces or tabs;
 * not inside a comment line) and store the integer. Returns true if found.
 */
bool el_c_define_int(const char *text, size_t len, const char *name, long *value);

/* Same, for a string literal: #define NAME "value" (malloc'd into *value). */
bool el_c_define_str(const char *text, size_t len, const char *name, char **value);

/*
 * The string literal assigned to name by the last top-level assignment
 * in a Python file, annotated or not (`__version__ = '1.10.0+cu102'`,
 * `cuda: Optional[str] = '11.8'`), malloc'd. NULL when there is none,
 * when it is None (*present true) or when the value is computed
 * (`'.'.join(...)`: *present false).
 */
char *el_py_assign_str(const char *text, size_t len, const char *name, bool *present);

/* `debug = False`: 1 for True, 0 for False, -1 when not such a literal. */
int el_py_assign_bool(const char *text, size_t len, const char *name);

/* Is name a weights file by its suffix (.pth, .pt, .ckpt, .safetensors, .bin)? */
bool el_is_checkpoint_name(const char *name);

/* PEP 503's normal form of a distribution name (lowercase, runs of -_. as one -), malloc'd. */
char *el_pep503_name(const char *name);

/* An RFC 822 style header "Name: value" (METADATA, PKG-INFO), first match, malloc'd. */
char *el_rfc822_header(const char *text, size_t len, const char *name);

/*
 * url without the credentials a lockfile must not hold: "user:password@"
 * in the authority (ssh's "git@" and ${VAR} placeholders are kept, as
 * PEP 610 says) and, with conda_token, anaconda.org's "/t/<token>" path
 * segment. malloc'd.
 */
char *el_url_strip_credentials(const char *url, bool conda_token);

/*
 * The next code point of [*p, end), advancing *p past it; -1 for a byte
 * that does not start valid UTF-8 (overlong forms and surrogates
 * included), which advances one byte.
 */
long el_utf8_next(const char **p, const char *end);

/*
 * Is cp a character no output should carry as it is: a C0 or C1
 * control, DEL, or one of the bidirectional embeddings, overrides,
 * isolates and marks that reorder what a reader sees (U+202A-U+202E,
 * U+2066-U+2069, U+200E, U+200F, U+061C; CVE-2021-42574, "Trojan Source")?
 */
bool el_is_control_cp(long cp);

/*
 * Text from a lockfile (untrusted) as a terminal should get it: a
 * control character or a byte that is not valid UTF-8 is written as
 * \xNN for each of its bytes (ESC as \x1b, the C1 CSI U+009B as
 * \xc2\x9b), a bidi control (U+061C and up) as \uNNNN; everything else, '\' included,
 * is copied. So no escape sequence, bell, title change or reordering
 * reaches the terminal. el_term_text appends to b (ENVLOCK_ELIMIT past
 * its cap); el_term_put writes to out (errors show in ferror(out)).
 */
int el_term_text(el_buf *b, const char *s);
void el_term_put(FILE *out, const char *s);

/* True when el_term_text would copy s unchanged. */
bool el_term_safe(const char *s);

/* Columns el_term_text(s) takes, counting a code point as one, for aligning text. */
size_t el_term_width(const char *s);

/*
 * text appended to b wrapped at width columns, at spaces only: a word
 * (a URL, a path, a pin) is never broken, nor a command from its program
 * (pip, mim, conda, ln, envlock, --cfg-options, ...) to the ';' or ','
 * that ends it, so a line holding a longer one runs past width. The first line starts at column first, the others
 * after indent spaces. width 0, or under indent + 20: no wrapping.
 * Past b's cap, b is marked failed (el_buf_failed) for its owner to see.
 */
void el_wrap(el_buf *b, const char *text, int width, int first, int indent);

/* el_term_text(text), wrapped as el_wrap does, written to out. */
void el_term_wrap(FILE *out, const char *text, int width, int first, int indent);

#endif
