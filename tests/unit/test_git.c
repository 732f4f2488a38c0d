/*
 * Unit tests for the repos probe (lib/probe/git.c) on repositories built
 * here with the git command line, whose own answers (rev-parse, describe,
 * diff) are what the lock must agree with.
 */
#include "unit.h"

#include <git2.h>

#include "util/hash.h"
#include "util/spawn.h"
#include "util/text.h"

#define TEST_GIT_TIMEOUT_MS 60000

static char *home;
/*
 * Most probes run on an empty root: repositories are found where envlock
 * runs, never under the root, and the rest of the machine is not probed
 * again for each case. The default repository needs the live root.
 */
static char *empty_root;

/* git -C dir <args>; returns its stdout (malloc'd) and its exit status in *status. */
static char *git_status(const char *dir, int *status, const char *const *args)
{
	const char *argv[64] = { "git", "-C", dir, "-c", "init.defaultBranch=main",
				 "-c", "protocol.file.allow=always", "-c", "advice.detachedHead=false" };
	size_t n = 9;
	el_buf out = EL_BUF_INIT(16u << 20);

	for (; *args; args++) {
		assert_true(n < 63);
		argv[n++] = *args;
	}
	argv[n] = NULL;
	assert_int_equal(el_spawn(argv, TEST_GIT_TIMEOUT_MS, &out, status), 0);
	return el_buf_detach(&out);
}

/* git that must succeed; its stdout (malloc'd). */
static char *git_out(const char *dir, const char *const *args)
{
	int status;
	char *out = git_status(dir, &status, args);

	if (status != 0)
		fail_msg("git %s in %s: exit %d", args[0], dir, status);
	return out;
}

/* Its first line, without the newline (malloc'd). */
static char *git_line(const char *dir, const char *const *args)
{
	char *out = git_out(dir, args);

	out[strcspn(out, "\n")] = '\0';
	return out;
}

#define GIT(dir, ...) free(git_out(dir, (const char *const[]){ __VA_ARGS__, NULL }))
#define GIT_LINE(dir, ...) git_line(dir, (const char *const[]){ __VA_ARGS__, NULL })
#define GIT_OUT(dir, ...) git_out(dir, (const char *const[]){ __VA_ARGS__, NULL })

