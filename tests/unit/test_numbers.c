/*
 * Numbers in locks and in what people read are exact: a float by its
 * shortest text that reads back as the same double (0.005, not
 * 0.0050000000000000001), an integer past 2^53 by its digits (a seed of
 * 2**60 + 1 is not 2**60), kept through loading and writing, and the
 * lock's id the same from its text and from its document.
 */
#include <float.h>
#include <limits.h>
#include <math.h>

#include "unit.h"
#include "util/text.h"

static char *fmt(double d)
{
	static char buf[EL_FMT_DOUBLE_SIZE];
	size_t n = el_fmt_double(buf, d);

	assert_int_equal(n, strlen(buf));
	return buf;
}

static void fmt_double_is_shortest(void **state)
{
	(void)state;
	assert_string_equal(fmt(0.005), "0.005");
	assert_string_equal(fmt(0.02), "0.02");
	assert_string_equal(fmt(1e-05), "1e-05");
	assert_string_equal(fmt(0.0005), "0.0005");
	assert_string_equal(fmt(2.5e-05), "2.5e-05");
	assert_string_equal(fmt(0.1 + 0.2), "0.30000000000000004");
	assert_string_equal(fmt(123.675), "123.675");
	assert_string_equal(fmt(-1.5), "-1.5");
	assert_string_equal(fmt(1.0 / 3), "0.3333333333333333");
	assert_string_equal(fmt(DBL_MAX), "1.7976931348623157e+308");
	assert_string_equal(fmt(5e-324), "4.94065645841247e-324");
	/* whole numbers below 2^53 in plain digits; past it, the shortest text */
	assert_string_equal(fmt(0), "0");
	assert_string_equal(fmt(-0.0), "0");
	assert_string_equal(fmt(32), "32");
	assert_string_equal(fmt(-32), "-32");
	assert_string_equal(fmt(1e15), "1000000000000000");
	assert_string_equal(fmt(9007199254740991.0), "9007199254740991");
	assert_string_equal(fmt(-9007199254740991.0), "-9007199254740991");
	assert_string_equal(fmt(9007199254740992.0), "9007199254740992");
	assert_string_equal(fmt(1152921504606846976.0), "1.152921504606847e+18");
	assert_string_equal(fmt(18446744073709551616.0), "1.8446744073709552e+19");
	assert_string_equal(fmt(1e300), "1e+300");
	assert_string_equal(fmt(INFINITY), "inf");
	assert_string_equal(fmt(-INFINITY), "-inf");
	assert_string_equal(fmt(NAN), "nan");
}

/* every double reads back as itself, in at most 17 significant digits */
static void fmt_double_round_trips(void **state)
{
	unsigned long long x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		char buf[EL_FMT_DOUBLE_SIZE];
		double d;

		/* xorshift over the bit patterns: every exponent, denormals included */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&d, &x, sizeof(d));
		if (!isfinite(d))
			continue;
		el_fmt_double(buf, d);
		if (strtod(buf, NULL) != d)
			fail_msg("%s does not read back as %a", buf, d);
	}
}

/* the lock writer writes the same text as el_fmt_double */
static void writer_uses_the_same_text(void **state)
{
	const double values[] = { 0.005, 1e-05, 0.1 + 0.2, 32, -0.0, 9007199254740992.0, 1e300, 5e-324 };
	el_buf b = EL_BUF_INIT(1 << 20);

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		cJSON *n = cJSON_CreateNumber(values[i]);
		char buf[EL_FMT_DOUBLE_SIZE];

		el_buf_reset(&b);
		assert_int_equal(el_json_write(n, &b, 0), 0);
		el_fmt_double(buf, values[i]);
		assert_string_equal(el_buf_cstr(&b), buf);
		cJSON_Delete(n);
	}
	el_buf_release(&b);
}

static void int_text_is_json_within_64_bits(void **state)
{
	const char *yes[] = { "0", "-1", "9007199254740991", "-9223372036854775808", "9223372036854775807",
			      "18446744073709551615" };
	const char *no[] = { "", "-", "-0", "01", "-01", "+1", "1.0", "1e3", "1 ", "18446744073709551616",
			     "99999999999999999999", "-9223372036854775809", "123456789012345678901", "0x10" };
	bool big;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!el_json_int_text(yes[i], strlen(yes[i]), NULL))
			fail_msg("%s refused", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (el_json_int_text(no[i], strlen(no[i]), NULL))
			fail_msg("%s taken", no[i]);
	assert_true(el_json_int_text("9007199254740991", 16, &big));
	assert_false(big);
	assert_true(el_json_int_text("9007199254740992", 16, &big));
	assert_true(big);
	assert_true(el_json_int_text("-9007199254740992", 17, &big));
	assert_true(big);
	/* only the n bytes count */
	assert_true(el_json_int_text("12,", 2, &big));
	assert_false(big);
}

