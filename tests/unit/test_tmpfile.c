/* lib/util/atomic.h: el_tmpfile's open, commit and rollback. */
#include <dirent.h>
#include <fcntl.h>

#include "unit.h"
#include "util/atomic.h"
#include "util/error.h"

/* The names in dir, sorted, joined by spaces ("" when empty). */
static void listing(const char *dir, char *out, size_t len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);

	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

static void content(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
}

static void commit_puts_the_file_in_place(void **state)
{
	char *dir = unit_tmpdir(), path[4200], got[64], list[256];
	el_tmpfile t;
	envlock_ctx *ctx;
	struct stat st;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	snprintf(path, sizeof(path), "%s/out.tar.zst", dir);
	unit_write(dir, "out.tar.zst", "old\n", -1);
	assert_int_equal(el_tmpfile_open(&t, ctx, path), 0);
	assert_true(t.fd >= 0);
	/* in the same folder, hidden, private until committed */
	assert_int_equal(strncmp(t.tmp, dir, strlen(dir)), 0);
	assert_int_equal(strncmp(t.tmp + strlen(dir), "/.out.tar.zst.", 14), 0);
	assert_int_equal(fstat(t.fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(fcntl(t.fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(t.fd, "new\n", 4), 4);
	content(path, got, sizeof(got));
	assert_string_equal(got, "old\n");
	assert_int_equal(el_tmpfile_commit(&t, 0640), 0);
	assert_int_equal(t.fd, -1);
	assert_null(t.tmp);
	content(path, got, sizeof(got));
	assert_string_equal(got, "new\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	listing(dir, list, sizeof(list));
	assert_string_equal(list, "out.tar.zst");
	el_tmpfile_rollback(&t); /* ended: nothing to do */
	content(path, got, sizeof(got));
	assert_string_equal(got, "new\n");
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

static void rollback_leaves_nothing(void **state)
{
	char *dir = unit_tmpdir(), path[4200], list[256];
	el_tmpfile t, never = EL_TMPFILE_INIT;
	envlock_ctx *ctx;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	snprintf(path, sizeof(path), "%s/lock.json", dir);
	assert_int_equal(el_tmpfile_open(&t, ctx, path), 0);
	assert_int_equal(write(t.fd, "x", 1), 1);
	el_tmpfile_rollback(&t);
	el_tmpfile_rollback(&t);
	el_tmpfile_rollback(&never);
	listing(dir, list, sizeof(list));
	assert_string_equal(list, "");
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

static void failures_name_the_path_and_clean_up(void **state)
{
	char *dir = unit_tmpdir(), path[4200], want[8600], got[64], list[256];
	el_tmpfile t;
	envlock_ctx *ctx;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	/* no folder to make it in */
	snprintf(path, sizeof(path), "%s/missing/b.tar.zst", dir);
	assert_int_equal(el_tmpfile_open(&t, ctx, path), ENVLOCK_EIO);
	snprintf(want, sizeof(want), "'%s': cannot create a file in '%s/missing': no such file or directory", path, dir);
	assert_string_equal(envlock_error_last(ctx), want);
	assert_int_equal(t.fd, -1);
	el_tmpfile_rollback(&t);

	/* commit_new never replaces what is there */
	snprintf(path, sizeof(path), "%s/key.pem", dir);
	unit_write(dir, "key.pem", "theirs\n", -1);
	assert_int_equal(el_tmpfile_open(&t, ctx, path), 0);
	assert_int_equal(write(t.fd, "mine\n", 5), 5);
	assert_int_equal(el_tmpfile_commit_new(&t, 0600), ENVLOCK_EINVAL);
	snprintf(want, sizeof(want), "'%s' already exists", path);
	assert_string_equal(envlock_error_last(ctx), want);
	content(path, got, sizeof(got));
	assert_string_equal(got, "theirs\n");
	listing(dir, list, sizeof(list));
	assert_string_equal(list, "key.pem");

	/* and puts the file there when nothing is */
	snprintf(path, sizeof(path), "%s/new.pem", dir);
	assert_int_equal(el_tmpfile_open(&t, ctx, path), 0);
	assert_int_equal(write(t.fd, "mine\n", 5), 5);
	assert_int_equal(el_tmpfile_commit_new(&t, 0600), 0);
	content(path, got, sizeof(got));
	assert_string_equal(got, "mine\n");
	listing(dir, list, sizeof(list));
	assert_string_equal(list, "key.pem new.pem");

	/* a rename that fails (a folder with files in it at the path) keeps the folder, removes the file */
	unit_write(dir, "busy/inside", "x", -1);
	snprintf(path, sizeof(path), "%s/busy", dir);
	assert_int_equal(el_tmpfile_open(&t, ctx, path), 0);
	assert_int_equal(el_tmpfile_commit(&t, 0644), ENVLOCK_EIO);
	snprintf(want, sizeof(want), "'%s': is a directory", path);
	assert_string_equal(envlock_error_last(ctx), want);
	listing(dir, list, sizeof(list));
	assert_string_equal(list, "busy key.pem new.pem");
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(commit_puts_the_file_in_place),
		cmocka_unit_test(rollback_leaves_nothing),
		cmocka_unit_test(failures_name_the_path_and_clean_up),
	};
	return cmocka_run_group_tests_name("tmpfile", tests, NULL, NULL);
}
