/*
 * envlock-crosscheck: envlock itself, linked with
 * -Wl,--wrap=el_schema_check_lock, so that every lock a command loads is
 * checked by the generated validator (the real one) and by the schema
 * interpreter (schema.c, the reference it is generated from), and a
 * difference in verdict or in words aborts, naming both. The CLI suites
 * run it when it is built (tests/cli/lib.sh); envlock proper has no such
 * path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/schema.h"
#include "schema.h"

int __real_el_schema_check_lock(const cJSON *doc, char *why, size_t why_size);
int __wrap_el_schema_check_lock(const cJSON *doc, char *why, size_t why_size);

int __wrap_el_schema_check_lock(const cJSON *doc, char *why, size_t why_size)
{
	int rc = __real_el_schema_check_lock(doc, why, why_size);
	char ref[512];
	int ref_rc = el_schema_check(el_schema_lock(), doc, ref, sizeof(ref));

	if ((rc != 0) != (ref_rc != 0) || (rc != 0 && strncmp(why, ref, why_size ? why_size - 1 : 0) != 0)) {
		fprintf(stderr, "envlock: the generated lockfile validator says \"%s\" (%d), the interpreter \"%s\" (%d)\n",
			rc ? why : "valid", rc, ref_rc ? ref : "valid", ref_rc);
		abort();
	}
	return rc;
}