static void new_int_is_raw_past_2_53(void **state)
{
	el_buf b = EL_BUF_INIT(1 << 20);
	cJSON *doc = el_jnew_obj();

	(void)state;
	el_jset(doc, "a", el_jnew_int(9007199254740991LL));
	el_jset(doc, "b", el_jnew_int(9007199254740992LL));
	el_jset(doc, "c", el_jnew_int((1LL << 60) + 1));
	el_jset_int(doc, "d", LLONG_MIN);
	el_jset_int(doc, "e", LLONG_MAX);
	el_jset_int(doc, "f", -9007199254740991LL);
	assert_true(cJSON_IsNumber(el_jget(doc, "a")));
	assert_true(cJSON_IsNumber(el_jget(doc, "f")));
	assert_true(cJSON_IsRaw(el_jget(doc, "b")));
	assert_string_equal(el_jget(doc, "c")->valuestring, "1152921504606846977");
	/* the double is kept for readers that look at it */
	assert_true(el_jget(doc, "c")->valuedouble == 1152921504606846976.0);
	assert_int_equal(el_jget_int(doc, "c", 0), (1LL << 60) + 1);
	assert_int_equal(el_jget_int(doc, "d", 0), LLONG_MIN);
	assert_int_equal(el_jget_int(doc, "e", 0), LLONG_MAX);
	assert_int_equal(el_json_write(doc, &b, 0), 0);
	assert_string_equal(el_buf_cstr(&b), "{\"a\":9007199254740991,\"b\":9007199254740992,\"c\":1152921504606846977,"
					     "\"d\":-9223372036854775808,\"e\":9223372036854775807,\"f\":-9007199254740991}");
	el_buf_release(&b);
	cJSON_Delete(doc);
}

/* a Raw node that is not an integer (no envlock code makes one) is still null */
static void other_raw_is_null(void **state)
{
	el_buf b = EL_BUF_INIT(1 << 20);
	cJSON *a = cJSON_CreateArray();

	(void)state;
	cJSON_AddItemToArray(a, cJSON_CreateRaw("{\"x\":1}"));
	cJSON_AddItemToArray(a, cJSON_CreateRaw("1.5"));
	cJSON_AddItemToArray(a, cJSON_CreateRaw("18446744073709551616"));
	cJSON_AddItemToArray(a, cJSON_CreateRaw(""));
	cJSON_AddItemToArray(a, cJSON_CreateRaw("18446744073709551615"));
	assert_int_equal(el_json_write(a, &b, 0), 0);
	assert_string_equal(el_buf_cstr(&b), "[null,null,null,null,18446744073709551615]");
	/* past long long: not a long long */
	assert_int_equal(el_jint(cJSON_GetArrayItem(a, 4), -7), -7);
	assert_int_equal(el_jint(cJSON_GetArrayItem(a, 0), -7), -7);
	el_buf_release(&b);
	cJSON_Delete(a);
}

/* text -> parse -> exact ints -> write: the numbers as the text has them */
static char *rewrite(const char *text)
{
	el_buf b = EL_BUF_INIT(1 << 20);
	cJSON *doc = cJSON_Parse(text);
	char *s;

	assert_non_null(doc);
	el_json_exact_ints(doc, text, strlen(text));
	assert_int_equal(el_json_write(doc, &b, 0), 0);
	s = strdup(el_buf_cstr(&b));
	el_buf_release(&b);
	cJSON_Delete(doc);
	return s;
}

