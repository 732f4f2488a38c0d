/*
 * Unit tests for envlock's knowledge (lib/knowledge): the tables the
 * binary holds, asked through the same calls check and solve use, against
 * the reference copies of the primary sources in ../shared/data/matrix
 * (read where they lie, never copied): every guard, every Linux wheel
 * row of mmcv's version.json files, every torch install command, build
 * architecture list, Python range and torchvision pair, and NVIDIA's rows.
 * A row the binary does not hold is named with the reason.
 */
#include "unit.h"

#include <glob.h>

#include "knowledge/internal.h"
#include "knowledge/knowledge.h"
#include "util/hash.h"
#include "util/version.h"

#define MATRIX "../shared/data/matrix"

static cJSON *load_json(const char *rel)
{
	char path[512];
	FILE *f;
	char *text;
	long n;
	cJSON *doc;

	snprintf(path, sizeof(path), MATRIX "/%s", rel);
	if (!(f = fopen(path, "rb")))
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = malloc((size_t)n + 1);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	text[n] = '\0';
	fclose(f);
	doc = cJSON_Parse(text);
	free(text);
	assert_non_null(doc);
	return doc;
}

/* The shared reference data, or a skip saying it is not on this machine. */
static cJSON *shared(const char *rel)
{
	cJSON *doc = load_json(rel);

	if (!doc) {
		print_message("skipped: " MATRIX "/%s is not on this machine\n", rel);
		skip();
	}
	return doc;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Two optional strings are the same version (both absent counts). */
static bool same_version(const char *a, const char *b)
{
	return (!a && !b) || (a && b && envlock_version_cmp(a, b) == 0);
}

/* --- what the binary holds, asked as check and solve ask ----------------- */

static void known_facts(void **state)
{
	const el_kb *kb = el_kb_builtin();
	const el_kb_guard *g;
	const el_kb_mmcv *m;
	const el_kb_torch_arch *a;
	const el_kb_cuda_driver *d;
	bool ptx;
	char *url;

	(void)state;
	/* the tag's own __init__.py, not the FAQ's 1.6.0 */
	g = el_kb_guard_find(kb, "mmdet", "2.25.1");
	assert_non_null(g);
	assert_string_equal(g->mmcv_min, "1.3.17");
	assert_string_equal(g->mmcv_max, "1.7.0");
	assert_true(g->mmcv_max_inclusive);
	assert_true(el_kb_guard_accepts_mmcv(g, "1.7.0"));
	assert_false(el_kb_guard_accepts_mmcv(g, "1.7.1"));
	assert_false(el_kb_guard_accepts_mmcv(g, "1.3.16"));
	g = el_kb_guard_find(kb, "mmdet", "3.3.0");
	assert_non_null(g);
	assert_false(g->mmcv_max_inclusive);
	assert_false(el_kb_guard_accepts_mmcv(g, "2.2.0"));
	assert_true(el_kb_guard_accepts_mmcv(g, "2.1.0"));
	assert_true(el_kb_guard_accepts_mmcv(g, "2.0.0rc4"));
	assert_false(el_kb_guard_accepts_mmcv(g, "2.0.0rc3"));

	/* mmcv-full 1.7.5 was never released; 1.7.2 was, with no wheel list */
	assert_null(el_kb_mmcv_find(kb, NULL, "1.7.5"));
	m = el_kb_mmcv_find(kb, "mmcv-full", "1.7.2");
	assert_non_null(m);
	assert_int_equal(m->nwheels, 0);
	m = el_kb_mmcv_find(kb, "mmcv-full", "1.7.0");
	assert_non_null(m);
	assert_true(el_kb_mmcv_has_wheel(m, "1.10.1", "10.2"));
	assert_true(el_kb_mmcv_has_wheel(m, "1.10.0", "11.3"));
	assert_true(el_kb_mmcv_has_wheel(m, "1.10.0", NULL));
	assert_false(el_kb_mmcv_has_wheel(m, "2.0.0", "11.7"));
	assert_string_equal(el_kb_mmcv_package(kb, "1.7.0", NULL, NULL), "mmcv-full");
	assert_string_equal(el_kb_mmcv_package(kb, "2.1.0", NULL, NULL), "mmcv");
	url = el_kb_mmcv_index_url(kb, "1.10.0", "10.2", NULL);
	assert_string_equal(url, "https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html");
	free(url);
	/* a full toolkit version names the same folder as its release */
	url = el_kb_mmcv_index_url(kb, "1.10.0", "10.2.89", NULL);
	assert_string_equal(url, "https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html");
	free(url);
	url = el_kb_mmcv_index_url(kb, "2.1.2", NULL, NULL);
	assert_string_equal(url, "https://download.openmmlab.com/mmcv/dist/cpu/torch2.1/index.html");
	free(url);
	url = el_kb_torch_index_url(kb, "cu102", NULL);
	assert_string_equal(url, "https://download.pytorch.org/whl/cu102");
	free(url);

	/* sm_89 and CUDA 10.x builds: no 8.x cubin, no PTX */
	a = el_kb_torch_arch_of(kb, "1.10.0", "10.2");
	assert_non_null(a);
	assert_null(el_kb_code_runs_on(&a->sm, &a->ptx, "8.9", &ptx));
	assert_string_equal(el_kb_code_runs_on(&a->sm, &a->ptx, "7.0", &ptx), "7.0");
	assert_false(ptx);
	assert_string_equal(el_kb_code_runs_on(&a->sm, &a->ptx, "6.1", &ptx), "6.0");
	a = el_kb_torch_arch_of(kb, "1.10.2", "11.1");
	assert_non_null(a);
	assert_string_equal(el_kb_code_runs_on(&a->sm, &a->ptx, "8.9", &ptx), "8.6");
	assert_null(el_kb_code_runs_on(&a->sm, &a->ptx, "9.0", &ptx));
	/* PTX runs forward, across majors; a cubin never does */
	{
		const char *sm[] = { "7.0" }, *px[] = { "7.0" };
		el_kb_list s = { sm, 1 }, p = { px, 1 }, none = { NULL, 0 };

		assert_null(el_kb_code_runs_on(&s, &none, "8.0", &ptx));
		assert_string_equal(el_kb_code_runs_on(&s, &p, "8.0", &ptx), "7.0");
		assert_true(ptx);
		assert_null(el_kb_code_runs_on(&s, &p, "6.1", &ptx));
	}

	/* GPU names as drivers report them: the longest matching row decides */
	assert_string_equal(el_kb_gpu_compute_capability(kb, "NVIDIA GeForce RTX 4070", NULL), "8.9");
	assert_string_equal(el_kb_gpu_compute_capability(kb, "Quadro RTX 4000", NULL), "7.5");
	assert_string_equal(el_kb_gpu_compute_capability(kb, "Tesla V100-PCIE-16GB", NULL), "7.0");
	assert_string_equal(el_kb_gpu_compute_capability(kb, "NVIDIA A100-SXM4-80GB", NULL), "8.0");
	assert_string_equal(el_kb_gpu_compute_capability(kb, "GeForce GTX 1080 Ti", NULL), "6.1");
	assert_string_equal(el_kb_gpu_compute_capability(kb, "Tesla K80", NULL), "3.7");
	assert_null(el_kb_gpu_compute_capability(kb, "Matrox G200eR2", NULL));
	assert_string_equal(el_kb_gpu_arch_of(kb, "3.7")->name, "Kepler");
	assert_int_equal(el_kb_gpu_arch_of(kb, "3.7")->last_branch, 470);
	assert_int_equal(el_kb_gpu_arch_of(kb, "8.9")->last_branch, -1);

	/* CUDA 11.x through minor-version compatibility */
	d = el_kb_cuda_driver_of(kb, "11.3");
	assert_non_null(d);
	assert_string_equal(d->min_driver, "465.19.01");
	assert_string_equal(d->minor_compat_driver, "450.80.02");
	assert_null(el_kb_cuda_driver_of(kb, "10.2")->minor_compat_driver);
	assert_int_equal(el_kb_nvcc_max_gcc(kb, "10.2.89", NULL), 8);
	assert_null(el_kb_torch_glibc_of(kb, "1.1.0", "cpu"));
	assert_string_equal(el_kb_torch_glibc_of(kb, "2.6.0", "cu126")->glibc, "2.28");
	assert_string_equal(el_kb_torch_glibc_of(kb, "2.6.0", "cu124")->glibc, "2.17");
	assert_string_equal(el_kb_torch_python_of(kb, "1.10.2")->python_max, "3.9");
	assert_string_equal(el_kb_codebase_find(kb, "mmsegmentation")->package, "mmseg");
	assert_string_equal(el_kb_codebase_find(kb, "MMDet")->distribution, "mmdet");
	assert_null(el_kb_codebase_find(kb, "mmfoo"));
}

/* --- against the reference data ----------------------------------------- */

/* Every guard row: the binary's row of that release says the same bounds. */
static void guards_match_shared(void **state)
{
	cJSON *doc = shared("openmmlab-guards.json"), *r;
	const el_kb *kb = el_kb_builtin();
	int checked = 0;

	(void)state;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "rows")) {
		const char *pkg = str(r, "package"), *tag = str(r, "tag") ? str(r, "tag") : str(r, "inferred_tag");
		const char *ver = str(r, "version_py___version__") ? str(r, "version_py___version__") : tag + (tag[0] == 'v');
		const el_kb_guard *g = el_kb_guard_find(kb, pkg, ver);
		const cJSON *incl = cJSON_GetObjectItem(r, "max_inclusive"), *eincl = cJSON_GetObjectItem(r, "mmengine_max_inclusive");

		if (!g)
			fail_msg("openmmlab-guards.json row %s %s: the binary has no row for it", pkg, tag);
		if (!same_version(g->mmcv_min, str(r, "mmcv_min")) || !same_version(g->mmcv_max, str(r, "mmcv_max")) ||
		    (cJSON_IsBool(incl) && g->mmcv_max_inclusive != cJSON_IsTrue(incl)) ||
		    !same_version(g->mmengine_min, str(r, "mmengine_min")) ||
		    !same_version(g->mmengine_max, str(r, "mmengine_max")) ||
		    (cJSON_IsBool(eincl) && g->mmengine_max_inclusive != cJSON_IsTrue(eincl)))
			fail_msg("openmmlab-guards.json row %s %s: the binary says mmcv %s..%s%s, mmengine %s..%s", pkg, tag,
				 g->mmcv_min ? g->mmcv_min : "-", g->mmcv_max ? g->mmcv_max : "-",
				 g->mmcv_max_inclusive ? " (inclusive)" : "", g->mmengine_min ? g->mmengine_min : "-",
				 g->mmengine_max ? g->mmengine_max : "-");
		checked++;
	}
	assert_int_equal(checked, 181);
	cJSON_Delete(doc);
}

