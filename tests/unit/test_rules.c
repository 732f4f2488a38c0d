/*
 * Unit tests for the rules engine: version comparison on the real forms,
 * rules-file validation, and each rule kind on small locks with small
 * tables made here (the shipped facts are tested by tests/cli/t0009-check.sh).
 */
#include "unit.h"

#include "rules/rules.h"
#include "util/version.h"

static void version_order(void **state)
{
	static const char *const ascending[] = {
		"9.2", "10.0.130", "10.2", "10.2.89", "10.10", "11.0",
		"2.0.0.dev1", "2.0.0a1", "2.0.0b2", "2.0.0rc4", "2.0.0", "2.0.0+cu118", "2.0.0.post1", "2.0.1",
		NULL
	};
	(void)state;
	/* pairwise within each run of comparable forms */
	for (int i = 0; ascending[i + 1]; i++) {
		if (i == 5)
			continue; /* "11.0" vs "2.0.0.dev1": different families, not a claim */
		assert_true(envlock_version_cmp(ascending[i], ascending[i + 1]) < 0);
		assert_true(envlock_version_cmp(ascending[i + 1], ascending[i]) > 0);
	}
	assert_int_equal(envlock_version_cmp("418.56", "418.56.0"), 0);
	assert_true(envlock_version_cmp("390.144", "440.33") < 0);
	assert_true(envlock_version_cmp("450.142.00", "450.80.02") > 0);
	assert_true(envlock_version_cmp("1.7.5", "1.7.0") > 0);
	assert_true(envlock_version_cmp("1.10.0+cu102", "1.9.1") > 0);
	assert_int_equal(envlock_version_cmp("1.10.0+cu102", "1.10.0+cu102"), 0);
}

static void version_helpers(void **state)
{
	char *s;

	(void)state;
	assert_int_equal(el_version_major("10.2.89"), 10);
	assert_int_equal(el_version_major("none"), -1);
	s = el_version_local_cuda("1.10.0+cu102");
	assert_string_equal(s, "10.2");
	free(s);
	s = el_version_local_cuda("1.4.0+cu92");
	assert_string_equal(s, "9.2");
	free(s);
	s = el_version_local_cuda("2.1.2+cu121");
	assert_string_equal(s, "12.1");
	free(s);
	assert_null(el_version_local_cuda("2.1.0+cpu"));
	assert_null(el_version_local_cuda("2.1.0"));
	s = el_conda_build_field("py3.7_cuda10.2.89_cudnn7.6.5_0", "cuda");
	assert_string_equal(s, "10.2.89");
	free(s);
	s = el_conda_build_field("py3.7_cuda10.2.89_cudnn7.6.5_0", "cudnn");
	assert_string_equal(s, "7.6.5");
	free(s);
	assert_null(el_conda_build_field("py37_0", "cuda"));
	assert_true(el_version_in_release("10.2.89", "10.2"));
	assert_false(el_version_in_release("10.20.1", "10.2"));
	assert_true(el_version_in_release("11.4", "11.x"));
	assert_false(el_version_in_release("12.1", "11.x"));
	s = el_version_prefix("10.2.89", 2);
	assert_string_equal(s, "10.2");
	free(s);
}

/* A rules file with one rule of kind, its table rows as JSON text. */
static char *rules_file(const char *dir, const char *rule_json, const char *table_rows)
{
	char *path = malloc(4200), text[8192];

	snprintf(text, sizeof(text),
		 "{\"envlock_rules\": 1, \"rules\": [%s], \"tables\": {\"t\": {\"source\": \"the test\", \"rows\": [%s]}}}",
		 rule_json, table_rows);
	unit_write(dir, "rules.json", text, -1);
	snprintf(path, 4200, "%s/rules.json", dir);
	return path;
}

