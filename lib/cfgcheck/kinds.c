/*
 * The config rule kinds: each judges every requested config of the lock
 * that has an effective value, against the machine the same lock
 * describes (cores, memory, GPUs, installed distributions) and the files
 * the config named as that machine had them. Their words and sources
 * are in rules/envlock.rules.json; the facts they read are facts.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgcheck.h"
#include "knowledge/knowledge.h"
#include "lock/model.h"
#include "rules/rules.h"
#include "util/text.h"
#include "util/xalloc.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef void (*config_fn)(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			  const el_config *c, const el_cfg_facts *x);

/* Run fn on each config with an effective value. */
static void each_config(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v, config_fn fn)
{
	for (size_t i = 0; i < v->configs.nfiles; i++) {
		const el_config *c = &v->configs.files[i];
		el_cfg_facts x;

		if (!c->effective)
			continue;
		el_cfg_facts_read(&x, c->effective, c->path);
		fn(f, rule, table, v, c, &x);
		el_cfg_facts_free(&x);
	}
}

static const char *fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static const char *fmt(char *buf, size_t n, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, n, f, ap);
	va_end(ap);
	return buf;
}

static long long gpus_of(const el_view *v)
{
	if (!v->gpu.st.present)
		return 0;
	if (v->gpu.ndevices)
		return (long long)v->gpu.ndevices;
	return v->gpu.count > 0 ? v->gpu.count : 0;
}

/* The first row of table whose member key is a number: that number, else fallback. */
static double table_num(const cJSON *table, const char *key, double fallback)
{
	const cJSON *rows = el_jget(table, "rows");

	for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
		const cJSON *n = el_jget(r, key);

		if (cJSON_IsNumber(n))
			return n->valuedouble;
	}
	return fallback;
}

/* A number as a person writes it: 0.005, 2.5e-05, 32 */
static const char *num_text(char *buf, size_t n, double d)
{
	snprintf(buf, n, "%.4g", d);
	return buf;
}

/* Which words name what limits the machine: a container's, when the lock saw one, else a cgroup's. */
static const char *limited_by(const el_view *v, const char *container, const char *cgroup)
{
	return v->system.container.detected ? container : cgroup;
}

/*
 * The CPUs a container's cgroup allows (its quota or cpuset), when they
 * are fewer than the logical cores /proc/cpuinfo shows: what DataLoader
 * workers really get. -1 when the cgroup limits nothing below the cores.
 */
static double cgroup_cpus_below_cores(const el_view *v)
{
	double cpus = el_cgroup_cpus(&v->system);
	long long cores = v->system.cpu.logical_cores;

	return cpus > 0 && (cores <= 0 || cpus < (double)cores) ? cpus : -1;
}

/* --- what it needs ------------------------------------------------------ */

static bool installed(const el_view *v, const char *dist)
{
	char *want = el_pep503_name(dist);
	bool found = false;

	for (size_t i = 0; i < v->pip.ndists && !found; i++) {
		char *have = el_pep503_name(v->pip.dists[i].name ? v->pip.dists[i].name : "");

		found = !strcmp(have, want);
		free(have);
	}
	free(want);
	return found;
}

/* The table's row for a module's top-level name (its "scope"), or NULL. */
static const cJSON *scope_row(const cJSON *table, const char *name)
{
	size_t n = strcspn(name, ".");
	const cJSON *rows = el_jget(table, "rows");

	for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
		const char *s = el_jget_str(r, "scope");

		if (s && strlen(s) == n && !strncmp(s, name, n))
			return r;
	}
	return NULL;
}

/*
 * The command that installs the package of a scope row (first: its first
 * distribution): for an OpenMMLab codebase the release that fits the mmcv
 * here (from the knowledge), else the table's words. A package no row
 * knows (first NULL: name), or a row without words (a rules file's own
 * table), leaves it to the rule's fix_fallback, else names what to
 * install: the commands are the knowledge's, not envlock's. malloc'd, or
 * NULL: the rule's fix_fallback.
 */
static char *scope_install(const el_view *v, const cJSON *rule, const cJSON *row, const char *first, const char *name)
{
	char *install = first ? el_fix_codebase(v, first) : NULL;

	if (!install && el_jget_str(row, "install"))
		install = el_xstrdup(el_jget_str(row, "install"));
	if (!install && !el_jget_str(rule, "fix_fallback"))
		install = el_xasprintf("install the %s package", first ? first : name);
	return install;
}

