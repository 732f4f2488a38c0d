/*
 * envlock show: the lock in a few aligned lines a person reads in five
 * seconds, printed from the facts report's summary is made of
 * (lib/report/facts.h), so show and report say the same of a lock.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envlock/show.h"
#include "lock/view.h"
#include "report/facts.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/text.h"

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
	const el_view *view;
	el_facts facts; /* what report says too */
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

/* "64 MiB", "23.5 GiB" */
static void put_size(el_buf *b, long long bytes)
{
	double mib = (double)bytes / (1024.0 * 1024);

	if (mib >= 1024)
		el_buf_addf(b, "%.1f GiB", mib / 1024);
	else if (mib == (double)(long long)mib)
		el_buf_addf(b, "%lld MiB", (long long)mib);
	else
		el_buf_addf(b, "%.1f MiB", mib);
}

/* "cgroup v2: 4 CPUs (quota), 16.0 GiB memory; /dev/shm 64 MiB": what limits the machine beyond its cores and RAM */
static void show_limits(shower *sh, const el_system *sys)
{
	el_buf b = EL_BUF_FITS(1024, "fixed words round four numbers, none longer than 64 bytes");
	double cpus = el_cgroup_cpus(sys);

	if (sys->cgroup.recorded) {
		if (sys->cgroup.version > 0)
			el_buf_addf(&b, "cgroup v%lld: ", sys->cgroup.version);
		else
			el_buf_adds(&b, "cgroup: ");
		if (cpus > 0)
			el_buf_addf(&b, "%g CPUs (%s)", cpus,
				      sys->cgroup.cpu_limited == EL_YES && sys->cgroup.cpu_limit <= cpus ? "quota" : "cpuset");
		else
			el_buf_adds(&b, sys->cgroup.cpu_limited == EL_NO ? "no CPU limit" : "CPU limit unknown");
		if (sys->cgroup.memory_limited == EL_YES) {
			el_buf_adds(&b, ", ");
			put_size(&b, sys->cgroup.memory_limit_bytes);
			el_buf_adds(&b, " memory");
		} else {
			el_buf_adds(&b, sys->cgroup.memory_limited == EL_NO ? ", no memory limit" : ", memory limit unknown");
		}
	}
	if (sys->shm.recorded) {
		if (b.len)
			el_buf_adds(&b, "; ");
		if (!sys->shm.present) {
			el_buf_adds(&b, "no /dev/shm");
		} else if (sys->shm.size_bytes >= 0) {
			el_buf_adds(&b, "/dev/shm ");
			put_size(&b, sys->shm.size_bytes);
		} else {
			el_buf_adds(&b, "/dev/shm of unknown size");
		}
	}
	if (b.len)
		row(sh, "limits", "%s", el_buf_cstr(&b));
	el_buf_release(&b);
}

static void show_system(shower *sh)
{
	const el_system *sys = &sh->view->system;
	const el_facts *f = &sh->facts;
	const char *arch = T(sh, str_or(sys->arch, "arch unknown"));

	if (f->os.known)
		row(sh, "OS", "%s (%s, kernel %s)", T(sh, f->os.name), arch, T(sh, str_or(sys->kernel, "unknown")));
	else
		row(sh, "OS", "unknown (%s)", arch);
	row(sh, "glibc", "%s", f->glibc.found ? T(sh, f->glibc.version) : "not found");
	if (sys->container.detected)
		row(sh, "container", "%s (%s)", T(sh, sys->container.kind), T(sh, sys->container.evidence));
	/* the probe records a cpu with both its counts (the schema requires them) */
	if (sys->cpu.model || sys->cpu.physical_cores >= 0 || sys->cpu.logical_cores >= 0) {
		long long cores = sys->cpu.physical_cores < 0 ? 0 : sys->cpu.physical_cores;
		long long threads = sys->cpu.logical_cores < 0 ? 0 : sys->cpu.logical_cores;
		const char *model = T(sh, str_or(sys->cpu.model, "unknown model"));

		if (sys->memory_total_bytes >= 0)
			row(sh, "CPU", "%s, %lld cores / %lld threads, %.1f GiB", model, cores, threads,
			    (double)sys->memory_total_bytes / (1024.0 * 1024 * 1024));
		else
			row(sh, "CPU", "%s, %lld cores / %lld threads", model, cores, threads);
	}
	show_limits(sh, sys);
}

