/*
 * Unit tests for what `envlock config` shows (lib/cfgview): Python's own
 * text for floats and strings, where a key that was not evaluated is
 * commented, the diff by key path, and the bases a config names
 * (util/pybases.c), which --diff A follows.
 */
#include "unit.h"

#include "cfgview/cfgview.h"
#include "util/pybases.h"

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = unit_tmpdir();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unit_rmtree(dir);
	return 0;
}

/* Each double as Python 3's repr(float) writes it (written by python3 -c 'print(repr(x))'). */
static void floats_as_python_writes_them(void **state)
{
	static const struct {
		double d;
		const char *want;
	} cases[] = {
		{ 0.1, "0.1" },
		{ 1e-4, "0.0001" },
		{ 1e-5, "1e-05" },
		{ 1.5e16, "1.5e+16" },
		{ 1e16, "1e+16" },
		{ 1e15, "1000000000000000.0" },
		{ 123456789.123, "123456789.123" },
		{ -0.0, "-0.0" },
		{ 2.5, "2.5" },
		{ 1e300, "1e+300" },
		{ 5e-324, "5e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 0.3, "0.3" },
		{ 2.0 / 3, "0.6666666666666666" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 100.5, "100.5" },
		{ 1e22, "1e+22" },
		{ 12345678901234567.0, "1.2345678901234568e+16" },
		{ 0.000123, "0.000123" },
		{ -1.5e-07, "-1.5e-07" },
		{ 9007199254740993.0, "9007199254740992.0" },
		{ 0.1 + 0.2, "0.30000000000000004" },
	};
	char buf[EL_PY_FLOAT_SIZE];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = el_py_float(buf, cases[i].d);

		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
}

static void strings_as_python_writes_them(void **state)
{
	static const char *const cases[][2] = {
		{ "plain", "'plain'" },
		{ "it's", "\"it's\"" },
		{ "say \"hi\"", "'say \"hi\"'" },
		{ "both ' and \"", "'both \\' and \"'" },
		{ "tab\there", "'tab\\there'" },
		{ "nl\nend\r", "'nl\\nend\\r'" },
		{ "back\\slash", "'back\\\\slash'" },
		{ "\x1b[31m", "'\\x1b[31m'" },
		{ "\xe2\x80\xae", "'\\u202e'" },                /* RIGHT-TO-LEFT OVERRIDE */
		{ "\xc3\xa9", "'\xc3\xa9'" },                   /* é, printable: as it is */
		{ "\xc2\xa0", "'\\xa0'" },                      /* NO-BREAK SPACE */
		{ "\xf0\x9f\x98\x80", "'\xf0\x9f\x98\x80'" },   /* an emoji */
		{ "\x7f", "'\\x7f'" },
		{ "\xc2\x85", "'\\x85'" },
		{ "\xe2\x80\xa8", "'\\u2028'" },                /* LINE SEPARATOR */
		{ "\xed\xb2\x80", "'\\udc80'" },                /* a lone surrogate, as '\udc80' is kept */
		{ "bad \xff byte", "'bad \\xff byte'" },        /* never raw */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		el_buf b = EL_BUF_INIT(1024);

		assert_int_equal(el_py_str(&b, cases[i][0]), 0);
		assert_string_equal(el_buf_cstr(&b), cases[i][1]);
		el_buf_release(&b);
	}
}

static void identifiers_and_paths(void **state)
{
	static const char *const steps[] = { "train_pipeline", NULL, "scale" };
	el_buf b = EL_BUF_INIT(1024);

	(void)state;
	assert_true(el_py_identifier("optim_wrapper"));
	assert_true(el_py_identifier("_base_"));
	assert_false(el_py_identifier("0"));
	assert_false(el_py_identifier("a-b"));
	assert_false(el_py_identifier(""));
	assert_false(el_py_identifier("class")); /* dict(class=1) does not parse */
	assert_false(el_py_identifier("None"));
	assert_false(el_py_identifier("\xc3\xa9t\xc3\xa9")); /* Python takes it; envlock writes {'été': ...} */

	el_cfg_path_key(&b, "train_pipeline", true);
	el_cfg_path_index(&b, 2);
	el_cfg_path_key(&b, "scale", false);
	el_cfg_path_key(&b, "a-b", false);
	el_cfg_path_key(&b, "c\nd", false);
	assert_string_equal(el_buf_cstr(&b), "train_pipeline[2].scale['a-b']['c\\nd']");
	el_buf_reset(&b);
	el_cfg_note_path(&b, "model.0.x");
	assert_string_equal(el_buf_cstr(&b), "model['0'].x");
	el_buf_release(&b);

	/* a note's key has no list index: it covers the places under it */
	assert_true(el_cfg_note_covers("train_pipeline.scale", steps, 3));
	assert_true(el_cfg_note_covers("train_pipeline", steps, 3));
	assert_true(el_cfg_note_covers("train_pipeline", steps, 1));
	assert_false(el_cfg_note_covers("train_pipeline.scale.x", steps, 3));
	assert_false(el_cfg_note_covers("train", steps, 3));
	assert_false(el_cfg_note_covers("", steps, 3));
}

static void bases_a_config_names(void **state)
{
	static const char one[] = "_base_ = './a.py'\nx = 1\n";
	static const char list[] = "# _base_ = 'commented.py'\n_base_ = [\n    '../_base_/models/m.py',  # the model\n"
				   "    '../_base_/datasets/d.py'\n]\ns = '_base_ = \"in a string\"'\n";
	static const char computed[] = "_base_ = ['./a.py'] + other\n";
	static const char added[] = "_base_ = ['./a.py']\n_base_ += ['./b.py']\n";
	static const char engine[] = "from mmengine.config import read_base\n\nwith read_base():\n"
				     "    # the model first\n    from .._base_.models.retinanet import *\n\n"
				     "    from .._base_.datasets.coco import *  # noqa\n"
				     "\nmodel.update(dict(x=1))\nfrom os import path\n";
	static const char one_line[] = "with read_base(): from .a import *\n";
	el_py_bases d = { 0 };

	(void)state;
	el_py_bases_read(&d, one, sizeof(one) - 1);
	assert_int_equal(d.names.n, 1);
	assert_string_equal(d.names.v[0], "./a.py");
	el_py_bases_release(&d);

	el_py_bases_read(&d, list, sizeof(list) - 1);
	assert_int_equal(d.names.n, 2);
	assert_string_equal(d.names.v[0], "../_base_/models/m.py");
	assert_string_equal(d.names.v[1], "../_base_/datasets/d.py");
	assert_null(d.unresolved);
	el_py_bases_release(&d);

	el_py_bases_read(&d, computed, sizeof(computed) - 1);
	assert_int_equal(d.names.n, 0);
	assert_string_equal(d.unresolved, "['./a.py'] + other");
	el_py_bases_release(&d);

	el_py_bases_read(&d, added, sizeof(added) - 1);
	assert_int_equal(d.names.n, 0);
	assert_non_null(d.unresolved);
	el_py_bases_release(&d);

	el_py_bases_read(&d, engine, sizeof(engine) - 1);
	assert_true(d.read_base);
	assert_int_equal(d.names.n, 0);
	assert_int_equal(d.modules.n, 2); /* the block's imports; the top-level `from os import path` is not one */
	assert_string_equal(d.modules.v[0], ".._base_.models.retinanet");
	assert_string_equal(d.modules.v[1], ".._base_.datasets.coco");
	el_py_bases_release(&d);

	el_py_bases_read(&d, one_line, sizeof(one_line) - 1);
	assert_int_equal(d.modules.n, 1);
	assert_string_equal(d.modules.v[0], ".a");
	el_py_bases_release(&d);
}

/* What envlock_config_print (text at width) or _print_py (width 0) writes for the config rel. */
static char *printed(const char *rel, int width, size_t *not_evaluated)
{
	envlock_ctx *ctx;
	envlock_config *c = NULL;
	char path[4096], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (envlock_config_load(&c, ctx, path, NULL) != 0)
		fail_msg("%s: %s", rel, envlock_error_last(ctx));
	*not_evaluated = envlock_config_not_evaluated(c);
	assert_int_equal(width ? envlock_config_print(c, ctx, out, ENVLOCK_PRINT_WIDTH(width))
			       : envlock_config_print_py(c, ctx, out), 0);
	fclose(out);
	envlock_config_free(c);
	envlock_ctx_free(ctx);
	return text;
}

static void notes_land_where_their_key_would_be(void **state)
{
	size_t notes;
	char *text, *want, *file;

	(void)state;
	unit_write(dir, "base.py", "model = dict(type='M', backbone=dict(depth=50, frozen=open('f')), heads=[dict(x=open('b'))])\n"
				   "lr = 0.02\n", -1);
	unit_write(dir, "child.py", "_base_ = './base.py'\nmodel = dict(backbone=dict(depth=101))\n"
				    "work_dir = (lambda: 'work')()\nopen('log').close()\n", -1);
	text = printed("child.py", 0, &notes);
	assert_int_equal(notes, 4);
	/* the file names are the evaluator's: here absolute, outside the current directory */
	file = strdup(dir);
	assert_int_equal(asprintf(&want,
				  "# not evaluated, and left out of the value below:\n"
				  "#   a statement not evaluated: a call to open() (%s/child.py:4)\n"
				  "#   model.heads.x: a call to open() (%s/base.py:1)\n"
				  "model = dict(\n"
				  "    type='M',\n"
				  "    backbone=dict(\n"
				  "        depth=101,\n"
				  "        # frozen: not evaluated: a call to open() (%s/base.py:1)\n"
				  "    ),\n"
				  "    heads=[dict()],\n"
				  ")\n"
				  "lr = 0.02\n"
				  "# work_dir: not evaluated: a call to (lambda: 'work')() (%s/child.py:3)\n",
				  file, file, file, file) > 0, 1);
	assert_string_equal(text, want);
	free(want);
	free(file);
	free(text);
}

static void long_values_break_an_item_a_line(void **state)
{
	size_t notes;
	char *text;

	(void)state;
	unit_write(dir, "wide.py", "a = dict(type='SGD', lr=0.02)\nb = [1, 2, 3]\n"
				   "c = dict(x=dict(y='a string long enough to pass the width'), z=[0.5, 1e-05])\n"
				   "d = {'0': 1, 'a-b': dict()}\n", -1);
	text = printed("wide.py", 40, &notes);
	assert_int_equal(notes, 0);
	assert_string_equal(text, "a = dict(type='SGD', lr=0.02)\n"
				  "b = [1, 2, 3]\n"
				  "c = dict(\n"
				  "    x=dict(\n"
				  "        y='a string long enough to pass the width',\n"
				  "    ),\n"
				  "    z=[0.5, 1e-05],\n"
				  ")\n"
				  "d = {'0': 1, 'a-b': dict()}\n");
	free(text);
	/* width 0: never broken */
	text = printed("wide.py", 0, &notes);
	assert_non_null(strstr(text, "c = dict(x=dict(y='a string long enough to pass the width'), z=[0.5, 1e-05])\n"));
	free(text);
}

/* The diff of configs a and b of the scratch dir, as text; *same gets envlock_config_diff_same. */
static char *diffed(const char *a, const char *b, int *same)
{
	envlock_ctx *ctx;
	envlock_config *ca = NULL, *cb = NULL;
	envlock_config_diff *d = NULL;
	char pa[4096], pb[4096], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	snprintf(pa, sizeof(pa), "%s/%s", dir, a);
	snprintf(pb, sizeof(pb), "%s/%s", dir, b);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_config_load(&ca, ctx, pa, NULL), 0);
	assert_int_equal(envlock_config_load(&cb, ctx, pb, NULL), 0);
	assert_int_equal(envlock_config_compare(&d, ctx, ca, cb), 0);
	*same = envlock_config_diff_same(d);
	assert_int_equal(envlock_config_diff_print(d, ctx, out, 0), 0);
	fclose(out);
	envlock_config_diff_free(d);
	envlock_config_free(ca);
	envlock_config_free(cb);
	envlock_ctx_free(ctx);
	return text;
}