static int setup(void **state)
{
	(void)state;
	home = unit_tmpdir();
	empty_root = unit_tmpdir();
	setenv("HOME", home, 1);
	setenv("XDG_CONFIG_HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Ada Lovelace", 1);
	setenv("GIT_AUTHOR_EMAIL", "ada@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "Ada Lovelace", 1);
	setenv("GIT_COMMITTER_EMAIL", "ada@example.org", 1);
	setenv("GIT_AUTHOR_DATE", "1700000000 +0000", 1);
	setenv("GIT_COMMITTER_DATE", "1700000000 +0000", 1);
	setenv("GIT_EDITOR", "true", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unit_rmtree(home);
	unit_rmtree(empty_root);
	return 0;
}

/* A fresh repository "name" in tmp with one commit of file "a.txt" (malloc'd path). */
static char *new_repo(const char *tmp, const char *name)
{
	char *dir;

	assert_true(asprintf(&dir, "%s/%s", tmp, name) > 0);
	unit_mkdirs(dir);
	GIT(dir, "init", "-q");
	unit_write(dir, "a.txt", "alpha\n", -1);
	GIT(dir, "add", "a.txt");
	GIT(dir, "commit", "-q", "-m", "first");
	return dir;
}

static void remove_file(const char *dir, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(unlink(path), 0);
}

/* The real path of a folder, as libgit2 reports it (malloc'd). */
static char *real(const char *dir)
{
	char *r = realpath(dir, NULL);

	assert_non_null(r);
	return r;
}

static envlock_lock *probe_opts(const char *const *repos, size_t n, int no_patch, int default_repo,
				const char *root)
{
	envlock_probe_opts opts;

	memset(&opts, 0, sizeof(opts));
	opts.root = root;
	opts.repos = repos;
	opts.repo_count = n;
	opts.no_patch = no_patch;
	opts.default_repo = default_repo;
	return unit_probe_opts(&opts);
}

static envlock_lock *probe1(const char *repo)
{
	const char *repos[] = { repo };

	return probe_opts(repos, 1, 0, 0, empty_root);
}

/* Value of repos.repositories.<i>.<path>. */
static const cJSON *rget(const envlock_lock *lock, int i, const char *path)
{
	char full[512];

	snprintf(full, sizeof(full), "repos.repositories.%d.%s", i, path);
	return unit_get(lock, full);
}

static const char *rstr(const envlock_lock *lock, int i, const char *path)
{
	const cJSON *v = rget(lock, i, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int rbool(const envlock_lock *lock, int i, const char *path)
{
	const cJSON *v = rget(lock, i, path);

	assert_true(cJSON_IsBool(v));
	return cJSON_IsTrue(v);
}

static int repo_count(const envlock_lock *lock)
{
	const cJSON *arr = unit_get(lock, "repos.repositories");

	assert_true(cJSON_IsArray(arr));
	return cJSON_GetArraySize(arr);
}

/* The string list at path equals the NULL-terminated expected. */
static void assert_list(const envlock_lock *lock, int i, const char *path, const char *const *expected)
{
	const cJSON *arr = rget(lock, i, path);
	int n = 0;

	assert_true(cJSON_IsArray(arr));
	for (; expected[n]; n++) {
		const cJSON *item = cJSON_GetArrayItem(arr, n);

		assert_true(cJSON_IsString(item));
		assert_string_equal(item->valuestring, expected[n]);
	}
	assert_int_equal(cJSON_GetArraySize(arr), n);
}

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define EMPTY ((const char *const[]){ NULL })

static void clean_branch_with_tag(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *rdir = real(dir);
	char *head, *describe;
	envlock_lock *lock;

	(void)state;
	GIT(dir, "tag", "v2.25.1");
	lock = probe1(dir);
	head = GIT_LINE(dir, "rev-parse", "HEAD");
	assert_string_equal(unit_str(lock, "repos.status"), "present");
	assert_int_equal(repo_count(lock), 1);
	assert_string_equal(rstr(lock, 0, "path"), rdir);
	assert_string_equal(rstr(lock, 0, "requested"), dir);
	assert_string_equal(rstr(lock, 0, "status"), "present");
	assert_false(rbool(lock, 0, "bare"));
	assert_false(rbool(lock, 0, "shallow"));
	assert_string_equal(rstr(lock, 0, "state"), "clean");
	assert_string_equal(rstr(lock, 0, "head.commit"), head);
	assert_int_equal(strlen(rstr(lock, 0, "head.commit")), 40);
	assert_string_equal(rstr(lock, 0, "head.branch"), "main");
	assert_false(rbool(lock, 0, "head.detached"));
	assert_false(rbool(lock, 0, "head.unborn"));
	assert_string_equal(rstr(lock, 0, "tag"), "v2.25.1");
	assert_false(rbool(lock, 0, "dirty"));
	assert_list(lock, 0, "changes.staged", EMPTY);
	assert_list(lock, 0, "changes.modified", EMPTY);
	assert_list(lock, 0, "changes.untracked", EMPTY);
	assert_list(lock, 0, "changes.conflicted", EMPTY);
	assert_null(rget(lock, 0, "changes.truncated"));
	assert_null(rget(lock, 0, "patch"));
	assert_list(lock, 0, "remotes", EMPTY);
	assert_int_equal(cJSON_GetArraySize(rget(lock, 0, "submodules")), 0);
	assert_int_equal(unit_warnings_with(lock, rdir), 0);
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);
	free(head);

	/* one commit after the tag, then an annotated tag that is nearer */
	unit_write(dir, "a.txt", "alpha 2\n", -1);
	GIT(dir, "commit", "-q", "-a", "-m", "second");
	lock = probe1(dir);
	describe = GIT_LINE(dir, "describe", "--tags");
	head = GIT_LINE(dir, "rev-parse", "HEAD");
	assert_true(el_starts_with(describe, "v2.25.1-1-g"));
	assert_string_equal(rstr(lock, 0, "tag"), describe);
	assert_string_equal(rstr(lock, 0, "head.commit"), head);
	assert_int_equal(strncmp(describe + strlen("v2.25.1-1-g"), head, 7), 0);
	envlock_lock_free(lock);
	free(describe);
	free(head);
	unit_write(dir, "a.txt", "alpha 3\n", -1);
	GIT(dir, "commit", "-q", "-a", "-m", "third");
	GIT(dir, "tag", "-a", "-m", "release", "v3.0.0", "HEAD~1");
	lock = probe1(dir);
	describe = GIT_LINE(dir, "describe", "--tags");
	assert_true(el_starts_with(describe, "v3.0.0-1-g"));
	assert_string_equal(rstr(lock, 0, "tag"), describe);
	envlock_lock_free(lock);
	free(describe);
	free(rdir);
	free(dir);
	unit_rmtree(tmp);
}

static void no_tag_no_warning(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *rdir = real(dir);
	envlock_lock *lock;

	(void)state;
	lock = probe1(dir);
	assert_null(rget(lock, 0, "tag"));
	assert_int_equal(unit_warnings_with(lock, rdir), 0);
	envlock_lock_free(lock);
	free(rdir);
	free(dir);
	unit_rmtree(tmp);
}

static void detached_head(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *head;
	envlock_lock *lock;

	(void)state;
	unit_write(dir, "a.txt", "beta\n", -1);
	GIT(dir, "commit", "-q", "-a", "-m", "second");
	GIT(dir, "checkout", "-q", "--detach", "HEAD~1");
	head = GIT_LINE(dir, "rev-parse", "HEAD");
	lock = probe1(dir);
	assert_true(rbool(lock, 0, "head.detached"));
	assert_false(rbool(lock, 0, "head.unborn"));
	assert_null(rget(lock, 0, "head.branch"));
	assert_string_equal(rstr(lock, 0, "head.commit"), head);
	assert_string_equal(rstr(lock, 0, "state"), "clean");
	envlock_lock_free(lock);
	free(head);
	free(dir);
	unit_rmtree(tmp);
}

static void unborn_branch(void **state)
{
	char *tmp = unit_tmpdir(), *dir, *cached;
	char hex[EL_SHA256_HEX];
	envlock_lock *lock;

	(void)state;
	assert_true(asprintf(&dir, "%s/u", tmp) > 0);
	unit_mkdirs(dir);
	GIT(dir, "init", "-q", "-b", "dev");
	lock = probe1(dir);
	assert_true(rbool(lock, 0, "head.unborn"));
	assert_false(rbool(lock, 0, "head.detached"));
	assert_string_equal(rstr(lock, 0, "head.branch"), "dev");
	assert_null(rget(lock, 0, "head.commit"));
	assert_null(rget(lock, 0, "tag"));
	assert_false(rbool(lock, 0, "dirty"));
	envlock_lock_free(lock);

	/* a staged first file: the patch is against the empty tree */
	unit_write(dir, "new.txt", "first line\n", -1);
	GIT(dir, "add", "new.txt");
	cached = GIT_OUT(dir, "diff", "--cached", "--no-color", "--no-ext-diff");
	el_sha256_buf(cached, strlen(cached), hex);
	lock = probe1(dir);
	assert_true(rbool(lock, 0, "dirty"));
	assert_list(lock, 0, "changes.staged", LIST("new.txt"));
	assert_string_equal(rstr(lock, 0, "patch.text"), cached);
	assert_string_equal(rstr(lock, 0, "patch.sha256"), hex);
	envlock_lock_free(lock);
	free(cached);
	free(dir);
	unit_rmtree(tmp);
}

static void remotes_without_credentials(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r");
	envlock_lock *lock;

	(void)state;
	GIT(dir, "remote", "add", "origin", "https://alice:s3cret@git.example.org/team/model.git");
	GIT(dir, "remote", "add", "backup", "https://ghp_0123456789abcdef@github.com/team/model.git");
	GIT(dir, "remote", "add", "upstream", "git@github.com:open-mmlab/mmdetection.git");
	GIT(dir, "remote", "add", "mirror", "ssh://git@mirror.example.org/model.git");
	lock = probe1(dir);
	assert_int_equal(cJSON_GetArraySize(rget(lock, 0, "remotes")), 4);
	assert_string_equal(rstr(lock, 0, "remotes.0.name"), "backup");
	assert_string_equal(rstr(lock, 0, "remotes.0.url"), "https://github.com/team/model.git");
	assert_string_equal(rstr(lock, 0, "remotes.1.name"), "mirror");
	assert_string_equal(rstr(lock, 0, "remotes.1.url"), "ssh://git@mirror.example.org/model.git");
	assert_string_equal(rstr(lock, 0, "remotes.2.name"), "origin");
	assert_string_equal(rstr(lock, 0, "remotes.2.url"), "https://git.example.org/team/model.git");
	assert_string_equal(rstr(lock, 0, "remotes.3.name"), "upstream");
	assert_string_equal(rstr(lock, 0, "remotes.3.url"), "git@github.com:open-mmlab/mmdetection.git");
	{
		el_buf out = EL_BUF_INIT(64u << 20);

		assert_int_equal(el_json_write(lock->doc, &out, 2), 0);
		assert_null(strstr(out.data, "s3cret"));
		assert_null(strstr(out.data, "ghp_"));
		el_buf_release(&out);
	}
	envlock_lock_free(lock);

	/* url.<base>.insteadOf is applied, as git fetches it (the longest prefix wins) */
	GIT(dir, "config", "url.https://github.com/.insteadOf", "gh:");
	GIT(dir, "config", "url.https://mirror.example.org/mm/.insteadOf", "gh:open-mmlab/");
	GIT(dir, "remote", "add", "short", "gh:open-mmlab/mmcv.git");
	GIT(dir, "remote", "add", "other", "gh:team/other.git");
	lock = probe1(dir);
	{
		char *want_short = GIT_LINE(dir, "remote", "get-url", "short");
		char *want_other = GIT_LINE(dir, "remote", "get-url", "other");

		assert_string_equal(want_short, "https://mirror.example.org/mm/mmcv.git");
		assert_string_equal(rstr(lock, 0, "remotes.3.name"), "other");
		assert_string_equal(rstr(lock, 0, "remotes.3.url"), want_other);
		assert_string_equal(rstr(lock, 0, "remotes.4.name"), "short");
		assert_string_equal(rstr(lock, 0, "remotes.4.url"), want_short);
		free(want_short);
		free(want_other);
	}
	envlock_lock_free(lock);
	free(dir);
	unit_rmtree(tmp);
}

/* The patch libgit2 itself prints with git_diff_to_buf, for the cross-check. */
static char *libgit2_patch(const char *dir)
{
	git_repository *repo = NULL;
	git_object *tree = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	git_buf buf = { 0 };
	char *text;

	assert_true(git_libgit2_init() > 0);
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags |= GIT_DIFF_IGNORE_SUBMODULES;
	assert_int_equal(git_repository_open(&repo, dir), 0);
	assert_int_equal(git_revparse_single(&tree, repo, "HEAD^{tree}"), 0);
	assert_int_equal(git_diff_tree_to_workdir_with_index(&diff, repo, (git_tree *)tree, &opts), 0);
	assert_int_equal(git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH), 0);
	text = strdup(buf.ptr ? buf.ptr : "");
	git_buf_dispose(&buf);
	git_diff_free(diff);
	git_object_free(tree);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return text;
}

static void changes_and_patch(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *diff, *lg2;
	char hex[EL_SHA256_HEX], lg2_hex[EL_SHA256_HEX];
	envlock_lock *lock;
	const cJSON *size;

	(void)state;
	unit_write(dir, "b.txt", "bravo\n", -1);
	unit_write(dir, "c.txt", "charlie\n", -1);
	unit_write(dir, "src/z.py", "print('z')\n", -1);
	GIT(dir, "add", "b.txt", "c.txt", "src/z.py");
	GIT(dir, "commit", "-q", "-m", "more");

	/* untracked only: listed, not dirty, no patch */
	unit_write(dir, "notes.txt", "scratch\n", -1);
	lock = probe1(dir);
	assert_list(lock, 0, "changes.untracked", LIST("notes.txt"));
	assert_false(rbool(lock, 0, "dirty"));
	assert_null(rget(lock, 0, "patch"));
	envlock_lock_free(lock);

	unit_write(dir, "a.txt", "alpha changed\n", -1);           /* modified */
	unit_write(dir, "b.txt", "bravo staged\n", -1);            /* staged */
	unit_write(dir, "new.txt", "new file\n", -1);              /* staged, new */
	GIT(dir, "add", "b.txt", "new.txt");
	unit_write(dir, "b.txt", "bravo staged then edited\n", -1); /* staged and modified */
	remove_file(dir, "c.txt");
	unit_write(dir, "data/deep/x.csv", "1,2\n", -1);           /* untracked, in a new folder */
	unit_write(dir, "src/w.py", "print('w')\n", -1);
	GIT(dir, "rm", "-q", "--cached", "src/z.py");             /* staged deletion, file kept */

	lock = probe1(dir);
	assert_list(lock, 0, "changes.staged", LIST("b.txt", "new.txt", "src/z.py"));
	assert_list(lock, 0, "changes.modified", LIST("a.txt", "b.txt", "c.txt"));
	assert_list(lock, 0, "changes.untracked", LIST("data/deep/x.csv", "notes.txt", "src/w.py", "src/z.py"));
	assert_list(lock, 0, "changes.conflicted", EMPTY);
	assert_true(rbool(lock, 0, "dirty"));

	/* the patch is what `git diff HEAD` prints, byte for byte */
	diff = GIT_OUT(dir, "diff", "HEAD", "--no-color", "--no-ext-diff");
	el_sha256_buf(diff, strlen(diff), hex);
	assert_non_null(strstr(diff, "+alpha changed\n"));
	assert_string_equal(rstr(lock, 0, "patch.text"), diff);
	assert_string_equal(rstr(lock, 0, "patch.sha256"), hex);
	size = rget(lock, 0, "patch.size");
	assert_true(cJSON_IsNumber(size));
	assert_int_equal((size_t)size->valuedouble, strlen(diff));
	assert_null(rget(lock, 0, "patch.truncated"));
	/* and what libgit2's own git_diff_to_buf gives */
	lg2 = libgit2_patch(dir);
	el_sha256_buf(lg2, strlen(lg2), lg2_hex);
	assert_string_equal(rstr(lock, 0, "patch.sha256"), lg2_hex);
	envlock_lock_free(lock);

	/* --no-patch: the digest and size stay, the text goes, nothing is warned */
	{
		const char *repos[] = { dir };
		char *rdir = real(dir);

		lock = probe_opts(repos, 1, 1, 0, empty_root);
		assert_string_equal(rstr(lock, 0, "patch.sha256"), hex);
		assert_int_equal((size_t)rget(lock, 0, "patch.size")->valuedouble, strlen(diff));
		assert_null(rget(lock, 0, "patch.text"));
		assert_null(rget(lock, 0, "patch.truncated"));
		assert_int_equal(unit_warnings_with(lock, rdir), 0);
		envlock_lock_free(lock);
		free(rdir);
	}
	free(lg2);
	free(diff);
	free(dir);
	unit_rmtree(tmp);
}

static void big_patch_keeps_digest_only(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *rdir = real(dir), *diff, *big;
	char hex[EL_SHA256_HEX];
	size_t n = 40000;
	envlock_lock *lock;

	(void)state;
	big = malloc(n * 40 + 1);
	assert_non_null(big);
	big[0] = '\0';
	for (size_t i = 0, len = 0; i < n; i++)
		len += (size_t)sprintf(big + len, "line %08zu of a large generated file\n", i);
	unit_write(dir, "big.txt", big, -1);
	GIT(dir, "add", "big.txt");
	lock = probe1(dir);
	diff = GIT_OUT(dir, "diff", "HEAD", "--no-color", "--no-ext-diff");
	assert_true(strlen(diff) > (1u << 20));
	el_sha256_buf(diff, strlen(diff), hex);
	assert_string_equal(rstr(lock, 0, "patch.sha256"), hex);
	assert_int_equal((size_t)rget(lock, 0, "patch.size")->valuedouble, strlen(diff));
	assert_true(rbool(lock, 0, "patch.truncated"));
	assert_null(rget(lock, 0, "patch.text"));
	assert_int_equal(unit_warnings_with(lock, "only its sha256 is recorded"), 1);
	assert_int_equal(unit_warnings_with(lock, rdir), 1);
	envlock_lock_free(lock);
	free(big);
	free(diff);
	free(rdir);
	free(dir);
	unit_rmtree(tmp);
}

static void many_untracked_are_capped(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *rdir = real(dir);
	char name[64];
	envlock_lock *lock;
	const cJSON *arr;

	(void)state;
	for (int i = 0; i < 1005; i++) {
		snprintf(name, sizeof(name), "out/f%04d.log", i);
		unit_write(dir, name, "x\n", -1);
	}
	lock = probe1(dir);
	arr = rget(lock, 0, "changes.untracked");
	assert_int_equal(cJSON_GetArraySize(arr), 1000);
	assert_string_equal(cJSON_GetArrayItem(arr, 0)->valuestring, "out/f0000.log");
	assert_string_equal(cJSON_GetArrayItem(arr, 999)->valuestring, "out/f0999.log");
	assert_true(rbool(lock, 0, "changes.truncated"));
	assert_false(rbool(lock, 0, "dirty"));
	assert_int_equal(unit_warnings_with(lock, "1005 untracked paths, only the first 1000 recorded"), 1);
	assert_int_equal(unit_warnings_with(lock, rdir), 1);
	envlock_lock_free(lock);
	free(rdir);
	free(dir);
	unit_rmtree(tmp);
}

/*
 * Untracked files: text up to 1 MiB each and 8 MiB in all, the rest by
 * digest with the reason; a link by its target's digest; a name restore
 * would refuse is warned about and left out; ignored files are not there.
 */
static void untracked_files_limits(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *mib = malloc(1u << 20), name[64], path[4096];
	char hex[EL_SHA256_HEX];
	envlock_lock *lock;
	const cJSON *arr;

	(void)state;
	assert_non_null(mib);
	memset(mib, 'a', 1u << 20);
	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "data/t%d.txt", i);
		unit_write(dir, name, mib, 1 << 20);
	}
	unit_write(dir, ".gitignore", "*.log\n", -1);
	unit_write(dir, "run.log", "ignored\n", -1);
	unit_write(dir, "odd(1).py", "x = 1\n", -1);
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink("a.txt", path), 0);
	lock = probe1(dir);
	arr = rget(lock, 0, "untracked_files");
	assert_true(cJSON_IsArray(arr));
	/* .gitignore, 9 data files, link: sorted; odd(1).py left out, run.log ignored */
	assert_int_equal(cJSON_GetArraySize(arr), 11);
	assert_string_equal(rstr(lock, 0, "untracked_files.0.path"), ".gitignore");
	assert_string_equal(rstr(lock, 0, "untracked_files.0.text"), "*.log\n");
	el_sha256_buf(mib, 1u << 20, hex);
	for (int i = 1; i <= 9; i++) {
		char key[64];

		snprintf(key, sizeof(key), "untracked_files.%d.sha256", i);
		assert_string_equal(rstr(lock, 0, key), hex);
		snprintf(key, sizeof(key), "untracked_files.%d.text", i);
		/* .gitignore's 6 bytes come first: the eighth MiB no longer fits */
		if (i <= 7)
			assert_non_null(rstr(lock, 0, key));
		else
			assert_null(rstr(lock, 0, key));
	}
	assert_string_equal(rstr(lock, 0, "untracked_files.8.omitted"), "over_repo_limit");
	assert_string_equal(rstr(lock, 0, "untracked_files.9.omitted"), "over_repo_limit");
	assert_string_equal(rstr(lock, 0, "untracked_files.10.path"), "link");
	assert_string_equal(rstr(lock, 0, "untracked_files.10.omitted"), "symlink");
	el_sha256_buf("a.txt", 5, hex);
	assert_string_equal(rstr(lock, 0, "untracked_files.10.sha256"), hex);
	assert_int_equal(unit_warnings_with(lock, "untracked 'odd(1).py' contains a shell metacharacter or space: not recorded"), 1);
	assert_int_equal(unit_warnings_with(lock, "3 untracked files recorded by sha256 only"), 1);
	assert_int_equal(unit_warnings_with(lock, "run.log"), 0);
	assert_false(rbool(lock, 0, "dirty"));
	envlock_lock_free(lock);
	free(mib);
	free(dir);
	unit_rmtree(tmp);
}

