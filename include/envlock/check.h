/*
 * envlock — compatibility rules and their findings (`envlock check`,
 * and the "breaking" class of `envlock diff`).
 *
 * Rules are data: rules/envlock.rules.json, compiled into the library
 * and replaceable with envlock_rules_load(). Each finding names its rule,
 * a severity, what it is about, why, the fix, and the source of the fact.
 */
#ifndef ENVLOCK_CHECK_H
#define ENVLOCK_CHECK_H

#include <stdio.h>
#include "common.h"
#include "lock.h"

typedef enum {
	ENVLOCK_SEV_INFO = 0,     /**< worth knowing */
	ENVLOCK_SEV_RISKY = 1,    /**< may work; a core part changed or is off the tested path */
	ENVLOCK_SEV_BREAKING = 2  /**< will not work as it is */
} envlock_severity;

typedef struct envlock_rules envlock_rules;
typedef struct envlock_findings envlock_findings;

typedef struct {
	const char *rule;     /**< rule id, e.g. "driver-too-old-for-cuda" */
	envlock_severity severity;
	const char *section;  /**< lock section it concerns: "gpu", "cuda", "frameworks", ... */
	const char *subject;  /**< what, with values: "driver 390.144 / CUDA 10.2.89" */
	const char *message;  /**< why, one line */
	const char *fix;      /**< what to do, one line (may be "") */
	const char *source;   /**< where the fact comes from */
} envlock_finding;

/** The rules compiled into envlock. */
ENVLOCK_EXTERN(int) envlock_rules_load_default(envlock_rules **out, envlock_ctx *ctx);

/** Rules from a file (same format, schemas/envlock.rules.schema.json). */
ENVLOCK_EXTERN(int) envlock_rules_load(envlock_rules **out, envlock_ctx *ctx, const char *path);

ENVLOCK_EXTERN(void) envlock_rules_free(envlock_rules *rules);

/** Evaluate every rule on one lock. Findings are sorted most severe first. */
ENVLOCK_EXTERN(int) envlock_check(envlock_findings **out, envlock_ctx *ctx,
				  const envlock_rules *rules, const envlock_lock *lock);

ENVLOCK_EXTERN(size_t) envlock_findings_count(const envlock_findings *f);

/** Finding i, or NULL past the end. Borrowed from f. */
ENVLOCK_EXTERN(const envlock_finding *) envlock_findings_get(const envlock_findings *f, size_t i);

/** The most severe finding's severity; ENVLOCK_SEV_INFO when there is none. */
ENVLOCK_EXTERN(envlock_severity) envlock_findings_worst(const envlock_findings *f);

ENVLOCK_EXTERN(void) envlock_findings_free(envlock_findings *f);

/**
 * Record the findings of rules on lock in its "checks" section (the rule
 * results at save time, with the digest of the rules and knowledge that produced them),
 * replacing any earlier one; the lock's id changes accordingly.
 */
ENVLOCK_EXTERN(int) envlock_lock_record_checks(envlock_lock *lock, envlock_ctx *ctx,
					       const envlock_rules *rules);

/** "info", "risky", "breaking". */
ENVLOCK_EXTERN(const char *) envlock_severity_name(envlock_severity s);

/**
 * Compare two version strings the way envlock's rules do: numeric
 * release parts ("10.2.89" < "10.10"), PEP 440 pre/post/dev parts
 * ("2.0.0rc4" < "2.0.0" < "2.0.0.post1"), and a local part ("+cu102")
 * that orders after the same version without one. Returns <0, 0, >0.
 */
ENVLOCK_EXTERN(int) envlock_version_cmp(const char *a, const char *b);

#endif