/* Run the rules on a lock made from JSON text; returns the findings. */
static envlock_findings *check_json(const char *dir, const char *rules_path, const char *lock_json)
{
	envlock_ctx *ctx;
	envlock_rules *rules = NULL;
	envlock_lock *lock = NULL;
	envlock_findings *f = NULL;
	char path[4200];

	snprintf(path, sizeof(path), "%s/lock.json", dir);
	unit_write(dir, "lock.json", lock_json, -1);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_rules_load(&rules, ctx, rules_path), 0);
	assert_int_equal(el_lock_load(&lock, ctx, path, false), 0);
	assert_int_equal(envlock_check(&f, ctx, rules, lock), 0);
	envlock_lock_free(lock);
	envlock_rules_free(rules);
	envlock_ctx_free(ctx);
	return f;
}

/* The rules on the lock text give one finding, with this message. */
static void expect_one(const char *dir, const char *rules, const char *text, const char *message)
{
	envlock_findings *f = check_json(dir, rules, text);

	assert_int_equal(envlock_findings_count(f), 1);
	assert_string_equal(envlock_findings_get(f, 0)->message, message);
	envlock_findings_free(f);
}

static void driver_rules(void **state)
{
	char *dir = unit_tmpdir(), *rules;
	envlock_findings *f;
	const envlock_finding *x;
	const char *rule = "{\"id\": \"old-driver\", \"kind\": \"driver_min_for_cuda\", \"table\": \"t\", "
			   "\"section\": \"gpu\", \"severity\": \"breaking\", \"checks\": \"c\", "
			   "\"message\": \"CUDA {cuda} needs {min}, have {driver}\", \"fix\": \"install {min}\"},"
			   "{\"id\": \"compat\", \"kind\": \"driver_minor_compat\", \"table\": \"t\", "
			   "\"section\": \"gpu\", \"severity\": \"risky\", \"checks\": \"c\", \"message\": \"compat {compat}\"}";
	const char *rows = "{\"cuda\": \"10.2\", \"min_driver\": \"440.33\"},"
			   "{\"cuda\": \"11.8\", \"min_driver\": \"520.61.05\", \"minor_compat_driver\": \"450.80.02\", \"source\": \"row source\"}";

	(void)state;
	rules = rules_file(dir, rule, rows);
	f = check_json(dir, rules, "{\"envlock\": 1, \"gpu\": {\"driver\": {\"status\": \"present\", \"version\": \"390.144\"}},"
			   " \"cuda\": {\"toolkits\": [{\"home\": \"/usr/local/cuda-10.2\", \"version\": \"10.2.89\"}]}}");
	assert_int_equal(envlock_findings_count(f), 1);
	x = envlock_findings_get(f, 0);
	assert_string_equal(x->rule, "old-driver");
	assert_int_equal(x->severity, ENVLOCK_SEV_BREAKING);
	assert_string_equal(x->subject, "driver 390.144 / CUDA 10.2.89");
	assert_string_equal(x->message, "CUDA 10.2.89 needs 440.33, have 390.144");
	assert_string_equal(x->fix, "install 440.33");
	assert_string_equal(x->source, "the test");
	envlock_findings_free(f);

	/* 11.8 on 470: minor version compatibility, risky, with the row's own source */
	f = check_json(dir, rules, "{\"envlock\": 1, \"gpu\": {\"driver\": {\"status\": \"present\", \"version\": \"470.57.02\"}},"
			   " \"cuda\": {\"toolkits\": [{\"home\": \"/x\", \"version\": \"11.8.89\"}]}}");
	assert_int_equal(envlock_findings_count(f), 1);
	x = envlock_findings_get(f, 0);
	assert_string_equal(x->rule, "compat");
	assert_string_equal(x->message, "compat 450.80.02");
	assert_string_equal(x->source, "row source");
	envlock_findings_free(f);

	/* new enough: nothing; no driver: nothing */
	f = check_json(dir, rules, "{\"envlock\": 1, \"gpu\": {\"driver\": {\"status\": \"present\", \"version\": \"440.33\"}},"
			   " \"cuda\": {\"toolkits\": [{\"home\": \"/x\", \"version\": \"10.2.89\"}]}}");
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	f = check_json(dir, rules, "{\"envlock\": 1, \"gpu\": {\"driver\": {\"status\": \"absent\"}},"
			   " \"cuda\": {\"toolkits\": [{\"home\": \"/x\", \"version\": \"10.2.89\"}]}}");
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	free(rules);
	unit_rmtree(dir);
}

