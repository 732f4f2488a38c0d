/*
 * YAML config bases: mmengine's Config loads `_base_ = './x.yaml'` with
 * PyYAML (SafeLoader). The subset config files are written in is read
 * here, and each plain scalar is resolved as PyYAML's YAML 1.1 resolver
 * does (yes and on are true, 1e-4 is a string, 0755 is octal). Anchors,
 * aliases, tags, block scalars (| >), complex keys (?), several documents
 * and values JSON cannot hold (.inf, .nan, dates) are refused, never
 * guessed. Limits (the text is untrusted): nesting 200 deep; the caller
 * caps the text's size.
 */
#ifndef EL_CONFIG_YAML_H
#define EL_CONFIG_YAML_H

#include <stddef.h>

#include <cJSON.h>

#include "envlock/common.h"

/*
 * The YAML text [text, text+len) of the config file path as JSON: a
 * mapping at the top. Keys that are not strings take the form Python's
 * str() gives them (0 -> "0", yes -> "True", ~ -> "None"); a key given
 * twice keeps its first place and its last value, as a dict does.
 * Integers of 2^53 and more are Raw nodes holding their digits
 * (el_jnew_int). text need not end in a NUL. 0, or ENVLOCK_EPARSE /
 * ENVLOCK_ELIMIT with msg (one line naming path:line and the problem);
 * *out is the caller's (cJSON_Delete), NULL on failure.
 */
int el_cfg_yaml_parse(const char *path, const char *text, size_t len, cJSON **out, char *msg, size_t msg_size);

#endif
