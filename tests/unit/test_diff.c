/*
 * Unit tests for lib/diff: flattening, matching by name, classification,
 * ordering, filters, findings, drift, and the printers. Locks are small
 * hand-made JSON files loaded with envlock_lock_load.
 */
#include "unit.h"

#include "diff/diff.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The values a test lock varies; NULL fields take the defaults below. */
typedef struct {
	const char *hostname, *driver, *cuda, *gcc, *python, *torch, *mmcv;
	const char *conda; /* the conda "packages" list, JSON without brackets */
	const char *pip;   /* the pip "distributions" list */
	const char *extra; /* more top-level members, starting with a comma */
} spec;

static const char *or_default(const char *s, const char *d)
{
	return s ? s : d;
}

#define PKG_NUMPY_CONDA "{\"name\": \"numpy\", \"version\": \"1.21.6\", \"build\": \"py37h976b520_0\", " \
	"\"channel\": \"https://conda.anaconda.org/conda-forge/linux-64\", \"subdir\": \"linux-64\"}"
#define PKG_PY_CONDA "{\"name\": \"python\", \"version\": \"3.7.16\", \"build\": \"h7a1cb2a_0\", " \
	"\"channel\": \"https://repo.anaconda.com/pkgs/main/linux-64\", \"subdir\": \"linux-64\"}"
#define DIST(name, version) "{\"name\": \"" name "\", \"version\": \"" version "\", \"kind\": \"dist-info\", " \
	"\"path\": \"/x\", \"requested\": false, \"editable\": false, \"installer\": \"pip\"}"

static char *lock_json(const spec *s)
{
	return el_xasprintf(
		"{\"envlock\": 1, \"created\": \"2024-01-01T00:00:00Z\", \"host\": {\"hostname\": \"%s\"},\n"
		" \"system\": {\"arch\": \"x86_64\", \"os\": {\"status\": \"present\", \"pretty_name\": \"Ubuntu 20.04.6 LTS\"},"
		" \"glibc\": {\"status\": \"present\", \"version\": \"2.31\"}, \"container\": {\"detected\": false},"
		" \"ld_cache\": {\"status\": \"present\", \"path\": \"/etc/ld.so.cache\"}},\n"
		" \"gpu\": {\"status\": \"present\", \"count\": 2, \"devices\": [{\"bus\": \"0000:3b:00.0\", \"name\": \"Tesla V100\"},"
		" {\"bus\": \"0000:d8:00.0\", \"name\": \"Tesla V100\"}], \"driver\": {\"status\": \"present\", \"version\": \"%s\"}},\n"
		" \"cuda\": {\"status\": \"present\", \"default\": \"/usr/local/cuda-X\", \"toolkits\": [{\"home\": \"/usr/local/cuda-X\","
		" \"status\": \"present\", \"version\": \"%s\", \"libraries\": [{\"name\": \"libcudart.so.10.2.89\","
		" \"path\": \"/usr/local/cuda-X/lib64/libcudart.so.10.2.89\", \"links\": [], \"soname_link\": \"ok\","
		" \"sha256\": \"bb37e8602f21844ebd1d07e9f24e9d5452a65146968f68999947fc0aaa5e1b93\"}]}]},\n"
		" \"compilers\": {\"status\": \"present\", \"default\": {\"name\": \"gcc\", \"version\": \"%s\"}},\n"
		" \"python\": {\"status\": \"present\", \"version\": \"%s\", \"kind\": \"conda\", \"prefix\": \"/opt/conda\"},\n"
		" \"conda\": {\"status\": \"present\", \"name\": \"base\", \"prefix\": \"/opt/conda\", \"packages\": [%s]},\n"
		" \"pip\": {\"status\": \"present\", \"distributions\": [%s]},\n"
		" \"frameworks\": {\"torch\": {\"status\": \"present\", \"version\": \"%s\", \"cuda\": \"10.2\"},"
		" \"mmcv\": {\"status\": \"present\", \"version\": \"%s\", \"ops\": true}, \"mmdet\": {\"status\": \"absent\"}}%s}\n",
		or_default(s->hostname, "node1"), or_default(s->driver, "450.142.00"), or_default(s->cuda, "10.2.89"),
		or_default(s->gcc, "7.5.0"), or_default(s->python, "3.7.16"),
		or_default(s->conda, PKG_NUMPY_CONDA ", " PKG_PY_CONDA),
		or_default(s->pip, DIST("numpy", "1.21.6") ", " DIST("PyYAML", "6.0.1")),
		or_default(s->torch, "1.10.0+cu102"), or_default(s->mmcv, "1.7.5"), or_default(s->extra, ""));
}

static char *dir;
static int nfile;

static envlock_lock *load_text(const char *text)
{
	return unit_load_text(dir, &nfile, text);
}

static envlock_lock *load_spec(const spec *s)
{
	char *text = lock_json(s);
	envlock_lock *lock = load_text(text);

	free(text);
	return lock;
}

static envlock_diff *diff_with(const spec *sa, const spec *sb, const envlock_diff_opts *opts)
{
	envlock_lock *a = load_spec(sa), *b = load_spec(sb);
	envlock_diff *d = NULL;
	envlock_ctx *ctx;

	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (envlock_diff_locks(&d, ctx, a, "a.json", b, "b.json", opts) != 0)
		fail_msg("diff: %s", envlock_error_last(ctx));
	envlock_ctx_free(ctx);
	envlock_lock_free(a);
	envlock_lock_free(b);
	return d;
}

static envlock_diff *diff_specs(const spec *sa, const spec *sb)
{
	return diff_with(sa, sb, NULL);
}

