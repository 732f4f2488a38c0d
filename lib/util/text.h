/* Small helpers for reading text formats (os-release, headers, METADATA). */
#ifndef EL_TEXT_H
#define EL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Iterate lines of [*pos, end): sets *line and *len to the next line without
 * its "\n" or "\r\n" and advances *pos. Returns false at the end.
 */
bool el_next_line(const char **pos, const char *end, const char **line, size_t *len);

/* Trim spaces and tabs on both sides of [*s, *s + *len). */
void el_trim(const char **s, size_t *len);

/* True when the buffer looks like text: no NUL bytes, valid UTF-8. */
bool el_is_text(const char *s, size_t len);

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

#endif
