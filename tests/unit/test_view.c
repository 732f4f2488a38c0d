/*
 * lib/lock/view.c: the typed view every consumer reads a lock through.
 * A real probed lock (tests/golden) read through the view against the
 * same document read member by member; hand-made documents for the
 * rules (present, the default toolkit) and for members of the wrong type.
 */
#include "unit.h"
#include "lock/view.h"

static cJSON *parse(const char *json)
{
	cJSON *doc = cJSON_Parse(json);

	assert_non_null(doc);
	return doc;
}

static envlock_lock *load_golden(envlock_ctx **ctx, const char *name)
{
	char path[4096];
	envlock_lock *lock = NULL;

	snprintf(path, sizeof(path), "tests/golden/%s", name);
	assert_int_equal(envlock_ctx_new(ctx), 0);
	if (envlock_lock_load(&lock, *ctx, path) != 0)
		fail_msg("%s: %s", path, envlock_error_last(*ctx));
	return lock;
}

static void golden_lock_reads_as_its_document(void **state)
{
	envlock_ctx *ctx;
	envlock_lock *lock = load_golden(&ctx, "ubuntu1604-mmdet.lock.json");
	const el_view *v = el_lock_view(lock);
	const cJSON *doc = lock->doc, *it;
	size_t i;

	(void)state;
	assert_ptr_equal(el_lock_view(lock), v); /* built once */
	assert_int_equal(v->format, 1);
	assert_string_equal(v->id, el_jget_str(doc, "id"));
	assert_string_equal(v->system.glibc.version, "2.23");
	assert_true(v->system.glibc.st.present);
	assert_string_equal(v->system.glibc.file, "/lib/x86_64-linux-gnu/libc-2.23.so");

	/* the default toolkit, named by its home; /usr/local/cuda is its alias; the conda env's cudatoolkit sorts first */
	assert_int_equal(v->cuda.ntoolkits, 2);
	assert_string_equal(v->cuda.toolkits[0].layout, "conda");
	assert_true(el_env_layout(v->cuda.toolkits[0].layout));
	assert_false(el_env_layout(v->cuda.toolkits[1].layout));
	assert_ptr_equal(v->cuda.default_tk, &v->cuda.toolkits[1]);
	assert_string_equal(el_toolkit_version(v->cuda.default_tk), "10.2.89");
	assert_ptr_equal(el_view_toolkit_at(v, "/usr/local/cuda"), v->cuda.default_tk);
	assert_null(el_view_toolkit_at(v, "/usr/local/cuda-11.8"));
	assert_int_equal(v->cuda.toolkits[1].nlibraries, 3);
	/* a library of the env's toolkit has the toolkit's version; any other, its file name's */
	assert_string_equal(el_view_library_version(v, v->cuda.toolkits[0].libraries[0].path), "10.2.89");
	assert_string_equal(el_view_library_version(v, "/x/libcudnn.so.8.2.1"), "8.2.1");

	/* cuDNN's soname chain, outermost link first */
	assert_string_equal(v->cudnn.libraries[0].soname, "libcudnn.so.8");
	assert_int_equal(v->cudnn.libraries[0].nlinks, 2);
	assert_string_equal(v->cudnn.libraries[0].links[1].target, "libcudnn.so.8.2.1");
	assert_int_equal(v->cudnn.libraries[0].size, 320);

	/* torch: a CUDA build whose hip is None; mmcv with its ops */
	const el_framework *torch = el_view_framework(v, "torch"), *mmcv = el_view_framework(v, "mmcv");
	assert_string_equal(torch->version, "1.10.0+cu102");
	assert_string_equal(torch->cuda, "10.2");
	assert_false(torch->cuda_none);
	assert_null(torch->hip);
	assert_true(torch->hip_none);
	assert_int_equal(torch->cpu_only, EL_NO);
	assert_int_equal(mmcv->ops, EL_YES);
	assert_string_equal(mmcv->package, "mmcv-full");
	assert_string_equal(mmcv->ops_files.v[0], "_ext.cpython-37m-x86_64-linux-gnu.so");
	assert_null(el_view_framework(v, "tensorflow"));

	/* every package and distribution, in the document's order */
	i = 0;
	cJSON_ArrayForEach(it, el_jget(el_jget(doc, "conda"), "packages")) {
		assert_string_equal(v->conda.packages[i].name, el_jget_str(it, "name"));
		assert_string_equal(v->conda.packages[i].build, el_jget_str(it, "build"));
		i++;
	}
	assert_int_equal(i, v->conda.npackages);
	assert_true(i > 10);
	i = 0;
	cJSON_ArrayForEach(it, el_jget(el_jget(doc, "pip"), "distributions")) {
		assert_string_equal(v->pip.dists[i].name, el_jget_str(it, "name"));
		assert_int_equal(v->pip.dists[i].requested,
				 el_jget(it, "requested") ? el_jget_bool(it, "requested", 0) : EL_UNSET);
		i++;
	}
	assert_int_equal(i, v->pip.ndists);
	/* PEP 503: Mmcv_Full finds mmcv-full */
	assert_ptr_not_equal(el_view_pip_dist(v, "Mmcv_Full"), NULL);
	assert_string_equal(el_view_pip_dist(v, "Mmcv_Full")->version, "1.7.5");
	assert_ptr_equal(el_view_pip_dist(v, "mmcv.-full"), el_view_pip_dist(v, "mmcv-full"));
	assert_null(el_view_pip_dist(v, "mmcvfull"));
	assert_null(el_view_pip_dist(v, "mmcv-full-"));
	assert_null(el_view_pip_dist(v, "mmcv"));

	/* the GPU's members nvidia's /proc file gave, beyond the named ones */
	assert_string_equal(v->gpu.devices[0].name, "Tesla V100-PCIE-16GB");
	bool uuid = false;
	for (i = 0; i < v->gpu.devices[0].extra.n; i++) {
		assert_string_not_equal(v->gpu.devices[0].extra.v[i].key, "name");
		uuid |= strcmp(v->gpu.devices[0].extra.v[i].key, "gpu_uuid") == 0;
	}
	assert_true(uuid);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
}

