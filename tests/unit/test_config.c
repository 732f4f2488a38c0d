/*
 * Unit tests for the effective config (lib/config): OpenMMLab configs
 * evaluated from their text, merged along _base_ as mmcv's Config does,
 * with --cfg-options; compared with values written here by hand, and the
 * mmdet chains in tests/fixtures/configs with golden JSON written by hand
 * from mmcv's merge rules. Hostile texts must be refused cleanly.
 */
#include <time.h>

#include "unit.h"

#include "config/config.h"

#define FIXTURES "tests/fixtures/configs"

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

/* Evaluate the file rel of the scratch dir; returns the result or fails the test. */
static cJSON *eval_opts(const char *rel, const char *const *opts, size_t n, int want)
{
	envlock_ctx *ctx;
	cJSON *out = NULL;
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	err = el_config_effective(&out, ctx, path, opts, n);
	if (err != want)
		fail_msg("%s: got %d, want %d: %s", rel, err, want, err ? envlock_error_last(ctx) : "(no error)");
	if (err)
		print_message("  (expected) %s\n", envlock_error_last(ctx));
	envlock_ctx_free(ctx);
	return out;
}

static cJSON *eval_text(const char *text)
{
	unit_write(dir, "c.py", text, -1);
	return eval_opts("c.py", NULL, 0, 0);
}

static char *error_of(const char *rel, int want)
{
	envlock_ctx *ctx;
	cJSON *out = NULL;
	char path[4096];
	char *msg;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(el_config_effective(&out, ctx, path, NULL, 0), want);
	assert_null(out);
	msg = strdup(envlock_error_last(ctx));
	envlock_ctx_free(ctx);
	return msg;
}

static void check_json(const cJSON *got, const char *want_text)
{
	cJSON *want = cJSON_Parse(want_text);

	assert_non_null(want);
	if (!cJSON_Compare(got, want, 1)) {
		char *g = cJSON_Print(got), *w = cJSON_Print(want);

		print_message("got:\n%s\nwant:\n%s\n", g, w);
		free(g);
		free(w);
		cJSON_Delete(want);
		fail_msg("values differ");
	}
	cJSON_Delete(want);
}

/* The effective value must be exactly want (key order included). */
static void check_effective(const cJSON *out, const char *want)
{
	const cJSON *eff = cJSON_GetObjectItemCaseSensitive(out, "effective");
	cJSON *w = cJSON_Parse(want);
	const cJSON *a, *b;

	assert_non_null(w);
	check_json(eff, want);
	/* cJSON_Compare ignores order: check the top level's key order too */
	for (a = eff->child, b = w->child; a && b; a = a->next, b = b->next)
		assert_string_equal(a->string, b->string);
	assert_true(!a && !b);
	cJSON_Delete(w);
}

static int note_count(const cJSON *out)
{
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(out, "not_evaluated"));
}

/* The note at i is file-suffix:line key "what" with what containing part. */
static void check_note(const cJSON *out, int i, int line, const char *key, const char *part)
{
	const cJSON *n = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(out, "not_evaluated"), i);

	assert_non_null(n);
	assert_int_equal((int)cJSON_GetObjectItemCaseSensitive(n, "line")->valuedouble, line);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(n, "key")->valuestring, key);
	if (!strstr(cJSON_GetObjectItemCaseSensitive(n, "what")->valuestring, part))
		fail_msg("note %d: '%s' lacks '%s'", i, cJSON_GetObjectItemCaseSensitive(n, "what")->valuestring, part);
}

static void literals(void **state)
{
	cJSON *out;

	(void)state;
	out = eval_text("# a comment\n"
			"a = 1\n"
			"b = -2.5e3\n"
			"c = 'x' \"y\" '''z'''\n"
			"d = 'tab\\there\\n\\x41\\u00e9'\n"
			"e = r'\\d+'\n"
			"f = (True, False, None)\n"
			"g = [1, [2, (3,)], {'k': 'v', 1: 2}]\n"
			"h = (7)\n"
			"i = 0x1F + 0o17 + 0b11 + 1_000\n"
			"j = .5\n"
			"k = dict()\n"
			"l = ()\n"
			"m = dict(a=1, b=dict(c=[1, 2],),)\n"
			"n = \\\n    42; o = 'semi'\n");
	check_effective(out, "{\"a\":1,\"b\":-2500.0,\"c\":\"xyz\",\"d\":\"tab\\there\\nA\\u00e9\",\"e\":\"\\\\d+\","
			     "\"f\":[true,false,null],\"g\":[1,[2,[3]],{\"k\":\"v\",\"1\":2}],\"h\":7,"
			     "\"i\":1049,\"j\":0.5,\"k\":{},\"l\":[],\"m\":{\"a\":1,\"b\":{\"c\":[1,2]}},"
			     "\"n\":42,\"o\":\"semi\"}");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);
}

static void arithmetic(void **state)
{
	cJSON *out;

	(void)state;
	out = eval_text("lr = 0.02 / 8\n"
			"a = 7 // 2\n"
			"b = -7 // 2\n"
			"c = -7 % 3\n"
			"d = 2 ** 10\n"
			"e = -2 ** 2\n"
			"f = 2 ** -1\n"
			"g = (1 + 2) * 3 - 4 / 2\n"
			"h = [1, 2] + [3]\n"
			"i = (1,) + (2,)\n"
			"j = 'data/' + 'coco/'\n"
			"k = 10 % 4 + 7.5 % 2\n"
			"l = 3 * 1.5\n"
			"m = True + 1\n");
	check_effective(out, "{\"lr\":0.0025,\"a\":3,\"b\":-4,\"c\":2,\"d\":1024,\"e\":-4,\"f\":0.5,"
			     "\"g\":7.0,\"h\":[1,2,3],\"i\":[1,2],\"j\":\"data/coco/\",\"k\":3.5,\"l\":4.5,\"m\":2}");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);

	/* what Python would reject or overflow is not evaluated, never wrapped; a repetition is Python's */
	out = eval_text("a = 1 / 0\nb = 9223372036854775807 + 1\nc = 'a' * 3\nd = [1] + 'x'\ne = 10 ** 400\nf = 1e308 * 10\n"
			"g = [0] * 3\n");
	check_effective(out, "{\"c\":\"aaa\",\"g\":[0,0,0]}");
	assert_int_equal(note_count(out), 5);
	check_note(out, 0, 1, "a", "division by zero");
	check_note(out, 1, 2, "b", "too large");
	check_note(out, 2, 4, "d", "'+' on a list and a str");
	check_note(out, 3, 5, "e", "too large");
	check_note(out, 4, 6, "f", "not finite");
	cJSON_Delete(out);
}

