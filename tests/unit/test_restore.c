/*
 * Unit tests for what restore accepts from a lock (lib/lock/untrusted.c,
 * and the cuDNN step's own check in lib/restore/cudnn.c): every kind of
 * value that reaches an argv, a spec file or a path, with the forms real
 * locks hold and the forms a hostile one would try; and apply's re-check
 * of a link before it replaces it.
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

/* what pip may be told to look in: http(s) and file only, no credentials, no climbing */
static void index_urls(void **state)
{
	(void)state;
	assert_null(el_bad_index_url("https://download.pytorch.org/whl/cu102"));
	assert_null(el_bad_index_url("https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html"));
	assert_null(el_bad_index_url("file:///srv/wheels"));
	assert_null(el_bad_index_url("https://x.example/a@b")); /* an '@' in the path is no user */
	assert_string_equal(el_bad_index_url("git+https://x.example/r.git"), "is not an http(s) or file URL");
	assert_string_equal(el_bad_index_url("ftp://x.example/simple"), "is not an http(s) or file URL");
	assert_string_equal(el_bad_index_url("-f"), "is not an http(s) or file URL");
	assert_string_equal(el_bad_index_url("https://alice:pw@x.example/simple"), "has a user name or password in it");
	assert_string_equal(el_bad_index_url("https://token@x.example/simple"), "has a user name or password in it");
	assert_string_equal(el_bad_index_url("file:///srv/../etc"), "has a '..' component");
	assert_string_equal(el_bad_index_url("https://x.example/$(id)"), "contains a shell metacharacter or space");
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
	/* a repository's untracked file: inside its work tree, never in .git */
	assert_null(el_bad_repo_file("mmdet/models/my_head.py"));
	assert_null(el_bad_repo_file(".gitignore"));
	assert_null(el_bad_repo_file("a/.github/ci.yml"));
	assert_string_equal(el_bad_repo_file("/etc/cron.d/x"), "is an absolute path");
	assert_string_equal(el_bad_repo_file("../x.py"), "has a '..' component");
	assert_string_equal(el_bad_repo_file("a/./b"), "has a '.' component");
	assert_string_equal(el_bad_repo_file("a//b"), "has an empty component");
	assert_string_equal(el_bad_repo_file("a/"), "has an empty component");
	assert_string_equal(el_bad_repo_file(".git/hooks/pre-commit"), "is inside .git");
	assert_string_equal(el_bad_repo_file("sub/.GIT/config"), "is inside .git");
	assert_string_equal(el_bad_repo_file(".git"), "is inside .git");
	assert_string_equal(el_bad_repo_file(""), "is empty");
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

/* the cuDNN step's check reads the view: the first bad link is named with its place */
static void cudnn_links(void **state)
{
	envlock_ctx *ctx;
	cJSON *doc = cJSON_Parse("{\"cudnn\": {\"header\": \"/usr/local/cuda/include/cudnn_version.h\", \"libraries\": ["
				 "{\"name\": \"libcudnn.so.8.2.1\", \"path\": \"/usr/local/cuda/lib64/libcudnn.so.8.2.1\","
				 " \"soname\": \"libcudnn.so.8\", \"links\": [{\"name\": \"libcudnn.so.8\", \"target\": \"libcudnn.so.8.2.1\"}]},"
				 "{\"name\": \"libcudnn_ops_infer.so.8.2.1\", \"path\": \"/usr/local/cuda/lib64/libcudnn_ops_infer.so.8.2.1\","
				 " \"links\": [{\"name\": \"libcudnn_ops_infer.so.8\", \"target\": \"libcudnn_ops_infer.so.8.2.1\"},"
				 " {\"name\": \"libcudnn_ops_infer.so\", \"target\": \"/etc/alternatives/libcudnn_ops_infer_so\"}]}]}}");
	el_view *view;

	(void)state;
	assert_non_null(doc);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	view = el_view_new(doc);
	assert_int_equal(el_restore_check_cudnn(ctx, view), ENVLOCK_EPARSE);
	assert_string_equal(envlock_error_last(ctx),
			    "cudnn.libraries[1].links[1].target '/etc/alternatives/libcudnn_ops_infer_so': contains a character not allowed here");
	el_view_free(view);
	/* the same lock without that link passes */
	cJSON_DeleteItemFromArray(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "cudnn"), "libraries"), 1), "links"), 1);
	view = el_view_new(doc);
	assert_int_equal(el_restore_check_cudnn(ctx, view), 0);
	el_view_free(view);
	cJSON_Delete(doc);
	envlock_ctx_free(ctx);
}

