/*
 * Unit tests for the configs probe: OpenMMLab config files and their
 * _base_ chains, on trees written here (every form of _base_, cycles,
 * diamonds, missing and bad files, the limits) and on the mmdetection
 * tree in tests/fixtures/configs.
 */
#include "unit.h"

#include "util/hash.h"

#define FIXTURE_DIR "tests/fixtures/configs/configs"

/* A scratch folder that is also the current directory while a test runs. */
typedef struct {
	char *dir;
	char top[4096];
} scratch;

static void scratch_enter(scratch *s)
{
	assert_non_null(getcwd(s->top, sizeof(s->top)));
	s->dir = unit_tmpdir();
	assert_int_equal(chdir(s->dir), 0);
}

static void scratch_leave(scratch *s)
{
	assert_int_equal(chdir(s->top), 0);
	unit_rmtree(s->dir);
}

/* Probe an empty root (the configs are read from the live filesystem). */
static envlock_lock *probe_list(const char *const *configs, size_t n)
{
	envlock_probe_opts opts;
	envlock_lock *lock;
	char *root = unit_tmpdir();

	memset(&opts, 0, sizeof(opts));
	opts.root = root;
	opts.configs = configs;
	opts.config_count = n;
	lock = unit_probe_opts(&opts);
	unit_rmtree(root);
	return lock;
}

static envlock_lock *probe_one(const char *config)
{
	const char *configs[] = { config };

	return probe_list(configs, 1);
}

static const cJSON *files_of(const envlock_lock *lock)
{
	const cJSON *files = unit_get(lock, "configs.files");

	assert_true(cJSON_IsArray(files));
	return files;
}

static int file_count(const envlock_lock *lock)
{
	return cJSON_GetArraySize(files_of(lock));
}

static const cJSON *file_at(const envlock_lock *lock, int i)
{
	const cJSON *f = cJSON_GetArrayItem(files_of(lock), i);

	assert_non_null(f);
	return f;
}

/* The "bases" of file i, joined with "|" ("" for none, "-" when missing). */
static char *bases_of(const envlock_lock *lock, int i)
{
	static char buf[4096];
	const cJSON *b = el_jget(file_at(lock, i), "bases"), *item;
	size_t n = 0;

	if (!cJSON_IsArray(b))
		return strcpy(buf, "-");
	buf[0] = '\0';
	cJSON_ArrayForEach(item, b) {
		assert_true(cJSON_IsString(item));
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "|" : "", item->valuestring);
	}
	return buf;
}

/* The whole file at path (malloc'd), its length in *len. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	data = malloc((size_t)n + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return data;
}

/* File i is path, read completely: digest, size and text match the bytes on disk. */
static void assert_recorded(const envlock_lock *lock, int i, const char *path, bool requested,
			    const char *bases)
{
	const cJSON *f = file_at(lock, i), *text = el_jget(f, "text");
	char hex[EL_SHA256_HEX];
	size_t len;
	char *data;

	assert_string_equal(el_jget_str(f, "path"), path);
	assert_true(cJSON_IsBool(el_jget(f, "requested")));
	assert_int_equal(el_jget_bool(f, "requested", !requested), requested);
	assert_null(el_jget(f, "error"));
	data = slurp(path, &len);
	el_sha256_buf(data, len, hex);
	assert_string_equal(el_jget_str(f, "sha256"), hex);
	assert_int_equal(el_jget_int(f, "size", -1), (long long)len);
	assert_true(cJSON_IsString(text));
	assert_int_equal(strlen(text->valuestring), len);
	assert_memory_equal(text->valuestring, data, len);
	assert_string_equal(bases_of(lock, i), bases);
	free(data);
}

/* File i could not be read, for reason why. */
static void assert_refused(const envlock_lock *lock, int i, const char *path, bool requested,
			   const char *why)
{
	const cJSON *f = file_at(lock, i);

	assert_string_equal(el_jget_str(f, "path"), path);
	assert_int_equal(el_jget_bool(f, "requested", !requested), requested);
	assert_string_equal(el_jget_str(f, "error"), why);
	assert_null(el_jget(f, "sha256"));
	assert_null(el_jget(f, "text"));
	assert_null(el_jget(f, "bases"));
}

