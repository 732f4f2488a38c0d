/*
 * The config evaluator's insides: values, the token stream, one run's
 * state and limits. Nothing here is run: a config is read as data.
 */
#ifndef EL_CONFIG_INTERNAL_H
#define EL_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "config.h"
#include "envlock/common.h"

#define EL_CFG_MAX_FILE   (1u << 20) /* a config file, as the probe reads it */
#define EL_CFG_MAX_TEXT   (2u << 20) /* the text after {{ }} substitution */
#define EL_CFG_MAX_STR    (1u << 20) /* one string value */
#define EL_CFG_MAX_DEPTH  200        /* brackets, expressions and values */
#define EL_CFG_MAX_NODES  1000000    /* values made in one run, copies included */
#define EL_CFG_MAX_KEYS   200000     /* keys in one dict */
#define EL_CFG_MAX_FILES  256        /* files in one chain */
#define EL_CFG_MAX_NOTES  10000      /* not-evaluated items kept */
#define EL_CFG_MAX_STEPS  1000000    /* loop and comprehension steps in one run */

typedef enum {
	CV_NONE, CV_BOOL, CV_INT, CV_FLOAT, CV_STR, CV_LIST, CV_TUPLE, CV_DICT,
	CV_UNKNOWN, /* a value that was not evaluated, with why: never guessed */
	CV_MODULE,  /* `import x`: mmcv leaves modules out of the config */
	CV_BASEREF, /* mmcv's {{_base_.x}} placeholder, resolved after the bases */
	CV_BIGINT   /* an integer past 64 bits, kept as its digits (u.str) */
} cv_kind;

typedef struct cv cv;
typedef struct cv_dict cv_dict;

/*
 * A value. Lists, tuples and dicts are shared as Python shares them: a
 * name, a dict entry and a list item may hold the same one, and an edit
 * through one is seen through all (refs counts the holders). A value is
 * never made to hold itself (cv_seq_push and cv_dict_set refuse it), so
 * every value is a tree of shared parts and is freed by counting.
 */
struct cv {
	cv_kind kind;
	int refs;
	int depth;      /* containers: 1 + the deepest child when it was put in */
	bool cfgdict;   /* a ConfigDict (read from a base): attribute access, and values put in are copied */
	int line;       /* CV_BASEREF, CV_UNKNOWN: where it was written */
	char *file;     /* CV_UNKNOWN: the file of line */
	char *why;      /* CV_UNKNOWN: what could not be evaluated */
	union {
		bool b;
		long long i;
		double f;
		struct {
			char *s; /* NUL-terminated, no NUL inside */
			size_t n;
		} str;
		struct {
			cv **v;
			size_t n, cap;
		} seq;
		cv_dict *d;
	} u;
};

struct cv_dict {
	char **keys;
	cv **vals;
	size_t n, cap;
	uint32_t *index; /* open addressing, entry i stored as i + 1 */
	size_t index_cap;
};

typedef struct el_cfg_run el_cfg_run;

/* One evaluation: limits shared by every file of the chain, and what was found. */
struct el_cfg_run {
	envlock_ctx *ctx;
	size_t nodes;  /* values made so far */
	size_t steps;  /* loop and comprehension steps taken */
	const char *at_file; /* the statement being run, for the messages of limits met inside values */
	int at_line;
	int fatal;     /* an ENVLOCK_E* code once a limit or a syntax error stops the run */
	cJSON *notes;  /* [{file, line, key, what}] */
	int n_notes;
	char *last_key, *last_what; /* the last note's, so a value met twice at one path is named once */
	int last_line;
	cJSON *imports;/* [{file, line, module}] */
	const char *stack[EL_CFG_MAX_FILES]; /* the files being read, for cycles */
	int stack_n;
	int files;
	/* where a 'pkg::path' base is looked for (el_config_effective_in); NULL: nowhere */
	const el_config_sites *sites;
	char *missing;  /* the file or package a chain lacks, once ENVLOCK_ENOTFOUND stops it */
	/* set by merge.c, called by eval.c (so the two files do not call each other) */
	cv *(*load_bases)(el_cfg_run *r, const char *path, int line, const cv *bases);
	cv *(*load_module)(el_cfg_run *r, const char *path, int line, int dots, const char *module);
};