/* Every Linux row of mmcv's wheel lists is a wheel the binary knows; no row is invented. */
static void mmcv_wheels_match_shared(void **state)
{
	FILE *f = fopen(MATRIX "/mmcv-wheels/flat.csv", "r");
	const el_kb *kb = el_kb_builtin();
	char line[4096];
	int linux_rows = 0, other = 0;
	size_t held = 0, n;
	const el_kb_mmcv *all;

	(void)state;
	if (!f) {
		print_message("skipped: " MATRIX "/mmcv-wheels/flat.csv is not on this machine\n");
		skip();
	}
	assert_non_null(fgets(line, sizeof(line), f)); /* the header */
	while (fgets(line, sizeof(line), f)) {
		char *fields[7], *s = line, torch[32], *url;
		const el_kb_mmcv *m;
		int k = 0;

		line[strcspn(line, "\n")] = '\0';
		while (k < 7 && (fields[k] = strsep(&s, ",")) != NULL)
			k++;
		assert_int_equal(k, 7);
		if (strcmp(fields[0], "Linux") != 0) {
			other++; /* envlock plans Linux machines: Windows and macOS rows are not held */
			continue;
		}
		linux_rows++;
		m = el_kb_mmcv_find(kb, fields[4], fields[3]);
		if (!m)
			fail_msg("flat.csv: %s %s is not a release the binary knows", fields[4], fields[3]);
		/* "1.10.x" stands for every 1.10 release: ask with 1.10.0 and 1.10.1 */
		snprintf(torch, sizeof(torch), "%.*s.1", (int)(strlen(fields[2]) - 2), fields[2]);
		if (!el_kb_mmcv_has_wheel(m, torch, strcmp(fields[1], "cpu") ? fields[1] : NULL))
			fail_msg("flat.csv: %s %s has a wheel for CUDA %s and torch %s; the binary says no", fields[4],
				 fields[3], fields[1], fields[2]);
		url = el_kb_mmcv_index_url(kb, torch, strcmp(fields[1], "cpu") ? fields[1] : NULL, NULL);
		if (strcmp(url, fields[5]) != 0)
			fail_msg("flat.csv: the index of %s/%s is %s; the binary builds %s", fields[1], fields[2], fields[5], url);
		free(url);
	}
	fclose(f);
	all = el_kb_mmcv_releases(kb, &n);
	for (size_t i = 0; i < n; i++)
		held += all[i].nwheels;
	/* the same count both ways: nothing held that the lists do not have */
	assert_int_equal(held, (size_t)linux_rows);
	print_message("%d Linux wheel rows agree; %d Windows and macOS rows are not held (envlock plans Linux machines)\n",
		      linux_rows, other);
}