static void assert_warnings(const envlock_lock *lock, size_t n)
{
	if (envlock_lock_warning_count(lock) != n)
		for (size_t i = 0; i < envlock_lock_warning_count(lock); i++)
			print_message("warning: %s\n", envlock_lock_warning(lock, i));
	assert_int_equal(envlock_lock_warning_count(lock), n);
}

static void no_configs_is_absent(void **state)
{
	envlock_lock *lock = probe_list(NULL, 0);

	(void)state;
	assert_string_equal(unit_str(lock, "configs.status"), "absent");
	assert_null(unit_get(lock, "configs.files")); /* absent sections hold their status only */
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);
}

/* mmdetection's own layout: r101 -> r50 1x -> the four _base_ files. */
static void fixture_three_level_chain(void **state)
{
	static const char cfg[] = FIXTURE_DIR "/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py";
	envlock_lock *lock;

	(void)state;
	if (access(cfg, R_OK) != 0)
		fail_msg("'%s' not found: run the unit tests from the repository root", cfg);
	lock = probe_one(cfg);
	assert_string_equal(unit_str(lock, "configs.status"), "present");
	assert_int_equal(file_count(lock), 6);
	assert_recorded(lock, 0, cfg, true, FIXTURE_DIR "/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py");
	assert_recorded(lock, 1, FIXTURE_DIR "/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py", false,
			FIXTURE_DIR "/_base_/models/faster_rcnn_r50_fpn.py|"
			FIXTURE_DIR "/_base_/datasets/coco_detection.py|"
			FIXTURE_DIR "/_base_/schedules/schedule_1x.py|"
			FIXTURE_DIR "/_base_/default_runtime.py");
	assert_recorded(lock, 2, FIXTURE_DIR "/_base_/models/faster_rcnn_r50_fpn.py", false, "");
	assert_recorded(lock, 3, FIXTURE_DIR "/_base_/datasets/coco_detection.py", false, "");
	assert_recorded(lock, 4, FIXTURE_DIR "/_base_/schedules/schedule_1x.py", false, "");
	assert_recorded(lock, 5, FIXTURE_DIR "/_base_/default_runtime.py", false, "");
	assert_null(unit_get(lock, "configs.files.1.unresolved_base"));
	assert_warnings(lock, 0);
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);
}

/* Both fixture configs named: the r50 one, met as a base first, becomes requested. */
static void fixture_both_requested(void **state)
{
	const char *configs[] = { FIXTURE_DIR "/faster_rcnn/faster_rcnn_r101_fpn_1x_coco.py",
				  "./" FIXTURE_DIR "/faster_rcnn/../faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py" };
	envlock_lock *lock;

	(void)state;
	lock = probe_list(configs, 2);
	assert_int_equal(file_count(lock), 6);
	assert_string_equal(unit_str(lock, "configs.files.1.path"),
			    FIXTURE_DIR "/faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py");
	assert_true(cJSON_IsTrue(unit_get(lock, "configs.files.0.requested")));
	assert_true(cJSON_IsTrue(unit_get(lock, "configs.files.1.requested")));
	assert_true(cJSON_IsFalse(unit_get(lock, "configs.files.2.requested")));
	assert_warnings(lock, 0);
	envlock_lock_free(lock);
}

static void chain_in_scratch(void **state)
{
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "exp/a.py", "_base_ = './b.py'\nlr = 0.01\n", -1);
	unit_write(s.dir, "exp/b.py", "_base_ = ['../common/c.py']\n", -1);
	unit_write(s.dir, "common/c.py", "model = dict(type='X')\n", -1);
	lock = probe_one("exp/a.py");
	assert_int_equal(file_count(lock), 3);
	assert_recorded(lock, 0, "exp/a.py", true, "exp/b.py");
	assert_recorded(lock, 1, "exp/b.py", false, "common/c.py");
	assert_recorded(lock, 2, "common/c.py", false, "");
	assert_warnings(lock, 0);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

