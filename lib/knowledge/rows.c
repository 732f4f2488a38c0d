/* Reading the knowledge's tables and rows: what every part of it (nvidia.c, pytorch.c, openmmlab.c) reads with. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lock/model.h"
#include "util/version.h"
#include "util/xalloc.h"

const el_kb *el_kb_ready(const el_kb *kb, bool *built, void (*build)(el_kb *))
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

	if (__atomic_load_n(built, __ATOMIC_ACQUIRE))
		return kb;
	pthread_mutex_lock(&mu);
	if (!*built) {
		build((el_kb *)kb); /* the one instance, el_kb_builtin's, which is not const */
		__atomic_store_n(built, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&mu);
	return kb;
}

const cJSON *el_kb_table(const el_kb *kb, const char *name)
{
	(void)kb;
	return el_kb_find_table(name);
}

const cJSON *el_kb_need_table(const el_kb *kb, const char *name)
{
	const cJSON *t = el_kb_table(kb, name);

	if (!t)
		el_kb_fatal("no table '%s'", name);
	return t;
}

void *el_kb_rows(const el_kb *kb, const char *name, size_t size, const cJSON **table)
{
	*table = el_kb_need_table(kb, name);
	return el_xcalloc((size_t)cJSON_GetArraySize(el_jget(*table, "rows")) + 1, size);
}

const char *el_kb_need_str(const cJSON *row, const char *key, const char *table)
{
	const char *s = el_jget_str(row, key);

	if (!s || !*s)
		el_kb_fatal("a row of '%s' has no \"%s\"", table, key);
	return s;
}

el_kb_list el_kb_strings(const cJSON *row, const char *key, const char *table)
{
	const cJSON *a = el_jget(row, key), *e;
	const char **v;
	size_t n = 0;

	if (!a || cJSON_IsNull(a))
		return (el_kb_list){ NULL, 0 };
	if (!cJSON_IsArray(a))
		el_kb_fatal("a row of '%s' has a \"%s\" that is not a list", table, key);
	v = el_xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof(*v));
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e))
			el_kb_fatal("a row of '%s' has a \"%s\" with a member that is not a string", table, key);
		v[n++] = e->valuestring;
	}
	return (el_kb_list){ v, n };
}

bool el_kb_in_release(const char *v, const char *r)
{
	size_t n = strlen(r);
	char *rel;
	bool in;

	if (n >= 2 && (strcmp(r + n - 2, ".x") == 0 || strcmp(r + n - 2, ".*") == 0))
		n -= 2;
	rel = el_xstrndup(r, n);
	in = el_version_in_release(v, rel);
	free(rel);
	return in;
}

char *el_kb_release(const char *version)
{
	return el_version_prefix(version, 2);
}