static void walk_keeps_big_integers(void **state)
{
	static const char text[] =
		"{\"a\": [1, 9007199254740993, -9223372036854775808, 18446744073709551615],"
		" \"b\\\"1234567890123456789\": \"12345678901234567890 \\\" 9007199254740993\","
		" \"c\": {\"d\": 1.152921504606847e+18, \"e\": 18446744073709551616, \"f\": 0.005,"
		" \"g\": [[[1152921504606846977]]], \"h\": -9007199254740993, \"i\": 1e-05},"
		" \"j\": 9007199254740991, \"k\": \"\\\\\", \"l\": 1152921504606846977, \"m\": [true, null, -1]}";
	cJSON *doc = cJSON_Parse(text), *a;
	char *out;

	(void)state;
	assert_non_null(doc);
	el_json_exact_ints(doc, text, sizeof(text) - 1);
	a = el_jget(doc, "a");
	assert_true(cJSON_IsNumber(cJSON_GetArrayItem(a, 0)));
	assert_true(cJSON_IsRaw(cJSON_GetArrayItem(a, 1)));
	assert_string_equal(cJSON_GetArrayItem(a, 1)->valuestring, "9007199254740993");
	assert_int_equal(el_jint(cJSON_GetArrayItem(a, 1), 0), 9007199254740993LL);
	assert_int_equal(el_jint(cJSON_GetArrayItem(a, 2), 0), LLONG_MIN);
	assert_string_equal(cJSON_GetArrayItem(a, 3)->valuestring, "18446744073709551615");
	/* strings keep their digits as strings */
	assert_string_equal(el_jget_str(doc, "b\"1234567890123456789"), "12345678901234567890 \" 9007199254740993");
	/* the old writer's form, a fraction and a number past 64 bits stay doubles */
	assert_true(cJSON_IsNumber(el_jget(el_jget(doc, "c"), "d")));
	assert_true(cJSON_IsNumber(el_jget(el_jget(doc, "c"), "e")));
	assert_true(cJSON_IsRaw(el_jget(el_jget(doc, "c"), "h")));
	assert_true(cJSON_IsNumber(el_jget(doc, "j")));
	assert_int_equal(el_jget_int(doc, "l", 0), (1LL << 60) + 1);
	cJSON_Delete(doc);

	out = rewrite(text);
	assert_string_equal(out, "{\"a\":[1,9007199254740993,-9223372036854775808,18446744073709551615],"
				 "\"b\\\"1234567890123456789\":\"12345678901234567890 \\\" 9007199254740993\","
				 "\"c\":{\"d\":1.152921504606847e+18,\"e\":1.8446744073709552e+19,\"f\":0.005,"
				 "\"g\":[[[1152921504606846977]]],\"h\":-9007199254740993,\"i\":1e-05},"
				 "\"j\":9007199254740991,\"k\":\"\\\\\",\"l\":1152921504606846977,\"m\":[true,null,-1]}");
	free(out);
	/* nothing to do, and a document with no numbers */
	out = rewrite("[\"9007199254740993\", {}]");
	assert_string_equal(out, "[\"9007199254740993\",{}]");
	free(out);
	out = rewrite("1152921504606846977");
	assert_string_equal(out, "1152921504606846977");
	free(out);
}

/* a document that is not the text's: nothing is changed that the text does not hold */
static void walk_checks_the_document_is_the_texts(void **state)
{
	static const char text[] = "[1152921504606846977]";
	cJSON *doc = cJSON_Parse("[7, 1152921504606846977]");
	cJSON *other = cJSON_Parse("[1]");

	(void)state;
	el_json_exact_ints(doc, text, sizeof(text) - 1);
	assert_true(cJSON_IsNumber(cJSON_GetArrayItem(doc, 0)));
	assert_true(cJSON_IsNumber(cJSON_GetArrayItem(doc, 1)));
	el_json_exact_ints(other, text, sizeof(text) - 1);
	assert_true(cJSON_IsNumber(cJSON_GetArrayItem(other, 0)));
	el_json_exact_ints(NULL, text, sizeof(text) - 1);
	cJSON_Delete(doc);
	cJSON_Delete(other);
}

/*
 * many numbers, some of them big, at every offset of a 16-byte block,
 * among strings of long digit runs (a digest's, and ones after a space
 * or a colon, where a number could start): each found in its place
 */
