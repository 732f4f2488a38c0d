/*
 * envlock — a lock made ready for a paper (`envlock report`).
 *
 * One citation line ("environment: envlock sha256:9fca18f431ef… — CUDA
 * 10.2.89, cuDNN 8.2.1, PyTorch 1.10.0+cu102, mmdet 2.25.1"), an
 * appendix table (OS, glibc, GPUs, driver, CUDA, cuDNN, gcc, Python,
 * conda env, frameworks with their builds, code commits, configs and
 * checkpoints with short digests, the full lock id) in Markdown or
 * LaTeX, a self-contained HTML page that adds the package lists, the rule
 * findings and a diff against a second lock, the same summary as JSON,
 * and a plain text rendering for a terminal.
 *
 * Every string taken from the lock is escaped for the format it lands in
 * (a lock is untrusted input); the LaTeX output is ASCII only.
 */
#ifndef ENVLOCK_REPORT_H
#define ENVLOCK_REPORT_H

#include "common.h"
#include "lock.h"
#include "check.h"

typedef enum {
	ENVLOCK_REPORT_TEXT = 0,  /**< plain text for a terminal (control characters replaced) */
	ENVLOCK_REPORT_MARKDOWN,  /**< citation line and a GitHub-flavoured Markdown table */
	ENVLOCK_REPORT_LATEX,     /**< citation line and a table to \input into a document */
	ENVLOCK_REPORT_HTML,      /**< one self-contained page: no script, no outside resource */
	ENVLOCK_REPORT_JSON       /**< the summary as data */
} envlock_report_format;

/** How to report. Zero-initialise, then set what you need. */
typedef struct {
	envlock_report_format format;
	/** Only the citation line, escaped for the format (JSON: a small object). */
	int short_only;
	/** The lockfile as the user named it (HTML, JSON and text say it); may be NULL. */
	const char *name;
	/**
	 * HTML, JSON and text: also the differences from the reported lock
	 * (A, the one that works) to this one (B); NULL for none. Borrowed.
	 */
	const envlock_lock *against;
	const char *against_name;
	/** Rules for the findings and the diff; NULL: the built-in rules. Borrowed. */
	const envlock_rules *rules;
	/** Told about a lock whose stored id does not match its content (may be NULL). */
	void (*on_warning)(const char *message, void *data);
	void *warning_data;
} envlock_report_opts;

/** "text", "md", "latex", "html", "json". */
ENVLOCK_EXTERN(const char *) envlock_report_format_name(envlock_report_format f);

/**
 * The format named name ("md" and "markdown", "latex" and "tex" are
 * accepted). Returns 0, or ENVLOCK_EINVAL with the known names in the
 * context's error.
 */
ENVLOCK_EXTERN(int) envlock_report_format_parse(envlock_report_format *out, envlock_ctx *ctx,
						const char *name);

/**
 * Render the report of lock into *out (malloc'd, NUL-terminated, *len
 * bytes; free it with envlock_report_free). Fails with ENVLOCK_EINVAL
 * (against with Markdown, LaTeX or short_only), ENVLOCK_ELIMIT (a report
 * over 256 MiB) or what envlock_check() and envlock_diff_locks() return.
 */
ENVLOCK_EXTERN(int) envlock_report_render(char **out, size_t *len, envlock_ctx *ctx,
					  const envlock_lock *lock, const envlock_report_opts *opts);

/**
 * Render the report and write it to path atomically (temporary file in
 * the same directory, fsync, rename: nothing is half-written, and on
 * failure the previous file at path is untouched); "-" writes to stdout.
 */
ENVLOCK_EXTERN(int) envlock_report_write(envlock_ctx *ctx, const envlock_lock *lock,
					 const envlock_report_opts *opts, const char *path);

/** Free what envlock_report_render returned. NULL is fine. */
ENVLOCK_EXTERN(void) envlock_report_free(char *report);

#endif
