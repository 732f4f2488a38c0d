/*
 * Unit tests for lib/show: the grouping of GPU models and the escaping of
 * lock text in `envlock show`, on small hand-made lockfiles.
 */
#include "unit.h"

/* Load the lockfile text json and return what envlock show prints for it (malloc'd). */
static char *show_json(const char *json)
{
	char *dir = unit_tmpdir(), path[4096], *text = NULL;
	envlock_ctx *ctx;
	envlock_lock *lock = NULL;
	size_t len = 0;
	FILE *f;

	unit_write(dir, "lock.json", json, -1);
	snprintf(path, sizeof(path), "%s/lock.json", dir);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (el_lock_load(&lock, ctx, path, false) != 0)
		fail_msg("load: %s", envlock_error_last(ctx));
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(envlock_show_print(lock, ctx, f), 0);
	assert_int_equal(fclose(f), 0);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
	return text;
}

/* The lines of text from the one starting with "GPUs" up to the next labelled row, as one string. */
static char *gpu_lines(const char *text)
{
	const char *start = strstr(text, "\nGPUs "), *end;

	assert_non_null(start);
	start++;
	for (end = strchr(start, '\n'); end && end[1] == ' '; end = strchr(end + 1, '\n'))
		;
	assert_non_null(end);
	return strndup(start, (size_t)(end - start + 1));
}

static void gpus_grouped_in_order_of_first_appearance(void **state)
{
	char *text = show_json("{\"envlock\": 1, \"gpu\": {\"devices\": ["
			       "{\"name\": \"Tesla V100\"}, {\"name\": \"A100\"}, {\"name\": \"Tesla V100\"},"
			       "{}, {\"name\": \"A100\"}, {\"name\": \"Tesla V100\"}, {\"name\": 7},"
			       "{\"name\": \"Tesla V100 \"}]}}");
	char *gpus = gpu_lines(text);

	(void)state;
	assert_string_equal(gpus,
			    "GPUs        3 x Tesla V100\n"
			    "            2 x A100\n"
			    "            2 x unknown GPU\n"
			    "            1 x Tesla V100 \n");
	free(gpus);
	free(text);
}

static void lock_text_never_reaches_the_terminal_raw(void **state)
{
	char *text = show_json("{\"envlock\": 1, \"id\": \"sha256:\\u001b[2J\","
			       " \"host\": {\"hostname\": \"node\\u0007\"},"
			       " \"system\": {\"glibc\": {\"version\": \"\\u001b]0;owned\\u0007\"},"
			       "  \"os\": {\"pretty_name\": \"Ubuntu \\u202egnp.exe\"}, \"arch\": \"x86_64\\u009b\"},"
			       " \"gpu\": {\"devices\": [{\"name\": \"V100\\u001b[31m\"}, {\"name\": \"V100\\u001b[31m\"}]},"
			       " \"frameworks\": {\"mmcv\": {\"version\": \"1.7\\u2066\", \"package\": \"mmcv\\u007f\"}},"
			       " \"warnings\": [\"bad \\u0000x\", \"tab\\there\"]}");

	(void)state;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			fail_msg("raw control byte 0x%02x in:\n%s", *p, text);
	assert_null(strstr(text, "\xC2\x9B"));
	assert_null(strstr(text, "\xE2\x80\xAE"));
	assert_null(strstr(text, "\xE2\x81\xA6"));
	assert_non_null(strstr(text, "\nglibc       \\x1b]0;owned\\x07\n"));
	assert_non_null(strstr(text, "the file says sha256:\\x1b[2J: it was edited"));
	assert_non_null(strstr(text, " on node\\x07\n"));
	assert_non_null(strstr(text, "\nOS          Ubuntu \\u202egnp.exe (x86_64\\xc2\\x9b, kernel unknown)\n"));
	assert_non_null(strstr(text, "\nGPUs        2 x V100\\x1b[31m\n"));
	/* no "ops" recorded: nothing said of them */
	assert_non_null(strstr(text, "\nmmcv\\x7f    1.7\\u2066\n"));
	/* cJSON ends a string at an escaped NUL */
	assert_non_null(strstr(text, "\n  - bad \n"));
	assert_non_null(strstr(text, "\n  - tab\\x09here\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpus_grouped_in_order_of_first_appearance),
		cmocka_unit_test(lock_text_never_reaches_the_terminal_raw),
	};
	return cmocka_run_group_tests_name("show", tests, NULL, NULL);
}