/* The first distribution a scope row names, NULL when none; *have: one of them is installed. */
static const char *scope_distribution(const el_view *v, const cJSON *row, bool *have)
{
	const cJSON *dists = el_jget(row, "distributions");
	const char *first = NULL;

	*have = false;
	if (!cJSON_IsArray(dists))
		return NULL;
	for (const cJSON *d = dists->child; d; d = d->next)
		if (cJSON_IsString(d)) {
			first = first ? first : d->valuestring;
			*have = *have || installed(v, d->valuestring);
		}
	return first;
}

static void needs_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
		      const el_config *c, const el_cfg_facts *x)
{
	for (size_t i = 0; i < x->nneeds; i++) {
		const el_cfg_need *n = &x->needs[i];
		const cJSON *row = scope_row(table, n->name);
		const char *first;
		char subject[512], scope[128], *install;
		bool have;

		if (!row || (first = scope_distribution(v, row, &have)) == NULL || have)
			continue;
		snprintf(scope, sizeof(scope), "%.*s", (int)strcspn(n->name, "."), n->name);
		snprintf(subject, sizeof(subject), "%s: %s", c->path, scope);
		install = scope_install(v, rule, row, first, scope);
		el_finding_add(f, rule, subject, el_jget_str(row, "source") ? el_jget_str(row, "source")
									    : el_jget_str(table, "source"),
			       (const char *const[]){
			"config", c->path, "module", scope, "key", n->key, "value", n->value, "distribution", first,
			"install", install, NULL });
		free(install);
	}
}

static void config_needs_module(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	if (v->pip.st.present)
		each_config(f, rule, table, v, needs_one);
}

/* --- data loading against cores and memory ------------------------------ */

static void workers_cores_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			      const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	long long cores = v->system.cpu.logical_cores, gpus = gpus_of(v), procs = gpus > 0 ? gpus : 1, want;
	double cpus = cgroup_cpus_below_cores(v);
	const char *what = "logical cores";
	char a[32], b[32], d[32], e[32], subject[512];

	(void)table;
	/* a container's CPU limit is what the workers get, whatever /proc/cpuinfo shows */
	if (cpus >= 1 && (cores <= 0 || (long long)cpus < cores)) {
		cores = (long long)cpus;
		what = limited_by(v, "CPUs this container may use", "CPUs this cgroup may use");
	}
	if (!t || t->num_workers < 0 || cores <= 0)
		return;
	/* the rule of thumb: half the logical cores, shared by the training processes (one per GPU) */
	want = cores / 2 / procs;
	if (want < 1 || t->num_workers * 2 > want)
		return;
	snprintf(subject, sizeof(subject), "%s: %s", c->path, t->key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "key", t->key, "workers_key", t->workers_key,
		"workers", fmt(a, sizeof(a), "%lld", t->num_workers), "cores", fmt(b, sizeof(b), "%lld", cores),
		"cores_what", what,
		"processes", fmt(d, sizeof(d), "%lld", procs), "suggested", fmt(e, sizeof(e), "%lld", want), NULL });
}

static void config_workers_vs_cores(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, workers_cores_one);
}

/*
 * The workers alive at once in each training process: the train loader's,
 * and at validation the val loader's beside the train ones kept alive by
 * persistent_workers=True. Every process (one per GPU) has its own.
 */
static void workers_over_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			     const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train"), *val = el_cfg_loader_of(x, "val");
	long long cores = v->system.cpu.logical_cores, gpus = gpus_of(v), procs = gpus > 0 ? gpus : 1;
	long long train_w, val_w, at_val, peak, want, budget;
	char detail[256], settings[512], a[32], b[32], subject[512];

	(void)table;
	if (!t || t->num_workers < 0 || cores <= 0)
		return;
	/* config-workers-cgroup judges these against the fewer CPUs the container may use, with the tighter fix */
	if (cgroup_cpus_below_cores(v) > 0 && (double)t->num_workers * (double)procs > cgroup_cpus_below_cores(v))
		return;
	train_w = t->num_workers;
	val_w = val && val->num_workers > 0 ? val->num_workers : 0;
	at_val = (t->persistent_workers == EL_CFG_YES ? train_w : 0) + val_w;
	peak = train_w > at_val ? train_w : at_val;
	if (peak * procs <= cores)
		return;
	if (at_val > train_w)
		snprintf(detail, sizeof(detail), "%lld train workers kept alive and %lld val workers at validation, "
			 "in each of %lld training process(es)", train_w, val_w, procs);
	else
		snprintf(detail, sizeof(detail), "%lld train workers in each of %lld training process(es)", train_w, procs);
	/*
	 * The settings that fit: the train workers by the rule of thumb
	 * config-workers-starved uses (half the cores, shared by the
	 * processes); at validation at most 4 val workers (plenty for it),
	 * and the train workers kept alive beside them within the cores.
	 */
	budget = cores / procs;
	want = budget / 2 > 0 ? budget / 2 : 1;
	if (at_val > train_w) {
		long long val_s = val_w < 4 ? val_w : 4, train_s = train_w < want ? train_w : want;

		if (train_s + val_s > budget)
			train_s = budget - val_s > 0 ? budget - val_s : 1;
		if (train_s == train_w)
			snprintf(settings, sizeof(settings), "%s=%lld", val->workers_key, val_s);
		else
			snprintf(settings, sizeof(settings), "%s=%lld %s=%lld", t->workers_key, train_s,
				 val->workers_key, val_s);
	} else {
		snprintf(settings, sizeof(settings), "%s=%lld", t->workers_key, want);
	}
	snprintf(subject, sizeof(subject), "%s: %s", c->path, t->workers_key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "detail", detail, "settings", settings,
		"total", fmt(a, sizeof(a), "%lld", peak * procs), "cores", fmt(b, sizeof(b), "%lld", cores), NULL });
}