static void mmcv_and_torch_rules(void **state)
{
	char *dir = unit_tmpdir(), *rules;
	envlock_findings *f;
	const char *rule = "{\"id\": \"mmcv-range\", \"kind\": \"mmcv_range\", \"framework\": \"mmdet\", \"table\": \"t\", "
			   "\"section\": \"frameworks\", \"severity\": \"breaking\", \"checks\": \"c\", "
			   "\"message\": \"{min} <= {mmcv} {bound} {max}\"},"
			   "{\"id\": \"cpu\", \"kind\": \"torch_cpu_on_gpu\", \"section\": \"frameworks\", \"severity\": \"breaking\", "
			   "\"checks\": \"c\", \"message\": \"cpu {torch}\", \"source\": \"s\"},"
			   "{\"id\": \"ops\", \"kind\": \"mmcv_ops_missing\", \"section\": \"frameworks\", \"severity\": \"breaking\", "
			   "\"checks\": \"c\", \"message\": \"{package} {mmcv} {user}\", \"source\": \"s\"}";
	const char *rows = "{\"package\": \"mmdet\", \"version\": \"2.0.0\", \"mmcv_min\": \"1.0.2\", \"mmcv_max\": \"1.1.0\", \"mmcv_max_inclusive\": true},"
			   "{\"package\": \"mmdet\", \"version\": \"2.25.1\", \"mmcv_min\": \"1.3.17\", \"mmcv_max\": \"1.7.0\", \"mmcv_max_inclusive\": true},"
			   "{\"package\": \"mmdet\", \"version\": \"3.2.0\", \"mmcv_min\": \"2.0.0rc4\", \"mmcv_max\": \"2.1.0\", \"mmcv_max_inclusive\": false},"
			   "{\"package\": \"mmdet\", \"version\": \"3.0.0\", \"mmcv_min\": \"2.0.0rc4\", \"mmcv_max\": \"2.1.0\", \"mmcv_max_inclusive\": false}";

	(void)state;
	rules = rules_file(dir, rule, rows);
	/* mmdet 2.25.1 takes its own release's row: mmcv 1.7.5 is above 1.7.0 */
	f = check_json(dir, rules, "{\"envlock\": 1, \"frameworks\": {\"mmdet\": {\"status\": \"present\", \"version\": \"2.25.1\"},"
			   " \"mmcv\": {\"status\": \"present\", \"version\": \"1.7.5\", \"package\": \"mmcv-full\", \"ops\": true}}}");
	assert_int_equal(envlock_findings_count(f), 1);
	assert_string_equal(envlock_findings_get(f, 0)->message, "1.3.17 <= 1.7.5 <= 1.7.0");
	assert_string_equal(envlock_findings_get(f, 0)->subject, "mmdet 2.25.1 / mmcv-full 1.7.5");
	envlock_findings_free(f);
	/* 3.x: the maximum is exclusive, a pre-release counts */
	f = check_json(dir, rules, "{\"envlock\": 1, \"frameworks\": {\"mmdet\": {\"status\": \"present\", \"version\": \"3.2.0\"},"
			   " \"mmcv\": {\"status\": \"present\", \"version\": \"2.1.0\", \"ops\": true}}}");
	assert_int_equal(envlock_findings_count(f), 1);
	envlock_findings_free(f);
	f = check_json(dir, rules, "{\"envlock\": 1, \"frameworks\": {\"mmdet\": {\"status\": \"present\", \"version\": \"3.0.0\"},"
			   " \"mmcv\": {\"status\": \"present\", \"version\": \"2.0.0rc4\", \"ops\": true}}}");
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	/* CPU torch on a GPU machine; mmcv without ops under mmdet */
	f = check_json(dir, rules, "{\"envlock\": 1, \"gpu\": {\"count\": 1, \"driver\": {\"status\": \"present\", \"version\": \"535.1\"}},"
			   " \"frameworks\": {\"torch\": {\"status\": \"present\", \"version\": \"1.10.0+cpu\", \"cpu_only\": true},"
			   " \"mmdet\": {\"status\": \"present\", \"version\": \"2.25.1\"},"
			   " \"mmcv\": {\"status\": \"present\", \"version\": \"1.6.0\", \"package\": \"mmcv-full\", \"ops\": false}}}");
	assert_int_equal(envlock_findings_count(f), 2);
	assert_string_equal(envlock_findings_get(f, 0)->rule, "cpu");
	assert_string_equal(envlock_findings_get(f, 0)->message, "cpu 1.10.0+cpu");
	assert_string_equal(envlock_findings_get(f, 1)->message, "mmcv-full 1.6.0 mmdet");
	envlock_findings_free(f);
	/* any user of mmcv's ops in the one framework registry counts (mmpretrain); mmengine does not call them */
	f = check_json(dir, rules, "{\"envlock\": 1, \"frameworks\": {\"mmpretrain\": {\"status\": \"present\", \"version\": \"1.2.0\"},"
			   " \"mmcv\": {\"status\": \"present\", \"version\": \"2.1.0\", \"ops\": false}}}");
	assert_int_equal(envlock_findings_count(f), 1);
	assert_string_equal(envlock_findings_get(f, 0)->message, "mmcv 2.1.0 mmpretrain");
	envlock_findings_free(f);
	f = check_json(dir, rules, "{\"envlock\": 1, \"frameworks\": {\"mmengine\": {\"status\": \"present\", \"version\": \"0.10.3\"},"
			   " \"mmpose\": {\"status\": \"absent\", \"version\": \"1.3.0\"},"
			   " \"mmcv\": {\"status\": \"present\", \"version\": \"2.1.0\", \"ops\": false}}}");
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	/* the same torch without a GPU: fine */
	f = check_json(dir, rules, "{\"envlock\": 1, \"gpu\": {\"count\": 0, \"driver\": {\"status\": \"absent\"}},"
			   " \"frameworks\": {\"torch\": {\"status\": \"present\", \"version\": \"1.10.0+cpu\", \"cpu_only\": true}}}");
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	free(rules);
	unit_rmtree(dir);
}