static void present_is_one_rule(void **state)
{
	cJSON *doc = parse("{\"envlock\":1,\"gpu\":{\"status\":\"absent\"},\"cudnn\":{\"status\":\"present\"},"
			   "\"python\":{\"version\":\"3.7.16\"},\"conda\":\"oops\"}");
	el_view *v = el_view_new(doc);

	(void)state;
	assert_true(v->gpu.st.recorded);
	assert_false(v->gpu.st.present);
	assert_string_equal(v->gpu.st.status, "absent");
	assert_true(v->cudnn.st.present);
	assert_true(v->python.st.present); /* no status: present */
	assert_false(v->conda.st.recorded); /* not an object */
	assert_false(v->conda.st.present);
	assert_false(v->cuda.st.recorded);
	assert_null(v->cuda.default_tk);
	el_view_free(v);
	cJSON_Delete(doc);
}

static void default_toolkit_is_named_never_guessed(void **state)
{
	cJSON *doc = parse("{\"cuda\":{\"status\":\"present\",\"default\":\"/usr/local/cuda\",\"toolkits\":["
			   "{\"home\":\"/usr/local/cuda-11.8\",\"release\":\"11.8\"},"
			   "{\"home\":\"/usr/local/cuda-13.0\",\"aliases\":[\"/usr/local/cuda\"],\"version\":\"13.0.48\"}]}}");
	cJSON *none = parse("{\"cuda\":{\"status\":\"present\",\"toolkits\":[{\"home\":\"/usr/local/cuda-11.8\"}]}}");
	el_view *v = el_view_new(doc), *w = el_view_new(none);

	(void)state;
	assert_int_equal(v->cuda.ntoolkits, 2);
	assert_ptr_equal(v->cuda.default_tk, &v->cuda.toolkits[1]);
	assert_string_equal(el_toolkit_version(&v->cuda.toolkits[0]), "11.8");
	assert_string_equal(el_toolkit_version(v->cuda.default_tk), "13.0.48");
	assert_null(w->cuda.default_tk); /* no default named: none */
	assert_null(el_toolkit_version(NULL));
	el_view_free(v);
	el_view_free(w);
	cJSON_Delete(doc);
	cJSON_Delete(none);
}