/* apply replaces a link only while it is what the plan saw */
static void link_recheck(void **state)
{
	char *dir = unit_tmpdir(), *link;
	el_apply ap = { NULL, NULL, NULL, -1, -1, "cudnn", "20260101T000000Z" };
	el_item it = { 0 };
	char now[64] = "", target[] = "libcudnn.so.8.2.1", other[] = "libcudnn.so.8.1.0", there[] = "libcudnn.so.8.0.5";

	(void)state;
	assert_true(asprintf(&link, "%s/libcudnn.so.8", dir) > 0);
	assert_int_equal(symlink("libcudnn.so.8.0.5", link), 0);
	/* the plan saw another target: refused, nothing moved */
	it.state = ENVLOCK_ITEM_DO;
	it.path = link;
	it.target = target;
	it.seen = EL_SEEN_LINK;
	it.seen_target = other;
	assert_int_equal(el_apply_symlink(&it, &ap), -1);
	assert_int_equal(it.state, ENVLOCK_ITEM_FAILED);
	assert_non_null(strstr(it.note, "changed after the plan was made (planned against a link to libcudnn.so.8.1.0, now a link to libcudnn.so.8.0.5)"));
	assert_true(readlink(link, now, sizeof(now) - 1) > 0);
	assert_string_equal(now, "libcudnn.so.8.0.5");
	free(it.note);
	/* the plan saw no link there: a link that appeared since is refused too */
	it.note = NULL;
	it.seen = EL_SEEN_NO_LINK;
	assert_int_equal(el_apply_symlink(&it, &ap), -1);
	assert_non_null(strstr(it.note, "(planned against no link, now a link)"));
	free(it.note);
	/* what the plan saw: moved aside, then linked */
	it.note = NULL;
	it.state = ENVLOCK_ITEM_DO;
	it.seen = EL_SEEN_LINK;
	it.seen_target = there;
	assert_int_equal(el_apply_symlink(&it, &ap), 0);
	memset(now, 0, sizeof(now));
	assert_true(readlink(link, now, sizeof(now) - 1) > 0);
	assert_string_equal(now, "libcudnn.so.8.2.1");
	free(link);
	unit_rmtree(dir);
}

/* The plan of lock under an empty root, printed, with the caller's option texts or the default ones. */
static char *plan_text(const char *(*option_text)(const char *))
{
	char *root = unit_tmpdir(), *text = NULL;
	envlock_restore_opts opts = { 0 };
	envlock_restore *r = NULL;
	envlock_lock *lock = NULL;
	envlock_ctx *ctx;
	size_t len = 0;
	FILE *f;

	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_lock_load(&lock, ctx, "tests/golden/no-nvidia.lock.json"), 0);
	opts.probe.root = root;
	opts.state_dir = root;
	opts.dest = root;
	opts.option_text = option_text;
	if (envlock_restore_plan(&r, ctx, lock, &opts) != 0)
		fail_msg("plan: %s", envlock_error_last(ctx));
	f = open_memstream(&text, &len);
	envlock_restore_print(r, f, 0);
	fclose(f);
	envlock_restore_free(r);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	unit_rmtree(root); /* and frees it */
	return text;
}

static const char *cli_spelling(const char *option)
{
	return strcmp(option, "root") == 0 ? "--my-root" : NULL;
}

static void advice_names_no_flag(void **state)
{
	char *plain = plan_text(NULL), *cli = plan_text(cli_spelling);

	(void)state;
	/* the library names an option by its name; a command line by its flag */
	assert_non_null(strstr(plain, "not run: the 'root' option restores a tree, not this machine"));
	assert_null(strstr(plain, "--"));
	assert_non_null(strstr(cli, "not run: --my-root restores a tree, not this machine"));
	free(plain);
	free(cli);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),
		cmocka_unit_test(versions),
		cmocka_unit_test(urls),
		cmocka_unit_test(index_urls),
		cmocka_unit_test(paths),
		cmocka_unit_test(whole_lock),
		cmocka_unit_test(cudnn_links),
		cmocka_unit_test(link_recheck),
		cmocka_unit_test(advice_names_no_flag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
