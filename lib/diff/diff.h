/*
 * Inside envlock diff: locks flattened into items, a table that matches
 * items across any number of files, and the severity of a difference.
 */
#ifndef EL_DIFF_H
#define EL_DIFF_H

#include <cJSON.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "envlock/diff.h"
#include "lock/view.h"
#include "util/buf.h"
#include "util/vec.h"

/* The sections, in lock order (envlock_diff_section_name). */
enum {
	EL_SEC_SYSTEM, EL_SEC_GPU, EL_SEC_CUDA, EL_SEC_CUDNN, EL_SEC_COMPILERS,
	EL_SEC_PYTHON, EL_SEC_CONDA, EL_SEC_PIP, EL_SEC_FRAMEWORKS, EL_SEC_LOADS, EL_SEC_REPOS,
	EL_SEC_CONFIGS, EL_SEC_CHECKPOINTS, EL_SEC_ENV, EL_SEC_COUNT
};

extern const char *const el_diff_sections[EL_SEC_COUNT];

/* Index of a section name, or -1. */
int el_diff_section_index(const char *name);

/* The sections kept by opts (a bit per section), or ENVLOCK_EINVAL for an unknown name. */
int el_diff_section_mask(uint32_t *mask, envlock_ctx *ctx, const envlock_diff_opts *opts);

/* Called once per item of a lock; key and value are borrowed for the call. */
typedef void (*el_item_fn)(void *data, int section, const char *key, const char *value);

/* Flatten the view of a lock into items (lib/diff/flatten.c). */
void el_flatten(const el_view *view, el_item_fn fn, void *data);

/* Interned strings: equal strings get equal ids; id 0 is "none". */
typedef struct {
	char **chunks;      /* the strings' bytes */
	size_t nchunks, chunks_cap, chunk_used, chunk_size;
	struct el_pooled {
		const char *s;
		size_t len;
		uint32_t hash;
	} *strs;            /* by id; strs[0].s = NULL */
	size_t n, cap;
	uint32_t *slots;    /* open addressing: 0 empty, else id */
	size_t nslots;
} el_strpool;

void el_strpool_init(el_strpool *p);
uint32_t el_strpool_intern(el_strpool *p, const char *s);
/* The same for len bytes of s, whose hash (FNV-1a, as el_strpool_intern's) is h. */
uint32_t el_strpool_intern_n(el_strpool *p, const char *s, size_t len, uint32_t h);
static inline const char *el_strpool_get(const el_strpool *p, uint32_t id)
{
	return p->strs[id].s;
}
void el_strpool_release(el_strpool *p);

/* One item across files: its value id in each file (0: the file lacks it). */
typedef struct {
	uint32_t key;     /* pool id */
	uint32_t section;
	uint32_t finding; /* a rule finding's severity + 1; 0 for lock items */
	uint32_t nvals;
	size_t cap;
	uint32_t *vals;
} el_item;

/* Items of many files, matched by (section, key). */
typedef struct {
	el_strpool pool;
	el_item *items;
	size_t n, cap;
	uint32_t *slots;  /* open addressing: 0 empty, else item index + 1 */
	size_t nslots;
	uint32_t mask;    /* sections kept */
	uint32_t file;    /* the file being added */
	el_buf dup;       /* scratch for keys that repeat within a file */
} el_itab;

void el_itab_init(el_itab *t, uint32_t mask);
/* Add every item of a lock's view as file number file (files are added in order 0, 1, ...). */
void el_itab_add_view(el_itab *t, const el_view *view, uint32_t file);
/*
 * Set one item of the current file; a key that repeats in a file gets
 * " (2)", " (3)"... Returns the item (valid until the next set), or NULL
 * when its section is filtered out.
 */
el_item *el_itab_set(el_itab *t, int section, const char *key, const char *value);
static inline uint32_t el_item_val(const el_item *it, uint32_t file)
{
	return file < it->nvals ? it->vals[file] : 0;
}
void el_itab_release(el_itab *t);