static void diff_by_key_path(void **state)
{
	int same;
	char *text, *body, *want;

	(void)state;
	unit_write(dir, "a.py", "optim_wrapper = dict(type='OptimWrapper', optimizer=dict(lr=0.02))\n"
				"pipeline = [dict(type='Load'), dict(type='Resize', scale=(1333, 800))]\n"
				"gone = 1\nmaybe = dict(x=1)\nshared = dict(y=open('f'))\n", -1);
	unit_write(dir, "b.py", "optim_wrapper = dict(type='AmpOptimWrapper', optimizer=dict(lr=0.02))\n"
				"pipeline = [dict(type='Load'), dict(type='Resize', scale=(640, 640)), dict(type='Pack')]\n"
				"maybe = dict(x=open('b'))\nshared = dict(y=open('f'))\nnew = None\n", -1);
	text = diffed("a.py", "b.py", &same);
	assert_false(same);
	body = strstr(text, "\n+++ ");
	assert_non_null(body);
	body = strchr(body + 1, '\n') + 1;
	/* maybe.x is not removed: b did not evaluate it; shared.y is left out by a.py's and by b.py's own statement */
	assert_int_equal(asprintf(&want, "~ optim_wrapper.type: 'OptimWrapper' -> 'AmpOptimWrapper'\n"
					 "~ pipeline[1].scale[0]: 1333 -> 640\n"
					 "~ pipeline[1].scale[1]: 800 -> 640\n"
					 "+ pipeline[2]: dict(type='Pack')\n"
					 "- gone: 1\n"
					 "+ new: None\n"
					 "? shared.y: not evaluated in the old config: a call to open() (%s/a.py:5)\n"
					 "? maybe.x: not evaluated in the new config: a call to open() (%s/b.py:3)\n"
					 "? shared.y: not evaluated in the new config: a call to open() (%s/b.py:4)\n",
				  dir, dir, dir) > 0, 1);
	assert_string_equal(body, want);
	free(want);
	free(text);
}

