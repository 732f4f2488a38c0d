/*
 * envlock — the effective OpenMMLab config, computed from its text
 * without Python, mmcv or mmengine (`envlock config`): what
 * Config.fromfile would give for a config and its _base_ chain, printed
 * as Python literals like mmdet's tools/misc/print_config.py, and what
 * changed between two configs, key path by key path.
 *
 * What the evaluator cannot know (a call to a function, a lambda, an
 * imported object, a loop over what is not known) is never guessed: the
 * key is left out of the value and listed as not evaluated under every
 * key path the value reached, with file and line.
 */
#ifndef ENVLOCK_CONFIG_H
#define ENVLOCK_CONFIG_H

#include <stdio.h>
#include "common.h"

typedef struct envlock_config envlock_config;
typedef struct envlock_config_diff envlock_config_diff;

typedef struct {
	const char *const *cfg_options; /**< "key.path=value" as tools/train.py's --cfg-options takes them, merged last */
	size_t n_cfg_options;
	/**
	 * site-packages folders where a package base ('mmdet::x.py') and an
	 * installed module a read_base() block imports are found, in order;
	 * none: such a base is refused.
	 */
	const char *const *site_dirs;
	size_t n_site_dirs;
} envlock_config_opts;

/**
 * Evaluate the config at path (relative to the current directory) with
 * its _base_ chain and opts->cfg_options (opts may be NULL). A key a
 * base did not evaluate but a child config or an option then set (a
 * value that replaces, not a dict merged into the unknown) has its value:
 * only what the final value lacks is counted as not evaluated. What
 * Python would raise on (a name not defined, a missing key) refuses the
 * config, as Config does. Errors, the
 * detail naming the file and line ("configs/x.py:3: a bracket that is
 * not closed"): ENVLOCK_ENOTFOUND (a file of the chain, or a package,
 * is missing), ENVLOCK_EPARSE (what mmcv would refuse too: a syntax
 * error, a _base_ that is not a literal, a cycle, keys shared between
 * bases), ENVLOCK_EINVAL (an option that is not key=value),
 * ENVLOCK_ELIMIT, ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_config_load(envlock_config **out, envlock_ctx *ctx, const char *path,
					const envlock_config_opts *opts);

/**
 * Evaluate the first base of the config at path: the first file its
 * `_base_ = ...` names, or the first module its `with read_base():`
 * block imports (relative to the config, or an installed package's in
 * opts->site_dirs), with opts->site_dirs and without the cfg_options.
 * Besides envlock_config_load's errors: ENVLOCK_EINVAL when the config
 * names no base, or names it in a way that is not a literal path.
 */
ENVLOCK_EXTERN(int) envlock_config_load_base(envlock_config **out, envlock_ctx *ctx, const char *path,
					     const envlock_config_opts *opts);

/** The config's path as a person would write it: relative to the current directory when under it. Borrowed. */
ENVLOCK_EXTERN(const char *) envlock_config_path(const envlock_config *c);

/** How many keys (or statements) were not evaluated: 0 when the value is complete. */
ENVLOCK_EXTERN(size_t) envlock_config_not_evaluated(const envlock_config *c);

/**
 * The effective config as Python, in the source's key order: a `key =
 * value` line for each top-level key, dicts as dict(a=1) (or {'a-b': 1}
 * when a key is not an identifier), lists, strings and floats as
 * Python's repr writes them, True/False/None. A value that fits in the
 * width ENVLOCK_PRINT_WIDTH gives (0: never break) is on one line,
 * a longer one has an item per line, 4 spaces in; a scalar is never
 * broken. A key not evaluated is a comment where the key would be, "#
 * KEY: not evaluated: WHY (FILE:LINE)", wrapped at the width as
 * comment lines; notes with no place in the value (a key inside a list
 * item, a statement with no key) and the imports are comments at the
 * top. The text is valid Python that gives the same value. Returns 0
 * or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_config_print(const envlock_config *c, envlock_ctx *ctx, FILE *out, unsigned flags);

/**
 * The same as a Python file to keep or run: laid out for 79 columns
 * whatever the terminal, comments never wrapped. Returns 0 or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_config_print_py(const envlock_config *c, envlock_ctx *ctx, FILE *out);

/**
 * {"effective": {...}, "not_evaluated": [{"file", "line", "key",
 * "what"}], "imports": [{"file", "line", "module"}]}: what a lock
 * records of a config as "value", "not_evaluated" and "imports"; files
 * relative to the current directory when under it; keys sorted, 2-space
 * indent. Returns 0 or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_config_print_json(const envlock_config *c, envlock_ctx *ctx, FILE *out);

ENVLOCK_EXTERN(void) envlock_config_free(envlock_config *c);

/**
 * What changed from config a to config b, by key path: a key added,
 * removed or whose value changed, dicts followed key by key (a's order,
 * then b's new keys), lists item by item (train_pipeline[2].scale). A
 * key not evaluated on a side cannot be said to be equal: it is listed
 * as unknown and counts as a difference, unless the same statement (the
 * same file, line and key) leaves it out on both sides.
 */
ENVLOCK_EXTERN(int) envlock_config_compare(envlock_config_diff **out, envlock_ctx *ctx, const envlock_config *a,
					   const envlock_config *b);

/** 1 when a and b are the same config as far as can be told (no change, no unknown that counts), else 0. */
ENVLOCK_EXTERN(int) envlock_config_diff_same(const envlock_config_diff *d);

/**
 * One line a change: "~ PATH: A -> B", "+ PATH: B", "- PATH: A", and
 * "? PATH: not evaluated ...: WHY (FILE:LINE)", after "--- A" and "+++
 * B"; "identical" when nothing differs. Lines wrap at the width flags
 * give, never inside a value. Returns 0 or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_config_diff_print(const envlock_config_diff *d, envlock_ctx *ctx, FILE *out,
					      unsigned flags);

/**
 * {"a": PATH, "b": PATH, "identical": bool, "changes": [{"path",
 * "keys", "op": "changed" | "added" | "removed", "a", "b"}],
 * "not_evaluated": [{"path", "side": "a" | "b" | "both", "file",
 * "line", "what"}]}; a change has "a" or "b" only where that side has
 * the key. Keys sorted, 2-space indent. Returns 0 or ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_config_diff_print_json(const envlock_config_diff *d, envlock_ctx *ctx, FILE *out);

ENVLOCK_EXTERN(void) envlock_config_diff_free(envlock_config_diff *d);

#endif