static void names_and_subscripts(void **state)
{
	cJSON *out;

	(void)state;
	out = eval_text("data_root = 'data/coco/'\n"
			"img_norm_cfg = dict(mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375], to_rgb=True)\n"
			"pipe = [dict(type='Normalize', **img_norm_cfg), dict(type='Pad', size_divisor=32)]\n"
			"train = dict(ann_file=data_root + 'a.json', pipeline=pipe)\n"
			"m0 = img_norm_cfg['mean'][0]\n"
			"last = pipe[-1]['type']\n"
			"merged = {**img_norm_cfg, 'to_rgb': False}\n"
			"x = y = 3\n"
			"__hidden = 1\n"
			"shown = __hidden + 1\n"
			"del x\n");
	check_effective(out, "{\"data_root\":\"data/coco/\","
			     "\"img_norm_cfg\":{\"mean\":[123.675,116.28,103.53],\"std\":[58.395,57.12,57.375],\"to_rgb\":true},"
			     "\"pipe\":[{\"type\":\"Normalize\",\"mean\":[123.675,116.28,103.53],\"std\":[58.395,57.12,57.375],"
			     "\"to_rgb\":true},{\"type\":\"Pad\",\"size_divisor\":32}],"
			     "\"train\":{\"ann_file\":\"data/coco/a.json\",\"pipeline\":[{\"type\":\"Normalize\","
			     "\"mean\":[123.675,116.28,103.53],\"std\":[58.395,57.12,57.375],\"to_rgb\":true},"
			     "{\"type\":\"Pad\",\"size_divisor\":32}]},"
			     "\"m0\":123.675,\"last\":\"Pad\",\"merged\":{\"mean\":[123.675,116.28,103.53],"
			     "\"std\":[58.395,57.12,57.375],\"to_rgb\":false},\"y\":3,\"shown\":2}");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);

	/* a name used before it is defined, or a plain dict's attribute: Python raises, so Config does */
	{
		char *msg;

		unit_write(dir, "c.py", "a = b\nb = 1\n", -1);
		msg = error_of("c.py", ENVLOCK_EPARSE);
		assert_non_null(strstr(msg, "c.py:1: name 'b' is not defined"));
		free(msg);
		unit_write(dir, "c.py", "c = dict(x=1)\nd = c.x\n", -1);
		msg = error_of("c.py", ENVLOCK_EPARSE);
		assert_non_null(strstr(msg, "c.py:2: 'dict' object has no attribute 'x'"));
		free(msg);
	}
}

static void not_evaluated(void **state)
{
	cJSON *out;

	(void)state;
	out = eval_text("import os\n"
			"from mmdet.models import RetinaNet\n"
			"model = dict(\n"
			"    type='X',\n"
			"    act=lambda x: x,\n"
			"    name=f'{1}',\n"
			"    dim=len([1, 2]),\n"
			"    seq=[i for i in range(3)],\n"
			"    path=os.path.join('a', 'b'),\n"
			"    cond=1 if True else 2,\n"
			"    ok=2)\n"
			"evil = __import__('os').system('true')\n"
			"w = (n := 3)\n"
			"if True:\n"
			"    flag = 1\n"
			"def f(x):\n"
			"    return x\n"
			"model.update(type='Y')\n"
			"custom_imports = dict(imports=['mmpretrain.models'], allow_failed_imports=False)\n");
	/* f-strings, len(), comprehensions, conditionals, if, and update() are evaluated as Python does */
	check_effective(out, "{\"model\":{\"type\":\"Y\",\"name\":\"1\",\"dim\":2,\"seq\":[0,1,2],\"cond\":1,\"ok\":2},"
			     "\"flag\":1,\"custom_imports\":{\"imports\":[\"mmpretrain.models\"],\"allow_failed_imports\":false}}");
	assert_int_equal(note_count(out), 6);
	check_note(out, 0, 1, "os", "a module (import)");
	check_note(out, 1, 5, "model.act", "a lambda");
	check_note(out, 2, 9, "model.path", "a call to os.path.join()");
	check_note(out, 3, 12, "evil", "a call to __import__()");
	check_note(out, 4, 13, "w", "an assignment expression (:=)");
	check_note(out, 5, 16, "f", "a function defined by f");
	/* the imports are recorded, the bound names left out */
	{
		const cJSON *imp = cJSON_GetObjectItemCaseSensitive(out, "imports");

		assert_int_equal(cJSON_GetArraySize(imp), 2);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(imp, 0), "module")->valuestring, "os");
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(imp, 1), "module")->valuestring,
				    "mmdet.models");
	}
	cJSON_Delete(out);

	/* keys of a dict that is known stay; only the bad entry is left out */
	out = eval_text("model = dict(a=1, b=open('x'), c=dict(d=[x for x in map(str, [1])], e=2))\n");
	check_effective(out, "{\"model\":{\"a\":1,\"c\":{\"e\":2}}}");
	check_note(out, 0, 1, "model.b", "a call to open()");
	check_note(out, 1, 1, "model.c.d", "a call to map()");
	cJSON_Delete(out);
}

static void base_merge(void **state)
{
	cJSON *out;

	(void)state;
	unit_write(dir, "b/model.py", "model = dict(type='R', backbone=dict(depth=50, out=(0, 1), norm=dict(type='BN')),\n"
				      "             head=dict(type='A', loss=dict(type='L1', w=1.0)))\n"
				      "tags = ['a', 'b']\n", -1);
	unit_write(dir, "b/data.py", "data = dict(batch=2, root='d/')\nworkers = 4\n", -1);
	unit_write(dir, "m/child.py", "_base_ = ['../b/model.py', '../b/data.py']\n"
				      "model = dict(backbone=dict(depth=101, norm=dict(requires_grad=False)),\n"
				      "             head=dict(_delete_=True, type='B', extra=1))\n"
				      "tags = ['c']\n"
				      "new = dict(_delete_=True, x=1)\n"
				      "data = dict(batch=8)\n", -1);
	out = eval_opts("m/child.py", NULL, 0, 0);
	/* bases first in order, dicts merged, lists replaced, _delete_ replaces and goes;
	 * a _delete_ in a dict with no base counterpart stays, as mmcv leaves it */
	check_effective(out, "{\"model\":{\"type\":\"R\",\"backbone\":{\"depth\":101,\"out\":[0,1],"
			     "\"norm\":{\"type\":\"BN\",\"requires_grad\":false}},\"head\":{\"type\":\"B\",\"extra\":1}},"
			     "\"tags\":[\"c\"],\"data\":{\"batch\":8,\"root\":\"d/\"},\"workers\":4,"
			     "\"new\":{\"_delete_\":true,\"x\":1}}");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);

	/* a three-level chain with a single-string _base_ */
	unit_write(dir, "m/grand.py", "_base_ = './child.py'\nmodel = dict(backbone=dict(depth=152))\n", -1);
	out = eval_opts("m/grand.py", NULL, 0, 0);
	assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
		cJSON_GetObjectItem(out, "effective"), "model"), "backbone"), "depth")->valuedouble, 152);
	cJSON_Delete(out);
}