static void walk_finds_many(void **state)
{
	el_buf t = EL_BUF_INIT(1 << 24), w = EL_BUF_INIT(1 << 24);
	cJSON *doc;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		el_buf_reset(&t);
		el_buf_addc(&t, '[');
		for (int i = 0; i < 5000; i++) {
			if (i && pass)
				el_buf_addc(&t, ',');
			else if (i)
				el_buf_addf(&t, ",\n%*s", i % 17, "");
			if (i % 7 == 3 && pass)
				el_buf_addf(&t, "{\"n\":%lld,\"s\":\"%d\\\\\"}", (1LL << 62) + i, i);
			else if (i % 7 == 3)
				el_buf_addf(&t, "{\"s\": \"%d\\\\\", \"n\": %lld}", i, (1LL << 62) + i);
			else if (i % 5 == 1)
				el_buf_addf(&t, "-%lld", (1LL << 53) + i);
			else if (i % 11 == 2)
				el_buf_addf(&t, "\"a%016d%d, :%016d [%016d\"", i, i, i, i);
			else if (i % 13 == 4)
				el_buf_addf(&t, "%lld", 1000000000000000LL + i); /* 16 digits, below 2^53 */
			else
				el_buf_addf(&t, "%d", i);
		}
		el_buf_addc(&t, ']');
		if (pass == 0) {
			doc = cJSON_ParseWithLength(t.data, t.len);
			assert_non_null(doc);
			el_json_exact_ints(doc, t.data, t.len);
			assert_int_equal(el_json_write(doc, &w, 0), 0);
			cJSON_Delete(doc);
		}
	}
	assert_string_equal(el_buf_cstr(&w), el_buf_cstr(&t));
	el_buf_release(&t);
	el_buf_release(&w);
}

/* a big integer at each offset of a 16-byte block, after each byte a number can follow, and at the text's ends */
static void walk_at_every_offset(void **state)
{
	static const char *const numbers[] = { "9007199254740993", "-9007199254740993", "18446744073709551615",
					       "-9223372036854775808" };
	static const char *const before[] = { "[", "[ ", "[\n", "[\t", "[\r\n", "[\v", "{\"k\":", "{\"k\": ", "[1,", "[\"a\",\n" };

	(void)state;
	for (int pad = 0; pad < 40; pad++)
		for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
			char text[160], want[160], *out;

			/* alone: the number is the whole text, its last digit the text's last byte */
			snprintf(text, sizeof(text), "%*s%s", pad, "", numbers[i]);
			out = rewrite(text);
			assert_string_equal(out, numbers[i]);
			free(out);
			for (size_t j = 0; j < sizeof(before) / sizeof(before[0]); j++) {
				bool obj = before[j][0] == '{';
				cJSON *doc;

				snprintf(text, sizeof(text), "%*s%s%s%*s%c", pad, "", before[j], numbers[i], pad % 3, "",
					 obj ? '}' : ']');
				doc = cJSON_Parse(text);
				assert_non_null(doc);
				cJSON_Delete(doc);
				out = rewrite(text);
				snprintf(want, sizeof(want), "%s%s%s%c", obj ? "{\"k\":" : "[",
					 strstr(before[j], "1,") ? "1," : strstr(before[j], "\"a\"") ? "\"a\"," : "",
					 numbers[i], obj ? '}' : ']');
				if (strcmp(out, want) != 0)
					fail_msg("%s gave %s", text, out);
				free(out);
			}
		}
}

