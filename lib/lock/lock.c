/* envlock_lock: build a new lock (el_lock_build: the probes and import come here), load one, write one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "model.h"
#include "schema.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/userpath.h"
#include "util/xalloc.h"
#include "view.h"

#define EL_LOCK_MAX_BYTES (64u << 20)

static void set_created(cJSON *doc)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	time_t t = time(NULL);
	struct tm tm;
	char buf[32];

	if (sde && *sde) {
		char *end;
		long long v = strtoll(sde, &end, 10);

		if (!*end && v >= 0)
			t = (time_t)v;
	}
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	el_jset_str(doc, "created", buf);
}

envlock_lock *el_lock_build(const el_lock_section *sections, size_t n, cJSON *warnings, cJSON *errors,
			    const envlock_hash_stats *stats, bool settle)
{
	envlock_lock *lock = el_xcalloc(1, sizeof(*lock));

	lock->doc = el_jnew_obj();
	el_jset_int(lock->doc, "envlock", ENVLOCK_FORMAT_VERSION);
	set_created(lock->doc);
	/* the writer sorts keys: the order the sections come in does not matter */
	for (size_t i = 0; i < n; i++)
		if (sections[i].value)
			el_jset(lock->doc, sections[i].key, sections[i].value);
	if (warnings)
		el_jset(lock->doc, "warnings", warnings);
	lock->errors = errors;
	if (stats)
		lock->stats = *stats;
	el_lock_touch(lock);
	if (settle)
		el_lock_settle(lock);
	return lock;
}

int envlock_lock_load(envlock_lock **out, envlock_ctx *ctx, const char *path)
{
	return el_lock_load(out, ctx, path, true);
}

int el_lock_load(envlock_lock **out, envlock_ctx *ctx, const char *path, bool validate)
{
	el_buf b = EL_BUF_INIT(EL_LOCK_MAX_BYTES);
	const char *end = NULL;
	char hex[EL_SHA256_HEX], *room;
	size_t roomsize;
	envlock_lock *lock;
	el_arena *arena = el_arena_new_room(&room, &roomsize);
	cJSON *doc, *ver;
	el_json_bigints big;
	bool canonical;
	int rc;

	*out = NULL;
	/* the text is read into the arena's first block, the nodes parsed after it (a larger lock moves to malloc) */
	el_buf_borrow(&b, room, roomsize);
	if ((rc = el_userpath_read(&b, ctx, path, "lockfile")) != 0) {
		el_buf_release(&b); /* the arena's room is given back with the arena */
		el_arena_delete(arena, NULL);
		return rc;
	}
	doc = el_arena_parse_in(arena, b.data, b.len, &end);
	if (!doc) {
		size_t line = 1, depth = 0, deepest = 0;
		int in_string = 0;

		/* say why: cJSON stops at CJSON_NESTING_LIMIT levels as well as at bad syntax */
		for (const char *s = b.data; end && s < end; s++) {
			line += *s == '\n';
			if (in_string) {
				if (*s == '\\' && s + 1 < end)
					s++;
				else if (*s == '"')
					in_string = 0;
			} else if (*s == '"') {
				in_string = 1;
			} else if (*s == '[' || *s == '{') {
				if (++depth > deepest)
					deepest = depth;
			} else if ((*s == ']' || *s == '}') && depth) {
				depth--;
			}
		}
		el_buf_release(&b);
		el_arena_delete(arena, NULL);
		if (deepest >= CJSON_NESTING_LIMIT)
			return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': nested more than %d levels deep, not a lockfile",
					    path, CJSON_NESTING_LIMIT);
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not valid JSON (line %zu)", path, line);
	}
	/* integers past 2^53 as the text writes them, read before the text is rewritten */
	el_json_bigints_find(&big, b.data, b.len);
	/* every command says when a lock's id is not its content's: the id from the text, when it can be */
	canonical = el_lock_canonical_text(b.data, &b.len) == 0;
	if (canonical)
		el_sha256_buf(b.data, b.len, hex);
	el_buf_release(&b);
	ver = el_jget(doc, "envlock");
	if (!cJSON_IsObject(doc) || !cJSON_IsNumber(ver)) {
		el_json_bigints_release(&big);
		el_arena_delete(arena, doc);
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not an envlock lockfile (no \"envlock\" version)", path);
	}
	if (ver->valuedouble != ENVLOCK_FORMAT_VERSION) {
		double v = ver->valuedouble;

		el_json_bigints_release(&big);
		el_arena_delete(arena, doc);
		return el_error_set(ctx, ENVLOCK_EVERSION,
				    "'%s': lockfile format %g is not supported (this envlock reads %d)",
				    path, v, ENVLOCK_FORMAT_VERSION);
	}
	if (validate) {
		char why[512];

		/* the schema is the contract: every command refuses what it does not allow */
		if (el_schema_check_lock(doc, why, sizeof(why)) != 0) {
			el_json_bigints_release(&big);
			el_arena_delete(arena, doc);
			return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not a valid lockfile: %s", path, why);
		}
	}
	el_json_bigints_apply(doc, &big);
	el_json_bigints_release(&big);
	lock = el_xcalloc(1, sizeof(*lock));
	lock->arena = arena;
	lock->doc = doc;	/* else its id is computed when someone asks (envlock_lock_id) */
	if (canonical) {
		snprintf(lock->id, sizeof(lock->id), "sha256:%s", hex);
		lock->id_ready = 1;
	}
	*out = lock;
	return 0;
}

