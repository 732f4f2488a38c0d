/* lib/util/vec.h: the overflow-checked grow macro and the string vector. */
#include <sys/wait.h>

#include "unit.h"
#include <cJSON.h>

#include "envlock/envlock.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/xalloc.h"

static void grow_doubles_and_keeps_the_elements(void **state)
{
	int *v = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		EL_GROW(v, n + 1, cap);
		v[n++] = i;
	}
	assert_int_equal(cap, 1024); /* 16, 32, ... 1024 */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(v[i], i);
	/* room already there: nothing moves */
	int *before = v;
	EL_GROW(v, 1024, cap);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 1024);
	/* a jump past double: straight to what is needed, still a power of two */
	EL_GROW(v, 5000, cap);
	assert_int_equal(cap, 8192);
	assert_int_equal(v[999], 999);
	free(v);
}

/* Run fn in a child: its exit status, and what it wrote on stderr into err. */
static int in_child(void (*fn)(void), char *err, size_t errlen)
{
	int p[2], status = 0;
	pid_t pid;
	ssize_t got;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		fn();
		_exit(0);
	}
	close(p[1]);
	size_t have = 0;

	/* to the end: a child that writes twice must not meet a closed pipe */
	while (have < errlen - 1 && (got = read(p[0], err + have, errlen - 1 - have)) > 0)
		have += (size_t)got;
	err[have] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void grow_count_past_size_max(void)
{
	size_t cap = 16;
	char *v = el_grow_array(NULL, &cap, SIZE_MAX / 2 + 2, 1);

	free(v);
}

static void grow_bytes_past_size_max(void)
{
	size_t cap = 0;
	long long *v = NULL;

	EL_GROW(v, SIZE_MAX / sizeof(*v) + 1, cap);
	free(v);
}

static void grow_overflow_is_out_of_memory(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(in_child(grow_count_past_size_max, err, sizeof(err)), 2);
	assert_string_equal(err, "envlock: fatal: out of memory\n");
	assert_int_equal(in_child(grow_bytes_past_size_max, err, sizeof(err)), 2);
	assert_string_equal(err, "envlock: fatal: out of memory\n");
}

static void handler_exits(void)
{
	fputs("handled\n", stderr);
	_exit(7);
}

static void handler_returns(void)
{
	fputs("returned\n", stderr);
}

static void oom_with_exiting_handler(void)
{
	envlock_set_oom_handler(handler_exits);
	el_oom();
}

static void oom_with_returning_handler(void)
{
	envlock_set_oom_handler(handler_returns);
	el_oom();
}

#if !defined(__SANITIZE_ADDRESS__)
static void oom_inside_cjson(void)
{
	envlock_ctx *ctx;

	/* a context exists: cJSON allocates through envlock's policy */
	if (envlock_ctx_new(&ctx) != 0)
		_exit(9);
	cJSON_free(cJSON_malloc((size_t)1 << 46));
	_exit(0);
}
#endif

static void oom_policy_is_one(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(in_child(oom_with_exiting_handler, err, sizeof(err)), 7);
	assert_string_equal(err, "handled\n");
	/* a handler that returns does not resume the caller */
	assert_int_equal(in_child(oom_with_returning_handler, err, sizeof(err)), 2);
	assert_string_equal(err, "returned\nenvlock: fatal: out of memory\n");
#if defined(__SANITIZE_ADDRESS__)
	skip(); /* skipped: ASan ends the 64 TiB request itself, before malloc can return NULL */
#else
	assert_int_equal(in_child(oom_inside_cjson, err, sizeof(err)), 2);
	assert_string_equal(err, "envlock: fatal: out of memory\n");
#endif
}

static void strvec_push_sort_detach(void **state)
{
	el_strvec sv = EL_STRVEC_INIT;
	char **v, buf[16];

	(void)state;
	el_strvec_push(&sv, "pear");
	el_strvec_push_owned(&sv, el_xstrdup("apple"));
	snprintf(buf, sizeof(buf), "fig");
	el_strvec_push(&sv, buf);
	buf[0] = 'x'; /* pushed as a copy */
	assert_int_equal(sv.n, 3);
	assert_null(sv.v[3]);
	el_strvec_sort(&sv);
	assert_string_equal(sv.v[0], "apple");
	assert_string_equal(sv.v[1], "fig");
	assert_string_equal(sv.v[2], "pear");
	for (int i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "n%03d", i);
		el_strvec_push(&sv, buf);
		assert_null(sv.v[sv.n]);
	}
	assert_int_equal(sv.n, 103);
	v = el_strvec_detach(&sv);
	assert_null(sv.v);
	assert_int_equal(sv.n, 0);
	assert_string_equal(v[102], "n099");
	assert_null(v[103]);
	el_strv_free(v);

	/* an empty vector detaches as an array holding only the NULL */
	v = el_strvec_detach(&sv);
	assert_non_null(v);
	assert_null(v[0]);
	el_strv_free(v);
	el_strv_free(NULL);

	/* has: an exact, bytewise match */
	el_strvec_push(&sv, "torch");
	el_strvec_push(&sv, "mmcv-full");
	assert_true(el_strvec_has(&sv, "mmcv-full"));
	assert_false(el_strvec_has(&sv, "mmcv"));
	assert_false(el_strvec_has(&sv, "Torch"));
	el_strvec_release(&sv);
	assert_false(el_strvec_has(&sv, "torch"));

	/* release empties it for reuse */
	el_strvec_push(&sv, "a");
	el_strvec_release(&sv);
	assert_null(sv.v);
	assert_int_equal(sv.n + sv.cap, 0);
	el_strvec_release(&sv);
	el_strvec_sort(&sv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grow_doubles_and_keeps_the_elements),
		cmocka_unit_test(grow_overflow_is_out_of_memory),
		cmocka_unit_test(oom_policy_is_one),
		cmocka_unit_test(strvec_push_sort_detach),
	};
	return cmocka_run_group_tests_name("vec", tests, NULL, NULL);
}
