/* The facts show and report both say of a lock (facts.h), derived once from its view. */
#include <stdlib.h>
#include <string.h>

#include "report/facts.h"
#include "util/xalloc.h"

/* By name, then by place in the lock: a model's first device comes first. */
static int by_name_then_place(const void *a, const void *b)
{
	const el_fact_gpu *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->first > y->first) - (x->first < y->first);
}

static int by_place(const void *a, const void *b)
{
	const el_fact_gpu *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/*
 * Identical models as one entry each, in the order they first appear.
 * Sorted, so a lock with a million devices costs n log n, not n squared;
 * a device's place in the lock is its address in the view's array.
 */
static void group_gpus(el_facts *f, const el_gpu *gpu)
{
	size_t n = gpu->ndevices, ng = 0;
	el_fact_gpu *g;

	if (!n)
		return;
	g = el_xcalloc(n, sizeof(*g));
	for (size_t i = 0; i < n; i++) {
		g[i].name = gpu->devices[i].name ? gpu->devices[i].name : "unknown GPU";
		g[i].first = &gpu->devices[i];
	}
	qsort(g, n, sizeof(*g), by_name_then_place);
	for (size_t i = 0; i < n; i++) {
		if (ng && strcmp(g[ng - 1].name, g[i].name) == 0) {
			g[ng - 1].count++;
			continue;
		}
		g[ng] = g[i];
		g[ng++].count = 1;
	}
	qsort(g, ng, sizeof(*g), by_place);
	f->gpus = g;
	f->ngpus = ng;
}

/* The driver: found with its version; absent when not recorded or recorded absent; else unknown. */
static el_fact_state driver_state(const el_gpu *gpu)
{
	const el_state *st = &gpu->driver.st;

	if (st->present && gpu->driver.version)
		return EL_FACT_FOUND;
	if (!st->recorded || (st->status && strcmp(st->status, "absent") == 0))
		return EL_FACT_ABSENT;
	return EL_FACT_UNKNOWN;
}

/* The toolkits with a home, the default first, then the others in the lock's order. */
static void order_toolkits(el_facts *f, const el_cuda *cuda)
{
	size_t n = 0;

	if (!cuda->ntoolkits)
		return;
	f->toolkits = el_xcalloc(cuda->ntoolkits, sizeof(*f->toolkits));
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < cuda->ntoolkits; i++) {
			const el_toolkit *tk = &cuda->toolkits[i];
			bool is_def = tk == cuda->default_tk;

			if (!tk->home || is_def != (pass == 0))
				continue;
			f->toolkits[n++] = (el_fact_toolkit){ tk, el_toolkit_version(tk), is_def };
		}
	f->ntoolkits = n;
}

static void gcc_facts(el_facts *f, const el_compilers *comp)
{
	f->gcc = comp->def.version;
	if (comp->ngcc)
		f->gcc_others = el_xcalloc(comp->ngcc, sizeof(*f->gcc_others));
	for (size_t i = 0; i < comp->ngcc; i++) {
		const char *v = comp->gcc[i].version;

		if (v && (!f->gcc || strcmp(v, f->gcc) != 0))
			f->gcc_others[f->ngcc_others++] = v;
	}
}

/* What a framework was built for: torch is CUDA, ROCm or CPU-only; mmcv says its ops; the others only CUDA. */
static void build_of(el_fact_framework *x)
{
	const el_framework *fw = x->fw;

	if (x->mmcv) {
		x->build = EL_BUILD_NONE;
	} else if (fw->cuda) {
		x->build = EL_BUILD_CUDA;
		x->build_version = fw->cuda;
	} else if (strcmp(fw->info->key, "torch") != 0) {
		x->build = EL_BUILD_NONE;
	} else if (fw->hip) {
		x->build = EL_BUILD_ROCM;
		x->build_version = fw->hip;
	} else if (fw->st.recorded || fw->cpu_only == EL_YES) {
		x->build = EL_BUILD_CPU;
	} else {
		x->build = EL_BUILD_NONE; /* an imported list's torch without a local version: its build is not known */
	}
}

static void framework_facts(el_facts *f, const el_view *v)
{
	for (size_t i = 0; i < EL_FW_COUNT; i++) {
		const el_framework *fw = &v->frameworks[i];
		el_fact_framework *x = &f->frameworks[f->nframeworks];

		if (!fw->st.present || !fw->version)
			continue;
		memset(x, 0, sizeof(*x));
		x->fw = fw;
		x->version = fw->version;
		x->label = fw->info->key;
		x->mmcv = strcmp(fw->info->key, "mmcv") == 0;
		if (x->mmcv) {
			x->label = fw->package ? fw->package : "mmcv";
			x->ops = fw->ops == EL_YES;
			x->ops_known = fw->ops != EL_UNSET;
		}
		build_of(x);
		f->nframeworks++;
	}
}

const char *el_fact_origin(const char *layout)
{
	if (!layout)
		return NULL;
	if (strcmp(layout, "conda") == 0)
		return "conda env";
	if (strcmp(layout, "wheel") == 0)
		return "pip wheels";
	if (strcmp(layout, "bundled") == 0)
		return "torch's copy";
	return NULL;
}

/* What torch's modules load for the soname prefix: the file, and its version (el_view_library_version). */
static void torch_loads(const el_view *v, const char *prefix, const char **path, const char **version)
{
	const el_load_need *n = el_loads_find(&v->loads, "torch", prefix);

	*path = n ? (n->realpath ? n->realpath : n->path) : NULL;
	*version = el_view_library_version(v, *path);
}

void el_facts_build(el_facts *f, const el_view *v)
{
	const el_system *sys = &v->system;

	memset(f, 0, sizeof(*f));
	f->os.known = sys->os.st.present;
	f->os.name = sys->os.pretty_name ? sys->os.pretty_name : sys->os.name;
	f->glibc.found = sys->glibc.st.present;
	f->glibc.version = sys->glibc.version;
	group_gpus(f, &v->gpu);
	f->driver = driver_state(&v->gpu);
	f->driver_user_space = v->gpu.driver.user_space.st.present ? v->gpu.driver.user_space.version : NULL;
	order_toolkits(f, &v->cuda);
	if (v->cudnn.st.present && v->cudnn.version)
		f->cudnn = EL_FACT_FOUND;
	else
		f->cudnn = v->cudnn.nlibraries ? EL_FACT_UNKNOWN : EL_FACT_ABSENT;
	gcc_facts(f, &v->compilers);
	f->python = v->python.st.present;
	f->conda = v->conda.st.present;
	f->conda_packages = v->conda.package_count >= 0 ? v->conda.package_count : (long long)v->conda.npackages;
	f->pip = v->pip.st.present;
	for (size_t i = 0; i < v->pip.ndists; i++) {
		f->pip_editable += v->pip.dists[i].editable;
		f->pip_also_conda += v->pip.dists[i].also_conda;
	}
	framework_facts(f, v);
	torch_loads(v, "libcudnn.so", &f->torch_cudnn.path, &f->torch_cudnn.version);
	torch_loads(v, "libcudart", &f->torch_cudart.path, &f->torch_cudart.version);
}

void el_facts_release(el_facts *f)
{
	free(f->gpus);
	free(f->toolkits);
	free(f->gcc_others);
	memset(f, 0, sizeof(*f));
}