static void config_workers_oversubscribed(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, workers_over_one);
}

/*
 * At the first validation the train loader's workers are still alive
 * when persistent_workers=True, and the val loader starts its own: every
 * training process (one per GPU) then has train + val workers. Each
 * worker holds its own copy of the dataset's Python objects (reference
 * counts defeat copy-on-write), so memory grows with the count.
 */
static void workers_memory_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			       const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train"), *val = el_cfg_loader_of(x, "val");
	long long gpus = gpus_of(v), procs = gpus > 0 ? gpus : 1, cores = v->system.cpu.logical_cores;
	long long train_w, val_w, total;
	double per = table_num(table, "worker_gib", 0.5), share = table_num(table, "memory_share", 0.8);
	double mem = v->system.memory_total_bytes > 0 ? v->system.memory_total_bytes / GIB : 0, need;
	long long limit = el_cgroup_memory(&v->system);
	char sa[24], sb[24], sc[24], sd[24], se[24], sf[24], sg[24], sh[24], si[24], subject[512];

	/* the cgroup's limit, when lower, is where the kernel's OOM killer strikes */
	if (limit >= 0)
		mem = limit / GIB;
	if (!t || !val || t->num_workers < 0 || val->num_workers < 0 || mem <= 0)
		return;
	train_w = t->persistent_workers == EL_CFG_YES ? t->num_workers : 0;
	val_w = val->num_workers;
	total = (train_w + val_w) * procs;
	need = (double)total * per;
	if (need < mem * share)
		return;
	snprintf(subject, sizeof(subject), "%s: %s + %s", c->path, t->key, val->key);
	el_finding_add(f, rule, subject, el_jget_str(table, "source"), (const char *const[]){
		"config", c->path,
		"train_workers", fmt(sa, sizeof(sa), "%lld", t->num_workers),
		"persistent", t->persistent_workers == EL_CFG_YES ? "persistent_workers=True: they stay alive"
								  : "not persistent",
		"alive", fmt(sg, sizeof(sg), "%lld", train_w),
		"val_workers", fmt(sb, sizeof(sb), "%lld", val_w),
		"processes", fmt(sc, sizeof(sc), "%lld", procs),
		"total", fmt(sd, sizeof(sd), "%lld", total),
		"per_worker", num_text(se, sizeof(se), per),
		"need", fmt(sf, sizeof(sf), "%.1f", need),
		"memory", fmt(sh, sizeof(sh), "%.1f", mem),
		"memory_whose", limit < 0 ? "this machine's" : limited_by(v, "this container's", "this cgroup's"),
		"memory_limit", limit < 0 ? "" : " memory limit",
		"cores", cores > 0 ? fmt(si, sizeof(si), "%lld", cores) : "?", NULL });
}

static void config_workers_memory(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, workers_memory_one);
}

/* "64 MiB", "1.5 GiB", "147 KiB", "12 bytes": a size as a person reads it */
static const char *size_text(char *buf, size_t n, double bytes)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (bytes >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		bytes /= 1024;
		u++;
	}
	if (u == 0 || bytes == (double)(long long)bytes || bytes >= 100)
		snprintf(buf, n, "%.0f %s", bytes, units[u]);
	else
		snprintf(buf, n, "%.1f %s", bytes, units[u]);
	return buf;
}

/* A table's first string member key, or fallback. */
static const char *table_str(const cJSON *table, const char *key, const char *fallback)
{
	const cJSON *rows = el_jget(table, "rows");

	for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next)
		if (el_jget_str(r, key))
			return el_jget_str(r, key);
	return fallback;
}