int envlock_lock_write(const envlock_lock *lock, envlock_ctx *ctx, const char *path)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	int rc;

	/* settling the id caches it; the lock's content does not change */
	if (el_lock_write_settled((envlock_lock *)lock, &b) != 0) {
		el_buf_release(&b);
		return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': lockfile larger than 1 GiB", path);
	}
	rc = el_write_output(ctx, path, b.data, b.len);
	el_buf_release(&b);
	return rc;
}

const char *envlock_lock_id(const envlock_lock *lock)
{
	/* a cache inside an otherwise unchanged lock: computing it changes nothing observable */
	if (((envlock_lock *)lock)->doc_id_stale)
		el_lock_settle((envlock_lock *)lock);
	else if (!lock->id_ready)
		el_lock_compute_id((envlock_lock *)lock);
	return lock->id;
}

size_t envlock_lock_warning_count(const envlock_lock *lock)
{
	cJSON *w = el_jget(lock->doc, "warnings");
	return cJSON_IsArray(w) ? (size_t)cJSON_GetArraySize(w) : 0;
}

const char *envlock_lock_warning(const envlock_lock *lock, size_t i)
{
	cJSON *w = el_jget(lock->doc, "warnings"), *item;

	if (!cJSON_IsArray(w) || i >= (size_t)cJSON_GetArraySize(w))
		return NULL;
	item = cJSON_GetArrayItem(w, (int)i);
	return cJSON_IsString(item) ? item->valuestring : NULL;
}

size_t envlock_lock_error_count(const envlock_lock *lock)
{
	return lock->errors ? (size_t)cJSON_GetArraySize(lock->errors) : 0;
}

const char *envlock_lock_error(const envlock_lock *lock, size_t i)
{
	cJSON *item;

	if (i >= envlock_lock_error_count(lock))
		return NULL;
	item = cJSON_GetArrayItem(lock->errors, (int)i);
	return cJSON_IsString(item) ? item->valuestring : NULL;
}

void envlock_lock_hash_stats(const envlock_lock *lock, envlock_hash_stats *out)
{
	*out = lock->stats;
}

void envlock_lock_free(envlock_lock *lock)
{
	if (!lock)
		return;
	/* the view's few large blocks first: freed after the document's many small nodes, glibc consolidates them all */
	el_view_free(lock->view);
	el_arena_delete(lock->arena, lock->doc);
	cJSON_Delete(lock->errors);
	free(lock->untrusted_why);
	free(lock);
}