/* The pins and index of a verbatim command ("pip install torch==... -f URL"). */
static void command_parts(const char *cmd, char *torch, char *vision, char *flag, char *url)
{
	char buf[1024], *s = buf, *tok;

	torch[0] = vision[0] = flag[0] = url[0] = '\0';
	snprintf(buf, sizeof(buf), "%s", cmd);
	while ((tok = strsep(&s, " ")) != NULL) {
		if (!*tok)
			continue;
		if (strncmp(tok, "torch==", 7) == 0)
			strcpy(torch, tok);
		else if (strncmp(tok, "torchvision==", 13) == 0)
			strcpy(vision, tok);
		else if (tok[0] == '-')
			strcpy(flag, tok);
		else if (strncmp(tok, "https://", 8) == 0 && flag[0])
			strcpy(url, tok);
	}
}

/* Every pip command of the install pages (Linux, CUDA and CPU) is the command the binary would give. */
static void torch_commands_match_shared(void **state)
{
	cJSON *doc = shared("torch-install-commands.json"), *r;
	const el_kb *kb = el_kb_builtin();
	int checked = 0, rocm = 0, nopip = 0;

	(void)state;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "rows")) {
		const char *variant = str(r, "variant"), *cmd = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "commands"), 0)->valuestring;
		const el_kb_torch_wheel *w;
		char torch[128], vision[128], flag[64], url[512], *mine;

		if (strncmp(variant, "rocm", 4) == 0) {
			rocm++; /* NVIDIA machines only */
			continue;
		}
		if (strncmp(cmd, "pip", 3) != 0) {
			nopip++; /* 1.0 and 1.1: "Download and install wheel from ...", no command to give */
			continue;
		}
		w = el_kb_torch_wheel_find(kb, str(r, "torch"), variant);
		if (!w)
			fail_msg("torch-install-commands.json: torch %s %s is not held", str(r, "torch"), variant);
		command_parts(cmd, torch, vision, flag, url);
		assert_string_equal(w->torch_pin, torch);
		assert_string_equal(w->vision_pin, vision);
		mine = el_kb_torch_pip(w);
		/* the same pins, flag and index (torchaudio is left out: envlock installs torch and torchvision) */
		if (flag[0]) {
			char want[1024];

			snprintf(want, sizeof(want), "pip install %s %s %s %s", torch, vision, flag, url);
			assert_string_equal(mine, want);
		}
		free(mine);
		checked++;
	}
	assert_true(checked > 90);
	print_message("%d torch commands agree; %d ROCm and %d pre-pip rows are not held\n", checked, rocm, nopip);
	cJSON_Delete(doc);
}