static void submodule_recorded(void **state)
{
	char *tmp = unit_tmpdir(), *sub = new_repo(tmp, "sub"), *super = new_repo(tmp, "super");
	char *gitlink, *inner, *subdir;
	const char *text;
	envlock_lock *lock;

	(void)state;
	GIT(super, "submodule", "add", "-q", sub, "third_party/sub");
	GIT(super, "commit", "-q", "-m", "add submodule");
	gitlink = GIT_LINE(super, "rev-parse", "HEAD:third_party/sub");
	lock = probe1(super);
	assert_int_equal(cJSON_GetArraySize(rget(lock, 0, "submodules")), 1);
	assert_string_equal(rstr(lock, 0, "submodules.0.path"), "third_party/sub");
	assert_string_equal(rstr(lock, 0, "submodules.0.commit"), gitlink);
	assert_string_equal(rstr(lock, 0, "submodules.0.url"), sub);
	assert_null(rget(lock, 0, "submodules.0.workdir_commit"));
	assert_false(rbool(lock, 0, "dirty"));
	assert_list(lock, 0, "changes.modified", EMPTY);
	envlock_lock_free(lock);

	/* a new commit checked out in the submodule: shown there, not as a change of the superproject */
	assert_true(asprintf(&subdir, "%s/third_party/sub", super) > 0);
	GIT(subdir, "commit", "-q", "--allow-empty", "-m", "inner");
	inner = GIT_LINE(subdir, "rev-parse", "HEAD");
	lock = probe1(super);
	assert_string_equal(rstr(lock, 0, "submodules.0.commit"), gitlink);
	assert_string_equal(rstr(lock, 0, "submodules.0.workdir_commit"), inner);
	assert_false(rbool(lock, 0, "dirty"));
	assert_list(lock, 0, "changes.modified", EMPTY);
	assert_null(rget(lock, 0, "patch"));
	envlock_lock_free(lock);

	/* a url with credentials in .gitmodules is stripped (and .gitmodules is a change) */
	GIT(super, "config", "-f", ".gitmodules", "submodule.third_party/sub.url",
	    "https://bob:tok3n@git.example.org/sub.git");
	lock = probe1(super);
	assert_string_equal(rstr(lock, 0, "submodules.0.url"), "https://git.example.org/sub.git");
	assert_list(lock, 0, "changes.modified", LIST(".gitmodules"));
	assert_true(rbool(lock, 0, "dirty"));
	text = rstr(lock, 0, "patch.text");
	assert_non_null(text);
	assert_true(el_starts_with(text, "diff --git a/.gitmodules b/.gitmodules\n"));
	envlock_lock_free(lock);
	free(subdir);
	free(inner);
	free(gitlink);
	free(sub);
	free(super);
	unit_rmtree(tmp);
}