/* The entry for section/key, or NULL. */
static const envlock_diff_entry *find(const envlock_diff *d, const char *section, const char *key)
{
	for (size_t i = 0; i < envlock_diff_count(d); i++) {
		const envlock_diff_entry *e = envlock_diff_get(d, i);

		if (strcmp(e->section, section) == 0 && strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

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

/* Collect the items of a lock into "section|key|value" lines. */
static void collect(void *data, int section, const char *key, const char *value)
{
	el_buf *b = data;

	el_buf_addf(b, "%s|%s|%s\n", el_diff_sections[section], key, value);
}

static void flatten_gives_readable_items(void **state)
{
	spec s = { 0 };
	envlock_lock *lock;
	el_buf b = EL_BUF_INIT(1 << 20);

	(void)state;
	lock = load_spec(&s);
	el_flatten(el_lock_view(lock), collect, &b);
	assert_string_equal(el_buf_cstr(&b),
		"system|os|Ubuntu 20.04.6 LTS\n"
		"system|arch|x86_64\n"
		"system|glibc|2.31\n"
		"system|container|none\n"
		"system|ld.so.cache|present\n"
		"gpu|driver|450.142.00\n"
		"gpu|devices|2 × Tesla V100\n"
		"cuda|version|10.2.89\n"
		"cuda|default|/usr/local/cuda-X\n"
		"cuda|toolkit /usr/local/cuda-X|10.2.89\n"
		"cuda|toolkit /usr/local/cuda-X libcudart|libcudart.so.10.2.89 "
		"sha256:bb37e8602f21844ebd1d07e9f24e9d5452a65146968f68999947fc0aaa5e1b93\n"
		"compilers|gcc|7.5.0\n"
		"python|version|3.7.16\n"
		"python|kind|conda\n"
		"python|prefix|/opt/conda\n"
		"conda|env|base\n"
		"conda|prefix|/opt/conda\n"
		"conda|numpy|1.21.6 py37h976b520_0 conda-forge\n"
		"conda|python|3.7.16 h7a1cb2a_0 pkgs/main\n"
		"pip|numpy|1.21.6\n"
		"pip|pyyaml|6.0.1\n"
		"frameworks|torch|1.10.0+cu102\n"
		"frameworks|torch cuda|10.2\n"
		"frameworks|mmcv|1.7.5\n"
		"frameworks|mmcv ops|compiled\n");
	el_buf_release(&b);
	envlock_lock_free(lock);
}

static void identical_locks_have_no_entries(void **state)
{
	spec s = { 0 }, other_host = { .hostname = "node2" };
	envlock_diff *d = diff_specs(&s, &other_host);

	(void)state;
	/* hostname and created describe the save, not the environment */
	assert_int_equal(envlock_diff_count(d), 0);
	assert_true(envlock_diff_identical(d));
	assert_string_equal(envlock_diff_verdict(d), "identical");
	envlock_diff_free(d);
}

static void packages_match_by_name_conda_and_pip_apart(void **state)
{
	spec a = { 0 };
	spec b = { .pip = DIST("numpy", "1.26.3") ", " DIST("pyyaml", "6.0.1") };
	spec c = { .conda = PKG_PY_CONDA };
	envlock_diff *d = diff_specs(&a, &b);
	const envlock_diff_entry *e;

	(void)state;
	/* PyYAML and pyyaml are one distribution (PEP 503); conda's numpy did not change */
	assert_int_equal(envlock_diff_count(d), 1);
	e = find(d, "pip", "numpy");
	assert_non_null(e);
	assert_int_equal(e->change, ENVLOCK_DIFF_CHANGED);
	assert_string_equal(e->a, "1.21.6");
	assert_string_equal(e->b, "1.26.3");
	assert_int_equal(e->severity, ENVLOCK_SEV_INFO);
	assert_null(e->reason);
	envlock_diff_free(d);

	/* numpy leaves conda: a conda difference only, pip's numpy is another item */
	d = diff_specs(&a, &c);
	assert_int_equal(envlock_diff_count(d), 1);
	e = find(d, "conda", "numpy");
	assert_non_null(e);
	assert_int_equal(e->change, ENVLOCK_DIFF_REMOVED);
	assert_string_equal(e->a, "1.21.6 py37h976b520_0 conda-forge");
	assert_null(e->b);
	assert_null(find(d, "pip", "numpy"));
	envlock_diff_free(d);
}

/* The severity of one changed core item from a to b. */
static envlock_severity core_change(const char *section, const char *key, spec *b, char *reason, size_t n)
{
	spec a = { 0 };
	envlock_diff *d = diff_specs(&a, b);
	const envlock_diff_entry *e = find(d, section, key);
	envlock_severity s;

	assert_non_null(e);
	s = e->severity;
	snprintf(reason, n, "%s", e->reason ? e->reason : "");
	envlock_diff_free(d);
	return s;
}

static void core_items_are_risky_when_what_matters_changes(void **state)
{
	char why[256];
	spec s;

	(void)state;
	s = (spec){ .cuda = "10.2.300" };
	assert_int_equal(core_change("cuda", "version", &s, why, sizeof(why)), ENVLOCK_SEV_INFO);
	assert_string_equal(why, "");
	s = (spec){ .cuda = "11.0.2" };
	assert_int_equal(core_change("cuda", "version", &s, why, sizeof(why)), ENVLOCK_SEV_RISKY);
	assert_string_equal(why, "CUDA release 10.2 → 11.0");
	s = (spec){ .driver = "450.80.02" };
	assert_int_equal(core_change("gpu", "driver", &s, why, sizeof(why)), ENVLOCK_SEV_INFO);
	s = (spec){ .driver = "470.57.02" };
	assert_int_equal(core_change("gpu", "driver", &s, why, sizeof(why)), ENVLOCK_SEV_RISKY);
	assert_string_equal(why, "driver major 450 → 470");
	s = (spec){ .gcc = "7.3.0" };
	assert_int_equal(core_change("compilers", "gcc", &s, why, sizeof(why)), ENVLOCK_SEV_INFO);
	s = (spec){ .gcc = "9.4.0" };
	assert_int_equal(core_change("compilers", "gcc", &s, why, sizeof(why)), ENVLOCK_SEV_RISKY);
	assert_string_equal(why, "gcc major 7 → 9");
	s = (spec){ .python = "3.7.9" };
	assert_int_equal(core_change("python", "version", &s, why, sizeof(why)), ENVLOCK_SEV_INFO);
	s = (spec){ .python = "3.10.12" };
	assert_int_equal(core_change("python", "version", &s, why, sizeof(why)), ENVLOCK_SEV_RISKY);
	assert_string_equal(why, "Python 3.7 → 3.10");
	/* torch, mmcv, mmdet: any change */
	s = (spec){ .torch = "1.10.1+cu102" };
	assert_int_equal(core_change("frameworks", "torch", &s, why, sizeof(why)), ENVLOCK_SEV_RISKY);
	assert_string_equal(why, "torch 1.10.0+cu102 → 1.10.1+cu102");
	s = (spec){ .mmcv = "1.7.1" };
	assert_int_equal(core_change("frameworks", "mmcv", &s, why, sizeof(why)), ENVLOCK_SEV_RISKY);
	/* an item that is not core never is */
	s = (spec){ .pip = DIST("numpy", "2.0.0") ", " DIST("pyyaml", "6.0.1") };
	assert_int_equal(core_change("pip", "numpy", &s, why, sizeof(why)), ENVLOCK_SEV_INFO);
}

static void core_item_appearing_is_risky(void **state)
{
	const el_diff_scene full = { .gpu = false, .frameworks = true };
	char *reason = NULL;

	(void)state;
	assert_int_equal(el_diff_classify(EL_SEC_FRAMEWORKS, "mmdet", NULL, "2.25.1", &full, &reason), ENVLOCK_SEV_RISKY);
	assert_string_equal(reason, "mmdet none → 2.25.1");
	free(reason);
	assert_int_equal(el_diff_classify(EL_SEC_CUDA, "version", "10.2.89", NULL, &full, &reason), ENVLOCK_SEV_RISKY);
	assert_string_equal(reason, "CUDA release 10.2 → none");
	free(reason);
	assert_int_equal(el_diff_classify(EL_SEC_CUDNN, "version", "8.2.1", "8.2.4", &full, &reason), ENVLOCK_SEV_RISKY);
	assert_string_equal(reason, "cuDNN 8.2.1 → 8.2.4");
	free(reason);
	/* same name, other section: not core, where the frameworks are compared */
	assert_int_equal(el_diff_classify(EL_SEC_PIP, "torch", "1.10.0", "2.0.0", &full, &reason), ENVLOCK_SEV_INFO);
	assert_null(reason);
	assert_int_equal(el_diff_classify(EL_SEC_CUDA, "default", "/a", "/b", NULL, &reason), ENVLOCK_SEV_INFO);
	assert_null(reason);
}

/* torch's builds, any module's CUDA runtime, and an imported list's entries standing for the frameworks */
static void builds_modules_and_lists(void **state)
{
	const el_diff_scene gpu = { .gpu = true, .frameworks = true }, list = { .gpu = false, .frameworks = false };
	const el_diff_scene list_gpu = { .gpu = true, .frameworks = false };
	char *reason = NULL;

	(void)state;
	assert_int_equal(el_diff_classify(EL_SEC_FRAMEWORKS, "torch", "1.10.0+cu102", "1.10.0+cu113", &gpu, &reason), ENVLOCK_SEV_RISKY);
	assert_non_null(strstr(reason, "torch's build cu102 → cu113: another CUDA runtime under torch"));
	free(reason);
	/* to or from +cpu: breaking where a GPU is recorded, risky where none is */
	assert_int_equal(el_diff_classify(EL_SEC_FRAMEWORKS, "torch", "1.10.0+cu102", "1.10.0+cpu", &gpu, &reason), ENVLOCK_SEV_BREAKING);
	assert_non_null(strstr(reason, "a CPU-only torch runs nothing on the GPU"));
	free(reason);
	assert_int_equal(el_diff_classify(EL_SEC_FRAMEWORKS, "torch", "2.1.0+cpu", "2.1.2+cu118", &gpu, &reason), ENVLOCK_SEV_BREAKING);
	free(reason);
	assert_int_equal(el_diff_classify(EL_SEC_FRAMEWORKS, "torch", "1.10.0+cu102", "1.10.0+cpu", &list, &reason), ENVLOCK_SEV_RISKY);
	free(reason);
	/* two releases: the release says it */
	assert_int_equal(el_diff_classify(EL_SEC_FRAMEWORKS, "torch", "1.10.0+cu102", "2.1.2+cu118", &gpu, &reason), ENVLOCK_SEV_RISKY);
	assert_string_equal(reason, "torch 1.10.0+cu102 → 2.1.2+cu118");
	free(reason);
	/* an imported pip list: its torch, mmcv-full and mmdet speak for the frameworks, by their version word */
	assert_int_equal(el_diff_classify(EL_SEC_PIP, "torch", "1.10.0+cu102", "1.10.0+cpu", &list_gpu, &reason), ENVLOCK_SEV_BREAKING);
	free(reason);
	assert_int_equal(el_diff_classify(EL_SEC_PIP, "mmcv-full", "1.7.5", "1.4.0", &list, &reason), ENVLOCK_SEV_RISKY);
	assert_string_equal(reason, "mmcv 1.7.5 → 1.4.0");
	free(reason);
	assert_int_equal(el_diff_classify(EL_SEC_PIP, "mmdet", "2.25.1 editable /home/alice/mmdetection", "2.25.1", &list, &reason),
			 ENVLOCK_SEV_INFO);
	assert_null(reason);
	assert_int_equal(el_diff_classify(EL_SEC_PIP, "numpy", "1.21.6", "1.26.3", &list, &reason), ENVLOCK_SEV_INFO);
	assert_null(reason);
	/* conda's build strings */
	assert_int_equal(el_diff_classify(EL_SEC_CONDA, "pytorch", "1.10.0 py3.7_cuda10.2_cudnn7.6.5_0 pytorch",
					  "1.10.0 py3.7_cuda11.3_cudnn8.2.0_0 pytorch", &list, &reason), ENVLOCK_SEV_RISKY);
	assert_non_null(strstr(reason, "torch's build cuda10.2 → cuda11.3"));
	free(reason);
	/* the CUDA runtime any framework module loads */
	assert_int_equal(el_diff_classify(EL_SEC_LOADS, "torchvision libcudart", "10.2.89 /a/libcudart.so.10.2.89",
					  "11.8.89 /b/libcudart.so.11.8.89", &gpu, &reason), ENVLOCK_SEV_RISKY);
	assert_string_equal(reason, "CUDA runtime torchvision loads 10.2 → 11.8");
	free(reason);
	assert_int_equal(el_diff_classify(EL_SEC_LOADS, "mmcv libcudart", "10.2.89 /a", "10.2.89 /b", &gpu, &reason), ENVLOCK_SEV_INFO);
	assert_null(reason);
}

static void entries_sorted_most_severe_first(void **state)
{
	spec a = { 0 };
	spec b = { .cuda = "11.8.89", .gcc = "7.3.0", .torch = "2.1.2+cu118",
		   .pip = DIST("numpy", "1.26.3") ", " DIST("pyyaml", "6.0.1") };
	envlock_diff *d = diff_specs(&a, &b);

	(void)state;
	/* sections by their worst (cuda before frameworks: lock order), risky before info */
	assert_int_equal(envlock_diff_count(d), 5);
	assert_string_equal(envlock_diff_get(d, 0)->key, "version");
	assert_string_equal(envlock_diff_get(d, 1)->key, "toolkit /usr/local/cuda-X");
	assert_string_equal(envlock_diff_get(d, 2)->key, "torch");
	assert_string_equal(envlock_diff_get(d, 3)->section, "compilers");
	assert_string_equal(envlock_diff_get(d, 4)->section, "pip");
	assert_int_equal(envlock_diff_tally(d, ENVLOCK_SEV_RISKY), 2);
	assert_int_equal(envlock_diff_tally(d, ENVLOCK_SEV_INFO), 3);
	assert_int_equal(envlock_diff_tally(d, ENVLOCK_SEV_BREAKING), 0);
	assert_string_equal(envlock_diff_verdict(d),
			    "0 breaking, 2 risky, 3 info differences: core parts changed, B may not run what A runs");
	envlock_diff_free(d);
}

static void section_filters(void **state)
{
	spec a = { 0 };
	spec b = { .cuda = "11.8.89", .pip = DIST("numpy", "1.26.3") ", " DIST("pyyaml", "6.0.1") };
	const char *only[] = { "pip" }, *ignore[] = { "cuda" }, *bad[] = { "cudaa" };
	envlock_diff_opts opts = { 0 };
	envlock_diff *d;
	envlock_lock *la, *lb;
	envlock_ctx *ctx;

	(void)state;
	opts.only = only;
	opts.only_count = 1;
	d = diff_with(&a, &b, &opts);
	assert_int_equal(envlock_diff_count(d), 1);
	assert_string_equal(envlock_diff_get(d, 0)->section, "pip");
	envlock_diff_free(d);

	memset(&opts, 0, sizeof(opts));
	opts.ignore = ignore;
	opts.ignore_count = 1;
	d = diff_with(&a, &b, &opts);
	assert_int_equal(envlock_diff_count(d), 1);
	assert_string_equal(envlock_diff_get(d, 0)->key, "numpy");
	envlock_diff_free(d);

	/* ignoring everything that differs leaves identical locks */
	opts.ignore = (const char *[]){ "cuda", "pip" };
	opts.ignore_count = 2;
	d = diff_with(&a, &b, &opts);
	assert_true(envlock_diff_identical(d));
	envlock_diff_free(d);

	opts.ignore = bad;
	opts.ignore_count = 1;
	la = load_spec(&a);
	lb = load_spec(&b);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	d = (envlock_diff *)1;
	assert_int_equal(envlock_diff_locks(&d, ctx, la, NULL, lb, NULL, &opts), ENVLOCK_EINVAL);
	assert_null(d);
	assert_string_equal(envlock_error_last(ctx),
			    "the section 'cudaa' to leave out does not exist (sections: system, gpu, cuda, cudnn, compilers, "
			    "python, conda, pip, frameworks, loads, repos, configs, checkpoints, env)");
	envlock_ctx_free(ctx);
	envlock_lock_free(la);
	envlock_lock_free(lb);
}

static void all_lists_identical_items(void **state)
{
	spec a = { 0 }, b = { .gcc = "7.3.0" };
	envlock_diff_opts opts = { .all = 1 };
	envlock_diff *d = diff_with(&a, &b, &opts);
	const envlock_diff_entry *e = find(d, "pip", "pyyaml");

	(void)state;
	assert_int_equal(envlock_diff_count(d), 25);
	assert_non_null(e);
	assert_int_equal(e->change, ENVLOCK_DIFF_SAME);
	assert_string_equal(e->a, "6.0.1");
	assert_string_equal(e->b, "6.0.1");
	/* the one difference comes first, and only it counts */
	assert_string_equal(envlock_diff_get(d, 0)->key, "gcc");
	assert_int_equal(envlock_diff_tally(d, ENVLOCK_SEV_INFO), 1);
	assert_string_equal(envlock_diff_verdict(d), "0 breaking, 0 risky, 1 info difference: no core part changed");
	envlock_diff_free(d);
}

static void repeated_names_are_numbered(void **state)
{
	spec a = { .pip = DIST("numpy", "1.21.6") ", " DIST("numpy", "1.19.5") };
	spec b = { .pip = DIST("numpy", "1.21.6") };
	envlock_diff *d = diff_specs(&a, &b);
	const envlock_diff_entry *e;

	(void)state;
	/* two dist-infos of one name (a stale one left behind): both kept, the first matched */
	assert_int_equal(envlock_diff_count(d), 1);
	e = find(d, "pip", "numpy (2)");
	assert_non_null(e);
	assert_string_equal(e->a, "1.19.5");
	assert_null(e->b);
	envlock_diff_free(d);
}

static void hostile_shapes_are_skipped(void **state)
{
	const char *text =
		"{\"envlock\": 1, \"system\": 5, \"gpu\": {\"devices\": {\"a\": 1}, \"driver\": []},"
		" \"cuda\": {\"toolkits\": [\"x\", 3, {\"home\": 7}, {\"home\": \"/c\", \"libraries\": [1, {\"name\": 2}]}]},"
		" \"cudnn\": [], \"compilers\": {\"gcc\": {\"x\": 1}}, \"python\": \"3.7\","
		" \"conda\": {\"packages\": [{\"name\": null}, {\"version\": \"1\"}, {\"name\": \"ok\"}]},"
		" \"pip\": {\"distributions\": {\"name\": \"x\"}}, \"frameworks\": {\"torch\": 1, \"mmcv\": {\"status\": 3}},"
		" \"repos\": {\"repositories\": [{\"path\": \"/r\", \"head\": \"x\", \"remotes\": [{}], \"submodules\": 2}]},"
		" \"configs\": {\"files\": [{\"path\": \"a.py\"}]}, \"checkpoints\": {\"files\": \"no\"},"
		" \"env\": {\"variables\": {\"A\": 1, \"B\": \"2\"}}}";
	envlock_lock *lock = load_text(text);
	el_buf b = EL_BUF_INIT(1 << 20);

	(void)state;
	el_flatten(el_lock_view(lock), collect, &b);
	assert_string_equal(el_buf_cstr(&b),
		"cuda|toolkit /c|unknown\n"
		"conda|ok|?\n"
		"env|B|2\n");
	el_buf_release(&b);
	envlock_lock_free(lock);
}

static void provenance_items(void **state)
{
	spec s = { .extra = ",\n \"repos\": {\"status\": \"present\", \"repositories\": [{\"path\": \"/w/mmdet\","
		" \"status\": \"present\", \"head\": {\"commit\": \"0123456789abcdef0123456789abcdef01234567\","
		" \"branch\": \"main\", \"detached\": false, \"unborn\": false}, \"dirty\": true,"
		" \"patch\": {\"sha256\": \"aa\", \"size\": 2}, \"remotes\": [{\"name\": \"origin\", \"url\": \"https://g/x\"}]},"
		" {\"path\": \"/w/clean\", \"status\": \"present\", \"dirty\": false},"
		" {\"path\": \"/w/unknown\", \"status\": \"present\", \"head\": {\"unborn\": true, \"detached\": true}},"
		" {\"path\": \"/w/none\", \"status\": \"not_a_repository\"}]},\n"
		" \"configs\": {\"status\": \"present\", \"files\": [{\"path\": \"configs/a.py\", \"requested\": true,"
		" \"sha256\": \"bb\"}, {\"path\": \"configs/gone.py\", \"requested\": true, \"error\": \"no such file\"}]},\n"
		" \"checkpoints\": {\"status\": \"present\", \"files\": [{\"path\": \"work_dirs/x.pth\", \"size\": 1,"
		" \"mtime\": \"t\", \"sha256\": \"cc\"}]},\n"
		" \"env\": {\"status\": \"present\", \"variables\": {\"CUDA_HOME\": \"/usr/local/cuda\"}}" };
	envlock_lock *lock = load_spec(&s);
	el_buf b = EL_BUF_INIT(1 << 20);
	const char *out;

	(void)state;
	el_flatten(el_lock_view(lock), collect, &b);
	out = strstr(el_buf_cstr(&b), "repos|");
	assert_non_null(out);
	assert_string_equal(out,
		"repos|/w/mmdet head|0123456789abcdef0123456789abcdef01234567\n"
		"repos|/w/mmdet branch|main\n"
		"repos|/w/mmdet changes|uncommitted, patch sha256:aa\n"
		"repos|/w/mmdet remote origin|https://g/x\n"
		"repos|/w/clean changes|clean\n"
		/* no "dirty" recorded (git status failed): no changes item, rather than "clean" */
		"repos|/w/unknown head|unborn\n"
		"repos|/w/unknown branch|detached\n"
		"repos|/w/none|not_a_repository\n"
		"configs|configs/a.py|sha256:bb\n"
		"configs|configs/gone.py|error: no such file\n"
		"checkpoints|work_dirs/x.pth|sha256:cc\n"
		"env|CUDA_HOME|/usr/local/cuda\n");
	el_buf_release(&b);
	envlock_lock_free(lock);
}

/* Print with f into a string (malloc'd). */
static char *capture_diff(const envlock_diff *d, unsigned flags, int json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	envlock_ctx *ctx;

	assert_non_null(f);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(json ? envlock_diff_print_json(d, ctx, f) : envlock_diff_print(d, ctx, f, flags), 0);
	envlock_ctx_free(ctx);
	fclose(f);
	return text;
}

static void human_output_is_grouped_and_aligned(void **state)
{
	spec a = { 0 };
	spec b = { .cuda = "11.8.89", .mmcv = "2.1.0", .pip = DIST("numpy", "1.26.3") ", " DIST("pyyaml", "6.0.1") };
	envlock_diff *d = diff_specs(&a, &b);
	char *out = capture_diff(d, 0, 0);

	(void)state;
	assert_string_equal(out,
		"cuda\n"
		"  version                    10.2.89 → 11.8.89  risky\n"
		"  toolkit /usr/local/cuda-X  10.2.89 → 11.8.89  info\n"
		"frameworks\n"
		"  mmcv  1.7.5 → 2.1.0  risky\n"
		"pip\n"
		"  numpy  1.21.6 → 1.26.3  info\n"
		"0 breaking, 2 risky, 2 info differences: core parts changed, B may not run what A runs\n");
	free(out);
	out = capture_diff(d, ENVLOCK_PRINT_COLOR, 0);
	assert_non_null(strstr(out, EL_SGR_YELLOW "  version"));
	assert_non_null(strstr(out, EL_SGR_BOLD "cuda" EL_SGR_RESET "\n"));
	assert_null(strstr(out, EL_SGR_RED));
	free(out);
	envlock_diff_free(d);
}

static void json_output_has_the_same_data(void **state)
{
	spec a = { 0 }, b = { .cuda = "11.8.89", .hostname = "node7" };
	envlock_diff *d = diff_specs(&a, &b);
	char *out = capture_diff(d, 0, 1);
	cJSON *doc = cJSON_Parse(out), *list, *e;

	(void)state;
	assert_non_null(doc);
	assert_string_equal(el_jget_str(el_jget(doc, "a"), "file"), "a.json");
	assert_string_equal(el_jget_str(el_jget(doc, "b"), "hostname"), "node7");
	assert_int_equal(el_jget_int(el_jget(doc, "counts"), "risky", -1), 1);
	assert_int_equal(el_jget_int(el_jget(doc, "counts"), "info", -1), 1);
	assert_int_equal(el_jget_int(el_jget(doc, "counts"), "breaking", -1), 0);
	assert_false(el_jget_bool(doc, "identical", true));
	assert_string_equal(el_jget_str(doc, "verdict"), envlock_diff_verdict(d));
	list = el_jget(doc, "differences");
	assert_int_equal(cJSON_GetArraySize(list), 2);
	e = cJSON_GetArrayItem(list, 0);
	assert_string_equal(el_jget_str(e, "section"), "cuda");
	assert_string_equal(el_jget_str(e, "key"), "version");
	assert_string_equal(el_jget_str(e, "change"), "changed");
	assert_string_equal(el_jget_str(e, "severity"), "risky");
	assert_string_equal(el_jget_str(e, "a"), "10.2.89");
	assert_string_equal(el_jget_str(e, "b"), "11.8.89");
	assert_string_equal(el_jget_str(e, "reason"), "CUDA release 10.2 → 11.8");
	cJSON_Delete(doc);
	free(out);
	envlock_diff_free(d);
}

static void terminal_controls_are_escaped(void **state)
{
	spec a = { .extra = ", \"env\": {\"variables\": {\"T\\u001b]0;x\\u0007\": \"1\"}}" };
	spec b = { .extra = ", \"env\": {\"variables\": {\"T\\u001b]0;x\\u0007\": \"a\\u001b[31mb\\u009b\"}}" };
	envlock_diff *d = diff_specs(&a, &b);
	char *out = capture_diff(d, 0, 0);

	(void)state;
	/* a lockfile's text never reaches the terminal as a control sequence */
	assert_string_equal(out,
		"env\n"
		"  T\\x1b]0;x\\x07  1 → a\\x1b[31mb\\xc2\\x9b  info\n"
		"0 breaking, 0 risky, 1 info difference: no core part changed\n");
	assert_int_equal(el_term_width("a\033b"), 6);
	free(out);
	envlock_diff_free(d);
}

static void display_shortens_digests(void **state)
{
	char *s;

	(void)state;
	s = el_display_value("libcudart.so.10.2.89 sha256:bb37e8602f21844ebd1d07e9f24e9d5452a65146968f68999947fc0aaa5e1b93");
	assert_string_equal(s, "libcudart.so.10.2.89 sha256:bb37e8602f21…");
	free(s);
	s = el_display_value("py37h06a4308_0 cafe");
	assert_string_equal(s, "py37h06a4308_0 cafe");
	free(s);
	s = el_display_value(NULL);
	assert_string_equal(s, "(none)");
	free(s);
	assert_int_equal(el_term_width("2 × A → B"), 9);
}

/* Rules: what B has that A has not is reported with the rule's own words. */
/* A partial lock (envlock import) speaks only for the sections it has: the rest is not "removed". */
static void partial_lock_speaks_for_its_sections(void **state)
{
	spec s = { 0 };
	envlock_lock *full = load_spec(&s);
	envlock_lock *part = load_text("{\"envlock\": 1, \"partial\": {\"from\": \"pip-freeze\"},"
				       " \"pip\": {\"status\": \"present\", \"distributions\": ["
				       DIST("numpy", "1.26.3") ", " DIST("PyYAML", "6.0.1") "]}}");
	envlock_lock *conda = load_text("{\"envlock\": 1, \"partial\": {\"from\": \"conda-explicit\"},"
					" \"conda\": {\"status\": \"present\", \"packages\": [" PKG_NUMPY_CONDA "]}}");
	envlock_diff *d = NULL;
	envlock_ctx *ctx;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_diff_locks(&d, ctx, full, "full.json", part, "pip.json", NULL), 0);
	assert_int_equal(envlock_diff_count(d), 1);
	assert_string_equal(envlock_diff_get(d, 0)->section, "pip");
	assert_string_equal(envlock_diff_get(d, 0)->key, "numpy");
	envlock_diff_free(d);
	/* a conda list and a pip list have no section in common */
	assert_int_equal(envlock_diff_locks(&d, ctx, conda, "conda.json", part, "pip.json", NULL), 0);
	assert_true(envlock_diff_identical(d));
	assert_int_equal(envlock_diff_count(d), 0);
	envlock_diff_free(d);
	envlock_ctx_free(ctx);
	envlock_lock_free(full);
	envlock_lock_free(part);
	envlock_lock_free(conda);
}

static void findings_on_b_only(void **state)
{
	envlock_ctx *ctx;
	envlock_rules *rules = NULL;
	envlock_lock *good = NULL, *broken = NULL;
	envlock_diff_opts opts = { 0 };
	envlock_diff *d = NULL;
	const envlock_diff_entry *e;
	int resolved;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	if (envlock_rules_load_default(&rules, ctx) != 0)
		fail_msg("rules: %s", envlock_error_last(ctx));
	assert_int_equal(envlock_lock_load(&good, ctx, "tests/golden/ubuntu1604-mmdet.lock.json"), 0);
	assert_int_equal(envlock_lock_load(&broken, ctx, "tests/golden/broken.lock.json"), 0);
	opts.rules = rules;
	assert_int_equal(envlock_diff_locks(&d, ctx, good, NULL, broken, NULL, &opts), 0);
	e = envlock_diff_get(d, 0);
	assert_int_equal(e->change, ENVLOCK_DIFF_FINDING);
	assert_int_equal(e->severity, ENVLOCK_SEV_BREAKING);
	assert_string_equal(e->section, "cudnn");
	assert_string_equal(e->rule, "soname-link-missing");
	assert_non_null(strstr(e->reason, "cannot open shared object file"));
	assert_true(e->fix && *e->fix);
	assert_true(e->source && *e->source);
	assert_null(e->a);
	assert_int_equal(envlock_diff_tally(d, ENVLOCK_SEV_BREAKING), 2);
	assert_non_null(strstr(envlock_diff_verdict(d), "B cannot run what A runs"));
	envlock_diff_free(d);

	/* the other way round, those problems are gone: info, never breaking */
	assert_int_equal(envlock_diff_locks(&d, ctx, broken, NULL, good, NULL, &opts), 0);
	resolved = 0;
	for (size_t i = 0; i < envlock_diff_count(d); i++) {
		e = envlock_diff_get(d, i);
		if (e->change != ENVLOCK_DIFF_RESOLVED || strcmp(e->rule, "soname-link-missing") != 0)
			continue;
		assert_int_equal(e->severity, ENVLOCK_SEV_INFO);
		resolved++;
	}
	assert_int_equal(resolved, 2);
	envlock_diff_free(d);

	/* a file against itself has no finding to report, whatever its problems */
	assert_int_equal(envlock_diff_locks(&d, ctx, broken, NULL, broken, NULL, &opts), 0);
	assert_true(envlock_diff_identical(d));
	envlock_diff_free(d);
	envlock_lock_free(good);
	envlock_lock_free(broken);
	envlock_rules_free(rules);
	envlock_ctx_free(ctx);
}

static envlock_drift *drift_of(const spec *const *specs, const char *const *names, size_t n,
			       const envlock_diff_opts *opts)
{
	envlock_ctx *ctx;
	envlock_drift *d = NULL;

	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_drift_new(&d, ctx, opts), 0);
	for (size_t i = 0; i < n; i++) {
		envlock_lock *lock = load_spec(specs[i]);

		assert_int_equal(envlock_drift_add(d, ctx, lock, names[i]), 0);
		envlock_lock_free(lock);
	}
	assert_int_equal(envlock_drift_finish(d, ctx), 0);
	envlock_ctx_free(ctx);
	return d;
}

/* A thread's share of a fleet, put from the last file backwards; no cmocka assert off the main thread. */
typedef struct {
	envlock_drift *d;
	envlock_lock **locks;
	size_t n, start, step;
	int rc;
} putter;

static void *put_share(void *arg)
{
	putter *p = arg;
	envlock_ctx *ctx;

	if (envlock_ctx_new(&ctx) != 0) {
		p->rc = -1;
		return NULL;
	}
	for (size_t i = p->start; i < p->n; i += p->step) {
		size_t f = p->n - 1 - i;

		if (envlock_drift_put(p->d, ctx, p->locks[f], f) != 0)
			p->rc = -1;
	}
	envlock_ctx_free(ctx);
	return NULL;
}

/* Files put from four threads in any order make the table that adding them in order makes. */
static void drift_put_from_threads(void **state)
{
	enum { N = 24, T = 4 };
	/* two dists of one name: the later one's key is numbered, file by file, whichever thread puts it */
	spec same = { 0 }, cuda = { .cuda = "11.8.89" }, twice = { .pip = DIST("numpy", "1.21.6") ", " DIST("numpy", "1.19.5") };
	const spec *specs[N];
	const char *names[N];
	char namebuf[N][16];
	envlock_lock *locks[N];
	envlock_drift *seq, *d = NULL;
	envlock_ctx *ctx;
	pthread_t threads[T];
	putter shares[T];

	(void)state;
	for (size_t i = 0; i < N; i++) {
		specs[i] = i % 5 == 3 ? &cuda : i % 7 == 2 ? &twice : &same;
		snprintf(namebuf[i], sizeof(namebuf[i]), "n%zu.json", i);
		names[i] = namebuf[i];
	}
	seq = drift_of(specs, names, N, NULL);
	for (size_t i = 0; i < N; i++)
		locks[i] = load_spec(specs[i]);
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_drift_new(&d, ctx, NULL), 0);
	assert_int_equal(envlock_drift_expect(d, ctx, names, N), 0);
	assert_int_equal(envlock_drift_finish(d, ctx), ENVLOCK_EINVAL);
	assert_string_equal(envlock_error_last(ctx), "drift table: 0 of its 24 files were added");
	for (size_t t = 0; t < T; t++) {
		shares[t] = (putter){ d, locks, N, t, T, 0 };
		assert_int_equal(pthread_create(&threads[t], NULL, put_share, &shares[t]), 0);
	}
	for (size_t t = 0; t < T; t++) {
		assert_int_equal(pthread_join(threads[t], NULL), 0);
		assert_int_equal(shares[t].rc, 0);
	}
	assert_int_equal(envlock_drift_put(d, ctx, locks[3], 3), ENVLOCK_EINVAL);
	assert_string_equal(envlock_error_last(ctx), "drift table: file 3 was already added");
	assert_int_equal(envlock_drift_put(d, ctx, locks[3], N), ENVLOCK_EINVAL);
	assert_string_equal(envlock_error_last(ctx), "drift table: file 24 was not expected");
	assert_int_equal(envlock_drift_finish(d, ctx), 0);
	assert_int_equal(envlock_drift_count(seq), 4); /* cuda's toolkit and version, numpy (2), pyyaml */
	assert_string_equal(envlock_drift_get(seq, 2)->key, "numpy (2)");
	assert_int_equal(envlock_drift_count(d), envlock_drift_count(seq));
	assert_int_equal(envlock_drift_drifting(d), envlock_drift_drifting(seq));
	assert_int_equal(envlock_drift_odd_files(d), envlock_drift_odd_files(seq));
	assert_string_equal(envlock_drift_verdict(d), envlock_drift_verdict(seq));
	for (size_t j = 0; j < envlock_drift_count(d); j++) {
		const envlock_drift_item *x = envlock_drift_get(d, j), *y = envlock_drift_get(seq, j);

		assert_string_equal(x->section, y->section);
		assert_string_equal(x->key, y->key);
		assert_true((x->majority == NULL) == (y->majority == NULL));
		if (x->majority)
			assert_string_equal(x->majority, y->majority);
		assert_int_equal(x->majority_count, y->majority_count);
		assert_int_equal(x->severity, y->severity);
		assert_int_equal(x->odd_count, y->odd_count);
		for (size_t k = 0; k < x->odd_count; k++) {
			assert_string_equal(x->odd[k].file, y->odd[k].file);
			assert_true((x->odd[k].value == NULL) == (y->odd[k].value == NULL));
			if (x->odd[k].value)
				assert_string_equal(x->odd[k].value, y->odd[k].value);
		}
	}
	for (size_t i = 0; i < N; i++)
		envlock_lock_free(locks[i]);
	envlock_drift_free(seq);
	envlock_drift_free(d);
	envlock_ctx_free(ctx);
}

