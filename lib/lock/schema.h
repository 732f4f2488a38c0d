/*
 * Validation of a lockfile against schemas/envlock.lock.schema.json, by C
 * generated out of the schema at build time (tools/schema-gen.py,
 * $(BUILD)/gen/lock_schema.c), so a process that loads a lock neither
 * parses nor interprets the schema. The generator transcribes the
 * interpreter the tests keep as the reference (tests/schema/schema.h);
 * tests/unit/test_schema.c and the CLI suites check they agree.
 */
#ifndef EL_SCHEMA_H
#define EL_SCHEMA_H

#include <stddef.h>

#include <cJSON.h>

/*
 * 0 when doc is a valid lockfile; otherwise -1 with the first problem
 * found in why, one line starting with the field's path
 * ("conda.packages[3].name: expected a string, got a number"; the
 * document itself is "the document"), values and member names from the
 * document escaped as a terminal may show them.
 */
int el_schema_check_lock(const cJSON *doc, char *why, size_t why_size);

#endif