/* write the lock text to dir/name (malloc'd path) */
static char *put_file(const char *dir, const char *name, const char *text, size_t n)
{
	char *path = malloc(strlen(dir) + strlen(name) + 2);
	FILE *f;

	snprintf(path, strlen(dir) + strlen(name) + 2, "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return path;
}

/*
 * save -> load -> id: a lock with integers past 2^53 written by the
 * writer, loaded back, has the id it was written with, from its text and
 * from its document, and writes the same text again.
 */
static void lock_id_survives_a_round_trip(void **state)
{
	char *dir = unit_tmpdir(), *path;
	el_buf first = EL_BUF_INIT((size_t)1 << 30), second = EL_BUF_INIT((size_t)1 << 30);
	envlock_lock written = { 0 }, *loaded;
	envlock_ctx *ctx;
	cJSON *v;
	char id[sizeof(written.id)];

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	written.doc = el_jnew_obj();
	el_jset_int(written.doc, "envlock", 1);
	v = el_jset_obj(el_jset_obj(written.doc, "configs"), "value");
	el_jset_int(v, "seed", (1LL << 60) + 1);
	el_jset_int(v, "max", LLONG_MAX);
	el_jset_int(v, "min", LLONG_MIN);
	el_jset(v, "lr", cJSON_CreateNumber(0.005));
	el_jset(v, "eps", cJSON_CreateNumber(1e-05));
	el_jset(v, "huge", cJSON_CreateNumber(18446744073709551616.0));
	el_lock_touch(&written);
	assert_int_equal(el_lock_write_settled(&written, &first), 0);
	memcpy(id, written.id, sizeof(id));
	assert_non_null(strstr(first.data, "\"seed\": 1152921504606846977\n"));
	assert_non_null(strstr(first.data, "\"lr\": 0.005,"));
	assert_non_null(strstr(first.data, "\"eps\": 1e-05,"));
	assert_non_null(strstr(first.data, "\"huge\": 1.8446744073709552e+19,"));
	/* the id the writer settled is the document's */
	el_lock_compute_id(&written);
	assert_string_equal(written.id, id);

	path = put_file(dir, "a.lock.json", first.data, first.len);
	assert_int_equal(el_lock_load(&loaded, ctx, path, false), 0);
	assert_string_equal(envlock_lock_id(loaded), id);
	assert_string_equal(el_jget_str(loaded->doc, "id"), id);
	el_lock_compute_id(loaded);
	assert_string_equal(loaded->id, id);
	v = el_jget(el_jget(loaded->doc, "configs"), "value");
	assert_int_equal(el_jget_int(v, "seed", 0), (1LL << 60) + 1);
	assert_int_equal(el_jget_int(v, "max", 0), LLONG_MAX);
	assert_int_equal(el_jget_int(v, "min", 0), LLONG_MIN);
	assert_int_equal(el_json_write(loaded->doc, &second, 2), 0);
	assert_string_equal(second.data, first.data);
	envlock_lock_free(loaded);
	free(path);

	cJSON_Delete(written.doc);
	el_buf_release(&first);
	el_buf_release(&second);
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

/*
 * A lock an earlier envlock wrote: it wrote an integer past 2^53 as the
 * double's shortest text, which is no integer literal, so it loads as a
 * double, writes back the same, and keeps its id.
 */
static void old_form_keeps_its_id(void **state)
{
	char *dir = unit_tmpdir(), *path;
	el_buf b = EL_BUF_INIT((size_t)1 << 30), again = EL_BUF_INIT((size_t)1 << 30);
	envlock_lock old = { 0 }, *loaded;
	envlock_ctx *ctx;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	old.doc = cJSON_Parse("{\"envlock\": 1, \"x\": {\"seed\": 1.152921504606847e+18, \"lr\": 0.005,"
			      " \"exact\": 9007199254740992, \"n\": 12345678901234568}}");
	assert_non_null(old.doc);
	el_lock_touch(&old);
	assert_int_equal(el_lock_write_settled(&old, &b), 0);
	assert_non_null(strstr(b.data, "\"seed\": 1.152921504606847e+18"));
	/* %.16g and %.17g of a whole double below 10^17 are its digits: loaded as Raw, the same digits */
	assert_non_null(strstr(b.data, "\"exact\": 9007199254740992,"));
	assert_non_null(strstr(b.data, "\"n\": 12345678901234568,"));
	path = put_file(dir, "old.lock.json", b.data, b.len);
	assert_int_equal(el_lock_load(&loaded, ctx, path, false), 0);
	assert_string_equal(envlock_lock_id(loaded), old.id);
	el_lock_compute_id(loaded);
	assert_string_equal(loaded->id, old.id);
	assert_true(cJSON_IsNumber(el_jget(el_jget(loaded->doc, "x"), "seed")));
	assert_true(cJSON_IsRaw(el_jget(el_jget(loaded->doc, "x"), "n")));
	assert_int_equal(el_json_write(loaded->doc, &again, 2), 0);
	assert_string_equal(again.data, b.data);
	envlock_lock_free(loaded);
	free(path);
	cJSON_Delete(old.doc);
	el_buf_release(&b);
	el_buf_release(&again);
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fmt_double_is_shortest),
		cmocka_unit_test(fmt_double_round_trips),
		cmocka_unit_test(writer_uses_the_same_text),
		cmocka_unit_test(int_text_is_json_within_64_bits),
		cmocka_unit_test(new_int_is_raw_past_2_53),
		cmocka_unit_test(other_raw_is_null),
		cmocka_unit_test(walk_keeps_big_integers),
		cmocka_unit_test(walk_checks_the_document_is_the_texts),
		cmocka_unit_test(walk_finds_many),
		cmocka_unit_test(walk_at_every_offset),
		cmocka_unit_test(lock_id_survives_a_round_trip),
		cmocka_unit_test(old_form_keeps_its_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
