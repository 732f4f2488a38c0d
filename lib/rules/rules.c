/* Loading rules files and running them: the engine around the rule kinds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knowledge/knowledge.h"
#include "lock/arena.h"
#include "lock/model.h"
#include "rules.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/root.h"
#include "util/userpath.h"
#include "util/xalloc.h"

#define EL_RULES_MAX_BYTES (8u << 20)

const cJSON *el_rules_table(const envlock_rules *rules, const char *name)
{
	const cJSON *t = el_jget(el_jget(rules->doc, "tables"), name);

	return t ? t : el_kb_find_table(name);
}

long el_rules_nvcc_max_gcc(const envlock_rules *rules, const char *cuda)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, el_jget(rules->doc, "rules")) {
		const char *kind = el_jget_str(r, "kind"), *table = el_jget_str(r, "table");

		if (cuda && kind && table && strcmp(kind, "gcc_max_for_nvcc") == 0)
			return el_kb_nvcc_max_gcc_in(el_rules_table(rules, table), cuda, NULL);
	}
	return -1;
}

/* The evaluator of kind in kinds (el_rules_parse's), or NULL. */
static el_rule_fn kind_of(const el_rule_kind *const *kinds, const char *kind)
{
	for (size_t i = 0; kind && kinds[i]; i++)
		for (const el_rule_kind *k = kinds[i]; k->name; k++)
			if (strcmp(k->name, kind) == 0)
				return k->fn;
	return NULL;
}

/* Check the rules document's shape once, so evaluation can trust it. */
static int validate(envlock_ctx *ctx, const char *name, const cJSON *doc, const el_rule_kind *const *kinds)
{
	const cJSON *rules = el_jget(doc, "rules"), *tables = el_jget(doc, "tables"), *r;
	int i = 0;

	if (!cJSON_IsObject(doc) || el_jget_int(doc, "envlock_rules", 0) != 1)
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not an envlock rules file (no \"envlock_rules\": 1)", name);
	if (!cJSON_IsArray(rules) || !cJSON_IsObject(tables))
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': needs a \"rules\" list and a \"tables\" object", name);
	cJSON_ArrayForEach(r, rules) {
		const char *id = el_jget_str(r, "id"), *kind = el_jget_str(r, "kind");
		const char *table = el_jget_str(r, "table");

		i++;
		if (!id || !kind || !el_jget_str(r, "message") || !el_jget_str(r, "section"))
			return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': rule %d needs \"id\", \"kind\", \"section\" and \"message\"", name, i);
		if (el_severity_of(el_jget_str(r, "severity")) < 0)
			return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': rule '%s': severity must be info, risky or breaking", name, id);
		if (!kind_of(kinds, kind))
			return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': rule '%s': unknown kind '%s'", name, id, kind);
		if (table && !cJSON_IsArray(el_jget(el_jget(tables, table), "rows")) &&
		    !el_kb_has_table(table))
			return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': rule '%s': no table '%s' with \"rows\", here or in envlock's knowledge",
					    name, id, table);
		if (!table && !el_jget_str(r, "source"))
			return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': rule '%s': a rule without a table needs its \"source\"", name, id);
	}
	return 0;
}

int el_rules_parse(envlock_rules **out, envlock_ctx *ctx, const char *name, const char *text, size_t len,
		   const el_rule_kind *const *kinds)
{
	el_arena *arena = NULL;
	cJSON *doc = text ? el_arena_parse(&arena, text, len, NULL) : NULL;
	int rc;

	*out = NULL;
	if (!doc)
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not valid JSON", name);
	if ((rc = validate(ctx, name, doc, kinds)) != 0) {
		el_arena_delete(arena, doc);
		return rc;
	}
	*out = el_xcalloc(1, sizeof(**out));
	(*out)->doc = doc;
	(*out)->arena = arena;
	(*out)->kinds = kinds;
	return 0;
}

int el_rules_read(envlock_rules **out, envlock_ctx *ctx, const char *path, const el_rule_kind *const *kinds)
{
	el_buf b = EL_BUF_INIT(EL_RULES_MAX_BYTES);
	int rc;

	*out = NULL;
	rc = el_userpath_read(&b, ctx, path, "rules file");
	if (rc == 0)
		rc = el_rules_parse(out, ctx, path, b.data, b.len, kinds);
	el_buf_release(&b);
	return rc;
}

void envlock_rules_free(envlock_rules *rules)
{
	if (!rules)
		return;
	el_arena_delete(rules->arena, rules->doc);
	free(rules);
}

int envlock_check(envlock_findings **out, envlock_ctx *ctx, const envlock_rules *rules,
		  const envlock_lock *lock)
{
	(void)ctx;
	*out = el_check_view(rules, el_lock_view(lock));
	return 0;
}

envlock_findings *el_check_view(const envlock_rules *rules, const el_view *view)
{
	const cJSON *r;
	envlock_findings *f = el_xcalloc(1, sizeof(*f));

	cJSON_ArrayForEach(r, el_jget(rules->doc, "rules")) {
		const char *table = el_jget_str(r, "table");

		kind_of(rules->kinds, el_jget_str(r, "kind"))(f, r, table ? el_rules_table(rules, table) : NULL, view);
	}
	el_findings_sort(f);
	return f;
}

int envlock_lock_record_checks(envlock_lock *lock, envlock_ctx *ctx, const envlock_rules *rules)
{
	envlock_findings *f = NULL;
	cJSON *checks, *list;
	size_t count[3] = { 0, 0, 0 };
	char hex[EL_SHA256_HEX], *text;
	int rc;

	cJSON_DeleteItemFromObjectCaseSensitive(lock->doc, "checks");
	el_lock_touch(lock); /* the view read the deleted member's strings */
	if ((rc = envlock_check(&f, ctx, rules, lock)) != 0)
		return rc;
	checks = el_jset_obj(lock->doc, "checks");
	/* which rules and facts: their digest, so a reader can tell findings of other rules or knowledge apart */
	text = cJSON_PrintUnformatted(rules->doc);
	if (!text)
		el_oom();
	{
		el_sha256 *h = el_sha256_begin();

		el_sha256_update(h, text, strlen(text));
		el_kb_digest_into(h);
		el_sha256_end(h, hex);
	}
	free(text);
	{
		char *id = el_xasprintf("sha256:%s", hex);

		el_jset_str(checks, "rules", id);
		free(id);
	}
	list = el_jset_arr(checks, "findings");
	for (size_t i = 0; i < f->n; i++) {
		count[f->v[i].severity]++;
		el_finding_json(list, &f->v[i], EL_FINDING_SAVED);
	}
	el_jset_int(checks, "breaking", (long long)count[ENVLOCK_SEV_BREAKING]);
	el_jset_int(checks, "risky", (long long)count[ENVLOCK_SEV_RISKY]);
	el_jset_int(checks, "info", (long long)count[ENVLOCK_SEV_INFO]);
	envlock_findings_free(f);
	el_lock_touch(lock);
	return 0;
}