static void merge_in_progress(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *rdir = real(dir), *out, *head, *diff;
	char hex[EL_SHA256_HEX];
	int status;
	envlock_lock *lock;

	(void)state;
	unit_write(dir, "z.txt", "zulu\n", -1);
	GIT(dir, "add", "z.txt");
	GIT(dir, "commit", "-q", "-m", "zulu");
	GIT(dir, "checkout", "-q", "-b", "other");
	unit_write(dir, "a.txt", "from other\n", -1);
	unit_write(dir, "b.txt", "new on other\n", -1);
	unit_write(dir, "z.txt", "zulu from other\n", -1);
	GIT(dir, "add", "a.txt", "b.txt", "z.txt");
	GIT(dir, "commit", "-q", "-m", "other side");
	GIT(dir, "checkout", "-q", "main");
	unit_write(dir, "a.txt", "from main\n", -1);
	GIT(dir, "commit", "-q", "-a", "-m", "main side");
	out = git_status(dir, &status, (const char *const[]){ "merge", "-q", "other", NULL });
	assert_int_not_equal(status, 0);
	free(out);
	head = GIT_LINE(dir, "rev-parse", "HEAD");
	lock = probe1(dir);
	assert_string_equal(rstr(lock, 0, "state"), "merge");
	assert_string_equal(rstr(lock, 0, "head.commit"), head);
	assert_string_equal(rstr(lock, 0, "head.branch"), "main");
	assert_list(lock, 0, "changes.conflicted", LIST("a.txt"));
	assert_list(lock, 0, "changes.staged", LIST("b.txt", "z.txt"));
	assert_list(lock, 0, "changes.modified", EMPTY);
	assert_true(rbool(lock, 0, "dirty"));
	/* the conflicted file appears with its markers, in path order, as git diff HEAD has it */
	diff = GIT_OUT(dir, "diff", "HEAD", "--no-color", "--no-ext-diff");
	assert_non_null(strstr(diff, "+<<<<<<< HEAD\n"));
	el_sha256_buf(diff, strlen(diff), hex);
	assert_string_equal(rstr(lock, 0, "patch.text"), diff);
	assert_string_equal(rstr(lock, 0, "patch.sha256"), hex);
	assert_int_equal(unit_warnings_with(lock, "a merge is in progress"), 1);
	assert_int_equal(unit_warnings_with(lock, rdir), 1);
	envlock_lock_free(lock);
	free(diff);
	free(head);
	free(rdir);
	free(dir);
	unit_rmtree(tmp);
}

