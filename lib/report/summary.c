/*
 * The summary every report format renders: the citation line and the
 * appendix table's rows, read once from the lock. The lock is untrusted:
 * every member may be missing or of another type, and then reads as
 * absent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/model.h"
#include "lock/view.h"
#include "report/report.h"
#include "util/text.h"
#include "util/xalloc.h"

const char *const el_report_groups[EL_RG_COUNT] = {
	"System", "GPU", "Toolchain", "Python", "Frameworks", "Code", "Configs", "Checkpoints", "Lockfile"
};


static const char *or(const char *s, const char *fallback)
{
	return s ? s : fallback;
}

/* A growable "a, b, c" list of parts; as large as the lock's strings need. */
typedef struct {
	el_buf b;
} parts;

#define PARTS_INIT { EL_BUF_INIT(EL_REPORT_MAX_BYTES) }

static void part(parts *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void part(parts *p, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	s = el_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (p->b.len)
		el_buf_puts(&p->b, ", ");
	el_buf_puts(&p->b, s);
	free(s);
}

/* A JSON number as an integer, clamped: a hostile lock's 1e300 must not overflow the conversion. */
static long long int_of(const cJSON *v, long long fallback)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != v->valuedouble)
		return fallback;
	if (v->valuedouble < -1e18)
		return (long long)-1e18;
	if (v->valuedouble > 1e18)
		return (long long)1e18;
	return (long long)v->valuedouble;
}

static char *parts_take(parts *p)
{
	return el_buf_detach(&p->b);
}

static void add_row(el_report *r, int group, const char *component, const char *version, char *details)
{
	el_report_row *row;

	if (r->nrows == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 32;
		r->rows = el_xrealloc(r->rows, r->cap * sizeof(*r->rows));
	}
	row = &r->rows[r->nrows++];
	row->group = group;
	row->component = el_xstrdup(component);
	row->version = el_xstrdup(version);
	row->details = details ? details : el_xstrdup("");
	row->wide = false;
}

/* "sha256:" and the first EL_REPORT_SHORT_HEX hex digits of a digest given with or without the prefix. */
static char *short_digest(const char *sha)
{
	if (!sha)
		return el_xstrdup("no digest");
	if (el_starts_with(sha, "sha256:"))
		sha += 7;
	return el_xasprintf("sha256:%.*s", EL_REPORT_SHORT_HEX, sha);
}

static char *human_size(long long bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 0)
		bytes = 0, v = 0;
	if (bytes < 1024)
		return el_xasprintf("%lld byte%s", bytes, bytes == 1 ? "" : "s");
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	return el_xasprintf("%.1f %s", v, unit[u]);
}

static void system_rows(el_report *r)
{
	const cJSON *sys = el_jget(r->doc, "system"), *os = el_jget(sys, "os"), *glibc = el_jget(sys, "glibc");
	const cJSON *cont = el_jget(sys, "container");
	parts p = PARTS_INIT;

	if (el_jget_str(sys, "arch"))
		part(&p, "%s", el_jget_str(sys, "arch"));
	if (el_jget_str(el_jget(sys, "kernel"), "release"))
		part(&p, "kernel %s", el_jget_str(el_jget(sys, "kernel"), "release"));
	add_row(r, EL_RG_SYSTEM, "OS",
		el_present(os) ? or(el_jget_str(os, "pretty_name"), or(el_jget_str(os, "name"), "unknown")) : "unknown",
		parts_take(&p));
	add_row(r, EL_RG_SYSTEM, "glibc",
		el_present(glibc) ? or(el_jget_str(glibc, "version"), "unknown") : "not found", NULL);
	if (el_jget_bool(cont, "detected", false))
		add_row(r, EL_RG_SYSTEM, "container", or(el_jget_str(cont, "kind"), "unknown"),
			el_xstrdup(or(el_jget_str(cont, "evidence"), "")));
}

static const char *device_name(const cJSON *dev)
{
	return or(el_jget_str(dev, "name"), "unknown GPU");
}

/* GPUs grouped by model, in the order each model first appears. */
typedef struct {
	const char *name;
	const cJSON *dev; /* the model's first device */
	size_t first, count;
} gpu_model;

