/* envlock show: the lock in a few aligned lines a person reads in five seconds. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "envlock/show.h"
#include "lock/model.h"
#include "util/error.h"

#define LABEL_WIDTH 12

static const char *str_or(const char *s, const char *fallback)
{
	return s ? s : fallback;
}

static bool is_present(const cJSON *o)
{
	const char *st = el_jget_str(o, "status");
	return o && (!st || strcmp(st, "present") == 0);
}

static void row(FILE *out, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void row(FILE *out, const char *label, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "%-*s", LABEL_WIDTH, label);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

static void show_system(FILE *out, const cJSON *doc)
{
	const cJSON *sys = el_jget(doc, "system"), *os = el_jget(sys, "os");
	const cJSON *glibc = el_jget(sys, "glibc"), *cont = el_jget(sys, "container");
	const cJSON *cpu = el_jget(sys, "cpu"), *mem = el_jget(sys, "memory");

	if (is_present(os))
		row(out, "OS", "%s (%s, kernel %s)",
		    str_or(el_jget_str(os, "pretty_name"), str_or(el_jget_str(os, "name"), "?")),
		    str_or(el_jget_str(sys, "arch"), "arch unknown"),
		    str_or(el_jget_str(el_jget(sys, "kernel"), "release"), "unknown"));
	else
		row(out, "OS", "unknown (%s)", str_or(el_jget_str(sys, "arch"), "arch unknown"));
	row(out, "glibc", "%s", is_present(glibc) ? el_jget_str(glibc, "version") : "not found");
	if (el_jget_bool(cont, "detected", false))
		row(out, "container", "%s (%s)", el_jget_str(cont, "kind"), el_jget_str(cont, "evidence"));
	if (cpu) {
		long long cores = el_jget_int(cpu, "physical_cores", 0), threads = el_jget_int(cpu, "logical_cores", 0);

		if (mem)
			row(out, "CPU", "%s, %lld cores / %lld threads, %.1f GiB",
			    str_or(el_jget_str(cpu, "model"), "unknown model"), cores, threads,
			    (double)el_jget_int(mem, "total_bytes", 0) / (1024.0 * 1024 * 1024));
		else
			row(out, "CPU", "%s, %lld cores / %lld threads",
			    str_or(el_jget_str(cpu, "model"), "unknown model"), cores, threads);
	}
}

static void show_gpu(FILE *out, const cJSON *doc)
{
	const cJSON *gpu = el_jget(doc, "gpu"), *drv = el_jget(gpu, "driver"), *dev;
	const cJSON *devices = el_jget(gpu, "devices");

	if (is_present(drv)) {
		const char *max = el_jget_str(drv, "max_cuda");

		if (max)
			row(out, "driver", "%s (%s), max CUDA %s", el_jget_str(drv, "version"),
			    el_jget_str(drv, "flavour"), max);
		else
			row(out, "driver", "%s (%s)", el_jget_str(drv, "version"), el_jget_str(drv, "flavour"));
	} else {
		row(out, "driver", "%s", strcmp(str_or(el_jget_str(drv, "status"), "absent"), "absent") == 0
				     ? "no NVIDIA driver" : "NVIDIA driver present, version unknown");
	}
	/* group identical models: "2 x Tesla V100-PCIE-16GB" */
	cJSON_ArrayForEach(dev, devices) {
		const char *name = str_or(el_jget_str(dev, "name"), "unknown GPU");
		const cJSON *prev;
		int count = 0, first = 1;

		for (prev = devices->child; prev != dev; prev = prev->next)
			if (strcmp(str_or(el_jget_str(prev, "name"), "unknown GPU"), name) == 0)
				first = 0;
		if (!first)
			continue;
		for (prev = dev; prev; prev = prev->next)
			if (strcmp(str_or(el_jget_str(prev, "name"), "unknown GPU"), name) == 0)
				count++;
		row(out, dev == devices->child ? "GPUs" : "", "%d x %s", count, name);
	}
}

static void show_cuda(FILE *out, const cJSON *doc)
{
	const cJSON *cuda = el_jget(doc, "cuda"), *tk, *cudnn = el_jget(doc, "cudnn");
	const char *def = el_jget_str(cuda, "default");
	int first = 1;

	/* the default toolkit first, then the others in the lock's order */
	for (int pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(tk, el_jget(cuda, "toolkits")) {
			const char *home = el_jget_str(tk, "home");
			const cJSON *nvcc = el_jget(tk, "nvcc");
			bool is_def = def && home && strcmp(def, home) == 0;

			if (!home || is_def != (pass == 0))
				continue;
			row(out, first ? "CUDA" : "", "%s at %s%s%s",
			    str_or(el_jget_str(tk, "version"), "unknown version"), home,
			    is_def ? " (default)" : "", nvcc ? "" : ", no nvcc");
			first = 0;
		}
	}
	if (first)
		row(out, "CUDA", "no toolkit");
	if (is_present(cudnn))
		row(out, "cuDNN", "%s (%s)", el_jget_str(cudnn, "version"), el_jget_str(cudnn, "header"));
	else
		row(out, "cuDNN", "%s", cJSON_GetArraySize(el_jget(cudnn, "libraries")) ? "libraries without a header"
										     : "not found");
}