static void requires_python_specifiers(void **state)
{
	(void)state;
	assert_int_equal(el_version_satisfies("3.11.2", ">=3.8.0"), 1);
	assert_int_equal(el_version_satisfies("3.7.16", ">=3.8.0"), 0);
	assert_int_equal(el_version_satisfies("3.11.2", ">=3.6, !=3.7.*, <4"), 1);
	assert_int_equal(el_version_satisfies("3.7.16", ">=3.6, !=3.7.*, <4"), 0);
	assert_int_equal(el_version_satisfies("3.10.12", "~=3.9"), 1);
	assert_int_equal(el_version_satisfies("4.0", "~=3.9"), 0);
	assert_int_equal(el_version_satisfies("3.9.1", "~=3.9.2"), 0);
	assert_int_equal(el_version_satisfies("3.9.3", "~=3.9.2"), 1);
	assert_int_equal(el_version_satisfies("3.12.0", "==3.12.*"), 1);
	assert_int_equal(el_version_satisfies("3.1.0", "==3.12.*"), 0);
	assert_int_equal(el_version_satisfies("3.8.10", " >= 3.8 , < 3.12 "), 1);
	/* what PEP 440 does not allow reads as nothing */
	assert_int_equal(el_version_satisfies("3.8.10", ""), -1);
	assert_int_equal(el_version_satisfies("3.8.10", ">=3.8,"), -1);
	assert_int_equal(el_version_satisfies("3.8.10", "3.8"), -1);
	assert_int_equal(el_version_satisfies("3.8.10", ">=3.*"), -1);
	assert_int_equal(el_version_satisfies("3.8.10", "~=3"), -1);
	assert_int_equal(el_version_satisfies("3.8.10", ">=three"), -1);
}