static void base_errors(void **state)
{
	char *msg;

	(void)state;
	unit_write(dir, "a.py", "x = 1\nshared = 1\n", -1);
	unit_write(dir, "b.py", "y = 2\nshared = 2\n", -1);
	unit_write(dir, "dup.py", "_base_ = ['./a.py', './b.py']\n", -1);
	msg = error_of("dup.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "duplicate key 'shared' among bases"));
	assert_non_null(strstr(msg, "/a.py and "));
	assert_non_null(strstr(msg, "/b.py"));
	free(msg);

	unit_write(dir, "cyc1.py", "_base_ = './cyc2.py'\n", -1);
	unit_write(dir, "cyc2.py", "_base_ = './cyc1.py'\n", -1);
	msg = error_of("cyc1.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "cycle"));
	free(msg);

	unit_write(dir, "miss.py", "_base_ = './nowhere.py'\n", -1);
	msg = error_of("miss.py", ENVLOCK_ENOTFOUND);
	assert_non_null(strstr(msg, "nowhere.py"));
	free(msg);

	unit_write(dir, "nonlit.py", "_base_ = [get_base()]\n", -1);
	msg = error_of("nonlit.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "nonlit.py:1: name 'get_base' is not defined"));
	free(msg);

	unit_write(dir, "overdict.py", "_base_ = './a.py'\nx = dict(a=1)\n", -1);
	msg = error_of("overdict.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "'x' is a dict in the child config but a int in its base"));
	free(msg);

	unit_write(dir, "syntax.py", "a = (1, 2\n", -1);
	msg = error_of("syntax.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "syntax.py:1: a bracket that is not closed"));
	free(msg);
}

static void base_references(void **state)
{
	cJSON *out;

	(void)state;
	unit_write(dir, "base.py", "train_pipeline = [dict(type='Load'), dict(type='Resize', scale=(1333, 800))]\n"
				   "model = dict(type='M', backbone=dict(depth=50))\nlr = 0.01\n", -1);
	/* mmcv 1.x {{_base_.x}}, and mmengine's _base_.x */
	unit_write(dir, "child.py", "_base_ = ['./base.py']\n"
				    "train_pipeline = {{_base_.train_pipeline}}\n"
				    "depth = {{ _base_.model.backbone.depth }}\n"
				    "data = dict(pipeline=train_pipeline)\n"
				    "head = dict(in_depth=_base_.model.backbone.depth, t=_base_.model['type'])\n"
				    "lr2 = _base_.lr * 2\n"
				    "quoted = '{{_base_.lr}}'\n"
				    "missing = {{_base_.nothere}}\n"
				    "where = '{{ fileBasenameNoExtension }}{{fileExtname}}'\n", -1);
	out = eval_opts("child.py", NULL, 0, 0);
	check_effective(out, "{\"train_pipeline\":[{\"type\":\"Load\"},{\"type\":\"Resize\",\"scale\":[1333,800]}],"
			     "\"model\":{\"type\":\"M\",\"backbone\":{\"depth\":50}},\"lr\":0.01,"
			     "\"depth\":50,\"data\":{\"pipeline\":[{\"type\":\"Load\"},{\"type\":\"Resize\",\"scale\":[1333,800]}]},"
			     "\"head\":{\"in_depth\":50,\"t\":\"M\"},\"lr2\":0.02,\"where\":\"child.py\"}");
	assert_int_equal(note_count(out), 2);
	check_note(out, 0, 7, "quoted", "inside a string literal");
	check_note(out, 1, 8, "missing", "{{_base_.nothere}}, which the bases do not define");
	cJSON_Delete(out);
}

static void read_base_imports(void **state)
{
	cJSON *out;

	(void)state;
	unit_write(dir, "cfg/_base_/runtime.py", "default_scope = 'mmdet'\nlog_level = 'INFO'\n_private = 1\n", -1);
	unit_write(dir, "cfg/_base_/model.py", "model = dict(type='RetinaNet', depth=50)\nother = 1\n", -1);
	unit_write(dir, "cfg/det/new.py", "from mmengine.config import read_base\n"
					  "\n"
					  "with read_base():\n"
					  "    from .._base_.runtime import *\n"
					  "    from .._base_.model import model as base_model\n"
					  "    from mmdet.configs.schedule import *\n"
					  "\n"
					  "model = dict(base_model, depth=101)\n"
					  "log_level = 'DEBUG'\n", -1);
	out = eval_opts("cfg/det/new.py", NULL, 0, 0);
	/* Python's import: * brings the public names, an assignment replaces */
	check_effective(out, "{\"default_scope\":\"mmdet\",\"log_level\":\"DEBUG\","
			     "\"base_model\":{\"type\":\"RetinaNet\",\"depth\":50},"
			     "\"model\":{\"type\":\"RetinaNet\",\"depth\":101}}");
	assert_int_equal(note_count(out), 1);
	check_note(out, 0, 6, "", "package module 'mmdet.configs.schedule'");
	cJSON_Delete(out);
}

/* what tests/fuzz found: a string prefix as the text's first byte, and ';' between read_base() imports */
static void fuzz_findings(void **state)
{
	cJSON *out;

	(void)state;
	{
		char *msg;

		unit_write(dir, "c.py", "f'{x}'\nx = 1\n", -1);
		msg = error_of("c.py", ENVLOCK_EPARSE);
		assert_non_null(strstr(msg, "c.py:1: name 'x' is not defined"));
		free(msg);
	}
	unit_write(dir, "cfg/_base_/a.py", "a = 1\n", -1);
	unit_write(dir, "cfg/_base_/b.py", "b = 2\n", -1);
	unit_write(dir, "cfg/semi.py", "with read_base():\n    from ._base_.a import *; from ._base_.b import *\n", -1);
	out = eval_opts("cfg/semi.py", NULL, 0, 0);
	check_effective(out, "{\"a\":1,\"b\":2}");
	cJSON_Delete(out);
}

/*
 * Python's own semantics, checked against python3 running the same text:
 * one dict held by two names, list edits in place, loops that append,
 * comprehensions, unpacking, augmented assignment, f-strings, format().
 */
static void python_semantics(void **state)
{
	cJSON *out;

	(void)state;
	out = eval_text("a = dict(x=[1, 2], y=dict(z=1))\n"
			"b = a\n"
			"b['x'].append(3)\n"
			"b['y'].update(w=2)\n"
			"c = a['x']\n"
			"c += [4]\n"
			"c.insert(0, 0)\n"
			"c.extend((5,))\n"
			"p = c.pop()\n"
			"q = a.pop('nothere', None)\n"
			"d = [dict(t=i) for i in range(3)]\n"
			"for item in d:\n"
			"    item['u'] = item['t'] * 2\n"
			"    if item['t'] == 1:\n"
			"        continue\n"
			"    item['even'] = True\n"
			"e, (f, g) = 1, (2, 3)\n"
			"h = 10\n"
			"h += 5\n"
			"h //= 2\n"
			"names = {k: v for k, v in zip(['a', 'b'], [1, 2])}\n"
			"s = ', '.join(str(i) for i in range(3))\n"
			"t = tuple(s // 32 for s in (64, 96))\n"
			"m = [(i, 23 + i) for i in range(2)] + [(5, 6)]\n"
			"n = 'x' if len(m) > 2 and not q else 'y'\n"
			"r = f'{s}-{h!s}' + '{}/{name}'.format(1, name='z')\n"
			"del b\n");
	/* what python3 prints for the same text (json.dumps of its globals) */
	check_effective(out, "{\"a\":{\"x\":[0,1,2,3,4],\"y\":{\"z\":1,\"w\":2}},\"c\":[0,1,2,3,4],\"p\":5,\"q\":null,"
			     "\"d\":[{\"t\":0,\"u\":0,\"even\":true},{\"t\":1,\"u\":2},{\"t\":2,\"u\":4,\"even\":true}],"
			     "\"item\":{\"t\":2,\"u\":4,\"even\":true},\"e\":1,\"f\":2,\"g\":3,\"h\":7,"
			     "\"names\":{\"a\":1,\"b\":2},\"s\":\"0, 1, 2\",\"t\":[2,3],\"m\":[[0,23],[1,24],[5,6]],"
			     "\"n\":\"x\",\"r\":\"0, 1, 2-71/z\"}");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);

	/* a conditional and boolean operators evaluate only the side Python does */
	out = eval_text("a = 1 if False else 2\nb = open('x') if False else 3\nc = 4 if True else open('y')\n"
			"d = 0 or [] or 'z'\ne = 1 and 0 and open('q')\nf = None or 2 and 3\n");
	check_effective(out, "{\"a\":2,\"b\":3,\"c\":4,\"d\":\"z\",\"e\":0,\"f\":3}");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);
}

/*
 * mmengine's writes into _base_: attribute and item assignment, del, and
 * an edit through a name that holds a base's value, seen under every
 * key that holds it; the merge then runs over the edited bases.
 */
static void base_writes(void **state)
{
	cJSON *out;

	(void)state;
	unit_write(dir, "bw/base.py", "model = dict(type='M', backbone=dict(depth=50), neck=dict(c=1))\n"
				      "optim_wrapper = dict(type='OptimWrapper', optimizer=dict(lr=0.1))\n"
				      "test_pipeline = [dict(type='Load'), dict(type='Pack', meta_keys=('a', ))]\n"
				      "old = 1\n"
				      "test_dataloader = dict(dataset=dict(pipeline=test_pipeline))\n", -1);
	unit_write(dir, "bw/child.py", "_base_ = './base.py'\n"
				       "_base_.optim_wrapper.type = 'AmpOptimWrapper'\n"
				       "_base_.model.backbone['depth'] = 101\n"
				       "del _base_.old\n"
				       "p = _base_.test_pipeline\n"
				       "p[-1]['meta_keys'] = ('a', 'b')\n"
				       "test_dataloader = dict(dataset=dict(pipeline=p))\n"
				       "detector = _base_.model\n"
				       "detector.pop('neck')\n"
				       "model = dict(type='Wrap', detector=detector)\n", -1);
	out = eval_opts("bw/child.py", NULL, 0, 0);
	check_effective(out, "{\"model\":{\"type\":\"Wrap\",\"backbone\":{\"depth\":101},"
			     "\"detector\":{\"type\":\"M\",\"backbone\":{\"depth\":101}}},"
			     "\"optim_wrapper\":{\"type\":\"AmpOptimWrapper\",\"optimizer\":{\"lr\":0.1}},"
			     "\"test_pipeline\":[{\"type\":\"Load\"},{\"type\":\"Pack\",\"meta_keys\":[\"a\",\"b\"]}],"
			     "\"test_dataloader\":{\"dataset\":{\"pipeline\":[{\"type\":\"Load\"},"
			     "{\"type\":\"Pack\",\"meta_keys\":[\"a\",\"b\"]}]}},"
			     "\"p\":[{\"type\":\"Load\"},{\"type\":\"Pack\",\"meta_keys\":[\"a\",\"b\"]}],"
			     "\"detector\":{\"type\":\"M\",\"backbone\":{\"depth\":101}}}");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);
}

/*
 * What is not evaluated is named by every key path it lands on: a value
 * held by three names, a dict an unevaluated if may have changed (and
 * its alias), a dict an update() not evaluated may have changed.
 */
static void unknown_by_key_path(void **state)
{
	cJSON *out;

	(void)state;
	out = eval_text("v = open('f')\n"
			"a = dict(k=v)\n"
			"b = [v]\n"
			"d = dict(x=1)\n"
			"e = d\n"
			"if open('c'):\n"
			"    e['x'] = 2\n"
			"w = dict(y=1)\n"
			"w.update(open('u'))\n");
	check_effective(out, "{\"a\":{}}");
	assert_int_equal(note_count(out), 8);
	check_note(out, 0, 6, "", "an if statement whose condition is not evaluated");
	check_note(out, 1, 9, "", "a statement not evaluated: a call to open()");
	check_note(out, 2, 1, "v", "a call to open()");
	check_note(out, 3, 1, "a.k", "a call to open()");
	check_note(out, 4, 1, "b", "a call to open()");
	check_note(out, 5, 7, "d", "an if statement whose condition is not evaluated");
	check_note(out, 6, 7, "e", "an if statement whose condition is not evaluated");
	check_note(out, 7, 9, "w", "a statement not evaluated");
	cJSON_Delete(out);
}

/* .json bases, _deprecation_ dropped, integers past 64 bits exact, mmengine's reserved keys, limits */
static void bases_and_keys(void **state)
{
	cJSON *out;
	char *msg;

	(void)state;
	unit_write(dir, "j/base.json", "{\"model\": {\"depth\": 50, \"w\": [1.5, null, true]}, \"seed\": 9007199254740993}\n", -1);
	unit_write(dir, "j/c.py", "_base_ = './base.json'\nmodel = dict(depth=101)\n_deprecation_ = dict(expected='x.py')\n"
				  "big = 12345678901234567890\nhuge = 123456789012345678901234567890\n"
				  "low = -9223372036854775808\n", -1);
	out = eval_opts("j/c.py", NULL, 0, 0);
	{
		char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(out, "effective"));

		/* the digits themselves, not a double's nearest; _deprecation_ gone */
		assert_string_equal(text, "{\"model\":{\"depth\":101,\"w\":[1.5,null,true]},\"seed\":9007199254740993,"
					  "\"big\":12345678901234567890,\"low\":-9223372036854775808}");
		free(text);
		/* past 2^64 no lock could hold it: named, not rounded */
		assert_int_equal(note_count(out), 1);
		check_note(out, 0, 5, "huge", "past 64 bits");
		text = NULL;
		free(text);
	}
	cJSON_Delete(out);

	unit_write(dir, "j/res.py", "filename = 'x'\n", -1);
	msg = error_of("j/res.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "res.py: 'filename' is reserved for config file"));
	free(msg);
	/* a .yaml base, with its own _base_, read as PyYAML reads it (1e-4 is a str there, 1.5e-3 a float) */
	unit_write(dir, "j/b0.yaml", "optimizer:\n  type: SGD\n  lr: 0.02\n", -1);
	unit_write(dir, "j/b.yaml", "_base_: ./b0.yaml\noptimizer: {lr: 1.5e-3, eps: 1e-4}\nflip: yes\n"
				    "scales: [[1333, 800], [1333, 640]]\n", -1);
	unit_write(dir, "j/yaml.py", "_base_ = './b.yaml'\noptimizer = dict(momentum=0.9)\n", -1);
	out = eval_opts("j/yaml.py", NULL, 0, 0);
	check_effective(out, "{\"optimizer\":{\"type\":\"SGD\",\"lr\":0.0015,\"eps\":\"1e-4\",\"momentum\":0.9},"
			     "\"flip\":true,\"scales\":[[1333,800],[1333,640]]}");
	cJSON_Delete(out);
	unit_write(dir, "j/bad.yaml", "a: &x 1\nb: *x\n", -1);
	unit_write(dir, "j/bad.py", "_base_ = './bad.yaml'\n", -1);
	msg = error_of("j/bad.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "bad.yaml:1:"));
	free(msg);
	unit_write(dir, "j/cyc.py", "a = []\na.append(a)\n", -1);
	msg = error_of("j/cyc.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "cyc.py:2: a value that would hold itself"));
	free(msg);
	unit_write(dir, "j/loop.py", "x = [0] * 1000\nfor i in x:\n    for j in x:\n        pass\n", -1);
	msg = error_of("j/loop.py", ENVLOCK_ELIMIT);
	assert_non_null(strstr(msg, "loop steps"));
	free(msg);
	unit_write(dir, "j/raise.py", "x = dict(a=1)\ny = x['b']\n", -1);
	msg = error_of("j/raise.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "raise.py:2: KeyError: 'b'"));
	free(msg);
}

static void cfg_options(void **state)
{
	static const char *const opts[] = { "a=1", "b=1.5", "c=True", "d=false", "e=None", "f=abc", "g=[1,2,(3,x)]",
					    "h=(1, 2)", "i='[a, b]'", "j=1,2", "k.l.m=3", "n=1_000", "o=-7", "p=",
					    "q=[]", "k.l.z=[[1],[2]]" };
	envlock_ctx *ctx;
	cJSON *out;
	static const char *const bad[] = { "novalue" };
	static const char *const unbalanced[] = { "a=[1,(2]" };

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(el_config_parse_options(&out, ctx, opts, sizeof(opts) / sizeof(*opts)), 0);
	check_json(cJSON_GetObjectItem(out, "effective"),
		   "{\"a\":1,\"b\":1.5,\"c\":true,\"d\":false,\"e\":null,\"f\":\"abc\",\"g\":[1,2,[3,\"x\"]],"
		   "\"h\":[1,2],\"i\":[\"a\",\"b\"],\"j\":[1,2],\"k\":{\"l\":{\"m\":3,\"z\":[[1],[2]]}},\"n\":1000,"
		   "\"o\":-7,\"p\":\"\",\"q\":[]}");
	cJSON_Delete(out);
	assert_int_equal(el_config_parse_options(&out, ctx, bad, 1), ENVLOCK_EINVAL);
	assert_non_null(strstr(envlock_error_last(ctx), "expected key=value"));
	assert_int_equal(el_config_parse_options(&out, ctx, unbalanced, 1), ENVLOCK_EINVAL);
	envlock_ctx_free(ctx);

	/* merged last, over the chain, with a list index as mmcv allows */
	{
		static const char *const o2[] = { "model.backbone.depth=101", "model.heads.0.w=2", "optimizer.lr=0.01",
						  "new.key=x" };

		unit_write(dir, "o.py", "model = dict(backbone=dict(depth=50, style='pytorch'), heads=[dict(w=1), dict(w=3)])\n"
					"optimizer = dict(type='SGD', lr=0.02)\n", -1);
		out = eval_opts("o.py", o2, 4, 0);
		check_effective(out, "{\"model\":{\"backbone\":{\"depth\":101,\"style\":\"pytorch\"},"
				     "\"heads\":[{\"w\":2},{\"w\":3}]},\"optimizer\":{\"type\":\"SGD\",\"lr\":0.01},"
				     "\"new\":{\"key\":\"x\"}}");
		cJSON_Delete(out);
	}
}

static void hostile(void **state)
{
	char *big, *msg;
	size_t n, i;
	clock_t t0;
	cJSON *out;

	(void)state;
	/* deep nesting: brackets, unary chains, values nested by reference */
	big = malloc(1 << 20);
	n = (size_t)sprintf(big, "a = ");
	for (i = 0; i < 100000; i++)
		big[n++] = '[';
	big[n] = '\0';
	unit_write(dir, "deep.py", big, -1);
	msg = error_of("deep.py", ENVLOCK_ELIMIT);
	assert_non_null(strstr(msg, "nested deeper than 200"));
	free(msg);

	n = (size_t)sprintf(big, "a = ");
	for (i = 0; i < 100000; i++)
		big[n++] = '-';
	sprintf(big + n, "1\n");
	unit_write(dir, "unary.py", big, -1);
	msg = error_of("unary.py", ENVLOCK_ELIMIT);
	free(msg);

	n = (size_t)sprintf(big, "a = 1\n");
	for (i = 0; i < 300; i++)
		n += (size_t)sprintf(big + n, "a = [a]\n");
	unit_write(dir, "refdeep.py", big, -1);
	msg = error_of("refdeep.py", ENVLOCK_ELIMIT);
	assert_non_null(strstr(msg, "nested deeper than 200"));
	free(msg);

	/* doubling by reference: stopped by the value count, not by memory */
	n = (size_t)sprintf(big, "a = [1, 2]\n");
	for (i = 0; i < 40; i++)
		n += (size_t)sprintf(big + n, "a = a + a\n");
	unit_write(dir, "double.py", big, -1);
	t0 = clock();
	msg = error_of("double.py", ENVLOCK_ELIMIT);
	assert_non_null(strstr(msg, "more than 1000000 values"));
	assert_true(clock() - t0 < 30 * CLOCKS_PER_SEC); /* linear: 0.1 s; quadratic would be hours */
	free(msg);

	n = (size_t)sprintf(big, "s = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'\n");
	for (i = 0; i < 30; i++)
		n += (size_t)sprintf(big + n, "s = s + s\n");
	unit_write(dir, "longstr.py", big, -1);
	msg = error_of("longstr.py", ENVLOCK_ELIMIT);
	assert_non_null(strstr(msg, "a string longer than"));
	free(msg);

	/* a file over 1 MiB is not read */
	memset(big, '#', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	unit_write(dir, "huge.py", big, -1);
	{
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/huge.py", dir);
		f = fopen(path, "ab");
		fputs("\nx = 1\n", f);
		fclose(f);
	}
	msg = error_of("huge.py", ENVLOCK_ELIMIT);
	assert_non_null(strstr(msg, "larger than 1048576 bytes"));
	free(msg);

	/* 10^5 keys in one file, and in one dict(...): linear, quick */
	n = 0;
	for (i = 0; i < 100000; i++)
		n += (size_t)sprintf(big + n, "%c%c%c%c=%zu\n", 'a' + (int)(i % 26), 'a' + (int)(i / 26 % 26),
				     'a' + (int)(i / 676 % 26), 'a' + (int)(i / 17576 % 26), i % 10);
	unit_write(dir, "keys.py", big, -1);
	t0 = clock();
	out = eval_opts("keys.py", NULL, 0, 0);
	assert_true(clock() - t0 < 30 * CLOCKS_PER_SEC); /* linear: 0.1 s; quadratic would be hours */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(out, "effective")), 100000);
	cJSON_Delete(out);

	n = (size_t)sprintf(big, "d = dict(");
	for (i = 0; i < 100000; i++)
		n += (size_t)sprintf(big + n, "%c%c%c%c=1,", 'a' + (int)(i % 26), 'a' + (int)(i / 26 % 26),
				     'a' + (int)(i / 676 % 26), 'a' + (int)(i / 17576 % 26));
	sprintf(big + n, ")\n");
	unit_write(dir, "dictkeys.py", big, -1);
	t0 = clock();
	out = eval_opts("dictkeys.py", NULL, 0, 0);
	assert_true(clock() - t0 < 30 * CLOCKS_PER_SEC); /* linear: 0.1 s; quadratic would be hours */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "effective"), "d")), 100000);
	cJSON_Delete(out);

	/* 10^6 keys cannot fit the 1 MiB a config may have: refused before reading */
	{
		envlock_ctx *ctx;
		size_t cap = 12u << 20, len = 0;
		char *text = malloc(cap);

		for (i = 0; i < 1000000; i++)
			len += (size_t)sprintf(text + len, "k%zu=1\n", i);
		assert_int_equal(envlock_ctx_new(&ctx), 0);
		t0 = clock();
		assert_int_equal(el_config_effective_text(&out, ctx, "million.py", text, len, NULL, 0), ENVLOCK_ELIMIT);
		assert_true(clock() - t0 < CLOCKS_PER_SEC);
		envlock_ctx_free(ctx);
		free(text);
	}

	/* stray bytes, unclosed strings, bad escapes: one error line, no crash */
	unit_write(dir, "bytes.py", "a = 1\nb = $\n", -1);
	msg = error_of("bytes.py", ENVLOCK_EPARSE);
	assert_non_null(strstr(msg, "bytes.py:2:"));
	free(msg);
	unit_write(dir, "unclosed.py", "a = '''never\n", -1);
	msg = error_of("unclosed.py", ENVLOCK_EPARSE);
	free(msg);
	unit_write(dir, "nul.py", "a = 'x\\x00y'\nb = b'raw'\n", -1);
	out = eval_opts("nul.py", NULL, 0, 0);
	check_effective(out, "{}");
	check_note(out, 0, 1, "a", "NUL");
	check_note(out, 1, 2, "b", "a bytes literal");
	cJSON_Delete(out);
	free(big);
}

