/*
 * What `envlock config` shows of an effective config (lib/config's
 * value): Python literals as mmengine's Config.pretty_text writes them,
 * and a diff by key path. The value is read, never changed.
 */
#ifndef EL_CFGVIEW_H
#define EL_CFGVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "envlock/config.h"
#include "util/buf.h"

struct envlock_config {
	cJSON *doc;  /* lib/config's {"effective", "not_evaluated", "imports"}, files as shown */
	char *shown; /* the config's path as a person would write it */
};

/* Room for any el_py_float text and its NUL. */
#define EL_PY_FLOAT_SIZE 40

/*
 * d as Python's repr(float) writes it: the shortest digits that read
 * back as d, in fixed notation from 1e-04 to below 1e16 ("0.02", "1.0",
 * "1000000000000000.0"), else with an exponent of at least two digits
 * ("1e-05", "1e+16"); "inf", "-inf", "nan" for those. Returns the length.
 */
size_t el_py_float(char buf[EL_PY_FLOAT_SIZE], double d);

/* s as Python's repr(str) writes it, quotes included, appended to b. */
int el_py_str(el_buf *b, const char *s);

/* Whether s can be a keyword argument, dict(s=...): an ASCII identifier, not a keyword. */
bool el_py_identifier(const char *s);

/*
 * A scalar JSON value as Python: None, True, False, an integer (a Raw
 * node's digits as they are), a float, a string. false for a container.
 * Past b's cap, b is marked failed (el_buf_failed) for its owner to see.
 */
bool el_py_scalar(el_buf *b, const cJSON *v);

/* Does every key of dict make a keyword argument, dict(a=1), rather than a mapping, {'a-b': 1}? */
bool el_py_keyword_form(const cJSON *dict);

/* v on one line as Python: dict(a=1, b=[2, 'x']), {'a-b': None}; ENVLOCK_ELIMIT past b's cap. */
int el_py_inline(el_buf *b, const cJSON *v);

/*
 * A path in a config as a person reads it: keys joined with dots,
 * a key that is not an identifier as ['a-b'], a list index as [2].
 * el_cfg_path_key and el_cfg_path_index append one step to b (first:
 * the path's first, with no dot before it).
 */
int el_cfg_path_key(el_buf *b, const char *key, bool first);
int el_cfg_path_index(el_buf *b, int index);

/* The dotted key of a note ("a.b", list indexes dropped) in the same form; "" stays "". */
int el_cfg_note_path(el_buf *b, const char *key);

/* "file:line" of a note, for a person (el_term_text of the file). */
int el_cfg_note_where(el_buf *b, const cJSON *note);

/*
 * Whether note key ("a.b", as the evaluator writes it, with no list
 * index) leads to or through the place given by the n path steps
 * (each a key, or NULL for a list index): "a" covers "a.b[2].c", and
 * so does "a.b.c" (indexes skipped).
 */
bool el_cfg_note_covers(const char *key, const char *const *steps, size_t n);

#endif