/* torch_python: the table only where torch's own files say nothing; the files' variant names them */
static void torch_python_files_first(void **state)
{
	char *dir = unit_tmpdir(), *rules;
	envlock_findings *f;
	const char *rule = "{\"id\": \"py\", \"kind\": \"torch_python\", \"table\": \"t\", \"section\": \"python\", "
			   "\"severity\": \"risky\", \"checks\": \"c\", \"message\": \"table {min}-{max} {python}\"},"
			   "{\"id\": \"py\", \"kind\": \"torch_python\", \"section\": \"python\", \"severity\": \"breaking\", "
			   "\"checks\": \"c\", \"message\": \"built for {built_for} ({evidence}); {python}\", "
			   "\"fix\": \"{release} {cp}\", \"source\": \"s\"}";
	const char *rows = "{\"torch\": \"1.13\", \"python\": [\"3.7\", \"3.10\"]}";
	const char *lock = "{\"envlock\": 1, \"python\": {\"status\": \"present\", \"version\": \"3.11.2\"},"
			   " \"frameworks\": {\"torch\": {\"status\": \"present\", \"version\": \"1.13.1\"%s}}}";
	char text[2048];

	(void)state;
	rules = rules_file(dir, rule, rows);
	/* the module is tagged for 3.11: the table's 3.7-3.10 is not asked */
	snprintf(text, sizeof(text), lock, ", \"python_tags\": [\"3.11\"], \"python_tags_source\": \"/s/torch/_C.cpython-311-x86_64-linux-gnu.so\","
		 " \"requires_python\": \">=3.7.0\", \"requires_python_source\": \"/s/torch.egg-info/PKG-INFO\"");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	/* tagged for 3.8: the finding names the module */
	snprintf(text, sizeof(text), lock, ", \"python_tags\": [\"3.8\"], \"python_tags_source\": \"/s/torch/_C.cpython-38-x86_64-linux-gnu.so\"");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 1);
	assert_int_equal(envlock_findings_get(f, 0)->severity, ENVLOCK_SEV_BREAKING);
	assert_string_equal(envlock_findings_get(f, 0)->message,
			    "built for 3.8 (/s/torch/_C.cpython-38-x86_64-linux-gnu.so); 3.11.2");
	assert_string_equal(envlock_findings_get(f, 0)->fix, "3.11 cp311");
	assert_string_equal(envlock_findings_get(f, 0)->subject, "torch 1.13.1 / Python 3.11.2");
	envlock_findings_free(f);
	/* a wheel's stable-ABI tag: 3.8 and later fits 3.11; one for 3.12 and later does not */
	snprintf(text, sizeof(text), lock, ", \"python_tags\": [\"3.8+\"], \"python_tags_source\": \"/s/torch.dist-info/WHEEL\"");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	snprintf(text, sizeof(text), lock, ", \"python_tags\": [\"3.12+\", \"3.9\"], \"python_tags_source\": \"/s/torch.dist-info/WHEEL\"");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 1);
	assert_string_equal(envlock_findings_get(f, 0)->message,
			    "built for 3.12 or newer, 3.9 (the Tag lines of /s/torch.dist-info/WHEEL); 3.11.2");
	envlock_findings_free(f);
	/* only Requires-Python: it decides, and the finding names it */
	snprintf(text, sizeof(text), lock, ", \"requires_python\": \">=3.12\", \"requires_python_source\": \"/s/torch.dist-info/METADATA\"");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 1);
	assert_string_equal(envlock_findings_get(f, 0)->message,
			    "built for >=3.12 (Requires-Python in /s/torch.dist-info/METADATA); 3.11.2");
	envlock_findings_free(f);
	snprintf(text, sizeof(text), lock, ", \"requires_python\": \">=3.7\", \"requires_python_source\": \"/s/torch.dist-info/METADATA\"");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	/* nothing from the files, or a Requires-Python that does not read: the table */
	snprintf(text, sizeof(text), lock, ", \"requires_python\": \">=3.7.*\", \"requires_python_source\": \"/s/METADATA\"");
	expect_one(dir, rules, text, "table 3.7-3.10 3.11.2");
	snprintf(text, sizeof(text), lock, "");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 1);
	assert_int_equal(envlock_findings_get(f, 0)->severity, ENVLOCK_SEV_RISKY);
	assert_string_equal(envlock_findings_get(f, 0)->message, "table 3.7-3.10 3.11.2");
	envlock_findings_free(f);
	free(rules);
	unit_rmtree(dir);
}