/* The mmdet 2.25 Faster R-CNN chain, merged, against a golden file written by hand. */
static void golden(const char *config, const char *expected)
{
	envlock_ctx *ctx;
	cJSON *out = NULL, *want;
	FILE *f = fopen(expected, "rb");
	char *text = malloc(1 << 20);
	size_t n;

	assert_non_null(f);
	n = fread(text, 1, (1 << 20) - 1, f);
	text[n] = '\0';
	fclose(f);
	want = cJSON_Parse(text);
	if (!want)
		fail_msg("%s: not JSON", expected);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (el_config_effective(&out, ctx, config, NULL, 0))
		fail_msg("%s: %s", config, envlock_error_last(ctx));
	envlock_ctx_free(ctx);
	{
		const cJSON *eff = cJSON_GetObjectItem(out, "effective");
		const cJSON *weff = cJSON_GetObjectItem(want, "effective");
		const cJSON *a, *b;

		char *w = cJSON_PrintUnformatted(weff), *wn = cJSON_PrintUnformatted(cJSON_GetObjectItem(want, "not_evaluated"));

		check_json(eff, w);
		for (a = eff->child, b = weff->child; a && b; a = a->next, b = b->next)
			assert_string_equal(a->string, b->string);
		assert_true(!a && !b);
		check_json(cJSON_GetObjectItem(out, "not_evaluated"), wn);
		free(w);
		free(wn);
	}
	cJSON_Delete(want);
	cJSON_Delete(out);
	free(text);
}

