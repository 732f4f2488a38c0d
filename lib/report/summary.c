/*
 * The summary every report format renders: the citation line and the
 * appendix table's rows, read once from the lock's view and from the
 * facts show prints too (facts.h). The lock is untrusted: its strings are
 * escaped by each renderer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock/view.h"
#include "report/report.h"
#include "util/text.h"
#include "util/vec.h"
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

#define PARTS_INIT { EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's strings of one row") }

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
		el_buf_adds(&p->b, ", ");
	el_buf_adds(&p->b, s);
	free(s);
}

static char *parts_take(parts *p)
{
	return el_buf_detach(&p->b);
}

static void add_row(el_report *r, int group, const char *component, const char *version, char *details)
{
	el_report_row *row;

	EL_GROW(r->rows, r->nrows + 1, r->cap);
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
	const el_system *sys = &r->view->system;
	const el_facts *f = &r->facts;
	parts p = PARTS_INIT;

	if (sys->arch)
		part(&p, "%s", sys->arch);
	if (sys->kernel)
		part(&p, "kernel %s", sys->kernel);
	add_row(r, EL_RG_SYSTEM, "OS", f->os.known ? or(f->os.name, "unknown") : "unknown", parts_take(&p));
	add_row(r, EL_RG_SYSTEM, "glibc", f->glibc.found ? or(f->glibc.version, "unknown") : "not found", NULL);
	if (sys->container.detected)
		add_row(r, EL_RG_SYSTEM, "container", or(sys->container.kind, "unknown"),
			el_xstrdup(or(sys->container.evidence, "")));
}

static void gpu_rows(el_report *r)
{
	const el_facts *f = &r->facts;
	const el_gpu *gpu = &r->view->gpu;

	for (size_t i = 0; i < f->ngpus; i++) {
		const el_gpu_device *dev = f->gpus[i].first;
		parts p = PARTS_INIT;
		char *label;

		if (dev->compute_capability)
			part(&p, "compute capability %s", dev->compute_capability);
		if (dev->memory_mib_text)
			part(&p, "%s MiB", dev->memory_mib_text);
		label = el_xasprintf("%zu \xC3\x97 %s", f->gpus[i].count, f->gpus[i].name);
		add_row(r, EL_RG_GPU, "GPU", label, parts_take(&p));
		free(label);
	}
	if (!f->ngpus)
		add_row(r, EL_RG_GPU, "GPU", "none found", NULL);
	if (f->driver == EL_FACT_FOUND) {
		parts p = PARTS_INIT;

		if (gpu->driver.flavour)
			part(&p, "%s kernel module", gpu->driver.flavour);
		if (gpu->driver.max_cuda)
			part(&p, "supports CUDA up to %s", gpu->driver.max_cuda);
		add_row(r, EL_RG_GPU, "NVIDIA driver", gpu->driver.version, parts_take(&p));
	} else if (f->driver == EL_FACT_ABSENT && f->driver_user_space) {
		add_row(r, EL_RG_GPU, "NVIDIA driver", f->driver_user_space, el_xstrdup("user-space only, no kernel module loaded"));
	} else {
		add_row(r, EL_RG_GPU, "NVIDIA driver", f->driver == EL_FACT_ABSENT ? "not found" : "version unknown", NULL);
	}
}

static void toolchain_rows(el_report *r)
{
	const el_facts *f = &r->facts;
	const el_view *v = r->view;
	const char *gcc = f->gcc, *gcc_path = v->compilers.def.path;
	parts also = PARTS_INIT;

	for (size_t i = 0; i < f->ntoolkits; i++) {
		const el_fact_toolkit *t = &f->toolkits[i];
		parts p = PARTS_INIT;

		part(&p, "%s%s", t->tk->home, t->is_default ? " (default)" : "");
		if (el_fact_origin(t->tk->layout))
			part(&p, "%s", el_fact_origin(t->tk->layout));
		if (!t->tk->nvcc.recorded)
			part(&p, "no nvcc");
		add_row(r, EL_RG_TOOLCHAIN, "CUDA toolkit", or(t->version, "version unknown"), parts_take(&p));
	}
	if (!f->ntoolkits)
		add_row(r, EL_RG_TOOLCHAIN, "CUDA toolkit", "not found", NULL);
	if (f->cudnn == EL_FACT_FOUND)
		add_row(r, EL_RG_TOOLCHAIN, "cuDNN", v->cudnn.version, el_xstrdup(or(v->cudnn.header, "")));
	else if (f->cudnn == EL_FACT_UNKNOWN)
		add_row(r, EL_RG_TOOLCHAIN, "cuDNN", "version unknown", el_xstrdup("libraries without a header"));
	else if (!v->cudnn.ninstalls)
		add_row(r, EL_RG_TOOLCHAIN, "cuDNN", "not found", NULL);
	for (size_t i = 0; i < v->cudnn.ninstalls; i++) {
		const el_cudnn_install *in = &v->cudnn.installs[i];

		add_row(r, EL_RG_TOOLCHAIN, "cuDNN", or(in->version, "version unknown"),
			el_xasprintf("%s, %s", in->home, or(el_fact_origin(in->layout), "?")));
	}
	if (f->torch_cudnn.path)
		add_row(r, EL_RG_TOOLCHAIN, "cuDNN (torch)", or(f->torch_cudnn.version, "version unknown"),
			el_xasprintf("torch loads %s", f->torch_cudnn.path));
	if (f->torch_cudart.path)
		add_row(r, EL_RG_TOOLCHAIN, "CUDA runtime", or(f->torch_cudart.version, "version unknown"),
			el_xasprintf("torch loads %s", f->torch_cudart.path));
	for (size_t i = 0; i < f->ngcc_others; i++)
		part(&also, "%s", f->gcc_others[i]);
	if (gcc) {
		parts p = PARTS_INIT;

		part(&p, "default compiler%s%s", gcc_path ? " " : "", or(gcc_path, ""));
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
	const el_facts *f = &r->facts;
	const el_view *v = r->view;

	if (f->python) {
		parts p = PARTS_INIT;

		if (v->python.kind)
			part(&p, "%s", v->python.kind);
		if (v->python.prefix)
			part(&p, "%s", v->python.prefix);
		if (v->python.deb.recorded && v->python.deb.package && v->python.deb.version)
			part(&p, "package %s %s", v->python.deb.package, v->python.deb.version);
		add_row(r, EL_RG_PYTHON, "Python", or(v->python.version, "version unknown"), parts_take(&p));
	} else {
		add_row(r, EL_RG_PYTHON, "Python", "not found", NULL);
	}
	if (f->conda) {
		long long n = f->conda_packages;
		parts p = PARTS_INIT;

		part(&p, "%lld package%s", n, n == 1 ? "" : "s");
		if (v->conda.prefix)
			part(&p, "%s", v->conda.prefix);
		add_row(r, EL_RG_PYTHON, "conda env", or(v->conda.name, "unnamed"), parts_take(&p));
	}
	if (f->pip) {
		size_t n = v->pip.ndists;
		char *count = el_xasprintf("%zu distribution%s", n, n == 1 ? "" : "s");

		add_row(r, EL_RG_PYTHON, "pip", count,
			f->pip_editable ? el_xasprintf("%zu editable", f->pip_editable) : NULL);
		free(count);
	}
}

/* The conda package named name (torch is "pytorch" in conda), or NULL: a walk, done once per framework. */
static const el_conda_package *conda_pkg(const el_view *v, const char *name)
{
	if (strcmp(name, "torch") == 0)
		name = "pytorch";
	for (size_t i = 0; i < v->conda.npackages; i++)
		if (v->conda.packages[i].name && strcmp(v->conda.packages[i].name, name) == 0)
			return &v->conda.packages[i];
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

/* The pip distribution of a framework: mmcv's recorded one, else the registry's first that is installed. */
static const el_pip_dist *framework_dist(const el_view *v, const el_fact_framework *x)
{
	const el_pip_dist *d = NULL;

	if (x->mmcv && x->fw->package)
		return el_view_pip_dist(v, x->fw->package);
	for (const char *const *n = x->fw->info->dists; *n && !d; n++)
		d = el_view_pip_dist(v, *n);
	return d;
}

/* How a framework was installed: the conda build, the wheel's tag, an editable tree, a VCS commit. */
static void install_parts(parts *p, const el_view *v, const el_fact_framework *x)
{
	const el_pip_dist *d = framework_dist(v, x);
	const el_conda_package *c = conda_pkg(v, x->label);
	const char *installer = d ? d->installer : NULL;
	bool by_conda = installer && strcmp(installer, "conda") == 0;

	if (c && (!d || by_conda || d->also_conda)) {
		char *ch = channel_name(or(c->channel, ""));

		part(p, "conda %s%s%s%s", or(c->build, "build unknown"), *ch ? " (" : "", ch, *ch ? ")" : "");
		free(ch);
		return;
	}
	if (!d)
		return;
	if (d->editable) {
		part(p, "editable install of %s", or(d->source, or(d->direct_url.url, "a source tree")));
	} else if (d->direct_url.vcs) {
		part(p, "%s %.*s from %s", d->direct_url.vcs, EL_REPORT_SHORT_HEX, or(d->direct_url.commit_id, "(no commit)"),
		     or(d->direct_url.url, "?"));
	} else if (d->direct_url.url && !by_conda) {
		part(p, "from %s", d->direct_url.url);
	} else if (d->tags.n) {
		part(p, "%s wheel %s", or(installer, "pip"), d->tags.v[0]);
	} else if (installer) {
		part(p, "installed by %s", installer);
	}
}

static void framework_rows(el_report *r)
{
	const el_facts *f = &r->facts;

	for (size_t i = 0; i < f->nframeworks; i++) {
		const el_fact_framework *x = &f->frameworks[i];
		parts p = PARTS_INIT;

		switch (x->build) {
		case EL_BUILD_CUDA: part(&p, "CUDA %s build", x->build_version); break;
		case EL_BUILD_ROCM: part(&p, "ROCm %s build", x->build_version); break;
		case EL_BUILD_CPU: part(&p, "CPU-only build"); break;
		case EL_BUILD_NONE: break;
		}
		if (x->fw->git_version && strcmp(x->fw->info->key, "torch") == 0)
			part(&p, "git %.*s", EL_REPORT_SHORT_HEX, x->fw->git_version);
		if (x->mmcv && x->ops_known) {
			const char *cudart = x->fw->ops_cudart;

			if (x->ops)
				part(&p, "compiled ops%s%s", cudart ? " linked to " : "", or(cudart, ""));
			else
				part(&p, "no compiled ops");
		}
		install_parts(&p, r->view, x);
		add_row(r, EL_RG_FRAMEWORKS, x->label, x->version, parts_take(&p));
	}
}

static void count_part(parts *p, const el_strlist *changes, const char *what)
{
	if (changes->n)
		part(p, "%zu %s", changes->n, what);
}

static void code_rows(el_report *r)
{
	const el_repos *repos = &r->view->repos;

	if (!repos->st.present)
		return;
	for (size_t i = 0; i < repos->nrepos; i++) {
		const el_repo *repo = &repos->repos[i];
		const char *commit = repo->head.commit, *status = or(repo->status, "unknown");
		parts p = PARTS_INIT;
		char *version;

		part(&p, "%s", or(repo->path, "?"));
		if (strcmp(status, "present") != 0) {
			add_row(r, EL_RG_CODE, "code", strcmp(status, "not_a_repository") == 0 ? "not a repository" : status,
				parts_take(&p));
			continue;
		}
		if (repo->head.branch)
			part(&p, "branch %s", repo->head.branch);
		else if (repo->head.detached)
			part(&p, "detached HEAD");
		if (repo->tag)
			part(&p, "tag %s", repo->tag);
		count_part(&p, &repo->changes.staged, "staged");
		count_part(&p, &repo->changes.modified, "modified");
		if (repo->nuntracked_files) {
			size_t digest_only = 0;
			const char *files = repo->nuntracked_files == 1 ? "file" : "files";

			for (size_t k = 0; k < repo->nuntracked_files; k++)
				digest_only += repo->untracked_files[k].text == NULL;
			if (digest_only)
				part(&p, "%zu untracked %s included (%zu only by digest)", repo->nuntracked_files, files,
				     digest_only);
			else
				part(&p, "%zu untracked %s included", repo->nuntracked_files, files);
		} else {
			count_part(&p, &repo->changes.untracked, "untracked");
		}
		count_part(&p, &repo->changes.conflicted, "conflicted");
		if (repo->patch.sha256) {
			char *d = short_digest(repo->patch.sha256);
			char *size = human_size(repo->patch.size);

			part(&p, "patch %s (%s)", d, size);
			free(d);
			free(size);
		}
		if (commit)
			version = el_xasprintf("%.*s%s", EL_REPORT_SHORT_HEX, commit, repo->dirty ? " (dirty)" : " (clean)");
		else
			version = el_xstrdup(repo->head.unborn ? "no commit yet" : "commit unknown");
		add_row(r, EL_RG_CODE, "code", version, parts_take(&p));
		free(version);
	}
}

static void file_rows(el_report *r)
{
	const el_configs *configs = &r->view->configs;
	const el_checkpoints *checkpoints = &r->view->checkpoints;

	for (size_t i = 0; configs->st.present && i < configs->nfiles; i++) {
		const el_config *f = &configs->files[i];
		char *d = f->error ? el_xstrdup("unreadable") : short_digest(f->sha256);
		parts p = PARTS_INIT;

		part(&p, "%s", or(f->path, "?"));
		if (!f->requested)
			part(&p, "_base_");
		if (f->error)
			part(&p, "%s", f->error);
		add_row(r, EL_RG_CONFIGS, "config", d, parts_take(&p));
		free(d);
	}
	for (size_t i = 0; checkpoints->st.present && i < checkpoints->nfiles; i++) {
		const el_checkpoint *f = &checkpoints->files[i];
		char *d = f->error ? el_xstrdup("unreadable") : short_digest(f->sha256);
		char *size = human_size(f->size);
		parts p = PARTS_INIT;

		part(&p, "%s", or(f->path, "?"));
		part(&p, "%s", f->error ? f->error : size);
		add_row(r, EL_RG_CHECKPOINTS, "checkpoint", d, parts_take(&p));
		free(d);
		free(size);
	}
}

static void lock_rows(el_report *r)
{
	const char *created = r->view->created;

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
	EL_GROW(r->cites, r->ncites + 1, r->cites_cap);
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
	const el_facts *f = &r->facts;
	const el_view *v = r->view;
	const char *cuda = el_toolkit_version(v->cuda.default_tk);
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's id and its frameworks' names and versions");

	if (cuda)
		cite(r, "CUDA", cuda);
	if (f->cudnn == EL_FACT_FOUND)
		cite(r, "cuDNN", v->cudnn.version);
	for (size_t i = 0; i < f->nframeworks; i++)
		if (strcmp(f->frameworks[i].fw->info->key, "torch") == 0)
			cite(r, "PyTorch", f->frameworks[i].version);
	for (size_t i = 0; i < f->nframeworks; i++)
		if (f->frameworks[i].fw->info->flags & EL_FW_CITED)
			cite(r, f->frameworks[i].fw->info->key, f->frameworks[i].version);
	if (!r->ncites && f->python && v->python.version)
		cite(r, "Python", v->python.version);
	el_buf_addf(&b, "environment: envlock %s\xE2\x80\xA6", r->short_id);
	for (size_t i = 0; i < r->ncites; i++)
		el_buf_addf(&b, "%s%s %s", i ? ", " : " \xE2\x80\x94 ", r->cites[i].name, r->cites[i].version);
	r->citation = el_buf_detach(&b);
}

void el_report_build(el_report *r, const envlock_lock *lock, const envlock_report_opts *opts)
{
	memset(r, 0, sizeof(*r));
	r->view = el_lock_view(lock);
	el_facts_build(&r->facts, r->view);
	r->opts = opts;
	r->id = envlock_lock_id(lock);
	snprintf(r->short_id, sizeof(r->short_id), "%.*s", (int)sizeof(r->short_id) - 1, r->id);
	if (r->view->id && strcmp(r->view->id, r->id) != 0)
		r->stored_id = r->view->id;
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
	el_facts_release(&r->facts);
	memset(r, 0, sizeof(*r));
}
