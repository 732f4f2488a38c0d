/*
 * Inside envlock report: the summary of a lock as rows, computed once
 * (summary.c) from the facts show prints too (facts.c), the escaping of lock strings for each output format
 * (escape.c), and one renderer per format.
 */
#ifndef EL_REPORT_H
#define EL_REPORT_H

#include <stdbool.h>

#include "envlock/report.h"
#include "envlock/diff.h"
#include "lock/view.h"
#include "report/facts.h"
#include "util/buf.h"
#include "util/text.h"

/* Largest report rendered; a 64 MiB lock escaped for HTML stays well under it. */
#define EL_REPORT_MAX_BYTES ((size_t)256 << 20)

/* Hex digits of a digest shown in the citation and the tables (see summary.c). */
#define EL_REPORT_SHORT_HEX 12

/* Row groups, in table order. */
enum {
	EL_RG_SYSTEM, EL_RG_GPU, EL_RG_TOOLCHAIN, EL_RG_PYTHON, EL_RG_FRAMEWORKS,
	EL_RG_CODE, EL_RG_CONFIGS, EL_RG_CHECKPOINTS, EL_RG_LOCK, EL_RG_COUNT
};

/* "System", "GPU", ... as table headings. */
extern const char *const el_report_groups[EL_RG_COUNT];

/* One line of the appendix table. Strings are UTF-8 as in the lock (not escaped). */
typedef struct {
	int group;
	char *component;  /* "CUDA toolkit", "torch", "config" */
	char *version;    /* "10.2.89", "sha256:1a2b3c4d5e6f" */
	char *details;    /* build, paths, notes; "" when none */
	bool wide;        /* a long value (the lock id) that LaTeX spans over the columns */
} el_report_row;

/* A component named in the citation line. */
typedef struct {
	char *name;       /* "CUDA", "cuDNN", "PyTorch", "mmdet" */
	char *version;
} el_report_cite;

typedef struct {
	const el_view *view;            /* the lock's, borrowed */
	el_facts facts;                 /* what show says too (facts.h) */
	const envlock_report_opts *opts;
	const char *id;                 /* the id of the content, "sha256:<64 hex>"; borrowed from the lock */
	char short_id[8 + EL_REPORT_SHORT_HEX]; /* "sha256:" + 12 hex */
	const char *stored_id;          /* the file's own "id" when it differs from id, else NULL */
	el_report_cite *cites;
	size_t ncites, cites_cap;
	char *citation;                 /* the whole line, UTF-8 */
	el_report_row *rows;
	size_t nrows, cap;
	envlock_findings *findings;     /* HTML, JSON, text */
	envlock_diff *diff;             /* with opts->against */
} el_report;

/* Build the summary of lock (rows and citation; findings and diff are added by the caller). */
void el_report_build(el_report *r, const envlock_lock *lock, const envlock_report_opts *opts);
void el_report_release(el_report *r);

/*
 * Output with a size cap: a write past EL_REPORT_MAX_BYTES sets overflow
 * and is dropped, so renderers need not check every call.
 */
typedef struct {
	el_buf b;
	bool overflow;
} el_out;

void el_out_put(el_out *o, const char *s, size_t n);
void el_out_puts(el_out *o, const char *s);
void el_out_printf(el_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * s escaped for each format. In every one an invalid UTF-8 byte or a
 * control character is written visibly, as \xNN for each byte (the way
 * `envlock diff` shows them; \uNNNN for the bidi controls), so no
 * terminal escape or reordering gets through. Markdown also
 * backslash-escapes what could start markup or end a table cell; LaTeX
 * is ASCII only (specials as commands, a few known symbols as LaTeX, any
 * other character as <U+XXXX>, a break point after each '/'); HTML writes
 * entities for & < > " '. el_esc_text is the terminal escaping every
 * command uses (el_term_text, lib/util/text.h), whose el_term_width
 * aligns it, and el_utf8_next the decoder all of them walk with.
 */
void el_esc_text(el_out *o, const char *s);
void el_esc_md(el_out *o, const char *s);
void el_esc_latex(el_out *o, const char *s);
void el_esc_html(el_out *o, const char *s);

/* The renderers: one document each, or the citation line alone with opts->short_only. */
void el_report_text(const el_report *r, el_out *o);
void el_report_markdown(const el_report *r, el_out *o);
void el_report_latex(const el_report *r, el_out *o);
int el_report_html(const el_report *r, envlock_ctx *ctx, el_out *o);
void el_report_json(const el_report *r, el_out *o);

#endif
