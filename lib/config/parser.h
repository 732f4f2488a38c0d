/*
 * The reader of one config file's tokens: expressions (expr.c) and
 * statements (exec.c) share it. An expression that cannot be evaluated
 * fails softly (failed, with what, file and line): the nearest value
 * that holds it becomes a value not evaluated carrying that reason.
 */
#ifndef EL_CONFIG_PARSER_H
#define EL_CONFIG_PARSER_H

#include "config/internal.h"

#define EL_CFG_MAX_SCOPES 32 /* comprehensions inside comprehensions */

typedef struct {
	el_cfg_run *r;
	const char *path, *s;
	el_tok *t;
	size_t n, pos;
	size_t limit;     /* tokens at or past it read as the end (a target's last part) */
	el_tok eof;
	cv *names;        /* the file's globals, a CV_DICT in assignment order */
	cv *base;         /* mmengine's _base_: the merged bases, a ConfigDict; NULL without bases */
	cv *locals[EL_CFG_MAX_SCOPES]; /* comprehension scopes, innermost last */
	int n_locals;
	bool lazy;         /* a `with read_base():` was read */
	bool star_unknown; /* an import * whose names are not known: an undefined name may be one */
	int depth;
	int jump;          /* a break (1) or continue (2) leaving a loop's body */
	int loops;         /* loops being run */
	bool failed;       /* the expression being read cannot be evaluated */
	int fail_line;
	char fail_file[4096];
	char what[300];
} parser;

/* tokens */
el_tok *tok(parser *p);
el_tok *peek(parser *p, size_t k);
bool tok_is(parser *p, const el_tok *t, tk_kind kind, const char *text);
bool at_op(parser *p, const char *op);
bool at_name(parser *p, const char *name);
bool at_end(parser *p);
char *tok_text(parser *p, const el_tok *t);
int bracket_delta(parser *p, const el_tok *t); /* +1 opens, -1 closes, 0 neither */
bool is_aug_assign(parser *p, const el_tok *t); /* +=, //=, ... (not ==, <=, >=, !=, :=) */

/* failures */
void *fail(parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void *fail_from(parser *p, const cv *unknown); /* fail with an unknown value's own reason */
void *syntax(parser *p, const char *what);
/* Python would raise here: the config does not load (ENVLOCK_EPARSE naming file and line). */
void *raises(parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool stopped(parser *p);
/* The failure as a value not evaluated (and the failure cleared). */
cv *failure_value(parser *p);

/* skipping: an expression's tokens up to a stop at bracket depth 0 */
#define SKIP_FOR   0x1u /* 'for' */
#define SKIP_IF    0x2u /* 'if', 'else' */
#define SKIP_BOOL  0x4u /* 'and', 'or' */
#define SKIP_COLON 0x8u /* ':' */
void skip_until(parser *p, unsigned stops);
/* An expression from start that failed: skip it, and make it a value not evaluated. */
cv *catch_value(parser *p, size_t start);

/* expressions (expr.c): each returns a reference, NULL when failed or stopped */
cv *test(parser *p);      /* one expression, conditional included */
cv *test_list(parser *p); /* a, b -> a tuple */
cv *or_test(parser *p);
/* Whether v is a value to compute with; if not, fail with its reason and drop it (v stays the caller's when it is). */
bool usable(parser *p, cv *v);
/* Whether v is a value to compute with; if not, fail with its reason (v untouched either way). */
bool known(parser *p, const cv *v);
/* Bind a name in the innermost scope (a comprehension's, else the file's). */
void bind(parser *p, const char *name, cv *v);
cv *lookup_name(parser *p, const char *name, int line); /* a reference, NULL when failed */
/* The items a for loop or comprehension walks: a list or tuple (v itself when it is one), NULL when failed. */
cv *iter_items(parser *p, cv *v, int line);
/* steps of loops and comprehensions, against the run's limit; false when stopped */
bool step(parser *p);
/* Store v at container[key] (a ConfigDict hooks it as mmengine does); takes v. false when failed. */
bool store_item(parser *p, cv *container, const cv *key, cv *v, int line);
bool store_attr(parser *p, cv *container, const char *name, cv *v, int line);
cv *binop(parser *p, int line, const char *op, cv *a, cv *b);

/* statements (exec.c): assign v (taken) to the target tokens [start, end); false when failed */
bool assign_target(parser *p, size_t start, size_t end, cv *v, int line);

#endif