static void drift_names_the_odd_file(void **state)
{
	spec same = { 0 }, odd = { .cuda = "11.8.89", .pip = DIST("numpy", "1.21.6") };
	const spec *specs[] = { &same, &same, &odd, &same };
	const char *names[] = { "locks/n1.json", "locks/n2.json", "locks/n3.json", "other/n4.json" };
	envlock_drift *d = drift_of(specs, names, 4, NULL);
	const envlock_drift_item *it;

	(void)state;
	assert_int_equal(envlock_drift_files(d), 4);
	assert_int_equal(envlock_drift_items(d), 25);
	assert_int_equal(envlock_drift_drifting(d), 3);
	assert_int_equal(envlock_drift_odd_files(d), 1);
	assert_int_equal(envlock_drift_count(d), 3);
	/* sorted by section, then key */
	it = envlock_drift_get(d, 0);
	assert_string_equal(it->section, "cuda");
	assert_string_equal(it->key, "toolkit /usr/local/cuda-X");
	it = envlock_drift_get(d, 1);
	assert_string_equal(it->key, "version");
	assert_string_equal(it->majority, "10.2.89");
	assert_int_equal(it->majority_count, 3);
	assert_int_equal(it->severity, ENVLOCK_SEV_RISKY);
	assert_int_equal(it->odd_count, 1);
	assert_string_equal(it->odd[0].file, "locks/n3.json");
	assert_string_equal(it->odd[0].name, "n3.json");
	assert_string_equal(it->odd[0].value, "11.8.89");
	it = envlock_drift_get(d, 2);
	assert_string_equal(it->section, "pip");
	assert_string_equal(it->key, "pyyaml");
	assert_string_equal(it->majority, "6.0.1");
	assert_null(it->odd[0].value);
	assert_int_equal(it->severity, ENVLOCK_SEV_INFO);
	assert_string_equal(envlock_drift_verdict(d), "3 of 25 items drift across 1 of 4 files");
	envlock_drift_free(d);
}

