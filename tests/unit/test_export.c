/*
 * Unit tests for exports and imports: PEP 440's grammar, pip requirement
 * lines for each kind of install, the base-image choice, hostile strings
 * from a lock, and the importer's detection and line numbers.
 */
#include "unit.h"

#include "export/internal.h"
#include "util/xalloc.h"

static void pep440(void **state)
{
	static const char *const valid[] = {
		"1.0", "2.0.0rc4", "1.10.0+cu102", "2.0.post1", "1!2.0", "v1.0", "1.0.dev3", "2023.12.2",
		"0.70", "1.0-1", "2.1.0+cpu", "1.0a1.post2.dev3", "1.0.RC1", NULL
	};
	static const char *const invalid[] = { "1.6.5ubuntu0.7", "abc", "", "1.0-foo", "1.0+", "1..0", NULL };

	(void)state;
	for (int i = 0; valid[i]; i++)
		assert_true(el_pep440_valid(valid[i]));
	for (int i = 0; invalid[i]; i++)
		assert_false(el_pep440_valid(invalid[i]));
	assert_false(el_pep440_valid(NULL));
}

static cJSON *dist(cJSON *arr, const char *name, const char *version, const char *installer)
{
	cJSON *d = el_jpush_obj(arr);

	el_jset_str(d, "name", name);
	el_jset_str(d, "version", version);
	el_jset_str(d, "kind", "dist-info");
	el_jset_str(d, "installer", installer);
	el_jset_bool(d, "editable", false);
	return d;
}

static const el_pip_req *find(const el_pip_req *r, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].name, name) == 0)
			return &r[i];
	return NULL;
}

static void pip_lines(void **state)
{
	cJSON *doc = el_jnew_obj(), *pip = el_jset_obj(doc, "pip"), *arr, *d, *du, *repo;
	el_view *view;
	el_pip_req *r;
	size_t n;

	(void)state;
	el_jset_str(pip, "status", "present");
	arr = el_jset_arr(pip, "distributions");
	dist(arr, "zeta", "1.0", "pip");
	dist(arr, "Alpha", "1.6.5ubuntu0.7", NULL);
	d = dist(arr, "numpy", "1.21.6", "conda");
	du = el_jset_obj(d, "direct_url");
	el_jset_str(du, "url", "file:///home/conda/feedstock_root/build_artifacts/numpy_1/work");
	d = dist(arr, "mmpose", "1.3.1", "pip");
	du = el_jset_obj(d, "direct_url");
	el_jset_str(du, "url", "https://github.com/open-mmlab/mmpose.git");
	el_jset_str(du, "vcs", "git");
	el_jset_str(du, "commit_id", "cede793811a9119a1995290e42d960ce6eb74ea3");
	d = dist(arr, "wheelie", "2.0", "pip");
	du = el_jset_obj(d, "direct_url");
	el_jset_str(du, "url", "https://example.com/wheelie-2.0-py3-none-any.whl");
	el_jset_str(du, "archive_hash", "sha256=0000000000000000000000000000000000000000000000000000000000000001");
	d = dist(arr, "my-proj", "0.1", "pip");
	el_jset_bool(d, "editable", true);
	du = el_jset_obj(d, "direct_url");
	el_jset_str(du, "url", "file:///src/my-proj");
	el_jset_bool(du, "editable", true);
	d = dist(arr, "checkout", "0.2", "pip");
	el_jset_bool(d, "editable", true);
	el_jset_str(d, "source", "/work/repo/pkg");
	dist(arr, "zeta", "9.9", "pip"); /* a second one of a name: the first counts */
	dist(arr, "bad\nname", "1.0", "pip");
	repo = el_jpush_obj(el_jset_arr(el_jset_obj(doc, "repos"), "repositories"));
	el_jset_str(repo, "path", "/work/repo");
	el_jset_str(el_jset_obj(repo, "head"), "commit", "0123456789abcdef0123456789abcdef01234567");
	el_jset_str(el_jpush_obj(el_jset_arr(repo, "remotes")), "url", "git@github.com:org/repo.git");
	el_jset_bool(repo, "dirty", true);

	view = el_view_new(doc);
	el_pip_reqs(view, &r, &n);
	assert_int_equal(n, 8);
	/* sorted as pip freeze sorts: by the lowercase name */
	assert_string_equal(r[0].name, "Alpha");
	assert_string_equal(find(r, n, "Alpha")->req, "Alpha===1.6.5ubuntu0.7");
	assert_string_equal(find(r, n, "zeta")->req, "zeta==1.0");
	assert_string_equal(find(r, n, "numpy")->req, "numpy==1.21.6");
	assert_int_equal(find(r, n, "numpy")->owner, EL_OWNER_CONDA);
	assert_string_equal(find(r, n, "mmpose")->req,
			    "mmpose @ git+https://github.com/open-mmlab/mmpose.git@cede793811a9119a1995290e42d960ce6eb74ea3");
	assert_string_equal(find(r, n, "wheelie")->req,
			    "wheelie @ https://example.com/wheelie-2.0-py3-none-any.whl#sha256=0000000000000000000000000000000000000000000000000000000000000001");
	assert_string_equal(find(r, n, "wheelie")->sha256, "0000000000000000000000000000000000000000000000000000000000000001");
	assert_string_equal(find(r, n, "my-proj")->req, "-e /src/my-proj");
	assert_string_equal(find(r, n, "my-proj")->comment, "# Editable install with no version control (my-proj==0.1)");
	assert_true(find(r, n, "my-proj")->local_editable);
	/* an editable tree inside a recorded repository: pip's git line, its scp remote as ssh:// */
	assert_string_equal(find(r, n, "checkout")->req,
			    "-e git+ssh://git@github.com/org/repo.git@0123456789abcdef0123456789abcdef01234567#egg=checkout&subdirectory=pkg");
	assert_non_null(strstr(find(r, n, "checkout")->comment, "uncommitted changes"));
	assert_true(find(r, n, "bad\nname")->unsafe);
	el_pip_reqs_free(r, n);
	el_view_free(view);
	cJSON_Delete(doc);
}