/* values (value.c); a cv * returned is a reference the caller holds */
cv *cv_new(el_cfg_run *r, cv_kind kind);
cv *cv_str(el_cfg_run *r, const char *s, size_t n);
cv *cv_int(el_cfg_run *r, long long i);
cv *cv_float(el_cfg_run *r, double f);
cv *cv_bool(el_cfg_run *r, bool b);
cv *cv_unknown(el_cfg_run *r, const char *file, int line, const char *what);
cv *cv_ref(cv *v);
void cv_free(cv *v); /* drops one reference */
/* A new value equal to v sharing nothing with it (copy.deepcopy); NULL with r->fatal past the depth limit. */
cv *cv_copy(el_cfg_run *r, const cv *v);
/* A new list, tuple or dict holding v's items (dict.copy(), list(x)). */
cv *cv_shallow(el_cfg_run *r, const cv *v, cv_kind kind);
/* ConfigDict._hook: a dict becomes a new ConfigDict, a list or tuple a new one of hooked items. */
cv *cv_hook(el_cfg_run *r, cv *v);
/* Every dict in v a ConfigDict (a base's values, as mmengine converts them). */
void cv_mark_cfgdict(cv *v);
/* v, in place, becomes a value not evaluated: every holder sees it so. */
void cv_taint(cv *v, const char *file, int line, const char *what);
int cv_seq_push(el_cfg_run *r, cv *seq, cv *item);               /* takes item */
int cv_seq_set(el_cfg_run *r, cv *seq, size_t i, cv *item);      /* takes item */
cv *cv_dict_get(const cv *d, const char *key);
int cv_dict_find(const cv *d, const char *key); /* index or -1 */
int cv_dict_set(el_cfg_run *r, cv *d, const char *key, cv *val); /* takes val */
cv *cv_dict_pop(cv *d, const char *key);                       /* caller owns */
/* Python's ==, for values evaluated (-1: one is not) */
int cv_equal(const cv *a, const cv *b);
/* Python's truth value, -1 when it is not known */
int cv_truthy(const cv *v);
/*
 * The value as JSON: tuples are arrays, integers exact. What is not
 * evaluated is left out and noted under each key path it is found at
 * (a list holding one is left out whole); modules are left out silently
 * at the top level (imported names). NULL when v itself is left out.
 */
cJSON *cv_emit(el_cfg_run *r, const cv *v, const char *path, bool top);
const char *cv_kind_name(cv_kind k);

/* the run (run.c) */
int el_cfg_fail(el_cfg_run *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void el_cfg_note(el_cfg_run *r, const char *file, int line, const char *key, const char *what);

/* tokens (lex.c) */
typedef enum { TK_NAME, TK_NUM, TK_STR, TK_OP, TK_NEWLINE, TK_EOF } tk_kind;

typedef struct {
	tk_kind kind;
	uint32_t start, len; /* in the text */
	int line, col;
	bool bol;            /* the first token of a logical line */
} el_tok;

typedef struct {
	el_tok *t;
	size_t n, cap;
} el_toks;

/*
 * mmcv's text substitutions, done on the text before it is read as mmcv
 * does them: {{ fileDirname }} and the other predefined variables become
 * their text; {{ _base_.a.b }} becomes a quoted placeholder. Returns a
 * malloc'd text (*out_len) or NULL with r->fatal set.
 */
char *el_cfg_substitute(el_cfg_run *r, const char *path, const char *text, size_t len, size_t *out_len);
#define EL_CFG_BASEREF_MARK '\x01'

/* Tokenize; 0, or an ENVLOCK_E* code (r->fatal set, message naming path:line). */
int el_cfg_lex(el_cfg_run *r, const char *path, const char *text, size_t len, el_toks *out);

/* one file (eval.c) */
typedef struct {
	cv *names; /* the file's top-level names, a CV_DICT in assignment order */
	cv *base;  /* its merged bases (a CV_DICT) when it has a _base_, else NULL */
	bool lazy; /* it reads its bases with read_base(): mmengine's lazy-import config */
} el_cfg_file;

/* Evaluate one file's text (its bases through r->load_bases). 0 or r->fatal. */
int el_cfg_eval(el_cfg_run *r, const char *path, const char *text, size_t len, el_cfg_file *out);
void el_cfg_file_release(el_cfg_file *f);

/*
 * r->load_bases: the merged bases a file's _base_ names (NULL: r->fatal set);
 * r->load_module: a read_base() import, `from <dots><module> import ...`, as
 * the names of that file, or NULL with a note.
 */
/* mmcv's merge of child a into base *b (both CV_DICT): *b becomes the merged value; 0 or r->fatal */
int el_cfg_merge(el_cfg_run *r, const char *file, cv **b, cv *a, bool allow_list_keys);

#endif