static void mmdet_faster_rcnn(void **state)
{
	(void)state;
	golden(FIXTURES "/configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py",
	       FIXTURES "/expected/faster_rcnn_r50_fpn_1x_coco.json");
	golden(FIXTURES "/configs/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py",
	       FIXTURES "/expected/faster_rcnn_r101_fpn_1x_coco.json");
}

/* The fixture config at rel (under tests/fixtures/configs), evaluated. */
static cJSON *fixture(const char *rel)
{
	envlock_ctx *ctx;
	cJSON *out = NULL;
	char path[4096];

	snprintf(path, sizeof(path), FIXTURES "/%s", rel);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (el_config_effective(&out, ctx, path, NULL, 0))
		fail_msg("%s: %s", rel, envlock_error_last(ctx));
	envlock_ctx_free(ctx);
	return out;
}

/* The value at a dotted path of the effective config, as JSON text compared with want. */
static void check_at(const cJSON *out, const char *path, const char *want)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(out, "effective");
	char buf[512], *part, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part && v; part = strtok_r(NULL, ".", &save))
		v = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, atoi(part)) : cJSON_GetObjectItemCaseSensitive(v, part);
	if (!v)
		fail_msg("%s: not in the effective config", path);
	check_json(v, want);
}

static void check_keys(const cJSON *out, const char *const *keys, size_t n)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(out, "effective")->child;

	for (size_t i = 0; i < n; i++, k = k->next) {
		assert_non_null(k);
		assert_string_equal(k->string, keys[i]);
	}
	assert_null(k);
}