static void drift_ties_and_clashing_names(void **state)
{
	spec x = { .gcc = "9.4.0" }, y = { .gcc = "7.5.0" };
	const spec *specs[] = { &y, &x, &x, &y };
	const char *names[] = { "a/envlock.lock.json", "b/envlock.lock.json", "c/other.json", "d/more.json" };
	envlock_drift *d = drift_of(specs, names, 4, NULL);
	const envlock_drift_item *it;

	(void)state;
	/* two against two: the earliest file's value is the majority */
	assert_int_equal(envlock_drift_count(d), 1);
	it = envlock_drift_get(d, 0);
	assert_string_equal(it->majority, "7.5.0");
	assert_int_equal(it->majority_count, 2);
	assert_int_equal(it->odd_count, 2);
	/* base names clash, so every file keeps the name it was given */
	assert_string_equal(it->odd[0].name, "b/envlock.lock.json");
	assert_string_equal(it->odd[1].name, "c/other.json");
	assert_int_equal(it->severity, ENVLOCK_SEV_RISKY);
	envlock_drift_free(d);
}

static void drift_identical_and_all(void **state)
{
	spec s = { 0 };
	const spec *specs[] = { &s, &s, &s };
	const char *names[] = { "n1", "n2", "n3" };
	envlock_diff_opts opts = { .all = 1 };
	envlock_drift *d = drift_of(specs, names, 3, NULL);

	(void)state;
	assert_int_equal(envlock_drift_count(d), 0);
	assert_string_equal(envlock_drift_verdict(d), "identical: 25 items the same in all 3 files");
	envlock_drift_free(d);
	d = drift_of(specs, names, 3, &opts);
	assert_int_equal(envlock_drift_count(d), 25);
	assert_int_equal(envlock_drift_drifting(d), 0);
	assert_int_equal(envlock_drift_get(d, 0)->majority_count, 3);
	envlock_drift_free(d);
}