static char *base_for(const char *cuda, const char *cudnn, const char *os_id, const char *os_ver, char **comment)
{
	cJSON *doc = el_jnew_obj(), *tk;
	el_view *view;
	el_base_image b;
	char *tag;

	if (cuda) {
		cJSON *sec = el_jset_obj(doc, "cuda");

		/* the default toolkit is the one cuda.default names (lib/lock/view.c) */
		el_jset_str(sec, "status", "present");
		el_jset_str(sec, "default", "/usr/local/cuda");
		tk = el_jpush_obj(el_jset_arr(sec, "toolkits"));
		el_jset_str(tk, "home", "/usr/local/cuda");
		el_jset_str(tk, "version", cuda);
	}
	if (cudnn)
		el_jset_str(el_jset_obj(doc, "cudnn"), "version", cudnn);
	el_jset_str(el_jset_obj(el_jset_obj(doc, "system"), "os"), "id", os_id);
	el_jset_str(el_jget(el_jget(doc, "system"), "os"), "version_id", os_ver);
	view = el_view_new(doc);
	el_choose_base_image(&b, view);
	tag = el_xstrdup(b.tag ? b.tag : b.os_base);
	*comment = el_xstrdup(b.comment);
	el_base_image_release(&b);
	el_view_free(view);
	cJSON_Delete(doc);
	return tag;
}

static void base_images(void **state)
{
	char *c, *t;

	(void)state;
	t = base_for("11.8.89", "8.9.7", "ubuntu", "22.04", &c);
	assert_string_equal(t, "11.8.0-cudnn8-devel-ubuntu22.04");
	assert_non_null(strstr(c, "Matches the lock"));
	free(t);
	free(c);
	t = base_for("12.4.131", "9.1.0", "ubuntu", "22.04", &c);
	assert_string_equal(t, "12.4.1-cudnn-devel-ubuntu22.04");
	free(t);
	free(c);
	t = base_for("10.2.89", "7.6.5", "ubuntu", "18.04", &c);
	assert_string_equal(t, "11.0.3-cudnn8-devel-ubuntu18.04");
	assert_non_null(strstr(c, "NVIDIA publishes no image of CUDA 10.2"));
	free(t);
	free(c);
	/* not Ubuntu: the same CUDA, newest Ubuntu, said */
	t = base_for("11.8.89", "8.9.7", "rhel", "8.9", &c);
	assert_string_equal(t, "11.8.0-cudnn8-devel-ubuntu22.04");
	assert_non_null(strstr(c, "not Ubuntu"));
	free(t);
	free(c);
	t = base_for(NULL, NULL, "ubuntu", "20.04", &c);
	assert_string_equal(t, "ubuntu:20.04");
	free(t);
	free(c);
	/* a hostile OS version never reaches FROM */
	t = base_for(NULL, NULL, "ubuntu", "20.04\nRUN rm -rf /", &c);
	assert_string_equal(t, "ubuntu:22.04");
	free(t);
	free(c);
}