static void mmdet_delete(void **state)
{
	static const char *const keys[] = { "model", "dataset_type", "data_root", "img_norm_cfg", "train_pipeline",
					    "test_pipeline", "data", "evaluation", "optimizer", "optimizer_config",
					    "lr_config", "runner", "checkpoint_config", "log_config", "custom_hooks",
					    "dist_params", "log_level", "load_from", "resume_from", "workflow",
					    "opencv_num_threads", "mp_start_method", "auto_scale_lr" };
	cJSON *out;

	(void)state;
	out = fixture("mmdet/regnet/faster_rcnn_regnetx-3.2GF_fpn_1x_coco.py");
	/* _delete_=True: the ResNet's keys are gone, and so is _delete_ itself */
	check_at(out, "model.backbone", "{\"type\":\"RegNet\",\"arch\":\"regnetx_3.2gf\",\"out_indices\":[0,1,2,3],"
					"\"frozen_stages\":1,\"norm_cfg\":{\"type\":\"BN\",\"requires_grad\":true},"
					"\"norm_eval\":true,\"style\":\"pytorch\",\"init_cfg\":{\"type\":\"Pretrained\","
					"\"checkpoint\":\"open-mmlab://regnetx_3.2gf\"}}");
	check_at(out, "model.neck", "{\"type\":\"FPN\",\"in_channels\":[96,192,432,1008],\"out_channels\":256,\"num_outs\":5}");
	check_at(out, "model.rpn_head.type", "\"RPNHead\"");
	check_at(out, "img_norm_cfg", "{\"mean\":[103.53,116.28,123.675],\"std\":[57.375,57.12,58.395],\"to_rgb\":false}");
	/* data.train merged: its pipeline is the child's, the rest the base's; val keeps the base's pipeline */
	check_at(out, "data.train.type", "\"CocoDataset\"");
	check_at(out, "data.train.img_prefix", "\"data/coco/train2017/\"");
	check_at(out, "data.train.pipeline.4", "{\"type\":\"Normalize\",\"mean\":[103.53,116.28,123.675],"
					       "\"std\":[57.375,57.12,58.395],\"to_rgb\":false}");
	check_at(out, "data.val.pipeline.1.transforms.2.to_rgb", "true");
	check_at(out, "optimizer", "{\"type\":\"SGD\",\"lr\":0.02,\"momentum\":0.9,\"weight_decay\":0.00005}");
	check_keys(out, keys, sizeof(keys) / sizeof(*keys));
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);
}