static void show_gpu(shower *sh)
{
	const el_facts *f = &sh->facts;
	const el_gpu *gpu = &sh->view->gpu;

	if (f->driver == EL_FACT_FOUND) {
		if (gpu->driver.max_cuda)
			row(sh, "driver", "%s (%s), max CUDA %s", T(sh, gpu->driver.version), T(sh, gpu->driver.flavour),
			    T(sh, gpu->driver.max_cuda));
		else
			row(sh, "driver", "%s (%s)", T(sh, gpu->driver.version), T(sh, gpu->driver.flavour));
	} else if (f->driver == EL_FACT_ABSENT && f->driver_user_space) {
		/* a container image: the libraries, without the kernel module they talk to */
		row(sh, "driver", "user-space %s, no kernel module loaded", T(sh, f->driver_user_space));
	} else {
		row(sh, "driver", "%s", f->driver == EL_FACT_ABSENT ? "no NVIDIA driver"
								  : "NVIDIA driver present, version unknown");
	}
	/* identical models as one line each, "2 x Tesla V100-PCIE-16GB" */
	for (size_t i = 0; i < f->ngpus; i++)
		row(sh, i == 0 ? "GPUs" : "", "%zu x %s", f->gpus[i].count, T(sh, f->gpus[i].name));
}

static void show_cuda(shower *sh)
{
	const el_facts *f = &sh->facts;
	const el_cudnn *cudnn = &sh->view->cudnn;

	for (size_t i = 0; i < f->ntoolkits; i++) {
		const el_fact_toolkit *t = &f->toolkits[i];
		const char *origin = el_fact_origin(t->tk->layout);

		row(sh, i == 0 ? "CUDA" : "", "%s at %s%s%s%s%s%s", T(sh, str_or(t->version, "unknown version")),
		    T(sh, t->tk->home), origin ? " (" : "", origin ? origin : "", origin ? ")" : "",
		    t->is_default ? " (default)" : "", t->tk->nvcc.recorded ? "" : ", no nvcc");
	}
	if (!f->ntoolkits)
		row(sh, "CUDA", "no toolkit");
	if (f->cudnn == EL_FACT_FOUND)
		row(sh, "cuDNN", "%s (%s)", T(sh, cudnn->version), T(sh, cudnn->header));
	else if (f->cudnn == EL_FACT_UNKNOWN)
		row(sh, "cuDNN", "libraries without a header");
	else if (!cudnn->ninstalls)
		row(sh, "cuDNN", "not found");
	for (size_t i = 0; i < cudnn->ninstalls; i++) {
		const el_cudnn_install *in = &cudnn->installs[i];

		row(sh, i == 0 && f->cudnn == EL_FACT_ABSENT ? "cuDNN" : "", "%s at %s (%s)",
		    T(sh, str_or(in->version, "unknown version")), T(sh, in->home), str_or(el_fact_origin(in->layout), "?"));
	}
	if (f->torch_cudnn.path)
		row(sh, "", "torch loads cuDNN %s: %s", T(sh, str_or(f->torch_cudnn.version, "?")), T(sh, f->torch_cudnn.path));
	if (f->torch_cudart.path)
		row(sh, "", "torch loads CUDA runtime %s: %s", T(sh, str_or(f->torch_cudart.version, "?")),
		    T(sh, f->torch_cudart.path));
}