static int by_name_then_index(const void *a, const void *b)
{
	const gpu_model *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->first > y->first) - (x->first < y->first);
}

static int by_index(const void *a, const void *b)
{
	const gpu_model *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

static void gpu_rows(el_report *r)
{
	const cJSON *gpu = el_jget(r->doc, "gpu"), *drv = el_jget(gpu, "driver"), *devices = el_jget(gpu, "devices");
	size_t n = cJSON_IsArray(devices) ? (size_t)cJSON_GetArraySize(devices) : 0, nmodels = 0;
	gpu_model *m = el_xcalloc(n ? n : 1, sizeof(*m));
	const cJSON *dev;

	/* sorting keeps a lock with a million devices from taking quadratic time */
	if (n) {
		size_t i = 0;

		cJSON_ArrayForEach(dev, devices) {
			m[i].name = device_name(dev);
			m[i].dev = dev;
			m[i].first = i;
			i++;
		}
		qsort(m, n, sizeof(*m), by_name_then_index);
		for (i = 0; i < n; i++) {
			if (nmodels && strcmp(m[nmodels - 1].name, m[i].name) == 0) {
				m[nmodels - 1].count++;
				continue;
			}
			m[nmodels] = m[i];
			m[nmodels++].count = 1;
		}
		qsort(m, nmodels, sizeof(*m), by_index);
	}
	for (size_t i = 0; i < nmodels; i++) {
		const char *cc = el_jget_str(m[i].dev, "compute_capability");
		const cJSON *mem = el_jget(m[i].dev, "memory_mib");
		parts p = PARTS_INIT;
		char *label;

		if (cc)
			part(&p, "compute capability %s", cc);
		if (cJSON_IsNumber(mem))
			part(&p, "%lld MiB", int_of(mem, 0));
		else if (cJSON_IsString(mem))
			part(&p, "%s MiB", mem->valuestring);
		label = el_xasprintf("%zu \xC3\x97 %s", m[i].count, m[i].name);
		add_row(r, EL_RG_GPU, "GPU", label, parts_take(&p));
		free(label);
	}
	free(m);
	if (!nmodels)
		add_row(r, EL_RG_GPU, "GPU", "none found", NULL);
	if (el_present(drv) && el_jget_str(drv, "version")) {
		parts p = PARTS_INIT;

		if (el_jget_str(drv, "flavour"))
			part(&p, "%s kernel module", el_jget_str(drv, "flavour"));
		if (el_jget_str(drv, "max_cuda"))
			part(&p, "supports CUDA up to %s", el_jget_str(drv, "max_cuda"));
		add_row(r, EL_RG_GPU, "NVIDIA driver", el_jget_str(drv, "version"), parts_take(&p));
	} else {
		add_row(r, EL_RG_GPU, "NVIDIA driver",
			strcmp(or(el_jget_str(drv, "status"), "absent"), "absent") == 0 ? "not found" : "version unknown",
			NULL);
	}
}

/* The default CUDA toolkit's version, or NULL. */
static const char *default_cuda(const cJSON *doc)
{
	return el_jtoolkit_version(el_default_toolkit(doc));
}

static void toolchain_rows(el_report *r)
{
	const cJSON *cuda = el_jget(r->doc, "cuda"), *cudnn = el_jget(r->doc, "cudnn"), *tk, *g;
	const cJSON *comp = el_jget(r->doc, "compilers"), *def = el_jget(comp, "default");
	const cJSON *default_tk = el_default_toolkit(r->doc);
	const char *gcc = el_jget_str(def, "version");
	parts also = PARTS_INIT;
	int toolkits = 0;

	/* the default toolkit first, then the others in the lock's order */
	for (int pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(tk, el_jget(cuda, "toolkits")) {
			const char *home = el_jget_str(tk, "home");
			bool is_def = tk == default_tk;
			parts p = PARTS_INIT;

			if (!home || is_def != (pass == 0))
				continue;
			part(&p, "%s%s", home, is_def ? " (default)" : "");
			if (!el_jget(tk, "nvcc"))
				part(&p, "no nvcc");
			add_row(r, EL_RG_TOOLCHAIN, "CUDA toolkit", or(el_jget_str(tk, "version"), "version unknown"),
				parts_take(&p));
			toolkits++;
		}
	}
	if (!toolkits)
		add_row(r, EL_RG_TOOLCHAIN, "CUDA toolkit", "not found", NULL);
	if (el_present(cudnn) && el_jget_str(cudnn, "version"))
		add_row(r, EL_RG_TOOLCHAIN, "cuDNN", el_jget_str(cudnn, "version"),
			el_xstrdup(or(el_jget_str(cudnn, "header"), "")));
	else
		add_row(r, EL_RG_TOOLCHAIN, "cuDNN",
			cJSON_GetArraySize(el_jget(cudnn, "libraries")) ? "version unknown" : "not found",
			cJSON_GetArraySize(el_jget(cudnn, "libraries")) ? el_xstrdup("libraries without a header") : NULL);
	cJSON_ArrayForEach(g, el_jget(comp, "gcc")) {
		const char *v = el_jget_str(g, "version");

		if (v && (!gcc || strcmp(v, gcc) != 0))
			part(&also, "%s", v);
	}
	if (gcc) {
		parts p = PARTS_INIT;

		part(&p, "default compiler%s%s", el_jget_str(def, "path") ? " " : "", or(el_jget_str(def, "path"), ""));
		if (also.b.len)
			part(&p, "also %s", el_buf_cstr(&also.b));
		add_row(r, EL_RG_TOOLCHAIN, "gcc", gcc, parts_take(&p));
	} else {
		add_row(r, EL_RG_TOOLCHAIN, "gcc", also.b.len ? "no default" : "not found",
			also.b.len ? el_xasprintf("installed: %s", el_buf_cstr(&also.b)) : NULL);
	}
	el_buf_release(&also.b);
}

static void python_rows(el_report *r)
{
	const cJSON *py = el_jget(r->doc, "python"), *conda = el_jget(r->doc, "conda"), *pip = el_jget(r->doc, "pip");
	const cJSON *d;

	if (el_present(py)) {
		parts p = PARTS_INIT;

		if (el_jget_str(py, "kind"))
			part(&p, "%s", el_jget_str(py, "kind"));
		if (el_jget_str(py, "prefix"))
			part(&p, "%s", el_jget_str(py, "prefix"));
		add_row(r, EL_RG_PYTHON, "Python", or(el_jget_str(py, "version"), "version unknown"), parts_take(&p));
	} else {
		add_row(r, EL_RG_PYTHON, "Python", "not found", NULL);
	}
	if (el_present(conda)) {
		long long n = int_of(el_jget(conda, "package_count"), cJSON_GetArraySize(el_jget(conda, "packages")));
		parts p = PARTS_INIT;

		part(&p, "%lld package%s", n, n == 1 ? "" : "s");
		if (el_jget_str(conda, "prefix"))
			part(&p, "%s", el_jget_str(conda, "prefix"));
		add_row(r, EL_RG_PYTHON, "conda env", or(el_jget_str(conda, "name"), "unnamed"), parts_take(&p));
	}
	if (el_present(pip)) {
		int n = cJSON_GetArraySize(el_jget(pip, "distributions")), editable = 0;
		char *count = el_xasprintf("%d distribution%s", n, n == 1 ? "" : "s");

		cJSON_ArrayForEach(d, el_jget(pip, "distributions"))
			editable += el_jget_bool(d, "editable", false);
		add_row(r, EL_RG_PYTHON, "pip", count, editable ? el_xasprintf("%d editable", editable) : NULL);
		free(count);
	}
}

/* The pip distribution of a framework (PEP 503 names compared), or NULL. */
static const cJSON *pip_dist(const cJSON *doc, const char *name)
{
	const cJSON *d;
	char *want = el_pep503_name(name);

	cJSON_ArrayForEach(d, el_jget(el_jget(doc, "pip"), "distributions")) {
		const char *n = el_jget_str(d, "name");
		char *norm;
		bool same;

		if (!n)
			continue;
		norm = el_pep503_name(n);
		same = strcmp(norm, want) == 0;
		free(norm);
		if (same) {
			free(want);
			return d;
		}
	}
	free(want);
	return NULL;
}

/* The conda package of a framework (torch is "pytorch" in conda), or NULL. */
static const cJSON *conda_pkg(const cJSON *doc, const char *name)
{
	const cJSON *p;

	if (strcmp(name, "torch") == 0)
		name = "pytorch";
	cJSON_ArrayForEach(p, el_jget(el_jget(doc, "conda"), "packages")) {
		const char *n = el_jget_str(p, "name");

		if (n && strcmp(n, name) == 0)
			return p;
	}
	return NULL;
}

/* A conda channel as conda names it: ".../conda-forge/linux-64" is "conda-forge". */
static char *channel_name(const char *channel)
{
	const char *end = channel + strlen(channel), *start;

	while (end > channel && end[-1] == '/')
		end--;
	start = end;
	while (start > channel && start[-1] != '/')
		start--;
	/* the last segment is the platform subdir when there is one before it */
	if (start > channel && (el_starts_with(start, "linux-") || el_starts_with(start, "osx-") ||
				el_starts_with(start, "win-") || el_starts_with(start, "noarch"))) {
		end = start - 1;
		start = end;
		while (start > channel && start[-1] != '/')
			start--;
	}
	return el_xstrndup(start, (size_t)(end - start));
}

/* How a framework was installed: the conda build, the wheel's tag, an editable tree, a VCS commit. */
static void install_parts(parts *p, const cJSON *doc, const char *name)
{
	const cJSON *d = pip_dist(doc, name), *c = conda_pkg(doc, name);
	const cJSON *url = el_jget(d, "direct_url"), *tags = el_jget(d, "tags");
	const char *installer = el_jget_str(d, "installer");

	if (c && (!d || (installer && strcmp(installer, "conda") == 0) || el_jget_bool(d, "also_conda", false))) {
		char *ch = channel_name(or(el_jget_str(c, "channel"), ""));

		part(p, "conda %s%s%s%s", or(el_jget_str(c, "build"), "build unknown"), *ch ? " (" : "", ch,
		     *ch ? ")" : "");
		free(ch);
		return;
	}
	if (!d)
		return;
	if (el_jget_bool(d, "editable", false)) {
		part(p, "editable install of %s", or(el_jget_str(d, "source"), or(el_jget_str(url, "url"), "a source tree")));
	} else if (el_jget_str(url, "vcs")) {
		const char *commit = el_jget_str(url, "commit_id");

		part(p, "%s %.*s from %s", el_jget_str(url, "vcs"), EL_REPORT_SHORT_HEX, or(commit, "(no commit)"),
		     or(el_jget_str(url, "url"), "?"));
	} else if (el_jget_str(url, "url") && !(installer && strcmp(installer, "conda") == 0)) {
		part(p, "from %s", el_jget_str(url, "url"));
	} else if (cJSON_IsString(cJSON_GetArrayItem(tags, 0))) {
		part(p, "%s wheel %s", or(installer, "pip"), cJSON_GetArrayItem(tags, 0)->valuestring);
	} else if (installer) {
		part(p, "installed by %s", installer);
	}
}

static void framework_rows(el_report *r)
{
	const cJSON *fw = el_jget(r->doc, "frameworks");

	for (const el_framework_info *n = el_frameworks; n->key; n++) {
		const cJSON *f = el_jget(fw, n->key);
		const char *v = el_jget_str(f, "version"), *label = n->key;
		parts p = PARTS_INIT;

		if (!el_present(f) || !v)
			continue;
		if (strcmp(n->key, "torch") == 0) {
			const char *cu = el_jget_str(f, "cuda"), *hip = el_jget_str(f, "hip"), *git = el_jget_str(f, "git_version");

			if (cu)
				part(&p, "CUDA %s build", cu);
			else if (hip)
				part(&p, "ROCm %s build", hip);
			else
				part(&p, "CPU-only build");
			if (git)
				part(&p, "git %.*s", EL_REPORT_SHORT_HEX, git);
		} else if (strcmp(n->key, "mmcv") == 0) {
			const char *cudart = el_jget_str(f, "ops_cudart");

			label = or(el_jget_str(f, "package"), "mmcv");
			if (el_jget_bool(f, "ops", false))
				part(&p, "compiled ops%s%s", cudart ? " linked to " : "", or(cudart, ""));
			else
				part(&p, "no compiled ops");
		} else if (el_jget_str(f, "cuda")) {
			part(&p, "CUDA %s build", el_jget_str(f, "cuda"));
		}
		install_parts(&p, r->doc, label);
		add_row(r, EL_RG_FRAMEWORKS, label, v, parts_take(&p));
	}
}

static void count_part(parts *p, const cJSON *changes, const char *key)
{
	int n = cJSON_GetArraySize(el_jget(changes, key));

	if (n)
		part(p, "%d %s", n, key);
}

static void code_rows(el_report *r)
{
	const cJSON *repos = el_jget(r->doc, "repos"), *repo;

	if (!el_present(repos))
		return;
	cJSON_ArrayForEach(repo, el_jget(repos, "repositories")) {
		const cJSON *head = el_jget(repo, "head"), *changes = el_jget(repo, "changes"), *patch = el_jget(repo, "patch");
		const char *commit = el_jget_str(head, "commit"), *status = or(el_jget_str(repo, "status"), "unknown");
		bool dirty = el_jget_bool(repo, "dirty", false);
		parts p = PARTS_INIT;
		char *version;

		if (!cJSON_IsObject(repo))
			continue;
		part(&p, "%s", or(el_jget_str(repo, "path"), "?"));
		if (strcmp(status, "present") != 0) {
			add_row(r, EL_RG_CODE, "code", strcmp(status, "not_a_repository") == 0 ? "not a repository" : status,
				parts_take(&p));
			continue;
		}
		if (el_jget_str(head, "branch"))
			part(&p, "branch %s", el_jget_str(head, "branch"));
		else if (el_jget_bool(head, "detached", false))
			part(&p, "detached HEAD");
		if (el_jget_str(repo, "tag"))
			part(&p, "tag %s", el_jget_str(repo, "tag"));
		count_part(&p, changes, "staged");
		count_part(&p, changes, "modified");
		count_part(&p, changes, "untracked");
		count_part(&p, changes, "conflicted");
		if (el_jget_str(patch, "sha256")) {
			char *d = short_digest(el_jget_str(patch, "sha256"));
			char *size = human_size(int_of(el_jget(patch, "size"), 0));

			part(&p, "patch %s (%s)", d, size);
			free(d);
			free(size);
		}
		if (commit)
			version = el_xasprintf("%.*s%s", EL_REPORT_SHORT_HEX, commit, dirty ? " (dirty)" : " (clean)");
		else
			version = el_xstrdup(el_jget_bool(head, "unborn", false) ? "no commit yet" : "commit unknown");
		add_row(r, EL_RG_CODE, "code", version, parts_take(&p));
		free(version);
	}
}

static void file_rows(el_report *r)
{
	const cJSON *f;

	if (el_present(el_jget(r->doc, "configs")))
		cJSON_ArrayForEach(f, el_jget(el_jget(r->doc, "configs"), "files")) {
			const char *err = el_jget_str(f, "error");
			char *d;
			parts p = PARTS_INIT;

			if (!cJSON_IsObject(f))
				continue;
			d = err ? el_xstrdup("unreadable") : short_digest(el_jget_str(f, "sha256"));
			part(&p, "%s", or(el_jget_str(f, "path"), "?"));
			if (!el_jget_bool(f, "requested", true))
				part(&p, "_base_");
			if (err)
				part(&p, "%s", err);
			add_row(r, EL_RG_CONFIGS, "config", d, parts_take(&p));
			free(d);
		}
	if (el_present(el_jget(r->doc, "checkpoints")))
		cJSON_ArrayForEach(f, el_jget(el_jget(r->doc, "checkpoints"), "files")) {
			const char *err = el_jget_str(f, "error");
			char *d, *size;
			parts p = PARTS_INIT;

			if (!cJSON_IsObject(f))
				continue;
			d = err ? el_xstrdup("unreadable") : short_digest(el_jget_str(f, "sha256"));
			size = human_size(int_of(el_jget(f, "size"), 0));
			part(&p, "%s", or(el_jget_str(f, "path"), "?"));
			part(&p, "%s", err ? err : size);
			add_row(r, EL_RG_CHECKPOINTS, "checkpoint", d, parts_take(&p));
			free(d);
			free(size);
		}
}

static void lock_rows(el_report *r)
{
	const char *created = el_jget_str(r->doc, "created");

	add_row(r, EL_RG_LOCK, "lockfile", r->id, created ? el_xasprintf("saved %s", created) : NULL);
	r->rows[r->nrows - 1].wide = true;
	if (r->stored_id) {
		add_row(r, EL_RG_LOCK, "stored id", r->stored_id,
			el_xstrdup("differs from the content: the file was edited after it was saved"));
		r->rows[r->nrows - 1].wide = true;
	}
}

static void cite(el_report *r, const char *name, const char *version)
{
	r->cites = el_xrealloc(r->cites, (r->ncites + 1) * sizeof(*r->cites));
	r->cites[r->ncites].name = el_xstrdup(name);
	r->cites[r->ncites].version = el_xstrdup(version);
	r->ncites++;
}

/*
 * "environment: envlock sha256:9fca18f431ef… — CUDA 10.2.89, cuDNN 8.2.1,
 * PyTorch 1.10.0+cu102, mmdet 2.25.1". Twelve hex digits, git's choice
 * for large repositories, keep the short id unambiguous among any
 * number of locks a reader could compare (48 bits); the table carries
 * the full id.
 */
static void citation(el_report *r)
{
	const cJSON *fw = el_jget(r->doc, "frameworks"), *cudnn = el_jget(r->doc, "cudnn");
	const char *cuda = default_cuda(r->doc), *torch = el_jget_str(el_jget(fw, "torch"), "version");
	el_buf b = EL_BUF_INIT(1 << 20);

	if (cuda)
		cite(r, "CUDA", cuda);
	if (el_present(cudnn) && el_jget_str(cudnn, "version"))
		cite(r, "cuDNN", el_jget_str(cudnn, "version"));
	if (el_present(el_jget(fw, "torch")) && torch)
		cite(r, "PyTorch", torch);
	for (const el_framework_info *n = el_frameworks; n->key; n++)
		if ((n->flags & EL_FW_CITED) && el_present(el_jget(fw, n->key)) && el_jget_str(el_jget(fw, n->key), "version"))
			cite(r, n->key, el_jget_str(el_jget(fw, n->key), "version"));
	if (!r->ncites && el_present(el_jget(r->doc, "python")) && el_jget_str(el_jget(r->doc, "python"), "version"))
		cite(r, "Python", el_jget_str(el_jget(r->doc, "python"), "version"));
	el_buf_printf(&b, "environment: envlock %s\xE2\x80\xA6", r->short_id);
	for (size_t i = 0; i < r->ncites; i++)
		el_buf_printf(&b, "%s%s %s", i ? ", " : " \xE2\x80\x94 ", r->cites[i].name, r->cites[i].version);
	r->citation = el_buf_detach(&b);
}

void el_report_build(el_report *r, const envlock_lock *lock, const envlock_report_opts *opts)
{
	const char *stored;

	memset(r, 0, sizeof(*r));
	r->doc = lock->doc;
	r->opts = opts;
	r->id = envlock_lock_id(lock);
	snprintf(r->short_id, sizeof(r->short_id), "%.*s", (int)sizeof(r->short_id) - 1, r->id);
	stored = el_jget_str(r->doc, "id");
	if (stored && strcmp(stored, r->id) != 0)
		r->stored_id = stored;
	citation(r);
	system_rows(r);
	gpu_rows(r);
	toolchain_rows(r);
	python_rows(r);
	framework_rows(r);
	code_rows(r);
	file_rows(r);
	lock_rows(r);
}

void el_report_release(el_report *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].component);
		free(r->rows[i].version);
		free(r->rows[i].details);
	}
	for (size_t i = 0; i < r->ncites; i++) {
		free(r->cites[i].name);
		free(r->cites[i].version);
	}
	free(r->rows);
	free(r->cites);
	free(r->citation);
	envlock_findings_free(r->findings);
	envlock_diff_free(r->diff);
	memset(r, 0, sizeof(*r));
}