static void mmocr_base_vars(void **state)
{
	static const char *const keys[] = { "img_norm_cfg", "train_pipeline", "dataset_type", "root", "img_prefix",
					    "train_anno_file1", "train1", "test", "train_list", "test_list", "optimizer",
					    "optimizer_config", "lr_config", "total_epochs", "label_convertor", "model",
					    "data", "cudnn_benchmark" };
	static const char *const train1 =
		"{\"type\":\"OCRDataset\",\"img_prefix\":\"tests/data/ocr_toy_dataset/imgs\","
		"\"ann_file\":\"tests/data/ocr_toy_dataset/label.txt\","
		"\"loader\":{\"type\":\"HardDiskLoader\",\"repeat\":100,\"parser\":{\"type\":\"LineStrParser\","
		"\"keys\":[\"filename\",\"text\"],\"keys_idx\":[0,1],\"separator\":\" \"}},\"pipeline\":null,"
		"\"test_mode\":false}";
	char want[2048];
	cJSON *out;

	(void)state;
	out = fixture("mmocr/configs/textrecog/crnn/crnn_toy_dataset.py");
	snprintf(want, sizeof(want), "[%s]", train1);
	check_at(out, "train_list", want);
	check_at(out, "data.train.datasets", want);
	check_at(out, "test_list", "[{\"type\":\"OCRDataset\",\"ann_file\":\"tests/data/ocr_toy_dataset/label.lmdb\","
				   "\"loader\":{\"type\":\"LmdbLoader\",\"repeat\":1},\"test_mode\":true}]");
	check_at(out, "data.train.pipeline.2", "{\"type\":\"Normalize\",\"mean\":[127],\"std\":[127]}");
	check_at(out, "model.label_convertor.dict_type", "\"DICT36\"");
	check_keys(out, keys, sizeof(keys) / sizeof(*keys));
	/* the f-string path is evaluated, as Python formats it */
	check_at(out, "img_prefix", "\"tests/data/ocr_toy_dataset/imgs\"");
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);
}

static void mmpose_vitpose(void **state)
{
	static const char *const keys[] = { "default_scope", "default_hooks", "env_cfg", "log_level", "load_from",
					    "resume", "backend_args", "train_cfg", "val_cfg", "test_cfg",
					    "custom_imports", "optim_wrapper", "codec", "model", "data_root",
					    "val_pipeline", "val_dataloader", "test_dataloader", "val_evaluator" };
	cJSON *out;

	(void)state;
	out = fixture("mmpose/configs/body_2d_keypoint/topdown_heatmap/coco/td-hm_ViTPose-small_8xb64-210e_coco-256x192.py");
	check_at(out, "custom_imports", "{\"imports\":[\"mmpose.engine.optim_wrappers.layer_decay_optim_wrapper\"],"
					"\"allow_failed_imports\":false}");
	check_at(out, "model.backbone.type", "\"mmpretrain.VisionTransformer\"");
	check_at(out, "model.backbone.arch", "{\"embed_dims\":384,\"num_layers\":12,\"num_heads\":12,\"feedforward_channels\":1536}");
	check_at(out, "model.backbone.init_cfg.checkpoint",
		 "\"https://download.openmmlab.com/mmpose/v1/pretrained_models/mae_pretrain_vit_small.pth\"");
	check_at(out, "model.head.decoder", "{\"type\":\"UDPHeatmap\",\"input_size\":[192,256],\"heatmap_size\":[48,64],\"sigma\":2}");
	check_at(out, "default_hooks.checkpoint", "{\"type\":\"CheckpointHook\",\"interval\":10,\"save_best\":\"coco/AP\","
						  "\"rule\":\"greater\",\"max_keep_ckpts\":1}");
	check_at(out, "train_cfg", "{\"by_epoch\":true,\"max_epochs\":210,\"val_interval\":10}");
	check_at(out, "optim_wrapper.optimizer", "{\"type\":\"AdamW\",\"lr\":0.0005,\"betas\":[0.9,0.999],\"weight_decay\":0.1}");
	check_at(out, "val_pipeline.1.input_size", "[192,256]");
	check_at(out, "test_dataloader.dataset.ann_file", "\"annotations/person_keypoints_val2017.json\"");
	check_at(out, "val_evaluator.ann_file", "\"data/coco/annotations/person_keypoints_val2017.json\"");
	check_keys(out, keys, sizeof(keys) / sizeof(*keys));
	assert_int_equal(note_count(out), 0);
	cJSON_Delete(out);
}