/*
 * Every batch a DataLoader worker makes reaches the training process
 * through /dev/shm (torch.multiprocessing shares its tensors' storage
 * there), prefetch_factor batches ahead per worker. What a sample weighs
 * is not in a config, so the line is drawn plainly: workers and a
 * /dev/shm under the table's min_bytes (1 GiB); the arithmetic says how
 * little each sample may then take.
 */
static void shm_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
		    const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	long long gpus = gpus_of(v), procs = gpus > 0 ? gpus : 1, shm = v->system.shm.size_bytes;
	long long prefetch, batch;
	double min = table_num(table, "min_bytes", GIB), samples;
	char sa[24], sb[24], sc[24], sd[24], se[40], sf[24], sg[24], sh[24], si[24], subject[512];

	if (!t || t->num_workers <= 0 || shm < 0 || (double)shm >= min)
		return;
	prefetch = t->prefetch_factor > 0 ? t->prefetch_factor : (long long)table_num(table, "prefetch_factor", 2);
	/* PyTorch's DataLoader and mmengine's take batch_size=1 when none is set */
	batch = t->batch_size > 0 ? t->batch_size : 1;
	samples = (double)t->num_workers * (double)procs * (double)prefetch * (double)batch;
	snprintf(subject, sizeof(subject), "%s: %s", c->path, t->key);
	el_finding_add(f, rule, subject, el_jget_str(table, "source"), (const char *const[]){
		"config", c->path, "key", t->key, "workers_key", t->workers_key,
		"workers", fmt(sa, sizeof(sa), "%lld", t->num_workers),
		"processes", fmt(sb, sizeof(sb), "%lld", procs),
		"prefetch", fmt(sc, sizeof(sc), "%lld", prefetch),
		"batch", fmt(sd, sizeof(sd), "%lld", batch),
		"samples", fmt(se, sizeof(se), "%.0f", samples),
		"shm", size_text(sf, sizeof(sf), (double)shm),
		"per_sample", size_text(sg, sizeof(sg), (double)shm / samples),
		"sample", table_str(table, "sample", "sample"),
		"sample_size", size_text(sh, sizeof(sh), table_num(table, "sample_bytes", 0)),
		"min", size_text(si, sizeof(si), min),
		"suggested", table_str(table, "suggested", "8g"), NULL });
}

static void config_shm_small(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	if (v->system.shm.present)
		each_config(f, rule, table, v, shm_one);
}

/*
 * A container limited to 4 CPUs still shows every host core in
 * /proc/cpuinfo, and worker counts chosen from those oversubscribe the
 * few CPUs it may use: the kernel throttles the training processes with
 * the workers.
 */
static void workers_cgroup_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			       const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	const el_system *s = &v->system;
	long long gpus = gpus_of(v), procs = gpus > 0 ? gpus : 1, cores = s->cpu.logical_cores, want;
	double cpus = cgroup_cpus_below_cores(v);
	bool quota = s->cgroup.cpu_limited == EL_YES && s->cgroup.cpu_limit <= cpus;
	char sa[24], sb[24], sc[24], sd[24], se[24], sf[24], why[96], subject[512];

	(void)table;
	if (!t || t->num_workers <= 0 || cpus <= 0 || (double)t->num_workers * (double)procs <= cpus)
		return;
	want = (long long)(cpus / (double)procs / 2);
	if (want < 1)
		want = 1;
	if (quota && s->cgroup.cpu_quota_us > 0 && s->cgroup.cpu_period_us > 0)
		snprintf(why, sizeof(why), "a CPU quota of %lld µs every %lld µs", s->cgroup.cpu_quota_us,
			 s->cgroup.cpu_period_us);
	else
		snprintf(why, sizeof(why), "%s", quota ? "a CPU quota" : "the cgroup's cpuset");
	snprintf(subject, sizeof(subject), "%s: %s", c->path, t->key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "key", t->key, "workers_key", t->workers_key,
		"workers", fmt(sa, sizeof(sa), "%lld", t->num_workers),
		"processes", fmt(sb, sizeof(sb), "%lld", procs),
		"total", fmt(sc, sizeof(sc), "%.0f", (double)t->num_workers * (double)procs),
		"whose", limited_by(v, "this container", "this cgroup"),
		"cpus", fmt(sd, sizeof(sd), "%g", cpus), "why", why,
		"cores", cores > 0 ? fmt(se, sizeof(se), "%lld", cores) : "?",
		"suggested", fmt(sf, sizeof(sf), "%lld", want), NULL });
}

static void config_workers_cgroup(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	if (v->system.cgroup.recorded)
		each_config(f, rule, table, v, workers_cgroup_one);
}

