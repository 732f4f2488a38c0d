/*
 * The rules envlock checks with (envlock/check.h): the rules engine
 * (lib/rules) given every kind a rules file may use, the lock's
 * (rules/kinds.c) and the config's (cfgcheck/kinds.c). The engine stands
 * below the config kinds, which report through it, so the two sets meet
 * here, above both.
 */
#include <string.h>

#include "cfgcheck/cfgcheck.h"
#include "rules/rules.h"

static const el_rule_kind *const kinds[] = { el_lock_kinds, el_config_kinds, NULL };

int envlock_rules_load_default(envlock_rules **out, envlock_ctx *ctx)
{
	return el_rules_parse(out, ctx, "built-in rules", el_rules_builtin, strlen(el_rules_builtin), kinds);
}

int envlock_rules_load(envlock_rules **out, envlock_ctx *ctx, const char *path)
{
	return el_rules_read(out, ctx, path, kinds);
}
