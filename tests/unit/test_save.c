/* envlock_save: the save policy (probe, refuse a partial lock, checks, write) and its summary. */
#include "unit.h"

typedef struct {
	size_t n;
	char first[512];
} told;

static void on_request_error(const char *message, void *data)
{
	told *t = data;

	if (t->n++ == 0)
		snprintf(t->first, sizeof(t->first), "%s", message);
}

/* Opts for a save of an empty root, written to dir/name (name NULL: not written). */
static void save_opts(envlock_save_opts *so, const char *root, char *path, size_t len,
		      const char *dir, const char *name)
{
	memset(so, 0, sizeof(*so));
	so->probe.root = root;
	so->probe.no_cache = 1;
	if (name) {
		snprintf(path, len, "%s/%s", dir, name);
		so->path = path;
	}
}

static void writes_the_lock_with_its_checks(void **state)
{
	char *root = unit_tmpdir(), *dir = unit_tmpdir(), path[4096];
	envlock_save_opts so;
	envlock_ctx *ctx;
	envlock_lock *lock = NULL, *back = NULL;
	envlock_verify *verified = (envlock_verify *)&so; /* must be set to NULL */

	(void)state;
	save_opts(&so, root, path, sizeof(path), dir, "l.json");
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_save(&lock, &verified, ctx, &so), 0);
	assert_non_null(lock);
	assert_null(verified);
	assert_non_null(unit_str(lock, "checks.rules"));
	/* what was written is the lock handed back */
	assert_int_equal(envlock_lock_load(&back, ctx, path), 0);
	assert_string_equal(envlock_lock_id(back), envlock_lock_id(lock));
	assert_non_null(unit_str(back, "checks.rules"));
	envlock_lock_free(back);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	unit_rmtree(root);
	unit_rmtree(dir);
}

static void no_path_writes_nothing(void **state)
{
	char *root = unit_tmpdir(), *dir = unit_tmpdir(), path[4096];
	envlock_save_opts so;
	envlock_ctx *ctx;
	envlock_lock *lock = NULL;

	(void)state;
	save_opts(&so, root, path, sizeof(path), dir, NULL);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_save(&lock, NULL, ctx, &so), 0);
	assert_non_null(unit_str(lock, "checks.rules"));
	assert_int_equal(rmdir(dir), 0); /* still empty */
	free(dir);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	unit_rmtree(root);
}

static void refuses_what_lacks_a_request(void **state)
{
	char *root = unit_tmpdir(), *dir = unit_tmpdir(), path[4096], missing[4200];
	const char *configs[1];
	envlock_save_opts so;
	envlock_ctx *ctx;
	envlock_lock *lock = (envlock_lock *)&so; /* must be set to NULL */
	told t = { 0, "" };

	(void)state;
	save_opts(&so, root, path, sizeof(path), dir, "l.json");
	snprintf(missing, sizeof(missing), "%s/missing.py", dir);
	configs[0] = missing;
	so.probe.configs = configs;
	so.probe.config_count = 1;
	so.on_request_error = on_request_error;
	so.request_error_data = &t;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_save(&lock, NULL, ctx, &so), ENVLOCK_ERROR);
	assert_null(lock);
	assert_int_equal(t.n, 1);
	assert_non_null(strstr(t.first, "missing.py"));
	/* and the context names it, for a caller without a callback */
	assert_string_equal(envlock_error_last(ctx), t.first);
	assert_int_equal(access(path, F_OK), -1);
	envlock_ctx_free(ctx);
	unit_rmtree(root);
	unit_rmtree(dir);
}

static void bad_options(void **state)
{
	char *root = unit_tmpdir(), path[4096];
	envlock_save_opts so;
	envlock_ctx *ctx;
	envlock_lock *lock = NULL;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	save_opts(&so, root, path, sizeof(path), root, "l.json");
	so.verify = 1;
	assert_int_equal(envlock_save(&lock, NULL, ctx, &so), ENVLOCK_EINVAL);
	assert_null(lock);
	/* library text names what is wrong, not a command-line flag */
	save_opts(&so, root, path, sizeof(path), root, "l.json");
	so.probe.conda_prefix = "relative/env";
	assert_int_equal(envlock_save(&lock, NULL, ctx, &so), ENVLOCK_EINVAL);
	assert_string_equal(envlock_error_last(ctx), "the conda prefix 'relative/env' must be an absolute path");
	assert_null(strstr(envlock_error_last(ctx), "--"));
	assert_int_equal(access(path, F_OK), -1);
	envlock_ctx_free(ctx);
	unit_rmtree(root);
}

static void summary_is_json_for_any_path(void **state)
{
	char *root = unit_tmpdir(), *text = NULL, path[4096];
	size_t len = 0;
	envlock_save_opts so;
	envlock_ctx *ctx;
	envlock_lock *lock = NULL;
	FILE *out;
	cJSON *doc;

	(void)state;
	save_opts(&so, root, path, sizeof(path), root, NULL);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_save(&lock, NULL, ctx, &so), 0);
	out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(envlock_save_print_json(lock, ctx, "a\"\\\377\n.json", out), 0);
	fclose(out);
	assert_null(memchr(text, '\377', len));
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(doc, "path")->valuestring, "a\"\\\xef\xbf\xbd\n.json");
	assert_string_equal(cJSON_GetObjectItem(doc, "id")->valuestring, envlock_lock_id(lock));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "hashed"), "bytes_read")));
	cJSON_Delete(doc);
	free(text);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	unit_rmtree(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writes_the_lock_with_its_checks),
		cmocka_unit_test(no_path_writes_nothing),
		cmocka_unit_test(refuses_what_lacks_a_request),
		cmocka_unit_test(bad_options),
		cmocka_unit_test(summary_is_json_for_any_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
