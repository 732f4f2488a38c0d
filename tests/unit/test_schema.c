/*
 * The lockfile validator generated from the schema at build time
 * (tools/schema-gen.py) against tests/schema/schema.c's interpreter, the
 * reference: the same verdict and the same error line for the golden
 * locks and for thousands of mutations of them (every value made each
 * other type and, for strings, the near misses of every pattern the
 * schema has; every member deleted; an unexpected member, a secret-like
 * name and a duplicate item added). t0018's mutations and every lock
 * the CLI suites load are compared too, by envlock-crosscheck
 * (tests/schema/crosscheck.c, tests/cli/lib.sh).
 */
#include "unit.h"
#include "lock/schema.h"
#include "../schema/schema.h"

static const char *const goldens[] = {
	"broken.lock.json", "cuda92-cudnn7.lock.json", "mmpose-container.lock.json", "no-nvidia.lock.json",
	"ubuntu1604-mmdet.lock.json",
};

/* strings near every pattern, enum and length the lock schema has */
static const char *const strings[] = {
	"", "x", " ", "a b", "\xe2\x80\xae;$(x)", "\x80", "\xc3\xa9", "0", "7", "12", "1.2", "1.2.3", "1.2.3.4", ".1", "1.",
	"1..2", "1.x", "/", "/usr/local/cuda", "usr/lib", "dist-info", "egg-info", "egg-link", "requirement", "Dist-info",
	"sha256:e887099ea9eec085e6908d782981adae828114ab84e706ad5a21d8ded8717147",
	"sha256:E887099ea9eec085e6908d782981adae828114ab84e706ad5a21d8ded8717147",
	"sha256:e887099ea9eec085e6908d782981adae828114ab84e706ad5a21d8ded871714",
	"e887099ea9eec085e6908d782981adae828114ab84e706ad5a21d8ded8717147",
	"e887099ea9eec085e6908d782981adae828114ab84e706ad5a21d8ded87171470",
	"e887099ea9eec085e6908d782981adae828114ab84e706ad5a21d8ded871714g",
	"9b03acfb4d70500b99e306198f330922", "9b03acfb4d70500b99e306198f33092", "9b03acfb4d70500b99e306198f33092\xc3",
	"0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef0123456",
	"2026-12-01T10:00:00Z", "2026-12-01T10:00:00", "2026-12-01 10:00:00Z", "2026-12-01T10:00:00.123456789Z",
	"2026-12-01T10:00:00.12345678Z", "libcudart.so.11.0", "libcudart.so.", "libcudart.so.11.0x", "libcudart_so.11",
	"MY_TOKEN", "db_Password", "KEY", "keyboard", "CUDA_HOME", "PATH", "none", "cuda", "cpu", "x86_64",
};

static int compared, invalid;

/* Both validators on doc: the same verdict and the same words. */
static void both(const cJSON *doc, const char *what)
{
	char a[512], b[512];
	int ra = el_schema_check_lock(doc, a, sizeof(a));
	int rb = el_schema_check(el_schema_lock(), doc, b, sizeof(b));

	compared++;
	invalid += rb != 0;
	if (ra != rb || (rb != 0 && strcmp(a, b) != 0))
		fail_msg("%s: generated %d \"%s\", interpreter %d \"%s\"", what, ra, ra ? a : "", rb, rb ? b : "");
}

/* Every value of doc, depth first (the document itself too). */
static void collect(cJSON *x, cJSON ***all, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*all = realloc(*all, *cap * sizeof(**all));
		assert_non_null(*all);
	}
	(*all)[(*n)++] = x;
	for (cJSON *c = x->child; c && (cJSON_IsObject(x) || cJSON_IsArray(x)); c = c->next)
		collect(c, all, n, cap);
}

/* x made each other kind of value, in place, then put back. */
static void retype(cJSON *doc, cJSON *x, const char *what)
{
	const cJSON saved = *x;
	static char text[256];
	static const struct {
		int type;
		double d;
	} scalars[] = { { cJSON_Number, 17 }, { cJSON_Number, 1.5 }, { cJSON_Number, -1 }, { cJSON_Number, 0 },
			{ cJSON_Number, 1e300 }, { cJSON_Number, 3 }, { cJSON_Number, 1 }, { cJSON_True, 0 },
			{ cJSON_False, 0 }, { cJSON_NULL, 0 } };

	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		x->type = scalars[i].type;
		x->valuedouble = scalars[i].d;
		x->valueint = (int)scalars[i].d;
		x->child = NULL;
		both(doc, what);
		*x = saved;
	}
	x->child = NULL;
	x->type = cJSON_Object;
	both(doc, what);
	x->type = cJSON_Array;
	both(doc, what);
	*x = saved;
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		snprintf(text, sizeof(text), "%s", strings[i]);
		x->type = cJSON_String;
		x->valuestring = text;
		x->child = NULL;
		both(doc, what);
		*x = saved;
	}
	if (cJSON_IsString(x) && x->valuestring) {
		size_t len = strlen(saved.valuestring);

		x->valuestring = text;
		snprintf(text, sizeof(text), "%s ", saved.valuestring);
		both(doc, what);
		if (len && len < sizeof(text)) {
			snprintf(text, sizeof(text), "%.*s", (int)len - 1, saved.valuestring);
			both(doc, what);
			snprintf(text, sizeof(text), "G%s", saved.valuestring + 1);
			both(doc, what);
		}
		*x = saved;
	}
}