/* One file's items, flattened and hashed apart from any table (another thread may fill one). */
typedef struct {
	uint32_t mask;    /* sections kept, as the table's */
	char *text;       /* every key and value, each ending in a NUL */
	size_t len, text_cap;
	struct el_flat_item {
		size_t key, val; /* offsets into text */
		uint32_t section, key_len, key_hash, val_len, val_hash;
	} *v;
	size_t n, cap;
} el_flat;

void el_flat_init(el_flat *fl, uint32_t mask);
/* Flatten a view into fl, replacing what it held. */
void el_flat_view(el_flat *fl, const el_view *view);
/* Add fl's items as file number file (what el_itab_add_view does for a view). */
void el_itab_add_flat(el_itab *t, const el_flat *fl, uint32_t file);
void el_flat_release(el_flat *fl);

/* What a comparison knows beside an item's two values. */
typedef struct {
	bool gpu;        /* a lock records an NVIDIA GPU */
	bool frameworks; /* the frameworks section is compared (not where one lock is an imported list) */
} el_diff_scene;

/*
 * The severity of an item going from a to b (NULL: absent): risky for
 * the core items (CUDA release, cuDNN, driver major, gcc major, Python
 * major.minor, torch, mmcv, mmdet, the CUDA runtime and cuDNN any
 * framework module loads) when the part that matters changed, and for
 * torch between two CUDA builds; breaking for torch to or from a CPU-only
 * build where scene says there is a GPU; info otherwise. Where the
 * frameworks are not compared, pip's entries for them are judged as
 * theirs. scene may be NULL (nothing known). *reason gets a malloc'd
 * line for risky and breaking ones, else NULL.
 */
envlock_severity el_diff_classify(int section, const char *key, const char *a,
				  const char *b, const el_diff_scene *scene, char **reason);

/* One entry of a two-way diff, with what sorting needs. */
typedef struct {
	envlock_diff_entry e;
	int section;
	int section_rank; /* the section's most severe rank: sections sort by it */
} el_diff_row;

/* What the JSON output says about each file of a two-way diff. */
typedef struct {
	const char *name, *id, *hostname, *created;
} el_diff_side;

struct envlock_diff {
	el_itab tab;       /* owns every string the entries point to */
	el_diff_row *v;
	size_t n, cap;
	size_t tally[3];
	el_diff_side a, b;
	char *verdict;
};

/* One row of a drift table. */
typedef struct {
	envlock_drift_item pub;
	int section;
	size_t odd_start;  /* into the drift's odd array, resolved to a pointer at the end */
} el_drift_row;

struct envlock_drift {
	el_itab tab;
	const envlock_rules *rules;
	int all;
	int finished;
	el_strvec files, names; /* as given, and as printed */
	unsigned char *added;   /* by file: put already */
	size_t added_cap, nadded;
	pthread_mutex_t mu;     /* the table, added, nadded: files are put from several threads */
	el_drift_row *v;
	size_t n;
	envlock_drift_odd *odd;
	size_t nodd;
	size_t drifting, odd_files;
	char *verdict;
};

/* Copy s into the pool and return the stable pointer (NULL stays NULL). */
const char *el_strpool_str(el_strpool *p, const char *s);

/* Output helpers shared by the diff and drift printers (lib/diff/print.c). */
#define EL_SGR_RED "\033[31m"
#define EL_SGR_YELLOW "\033[33m"
#define EL_SGR_BOLD "\033[1m"
#define EL_SGR_RESET "\033[0m"

/* s with every run of 64 hex digits (a SHA-256) cut to its first 12 and "…"; malloc'd. */
char *el_display_value(const char *s);
/* Print s escaped for a terminal (el_term_put) padded with spaces to width columns. */
/*
 * Append e to arr as the one JSON form of a difference (diff --json,
 * report --format json, verify --json): section, key, change, severity
 * (not for "same"); for a finding or a resolved one its message, rule,
 * fix and source, else the values a and b (null where a side lacks the
 * item) and the reason. print.c.
 */
void el_diff_entry_json(cJSON *arr, const envlock_diff_entry *e);

void el_print_padded(FILE *out, const char *s, size_t width);
const char *el_severity_sgr(envlock_severity s);

#endif