/* Bytes JSON cannot carry unchanged: the digest only, and a warning. */
static void patch_not_utf8(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r"), *rdir = real(dir), *diff;
	char hex[EL_SHA256_HEX];
	envlock_lock *lock;

	(void)state;
	unit_write(dir, "a.txt", "caf\xe9 latin-1\n", -1);
	diff = GIT_OUT(dir, "diff", "HEAD", "--no-color", "--no-ext-diff");
	assert_non_null(strstr(diff, "+caf\xe9 latin-1\n"));
	el_sha256_buf(diff, strlen(diff), hex);
	lock = probe1(dir);
	assert_string_equal(rstr(lock, 0, "patch.sha256"), hex);
	assert_int_equal((size_t)rget(lock, 0, "patch.size")->valuedouble, strlen(diff));
	assert_null(rget(lock, 0, "patch.text"));
	assert_true(rbool(lock, 0, "patch.truncated"));
	assert_int_equal(unit_warnings_with(lock, "is not UTF-8 text"), 1);
	envlock_lock_free(lock);
	free(diff);
	free(rdir);
	free(dir);
	unit_rmtree(tmp);
}

static void shallow_clone(void **state)
{
	char *tmp = unit_tmpdir(), *src = new_repo(tmp, "src"), *dst, *url, *rdst, *head;
	envlock_lock *lock;

	(void)state;
	GIT(src, "tag", "v0.1");
	for (int i = 0; i < 3; i++) {
		char text[32];

		snprintf(text, sizeof(text), "change %d\n", i);
		unit_write(src, "a.txt", text, -1);
		GIT(src, "commit", "-q", "-a", "-m", "change");
	}
	assert_true(asprintf(&dst, "%s/clone", tmp) > 0);
	assert_true(asprintf(&url, "file://%s", src) > 0);
	GIT(tmp, "clone", "-q", "--depth", "1", url, dst);
	rdst = real(dst);
	head = GIT_LINE(dst, "rev-parse", "HEAD");
	lock = probe1(dst);
	assert_string_equal(rstr(lock, 0, "status"), "present");
	assert_true(rbool(lock, 0, "shallow"));
	assert_false(rbool(lock, 0, "bare"));
	assert_string_equal(rstr(lock, 0, "head.commit"), head);
	assert_string_equal(rstr(lock, 0, "head.branch"), "main");
	assert_null(rget(lock, 0, "tag")); /* v0.1 is beyond the cut */
	assert_string_equal(rstr(lock, 0, "remotes.0.name"), "origin");
	assert_string_equal(rstr(lock, 0, "remotes.0.url"), url);
	assert_false(rbool(lock, 0, "dirty"));
	assert_int_equal(unit_warnings_with(lock, rdst), 0);
	envlock_lock_free(lock);
	free(head);
	free(rdst);
	free(url);
	free(dst);
	free(src);
	unit_rmtree(tmp);
}