/* The text survives the lock exactly: write it, load it, compare bytes. */
static void text_round_trips(void **state)
{
	static const char text[] =
		"# \xe9\x85\x8d\xe7\xbd\xae \xe2\x80\x94 caf\xc3\xa9, \xf0\x9f\x9a\x80\r\n"
		"_base_ = '../b.py'\r\n"
		"classes = ('\xe7\x8c\xab', 'chien', \"\\\"quoted\\\"\")\r\n"
		"\ttabbed = '\\\\'\r\n"
		"no_final_newline = True";
	scratch s;
	envlock_lock *lock, *loaded;
	envlock_ctx *ctx;
	const cJSON *t;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "x/a.py", text, -1);
	unit_write(s.dir, "b.py", "x = 1\r\n", -1);
	lock = probe_one("x/a.py");
	assert_int_equal(file_count(lock), 2);
	assert_recorded(lock, 0, "x/a.py", true, "b.py");
	assert_recorded(lock, 1, "b.py", false, "");
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_lock_write(lock, ctx, "lock.json"), 0);
	assert_int_equal(envlock_lock_load(&loaded, ctx, "lock.json"), 0);
	t = unit_get(loaded, "configs.files.0.text");
	assert_true(cJSON_IsString(t));
	assert_int_equal(strlen(t->valuestring), sizeof(text) - 1);
	assert_memory_equal(t->valuestring, text, sizeof(text) - 1);
	assert_string_equal(unit_str(loaded, "configs.files.0.sha256"), unit_str(lock, "configs.files.0.sha256"));
	envlock_lock_free(loaded);
	envlock_ctx_free(ctx);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