/* x's children linked in order, items[skip] left out (-1: none), as cJSON links them */
static void relink(cJSON *x, cJSON **items, int n, int skip)
{
	cJSON *prev = NULL;

	x->child = NULL;
	for (int i = 0; i < n; i++) {
		if (i == skip)
			continue;
		items[i]->prev = prev;
		items[i]->next = NULL;
		if (prev)
			prev->next = items[i];
		else
			x->child = items[i];
		prev = items[i];
	}
	if (x->child)
		x->child->prev = prev;
}

/* Each child of x left out in turn; an unexpected member, a secret-like one, a duplicate item added. */
static void reshape(cJSON *doc, cJSON *x, const char *what)
{
	cJSON *items[4096], extra = { 0 };
	int n = 0;

	if (!cJSON_IsObject(x) && !cJSON_IsArray(x))
		return;
	for (cJSON *c = x->child; c && n < 4096; c = c->next)
		items[n++] = c;
	if (n == 4096)
		return;
	for (int i = 0; i < n; i++) {
		relink(x, items, n, i);
		both(doc, what);
	}
	if (cJSON_IsObject(x)) {
		static const char *const names[] = { "zz_not_in_the_schema", "API_TOKEN", "a" };

		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			extra = (cJSON){ .type = cJSON_Number, .valuedouble = 1, .valueint = 1, .string = (char *)names[k] };
			items[n] = &extra;
			relink(x, items, n + 1, -1);
			both(doc, what);
		}
	} else if (n) {
		items[n] = cJSON_Duplicate(items[0], 1);
		relink(x, items, n + 1, -1);
		both(doc, what);
		cJSON_Delete(items[n]);
	}
	relink(x, items, n, -1);
}

static cJSON *read_golden(const char *name)
{
	char path[4096];
	FILE *f;
	static char buf[1 << 20];
	size_t n;
	cJSON *doc;

	snprintf(path, sizeof(path), "tests/golden/%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	doc = cJSON_Parse(buf);
	assert_non_null(doc);
	return doc;
}

static void goldens_agree(void **state)
{
	(void)state;
	for (size_t g = 0; g < sizeof(goldens) / sizeof(goldens[0]); g++) {
		cJSON *doc = read_golden(goldens[g]);

		both(doc, goldens[g]);
		cJSON_Delete(doc);
	}
}

static void mutations_agree(void **state)
{
	(void)state;
	compared = invalid = 0;
	for (size_t g = 0; g < sizeof(goldens) / sizeof(goldens[0]); g++) {
		cJSON *doc = read_golden(goldens[g]);
		cJSON **all = NULL;
		size_t n = 0, cap = 0;
		char what[256];

		collect(doc, &all, &n, &cap);
		for (size_t i = 0; i < n; i++) {
			snprintf(what, sizeof(what), "%s, value %zu (%s)", goldens[g], i, all[i]->string ? all[i]->string : "-");
			retype(doc, all[i], what);
			reshape(doc, all[i], what);
		}
		free(all);
		cJSON_Delete(doc);
	}
	/* both verdicts, many times over */
	assert_true(invalid > 1000);
	assert_true(compared - invalid > 1000);
	print_message("compared %d documents, %d invalid\n", compared, invalid);
}

/* What unevaluatedProperties and the nesting limit say, where a golden lock has nothing to mutate. */
static void hand_made_agree(void **state)
{
	static const char *const docs[] = {
		"{}", "[]", "1", "null", "{\"envlock\": 1}", "{\"envlock\": 2}", "{\"envlock\": \"1\"}",
		"{\"envlock\": 1, \"frameworks\": {\"torch\": {\"present\": true, \"version\": \"1.10.0\", \"x\": 1}}}",
		"{\"envlock\": 1, \"frameworks\": {\"mmcv\": {\"present\": true, \"ops\": true, \"package\": \"mmcv-full\"}}}",
		"{\"envlock\": 1, \"frameworks\": {\"mmcv\": {\"present\": false, \"extra\": [1, 2]}}}",
		"{\"envlock\": 1, \"env\": {\"variables\": {\"A\": \"1\", \"a_secret\": \"2\"}}}",
		"{\"envlock\": 1, \"verify\": {\"envlock_verify\": 1, \"exit_status\": 3}}",
		"{\"envlock\": 1, \"verify\": {\"envlock_verify\": 1.0000000000000002, \"exit_status\": 2}}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		cJSON *doc = cJSON_Parse(docs[i]);

		assert_non_null(doc);
		both(doc, docs[i]);
		cJSON_Delete(doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(goldens_agree),
		cmocka_unit_test(hand_made_agree),
		cmocka_unit_test(mutations_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