static void the_same_statement_on_both_sides(void **state)
{
	int same;
	char *text;

	(void)state;
	unit_write(dir, "base.py", "x = dict(y=open('f'), z=1)\n", -1);
	unit_write(dir, "c1.py", "_base_ = './base.py'\nx = dict(z=2)\n", -1);
	unit_write(dir, "c2.py", "_base_ = './base.py'\nx = dict(z=2)\n", -1);
	text = diffed("c1.py", "c2.py", &same);
	/* base.py's x.y is left out on both sides by the same statement: it does not count */
	assert_true(same);
	assert_non_null(strstr(text, "? x.y: not evaluated on both sides: a call to open() ("));
	assert_non_null(strstr(text, "\nthe same, but for what neither side evaluated\n"));
	free(text);
	text = diffed("base.py", "c1.py", &same);
	assert_false(same);
	assert_non_null(strstr(text, "~ x.z: 1 -> 2\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(floats_as_python_writes_them),
		cmocka_unit_test(strings_as_python_writes_them),
		cmocka_unit_test(identifiers_and_paths),
		cmocka_unit_test(bases_a_config_names),
		cmocka_unit_test_setup_teardown(notes_land_where_their_key_would_be, setup, teardown),
		cmocka_unit_test_setup_teardown(long_values_break_an_item_a_line, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_by_key_path, setup, teardown),
		cmocka_unit_test_setup_teardown(the_same_statement_on_both_sides, setup, teardown),
	};

	return cmocka_run_group_tests_name("cfgview", tests, NULL, NULL);
}
