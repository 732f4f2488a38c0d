/*
 * Unit tests for what restore accepts from a lock (lib/restore/check.c):
 * every kind of value that reaches an argv, a spec file or a path, with
 * the forms real locks hold and the forms a hostile one would try.
 */
#include "unit.h"

#include "restore/plan.h"

static void names(void **state)
{
	static const char *const good[] = { "numpy", "mmcv-full", "importlib_metadata", "ruamel.yaml",
					    "libcudnn.so.8", "libcudnn_ops_infer.so.8.2.1", "_libgcc_mutex",
					    "c++", NULL };
	static const char *const bad[] = { "x; rm -rf ~", "$(touch x)", "a b", "../x", "a/b", "-e",
					   ".hidden", "`id`", "x|y", "", "a\nb", NULL };
	(void)state;
	for (int i = 0; good[i]; i++)
		assert_null(el_bad_name(good[i]));
	for (int i = 0; bad[i]; i++)
		assert_non_null(el_bad_name(bad[i]));
	assert_string_equal(el_bad_name("x; rm -rf ~"), "contains a shell metacharacter or space");
	assert_string_equal(el_bad_name("a/b"), "contains a character not allowed here");
	/* one over the limit */
	char long_name[202];
	memset(long_name, 'a', 201);
	long_name[201] = '\0';
	assert_string_equal(el_bad_name(long_name), "is too long");
}

static void versions(void **state)
{
	(void)state;
	assert_null(el_bad_version("1.10.0+cu102"));
	assert_null(el_bad_version("2023.01.10"));
	assert_null(el_bad_version("1!2.0.post1"));
	assert_null(el_bad_version("2.0.0rc1"));
	assert_non_null(el_bad_version("1.0; echo"));
	assert_non_null(el_bad_version("-1"));
	assert_non_null(el_bad_version("1.0 --index-url=http://x"));
}

static void urls(void **state)
{
	(void)state;
	assert_null(el_bad_url("https://repo.anaconda.com/pkgs/main/linux-64/numpy-1.21.6-py37h976b520_0.conda"));
	assert_null(el_bad_url("https://conda.anaconda.org/conda-forge/linux-64/libblas-3.9.0-16_linux64_openblas.tar.bz2"));
	assert_null(el_bad_url("file:///home/alice/wheels/x-1.0-py3-none-any.whl"));
	assert_null(el_bad_url("git@github.com:open-mmlab/mmdetection.git"));
	assert_null(el_bad_url("/srv/git/mmdetection.git"));
	assert_null(el_bad_url("git+https://github.com/open-mmlab/mmcv.git"));
	assert_non_null(el_bad_url("https://x.invalid/a.conda`reboot`"));
	assert_non_null(el_bad_url("ftp://x.invalid/a"));
	assert_non_null(el_bad_url("--upload-pack=touch x"));
	assert_non_null(el_bad_url("/srv/../etc/passwd"));
	assert_non_null(el_bad_url("https://x.invalid/a b"));
}

static void paths(void **state)
{
	(void)state;
	assert_null(el_bad_abs_path("/usr/local/cuda-10.2/lib64/libcudnn.so.8.2.1"));
	assert_null(el_bad_abs_path("/home/alice/miniconda3/envs/mmdet"));
	assert_string_equal(el_bad_abs_path("usr/lib"), "is not an absolute path");
	assert_string_equal(el_bad_abs_path("/home/alice/../../etc"), "has a '..' component");
	assert_null(el_bad_abs_path("/a/..b/c..")); /* only a whole '..' component climbs */
	assert_null(el_bad_rel_path("configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py"));
	assert_string_equal(el_bad_rel_path("../x.py"), "has a '..' component");
	assert_string_equal(el_bad_rel_path("a/../../x.py"), "has a '..' component");
	assert_non_null(el_bad_rel_path("-rf"));
	assert_non_null(el_bad_rel_path("a\tb"));
	assert_null(el_bad_hex("0123456789abcdef0123456789abcdef", 32));
	assert_non_null(el_bad_hex("0123456789ABCDEF0123456789abcdef", 32));
	assert_non_null(el_bad_hex("0123", 32));
}

/* a whole lock: the first bad field is named, with its path in the document */
static void whole_lock(void **state)
{
	envlock_ctx *ctx;
	cJSON *doc = cJSON_Parse("{\"pip\": {\"distributions\": [{\"name\": \"ok\", \"version\": \"1.0\"},"
				 "{\"name\": \"bad name\", \"version\": \"1.0\"}]},"
				 "\"repos\": {\"repositories\": [{\"path\": \"../up\", \"head\": {\"commit\": \"abc\"}}]}}");

	(void)state;
	envlock_lock first = { .doc = doc }, second = { .doc = doc };

	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(el_lock_check_untrusted(ctx, &first), ENVLOCK_EPARSE);
	assert_string_equal(envlock_error_last(ctx),
			    "pip.distributions[1].name 'bad name': contains a shell metacharacter or space");
	/* the verdict is kept: asked again, the same answer without a second walk */
	cJSON_DeleteItemFromArray(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "pip"), "distributions"), 1);
	assert_int_equal(el_lock_check_untrusted(ctx, &first), ENVLOCK_EPARSE);
	assert_string_equal(envlock_error_last(ctx),
			    "pip.distributions[1].name 'bad name': contains a shell metacharacter or space");
	assert_int_equal(el_lock_check_untrusted(ctx, &second), ENVLOCK_EPARSE);
	assert_string_equal(envlock_error_last(ctx), "repos.repositories[0].path '../up': has a '..' component");
	free(first.untrusted_why);
	free(second.untrusted_why);
	cJSON_Delete(doc);
	envlock_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),
		cmocka_unit_test(versions),
		cmocka_unit_test(urls),
		cmocka_unit_test(paths),
		cmocka_unit_test(whole_lock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