static void pin_memory_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			   const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	char subject[512];

	(void)table;
	(void)v;
	/* mmengine's loaders take pin_memory from the config (default False); mmcv 1.x's builders hard-code it */
	if (!t || !x->mmengine || t->pin_memory == EL_CFG_YES)
		return;
	snprintf(subject, sizeof(subject), "%s: %s.pin_memory", c->path, t->key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "key", t->key, NULL });
}

static void config_pin_memory(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	if (gpus_of(v) > 0)
		each_config(f, rule, table, v, pin_memory_one);
}

/* GPU memory: nvidia-smi's figure, else the one in its name ("Tesla V100-PCIE-16GB", "A100-SXM4-80GB") */
static double gpu_gib(const el_gpu_device *d)
{
	const char *p;

	if (d->memory_mib > 0)
		return d->memory_mib / 1024.0;
	for (p = d->name; p && (p = strstr(p, "GB")) != NULL; p++) {
		const char *s = p;

		while (s > d->name && s[-1] >= '0' && s[-1] <= '9')
			s--;
		if (s < p && (p[2] == '\0' || p[2] == ' ' || p[2] == '-'))
			return atof(s);
	}
	return 0;
}

static void batch_memory_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			     const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	double gib = v->gpu.ndevices ? gpu_gib(&v->gpu.devices[0]) : 0;
	char a[24], b[24], d[24], e[24], subject[512];

	(void)table;
	if (!t || t->batch_size < 0 || x->name_batch <= 0 || t->batch_size <= x->name_batch || gib <= 0)
		return;
	snprintf(subject, sizeof(subject), "%s: %s.batch_size", c->path, t->key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "batch", fmt(a, sizeof(a), "%lld", t->batch_size),
		"reference", fmt(b, sizeof(b), "%lld", x->name_batch), "name", x->name_ref,
		"ratio", fmt(d, sizeof(d), "%.3g", (double)t->batch_size / (double)x->name_batch),
		"gpu", v->gpu.devices[0].name ? v->gpu.devices[0].name : "GPU 0",
		"gpu_gib", fmt(e, sizeof(e), "%.0f", gib), NULL });
}

static void config_batch_vs_gpu_memory(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, batch_memory_one);
}

/*
 * A vision transformer's activations against the GPU's memory: per layer
 * and sample s*h*(34 + 5*a*s/h) bytes in 16-bit (Korthikanti et al.,
 * section 4.1: s tokens, h width, a heads), twice that in fp32, times the
 * layers and the batch. Weights, gradients and the optimizer's state come
 * on top, so this is the least the batch needs: an order of magnitude.
 */
static void batch_activations_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
				  const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	double gib = v->gpu.ndevices ? gpu_gib(&v->gpu.devices[0]) : 0, s = (double)x->vit_tokens, h = (double)x->vit_dims;
	double a = (double)x->vit_heads, scale = x->amp == EL_CFG_YES ? 1 : 2, per_sample, total;
	long long fits;
	char key[256], subject[512], sa[24], sb[24], sc[24], sd[24], se[24], sf[24], sg[24], sh[24], si[24], sj[24];

	(void)table;
	if (!t || t->batch_size <= 0 || x->vit_layers <= 0 || gib <= 0)
		return;
	per_sample = s * h * (34 + 5 * a * s / h) * (double)x->vit_layers * scale;
	total = per_sample * (double)t->batch_size;
	if (total <= gib * GIB)
		return;
	/* the largest power of two whose activations alone fit: batches are powers of two in OpenMMLab's configs */
	fits = 1;
	while ((double)fits * 2 * per_sample <= gib * GIB && fits < ((long long)1 << 40))
		fits *= 2;
	snprintf(key, sizeof(key), "%s", x->mmengine ? t->key : "data");
	snprintf(key + strlen(key), sizeof(key) - strlen(key), ".%s", x->mmengine ? "batch_size" : "samples_per_gpu");
	snprintf(subject, sizeof(subject), "%s: %s", c->path, key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "key", key, "batch", fmt(sa, sizeof(sa), "%lld", t->batch_size),
		"gpu", v->gpu.devices[0].name ? v->gpu.devices[0].name : "GPU 0", "gpu_gib", fmt(sb, sizeof(sb), "%.1f", gib),
		"layers", fmt(sc, sizeof(sc), "%lld", x->vit_layers), "tokens", fmt(sd, sizeof(sd), "%lld", x->vit_tokens),
		"dims", fmt(se, sizeof(se), "%lld", x->vit_dims), "heads", fmt(sf, sizeof(sf), "%lld", x->vit_heads),
		"precision", x->amp == EL_CFG_YES ? "16-bit (AMP)" : "fp32, twice the 16-bit figure",
		"per_sample", fmt(sg, sizeof(sg), "%.0f", per_sample / (1024.0 * 1024.0)),
		"total", fmt(sh, sizeof(sh), "%.1f", total / GIB),
		"suggested", fmt(si, sizeof(si), "%lld", fits),
		"ratio", fmt(sj, sizeof(sj), "%.1f", total / (gib * GIB)), NULL });
}