static int import_text(const char *text, envlock_lock **lock, envlock_import_kind *kind, char *err, size_t errlen)
{
	char *dir = unit_tmpdir(), path[4200];
	envlock_ctx *ctx;
	int rc;

	unit_write(dir, "in.txt", text, -1);
	snprintf(path, sizeof(path), "%s/in.txt", dir);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	rc = envlock_import(lock, kind, ctx, path);
	/* the message without the scratch directory */
	snprintf(err, errlen, "%s", rc ? strstr(envlock_error_last(ctx), "in.txt") : "");
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
	return rc;
}

static void importer(void **state)
{
	envlock_import_kind kind;
	envlock_lock *lock = NULL;
	char err[1024];

	(void)state;
	assert_int_equal(import_text("# Editable install with no version control (proj==0.1)\n-e /src/proj\n"
				     "b==2.0 --hash=sha256:00\nA[x]==1.0 ; python_version < \"4\"\n"
				     "c @ https://example.com/c-1.0.tar.gz#sha256=ab\n",
				     &lock, &kind, err, sizeof(err)), 0);
	assert_int_equal(kind, ENVLOCK_IMPORT_PIP_FREEZE);
	assert_string_equal(unit_str(lock, "partial.from"), "pip-freeze");
	assert_string_equal(unit_str(lock, "pip.distributions.0.name"), "A");
	assert_string_equal(unit_str(lock, "pip.distributions.0.version"), "1.0");
	assert_string_equal(unit_str(lock, "pip.distributions.1.version"), "2.0");
	assert_string_equal(unit_str(lock, "pip.distributions.2.direct_url.archive_hash"), "sha256=ab");
	assert_string_equal(unit_str(lock, "pip.distributions.3.source"), "/src/proj");
	assert_string_equal(unit_str(lock, "pip.distributions.3.version"), "0.1");
	assert_int_equal(el_lock_view(lock)->pip.count, 4);
	/* its id is the id of its content */
	assert_string_equal(unit_str(lock, "id"), envlock_lock_id(lock));
	envlock_lock_free(lock);

	assert_int_equal(import_text("# platform: linux-64\n@EXPLICIT\n"
				     "https://conda.anaconda.org/conda-forge/linux-64/libgcc-ng-13.2.0-h807b86a_5.conda#d4ff227c46917d3b4565302a2bbb276b\n",
				     &lock, &kind, err, sizeof(err)), 0);
	assert_int_equal(kind, ENVLOCK_IMPORT_CONDA_EXPLICIT);
	assert_string_equal(unit_str(lock, "conda.packages.0.name"), "libgcc-ng");
	assert_string_equal(unit_str(lock, "conda.packages.0.version"), "13.2.0");
	assert_string_equal(unit_str(lock, "conda.packages.0.build"), "h807b86a_5");
	assert_string_equal(unit_str(lock, "conda.packages.0.channel"), "https://conda.anaconda.org/conda-forge/linux-64");
	assert_string_equal(unit_str(lock, "conda.packages.0.md5"), "d4ff227c46917d3b4565302a2bbb276b");
	envlock_lock_free(lock);

	assert_int_equal(import_text("a==1\n\n# c\nb==\n", &lock, &kind, err, sizeof(err)), ENVLOCK_EPARSE);
	assert_null(lock);
	assert_string_equal(err, "in.txt:4: '' is not a version");
	assert_int_equal(import_text("a==1 \\\n  b==2\n", &lock, &kind, err, sizeof(err)), ENVLOCK_EPARSE);
	assert_string_equal(err, "in.txt:2: '1 b==2' is not a version");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pep440),
		cmocka_unit_test(pip_lines),
		cmocka_unit_test(base_images),
		cmocka_unit_test(importer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