/* mmcv_range: a range the codebase's __init__.py asserts beats the table's row */
static void mmcv_range_files_first(void **state)
{
	char *dir = unit_tmpdir(), *rules;
	envlock_findings *f;
	const char *rule = "{\"id\": \"mm\", \"kind\": \"mmcv_range\", \"framework\": \"mmdet\", \"table\": \"t\", "
			   "\"section\": \"frameworks\", \"severity\": \"breaking\", \"checks\": \"c\", "
			   "\"message\": \"table {min} <= {mmcv} {bound} {max}\"},"
			   "{\"id\": \"mm\", \"kind\": \"mmcv_range\", \"framework\": \"mmdet\", \"section\": \"frameworks\", "
			   "\"severity\": \"breaking\", \"checks\": \"c\", \"message\": \"{file}: {range}, have {mmcv}\", \"source\": \"s\"}";
	const char *rows = "{\"package\": \"mmdet\", \"version\": \"2.28.2\", \"mmcv_min\": \"1.3.17\", \"mmcv_max\": \"1.7.0\", \"mmcv_max_inclusive\": true}";
	const char *lock = "{\"envlock\": 1, \"frameworks\": {\"mmdet\": {\"status\": \"present\", \"version\": \"2.28.2\"%s},"
			   " \"mmcv\": {\"status\": \"present\", \"version\": \"%s\", \"package\": \"mmcv-full\", \"ops\": true}}}";
	const char *edited = ", \"mmcv_range\": {\"min\": \"1.3.17\", \"max\": \"1.8.0\", \"max_inclusive\": true,"
			     " \"source\": \"/s/mmdet/__init__.py\"}";
	char text[2048];

	(void)state;
	rules = rules_file(dir, rule, rows);
	/* the edited maximum 1.8.0: mmcv 1.7.2 imports; the table's 1.7.0 is not asked */
	snprintf(text, sizeof(text), lock, edited, "1.7.2");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	snprintf(text, sizeof(text), lock, edited, "1.8.0");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	/* mmcv 2.0: outside what the file asserts, and the finding names the file */
	snprintf(text, sizeof(text), lock, edited, "2.0.0");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 1);
	assert_string_equal(envlock_findings_get(f, 0)->message, "/s/mmdet/__init__.py: 1.3.17 <= mmcv <= 1.8.0, have 2.0.0");
	assert_string_equal(envlock_findings_get(f, 0)->source, "s");
	envlock_findings_free(f);
	/* 3.x's exclusive maximum; a file with one side only */
	snprintf(text, sizeof(text), lock, ", \"mmcv_range\": {\"max\": \"2.2.0\", \"max_inclusive\": false, \"source\": \"/s/i.py\"}",
		 "2.2.0");
	expect_one(dir, rules, text, "/s/i.py: mmcv < 2.2.0, have 2.2.0");
	/* a file that checks no mmcv version: nothing to break */
	snprintf(text, sizeof(text), lock, ", \"mmcv_range\": {\"source\": \"/s/i.py\"}", "9.0.0");
	f = check_json(dir, rules, text);
	assert_int_equal(envlock_findings_count(f), 0);
	envlock_findings_free(f);
	/* no recorded range: the table's row */
	snprintf(text, sizeof(text), lock, "", "1.7.2");
	expect_one(dir, rules, text, "table 1.3.17 <= 1.7.2 <= 1.7.0");
	free(rules);
	unit_rmtree(dir);
}