static void config_batch_activations(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, batch_activations_one);
}

/* --- precision ---------------------------------------------------------- */

/*
 * A GPU's compute capability: nvidia-smi's, else the table's row whose
 * "match" is the longest part of the name (NVIDIA's CUDA GPUs list). -1
 * when unknown.
 */
static double compute_capability(const cJSON *table, const el_gpu_device *d)
{
	const char *cc;

	if (d->compute_capability && atof(d->compute_capability) > 0)
		return atof(d->compute_capability);
	cc = el_kb_gpu_cc_in(table, d->name, NULL);
	return cc ? atof(cc) : -1;
}

static void amp_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
		    const el_config *c, const el_cfg_facts *x, bool want_amp)
{
	const el_gpu_device *d = &v->gpu.devices[0];
	double cc = compute_capability(table, d);
	char a[16], subject[512];

	if (cc < 0 || (x->amp == EL_CFG_YES) != want_amp || (want_amp ? cc >= 7.0 : cc < 7.0))
		return;
	snprintf(subject, sizeof(subject), "%s: %s", c->path, x->amp_key);
	/* the switch of the config's own dialect: mmengine's optimizer wrapper, mmcv 1.x's fp16 hook */
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "key", x->amp_key, "gpu", d->name ? d->name : "GPU 0",
		"cc", fmt(a, sizeof(a), "%.1f", cc),
		"amp", x->mmengine ? "--cfg-options optim_wrapper.type=AmpOptimWrapper (what tools/train.py --amp sets)"
				   : "--cfg-options fp16.loss_scale=512.", NULL });
}

static void amp_no_tc_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			  const el_config *c, const el_cfg_facts *x)
{
	amp_one(f, rule, table, v, c, x, true);
}

static void amp_off_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			const el_config *c, const el_cfg_facts *x)
{
	amp_one(f, rule, table, v, c, x, false);
}

static void config_amp_no_tensor_cores(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	if (v->gpu.ndevices)
		each_config(f, rule, table, v, amp_no_tc_one);
}

static void config_amp_off(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	if (v->gpu.ndevices)
		each_config(f, rule, table, v, amp_off_one);
}

/* --- learning rate against the total batch ------------------------------ */

static bool lr_given(const el_config *c, const el_cfg_facts *x)
{
	size_t n = strlen(x->lr_key);

	for (size_t i = 0; i < c->cfg_options.n; i++)
		if (!strncmp(c->cfg_options.v[i], x->lr_key, n) && c->cfg_options.v[i][n] == '=')
			return true;
	return false;
}

static void lr_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
		   const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	long long gpus = gpus_of(v), total;
	char a[24], b[24], d[24], e[24], g[24], h[24], subject[512], from[96];

	(void)table;
	/* the lr the user set on the command line is theirs; auto_scale_lr.enable scales it at start */
	if (!t || t->batch_size <= 0 || !x->has_lr || x->base_batch <= 0 || gpus <= 0 ||
	    x->auto_scale == EL_CFG_YES || lr_given(c, x))
		return;
	total = t->batch_size * gpus;
	if (total == x->base_batch)
		return;
	if (x->base_from && !strcmp(x->base_from, "the file name"))
		snprintf(from, sizeof(from), "the file name's %s", x->name_ref);
	else
		snprintf(from, sizeof(from), "%s", x->base_from);
	snprintf(subject, sizeof(subject), "%s: %s", c->path, x->lr_key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "lr_key", x->lr_key, "lr", num_text(a, sizeof(a), x->lr),
		"base", fmt(b, sizeof(b), "%lld", x->base_batch), "from", from,
		"batch", fmt(d, sizeof(d), "%lld", t->batch_size), "gpus", fmt(e, sizeof(e), "%lld", gpus),
		"total", fmt(g, sizeof(g), "%lld", total),
		"suggested", num_text(h, sizeof(h), x->lr * (double)total / (double)x->base_batch), NULL });
}

static void config_lr_scaling(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, lr_one);
}

/*
 * Where the lock does not know the GPU count, the total batch is unknown
 * but the batch per GPU is not: against the per-GPU batch the lr was set
 * for, the config name's NxbM, else auto_scale_lr.base_batch_size over the
 * GPUs of OpenMMLab's reference run (the table's reference_gpus).
 */
