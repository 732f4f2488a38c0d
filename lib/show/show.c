/* envlock show: the lock in a few aligned lines a person reads in five seconds. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/show.h"
#include "lock/model.h"
#include "lock/view.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

#define LABEL_WIDTH 12
#define RING 8 /* escaped strings alive at once: more than one row uses */

/*
 * Where the summary goes. Every string from the lock passes through T()
 * before it is printed: a lock is untrusted, and its text must not drive
 * the terminal.
 */
typedef struct {
	FILE *out;
	el_buf ring[RING];
	unsigned next;
	bool partial; /* an imported conda or pip list: only its sections */
} shower;

/*
 * s as the terminal should get it: s itself when it is safe, else its
 * escaped form (el_term_text) in the next ring buffer, valid until RING
 * more calls; "?" for a missing string.
 */
static const char *T(shower *sh, const char *s)
{
	el_buf *b;

	if (!s)
		return "?";
	if (el_term_safe(s))
		return s;
	b = &sh->ring[sh->next++ % RING];
	el_buf_reset(b);
	el_term_text(b, s);
	return el_buf_cstr(b);
}

static const char *str_or(const char *s, const char *fallback)
{
	return s ? s : fallback;
}


static void row(shower *sh, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void row(shower *sh, const char *label, const char *fmt, ...)
{
	va_list ap;

	fprintf(sh->out, "%-*s", LABEL_WIDTH, label);
	va_start(ap, fmt);
	vfprintf(sh->out, fmt, ap);
	va_end(ap);
	fputc('\n', sh->out);
}

static void show_system(shower *sh, const cJSON *doc)
{
	const cJSON *sys = el_jget(doc, "system"), *os = el_jget(sys, "os");
	const cJSON *glibc = el_jget(sys, "glibc"), *cont = el_jget(sys, "container");
	const cJSON *cpu = el_jget(sys, "cpu"), *mem = el_jget(sys, "memory");

	if (el_present(os))
		row(sh, "OS", "%s (%s, kernel %s)",
		    T(sh, str_or(el_jget_str(os, "pretty_name"), str_or(el_jget_str(os, "name"), "?"))),
		    T(sh, str_or(el_jget_str(sys, "arch"), "arch unknown")),
		    T(sh, str_or(el_jget_str(el_jget(sys, "kernel"), "release"), "unknown")));
	else
		row(sh, "OS", "unknown (%s)", T(sh, str_or(el_jget_str(sys, "arch"), "arch unknown")));
	row(sh, "glibc", "%s", el_present(glibc) ? T(sh, el_jget_str(glibc, "version")) : "not found");
	if (el_jget_bool(cont, "detected", false))
		row(sh, "container", "%s (%s)", T(sh, el_jget_str(cont, "kind")), T(sh, el_jget_str(cont, "evidence")));
	if (cpu) {
		long long cores = el_jget_int(cpu, "physical_cores", 0), threads = el_jget_int(cpu, "logical_cores", 0);
		const char *model = T(sh, str_or(el_jget_str(cpu, "model"), "unknown model"));

		if (mem)
			row(sh, "CPU", "%s, %lld cores / %lld threads, %.1f GiB", model, cores, threads,
			    (double)el_jget_int(mem, "total_bytes", 0) / (1024.0 * 1024 * 1024));
		else
			row(sh, "CPU", "%s, %lld cores / %lld threads", model, cores, threads);
	}
}

/* A device's name and its place in the lock, for grouping by sorting. */
typedef struct {
	const char *name;
	size_t index;
} gpu_ref;

/* By name, then by place in the lock: a group's first member comes first. */
static int gpu_ref_cmp(const void *a, const void *b)
{
	const gpu_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* A group of identical models: where it first appears, how many. */
typedef struct {
	size_t first;
	size_t count;
	const char *name;
} gpu_group;

static int gpu_group_cmp(const void *a, const void *b)
{
	const gpu_group *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/*
 * Identical models as one line each, "2 x Tesla V100-PCIE-16GB", in the
 * order they first appear. Sorted, so a lock with a million devices
 * costs n log n, not n squared.
 */
static void show_devices(shower *sh, const cJSON *devices)
{
	size_t n = (size_t)cJSON_GetArraySize(devices), i = 0, ng = 0;
	gpu_ref *refs;
	gpu_group *groups;
	const cJSON *dev;

	if (n == 0)
		return;
	refs = el_xcalloc(n, sizeof(*refs));
	groups = el_xcalloc(n, sizeof(*groups));
	cJSON_ArrayForEach(dev, devices) {
		refs[i].name = str_or(el_jget_str(dev, "name"), "unknown GPU");
		refs[i].index = i;
		i++;
	}
	qsort(refs, n, sizeof(*refs), gpu_ref_cmp);
	for (i = 0; i < n; i++) {
		if (i == 0 || strcmp(refs[i].name, refs[i - 1].name) != 0)
			groups[ng++] = (gpu_group){ refs[i].index, 0, refs[i].name };
		groups[ng - 1].count++;
	}
	qsort(groups, ng, sizeof(*groups), gpu_group_cmp);
	for (i = 0; i < ng; i++)
		row(sh, i == 0 ? "GPUs" : "", "%zu x %s", groups[i].count, T(sh, groups[i].name));
	free(groups);
	free(refs);
}

static void show_gpu(shower *sh, const cJSON *doc)
{
	const cJSON *gpu = el_jget(doc, "gpu"), *drv = el_jget(gpu, "driver");

	if (el_present(drv)) {
		const char *max = el_jget_str(drv, "max_cuda");

		if (max)
			row(sh, "driver", "%s (%s), max CUDA %s", T(sh, el_jget_str(drv, "version")),
			    T(sh, el_jget_str(drv, "flavour")), T(sh, max));
		else
			row(sh, "driver", "%s (%s)", T(sh, el_jget_str(drv, "version")), T(sh, el_jget_str(drv, "flavour")));
	} else {
		row(sh, "driver", "%s", strcmp(str_or(el_jget_str(drv, "status"), "absent"), "absent") == 0
				    ? "no NVIDIA driver" : "NVIDIA driver present, version unknown");
	}
	show_devices(sh, el_jget(gpu, "devices"));
}

static void show_cuda(shower *sh, const cJSON *doc)
{
	const cJSON *cuda = el_jget(doc, "cuda"), *tk, *cudnn = el_jget(doc, "cudnn");
	const cJSON *default_tk = el_default_toolkit(doc);
	int first = 1;

	/* the default toolkit first, then the others in the lock's order */
	for (int pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(tk, el_jget(cuda, "toolkits")) {
			const char *home = el_jget_str(tk, "home");
			const cJSON *nvcc = el_jget(tk, "nvcc");
			bool is_def = tk == default_tk;

			if (!home || is_def != (pass == 0))
				continue;
			row(sh, first ? "CUDA" : "", "%s at %s%s%s",
			    T(sh, str_or(el_jget_str(tk, "version"), "unknown version")), T(sh, home),
			    is_def ? " (default)" : "", nvcc ? "" : ", no nvcc");
			first = 0;
		}
	}
	if (first)
		row(sh, "CUDA", "no toolkit");
	if (el_present(cudnn))
		row(sh, "cuDNN", "%s (%s)", T(sh, el_jget_str(cudnn, "version")), T(sh, el_jget_str(cudnn, "header")));
	else
		row(sh, "cuDNN", "%s", cJSON_GetArraySize(el_jget(cudnn, "libraries")) ? "libraries without a header"
										    : "not found");
}

static void show_compilers(shower *sh, const cJSON *doc)
{
	const cJSON *comp = el_jget(doc, "compilers"), *def = el_jget(comp, "default"), *g;
	const char *dv = el_jget_str(def, "version");
	char others[256] = "";
	size_t used = 0;

	cJSON_ArrayForEach(g, el_jget(comp, "gcc")) {
		const char *v = el_jget_str(g, "version");

		if (!v || (dv && strcmp(v, dv) == 0))
			continue;
		v = T(sh, v);
		if (used + strlen(v) + 3 < sizeof(others))
			used += (size_t)snprintf(others + used, sizeof(others) - used, "%s%s", used ? ", " : "", v);
	}
	if (dv)
		row(sh, "gcc", "%s (default)%s%s", T(sh, dv), used ? "; also " : "", others);
	else if (used)
		row(sh, "gcc", "%s (no default gcc)", others);
	else
		row(sh, "gcc", "not found");
}

static void show_python(shower *sh, const cJSON *doc)
{
	const cJSON *py = el_jget(doc, "python"), *conda = el_jget(doc, "conda"), *pip = el_jget(doc, "pip");
	const cJSON *d;
	int editable = 0, both = 0;

	if (el_present(py))
		row(sh, "Python", "%s (%s, %s)", T(sh, str_or(el_jget_str(py, "version"), "unknown version")),
		    T(sh, el_jget_str(py, "kind")), T(sh, el_jget_str(py, "prefix")));
	else if (!sh->partial)
		row(sh, "Python", "not found");
	if (el_present(conda)) {
		long long n = el_jget_int(conda, "package_count", cJSON_GetArraySize(el_jget(conda, "packages")));

		row(sh, "conda env", "%s: %lld package%s", T(sh, str_or(el_jget_str(conda, "name"), "(unnamed)")),
		    n, n == 1 ? "" : "s");
	}
	if (el_present(pip)) {
		cJSON_ArrayForEach(d, el_jget(pip, "distributions")) {
			editable += el_jget_bool(d, "editable", false);
			both += el_jget_bool(d, "also_conda", false);
		}
		int n = cJSON_GetArraySize(el_jget(pip, "distributions"));

		row(sh, "pip", "%d distribution%s (%d editable, %d also in conda)", n, n == 1 ? "" : "s",
		    editable, both);
	}
}

static void show_frameworks(shower *sh, const cJSON *doc)
{
	const cJSON *fw = el_jget(doc, "frameworks");

	for (const el_framework_info *n = el_frameworks; n->key; n++) {
		const cJSON *f = el_jget(fw, n->key);
		const char *v = el_jget_str(f, "version");

		if (!el_present(f) || !v)
			continue;
		v = T(sh, v);
		if (strcmp(n->key, "torch") == 0) {
			const char *cu = el_jget_str(f, "cuda");

			row(sh, "torch", "%s (%s)", v, cu ? "CUDA build" : "CPU-only build");
			if (cu)
				fprintf(sh->out, "%-*s  built for CUDA %s\n", LABEL_WIDTH, "", T(sh, cu));
		} else if (strcmp(n->key, "mmcv") == 0) {
			row(sh, T(sh, str_or(el_jget_str(f, "package"), "mmcv")), "%s (%s)", v,
			    el_jget_bool(f, "ops", false) ? "ops" : "no compiled ops");
		} else {
			row(sh, n->key, "%s", v);
		}
	}
}

/* The rule results recorded at save time, most severe first, as saved. */
static void show_checks(shower *sh, const cJSON *doc)
{
	const cJSON *checks = el_jget(doc, "checks"), *x;
	long long breaking = el_jget_int(checks, "breaking", 0), risky = el_jget_int(checks, "risky", 0);

	if (!checks)
		return;
	if (!breaking && !risky) {
		row(sh, "checks", "every compatibility rule passed at save time");
		return;
	}
	row(sh, "checks", "%lld breaking, %lld risky at save time (envlock check for fixes)", breaking, risky);
	cJSON_ArrayForEach(x, el_jget(checks, "findings")) {
		const char *sev = el_jget_str(x, "severity");

		if (sev && strcmp(sev, "info") != 0)
			fprintf(sh->out, "  - %s: %s\n", T(sh, sev), T(sh, el_jget_str(x, "subject")));
	}
}

/* What `save --verify` found: the result and each stage's verdict. */
static void show_verify(shower *sh, const cJSON *doc)
{
	const cJSON *v = el_jget(doc, "verify"), *st;

	if (!v)
		return;
	row(sh, "verify", "%s at save time (envlock verify for the figures)",
	    T(sh, str_or(el_jget_str(v, "result"), "unknown")));
	cJSON_ArrayForEach(st, el_jget(v, "stages"))
		fprintf(sh->out, "  - %s: %s\n", T(sh, str_or(el_jget_str(st, "stage"), "?")),
			T(sh, str_or(el_jget_str(st, "status"), "?")));
}

int envlock_show_print(const envlock_lock *lock, envlock_ctx *ctx, FILE *out)
{
	const cJSON *doc = lock->doc, *w;
	const char *stored = el_jget_str(doc, "id");
	int nw = cJSON_GetArraySize(el_jget(doc, "warnings"));
	const char *id = envlock_lock_id(lock);
	shower sh = { .out = out };
	int rc = 0;

	for (int i = 0; i < RING; i++)
		el_buf_init(&sh.ring[i], (size_t)1 << 30);
	fprintf(out, "envlock %s\n", id);
	if (stored && strcmp(stored, id) != 0)
		fprintf(out, "%-*s!! the file says %s: it was edited after it was saved\n", LABEL_WIDTH, "",
			T(&sh, stored));
	sh.partial = el_jget(doc, "partial") != NULL;
	if (sh.partial) {
		/* an imported conda or pip list: only what it holds, nothing said of the rest */
		row(&sh, "partial", "made by envlock import from %s output; it records nothing else of the machine",
		    T(&sh, str_or(el_jget_str(el_jget(doc, "partial"), "from"), "unknown")));
	} else {
		row(&sh, "saved", "%s on %s", T(&sh, el_jget_str(doc, "created")),
		    T(&sh, str_or(el_jget_str(el_jget(doc, "host"), "hostname"), "unknown host")));
		show_system(&sh, doc);
		show_gpu(&sh, doc);
		show_cuda(&sh, doc);
		show_compilers(&sh, doc);
	}
	show_python(&sh, doc);
	show_frameworks(&sh, doc);
	show_checks(&sh, doc);
	show_verify(&sh, doc);
	if (nw) {
		row(&sh, "warnings", "%d", nw);
		cJSON_ArrayForEach(w, el_jget(doc, "warnings"))
			if (cJSON_IsString(w))
				fprintf(out, "  - %s\n", T(&sh, w->valuestring));
	}
	for (int i = 0; i < RING; i++)
		el_buf_release(&sh.ring[i]);
	if (fflush(out) != 0 || ferror(out))
		rc = el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	return rc;
}