static void gcc_and_glibc_rules(void **state)
{
	char *dir = unit_tmpdir(), *rules;
	envlock_findings *f;
	const char *rule = "{\"id\": \"gcc\", \"kind\": \"gcc_max_for_nvcc\", \"table\": \"t\", \"section\": \"compilers\", "
			   "\"severity\": \"breaking\", \"checks\": \"c\", \"message\": \"{gcc} > {max} for {cuda}\"},"
			   "{\"id\": \"glibc\", \"kind\": \"wheel_glibc\", \"table\": \"t\", \"section\": \"pip\", "
			   "\"severity\": \"breaking\", \"checks\": \"c\", \"message\": \"{dist} needs {need}, have {glibc}\"}";
	const char *rows = "{\"cuda\": \"10.2\", \"max_gcc\": 8}, {\"tag\": \"manylinux2014\", \"glibc\": \"2.17\"}";

	(void)state;
	rules = rules_file(dir, rule, rows);
	f = check_json(dir, rules, "{\"envlock\": 1, \"compilers\": {\"default\": {\"version\": \"9.4.0\"}},"
			   " \"cuda\": {\"toolkits\": [{\"home\": \"/c\", \"version\": \"10.2.89\", \"nvcc\": {\"path\": \"/c/bin/nvcc\"}},"
			   " {\"home\": \"/d\", \"version\": \"10.2.89\"}]},"
			   " \"system\": {\"glibc\": {\"status\": \"present\", \"version\": \"2.23\"}},"
			   " \"pip\": {\"distributions\": [{\"name\": \"numpy\", \"version\": \"1.26\", \"tags\": [\"cp310-cp310-manylinux_2_17_x86_64\", \"cp310-cp310-manylinux2014_x86_64\"]},"
			   " {\"name\": \"opencv\", \"version\": \"4.9\", \"tags\": [\"cp37-abi3-manylinux_2_28_x86_64\"]},"
			   " {\"name\": \"old\", \"version\": \"1\", \"tags\": [\"cp37-cp37m-manylinux1_x86_64\"]}]}}");
	/*
	 * Only the toolkit with nvcc counts. Of the wheels, the manylinux_2_17 /
	 * manylinux2014 one fits glibc 2.23, the manylinux_2_28 one does not,
	 * and manylinux1 is not in this table, so it is not judged.
	 */
	assert_int_equal(envlock_findings_count(f), 2);
	assert_string_equal(envlock_findings_get(f, 0)->message, "9.4.0 > 8 for 10.2");
	assert_string_equal(envlock_findings_get(f, 1)->message, "opencv needs 2.28, have 2.23");
	envlock_findings_free(f);
	free(rules);
	unit_rmtree(dir);
}

/* restore's compilers step reads nvcc's gcc limit from the table the gcc_max_for_nvcc rule names */
static void nvcc_max_gcc_lookup(void **state)
{
	char *dir = unit_tmpdir(), *path;
	const char *rule = "{\"id\": \"gcc\", \"kind\": \"gcc_max_for_nvcc\", \"table\": \"t\", \"section\": \"compilers\", "
			   "\"severity\": \"breaking\", \"checks\": \"c\", \"message\": \"m\"}";
	envlock_ctx *ctx;
	envlock_rules *rules = NULL;

	(void)state;
	path = rules_file(dir, rule, "{\"cuda\": \"10.2\", \"max_gcc\": 8}, {\"cuda\": \"11.0\", \"max_gcc\": -3}");
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_rules_load(&rules, ctx, path), 0);
	assert_int_equal(el_rules_nvcc_max_gcc(rules, "10.2.89"), 8);
	assert_int_equal(el_rules_nvcc_max_gcc(rules, "10.2"), 8);
	/* no row, a row out of range, no version: nothing says */
	assert_int_equal(el_rules_nvcc_max_gcc(rules, "10.1.243"), -1);
	assert_int_equal(el_rules_nvcc_max_gcc(rules, "11.0.3"), -1);
	assert_int_equal(el_rules_nvcc_max_gcc(rules, NULL), -1);
	envlock_rules_free(rules);
	free(path);
	/* the built-in rules: the shipped table's row for CUDA 10.2 */
	assert_int_equal(envlock_rules_load_default(&rules, ctx), 0);
	assert_true(el_rules_nvcc_max_gcc(rules, "10.2.89") > 0);
	envlock_rules_free(rules);
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