/* Config text -> the bases it gives (relative to the scratch folder). */
static void bases_form(const char *text, const char *expected)
{
	scratch s;
	envlock_lock *lock;

	scratch_enter(&s);
	unit_write(s.dir, "cfg.py", text, -1);
	lock = probe_one("cfg.py");
	assert_string_equal(unit_str(lock, "configs.files.0.path"), "cfg.py");
	if (strcmp(bases_of(lock, 0), expected) != 0)
		fail_msg("_base_ in:\n%s\ngave '%s', expected '%s'", text, bases_of(lock, 0), expected);
	assert_null(unit_get(lock, "configs.files.0.unresolved_base"));
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void single_string_forms(void **state)
{
	(void)state;
	bases_form("_base_ = 'x.py'\n", "x.py");
	bases_form("_base_ = \"x.py\"\n", "x.py");
	bases_form("_base_='./sub/../x.py'  # inherit\n", "x.py");
	bases_form("_base_ = ('x.py')\n", "x.py");
	bases_form("_base_ = r'x.py'\n", "x.py");
	bases_form("_base_ = '''x.py'''\n", "x.py");
	bases_form("_base_ = 'x.py'; lr = 0.1\n", "x.py");
	bases_form("_base_ = \\\n    'x.py'\n", "x.py");
	bases_form("\xef\xbb\xbf_base_ = 'x.py'\n", "x.py");
	bases_form("lr = 0.1\n", "");
	bases_form("_base_ = []\n", "");
	bases_form("_base_dir = 'not_a_base.py'\n", "");
}

static void list_forms(void **state)
{
	(void)state;
	bases_form("_base_ = [  # the model first\n"
		   "    'm.py',  # model\n"
		   "    # 'commented.py',\n"
		   "    \"d.py\",\n"
		   "\n"
		   "    'r.py',\n"
		   "]\n", "m.py|d.py|r.py");
	bases_form("_base_ = ['a.py', \"b.py\",]\n", "a.py|b.py");
	bases_form("_base_ = [\r\n    'a.py',\r\n    'b.py'\r\n]\r\n", "a.py|b.py");
	bases_form("_base_ = [\n    'a/'\n    'b.py',  # implicit concatenation\n]\n", "a/b.py");
	/* only top-level statements count, and the last one wins */
	bases_form("\"\"\"Docs.\n_base_ = 'doc.py'\n\"\"\"\n"
		   "if False:\n    _base_ = 'indented.py'\n"
		   "_base_ = 'first.py'\n"
		   "x = dict(s='''\n_base_ = 'in_string.py'\n''')\n"
		   "_base_ = ['last.py']\n", "last.py");
}

static void absolute_and_outside_paths(void **state)
{
	scratch s;
	envlock_lock *lock;
	char path[4200], abs_b[4200], text[4300];

	(void)state;
	scratch_enter(&s);
	snprintf(abs_b, sizeof(abs_b), "%s/shared/b.py", s.dir);
	snprintf(text, sizeof(text), "_base_ = ['%s', '../shared/c.py']\n", abs_b);
	unit_write(s.dir, "work/a.py", text, -1);
	unit_write(s.dir, "shared/b.py", "x = 1\n", -1);
	unit_write(s.dir, "shared/c.py", "y = 2\n", -1);
	assert_int_equal(chdir("work"), 0);
	/* inside the current directory: shown relative, however it was typed */
	snprintf(path, sizeof(path), "%s/work/a.py", s.dir);
	lock = probe_one(path);
	assert_int_equal(file_count(lock), 3);
	assert_string_equal(unit_str(lock, "configs.files.0.path"), "a.py");
	/* outside it: absolute */
	snprintf(text, sizeof(text), "%s|%s/shared/c.py", abs_b, s.dir);
	assert_string_equal(bases_of(lock, 0), text);
	assert_string_equal(unit_str(lock, "configs.files.1.path"), abs_b);
	envlock_lock_free(lock);
	lock = probe_one("../shared/b.py");
	assert_string_equal(unit_str(lock, "configs.files.0.path"), abs_b);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void cycle_is_warned_once(void **state)
{
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "a.py", "_base_ = './b.py'\n", -1);
	unit_write(s.dir, "b.py", "_base_ = ['./a.py']\n", -1);
	lock = probe_one("a.py");
	assert_int_equal(file_count(lock), 2);
	assert_recorded(lock, 0, "a.py", true, "b.py");
	assert_recorded(lock, 1, "b.py", false, "a.py");
	assert_warnings(lock, 1);
	assert_string_equal(envlock_lock_warning(lock, 0),
			    "'b.py': _base_ './a.py' makes a cycle (a.py -> b.py -> a.py)");
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);

	/* a file naming itself, below a requested config */
	unit_write(s.dir, "top.py", "_base_ = 'self.py'\n", -1);
	unit_write(s.dir, "self.py", "_base_ = 'self.py'\n", -1);
	lock = probe_one("top.py");
	assert_int_equal(file_count(lock), 2);
	assert_warnings(lock, 1);
	assert_string_equal(envlock_lock_warning(lock, 0),
			    "'self.py': _base_ 'self.py' makes a cycle (self.py -> self.py)");
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void missing_base_keeps_the_chain(void **state)
{
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "a.py", "_base_ = ['gone.py', 'b.py']\n", -1);
	unit_write(s.dir, "b.py", "_base_ = 'c.py'\n", -1);
	unit_write(s.dir, "c.py", "z = 3\n", -1);
	lock = probe_one("a.py");
	assert_int_equal(file_count(lock), 4);
	assert_recorded(lock, 0, "a.py", true, "gone.py|b.py");
	assert_refused(lock, 1, "gone.py", false, "no such file");
	assert_recorded(lock, 2, "b.py", false, "c.py");
	assert_recorded(lock, 3, "c.py", false, "");
	assert_warnings(lock, 1);
	assert_string_equal(envlock_lock_warning(lock, 0), "'a.py': _base_ 'gone.py' not found");
	/* a missing base is the config's problem, not a failed request */
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void diamond_is_recorded_once(void **state)
{
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "top.py", "_base_ = ['left.py', 'right.py']\n", -1);
	unit_write(s.dir, "left.py", "_base_ = 'common.py'\n", -1);
	unit_write(s.dir, "right.py", "_base_ = './common.py'\n", -1);
	unit_write(s.dir, "common.py", "_base_ = 'root.py'\n", -1);
	unit_write(s.dir, "root.py", "r = 0\n", -1);
	lock = probe_one("top.py");
	assert_int_equal(file_count(lock), 5);
	assert_recorded(lock, 0, "top.py", true, "left.py|right.py");
	assert_recorded(lock, 1, "left.py", false, "common.py");
	assert_recorded(lock, 2, "common.py", false, "root.py");
	assert_recorded(lock, 3, "root.py", false, "");
	assert_recorded(lock, 4, "right.py", false, "common.py");
	assert_warnings(lock, 0);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

/* A _base_ that is not a literal: recorded as written, one warning, not followed. */
static void unresolved_form(const char *text, const char *written)
{
	scratch s;
	envlock_lock *lock;

	scratch_enter(&s);
	unit_write(s.dir, "cfg.py", text, -1);
	unit_write(s.dir, "x.py", "x = 1\n", -1);
	lock = probe_one("cfg.py");
	assert_int_equal(file_count(lock), 1);
	if (!unit_str(lock, "configs.files.0.unresolved_base"))
		fail_msg("_base_ in:\n%s\nwas not recorded as unresolved", text);
	assert_string_equal(unit_str(lock, "configs.files.0.unresolved_base"), written);
	assert_string_equal(bases_of(lock, 0), "");
	assert_warnings(lock, 1);
	assert_int_equal(unit_warnings_with(lock, "'cfg.py': "), 1);
	assert_int_equal(unit_warnings_with(lock, "not followed"), 1);
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void non_literal_is_unresolved(void **state)
{
	(void)state;
	unresolved_form("base_dir = './'\n_base_ = base_dir + 'x.py'\n", "base_dir + 'x.py'");
	unresolved_form("_base_ = 'x' + '.py'  # joined\n", "'x' + '.py'");
	unresolved_form("import os.path as osp\n_base_ = osp.join('.', 'x.py')\n", "osp.join('.', 'x.py')");
	unresolved_form("_base_ = BASE\n", "BASE");
	unresolved_form("_base_ = f'{d}/x.py'\n", "f'{d}/x.py'");
	unresolved_form("_base_ = '{{fileDirname}}/x.py'\n", "'{{fileDirname}}/x.py'");
	unresolved_form("_base_ = [\n    'x.py',\n    other,\n]\n", "[\n    'x.py',\n    other,\n]");
	unresolved_form("_base_ = ('x.py', 'y.py')\n", "('x.py', 'y.py')");
	unresolved_form("_base_ = 'x\\n.py'\n", "'x\\n.py'");
	unresolved_form("_base_ = ['x.py']\n_base_ += ['y.py']\n", "_base_ += ['y.py']");
	unresolved_form("from mmengine.config import read_base\n\n"
			"with read_base():\n"
			"    from .._base_.models.faster_rcnn_r50_fpn import *\n"
			"    from .._base_.datasets.coco_detection import *\n", "read_base()");
}

static void json_and_yaml_configs(void **state)
{
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "a.json", "{\"_base_\": [\"b.py\"], \"lr\": 0.1}\n", -1);
	unit_write(s.dir, "b.py", "_base_ = 'c.yml'\n", -1);
	unit_write(s.dir, "c.yml", "_base_: ./d.yml\nlr: 0.1\n", -1);
	lock = probe_one("a.json");
	assert_int_equal(file_count(lock), 3);
	assert_recorded(lock, 0, "a.json", true, "b.py");
	assert_recorded(lock, 1, "b.py", false, "c.yml");
	assert_recorded(lock, 2, "c.yml", false, "");
	assert_string_equal(unit_str(lock, "configs.files.2.unresolved_base"), "./d.yml");
	assert_warnings(lock, 1);
	assert_int_equal(unit_warnings_with(lock, "'c.yml': _base_ of a YAML config is not read"), 1);
	envlock_lock_free(lock);

	unit_write(s.dir, "bad.json", "{\"_base_\": [\"b.py\", 1]}", -1);
	lock = probe_one("bad.json");
	assert_int_equal(file_count(lock), 1);
	assert_string_equal(unit_str(lock, "configs.files.0.unresolved_base"), "[\"b.py\",1]");
	assert_string_equal(bases_of(lock, 0), "");
	assert_warnings(lock, 1);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void binary_config_is_refused(void **state)
{
	static const char bin[] = "_base_ = 'x.py'\n\0\x01\x02 weights";
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "bin.py", bin, sizeof(bin) - 1);
	unit_write(s.dir, "latin1.py", "# caf\xe9\n", -1);
	unit_write(s.dir, "top.py", "_base_ = 'latin1.py'\n", -1);
	lock = probe_one("bin.py");
	assert_int_equal(file_count(lock), 1);
	assert_refused(lock, 0, "bin.py", true, "binary data, not UTF-8 text");
	assert_int_equal(envlock_lock_error_count(lock), 1);
	assert_string_equal(envlock_lock_error(lock, 0), "'bin.py': binary data, not UTF-8 text");
	assert_warnings(lock, 0);
	envlock_lock_free(lock);

	/* as a base: a warning, and the entry says why */
	lock = probe_one("top.py");
	assert_int_equal(file_count(lock), 2);
	assert_recorded(lock, 0, "top.py", true, "latin1.py");
	assert_refused(lock, 1, "latin1.py", false, "binary data, not UTF-8 text");
	assert_warnings(lock, 1);
	assert_string_equal(envlock_lock_warning(lock, 0),
			    "'latin1.py': binary data, not UTF-8 text (a _base_ of 'top.py')");
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void size_limit(void **state)
{
	size_t mib = 1u << 20;
	char *big = malloc(mib + 2);
	scratch s;
	envlock_lock *lock;

	(void)state;
	assert_non_null(big);
	memset(big, '#', mib + 1);
	big[mib + 1] = '\0';
	scratch_enter(&s);
	unit_write(s.dir, "exact.py", big, (long)mib);
	unit_write(s.dir, "over.py", big, (long)mib + 1);
	lock = probe_one("over.py");
	assert_refused(lock, 0, "over.py", true, "larger than 1 MiB");
	assert_int_equal(envlock_lock_error_count(lock), 1);
	assert_string_equal(envlock_lock_error(lock, 0), "'over.py': larger than 1 MiB");
	envlock_lock_free(lock);
	lock = probe_one("exact.py");
	assert_recorded(lock, 0, "exact.py", true, "");
	assert_int_equal(envlock_lock_error_count(lock), 0);
	envlock_lock_free(lock);
	scratch_leave(&s);
	free(big);
}

static void requested_problems(void **state)
{
	const char *configs[] = { "missing.py", "dir.py", "fifo.py", "ok.py" };
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_mkdirs("dir.py");
	assert_int_equal(mkfifo("fifo.py", 0644), 0);
	unit_write(s.dir, "ok.py", "_base_ = 'dir.py'\n", -1);
	lock = probe_list(configs, 4);
	assert_int_equal(file_count(lock), 4);
	assert_refused(lock, 0, "missing.py", true, "no such file");
	assert_refused(lock, 1, "dir.py", true, "not a regular file");
	assert_refused(lock, 2, "fifo.py", true, "not a regular file");
	assert_recorded(lock, 3, "ok.py", true, "dir.py");
	assert_int_equal(envlock_lock_error_count(lock), 3);
	assert_string_equal(envlock_lock_error(lock, 0), "'missing.py': no such file");
	assert_string_equal(envlock_lock_error(lock, 1), "'dir.py': not a regular file");
	assert_string_equal(envlock_lock_error(lock, 2), "'fifo.py': not a regular file");
	assert_warnings(lock, 0);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

static void unreadable_config(void **state)
{
	scratch s;
	envlock_lock *lock;

	(void)state;
	if (geteuid() == 0) {
		print_message("skipped: root reads files whatever their mode\n");
		skip();
	}
	scratch_enter(&s);
	unit_write(s.dir, "secret.py", "x = 1\n", -1);
	assert_int_equal(chmod("secret.py", 0), 0);
	lock = probe_one("secret.py");
	assert_refused(lock, 0, "secret.py", true, "permission denied");
	assert_int_equal(envlock_lock_error_count(lock), 1);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

/* The same file named twice, by other spellings or through a link: one entry. */
static void same_config_twice(void **state)
{
	char abs[4200];
	const char *configs[] = { "a.py", "./sub/../a.py", abs, "link.py", "b.py" };
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	snprintf(abs, sizeof(abs), "%s/a.py", s.dir);
	unit_write(s.dir, "a.py", "_base_ = 'b.py'\n", -1);
	unit_write(s.dir, "b.py", "b = 1\n", -1);
	unit_mkdirs("sub");
	unit_symlink(s.dir, "link.py", "a.py");
	lock = probe_list(configs, 5);
	assert_int_equal(file_count(lock), 2);
	assert_recorded(lock, 0, "a.py", true, "b.py");
	assert_recorded(lock, 1, "b.py", true, "");
	assert_warnings(lock, 0);
	envlock_lock_free(lock);

	/* a missing file named twice is one entry and one error */
	configs[0] = configs[1] = "nope.py";
	lock = probe_list(configs, 2);
	assert_int_equal(file_count(lock), 1);
	assert_int_equal(envlock_lock_error_count(lock), 1);
	envlock_lock_free(lock);
	scratch_leave(&s);
}

/* A missing base named on the command line afterwards is a failed request. */
static void requested_after_failing_as_base(void **state)
{
	const char *configs[] = { "a.py", "gone.py" };
	scratch s;
	envlock_lock *lock;

	(void)state;
	scratch_enter(&s);
	unit_write(s.dir, "a.py", "_base_ = 'gone.py'\n", -1);
	lock = probe_list(configs, 2);
	assert_int_equal(file_count(lock), 2);
	assert_refused(lock, 1, "gone.py", true, "no such file");
	assert_int_equal(envlock_lock_error_count(lock), 1);
	assert_string_equal(envlock_lock_error(lock, 0), "'gone.py': no such file");
	envlock_lock_free(lock);
	scratch_leave(&s);
}

/* 1001 files in one chain: the first 1000 are recorded, with one warning. */
static void chain_limit(void **state)
{
	scratch s;
	envlock_lock *lock;
	char name[32], text[64];

	(void)state;
	scratch_enter(&s);
	for (int i = 0; i < 1001; i++) {
		snprintf(name, sizeof(name), "c%04d.py", i);
		snprintf(text, sizeof(text), "_base_ = 'c%04d.py'\n", i + 1);
		unit_write(s.dir, name, i == 1000 ? "end = True\n" : text, -1);
	}
	lock = probe_one("c0000.py");
	assert_int_equal(file_count(lock), 1000);
	assert_string_equal(unit_str(lock, "configs.files.999.path"), "c0999.py");
	assert_string_equal(bases_of(lock, 999), "c1000.py");
	assert_warnings(lock, 1);
	assert_string_equal(envlock_lock_warning(lock, 0),
			    "'c0000.py': its _base_ chain has more than 1000 files, the rest are not recorded");
	envlock_lock_free(lock);

	/* the limit is per requested config */
	unit_write(s.dir, "c0500.py", "end = True\n", -1);
	{
		const char *configs[] = { "c0000.py", "c0501.py" };

		lock = probe_list(configs, 2);
		assert_int_equal(file_count(lock), 1001);
		assert_warnings(lock, 0);
		envlock_lock_free(lock);
	}
	scratch_leave(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_configs_is_absent),
		cmocka_unit_test(fixture_three_level_chain),
		cmocka_unit_test(fixture_both_requested),
		cmocka_unit_test(chain_in_scratch),
		cmocka_unit_test(text_round_trips),
		cmocka_unit_test(single_string_forms),
		cmocka_unit_test(list_forms),
		cmocka_unit_test(absolute_and_outside_paths),
		cmocka_unit_test(cycle_is_warned_once),
		cmocka_unit_test(missing_base_keeps_the_chain),
		cmocka_unit_test(diamond_is_recorded_once),
		cmocka_unit_test(non_literal_is_unresolved),
		cmocka_unit_test(json_and_yaml_configs),
		cmocka_unit_test(binary_config_is_refused),
		cmocka_unit_test(size_limit),
		cmocka_unit_test(requested_problems),
		cmocka_unit_test(unreadable_config),
		cmocka_unit_test(same_config_twice),
		cmocka_unit_test(requested_after_failing_as_base),
		cmocka_unit_test(chain_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
