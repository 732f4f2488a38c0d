/*
 * Unit tests for the Python-side probes (python, conda, pip, frameworks)
 * on small roots built here: which environment is chosen and why, where
 * its version comes from, conda records good and bad, pip metadata
 * (PEP 503 names, PEP 610 direct_url.json, egg-links) and the version
 * files torch and OpenMMLab ship.
 */
#include "unit.h"

#define PATCHLEVEL(v) "/* Version as a string */\n#define PY_VERSION              \"" v "\"\n"


static int unit_int(const envlock_lock *lock, const char *path)
{
	const cJSON *v = unit_get(lock, path);

	assert_true(cJSON_IsNumber(v));
	return v->valueint;
}

static int unit_bool(const envlock_lock *lock, const char *path)
{
	const cJSON *v = unit_get(lock, path);

	assert_true(cJSON_IsBool(v));
	return cJSON_IsTrue(v);
}

/* The distribution called name in pip.distributions (or NULL). */
static const cJSON *pip_dist(const envlock_lock *lock, const char *name)
{
	const cJSON *it, *arr = unit_get(lock, "pip.distributions");

	cJSON_ArrayForEach(it, arr) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return it;
	}
	return NULL;
}

static const char *obj_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A conda install's python: bin/python3.X, include/python3.X<abi>/patchlevel.h, site-packages. */
static void python_at(const char *root, const char *prefix, const char *xy, const char *abi,
		      const char *version)
{
	char rel[512], text[256];

	snprintf(rel, sizeof(rel), "%s/bin/python%s", prefix, xy);
	unit_write(root, rel, "#!/bin/sh\n", -1);
	snprintf(rel, sizeof(rel), "%s/bin/python3", prefix);
	snprintf(text, sizeof(text), "python%s", xy);
	unit_symlink(root, rel, text);
	snprintf(rel, sizeof(rel), "%s/lib/python%s/site-packages/.keep", prefix, xy);
	unit_write(root, rel, "", -1);
	if (version) {
		snprintf(rel, sizeof(rel), "%s/include/python%s%s/patchlevel.h", prefix, xy, abi);
		snprintf(text, sizeof(text), PATCHLEVEL("%s"), version);
		unit_write(root, rel, text, -1);
	}
}

static void conda_record(const char *root, const char *prefix, const char *name,
			 const char *version, const char *build)
{
	char rel[512], text[1024];

	snprintf(rel, sizeof(rel), "%s/conda-meta/%s-%s-%s.json", prefix, name, version, build);
	snprintf(text, sizeof(text),
		 "{\n  \"build\": \"%s\",\n  \"build_number\": 0,\n"
		 "  \"channel\": \"https://repo.anaconda.com/pkgs/main/linux-64\",\n"
		 "  \"files\": [\"lib/x\"],\n  \"md5\": \"0123456789abcdef0123456789abcdef\",\n"
		 "  \"name\": \"%s\",\n  \"subdir\": \"linux-64\",\n"
		 "  \"url\": \"https://repo.anaconda.com/pkgs/main/linux-64/%s-%s-%s.conda\",\n"
		 "  \"version\": \"%s\"\n}",
		 build, name, name, version, build, version);
	unit_write(root, rel, text, -1);
}

static void dist_info(const char *root, const char *site, const char *dir, const char *name,
		      const char *version)
{
	char rel[512], text[512];

	snprintf(rel, sizeof(rel), "%s/%s/METADATA", site, dir);
	snprintf(text, sizeof(text), "Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n"
		 "Version: 0.0 in the body is not a header\n", name, version);
	unit_write(root, rel, text, -1);
	snprintf(rel, sizeof(rel), "%s/%s/INSTALLER", site, dir);
	unit_write(root, rel, "pip\n", -1);
}

static void unit_remove(const char *root, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(remove(path), 0);
}

/* The tree's environment: NUL-separated KEY=VALUE entries, as /etc/environment lines. */
static void environ_file(const char *root, const char *vars, size_t len)
{
	char *text = malloc(len + 1);

	assert_non_null(text);
	for (size_t i = 0; i < len; i++)
		text[i] = vars[i] ? vars[i] : '\n';
	unit_write(root, "etc/environment", text, (long)len);
	free(text);
}

#define MC "home/alice/miniconda3"