static void show_compilers(shower *sh)
{
	const el_facts *f = &sh->facts;
	el_buf others = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's other gcc versions, escaped");

	for (size_t i = 0; i < f->ngcc_others; i++)
		el_buf_addf(&others, "%s%s", i ? ", " : "", T(sh, f->gcc_others[i]));
	if (f->gcc)
		row(sh, "gcc", "%s (default)%s%s", T(sh, f->gcc), others.len ? "; also " : "", el_buf_cstr(&others));
	else if (others.len)
		row(sh, "gcc", "%s (no default gcc)", el_buf_cstr(&others));
	else
		row(sh, "gcc", "not found");
	el_buf_release(&others);
}

static void show_python(shower *sh)
{
	const el_facts *f = &sh->facts;
	const el_view *v = sh->view;

	if (f->python && v->python.deb.package && v->python.deb.version)
		row(sh, "Python", "%s (%s, %s, package %s %s)", T(sh, str_or(v->python.version, "unknown version")),
		    T(sh, v->python.kind), T(sh, v->python.prefix), T(sh, v->python.deb.package),
		    T(sh, v->python.deb.version));
	else if (f->python)
		row(sh, "Python", "%s (%s, %s)", T(sh, str_or(v->python.version, "unknown version")),
		    T(sh, v->python.kind), T(sh, v->python.prefix));
	else if (!sh->partial)
		row(sh, "Python", "not found");
	if (f->conda)
		row(sh, "conda env", "%s: %lld package%s", T(sh, str_or(v->conda.name, "(unnamed)")),
		    f->conda_packages, f->conda_packages == 1 ? "" : "s");
	if (f->pip)
		row(sh, "pip", "%zu distribution%s (%zu editable, %zu also in conda)", v->pip.ndists,
		    v->pip.ndists == 1 ? "" : "s", f->pip_editable, f->pip_also_conda);
}

static void show_frameworks(shower *sh)
{
	const el_facts *f = &sh->facts;

	for (size_t i = 0; i < f->nframeworks; i++) {
		const el_fact_framework *x = &f->frameworks[i];
		const char *v = T(sh, x->version);

		if (strcmp(x->fw->info->key, "torch") == 0) {
			const char *what = x->build == EL_BUILD_CUDA ? "CUDA" : x->build == EL_BUILD_ROCM ? "ROCm" : NULL;

			if (what) {
				row(sh, "torch", "%s (%s build)", v, what);
				fprintf(sh->out, "%-*s  built for %s %s\n", LABEL_WIDTH, "", what, T(sh, x->build_version));
			} else if (x->build == EL_BUILD_CPU) {
				row(sh, "torch", "%s (CPU-only build)", v);
			} else {
				row(sh, "torch", "%s", v);
			}
		} else if (x->mmcv && x->ops_known) {
			row(sh, T(sh, x->label), "%s (%s)", v, x->ops ? "ops" : "no compiled ops");
		} else if (x->mmcv) {
			row(sh, T(sh, x->label), "%s", v);
		} else {
			row(sh, x->label, "%s", v);
		}
	}
}

/*
 * Each repository: its commit, whether it had uncommitted changes, and
 * how many of its untracked files the lock holds (restore recreates
 * those; the ones by digest only it cannot).
 */
static void show_code(shower *sh)
{
	const el_repos *repos = &sh->view->repos;
	bool first = true;

	for (size_t i = 0; repos->st.present && i < repos->nrepos; i++) {
		const el_repo *r = &repos->repos[i];
		size_t digest_only = 0;
		char untracked[128] = "";

		if (!r->status || strcmp(r->status, "present") != 0)
			continue;
		for (size_t k = 0; k < r->nuntracked_files; k++)
			digest_only += r->untracked_files[k].text == NULL;
		if (r->nuntracked_files && digest_only)
			snprintf(untracked, sizeof(untracked), ", %zu untracked file%s included (%zu only by digest)",
				 r->nuntracked_files, r->nuntracked_files == 1 ? "" : "s", digest_only);
		else if (r->nuntracked_files)
			snprintf(untracked, sizeof(untracked), ", %zu untracked file%s included", r->nuntracked_files,
				 r->nuntracked_files == 1 ? "" : "s");
		else if (r->changes.untracked.n)
			snprintf(untracked, sizeof(untracked), ", %zu untracked file%s not recorded", r->changes.untracked.n,
				 r->changes.untracked.n == 1 ? "" : "s");
		row(sh, first ? "code" : "", "%s at %.12s (%s)%s", T(sh, str_or(r->path, "?")),
		    T(sh, str_or(r->head.commit, r->head.unborn ? "no commit yet" : "unknown commit")),
		    r->dirty ? "uncommitted changes" : "clean", untracked);
		first = false;
	}
}