/* Recording the checks again replaces them, and the lock's view reads the new ones. */
static void record_checks_again(void **state)
{
	char *dir = unit_tmpdir(), *rules_path, path[4200];
	const char *rule = "{\"id\": \"old-driver\", \"kind\": \"driver_min_for_cuda\", \"table\": \"t\", "
			   "\"section\": \"gpu\", \"severity\": \"breaking\", \"checks\": \"c\", \"message\": \"m {driver}\"}";
	envlock_ctx *ctx;
	envlock_rules *rules = NULL;
	envlock_lock *lock = NULL;
	const el_view *v;

	(void)state;
	rules_path = rules_file(dir, rule, "{\"cuda\": \"10.2\", \"min_driver\": \"440.33\"}");
	unit_write(dir, "lock.json", "{\"envlock\": 1, \"gpu\": {\"driver\": {\"status\": \"present\", \"version\": \"390.144\"}},"
		   " \"cuda\": {\"toolkits\": [{\"home\": \"/c\", \"version\": \"10.2.89\"}]}}", -1);
	snprintf(path, sizeof(path), "%s/lock.json", dir);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_rules_load(&rules, ctx, rules_path), 0);
	assert_int_equal(el_lock_load(&lock, ctx, path, false), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(envlock_lock_record_checks(lock, ctx, rules), 0);
		v = el_lock_view(lock);
		assert_true(v->checks.recorded);
		assert_int_equal(v->checks.breaking, 1);
		assert_int_equal(v->checks.nfindings, 1);
		assert_string_equal(v->checks.findings[0].message, "m 390.144");
	}
	envlock_lock_free(lock);
	envlock_rules_free(rules);
	envlock_ctx_free(ctx);
	free(rules_path);
	unit_rmtree(dir);
}

static void rules_file_errors(void **state)
{
	char *dir = unit_tmpdir(), path[4200];
	envlock_ctx *ctx;
	envlock_rules *rules = NULL;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	snprintf(path, sizeof(path), "%s/r.json", dir);
	unit_write(dir, "r.json", "{\"envlock_rules\": 1, \"rules\": [{\"id\": \"x\", \"kind\": \"warp_drive\", \"section\": \"gpu\", "
		   "\"severity\": \"breaking\", \"message\": \"m\", \"source\": \"s\"}], \"tables\": {}}", -1);
	assert_int_equal(envlock_rules_load(&rules, ctx, path), ENVLOCK_EPARSE);
	assert_non_null(strstr(envlock_error_last(ctx), "rule 'x': unknown kind 'warp_drive'"));
	unit_write(dir, "r.json", "{\"envlock_rules\": 1, \"rules\": [{\"id\": \"x\", \"kind\": \"soname_link\", \"section\": \"gpu\", "
		   "\"severity\": \"fatal\", \"message\": \"m\", \"source\": \"s\"}], \"tables\": {}}", -1);
	assert_int_equal(envlock_rules_load(&rules, ctx, path), ENVLOCK_EPARSE);
	assert_non_null(strstr(envlock_error_last(ctx), "severity must be"));
	unit_write(dir, "r.json", "{\"envlock_rules\": 1, \"rules\": [{\"id\": \"x\", \"kind\": \"mmcv_range\", \"section\": \"gpu\", "
		   "\"severity\": \"info\", \"message\": \"m\", \"table\": \"nope\"}], \"tables\": {}}", -1);
	assert_int_equal(envlock_rules_load(&rules, ctx, path), ENVLOCK_EPARSE);
	assert_non_null(strstr(envlock_error_last(ctx), "no table 'nope'"));
	unit_write(dir, "r.json", "[1, 2", -1);
	assert_int_equal(envlock_rules_load(&rules, ctx, path), ENVLOCK_EPARSE);
	assert_null(rules);
	/* the built-in rules load */
	assert_int_equal(envlock_rules_load_default(&rules, ctx), 0);
	envlock_rules_free(rules);
	envlock_ctx_free(ctx);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(version_order),
		cmocka_unit_test(version_helpers),
		cmocka_unit_test(driver_rules),
		cmocka_unit_test(mmcv_and_torch_rules),
		cmocka_unit_test(requires_python_specifiers),
		cmocka_unit_test(torch_python_files_first),
		cmocka_unit_test(mmcv_range_files_first),
		cmocka_unit_test(gcc_and_glibc_rules),
		cmocka_unit_test(nvcc_max_gcc_lookup),
		cmocka_unit_test(record_checks_again),
		cmocka_unit_test(rules_file_errors),
	};
	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