static void drift_printers(void **state)
{
	spec same = { 0 }, odd = { .driver = "535.129.03" };
	const spec *specs[] = { &same, &odd, &same, &odd, &same };
	const char *names[] = { "n1.json", "n2.json", "n3.json", "n4.json", "n5.json" };
	envlock_drift *d = drift_of(specs, names, 5, NULL);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	envlock_ctx *ctx;
	cJSON *doc, *it;

	(void)state;
	assert_int_equal(envlock_ctx_new(&ctx), 0);
	assert_int_equal(envlock_drift_print(d, ctx, f, 0), 0);
	fclose(f);
	assert_string_equal(text,
		"gpu\n"
		"  driver  450.142.00  3 of 5  risky     n2.json, n4.json: 535.129.03\n"
		"1 of 25 items drift across 2 of 5 files\n");
	free(text);
	f = open_memstream(&text, &len);
	assert_int_equal(envlock_drift_print_json(d, ctx, f), 0);
	fclose(f);
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	assert_int_equal(el_jget_int(doc, "drifting", -1), 1);
	assert_int_equal(el_jget_int(doc, "items", -1), 25);
	assert_int_equal(cJSON_GetArraySize(el_jget(doc, "files")), 5);
	it = cJSON_GetArrayItem(el_jget(doc, "drift"), 0);
	assert_string_equal(el_jget_str(it, "key"), "driver");
	assert_string_equal(el_jget_str(it, "majority"), "450.142.00");
	assert_int_equal(cJSON_GetArraySize(el_jget(it, "differs")), 2);
	assert_string_equal(el_jget_str(cJSON_GetArrayItem(el_jget(it, "differs"), 1), "file"), "n4.json");
	cJSON_Delete(doc);
	free(text);
	envlock_ctx_free(ctx);
	envlock_drift_free(d);
}