static void lr_per_gpu_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			   const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	double ref_gpus = table_num(table, "reference_gpus", 0);
	long long ref = -1;
	char a[24], b[24], d[24], e[24], g[24], subject[512], from[160];

	(void)v;
	if (!t || t->batch_size <= 0 || !x->has_lr || x->auto_scale == EL_CFG_YES || lr_given(c, x))
		return;
	if (x->name_batch > 0) {
		ref = x->name_batch;
		snprintf(from, sizeof(from), "the file name's %s", x->name_ref);
	} else if (x->base_batch > 0 && x->base_from && !strcmp(x->base_from, "auto_scale_lr.base_batch_size") &&
		   ref_gpus >= 1 && x->base_batch % (long long)ref_gpus == 0) {
		ref = x->base_batch / (long long)ref_gpus;
		snprintf(from, sizeof(from), "auto_scale_lr.base_batch_size %lld = %lld GPUs x %lld", x->base_batch,
			 (long long)ref_gpus, ref);
	}
	if (ref <= 0 || t->batch_size == ref)
		return;
	snprintf(subject, sizeof(subject), "%s: %s", c->path, x->lr_key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "lr_key", x->lr_key, "lr", num_text(a, sizeof(a), x->lr),
		"reference", fmt(b, sizeof(b), "%lld", ref), "from", from,
		"batch", fmt(d, sizeof(d), "%lld", t->batch_size),
		"ratio", num_text(e, sizeof(e), (double)t->batch_size / (double)ref),
		"suggested", num_text(g, sizeof(g), x->lr * (double)t->batch_size / (double)ref), NULL });
}

static void config_lr_per_gpu(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	if (gpus_of(v) <= 0)
		each_config(f, rule, table, v, lr_per_gpu_one);
}

/* --- classes against the annotation file -------------------------------- */

static void classes_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			const el_config *c, const el_cfg_facts *x)
{
	const el_cfg_loader *t = el_cfg_loader_of(x, "train");
	const el_config_use *ann = NULL;
	long long want;
	const char *why;
	char a[24], b[24], subject[512];

	(void)table;
	(void)v;
	if (!t)
		return;
	for (size_t i = 0; i < c->nuses && !ann; i++)
		if (c->uses[i].role && !strcmp(c->uses[i].role, "annotations") && c->uses[i].categories >= 0)
			ann = &c->uses[i];
	/* classes= picks the categories the dataset keeps; without it, every category of the file */
	if (t->classes >= 0) {
		want = t->classes;
		why = t->classes_key;
	} else if (ann) {
		want = ann->categories;
		why = ann->path;
	} else {
		return;
	}
	for (size_t i = 0; i < x->nclasses; i++) {
		if (x->classes[i].value == want)
			continue;
		snprintf(subject, sizeof(subject), "%s: %s", c->path, x->classes[i].key);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"config", c->path, "key", x->classes[i].key,
			"num_classes", fmt(a, sizeof(a), "%lld", x->classes[i].value),
			"classes", fmt(b, sizeof(b), "%lld", want),
			"where", t->classes >= 0 ? "the classes= override" : "categories in",
			"file", why, NULL });
	}
}

static void config_num_classes(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, classes_one);
}

/* --- cuDNN's autotuner -------------------------------------------------- */

static void cudnn_one(envlock_findings *f, const cJSON *rule, const el_config *c, const el_cfg_facts *x,
		      int benchmark, int fixed)
{
	char subject[512];

	if ((benchmark == EL_CFG_YES) != (x->cudnn_benchmark == EL_CFG_YES) || x->fixed_size != fixed)
		return;
	snprintf(subject, sizeof(subject), "%s: %s", c->path, x->cudnn_key);
	el_finding_add(f, rule, subject, NULL, (const char *const[]){
		"config", c->path, "key", x->cudnn_key, "transform", x->size_why ? x->size_why : "?", NULL });
}

static void cudnn_varying_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			      const el_config *c, const el_cfg_facts *x)
{
	(void)table;
	(void)v;
	cudnn_one(f, rule, c, x, EL_CFG_YES, EL_CFG_NO);
}

static void cudnn_fixed_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			    const el_config *c, const el_cfg_facts *x)
{
	(void)table;
	(void)v;
	cudnn_one(f, rule, c, x, EL_CFG_NO, EL_CFG_YES);
}

static void config_cudnn_benchmark_varying(envlock_findings *f, const cJSON *rule, const cJSON *table,
					   const el_view *v)
{
	if (gpus_of(v) > 0)
		each_config(f, rule, table, v, cudnn_varying_one);
}

static void config_cudnn_benchmark_fixed(envlock_findings *f, const cJSON *rule, const cJSON *table,
					 const el_view *v)
{
	if (gpus_of(v) > 0)
		each_config(f, rule, table, v, cudnn_fixed_one);
}

