/*
 * JSON Schema (draft 2020-12) validation of outside JSON, for the keywords
 * envlock's own schemas use: type, const, enum, properties, required,
 * additionalProperties, unevaluatedProperties, propertyNames,
 * maxProperties, dependentRequired, items, minItems, maxItems,
 * uniqueItems, minimum, maximum, minLength, maxLength, pattern, $ref
 * (within the document), allOf, anyOf, oneOf, not, if/then/else.
 * Annotation-only keywords (description, title, $id, …) are ignored; any
 * other keyword in a schema is an error of the schema, so a schema change
 * that needs more of the standard cannot pass silently.
 *
 * The reference for the lockfile validator envlock runs, which
 * tools/schema-gen.py generates from the schema at build time
 * (lib/lock/schema.h): tests/unit/test_schema.c and the CLI suites
 * (envlock-crosscheck, tests/schema/crosscheck.c) compare the two. Not
 * part of envlock itself.
 */
#ifndef EL_TEST_SCHEMA_H
#define EL_TEST_SCHEMA_H

#include <stddef.h>

#include <cJSON.h>

typedef struct el_schema el_schema;

/*
 * Compile the schema document root (its own "$ref"s resolve in it) for
 * validating. -1, with why, when it uses a keyword or a pattern this file
 * does not implement. Free with el_schema_free(); root must outlive it.
 */
int el_schema_compile(el_schema **out, const cJSON *root, char *why, size_t why_size);
void el_schema_free(el_schema *schema);

/*
 * Check instance against the schema. 0 when it is valid; otherwise -1
 * with the first problem found in why, one line starting with the field's
 * path ("conda.packages[3].name: expected a string, got a number"; the
 * document itself is "the document"), values and member names from the
 * instance escaped as a terminal may show them. Patterns are ECMA regular
 * expressions as the schemas write them (\S, \d, a leading (?i)), run as
 * POSIX extended ones; the common forms (^\S+$, ^/, hex digests) are
 * matched directly.
 */
int el_schema_check(const el_schema *schema, const cJSON *instance, char *why, size_t why_size);

/* The lockfile schema (schemas/envlock.lock.schema.json, compiled in), compiled once; never NULL. */
const el_schema *el_schema_lock(void);

#endif