static void wrong_types_read_as_not_recorded(void **state)
{
	cJSON *doc = parse("{\"envlock\":\"1\",\"system\":{\"arch\":7,\"cpu\":{\"logical_cores\":1.5},"
			   "\"ld_so_conf\":[\"/etc/ld.so.conf.d/a.conf\",3,null]},"
			   "\"pip\":{\"distributions\":[\"x\",{\"name\":\"torch\",\"requested\":\"yes\",\"tags\":{}}]},"
			   "\"gpu\":{\"devices\":[{\"bus\":\"0000:01:00.0\",\"memory_mib\":\"[N/A]\",\"pcie_gen_max\":4,"
			   "\"irq\":\"82\",\"odd\":5}]},"
			   "\"frameworks\":{\"torch\":{\"status\":\"present\",\"version\":\"1.13.1\",\"cuda\":null}},"
			   "\"verify\":{\"stages\":[{\"stage\":\"training\",\"figures\":{\"loss\":0.25,\"steps\":200,\"s\":[1]}}]}}");
	el_view *v = el_view_new(doc);

	(void)state;
	assert_int_equal(v->format, -1);
	assert_null(v->system.arch);
	assert_int_equal(v->system.cpu.logical_cores, -1);
	assert_int_equal(v->system.ld_so_conf.n, 1);
	assert_int_equal(v->pip.ndists, 1); /* the string is no distribution */
	assert_int_equal(v->pip.dists[0].requested, EL_UNSET);
	assert_int_equal(v->pip.dists[0].tags.n, 0);
	assert_int_equal(v->gpu.devices[0].memory_mib, -1);
	assert_string_equal(v->gpu.devices[0].memory_mib_text, "[N/A]");
	assert_int_equal(v->gpu.devices[0].pcie_gen_max, 4);
	assert_string_equal(v->gpu.devices[0].pcie_gen_max_text, "4");
	assert_null(v->gpu.devices[0].pcie_width_max_text);
	assert_int_equal(v->gpu.devices[0].extra.n, 1); /* irq; the number is not a string member */
	assert_string_equal(v->gpu.devices[0].extra.v[0].key, "irq");
	assert_true(el_view_framework(v, "torch")->cuda_none);
	assert_null(el_view_framework(v, "torch")->cuda);
	assert_int_equal(v->verify.stages[0].figures.n, 2);
	assert_string_equal(v->verify.stages[0].figures.v[0].val, "0.25");
	assert_string_equal(v->verify.stages[0].figures.v[1].val, "200");
	el_view_free(v);
	cJSON_Delete(doc);
}

/* a repository's untracked files: text or the reason it was left out; a non-object is no file */
static void untracked_files_read(void **state)
{
	cJSON *doc = parse("{\"repos\":{\"status\":\"present\",\"repositories\":[{\"path\":\"mmdet\","
			   "\"status\":\"present\",\"untracked_files\":[{\"path\":\"a.py\",\"sha256\":\"ab\","
			   "\"size\":3,\"text\":\"x=1\",\"executable\":true},\"junk\",{\"path\":\"w.bin\","
			   "\"sha256\":\"cd\",\"size\":9,\"omitted\":\"binary\"}]}]}}");
	el_view *v = el_view_new(doc);
	const el_repo *r;

	(void)state;
	assert_int_equal(v->repos.nrepos, 1);
	r = &v->repos.repos[0];
	assert_int_equal(r->nuntracked_files, 2);
	assert_string_equal(r->untracked_files[0].path, "a.py");
	assert_string_equal(r->untracked_files[0].text, "x=1");
	assert_null(r->untracked_files[0].omitted);
	assert_true(r->untracked_files[0].executable);
	assert_int_equal(r->untracked_files[0].size, 3);
	assert_string_equal(r->untracked_files[1].path, "w.bin");
	assert_null(r->untracked_files[1].text);
	assert_string_equal(r->untracked_files[1].omitted, "binary");
	assert_string_equal(r->untracked_files[1].sha256, "cd");
	assert_false(r->untracked_files[1].executable);
	el_view_free(v);
	cJSON_Delete(doc);
}