static void bare_repository(void **state)
{
	char *tmp = unit_tmpdir(), *src = new_repo(tmp, "src"), *bare, *rbare, *head;
	envlock_lock *lock;

	(void)state;
	GIT(src, "tag", "v1.0");
	assert_true(asprintf(&bare, "%s/b.git", tmp) > 0);
	GIT(tmp, "clone", "-q", "--bare", src, bare);
	rbare = real(bare);
	head = GIT_LINE(bare, "rev-parse", "HEAD");
	lock = probe1(bare);
	assert_string_equal(rstr(lock, 0, "status"), "present");
	assert_string_equal(rstr(lock, 0, "path"), rbare);
	assert_true(rbool(lock, 0, "bare"));
	assert_string_equal(rstr(lock, 0, "head.commit"), head);
	assert_string_equal(rstr(lock, 0, "head.branch"), "main");
	assert_string_equal(rstr(lock, 0, "tag"), "v1.0");
	assert_string_equal(rstr(lock, 0, "remotes.0.name"), "origin");
	assert_string_equal(rstr(lock, 0, "remotes.0.url"), src);
	assert_null(rget(lock, 0, "changes"));
	assert_null(rget(lock, 0, "dirty"));
	assert_null(rget(lock, 0, "patch"));
	assert_null(rget(lock, 0, "submodules"));
	assert_int_equal(unit_warnings_with(lock, rbare), 0);
	envlock_lock_free(lock);
	free(head);
	free(rbare);
	free(bare);
	free(src);
	unit_rmtree(tmp);
}