/* --- the files it names ------------------------------------------------- */

/* Each file of role that the saving machine did not have (URLs are fetched at start, not judged). */
static void missing_uses(envlock_findings *f, const cJSON *rule, const el_config *c, const char *role)
{
	char subject[512];

	for (size_t i = 0; i < c->nuses; i++) {
		const el_config_use *u = &c->uses[i];

		if (!u->role || strcmp(u->role, role) || u->url || u->exists != EL_NO)
			continue;
		snprintf(subject, sizeof(subject), "%s: %s", c->path, u->key);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"config", c->path, "key", u->key, "path", u->path,
			"resolved", u->resolved ? u->resolved : u->path, NULL });
	}
}

static void checkpoint_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			   const el_config *c, const el_cfg_facts *x)
{
	(void)table;
	(void)v;
	(void)x;
	missing_uses(f, rule, c, "checkpoint");
}

static void config_checkpoint_missing(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, checkpoint_one);
}

static void annotations_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
			    const el_config *c, const el_cfg_facts *x)
{
	(void)table;
	(void)v;
	(void)x;
	missing_uses(f, rule, c, "annotations");
}

static void config_annotations_missing(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, annotations_one);
}

/* mmengine: resume=True with no load_from resumes from <work_dir>/last_checkpoint, or starts afresh */
static void resume_one(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v,
		       const el_config *c, const el_cfg_facts *x)
{
	char subject[512];

	(void)table;
	(void)v;
	if (x->resume != EL_CFG_YES || x->load_from)
		return;
	for (size_t i = 0; i < c->nuses; i++) {
		const el_config_use *u = &c->uses[i];

		if (!u->role || strcmp(u->role, "work_dir") || u->last_checkpoint == EL_YES)
			continue;
		snprintf(subject, sizeof(subject), "%s: resume", c->path);
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"config", c->path, "work_dir", u->resolved ? u->resolved : u->path, NULL });
	}
}

static void config_resume_nothing(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	each_config(f, rule, table, v, resume_one);
}

/* A chain that stopped on something missing: mmengine stops on it too (no effective value to judge) */
static void config_chain_missing(envlock_findings *f, const cJSON *rule, const cJSON *table, const el_view *v)
{
	char subject[512];

	for (size_t i = 0; i < v->configs.nfiles; i++) {
		const el_config *c = &v->configs.files[i];
		const char *missing = c->effective_missing;
		bool package, have;
		char *fix;

		if (!c->path || !missing || !c->effective_error)
			continue;
		package = !strchr(missing, '/');
		snprintf(subject, sizeof(subject), "%s: %s", c->path, missing);
		if (package) {
			/* a scope the table knows installs as that codebase does; another package by its name */
			const cJSON *row = scope_row(table, missing);

			fix = scope_install(v, rule, row, row ? scope_distribution(v, row, &have) : NULL, missing);
		} else {
			fix = el_xasprintf("put %s back, or correct the _base_ that names it", missing);
		}
		el_finding_add(f, rule, subject, NULL, (const char *const[]){
			"config", c->path, "missing", missing, "error", c->effective_error,
			"what", package ? "the package" : "the file", "fix", fix, NULL });
		free(fix);
	}
}

const el_rule_kind el_config_kinds[] = {
	{ "config_chain_missing", config_chain_missing },
	{ "config_needs_module", config_needs_module },
	{ "config_workers_vs_cores", config_workers_vs_cores },
	{ "config_workers_oversubscribed", config_workers_oversubscribed },
	{ "config_workers_memory", config_workers_memory },
	{ "config_shm_small", config_shm_small },
	{ "config_workers_cgroup", config_workers_cgroup },
	{ "config_pin_memory", config_pin_memory },
	{ "config_batch_vs_gpu_memory", config_batch_vs_gpu_memory },
	{ "config_batch_activations", config_batch_activations },
	{ "config_amp_no_tensor_cores", config_amp_no_tensor_cores },
	{ "config_amp_off", config_amp_off },
	{ "config_lr_scaling", config_lr_scaling },
	{ "config_lr_per_gpu", config_lr_per_gpu },
	{ "config_num_classes", config_num_classes },
	{ "config_cudnn_benchmark_varying", config_cudnn_benchmark_varying },
	{ "config_cudnn_benchmark_fixed", config_cudnn_benchmark_fixed },
	{ "config_checkpoint_missing", config_checkpoint_missing },
	{ "config_annotations_missing", config_annotations_missing },
	{ "config_resume_nothing", config_resume_nothing },
	{ NULL, NULL },
};