/* "11.[12]", "10.*", "12.1* || 12.4*" as the builder's case statements match a CUDA release. */
static bool case_matches(const char *pattern, const char *cuda)
{
	char buf[128], *s = buf, *alt;

	snprintf(buf, sizeof(buf), "%s", pattern);
	while ((alt = strsep(&s, "|")) != NULL) {
		const char *p = alt, *c = cuda;

		while (*p == ' ')
			p++;
		if (!*p)
			continue;
		for (; *p && *p != ' '; p++) {
			if (*p == '*') {
				c += strlen(c);
				p++;
				break;
			}
			if (*p == '[') {
				const char *close = strchr(p, ']');

				if (!*c || !memchr(p + 1, *c, (size_t)(close - p - 1)))
					break;
				c++;
				p = close;
				continue;
			}
			if (*p != *c)
				break;
			c++;
		}
		if ((!*p || *p == ' ') && !*c)
			return true;
	}
	return false;
}

/* Every Linux wheel build list of the builder: the binary's arch row for each variant it names says the same. */
static void torch_arch_match_shared(void **state)
{
	cJSON *doc = shared("torch-cuda-arch.json"), *r;
	const el_kb *kb = el_kb_builtin();
	size_t n;
	const el_kb_torch_wheel *w = el_kb_torch_wheels(kb, &n);
	int checked = 0, releases = 0;

	(void)state;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "rows")) {
		const char *torch = str(r, "torch"), *pack = str(r, "packaging");

		if (strncmp(pack, "linux-pip-wheel", 15) != 0 || strncmp(torch, "main", 4) == 0)
			continue; /* conda and Windows builds are not the wheels pip installs on Linux */
		for (size_t i = 0; i < n; i++) {
			char *rel = el_version_prefix(w[i].torch, 2);
			size_t count = 0;
			const el_kb_torch_arch *a;
			const cJSON *e;

			if (!w[i].cuda || strcmp(rel, torch) != 0 || !case_matches(str(r, "cuda_case_pattern"), w[i].cuda)) {
				free(rel);
				continue;
			}
			free(rel);
			a = el_kb_torch_arch_of(kb, w[i].torch, w[i].cuda);
			if (!a)
				fail_msg("torch-cuda-arch.json: torch %s %s has a build list; the binary has none", w[i].torch, w[i].variant);
			cJSON_ArrayForEach(e, cJSON_GetObjectItem(r, "sm")) {
				const char *digits = e->valuestring + 3; /* "sm_37" */
				char cc[16];
				bool found = false;

				snprintf(cc, sizeof(cc), "%.*s.%s", (int)strlen(digits) - 1, digits, digits + strlen(digits) - 1);
				for (size_t k = 0; k < a->sm.n; k++)
					found = found || strcmp(a->sm.v[k], cc) == 0;
				if (!found)
					fail_msg("torch %s %s: the builder lists %s; the binary does not", w[i].torch, w[i].variant,
						 e->valuestring);
				count++;
			}
			assert_int_equal(count, a->sm.n);
			checked++;
		}
	}
	/* every CUDA variant of every release the builder's branches cover was matched by one of their rows */
	for (size_t i = 0; i < n; i++) {
		char *rel = el_version_prefix(w[i].torch, 2);

		cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "rows"))
			if (w[i].cuda && strncmp(str(r, "packaging"), "linux-pip-wheel", 15) == 0 && strcmp(str(r, "torch"), rel) == 0) {
				releases++;
				break;
			}
		free(rel);
	}
	assert_int_equal(checked, releases);
	assert_true(checked > 50);
	print_message("%d torch wheel variants carry the builder's architecture lists\n", checked);
	cJSON_Delete(doc);
}