static void not_a_repository(void **state)
{
	char *tmp = unit_tmpdir(), *plain, *rplain, *missing, *expected;
	const char *repos[2];
	envlock_lock *lock;

	(void)state;
	assert_true(asprintf(&plain, "%s/plain", tmp) > 0);
	assert_true(asprintf(&missing, "%s/missing", tmp) > 0);
	unit_mkdirs(plain);
	rplain = real(plain);
	repos[0] = plain;
	repos[1] = missing;
	lock = probe_opts(repos, 2, 0, 0, empty_root);
	/* entries were asked for: present, each saying what it is */
	assert_string_equal(unit_str(lock, "repos.status"), "present");
	assert_int_equal(repo_count(lock), 2);
	assert_string_equal(rstr(lock, 0, "status"), "not_a_repository");
	assert_string_equal(rstr(lock, 0, "requested"), plain);
	assert_string_equal(rstr(lock, 0, "path"), rplain);
	assert_null(rget(lock, 0, "head"));
	assert_true(asprintf(&expected, "'%s': not inside a git repository", plain) > 0);
	assert_int_equal(unit_warnings_with(lock, expected), 1);
	assert_int_equal(unit_warnings_with(lock, plain), 1);
	free(expected);
	/* a folder that is not there: the request itself fails, the lock is not to be written */
	assert_string_equal(rstr(lock, 1, "status"), "error");
	assert_string_equal(rstr(lock, 1, "requested"), missing);
	assert_string_equal(rstr(lock, 1, "path"), missing);
	assert_true(asprintf(&expected, "'%s': no such file or directory", missing) > 0);
	assert_int_equal(envlock_lock_error_count(lock), 1);
	assert_string_equal(envlock_lock_error(lock, 0), expected);
	assert_int_equal(unit_warnings_with(lock, missing), 0);
	free(expected);
	envlock_lock_free(lock);
	free(plain);
	free(rplain);
	free(missing);
	unit_rmtree(tmp);
}

