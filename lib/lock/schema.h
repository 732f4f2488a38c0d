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
 */
#ifndef EL_SCHEMA_H
#define EL_SCHEMA_H

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

/*
 * el_schema_check(el_schema_lock(), doc, …) without the schema: the same
 * verdict and the same words from C generated out of the lockfile schema
 * at build time (tools/schema-gen.py, $(BUILD)/gen/lock_schema.c), so a
 * process that loads a lock neither parses nor interprets the schema.
 * With ENVLOCK_SCHEMA_CROSSCHECK=1 in the environment (the test suites
 * set it) the interpreter checks the document too, and a difference in
 * verdict or words aborts, naming both.
 */
int el_schema_check_lock(const cJSON *doc, char *why, size_t why_size);

/* The generated validator itself (el_schema_check_lock adds the cross-check below). */
int el_schema_check_lock_generated(const cJSON *doc, char *why, size_t why_size);

#endif