/* The release matrix's Python ranges and the torchvision pairs of the install pages. */
static void torch_python_and_vision_match_shared(void **state)
{
	cJSON *m = shared("torch-release-matrix.json"), *v = shared("torchvision-pairs.json"), *r;
	const el_kb *kb = el_kb_builtin();
	int rows = 0, pairs = 0;

	(void)state;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(m, "rows")) {
		const cJSON *src = cJSON_GetObjectItem(r, "source");
		const el_kb_torch_python *p = el_kb_torch_python_of(kb, str(r, "torch"));
		char lo[16], hi[16];

		if (strcmp(str(src, "repo"), "pytorch/pytorch") != 0)
			continue; /* the fork's copy: the official file's rows are the ones held */
		assert_non_null(p);
		assert_int_equal(sscanf(str(r, "python"), ">=%15[0-9.], <=%15[0-9.]", lo, hi), 2);
		assert_string_equal(p->python_min, lo);
		assert_string_equal(p->python_max, hi);
		rows++;
	}
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(v, "patch_level")) {
		size_t n;
		const el_kb_torch_wheel *w = el_kb_torch_wheels(kb, &n);
		char want[64];
		bool any = false;

		snprintf(want, sizeof(want), "torchvision==%s", str(r, "torchvision"));
		for (size_t i = 0; i < n; i++) {
			if (envlock_version_cmp(w[i].torch, str(r, "torch")) != 0)
				continue;
			any = true;
			if (strncmp(w[i].vision_pin, want, strlen(want)) != 0 ||
			    (w[i].vision_pin[strlen(want)] != '\0' && w[i].vision_pin[strlen(want)] != '+'))
				fail_msg("torch %s %s pairs with %s; torchvision-pairs.json says %s", w[i].torch, w[i].variant,
					 w[i].vision_pin, str(r, "torchvision"));
		}
		assert_true(any);
		pairs++;
	}
	assert_int_equal(rows, 6);
	assert_int_equal(pairs, 29);
	cJSON_Delete(m);
	cJSON_Delete(v);
}

