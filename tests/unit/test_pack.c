/* Unit tests of lib/pack: wheel tags and file names, and what is not a wheel. */
#include "unit.h"

#include "pack/internal.h"

/* got (malloc'd, freed here) is want, or NULL where want is. */
static void expect_str(char *got, const char *want)
{
	if (want) {
		assert_non_null(got);
		assert_string_equal(got, want);
	} else {
		assert_null(got);
	}
	free(got);
}

static void expect_tags(const char *wheel_file, const char *want)
{
	expect_str(pk_wheel_tags(wheel_file, strlen(wheel_file)), want);
}

static void test_wheel_tags(void **state)
{
	(void)state;
	expect_tags("Wheel-Version: 1.0\nGenerator: bdist_wheel (0.38.4)\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n",
		    "py3-none-any");
	/* a universal wheel: one Tag line per python, joined as pip names the file */
	expect_tags("Tag: py2-none-any\nTag: py3-none-any\n", "py2.py3-none-any");
	/* auditwheel's two platform names for one build */
	expect_tags("Wheel-Version: 1.0\nTag: cp37-cp37m-manylinux_2_17_x86_64\nTag: cp37-cp37m-manylinux2014_x86_64\n",
		    "cp37-cp37m-manylinux_2_17_x86_64.manylinux2014_x86_64");
	expect_tags("Wheel-Version: 1.0\r\nTag: cp311-cp311-linux_x86_64\r\n", "cp311-cp311-linux_x86_64");
	expect_tags("Wheel-Version: 1.0\nRoot-Is-Purelib: true\n", NULL);
	expect_tags("Tag: nodashes\n", NULL);
}

static void expect_name(const char *name, const char *version, const char *build, const char *tags, const char *want)
{
	expect_str(pk_wheel_filename(name, version, build, tags), want);
}

static void test_wheel_filename(void **state)
{
	(void)state;
	expect_name("mmcv-full", "1.7.1", NULL, "cp37-cp37m-linux_x86_64", "mmcv_full-1.7.1-cp37-cp37m-linux_x86_64.whl");
	expect_name("torch", "1.10.0+cu102", NULL, "cp37-cp37m-linux_x86_64", "torch-1.10.0+cu102-cp37-cp37m-linux_x86_64.whl");
	expect_name("zope.interface", "5.4.0", NULL, "cp37-cp37m-manylinux2010_x86_64",
		    "zope.interface-5.4.0-cp37-cp37m-manylinux2010_x86_64.whl");
	expect_name("Foo__-Bar", "2.0", "1", "py3-none-any", "Foo_Bar-2.0-1-py3-none-any.whl");
	/* what METADATA in a cache may claim never becomes a path */
	expect_name("../../etc", "1.0", NULL, "py3-none-any", NULL);
	expect_name("ok", "1.0/../../x", NULL, "py3-none-any", NULL);
	expect_name("ok", "1.0", NULL, "py3-none-any/../x", NULL);
	expect_name("ok", "1.0", "1/x", "py3-none-any", NULL);
	expect_name("", "1.0", NULL, "py3-none-any", NULL);
	expect_name("ok", "", NULL, "py3-none-any", NULL);
	expect_name(".hidden", "1.0", NULL, "py3-none-any", NULL);
}

/* A name past the file name's cap is no name, never one cut short. */
static void test_wheel_filename_too_long(void **state)
{
	char name[2001], tags[1001];

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	expect_name(name, "1.0", NULL, "py3-none-any", NULL);
	memset(tags, 'x', sizeof(tags) - 1);
	tags[sizeof(tags) - 1] = '\0';
	expect_name("ok", "1.0", NULL, tags, NULL);
}

static void test_not_a_wheel(void **state)
{
	char *dir = unit_tmpdir(), path[4200];
	pk_wheel w;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/x.whl", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("PK\003\004 but not a zip at all", f);
	fclose(f);
	assert_int_equal(pk_wheel_identify(path, 0, 30, &w), -1);
	assert_null(w.name);
	snprintf(path, sizeof(path), "%s/none.whl", dir);
	assert_int_equal(pk_wheel_identify(path, 0, 100, &w), -1);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wheel_tags),
		cmocka_unit_test(test_wheel_filename),
		cmocka_unit_test(test_wheel_filename_too_long),
		cmocka_unit_test(test_not_a_wheel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
