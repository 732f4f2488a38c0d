/* The rules model inside the library: the parsed rules file and the findings list. */
#ifndef EL_RULES_H
#define EL_RULES_H

#include <cJSON.h>

#include "envlock/check.h"
#include "lock/view.h"

struct envlock_rules {
	cJSON *doc;    /* {"envlock_rules": 1, "rules": [...], "tables": {...}} */
	struct el_arena *arena; /* where doc was parsed (lock/arena.h): every check and save loads the 100 KB of rules */
	const struct el_rule_kind *const *kinds; /* the kinds its rules were checked against (el_rules_parse) */
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

/* Add a finding made elsewhere than a rule of the rules file (solve --check's judgement of a stack). */
void el_finding_push(envlock_findings *f, const char *rule, envlock_severity severity, const char *section,
		     const char *subject, const char *message, const char *fix, const char *source);

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
 * The table name of the rules file, else of envlock's knowledge
 * (the files of knowledge/); NULL when neither has it. A rules file may so
 * replace a table of the knowledge.
 */
const cJSON *el_rules_table(const envlock_rules *rules, const char *name);

/*
 * The highest gcc major that nvcc of CUDA version cuda ("10.2.89")
 * accepts as its host compiler: the table of the rule of kind
 * gcc_max_for_nvcc (rules/envlock.rules.json's nvcc_gcc), the row of
 * the release; -1 when no rule or row says (kinds.c, beside that kind).
 */
long el_rules_nvcc_max_gcc(const envlock_rules *rules, const char *cuda);

/* torch's build CUDA ("10.2"): version.py's cuda, else the +cuXYZ local part; NULL for a CPU build. malloc'd. */
char *el_torch_cuda(const el_framework *t);

/*
 * Fixes made from envlock's knowledge for what the lock has (fixes.c):
 * a line to paste, malloc'd, or NULL when the knowledge has nothing.
 * - el_fix_mmcv_range: the pip command of the newest mmcv release in
 *   [lo, hi] with a prebuilt wheel for the lock's torch and CUDA, and
 *   the newest release of framework that accepts the installed mmcv;
 * - el_fix_torch_cpu: the CUDA build of the same torch release that the
 *   driver runs (natively before minor-version compatibility);
 * - el_fix_codebase: the newest release of an OpenMMLab distribution
 *   that accepts the installed mmcv, or envlock solve when none does.
 */
char *el_fix_mmcv_range(const el_view *v, const char *framework, const char *lo, const char *hi, bool incl);
char *el_fix_torch_cpu(const el_view *v, const el_framework *t);
/* el_fix_torch_arch: the build of the same torch release with code for cc, else the envlock solve that plans one */
char *el_fix_torch_arch(const el_view *v, const el_framework *t, const char *cc);
char *el_fix_codebase(const el_view *v, const char *distribution);
/* el_fix_mmcv_reinstall: the installed mmcv release's prebuilt wheel for the lock's torch and CUDA */
char *el_fix_mmcv_reinstall(const el_view *v);
/*
 * el_fix_mmcv_wheel: the pip command of the prebuilt wheel of package
 * ("mmcv", "mmcv-full"; NULL: either) version for torch ("1.10.0+cu102")
 * and its CUDA ("10.2"; NULL: a CPU build), or NULL when there is none.
 */
char *el_fix_mmcv_wheel(const char *package, const char *version, const char *torch, const char *cuda);
/* el_fix_torch_build: the install command of torch's release ("1.10.0") built for cuda ("10.2"), or NULL */
char *el_fix_torch_build(const char *torch, const char *cuda);

/* A kind of rule: the name a rules file gives it and its evaluator. */
typedef struct el_rule_kind {
	const char *name;
	el_rule_fn fn;
} el_rule_kind;

/*
 * The rule kinds on a lock's machine: driver, toolkit, cuDNN, compilers,
 * frameworks, libraries and what loads them (kinds.c), { NULL, NULL }-
 * terminated. The engine names no other set: the caller gives it the
 * kinds a rules file may use (lib/check gives these and the config's).
 */
extern const el_rule_kind el_lock_kinds[];

/*
 * Parse and check a rules file's text[0..len) (text[len] a NUL), name
 * being what errors call it: every rule must be of a kind in kinds (a
 * NULL-terminated list of kind sets, which must outlive the rules). 0
 * with *out set, or ENVLOCK_EPARSE. Free with envlock_rules_free().
 */
int el_rules_parse(envlock_rules **out, envlock_ctx *ctx, const char *name, const char *text, size_t len,
		   const el_rule_kind *const *kinds);

/* The same for the file at path (ENVLOCK_ENOTFOUND, ENVLOCK_EIO, ENVLOCK_ELIMIT too). */
int el_rules_read(envlock_rules **out, envlock_ctx *ctx, const char *path, const el_rule_kind *const *kinds);

#endif