static void python_version_sources(void **state)
{
	char *root = unit_tmpdir();
	envlock_lock *lock;

	(void)state;
	python_at(root, MC, "3.7", "m", "3.7.16");
	unit_write(root, MC "/conda-meta/history", "", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.status"), "present");
	assert_string_equal(unit_str(lock, "python.kind"), "conda");
	assert_string_equal(unit_str(lock, "python.prefix"), "/" MC);
	assert_string_equal(unit_str(lock, "python.version"), "3.7.16");
	assert_string_equal(unit_str(lock, "python.version_source"),
			    "/" MC "/include/python3.7m/patchlevel.h");
	assert_string_equal(unit_str(lock, "python.executable"), "/" MC "/bin/python3.7");
	assert_string_equal(unit_str(lock, "python.site_packages.0"),
			    "/" MC "/lib/python3.7/site-packages");
	assert_string_equal(unit_str(lock, "python.selected_by"), "search");
	envlock_lock_free(lock);
	unit_rmtree(root);

	/* a venv: pyvenv.cfg's version, then what its interpreter carries, never a folder's name */
	root = unit_tmpdir();
	python_at(root, "opt/venv", "3.10", "", NULL);
	unit_write(root, "opt/venv/pyvenv.cfg",
		   "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.10.12\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.kind"), "venv");
	assert_string_equal(unit_str(lock, "python.version"), "3.10.12");
	assert_string_equal(unit_str(lock, "python.version_source"), "/opt/venv/pyvenv.cfg");
	envlock_lock_free(lock);
	unit_write(root, "opt/venv/pyvenv.cfg", "home = /usr/bin\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.status"), "present");
	assert_null(unit_get(lock, "python.version"));
	assert_null(unit_get(lock, "python.version_source"));
	envlock_lock_free(lock);
	/* CPython's PY_VERSION, a C string among others ("3.10" alone is not one) */
	unit_write(root, "opt/venv/bin/python3.10", "\x7f" "ELF\0" "3.10\0" "3.10.12 (main)\0" "3.10.12\0" "%s\0", 36);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.version"), "3.10.12");
	assert_string_equal(unit_str(lock, "python.version_source"), "/opt/venv/bin/python3.10");
	envlock_lock_free(lock);
	unit_write(root, "opt/venv/bin/python3.10", "#!/bin/sh\n", -1);
	/* ...unless the base named by home has its headers */
	unit_write(root, "usr/include/python3.10/patchlevel.h", PATCHLEVEL("3.10.12"), -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.version"), "3.10.12");
	assert_string_equal(unit_str(lock, "python.version_source"),
			    "/usr/include/python3.10/patchlevel.h");
	envlock_lock_free(lock);
	unit_rmtree(root);

	/* nothing at all */
	root = unit_tmpdir();
	unit_mkdirs(root);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.status"), "absent");
	assert_null(unit_get(lock, "python.candidates"));
	assert_string_equal(unit_str(lock, "pip.status"), "absent");
	assert_string_equal(unit_str(lock, "conda.status"), "absent");
	assert_string_equal(unit_str(lock, "frameworks.torch.status"), "absent");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void python_selection_order(void **state)
{
	static const char conda_env[] = "PATH=/usr/bin:/bin\0CONDA_PREFIX=/" MC "\0";
	static const char venv_env[] = "VIRTUAL_ENV=/opt/venv\0";
	char *root = unit_tmpdir();
	envlock_lock *lock;

	(void)state;
	python_at(root, MC, "3.9", "", "3.9.18");
	unit_write(root, MC "/condabin/conda", "#!/bin/sh\n", -1);
	unit_write(root, MC "/conda-meta/history", "", -1);
	python_at(root, MC "/envs/a", "3.8", "", "3.8.18");
	unit_write(root, MC "/envs/a/conda-meta/history", "", -1);
	python_at(root, MC "/envs/b", "3.7", "m", "3.7.16");
	unit_write(root, MC "/envs/b/conda-meta/history", "", -1);
	python_at(root, "opt/venv", "3.11", "", NULL);
	unit_write(root, "opt/venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n", -1);
	unit_write(root, MC "/envs/b/lib/python3.7/site-packages/torch/version.py",
		   "__version__ = '1.10.0+cu102'\ncuda = '10.2'\n", -1);

	/* the env that holds torch beats base, the other env and the venv */
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.prefix"), "/" MC "/envs/b");
	assert_string_equal(unit_str(lock, "python.selected_by"), "search");
	assert_string_equal(unit_str(lock, "python.candidates.0.prefix"), "/" MC);
	assert_string_equal(unit_str(lock, "python.candidates.1.prefix"), "/" MC "/envs/a");
	assert_string_equal(unit_str(lock, "python.candidates.2.prefix"), "/" MC "/envs/b");
	assert_string_equal(unit_str(lock, "python.candidates.3.prefix"), "/opt/venv");
	assert_string_equal(unit_str(lock, "python.candidates.3.version"), "3.11.2");
	assert_null(unit_get(lock, "python.candidates.4"));
	assert_string_equal(unit_str(lock, "conda.name"), "b");
	assert_string_equal(unit_str(lock, "conda.root_prefix"), "/" MC);
	assert_string_equal(unit_str(lock, "conda.envs.0.name"), "base");
	assert_string_equal(unit_str(lock, "conda.envs.2.prefix"), "/" MC "/envs/b");
	assert_string_equal(unit_str(lock, "frameworks.torch.version"), "1.10.0+cu102");
	envlock_lock_free(lock);

	/* CONDA_PREFIX beats the search */
	environ_file(root, conda_env, sizeof(conda_env) - 1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.prefix"), "/" MC);
	assert_string_equal(unit_str(lock, "python.selected_by"), "CONDA_PREFIX");
	assert_string_equal(unit_str(lock, "conda.name"), "base");
	assert_string_equal(unit_str(lock, "frameworks.torch.status"), "absent");
	envlock_lock_free(lock);

	/* --conda-prefix beats CONDA_PREFIX; --python beats both */
	lock = unit_probe_with(root, "/" MC "/envs/a", NULL);
	assert_string_equal(unit_str(lock, "python.prefix"), "/" MC "/envs/a");
	assert_string_equal(unit_str(lock, "python.selected_by"), "--conda-prefix");
	assert_string_equal(unit_str(lock, "python.version"), "3.8.18");
	envlock_lock_free(lock);
	unit_symlink(root, "opt/venv/bin/python", "/usr/bin/python3.11");
	unit_write(root, "usr/bin/python3.11", "#!/bin/sh\n", -1);
	lock = unit_probe_with(root, NULL, "/opt/venv/bin/python");
	assert_string_equal(unit_str(lock, "python.prefix"), "/opt/venv");
	assert_string_equal(unit_str(lock, "python.kind"), "venv");
	assert_string_equal(unit_str(lock, "python.selected_by"), "--python");
	envlock_lock_free(lock);

	/* VIRTUAL_ENV comes after CONDA_PREFIX, before the search */
	environ_file(root, venv_env, sizeof(venv_env) - 1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.prefix"), "/opt/venv");
	assert_string_equal(unit_str(lock, "python.selected_by"), "VIRTUAL_ENV");
	assert_string_equal(unit_str(lock, "conda.status"), "absent");
	envlock_lock_free(lock);

	/* without torch anywhere: a conda env other than base, then a venv */
	environ_file(root, "", 0);
	unit_remove(root, MC "/envs/b/lib/python3.7/site-packages/torch/version.py");
	unit_remove(root, MC "/envs/b/lib/python3.7/site-packages/torch");
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.prefix"), "/" MC "/envs/a");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void pyenv_version_file(void **state)
{
	static const char env[] = "PATH=/root/.pyenv/shims:/usr/bin\0";
	static const char env_var[] = "PATH=/root/.pyenv/shims:/usr/bin\0PYENV_VERSION=3.8.18\0";
	char *root = unit_tmpdir();
	envlock_lock *lock;

	(void)state;
	python_at(root, "root/.pyenv/versions/3.8.18", "3.8", "", "3.8.18");
	python_at(root, "root/.pyenv/versions/3.11.7", "3.11", "", "3.11.7");
	python_at(root, "usr", "3.11", "", "3.11.2");
	unit_write(root, "root/.pyenv/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec \"$0\"\n", -1);
	unit_write(root, "root/.pyenv/version", "# comment\n3.11.7\n", -1);
	environ_file(root, env, sizeof(env) - 1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.prefix"), "/root/.pyenv/versions/3.11.7");
	assert_string_equal(unit_str(lock, "python.kind"), "pyenv");
	assert_string_equal(unit_str(lock, "python.candidates.2.prefix"), "/usr");
	assert_string_equal(unit_str(lock, "python.candidates.2.kind"), "system");
	assert_string_equal(unit_str(lock, "python.candidates.2.version"), "3.11.2");
	envlock_lock_free(lock);
	environ_file(root, env_var, sizeof(env_var) - 1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "python.prefix"), "/root/.pyenv/versions/3.8.18");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void conda_bad_records(void **state)
{
	static const char env[] = "CONDA_PREFIX=/opt/conda\0";
	char *root = unit_tmpdir();
	envlock_lock *lock;

	(void)state;
	environ_file(root, env, sizeof(env) - 1);
	conda_record(root, "opt/conda", "zlib", "1.2.13", "h5eee18b_0");
	conda_record(root, "opt/conda", "numpy", "1.21.5", "py37h6c91a56_3");
	unit_write(root, "opt/conda/conda-meta/bad-1.0-0.json",
		   "{\n  \"build\": \"0\",\n  \"name\": \"bad\",\n  \"ver", -1);
	unit_write(root, "opt/conda/conda-meta/history", "==> 2023-01-01 <==\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "conda.status"), "present");
	assert_string_equal(unit_str(lock, "conda.prefix"), "/opt/conda");
	assert_int_equal(unit_int(lock, "conda.package_count"), 2);
	assert_string_equal(unit_str(lock, "conda.packages.0.name"), "numpy");
	assert_string_equal(unit_str(lock, "conda.packages.0.build"), "py37h6c91a56_3");
	assert_int_equal(unit_int(lock, "conda.packages.0.build_number"), 0);
	assert_string_equal(unit_str(lock, "conda.packages.0.channel"),
			    "https://repo.anaconda.com/pkgs/main/linux-64");
	assert_string_equal(unit_str(lock, "conda.packages.0.md5"), "0123456789abcdef0123456789abcdef");
	assert_null(unit_get(lock, "conda.packages.0.sha256"));
	assert_string_equal(unit_str(lock, "conda.packages.1.name"), "zlib");
	assert_int_equal(unit_warnings_with(lock, "conda-meta"), 1);
	assert_int_equal(unit_warnings_with(lock,
			 "'/opt/conda/conda-meta/bad-1.0-0.json': not valid JSON"), 1);
	envlock_lock_free(lock);

	/* the other ways a record can be unusable, each one warning */
	unit_write(root, "opt/conda/conda-meta/bad-1.0-0.json", "[1, 2]", -1);
	unit_write(root, "opt/conda/conda-meta/noname-1.0-0.json", "{\"version\": \"1.0\"}", -1);
	unit_write(root, "opt/conda/conda-meta/numver-1.0-0.json",
		   "{\"name\": \"numver\", \"version\": 1.0}", -1);
	unit_write(root, "opt/conda/conda-meta/trail-1.0-0.json",
		   "{\"name\": \"trail\", \"version\": \"1.0\"} {", -1);
	unit_write(root, "opt/conda/conda-meta/short-1.0-0.json",
		   "{\"name\": \"short\", \"version\": \"1.0\", \"schannel\": \"pytorch\"}", -1);
	lock = unit_probe(root);
	assert_int_equal(unit_int(lock, "conda.package_count"), 3);
	assert_string_equal(unit_str(lock, "conda.packages.1.name"), "short");
	assert_string_equal(unit_str(lock, "conda.packages.1.channel"), "pytorch");
	assert_null(unit_get(lock, "conda.packages.1.build"));
	assert_int_equal(unit_warnings_with(lock, "conda-meta"), 4);
	assert_int_equal(unit_warnings_with(lock, "bad-1.0-0.json': not a JSON object"), 1);
	assert_int_equal(unit_warnings_with(lock, "noname-1.0-0.json': no \"name\" string"), 1);
	assert_int_equal(unit_warnings_with(lock, "numver-1.0-0.json': no \"version\" string"), 1);
	assert_int_equal(unit_warnings_with(lock, "trail-1.0-0.json': not valid JSON"), 1);
	envlock_lock_free(lock);

	/* links are followed under the root: an absolute target starts at the root */
	conda_record(root, "srv/records", "linked", "2.0", "0");
	unit_symlink(root, "opt/conda/conda-meta/linked-2.0-0.json", "/srv/records/conda-meta/linked-2.0-0.json");
	unit_symlink(root, "opt/conda/conda-meta/dangling-1.0-0.json", "/srv/nowhere.json");
	unit_write(root, "opt/conda/conda-meta/dir-1.0-0.json/x", "", -1);
	lock = unit_probe(root);
	assert_int_equal(unit_int(lock, "conda.package_count"), 4);
	assert_string_equal(unit_str(lock, "conda.packages.0.name"), "linked");
	assert_string_equal(unit_str(lock, "conda.packages.0.version"), "2.0");
	assert_int_equal(unit_warnings_with(lock, "conda-meta"), 4);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void conda_token_is_not_recorded(void **state)
{
	static const char env[] = "CONDA_PREFIX=/opt/conda\0";
	char *root = unit_tmpdir();
	envlock_lock *lock;
	char *text;

	(void)state;
	environ_file(root, env, sizeof(env) - 1);
	unit_write(root, "opt/conda/conda-meta/private-1.0-0.json",
		   "{\"name\": \"private\", \"version\": \"1.0\", "
		   "\"channel\": \"https://conda.anaconda.org/t/tk-123-secret/acme/linux-64\", "
		   "\"url\": \"https://bob:hunter2@conda.example.com/acme/linux-64/private-1.0-0.tar.bz2\"}", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "conda.packages.0.channel"),
			    "https://conda.anaconda.org/acme/linux-64");
	assert_string_equal(unit_str(lock, "conda.packages.0.url"),
			    "https://conda.example.com/acme/linux-64/private-1.0-0.tar.bz2");
	text = cJSON_PrintUnformatted(lock->doc);
	assert_null(strstr(text, "secret"));
	assert_null(strstr(text, "hunter2"));
	free(text);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

#define SITE "opt/venv/lib/python3.10/site-packages"

static char *venv_root(void)
{
	char *root = unit_tmpdir();

	python_at(root, "opt/venv", "3.10", "", "3.10.12");
	unit_write(root, "opt/venv/pyvenv.cfg", "home = /usr/bin\n", -1);
	return root;
}

static void pip_names_and_conda_overlap(void **state)
{
	static const char env[] = "CONDA_PREFIX=/opt/conda\0";
	char *root = unit_tmpdir();
	envlock_lock *lock;

	(void)state;
	environ_file(root, env, sizeof(env) - 1);
	python_at(root, "opt/conda", "3.9", "", "3.9.18");
	conda_record(root, "opt/conda", "ruamel_yaml", "0.17.21", "py39h5eee18b_0");
	conda_record(root, "opt/conda", "numpy", "1.24.3", "py39h0");
	conda_record(root, "opt/conda", "pytorch", "2.1.2", "py3.9_cuda11.8_cudnn8.7.0_0");
	dist_info(root, "opt/conda/lib/python3.9/site-packages", "ruamel.yaml-0.17.21.dist-info",
		  "Ruamel.YAML", "0.17.21");
	dist_info(root, "opt/conda/lib/python3.9/site-packages", "numpy-1.26.0.dist-info",
		  "numpy", "1.26.0");
	dist_info(root, "opt/conda/lib/python3.9/site-packages", "Zope.Interface-6.0.dist-info",
		  "zope.interface", "6.0");
	unit_write(root, "opt/conda/lib/python3.9/site-packages/numpy-1.26.0.dist-info/REQUESTED", "", -1);
	unit_write(root, "opt/conda/lib/python3.9/site-packages/torch-2.1.2-py3.9.egg-info/PKG-INFO",
		   "Metadata-Version: 2.1\nName: torch\nVersion: 2.1.2\n", -1);
	unit_write(root, "opt/conda/lib/python3.9/site-packages/six-1.16.0-py3.9.egg-info",
		   "Metadata-Version: 1.1\nName: six\nVersion: 1.16.0\n\nUNKNOWN\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "pip.status"), "present");
	assert_int_equal(unit_int(lock, "pip.count"), 5);
	/* sorted by normalised name: numpy, ruamel-yaml, six, torch, zope-interface */
	assert_string_equal(unit_str(lock, "pip.distributions.0.name"), "numpy");
	assert_string_equal(unit_str(lock, "pip.distributions.1.name"), "Ruamel.YAML");
	assert_string_equal(unit_str(lock, "pip.distributions.2.name"), "six");
	assert_string_equal(unit_str(lock, "pip.distributions.2.kind"), "egg-info");
	assert_string_equal(unit_str(lock, "pip.distributions.3.name"), "torch");
	assert_string_equal(unit_str(lock, "pip.distributions.4.name"), "zope.interface");
	assert_true(unit_bool(lock, "pip.distributions.0.also_conda"));
	assert_true(unit_bool(lock, "pip.distributions.0.requested"));
	assert_string_equal(unit_str(lock, "pip.distributions.0.installer"), "pip");
	assert_true(unit_bool(lock, "pip.distributions.1.also_conda"));
	assert_false(unit_bool(lock, "pip.distributions.1.requested"));
	assert_null(unit_get(lock, "pip.distributions.3.also_conda")); /* pytorch is not torch */
	assert_string_equal(unit_str(lock, "pip.conda_and_pip.0"), "numpy");
	assert_string_equal(unit_str(lock, "pip.conda_and_pip.1"), "ruamel-yaml");
	assert_null(unit_get(lock, "pip.conda_and_pip.2"));
	assert_string_equal(unit_str(lock, "pip.distributions.1.path"),
			    "/opt/conda/lib/python3.9/site-packages/ruamel.yaml-0.17.21.dist-info");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void pip_direct_url_credentials(void **state)
{
	char *root = venv_root();
	envlock_lock *lock;
	const cJSON *d;
	char *text;

	(void)state;
	dist_info(root, SITE, "private-1.0.dist-info", "private", "1.0");
	unit_write(root, SITE "/private-1.0.dist-info/direct_url.json",
		   "{\"url\": \"https://alice:s3cret@git.example.com/x/private.git\", "
		   "\"vcs_info\": {\"commit_id\": \"4f0e1c2\", \"requested_revision\": \"v1.0\", "
		   "\"vcs\": \"git\"}}", -1);
	dist_info(root, SITE, "tokened-2.0.dist-info", "tokened", "2.0");
	unit_write(root, SITE "/tokened-2.0.dist-info/direct_url.json",
		   "{\"archive_info\": {\"hash\": \"sha256=abc\"}, "
		   "\"url\": \"https://ghp_T0KEN@github.com/acme/tokened/archive/v2.zip\"}", -1);
	dist_info(root, SITE, "sshdep-3.0.dist-info", "sshdep", "3.0");
	unit_write(root, SITE "/sshdep-3.0.dist-info/direct_url.json",
		   "{\"url\": \"ssh://git@github.com/acme/sshdep.git\", "
		   "\"vcs_info\": {\"commit_id\": \"aa\", \"vcs\": \"git\"}}", -1);
	dist_info(root, SITE, "local-0.1.dist-info", "local", "0.1");
	unit_write(root, SITE "/local-0.1.dist-info/direct_url.json",
		   "{\"dir_info\": {\"editable\": true}, \"url\": \"file:///home/bob/my%20local\"}", -1);
	lock = unit_probe(root);
	d = pip_dist(lock, "private");
	assert_non_null(d);
	d = cJSON_GetObjectItemCaseSensitive(d, "direct_url");
	assert_string_equal(obj_str(d, "url"), "https://git.example.com/x/private.git");
	assert_string_equal(obj_str(d, "vcs"), "git");
	assert_string_equal(obj_str(d, "commit_id"), "4f0e1c2");
	assert_string_equal(obj_str(d, "requested_revision"), "v1.0");
	assert_null(cJSON_GetObjectItemCaseSensitive(d, "editable"));
	d = cJSON_GetObjectItemCaseSensitive(pip_dist(lock, "tokened"), "direct_url");
	assert_string_equal(obj_str(d, "url"), "https://github.com/acme/tokened/archive/v2.zip");
	assert_string_equal(obj_str(d, "archive_hash"), "sha256=abc");
	d = cJSON_GetObjectItemCaseSensitive(pip_dist(lock, "sshdep"), "direct_url");
	assert_string_equal(obj_str(d, "url"), "ssh://git@github.com/acme/sshdep.git");
	d = pip_dist(lock, "local");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "editable")));
	assert_string_equal(obj_str(d, "source"), "/home/bob/my local");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(d, "direct_url"), "editable")));
	text = cJSON_PrintUnformatted(lock->doc);
	assert_null(strstr(text, "s3cret"));
	assert_null(strstr(text, "T0KEN"));
	free(text);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void pip_broken_dist_info(void **state)
{
	char *root = venv_root();
	envlock_lock *lock;

	(void)state;
	dist_info(root, SITE, "good-1.0.dist-info", "good", "1.0");
	unit_write(root, SITE "/nometa-1.0.dist-info/RECORD", "", -1);
	unit_write(root, SITE "/binary-1.0.dist-info/METADATA", "Name: binary\n\x00\x01\xff\n", 18);
	unit_write(root, SITE "/nover-1.0.dist-info/METADATA", "Name: nover\n\nVersion: 1.0\n", -1);
	unit_write(root, "srv/meta/METADATA", "Name: linked\nVersion: 3.0\n", -1);
	unit_symlink(root, SITE "/linked-3.0.dist-info/METADATA", "/srv/meta/METADATA");
	lock = unit_probe(root);
	assert_int_equal(unit_int(lock, "pip.count"), 2);
	assert_string_equal(unit_str(lock, "pip.distributions.0.name"), "good");
	assert_string_equal(unit_str(lock, "pip.distributions.1.name"), "linked");
	assert_string_equal(unit_str(lock, "pip.distributions.1.version"), "3.0");
	assert_int_equal(unit_warnings_with(lock, "dist-info"), 3);
	assert_int_equal(unit_warnings_with(lock, "'/" SITE "/nometa-1.0.dist-info': no METADATA"), 1);
	assert_int_equal(unit_warnings_with(lock, "'/" SITE "/binary-1.0.dist-info': METADATA is binary"), 1);
	assert_int_equal(unit_warnings_with(lock, "'/" SITE "/nover-1.0.dist-info': no Version"), 1);
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void egg_link_editable(void **state)
{
	char *root = venv_root();
	envlock_lock *lock;
	const cJSON *d;

	(void)state;
	unit_write(root, SITE "/mmdet.egg-link", "/home/alice/mmdetection\n../\n", -1);
	unit_write(root, "home/alice/mmdetection/mmdet.egg-info/PKG-INFO",
		   "Metadata-Version: 2.1\nName: mmdet\nVersion: 2.25.1\n\nbody\n", -1);
	unit_write(root, "home/alice/mmdetection/mmdet/version.py",
		   "# Copyright (c) OpenMMLab. All rights reserved.\n\n__version__ = '2.25.1'\n"
		   "short_version = __version__\n", -1);
	lock = unit_probe(root);
	d = pip_dist(lock, "mmdet");
	assert_non_null(d);
	assert_string_equal(obj_str(d, "kind"), "egg-link");
	assert_string_equal(obj_str(d, "version"), "2.25.1");
	assert_string_equal(obj_str(d, "source"), "/home/alice/mmdetection");
	assert_string_equal(obj_str(d, "path"), "/" SITE "/mmdet.egg-link");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "editable")));
	assert_string_equal(unit_str(lock, "frameworks.mmdet.status"), "present");
	assert_string_equal(unit_str(lock, "frameworks.mmdet.version"), "2.25.1");
	assert_string_equal(unit_str(lock, "frameworks.mmdet.path"),
			    "/home/alice/mmdetection/mmdet/version.py");
	assert_null(unit_get(lock, "frameworks.mmdet.dist_version"));
	assert_string_equal(unit_str(lock, "frameworks.mmpose.status"), "absent");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void mmcv_ops_present_or_not(void **state)
{
	char *root = venv_root();
	envlock_lock *lock;

	(void)state;
	dist_info(root, SITE, "mmcv_full-1.7.5.dist-info", "mmcv-full", "1.7.5");
	unit_write(root, SITE "/mmcv/version.py", "__version__ = '1.7.5'\n", -1);
	unit_write(root, SITE "/mmcv/_ext.cpython-310-x86_64-linux-gnu.so", "\x7f" "ELF", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "frameworks.mmcv.status"), "present");
	assert_string_equal(unit_str(lock, "frameworks.mmcv.version"), "1.7.5");
	assert_string_equal(unit_str(lock, "frameworks.mmcv.package"), "mmcv-full");
	assert_true(unit_bool(lock, "frameworks.mmcv.ops"));
	assert_string_equal(unit_str(lock, "frameworks.mmcv.ops_files.0"),
			    "_ext.cpython-310-x86_64-linux-gnu.so");
	envlock_lock_free(lock);

	/* mmcv without ops, and a version.py that computes its version */
	unit_rmtree(root);
	root = venv_root();
	dist_info(root, SITE, "mmcv-2.1.0.dist-info", "mmcv", "2.1.0");
	unit_write(root, SITE "/mmcv/version.py",
		   "version_info = (2, 1, 0)\n__version__ = '.'.join(map(str, version_info))\n", -1);
	unit_write(root, SITE "/mmcv/__init__.py", "", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "frameworks.mmcv.version"), "2.1.0");
	assert_string_equal(unit_str(lock, "frameworks.mmcv.version_source"), "dist-info");
	assert_string_equal(unit_str(lock, "frameworks.mmcv.package"), "mmcv");
	assert_false(unit_bool(lock, "frameworks.mmcv.ops"));
	assert_null(unit_get(lock, "frameworks.mmcv.ops_files"));
	envlock_lock_free(lock);
	unit_rmtree(root);
}

static void torch_cuda_or_cpu(void **state)
{
	char *root = venv_root();
	envlock_lock *lock;

	(void)state;
	dist_info(root, SITE, "torch-2.1.0+cpu.dist-info", "torch", "2.1.0+cpu");
	unit_write(root, SITE "/torch/version.py",
		   "from typing import Optional\n\n"
		   "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
		   "__version__ = '2.1.0+cpu'\ndebug = False\ncuda: Optional[str] = None\n"
		   "git_version = '7bcf7da3a268b435777fe87c7794c382f444e86d'\n"
		   "hip: Optional[str] = None\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "frameworks.torch.version"), "2.1.0+cpu");
	assert_true(cJSON_IsNull(unit_get(lock, "frameworks.torch.cuda")));
	assert_true(cJSON_IsNull(unit_get(lock, "frameworks.torch.hip")));
	assert_true(unit_bool(lock, "frameworks.torch.cpu_only"));
	assert_false(unit_bool(lock, "frameworks.torch.debug"));
	assert_string_equal(unit_str(lock, "frameworks.torch.git_version"),
			    "7bcf7da3a268b435777fe87c7794c382f444e86d");
	assert_string_equal(unit_str(lock, "frameworks.torch.path"), "/" SITE "/torch/version.py");
	assert_null(unit_get(lock, "frameworks.torch.dist_version"));
	envlock_lock_free(lock);

	/* a CUDA build, old style (no annotations); the conda metadata says less */
	unit_write(root, SITE "/torch/version.py",
		   "__version__ = '1.10.0+cu102'\ndebug = False\ncuda = '10.2'\n"
		   "git_version = '36449ea93134574c2a22b87baad3de0bf8d64d42'\nhip = None\n", -1);
	unit_write(root, SITE "/torch-2.1.0+cpu.dist-info/METADATA",
		   "Metadata-Version: 2.1\nName: torch\nVersion: 1.10.0\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "frameworks.torch.version"), "1.10.0+cu102");
	assert_string_equal(unit_str(lock, "frameworks.torch.cuda"), "10.2");
	assert_false(unit_bool(lock, "frameworks.torch.cpu_only"));
	assert_string_equal(unit_str(lock, "frameworks.torch.dist_version"), "1.10.0");
	envlock_lock_free(lock);
	unit_rmtree(root);
}

/* torch's Python from its own files: the compiled module's tag, else the wheel's, and Requires-Python */
static void torch_python_from_its_files(void **state)
{
	char *root = venv_root();
	envlock_lock *lock;

	(void)state;
	dist_info(root, SITE, "torch-1.13.1.dist-info", "torch", "1.13.1");
	unit_write(root, SITE "/torch-1.13.1.dist-info/METADATA",
		   "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.1\nRequires-Python: >=3.7.0\n\n"
		   "Requires-Python: >=9 in the body is not a header\n", -1);
	unit_write(root, SITE "/torch-1.13.1.dist-info/WHEEL",
		   "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp38-cp38-linux_x86_64\n\n", -1);
	unit_write(root, SITE "/torch/version.py", "__version__ = '1.13.1'\ncuda = None\n", -1);
	unit_write(root, SITE "/torch/_C.cpython-311-x86_64-linux-gnu.so", "\x7f" "ELF", -1);
	unit_write(root, SITE "/torch/_C_flatbuffer.cpython-39-x86_64-linux-gnu.so", "\x7f" "ELF", -1);
	unit_write(root, SITE "/torch/_C/__init__.pyi", "", -1);
	lock = unit_probe(root);
	/* the module CPython imports decides over the wheel's metadata; _C_flatbuffer is another module */
	assert_string_equal(unit_str(lock, "frameworks.torch.python_tags.0"), "3.11");
	assert_null(unit_get(lock, "frameworks.torch.python_tags.1"));
	assert_string_equal(unit_str(lock, "frameworks.torch.python_tags_source"),
			    "/" SITE "/torch/_C.cpython-311-x86_64-linux-gnu.so");
	assert_string_equal(unit_str(lock, "frameworks.torch.requires_python"), ">=3.7.0");
	assert_string_equal(unit_str(lock, "frameworks.torch.requires_python_source"),
			    "/" SITE "/torch-1.13.1.dist-info/METADATA");
	envlock_lock_free(lock);

	/* no tagged module (the stable ABI's name says no release): the wheel's tags */
	unit_remove(root, SITE "/torch/_C.cpython-311-x86_64-linux-gnu.so");
	unit_write(root, SITE "/torch/_C.abi3.so", "\x7f" "ELF", -1);
	unit_write(root, SITE "/torch-1.13.1.dist-info/WHEEL",
		   "Wheel-Version: 1.0\nTag: cp38-abi3-manylinux2014_x86_64\nTag: cp39.cp310-cp310-linux_x86_64\n"
		   "Tag: py3-none-any\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "frameworks.torch.python_tags.0"), "3.8+");
	assert_string_equal(unit_str(lock, "frameworks.torch.python_tags.1"), "3.9");
	assert_string_equal(unit_str(lock, "frameworks.torch.python_tags.2"), "3.10");
	assert_null(unit_get(lock, "frameworks.torch.python_tags.3"));
	assert_string_equal(unit_str(lock, "frameworks.torch.python_tags_source"),
			    "/" SITE "/torch-1.13.1.dist-info/WHEEL");
	envlock_lock_free(lock);

	/* nothing says: nothing recorded */
	unit_remove(root, SITE "/torch-1.13.1.dist-info/WHEEL");
	unit_write(root, SITE "/torch-1.13.1.dist-info/METADATA",
		   "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.1\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "frameworks.torch.version"), "1.13.1");
	assert_null(unit_get(lock, "frameworks.torch.python_tags"));
	assert_null(unit_get(lock, "frameworks.torch.python_tags_source"));
	assert_null(unit_get(lock, "frameworks.torch.requires_python"));
	envlock_lock_free(lock);
	unit_rmtree(root);
}

/* The mmcv range an OpenMMLab __init__.py asserts, as the file says it (edited or not) */
static void mmcv_range_from_init_py(void **state)
{
	char *root = venv_root();
	envlock_lock *lock;

	(void)state;
	dist_info(root, SITE, "mmdet-2.28.2.dist-info", "mmdet", "2.28.2");
	unit_write(root, SITE "/mmdet/version.py", "__version__ = '2.28.2'\n", -1);
	unit_write(root, SITE "/mmdet/__init__.py",
		   "import mmcv\n\nfrom .version import __version__, short_version\n\n"
		   "mmcv_minimum_version = '1.3.17'\nmmcv_maximum_version = '1.8.0'\n"
		   "mmcv_version = digit_version(mmcv.__version__)\n\n"
		   "assert (mmcv_version >= digit_version(mmcv_minimum_version)\n"
		   "        and mmcv_version <= digit_version(mmcv_maximum_version)), \\\n"
		   "    f'MMCV=={mmcv.__version__} is used but incompatible.'\n", -1);
	dist_info(root, SITE, "mmpose-1.3.1.dist-info", "mmpose", "1.3.1");
	unit_write(root, SITE "/mmpose/version.py", "__version__ = '1.3.1'\n", -1);
	unit_write(root, SITE "/mmpose/__init__.py",
		   "mmcv_maximum_version = '2.2.0'\nmmcv_version = digit_version(mmcv.__version__)\n"
		   "assert mmcv_version < digit_version(mmcv_maximum_version)\n", -1);
	dist_info(root, SITE, "mmsegmentation-1.2.2.dist-info", "mmsegmentation", "1.2.2");
	unit_write(root, SITE "/mmseg/version.py", "__version__ = '1.2.2'\n", -1);
	unit_write(root, SITE "/mmseg/__init__.py",
		   "MMCV_MAX = get_max()\nmmcv_version = digit_version(mmcv.__version__)\n"
		   "assert mmcv_version < digit_version(MMCV_MAX)\n", -1);
	dist_info(root, SITE, "mmcls-0.25.0.dist-info", "mmcls", "0.25.0");
	unit_write(root, SITE "/mmcls/version.py", "__version__ = '0.25.0'\n", -1);
	unit_write(root, SITE "/mmcls/__init__.py", "from .version import __version__\n", -1);
	dist_info(root, SITE, "mmengine-0.10.3.dist-info", "mmengine", "0.10.3");
	unit_write(root, SITE "/mmengine/version.py", "__version__ = '0.10.3'\n", -1);
	unit_write(root, SITE "/mmengine/__init__.py", "from .version import __version__\n", -1);
	lock = unit_probe(root);
	assert_string_equal(unit_str(lock, "frameworks.mmdet.mmcv_range.min"), "1.3.17");
	assert_string_equal(unit_str(lock, "frameworks.mmdet.mmcv_range.max"), "1.8.0");
	assert_true(unit_bool(lock, "frameworks.mmdet.mmcv_range.max_inclusive"));
	assert_string_equal(unit_str(lock, "frameworks.mmdet.mmcv_range.source"), "/" SITE "/mmdet/__init__.py");
	assert_null(unit_get(lock, "frameworks.mmpose.mmcv_range.min"));
	assert_string_equal(unit_str(lock, "frameworks.mmpose.mmcv_range.max"), "2.2.0");
	assert_false(unit_bool(lock, "frameworks.mmpose.mmcv_range.max_inclusive"));
	/* a computed bound: nothing recorded, so the rules' table judges */
	assert_string_equal(unit_str(lock, "frameworks.mmseg.version"), "1.2.2");
	assert_null(unit_get(lock, "frameworks.mmseg.mmcv_range"));
	/* a file that checks no mmcv version: a range without bounds */
	assert_string_equal(unit_str(lock, "frameworks.mmcls.mmcv_range.source"), "/" SITE "/mmcls/__init__.py");
	assert_null(unit_get(lock, "frameworks.mmcls.mmcv_range.min"));
	assert_null(unit_get(lock, "frameworks.mmcls.mmcv_range.max"));
	/* mmengine checks no mmcv: not looked at */
	assert_null(unit_get(lock, "frameworks.mmengine.mmcv_range"));
	envlock_lock_free(lock);
	unit_rmtree(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python_version_sources),
		cmocka_unit_test(python_selection_order),
		cmocka_unit_test(pyenv_version_file),
		cmocka_unit_test(conda_bad_records),
		cmocka_unit_test(conda_token_is_not_recorded),
		cmocka_unit_test(pip_names_and_conda_overlap),
		cmocka_unit_test(pip_direct_url_credentials),
		cmocka_unit_test(pip_broken_dist_info),
		cmocka_unit_test(egg_link_editable),
		cmocka_unit_test(mmcv_ops_present_or_not),
		cmocka_unit_test(torch_cuda_or_cpu),
		cmocka_unit_test(torch_python_from_its_files),
		cmocka_unit_test(mmcv_range_from_init_py),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