/* An unsorted conda list (not as save writes it) still matches by name: the kit's copy is the same archive */
static void unsorted_conda_list_matches_the_same_archive(void **state)
{
#define NUMPY_FROM(channel, md5) "{\"name\": \"numpy\", \"version\": \"1.21.6\", \"build\": \"py37h976b520_0\", " \
	"\"channel\": \"" channel "\", \"subdir\": \"linux-64\", \"md5\": \"" md5 "\"}"
	spec a = { .conda = PKG_PY_CONDA ", " NUMPY_FROM("https://conda.anaconda.org/conda-forge/linux-64",
							   "9b03acfb4d70500b99e306198f330922") };
	spec kit = { .conda = PKG_PY_CONDA ", " NUMPY_FROM("file:///kit/conda", "9b03acfb4d70500b99e306198f330922") };
	spec other = { .conda = PKG_PY_CONDA ", " NUMPY_FROM("file:///kit/conda", "0b03acfb4d70500b99e306198f330922") };
	envlock_diff *d;

	(void)state;
	d = diff_specs(&a, &kit);
	assert_null(find(d, "conda", "numpy"));
	envlock_diff_free(d);
	d = diff_specs(&a, &other);
	assert_non_null(find(d, "conda", "numpy"));
	envlock_diff_free(d);
#undef NUMPY_FROM
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flatten_gives_readable_items),
		cmocka_unit_test(identical_locks_have_no_entries),
		cmocka_unit_test(packages_match_by_name_conda_and_pip_apart),
		cmocka_unit_test(unsorted_conda_list_matches_the_same_archive),
		cmocka_unit_test(core_items_are_risky_when_what_matters_changes),
		cmocka_unit_test(core_item_appearing_is_risky),
		cmocka_unit_test(builds_modules_and_lists),
		cmocka_unit_test(entries_sorted_most_severe_first),
		cmocka_unit_test(section_filters),
		cmocka_unit_test(all_lists_identical_items),
		cmocka_unit_test(repeated_names_are_numbered),
		cmocka_unit_test(hostile_shapes_are_skipped),
		cmocka_unit_test(provenance_items),
		cmocka_unit_test(human_output_is_grouped_and_aligned),
		cmocka_unit_test(json_output_has_the_same_data),
		cmocka_unit_test(terminal_controls_are_escaped),
		cmocka_unit_test(display_shortens_digests),
		cmocka_unit_test(partial_lock_speaks_for_its_sections),
		cmocka_unit_test(findings_on_b_only),
		cmocka_unit_test(drift_names_the_odd_file),
		cmocka_unit_test(drift_put_from_threads),
		cmocka_unit_test(drift_ties_and_clashing_names),
		cmocka_unit_test(drift_identical_and_all),
		cmocka_unit_test(drift_printers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