static void show_compilers(FILE *out, const cJSON *doc)
{
	const cJSON *comp = el_jget(doc, "compilers"), *def = el_jget(comp, "default"), *g;
	char others[256] = "";
	size_t used = 0;

	cJSON_ArrayForEach(g, el_jget(comp, "gcc")) {
		const char *v = el_jget_str(g, "version");

		if (v && (!el_jget_str(def, "version") || strcmp(v, el_jget_str(def, "version")) != 0) &&
		    used + strlen(v) + 3 < sizeof(others))
			used += (size_t)snprintf(others + used, sizeof(others) - used, "%s%s", used ? ", " : "", v);
	}
	if (el_jget_str(def, "version"))
		row(out, "gcc", "%s (default)%s%s", el_jget_str(def, "version"), used ? "; also " : "", others);
	else if (used)
		row(out, "gcc", "%s (no default gcc)", others);
	else
		row(out, "gcc", "not found");
}

static void show_python(FILE *out, const cJSON *doc)
{
	const cJSON *py = el_jget(doc, "python"), *conda = el_jget(doc, "conda"), *pip = el_jget(doc, "pip");
	const cJSON *d;
	int editable = 0, both = 0;

	if (is_present(py))
		row(out, "Python", "%s (%s, %s)", str_or(el_jget_str(py, "version"), "unknown version"),
		    str_or(el_jget_str(py, "kind"), "?"), str_or(el_jget_str(py, "prefix"), "?"));
	else
		row(out, "Python", "not found");
	if (is_present(conda)) {
		long long n = el_jget_int(conda, "package_count", cJSON_GetArraySize(el_jget(conda, "packages")));

		row(out, "conda env", "%s: %lld package%s", str_or(el_jget_str(conda, "name"), "?"), n,
		    n == 1 ? "" : "s");
	}
	if (is_present(pip)) {
		cJSON_ArrayForEach(d, el_jget(pip, "distributions")) {
			editable += el_jget_bool(d, "editable", false);
			both += el_jget_bool(d, "also_conda", false);
		}
		int n = cJSON_GetArraySize(el_jget(pip, "distributions"));

		row(out, "pip", "%d distribution%s (%d editable, %d also in conda)", n, n == 1 ? "" : "s",
		    editable, both);
	}
}

static void show_frameworks(FILE *out, const cJSON *doc)
{
	static const char *const order[] = { "torch", "torchvision", "mmcv", "mmengine", "mmdet",
		"mmpose", "mmpretrain", "mmseg", "mmdet3d", "mmaction", "mmocr", "mmcls", NULL };
	const cJSON *fw = el_jget(doc, "frameworks");

	for (const char *const *n = order; *n; n++) {
		const cJSON *f = el_jget(fw, *n);
		const char *v = el_jget_str(f, "version");

		if (!is_present(f) || !v)
			continue;
		if (strcmp(*n, "torch") == 0) {
			const char *cu = el_jget_str(f, "cuda");

			row(out, "torch", "%s (%s)", v, cu ? "CUDA build" : "CPU-only build");
			if (cu)
				fprintf(out, "%-*s  built for CUDA %s\n", LABEL_WIDTH, "", cu);
		} else if (strcmp(*n, "mmcv") == 0) {
			row(out, str_or(el_jget_str(f, "package"), "mmcv"), "%s (%s)", v,
			    el_jget_bool(f, "ops", false) ? "ops" : "no compiled ops");
		} else {
			row(out, *n, "%s", v);
		}
	}
}

/* The rule results recorded at save time, most severe first, as saved. */
static void show_checks(FILE *out, const cJSON *doc)
{
	const cJSON *checks = el_jget(doc, "checks"), *x;
	long long breaking = el_jget_int(checks, "breaking", 0), risky = el_jget_int(checks, "risky", 0);

	if (!checks)
		return;
	if (!breaking && !risky) {
		row(out, "checks", "every compatibility rule passed at save time");
		return;
	}
	row(out, "checks", "%lld breaking, %lld risky at save time (envlock check for fixes)", breaking, risky);
	cJSON_ArrayForEach(x, el_jget(checks, "findings")) {
		const char *sev = el_jget_str(x, "severity");

		if (sev && strcmp(sev, "info") != 0)
			fprintf(out, "  - %s: %s\n", sev, str_or(el_jget_str(x, "subject"), "?"));
	}
}

int envlock_show_print(const envlock_lock *lock, envlock_ctx *ctx, FILE *out)
{
	const cJSON *doc = lock->doc, *w;
	const char *stored = el_jget_str(doc, "id");
	int nw = cJSON_GetArraySize(el_jget(doc, "warnings"));

	const char *id = envlock_lock_id(lock);

	fprintf(out, "envlock %s\n", id);
	if (stored && strcmp(stored, id) != 0)
		fprintf(out, "%-*s!! the file says %s: it was edited after it was saved\n", LABEL_WIDTH, "", stored);
	row(out, "saved", "%s on %s", str_or(el_jget_str(doc, "created"), "?"),
	    str_or(el_jget_str(el_jget(doc, "host"), "hostname"), "unknown host"));
	show_system(out, doc);
	show_gpu(out, doc);
	show_cuda(out, doc);
	show_compilers(out, doc);
	show_python(out, doc);
	show_frameworks(out, doc);
	show_checks(out, doc);
	if (nw) {
		row(out, "warnings", "%d", nw);
		cJSON_ArrayForEach(w, el_jget(doc, "warnings"))
			if (cJSON_IsString(w))
				fprintf(out, "  - %s\n", w->valuestring);
	}
	if (fflush(out) != 0 || ferror(out))
		return el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	return 0;
}