/* The rule results recorded at save time, most severe first, as saved. */
static void show_checks(shower *sh)
{
	const el_checks *checks = &sh->view->checks;
	long long breaking = checks->breaking < 0 ? 0 : checks->breaking, risky = checks->risky < 0 ? 0 : checks->risky;

	if (!checks->recorded)
		return;
	if (!breaking && !risky) {
		row(sh, "checks", "every compatibility rule passed at save time");
		return;
	}
	row(sh, "checks", "%lld breaking, %lld risky at save time (envlock check for fixes)", breaking, risky);
	for (size_t i = 0; i < checks->nfindings; i++) {
		const char *sev = checks->findings[i].severity;

		if (sev && strcmp(sev, "info") != 0)
			fprintf(sh->out, "  - %s: %s\n", T(sh, sev), T(sh, checks->findings[i].subject));
	}
}

/* What `save --verify` found: the result and each stage's verdict. */
static void show_verify(shower *sh)
{
	const el_verified *v = &sh->view->verify;

	if (!v->recorded)
		return;
	row(sh, "verify", "%s at save time (envlock verify for the figures)", T(sh, str_or(v->result, "unknown")));
	for (size_t i = 0; i < v->nstages; i++)
		fprintf(sh->out, "  - %s: %s\n", T(sh, str_or(v->stages[i].stage, "?")),
			T(sh, str_or(v->stages[i].status, "?")));
}

int envlock_show_print(const envlock_lock *lock, envlock_ctx *ctx, FILE *out)
{
	const el_view *v = el_lock_view(lock);
	const char *id = envlock_lock_id(lock);
	shower sh = { .out = out, .view = v };
	int rc = 0;

	for (int i = 0; i < RING; i++)
		el_buf_init_fits(&sh.ring[i], EL_BUF_JOIN_MAX, "one of the lock's strings, escaped for a terminal");
	el_facts_build(&sh.facts, v);
	fprintf(out, "envlock %s\n", id);
	if (v->id && strcmp(v->id, id) != 0)
		fprintf(out, "%-*s!! the file says %s: it was edited after it was saved\n", LABEL_WIDTH, "",
			T(&sh, v->id));
	sh.partial = v->partial_from != NULL;
	if (sh.partial) {
		/* an imported conda or pip list: only what it holds, nothing said of the rest */
		row(&sh, "partial", "made by envlock import from %s output; it records nothing else of the machine",
		    T(&sh, v->partial_from));
	} else {
		row(&sh, "saved", "%s on %s", T(&sh, v->created), T(&sh, str_or(v->hostname, "unknown host")));
		show_system(&sh);
		show_gpu(&sh);
		show_cuda(&sh);
		show_compilers(&sh);
	}
	show_python(&sh);
	show_frameworks(&sh);
	show_code(&sh);
	show_checks(&sh);
	show_verify(&sh);
	if (v->warnings.n) {
		row(&sh, "warnings", "%zu", v->warnings.n);
		for (size_t i = 0; i < v->warnings.n; i++)
			fprintf(out, "  - %s\n", T(&sh, v->warnings.v[i]));
	}
	el_facts_release(&sh.facts);
	for (int i = 0; i < RING; i++)
		el_buf_release(&sh.ring[i]);
	if (fflush(out) != 0 || ferror(out))
		rc = el_error_set(ctx, ENVLOCK_EIO, "write error: %s", el_strerror(errno));
	return rc;
}