static void view_follows_the_document(void **state)
{
	envlock_ctx *ctx;
	envlock_lock *lock = load_golden(&ctx, "no-nvidia.lock.json");
	const el_view *v = el_lock_view(lock);
	char *id = strdup(v->id);

	(void)state;
	assert_false(v->checks.recorded && v->checks.breaking < 0);
	el_jset_str(el_jget(lock->doc, "system"), "arch", "aarch64");
	el_lock_touch(lock);
	v = el_lock_view(lock);
	assert_string_equal(v->system.arch, "aarch64");
	/* settling the id rewrites the document's "id": the view reads the new one */
	assert_string_not_equal(envlock_lock_id(lock), id);
	v = el_lock_view(lock);
	assert_string_equal(v->id, envlock_lock_id(lock));
	free(id);
	envlock_lock_free(lock);
	envlock_ctx_free(ctx);
}

/* the options pip needs: configured ones first, then each origin's once; direct_url and unknown options add none */
static void pip_indexes_once_each(void **state)
{
	cJSON *doc = parse("{\"pip\":{\"index_options\":["
			   "{\"option\":\"index-url\",\"url\":\"https://m.example/simple\",\"from\":\"/etc/pip.conf\"},"
			   "{\"option\":\"no-index\",\"url\":\"https://x.example\",\"from\":\"?\"},"
			   "{\"option\":\"extra-index-url\",\"url\":\"https://download.pytorch.org/whl/cu102/\",\"from\":\"PIP_EXTRA_INDEX_URL\"}],"
			   "\"distributions\":["
			   "{\"name\":\"mmcv-full\",\"origin\":{\"kind\":\"inferred\",\"option\":\"find-links\","
			   "\"url\":\"https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html\",\"note\":\"n\"}},"
			   "{\"name\":\"mmpose\",\"origin\":{\"kind\":\"direct_url\"}},"
			   "{\"name\":\"torch\",\"origin\":{\"kind\":\"inferred\",\"option\":\"extra-index-url\","
			   "\"url\":\"https://download.pytorch.org/whl/cu102\",\"note\":\"n\"}},"
			   "{\"name\":\"torchvision\",\"origin\":{\"kind\":\"inferred\",\"option\":\"extra-index-url\","
			   "\"url\":\"https://download.pytorch.org/whl/cu102\",\"note\":\"n\"}},"
			   "{\"name\":\"six\"}]}}");
	el_view *v = el_view_new(doc);
	const el_pip_dist *all[5];
	el_pip_index *ix;
	size_t n;

	(void)state;
	for (size_t i = 0; i < 5; i++)
		all[i] = &v->pip.dists[i];
	assert_string_equal(v->pip.dists[2].origin.kind, "inferred");
	assert_true(v->pip.dists[1].origin.recorded);
	assert_false(v->pip.dists[4].origin.recorded);
	el_pip_indexes(v, all, 5, &ix, &n);
	assert_int_equal(n, 3);
	assert_string_equal(ix[0].option, "index-url");
	assert_string_equal(ix[0].from, "/etc/pip.conf");
	assert_int_equal(ix[0].ndists, 0);
	/* torch's inferred index is the configured one: a trailing '/' does not make it another */
	assert_string_equal(ix[1].url, "https://download.pytorch.org/whl/cu102/");
	assert_string_equal(ix[1].from, "PIP_EXTRA_INDEX_URL");
	assert_int_equal(ix[1].ndists, 2);
	assert_string_equal(ix[1].dists[0]->name, "torch");
	assert_string_equal(ix[1].dists[1]->name, "torchvision");
	assert_string_equal(ix[2].option, "find-links");
	assert_null(ix[2].from);
	assert_string_equal(ix[2].dists[0]->name, "mmcv-full");
	el_pip_indexes_free(ix, n);
	/* only the distributions asked about: the configured options stay */
	el_pip_indexes(v, &all[4], 1, &ix, &n);
	assert_int_equal(n, 2);
	el_pip_indexes_free(ix, n);
	assert_string_equal(el_pip_option_flag("find-links"), "--find-links");
	assert_null(el_pip_option_flag("no-index"));
	assert_null(el_pip_option_flag(NULL));
	el_view_free(v);
	cJSON_Delete(doc);
}

