/*
 * The effective config: an OpenMMLab experiment config (mmcv 1.x /
 * mmengine Config) and its _base_ chain merged into the value the
 * experiment ran with, computed from the text alone. Nothing is run: the
 * files are read as data, in the subset of Python configs are written in
 * (literals, names, attribute and item assignment, del, tuple unpacking,
 * augmented assignment, if and for over values known, comprehensions,
 * f-strings, the builtins and the dict, list and str methods configs use),
 * with Python's sharing: one dict held by two names is edited through
 * either. Whatever falls outside it (a call to a function, a lambda, an
 * import's object, a loop over what is not known) is "not evaluated": its
 * key is left out, never guessed, and named under every key path the
 * value reached, with the file and line that made it.
 *
 * Merging follows Config._merge_a_into_b: bases load first, in order,
 * and may not share keys; a child's dict merges into the base's
 * recursively, anything else replaces, _delete_=True replaces a dict
 * instead of merging. {{ _base_.x }} and mmengine's _base_.x read the
 * merged bases, and mmengine's writes into _base_ (_base_.a.b = v, del
 * _base_.x) edit them before the merge; `with read_base(): from .a import
 * *` binds a's names as Python's import does. .json and .yaml bases are read
 * too (YAML as PyYAML's safe loader reads it, lib/config/yaml.h).
 * What Python would raise on (a name not defined, a missing key, a
 * reserved key such as filename) refuses the config, as Config does.
 * --cfg-options are parsed as mmcv's DictAction does and merged last,
 * list indexes (model.backbone.0.depth) included.
 *
 * Limits (a config from elsewhere is untrusted): 1 MiB a file, 256 files,
 * nesting 200 deep, 10^6 values made in all (a list's places counted),
 * 10^6 loop steps, 200000 keys a dict, 1 MiB a string. A limit stops the
 * evaluation with ENVLOCK_ELIMIT.
 */
#ifndef EL_CONFIG_H
#define EL_CONFIG_H

#include <stddef.h>

#include <cJSON.h>

#include "envlock/common.h"

/*
 * Evaluate the config at path with its chain, then the --cfg-options
 * ("key.path=value") in order. *out (the caller's, cJSON_Delete) is
 *   { "effective": {...},        the merged config; tuples are arrays
 *     "not_evaluated": [ { "file", "line", "key", "what" } ... ],
 *     "imports": [ { "file", "line", "module" } ... ] }
 * Keys keep mmcv's order: the bases' keys, then the child's new keys.
 * Errors (the config could not be loaded by mmcv either, or a limit):
 * ENVLOCK_ENOTFOUND (a file of the chain is missing), ENVLOCK_EPARSE
 * (a syntax error, a _base_ that is not a literal, a cycle, keys shared
 * between bases naming both files, a child dict over a base non-dict),
 * ENVLOCK_EINVAL (an option that is not key=value), ENVLOCK_ELIMIT,
 * ENVLOCK_EIO; the detail names the file and line.
 */
int el_config_effective(cJSON **out, envlock_ctx *ctx, const char *path,
			const char *const *options, size_t n_options);

/*
 * Where mmengine finds another package's configs, for a base written
 * 'mmdet::faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py': the installed
 * package's .mim/configs/ (mmengine's get_installed_path, then
 * _get_external_cfg_path), looked for in these site-packages folders in
 * order (host paths). A package in none of them is a missing package,
 * as mmengine's "mmdet is not installed". A read_base() import of a
 * package module (from mmdet.configs.x import *) is the file
 * <site>/mmdet/configs/x.py of the first folder that has it.
 */
typedef struct {
	const char *const *site_dirs;
	size_t n;
} el_config_sites;

/*
 * el_config_effective with package bases resolved in sites (NULL: such a
 * base is refused). On ENVLOCK_ENOTFOUND, *missing (when given) is the
 * file or package the chain lacks, malloc'd ("mmdet", or a path).
 */
int el_config_effective_in(cJSON **out, envlock_ctx *ctx, const char *path, const char *const *options,
			   size_t n_options, const el_config_sites *sites, char **missing);

/* The same for a text not read from disk; path names it and anchors its _base_. */
int el_config_effective_text(cJSON **out, envlock_ctx *ctx, const char *path, const char *text,
			     size_t len, const char *const *options, size_t n_options);

/*
 * The --cfg-options alone, as mmcv's DictAction and merge_from_dict make
 * them: {"model": {"backbone": {"depth": 101}}} for "model.backbone.depth=101".
 */
int el_config_parse_options(cJSON **out, envlock_ctx *ctx, const char *const *options, size_t n_options);

#endif