static void mmpretrain_read_base(void **state)
{
	cJSON *out;

	(void)state;
	out = fixture("mmpretrain/configs/resnet/resnet18_8xb32_in1k.py");
	/* classes used as types are imports: those keys are left out and listed */
	check_effective(out, "{\"model\":{\"backbone\":{\"depth\":18,\"num_stages\":4,\"out_indices\":[3],\"style\":\"pytorch\"},"
			     "\"neck\":{},\"head\":{\"num_classes\":1000,\"in_channels\":512,\"loss\":{\"loss_weight\":1.0},"
			     "\"topk\":[1,5]}},"
			     "\"optim_wrapper\":{\"optimizer\":{\"lr\":0.1,\"momentum\":0.9,\"weight_decay\":0.0001}},"
			     "\"param_scheduler\":{\"by_epoch\":true,\"milestones\":[30,60,90],\"gamma\":0.1},"
			     "\"train_cfg\":{\"by_epoch\":true,\"max_epochs\":300,\"val_interval\":1},"
			     "\"val_cfg\":{},\"test_cfg\":{},\"auto_scale_lr\":{\"base_batch_size\":512}}");
	assert_int_equal(note_count(out), 7);
	check_note(out, 0, 8, "model.type", "the name 'ImageClassifier', which is imported");
	check_note(out, 1, 10, "model.backbone.type", "the name 'ResNet', which is imported");
	check_note(out, 2, 15, "model.neck.type", "GlobalAveragePooling");
	check_note(out, 5, 6, "optim_wrapper.optimizer.type", "the name 'SGD', which is imported");
	check_note(out, 6, 10, "param_scheduler.type", "MultiStepLR");
	cJSON_Delete(out);
}

/* envlock save --config F --cfg-options K=V: the lock's configs section carries the effective value */
static void recorded_by_the_probe(void **state)
{
	static const char *const configs[] = { FIXTURES "/configs/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py",
					       FIXTURES "/mmocr/configs/textrecog/crnn/crnn_toy_dataset.py" };
	static const char *const options[] = { "optimizer.lr=0.01", "runner.max_epochs=24" };
	envlock_probe_opts opts;
	envlock_lock *lock;
	const cJSON *files, *eff;
	char *root = unit_tmpdir();

	(void)state;
	memset(&opts, 0, sizeof(opts));
	opts.root = root;
	opts.configs = configs;
	opts.config_count = 2;
	opts.cfg_options = options;
	opts.cfg_option_count = 2;
	lock = unit_probe_opts(&opts);
	unit_rmtree(root);
	files = unit_get(lock, "configs.files");
	/* the requested r101, then its bases: only a requested config has an effective value */
	eff = cJSON_GetObjectItem(cJSON_GetArrayItem(files, 0), "effective");
	assert_non_null(eff);
	check_json(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(eff, "value"), "model"), "backbone"),
		   "{\"type\":\"ResNet\",\"depth\":101,\"num_stages\":4,\"out_indices\":[0,1,2,3],\"frozen_stages\":1,"
		   "\"norm_cfg\":{\"type\":\"BN\",\"requires_grad\":true},\"norm_eval\":true,\"style\":\"pytorch\","
		   "\"init_cfg\":{\"type\":\"Pretrained\",\"checkpoint\":\"torchvision://resnet101\"}}");
	check_json(cJSON_GetObjectItem(cJSON_GetObjectItem(eff, "value"), "optimizer"),
		   "{\"type\":\"SGD\",\"lr\":0.01,\"momentum\":0.9,\"weight_decay\":0.0001}");
	check_json(cJSON_GetObjectItem(cJSON_GetObjectItem(eff, "value"), "runner"),
		   "{\"type\":\"EpochBasedRunner\",\"max_epochs\":24}");
	check_json(cJSON_GetObjectItem(eff, "cfg_options"), "[\"optimizer.lr=0.01\",\"runner.max_epochs=24\"]");
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(files, 1), "effective"));
	/* the mmocr chain: its f-string path evaluated through {{_base_.train_list}}, nothing left out */
	for (int i = 0; i < cJSON_GetArraySize(files); i++) {
		const cJSON *f = cJSON_GetArrayItem(files, i);

		if (!strstr(cJSON_GetObjectItem(f, "path")->valuestring, "crnn_toy_dataset.py"))
			continue;
		eff = cJSON_GetObjectItem(f, "effective");
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(eff, "not_evaluated")), 0);
		check_json(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(eff, "value"),
										      "train_list"), 0), "img_prefix"),
			   "\"tests/data/ocr_toy_dataset/imgs\"");
		envlock_lock_free(lock);
		return;
	}
	fail_msg("the mmocr config is not in the lock");
}

/* A config requested after it was reached as a base still gets its effective value. */
static void requested_after_its_child(void **state)
{
	static const char *const configs[] = { FIXTURES "/configs/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py",
					       FIXTURES "/configs/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py" };
	envlock_probe_opts opts;
	envlock_lock *lock;
	const cJSON *files;
	char *root = unit_tmpdir();
	int with = 0;

	(void)state;
	memset(&opts, 0, sizeof(opts));
	opts.root = root;
	opts.configs = configs;
	opts.config_count = 2;
	lock = unit_probe_opts(&opts);
	unit_rmtree(root);
	files = unit_get(lock, "configs.files");
	for (int i = 0; i < cJSON_GetArraySize(files); i++) {
		const cJSON *f = cJSON_GetArrayItem(files, i), *eff = cJSON_GetObjectItem(f, "effective");

		if (!eff)
			continue;
		with++;
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "requested")));
		if (strstr(cJSON_GetObjectItem(f, "path")->valuestring, "r50_fpn_1x_coco.py"))
			check_json(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(eff, "value"),
											       "model"), "backbone"), "depth"), "50");
	}
	assert_int_equal(with, 2);
	envlock_lock_free(lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(literals, setup, teardown),
		cmocka_unit_test_setup_teardown(arithmetic, setup, teardown),
		cmocka_unit_test_setup_teardown(names_and_subscripts, setup, teardown),
		cmocka_unit_test_setup_teardown(not_evaluated, setup, teardown),
		cmocka_unit_test_setup_teardown(base_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(base_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(base_references, setup, teardown),
		cmocka_unit_test_setup_teardown(read_base_imports, setup, teardown),
		cmocka_unit_test_setup_teardown(fuzz_findings, setup, teardown),
		cmocka_unit_test_setup_teardown(python_semantics, setup, teardown),
		cmocka_unit_test_setup_teardown(base_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_by_key_path, setup, teardown),
		cmocka_unit_test_setup_teardown(bases_and_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(cfg_options, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile, setup, teardown),
		cmocka_unit_test(mmdet_faster_rcnn),
		cmocka_unit_test(mmdet_delete),
		cmocka_unit_test(mmocr_base_vars),
		cmocka_unit_test(mmpose_vitpose),
		cmocka_unit_test(mmpretrain_read_base),
		cmocka_unit_test(recorded_by_the_probe),
		cmocka_unit_test(requested_after_its_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