/* NVIDIA's rows: each product's compute capability, CUDA 10's drivers, the toolkit drivers. */
static void nvidia_match_shared(void **state)
{
	cJSON *doc = shared("nvidia.json"), *r, *p;
	const el_kb *kb = el_kb_builtin();
	int products = 0, drivers = 0;

	(void)state;
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "compute_capability"))
		cJSON_ArrayForEach(p, cJSON_GetObjectItem(r, "products")) {
			const char *cc = el_kb_gpu_compute_capability(kb, p->valuestring, NULL);

			if (!cc || strcmp(cc, str(r, "compute_capability")) != 0)
				fail_msg("nvidia.json: %s is compute capability %s; the binary says %s", p->valuestring,
					 str(r, "compute_capability"), cc ? cc : "nothing");
			products++;
		}
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "cuda10_minimum_driver")) {
		char rel[16], min[32];
		const el_kb_cuda_driver *d;

		assert_int_equal(sscanf(str(r, "cuda_toolkit"), "CUDA %15s", rel), 1);
		assert_int_equal(sscanf(str(r, "linux_x86_64_minimum_driver"), ">= %31s", min), 1);
		d = el_kb_cuda_driver_of(kb, rel);
		assert_non_null(d);
		assert_string_equal(d->min_driver, min);
		drivers++;
	}
	/* the major's floor under minor-version compatibility */
	cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "minor_version_compatibility")) {
		int major, floor;
		char rel[16];
		const el_kb_cuda_driver *d;

		assert_int_equal(sscanf(str(r, "cuda_toolkit"), "CUDA %d.x", &major), 1);
		assert_int_equal(sscanf(str(r, "minimum_required_driver"), ">= %d", &floor), 1);
		snprintf(rel, sizeof(rel), "%d.0", major);
		d = el_kb_cuda_driver_of(kb, rel);
		assert_non_null(d);
		assert_non_null(d->minor_compat_driver);
		assert_int_equal(el_version_major(d->minor_compat_driver), floor);
		drivers++;
	}
	assert_int_equal(products, 109);
	assert_int_equal(drivers, 6);
	cJSON_Delete(doc);
}

static int by_bytes(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The binary holds every file of knowledge/ (run from the source tree),
 * each table parses under its file's name, and the digest computed when
 * envlock was built is the digest of what it holds.
 */
static void tables_are_the_files(void **state)
{
	glob_t g;
	size_t n = 0;
	el_sha256 *h = el_sha256_begin();
	char hex[EL_SHA256_HEX];

	(void)state;
	assert_int_equal(glob("knowledge/*/*.json", GLOB_NOSORT, NULL, &g), 0);
	qsort(g.gl_pathv, g.gl_pathc, sizeof(*g.gl_pathv), by_bytes); /* make's $(sort), whatever the locale */
	for (const el_kb_file *f = el_kb_files; f->name; f++, n++) {
		const cJSON *t = el_kb_find_table(f->name);

		assert_true(n < g.gl_pathc);
		assert_string_equal(f->path, g.gl_pathv[n]);
		assert_non_null(t);
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(t, "table")), f->name);
		assert_true(el_kb_has_table(f->name));
		if (!f->digested)
			continue; /* only fix hints and install commands read it: no lock's checks depend on it */
		el_sha256_update(h, f->path, strlen(f->path) + 1);
		el_sha256_update(h, f->text, strlen(f->text));
	}
	assert_int_equal(n, g.gl_pathc);
	el_sha256_end(h, hex);
	assert_string_equal(hex, el_kb_files_digest);
	assert_null(el_kb_find_table("no_such_table"));
	assert_false(el_kb_has_table("no_such_table"));
	globfree(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_are_the_files),
		cmocka_unit_test(known_facts),
		cmocka_unit_test(guards_match_shared),
		cmocka_unit_test(mmcv_wheels_match_shared),
		cmocka_unit_test(torch_commands_match_shared),
		cmocka_unit_test(torch_arch_match_shared),
		cmocka_unit_test(torch_python_and_vision_match_shared),
		cmocka_unit_test(nvidia_match_shared),
	};
	return cmocka_run_group_tests_name("knowledge", tests, NULL, NULL);
}