/* system.shm and system.cgroup: a number is a limit, null none, absent (or another type) not known */
static void limits_read_as_recorded(void **state)
{
	cJSON *doc = parse("{\"system\": {\"cpu\": {\"logical_cores\": 32, \"physical_cores\": 16},"
			   " \"memory\": {\"total_bytes\": 68719476736},"
			   " \"shm\": {\"present\": true, \"fs\": \"tmpfs\", \"size_bytes\": 67108864},"
			   " \"cgroup\": {\"version\": 2, \"cpu_limit\": 2.5, \"cpu_quota_us\": 250000,"
			   " \"cpu_period_us\": 100000, \"cpuset_cpus\": 8, \"memory_limit_bytes\": 17179869184}}}");
	cJSON *cg = el_jget(el_jget(doc, "system"), "cgroup");
	el_view *v = el_view_new(doc);

	(void)state;
	assert_true(v->system.shm.recorded);
	assert_true(v->system.shm.present);
	assert_string_equal(v->system.shm.fs, "tmpfs");
	assert_int_equal(v->system.shm.size_bytes, 67108864);
	assert_int_equal(v->system.shm.free_bytes, -1);
	assert_int_equal(v->system.cgroup.version, 2);
	assert_int_equal(v->system.cgroup.cpu_limited, EL_YES);
	assert_true(v->system.cgroup.cpu_limit == 2.5);
	/* the smaller of the quota and the cpuset */
	assert_true(el_cgroup_cpus(&v->system) == 2.5);
	assert_int_equal(el_cgroup_memory(&v->system), 17179869184LL);
	el_view_free(v);

	/* a cpuset below the quota binds; a memory limit above the machine's memory limits nothing */
	cJSON_ReplaceItemInObject(cg, "cpuset_cpus", cJSON_CreateNumber(2));
	cJSON_ReplaceItemInObject(cg, "memory_limit_bytes", cJSON_CreateNumber(137438953472.0));
	v = el_view_new(doc);
	assert_true(el_cgroup_cpus(&v->system) == 2);
	assert_int_equal(el_cgroup_memory(&v->system), -1);
	el_view_free(v);

	/* null: none; text, absent or 0: not known */
	cJSON_ReplaceItemInObject(cg, "cpu_limit", cJSON_CreateNull());
	cJSON_ReplaceItemInObject(cg, "memory_limit_bytes", cJSON_CreateString("16g"));
	cJSON_DeleteItemFromObject(cg, "cpuset_cpus");
	v = el_view_new(doc);
	assert_int_equal(v->system.cgroup.cpu_limited, EL_NO);
	assert_int_equal(v->system.cgroup.memory_limited, EL_UNSET);
	assert_true(el_cgroup_cpus(&v->system) < 0);
	assert_int_equal(el_cgroup_memory(&v->system), -1);
	el_view_free(v);
	cJSON_ReplaceItemInObject(cg, "cpu_limit", cJSON_CreateNumber(0));
	v = el_view_new(doc);
	assert_int_equal(v->system.cgroup.cpu_limited, EL_UNSET);
	el_view_free(v);
	cJSON_Delete(doc);

	/* an older lock records neither */
	doc = parse("{\"system\": {\"arch\": \"x86_64\"}}");
	v = el_view_new(doc);
	assert_false(v->system.shm.recorded);
	assert_false(v->system.cgroup.recorded);
	assert_int_equal(v->system.cgroup.cpu_limited, EL_UNSET);
	assert_true(el_cgroup_cpus(&v->system) < 0);
	assert_int_equal(el_cgroup_memory(&v->system), -1);
	el_view_free(v);
	cJSON_Delete(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(golden_lock_reads_as_its_document),
		cmocka_unit_test(present_is_one_rule),
		cmocka_unit_test(default_toolkit_is_named_never_guessed),
		cmocka_unit_test(wrong_types_read_as_not_recorded),
		cmocka_unit_test(untracked_files_read),
		cmocka_unit_test(view_follows_the_document),
		cmocka_unit_test(pip_indexes_once_each),
		cmocka_unit_test(limits_read_as_recorded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
