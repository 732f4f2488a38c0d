/*
 * envlock — the human summary of a lock (`envlock show`) and the
 * findings of `envlock check` as text. A lock is untrusted: every string
 * from it is printed with its control characters, bidi controls and
 * invalid UTF-8 bytes escaped (\x1b, \u202e, \xff), never raw.
 */
#ifndef ENVLOCK_SHOW_H
#define ENVLOCK_SHOW_H

#include <stdio.h>
#include "common.h"
#include "lock.h"
#include "check.h"

/**
 * Print a short aligned summary of lock to out: OS, glibc, driver,
 * toolkits, cuDNN, gcc, Python, conda env, frameworks, package counts
 * and warnings. Returns 0, or ENVLOCK_EIO when writing fails.
 */
ENVLOCK_EXTERN(int) envlock_show_print(const envlock_lock *lock,
				       envlock_ctx *ctx, FILE *out);

/**
 * Print findings for a person: per finding its severity, section and
 * subject, then the message, the fix and the source, indented; last the
 * counts ("1 breaking, 0 risky, 2 info"), or "no findings: every rule
 * passed". flags: ENVLOCK_PRINT_COLOR tints the severities;
 * ENVLOCK_PRINT_WIDTH wraps the message, the fix and the source (a
 * command in them stays on one line). Returns 0,
 * or ENVLOCK_EIO when writing fails.
 */
ENVLOCK_EXTERN(int) envlock_show_findings(const envlock_findings *f, envlock_ctx *ctx,
					  FILE *out, unsigned flags);

/**
 * The findings as one JSON document: {"findings": [{"rule", "severity",
 * "section", "subject", "message", "fix", "source"}...], "worst": "breaking"
 * | "risky" | "info" | "none"}, keys sorted, 2-space indent. Text from a
 * lock that is not UTF-8 comes out as U+FFFD, so the output always parses.
 */
ENVLOCK_EXTERN(int) envlock_show_findings_json(const envlock_findings *f, envlock_ctx *ctx, FILE *out);

#endif
