/* The rules model inside the library: the parsed rules file and the findings list. */
#ifndef EL_RULES_H
#define EL_RULES_H

#include <cJSON.h>

#include "envlock/check.h"
#include "lock/view.h"

struct envlock_rules {
	cJSON *doc;    /* {"envlock_rules": 1, "rules": [...], "tables": {...}} */
	struct el_arena *arena; /* where doc was parsed (lock/arena.h): every check and save loads the 100 KB of rules */
};

struct envlock_findings {
	envlock_finding *v;
	size_t n, cap;
};

/* The rules file text compiled into envlock (builtin.c), NUL-terminated. */
extern const char el_rules_builtin[];

/*
 * Add a finding for rule (its severity, section, source); message and
 * fix are rule templates with {name} placeholders filled from vars
 * (NULL-terminated name, value pairs). findings.c.
 */
void el_finding_add(envlock_findings *f, const cJSON *rule, const char *subject,
		    const char *source, const char *const vars[]);

/* The members of a finding a lock's "checks" records: no fix, no source (el_finding_json). */
#define EL_FINDING_SAVED 1u

/*
 * Append x to arr as the one JSON form of a finding (check --json,
 * report, the lock's checks): rule, severity, section, subject, message,
 * fix, source; with EL_FINDING_SAVED the first five. findings.c.
 */
void el_finding_json(cJSON *arr, const envlock_finding *x, unsigned flags);

/* The severity named "info", "risky" or "breaking"; -1 for any other name (findings.c). */
int el_severity_of(const char *name);

/* Sort f's findings: the worst first, then by section, rule and subject (findings.c). */
void el_findings_sort(envlock_findings *f);

/*
 * Evaluate one rule of the given kind on a lock: rule and table are the
 * rules file's (the rule's table, or NULL), the lock is read through its view.
 */
typedef void (*el_rule_fn)(envlock_findings *f, const cJSON *rule, const cJSON *table,
			   const el_view *lock);

/*
 * The rules on a view (envlock_check's work): for a view that is no
 * loaded lock, such as restore's mix of this machine with a lock's
 * toolkit and frameworks. Free with envlock_findings_free().
 */
envlock_findings *el_check_view(const envlock_rules *rules, const el_view *view);

/*
 * The highest gcc major that nvcc of CUDA version cuda ("10.2.89")
 * accepts as its host compiler: the table of the rule of kind
 * gcc_max_for_nvcc (rules/envlock.rules.json's nvcc_gcc), the row of
 * the release; -1 when no rule or row says (kinds.c, beside that kind).
 */
long el_rules_nvcc_max_gcc(const envlock_rules *rules, const char *cuda);

/* The kind's evaluator, or NULL for a kind this envlock does not know. */
el_rule_fn el_rule_kind(const char *kind);

#endif
