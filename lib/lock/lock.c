/* envlock_lock: probe a machine into a lock, load one, write one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model.h"
#include "probe/probe.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/root.h"
#include "util/userpath.h"
#include "util/xalloc.h"

#define EL_LOCK_MAX_BYTES (64u << 20)

void el_lock_set_created(cJSON *doc)
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

static int check_opt_path(envlock_ctx *ctx, const char *flag, const char *path)
{
	if (path && path[0] != '/')
		return el_error_set(ctx, ENVLOCK_EINVAL, "%s '%s': must be an absolute path", flag, path);
	return 0;
}

int envlock_lock_probe(envlock_lock **out, envlock_ctx *ctx, const envlock_probe_opts *opts)
{
	static const envlock_probe_opts defaults;
	envlock_lock *lock;
	el_probe p;
	char *warning = NULL;
	int rc;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if ((rc = check_opt_path(ctx, "--conda-prefix", opts->conda_prefix)) != 0 ||
	    (rc = check_opt_path(ctx, "--python", opts->python)) != 0 ||
	    (rc = check_opt_path(ctx, "--cuda-home", opts->cuda_home)) != 0)
		return rc;
	memset(&p, 0, sizeof(p));
	p.ctx = ctx;
	p.opts = opts;
	if ((rc = el_root_init(&p.root, ctx, opts->root)) != 0)
		return rc;

	lock = el_xcalloc(1, sizeof(*lock));
	lock->doc = p.doc = el_jnew_obj();
	el_jset_int(p.doc, "envlock", ENVLOCK_FORMAT_VERSION);
	el_lock_set_created(p.doc);
	p.warnings = el_jset_arr(p.doc, "warnings");
	lock->errors = p.errors = cJSON_CreateArray();
	if (!p.errors)
		el_oom();

	/* a problem with envlock's own cache says nothing about the machine: stderr only */
	p.hashes = el_hashcache_open(opts->no_cache, &warning);
	if (warning && opts->on_warning)
		opts->on_warning(warning, opts->warning_data);
	free(warning);

	el_probe_environ(&p);
	el_probe_os(&p);
	el_probe_glibc(&p);
	el_probe_container(&p);
	el_probe_hardware(&p);
	el_probe_ldconfig(&p);
	el_probe_driver(&p);
	el_probe_gpus(&p);
	el_probe_cuda(&p);
	el_probe_cudnn(&p);
	el_probe_compilers(&p);
	el_probe_python(&p);
	el_probe_conda(&p);
	el_probe_pip(&p);
	el_probe_frameworks(&p);
	el_probe_checkpoints(&p);
	el_probe_configs(&p);
	el_probe_repos(&p);

	el_hashcache_stats(p.hashes, &lock->stats);
	el_hashcache_save(p.hashes);
	el_hashcache_free(p.hashes);
	el_ldcache_free(p.ldcache);
	free(p.ldcache_status);
	el_strv_free(p.environ);
	free(p.py.prefix);
	free(p.py.kind);
	free(p.py.version);
	el_strv_free(p.py.site_dirs);
	el_root_thread_done();
	el_root_release(&p.root);

	el_lock_touch(lock); /* its id is computed when written or asked for */
	*out = lock;
	return 0;
}

int envlock_lock_load(envlock_lock **out, envlock_ctx *ctx, const char *path)
{
	el_buf b = EL_BUF_INIT(EL_LOCK_MAX_BYTES);
	const char *end = NULL;
	envlock_lock *lock;
	cJSON *doc, *ver;
	int rc;

	*out = NULL;
	if ((rc = el_userpath_read(ctx, path, &b, "lockfile")) != 0) {
		el_buf_release(&b);
		return rc;
	}
	doc = cJSON_ParseWithLengthOpts(b.data, b.len, &end, 0);
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
		if (deepest >= CJSON_NESTING_LIMIT)
			return el_error_set(ctx, ENVLOCK_ELIMIT, "'%s': nested more than %d levels deep, not a lockfile",
					    path, CJSON_NESTING_LIMIT);
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not valid JSON (line %zu)", path, line);
	}
	el_buf_release(&b);
	ver = el_jget(doc, "envlock");
	if (!cJSON_IsObject(doc) || !cJSON_IsNumber(ver)) {
		cJSON_Delete(doc);
		return el_error_set(ctx, ENVLOCK_EPARSE, "'%s': not an envlock lockfile (no \"envlock\" version)", path);
	}
	if (ver->valuedouble != ENVLOCK_FORMAT_VERSION) {
		double v = ver->valuedouble;

		cJSON_Delete(doc);
		return el_error_set(ctx, ENVLOCK_EVERSION,
				    "'%s': lockfile format %g is not supported (this envlock reads %d)",
				    path, v, ENVLOCK_FORMAT_VERSION);
	}
	lock = el_xcalloc(1, sizeof(*lock));
	lock->doc = doc;	/* its id is computed when someone asks (envlock_lock_id) */
	*out = lock;
	return 0;
}

int envlock_lock_write(const envlock_lock *lock, envlock_ctx *ctx, const char *path)
{
	el_buf b = EL_BUF_INIT((size_t)1 << 30);
	int rc;

	/* settling the id caches it; the lock's content does not change */
	el_lock_settle((envlock_lock *)lock);

	if (el_json_write(lock->doc, &b, 2) != 0) {
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
	cJSON_Delete(lock->doc);
	cJSON_Delete(lock->errors);
	free(lock);
}