/* Relative arguments are relative to the current directory; one entry per repository. */
static void relative_paths_and_duplicates(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "proj"), *rtmp = real(tmp), *cwd = getcwd(NULL, 0);
	const char *repos[] = { "proj", "proj/src", "./proj/" };
	envlock_lock *lock;

	(void)state;
	unit_write(dir, "src/keep.txt", "kept\n", -1);
	assert_int_equal(chdir(rtmp), 0);
	lock = probe_opts(repos, 3, 0, 0, empty_root);
	assert_int_equal(repo_count(lock), 1);
	assert_string_equal(rstr(lock, 0, "path"), "proj");
	assert_string_equal(rstr(lock, 0, "requested"), "proj");
	envlock_lock_free(lock);

	assert_int_equal(chdir("proj"), 0);
	repos[0] = ".";
	lock = probe_opts(repos, 1, 0, 0, empty_root);
	assert_string_equal(rstr(lock, 0, "path"), ".");
	assert_string_equal(rstr(lock, 0, "requested"), ".");
	envlock_lock_free(lock);

	/* from inside it, the repository is named absolutely */
	assert_int_equal(chdir("src"), 0);
	repos[0] = "..";
	lock = probe_opts(repos, 1, 0, 0, empty_root);
	{
		char *abs;

		assert_true(asprintf(&abs, "%s/proj", rtmp) > 0);
		assert_string_equal(rstr(lock, 0, "path"), abs);
		free(abs);
	}
	envlock_lock_free(lock);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	free(rtmp);
	free(dir);
	unit_rmtree(tmp);
}

static void default_repository(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "proj"), *rtmp = real(tmp), *cwd = getcwd(NULL, 0);
	char *head = GIT_LINE(dir, "rev-parse", "HEAD"), *plain;
	envlock_lock *lock;

	(void)state;
	assert_int_equal(chdir(dir), 0);
	lock = probe_opts(NULL, 0, 0, 1, NULL);
	assert_string_equal(unit_str(lock, "repos.status"), "present");
	assert_int_equal(repo_count(lock), 1);
	assert_string_equal(rstr(lock, 0, "path"), ".");
	assert_null(rget(lock, 0, "requested"));
	assert_string_equal(rstr(lock, 0, "head.commit"), head);
	envlock_lock_free(lock);

	/* default_repo off (--no-repo): nothing */
	lock = probe_opts(NULL, 0, 0, 0, NULL);
	assert_string_equal(unit_str(lock, "repos.status"), "absent");
	assert_null(unit_get(lock, "repos.repositories"));
	envlock_lock_free(lock);

	/* the default repository is the live machine's only */
	lock = probe_opts(NULL, 0, 0, 1, empty_root);
	assert_string_equal(unit_str(lock, "repos.status"), "absent");
	assert_null(unit_get(lock, "repos.repositories"));
	envlock_lock_free(lock);

	/* outside any repository: nothing, and no warning */
	assert_true(asprintf(&plain, "%s/plain", rtmp) > 0);
	unit_mkdirs(plain);
	assert_int_equal(chdir(plain), 0);
	lock = probe_opts(NULL, 0, 0, 1, NULL);
	assert_string_equal(unit_str(lock, "repos.status"), "absent");
	assert_null(unit_get(lock, "repos.repositories"));
	assert_int_equal(unit_warnings_with(lock, "git"), 0);
	envlock_lock_free(lock);
	assert_int_equal(chdir(cwd), 0);
	free(plain);
	free(head);
	free(cwd);
	free(rtmp);
	free(dir);
	unit_rmtree(tmp);
}

/* The same repository state gives the same bytes. */
static void output_is_deterministic(void **state)
{
	char *tmp = unit_tmpdir(), *dir = new_repo(tmp, "r");
	el_buf a = EL_BUF_INIT(64u << 20), b = EL_BUF_INIT(64u << 20);
	envlock_lock *l1, *l2;

	(void)state;
	GIT(dir, "remote", "add", "zeta", "https://z.example.org/r.git");
	GIT(dir, "remote", "add", "alpha", "https://a.example.org/r.git");
	for (int i = 0; i < 20; i++) {
		char name[32];

		snprintf(name, sizeof(name), "u/%c%d.txt", 'z' - i, i);
		unit_write(dir, name, "u\n", -1);
	}
	unit_write(dir, "a.txt", "edited\n", -1);
	l1 = probe1(dir);
	l2 = probe1(dir);
	assert_int_equal(el_json_write(el_jget(l1->doc, "repos"), &a, 2), 0);
	assert_int_equal(el_json_write(el_jget(l2->doc, "repos"), &b, 2), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	assert_string_equal(rstr(l1, 0, "remotes.0.name"), "alpha");
	assert_string_equal(rstr(l1, 0, "changes.untracked.0"), "u/g19.txt");
	el_buf_release(&a);
	el_buf_release(&b);
	envlock_lock_free(l1);
	envlock_lock_free(l2);
	free(dir);
	unit_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean_branch_with_tag),
		cmocka_unit_test(no_tag_no_warning),
		cmocka_unit_test(detached_head),
		cmocka_unit_test(unborn_branch),
		cmocka_unit_test(remotes_without_credentials),
		cmocka_unit_test(changes_and_patch),
		cmocka_unit_test(big_patch_keeps_digest_only),
		cmocka_unit_test(many_untracked_are_capped),
		cmocka_unit_test(untracked_files_limits),
		cmocka_unit_test(submodule_recorded),
		cmocka_unit_test(merge_in_progress),
		cmocka_unit_test(patch_not_utf8),
		cmocka_unit_test(shallow_clone),
		cmocka_unit_test(bare_repository),
		cmocka_unit_test(not_a_repository),
		cmocka_unit_test(relative_paths_and_duplicates),
		cmocka_unit_test(default_repository),
		cmocka_unit_test(output_is_deterministic),
	};
	return cmocka_run_group_tests_name("git", tests, setup, teardown);
}
