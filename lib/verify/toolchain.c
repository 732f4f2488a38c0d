/*
 * The toolchain stage: find nvcc, choose the GPU architectures, write
 * the training program into the private folder and compile it with the
 * machine's default host compiler. A failure is explained by nvcc's
 * first real error line and, when the rules know the cause (a gcc newer
 * than this nvcc accepts), the fix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lock/model.h"
#include "lock/view.h"
#include "util/version.h"
#include "util/atomic.h"
#include "util/root.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/xalloc.h"
#include "verify.h"

#define EL_NVCC_QUERY_MS 30000
#define EL_NVCC_COMPILE_MS 600000
#define EL_NVCC_OUTPUT (1u << 20)

/* ---- architectures ---- */

/* "compute_90" -> 90; -1 for anything else ("compute_90a", "sm_90") */
static int arch_number(const char *a)
{
	char *end;
	long v;

	if (strncmp(a, "compute_", 8) != 0 || a[8] < '0' || a[8] > '9')
		return -1;
	v = strtol(a + 8, &end, 10);
	return *end || v <= 0 || v > 10000 ? -1 : (int)v;
}

/* "9.0" -> 90, "12.1" -> 121; -1 when not "M.m" */
static int cc_number(const char *cc)
{
	int major, minor;
	char tail;

	if (sscanf(cc, "%d.%d%c", &major, &minor, &tail) != 2 || major < 1 || major > 99 || minor < 0 || minor > 9)
		return -1;
	return major * 10 + minor;
}

/* "-gencode arch=compute_A,code=sm_A" (SASS) or "...,code=compute_A" (PTX), once */
static void gencode(el_strvec *v, int arch, int sass)
{
	char *value = sass ? el_xasprintf("arch=compute_%d,code=sm_%d", arch, arch)
			   : el_xasprintf("arch=compute_%d,code=compute_%d", arch, arch);

	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], value) == 0) {
			free(value);
			return;
		}
	el_strvec_push(v, "-gencode");
	el_strvec_push_owned(v, value);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

char **el_verify_arch_flags(const char *const *archs, const char *const *ccs, char **desc)
{
	int have[256], want[64];
	size_t nhave = 0, nwant = 0;
	el_strvec v = EL_STRVEC_INIT;
	el_buf d = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a phrase per compute capability asked for");

	for (const char *const *a = archs; a && *a && nhave < 256; a++)
		if (arch_number(*a) > 0)
			have[nhave++] = arch_number(*a);
	for (const char *const *c = ccs; c && *c && nwant < 64; c++) {
		int x = cc_number(*c);
		bool dup = false;

		for (size_t i = 0; i < nwant; i++)
			dup |= want[i] == x;
		if (x > 0 && !dup)
			want[nwant++] = x;
	}
	qsort(have, nhave, sizeof(int), cmp_int);
	qsort(want, nwant, sizeof(int), cmp_int);
	if (nhave == 0) {
		*desc = el_xstrdup("nvcc's default architecture, with PTX (this nvcc does not list its architectures)");
		el_buf_release(&d);
		return el_strvec_detach(&v);
	}
	if (nwant == 0) {
		gencode(&v, have[0], 0);
		*desc = el_xasprintf("PTX for compute_%d, which the driver compiles for any GPU it supports (no GPU model is known)", have[0]);
		el_buf_release(&d);
		return el_strvec_detach(&v);
	}
	for (size_t i = 0; i < nwant; i++) {
		int cc = want[i], best = -1;

		for (size_t j = 0; j < nhave; j++)
			if (have[j] <= cc)
				best = have[j];
		if (best < 0) {
			*desc = el_xasprintf("this nvcc cannot build for compute capability %d.%d: its oldest architecture is compute_%d",
					     cc / 10, cc % 10, have[0]);
			el_strvec_release(&v);
			el_buf_release(&d);
			return NULL;
		}
		if (best == cc) {
			gencode(&v, cc, 1);
			gencode(&v, cc, 0);
			el_buf_addf(&d, "%ssm_%d with PTX", d.len ? ", " : "", cc);
		} else {
			gencode(&v, best, 0);
			el_buf_addf(&d, "%sPTX compute_%d for compute capability %d.%d (newer than this nvcc knows)",
				      d.len ? ", " : "", best, cc / 10, cc % 10);
		}
	}
	*desc = el_buf_detach(&d);
	return el_strvec_detach(&v);
}

/* ---- nvcc's output ---- */

static bool is_noise(const char *line, size_t n)
{
	static const char *const skip[] = { "In file included from", "                 from ",
		"nvcc warning", "Warning:", "warning:" };

	if (n == 0)
		return true;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (n >= strlen(skip[i]) && strncmp(line, skip[i], strlen(skip[i])) == 0)
			return true;
	/* gcc's caret lines: "  132 | #error ..." and "      |  ^~~~~" */
	{
		size_t i = strspn(line, " 0123456789");

		if (i < n && line[i] == '|')
			return true;
	}
	return memmem(line, n, ": warning", 9) != NULL || memmem(line, n, ": note:", 7) != NULL;
}

char *el_verify_first_error(const char *text, size_t len)
{
	const char *pos = text, *end = text + len, *line, *fallback = NULL;
	size_t n, fallback_n = 0;

	if (!text)
		return NULL;
	while (el_next_line(&pos, end, &line, &n)) {
		el_trim(&line, &n);
		if (memmem(line, n, "error", 5) && !is_noise(line, n))
			return el_xstrndup(line, n > 400 ? 400 : n);
		if (!fallback && !is_noise(line, n)) {
			fallback = line;
			fallback_n = n;
		}
	}
	return fallback ? el_xstrndup(fallback, fallback_n > 400 ? 400 : fallback_n) : NULL;
}

/* ---- finding nvcc ---- */

/* The nvcc a recorded toolkit of this machine runs (Debian's: its /usr/bin/nvcc wrapper), or NULL. */
static char *toolkit_nvcc(const el_toolkit *tk)
{
	if (!tk || !tk->home || tk->home[0] != '/')
		return NULL;
	return tk->nvcc.recorded && tk->nvcc.path && tk->nvcc.path[0] == '/' ? el_xstrdup(tk->nvcc.path)
									       : el_path_join(tk->home, "bin/nvcc");
}

static char *try_nvcc(char *nvcc, el_buf *tried)
{
	if (!nvcc || el_is_executable(nvcc))
		return nvcc;
	el_buf_addf(tried, "%s%s", tried->len ? ", " : "", nvcc);
	free(nvcc);
	return NULL;
}

/*
 * The nvcc to use: the toolkit asked for (opts->cuda_home); the
 * lockfile's default toolkit when this machine's probe found it too (a
 * path from a lockfile alone is never run); else the one envlock save
 * makes this machine's default, by the same rules in the same order
 * (cuda.lookups: $CUDA_HOME, $CUDA_PATH, the nvcc PATH finds,
 * /usr/local/cuda), so that verify compiles with the toolkit the lock
 * names.
 */
static char *choose_nvcc(const el_verify_run *run, const char **source, el_buf *tried)
{
	const el_toolkit *locked = run->locked ? run->locked->cuda.default_tk : NULL;
	const el_toolkit *here = locked ? el_view_toolkit_at(run->live, locked->home) : NULL;
	const el_cuda *live = &run->live->cuda;
	char *nvcc;

	if (run->opts->cuda_home) {
		*source = "asked for";
		return el_path_join(run->opts->cuda_home, "bin/nvcc");
	}
	if ((nvcc = try_nvcc(toolkit_nvcc(here), tried)) != NULL) {
		*source = "the lockfile's default toolkit";
		return nvcc;
	}
	for (size_t i = 0; i < live->nlookups; i++) {
		const el_cuda_lookup *l = &live->lookups[i];
		const el_toolkit *tk = l->toolkit ? el_view_toolkit_at(run->live, l->toolkit) : NULL;

		/* PATH's nvcc is the value itself, in a recorded toolkit or not */
		nvcc = tk ? toolkit_nvcc(tk) : strcmp(l->rule, "PATH") == 0 && l->value[0] == '/' ? el_xstrdup(l->value) : NULL;
		if ((nvcc = try_nvcc(nvcc, tried)) != NULL) {
			*source = strcmp(l->rule, "CUDA_HOME") == 0 ? "$CUDA_HOME" : strcmp(l->rule, "CUDA_PATH") == 0 ? "$CUDA_PATH" : l->rule;
			return nvcc;
		}
	}
	if ((nvcc = el_which("nvcc")) != NULL) {
		*source = "PATH";
		return nvcc;
	}
	el_buf_addf(tried, "%snvcc in PATH", tried->len ? ", " : "");
	return NULL;
}

/* The toolkit of this machine that runs nvcc: the one whose nvcc it is, else the folder above its bin/. */
static const el_toolkit *toolkit_of_nvcc(const el_verify_run *run, const char *nvcc, char **home)
{
	char *bin = el_path_dir(nvcc), *real;
	const el_toolkit *tk;

	for (size_t i = 0; i < run->live->cuda.ntoolkits; i++) {
		tk = &run->live->cuda.toolkits[i];
		if (tk->nvcc.recorded && tk->home &&
		    ((tk->nvcc.path && strcmp(tk->nvcc.path, nvcc) == 0) ||
		     (tk->nvcc.binary && strcmp(tk->nvcc.binary, nvcc) == 0))) {
			free(bin);
			*home = el_xstrdup(tk->home);
			return tk;
		}
	}
	*home = el_path_dir(bin);
	free(bin);
	real = realpath(*home, NULL);
	if (real) {
		free(*home);
		*home = real;
	}
	return el_view_toolkit_at(run->live, *home);
}

/* Run nvcc with one query argument; its stdout, or NULL. */
static char *nvcc_query(const el_verify_run *run, const char *nvcc, const char *arg)
{
	const char *argv[] = { nvcc, arg, NULL };
	el_buf out = EL_BUF_INIT(EL_NVCC_OUTPUT);
	el_spawn_opts so = { run->envp, 0 };
	int status = -1;

	if (el_spawn_ex(argv, EL_NVCC_QUERY_MS, &out, &status, &so) != 0 || status != 0) {
		el_buf_release(&out);
		return NULL;
	}
	return el_buf_detach(&out);
}

/* The compute_NN names in text (--list-gpu-arch, or --help of an nvcc without it), NULL-terminated. */
static char **arch_names(const char *text)
{
	el_strvec v = EL_STRVEC_INIT;

	for (const char *s = text; s && (s = strstr(s, "compute_")) != NULL; s += 8) {
		size_t len = 8 + strspn(s + 8, "0123456789");
		char *name = el_xstrndup(s, len);
		bool dup = false;

		for (size_t i = 0; i < v.n; i++)
			dup |= strcmp(v.v[i], name) == 0;
		if (len == 8 || dup || (s[len] >= 'a' && s[len] <= 'z')) {
			free(name);
			continue;
		}
		el_strvec_push_owned(&v, name);
	}
	return el_strvec_detach(&v);
}

static char *join_argv(const char *const *argv)
{
	el_buf b = EL_BUF_INIT(1u << 16);

	for (const char *const *a = argv; *a; a++)
		el_buf_addf(&b, "%s%s", a == argv ? "" : " ", *a);
	return el_buf_detach(&b);
}

/* The fix for a failed compile: the rules' (gcc too new), else what nvcc's own message says. */
static void explain(el_verify_run *run, el_verify_stage *st, const char *release, const char *output)
{
	const envlock_finding *f = NULL;
	const char *later;

	if (release) {
		char *tail = el_xasprintf("nvcc %s", release);

		f = el_verify_finding(run, "gcc-too-new-for-nvcc", NULL, tail);
		free(tail);
	}
	if (f) {
		el_jset_str(st->figures, "rule", f->rule);
		el_jset_str(st->figures, "cause", f->message);
		el_verify_fix(st, "%s (%s)", f->fix, f->message);
		return;
	}
	later = output ? strstr(output, "gcc versions later than ") : NULL;
	if (later) {
		int max = atoi(later + strlen("gcc versions later than "));

		if (max > 0)
			el_verify_fix(st, "nvcc accepts gcc up to %d: install gcc-%d and g++-%d and build with nvcc -ccbin g++-%d",
				      max, max, max, max);
	}
}

static int write_sources(el_verify_run *run, char **cu)
{
	char *h = el_path_join(run->dir, "mlp.h");
	int rc;

	*cu = el_path_join(run->dir, "mlp.cu");
	rc = el_write_atomic(run->ctx, h, el_verify_mlp_h, strlen(el_verify_mlp_h), 0600);
	if (rc == 0)
		rc = el_write_atomic(run->ctx, *cu, el_verify_mlp_cu, strlen(el_verify_mlp_cu), 0600);
	free(h);
	return rc;
}

/* The GPUs' compute capabilities, as nvidia-smi told the probe (borrowed, NULL-terminated; NULL for none). */
static const char **device_ccs(const el_verify_run *run)
{
	const char **ccs = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < run->live->gpu.ndevices; i++) {
		const char *cc = run->live->gpu.devices[i].compute_capability;

		if (cc) {
			EL_GROW(ccs, n + 2, cap);
			ccs[n++] = cc;
			ccs[n] = NULL;
		}
	}
	return ccs;
}

/* nvcc's architectures: --list-gpu-arch, else the compute_NN names in --help (older nvcc). */
static char **nvcc_archs(const el_verify_run *run, const char *nvcc)
{
	char *list = nvcc_query(run, nvcc, "--list-gpu-arch"), **archs = arch_names(list);

	if (!archs[0]) {
		free(list);
		list = nvcc_query(run, nvcc, "--help");
		el_strv_free(archs);
		archs = arch_names(list);
	}
	free(list);
	return archs;
}

/* nvcc's version: the probe's, or what nvcc --version says; "" when unknown. */
static char *nvcc_version(const el_verify_run *run, const char *nvcc, const el_toolkit *tk)
{
	const char *known = tk ? tk->nvcc.version : NULL;
	char *out, *at, *v;

	if (!known && tk)
		known = tk->version;
	if (known)
		return el_xstrdup(known);
	out = nvcc_query(run, nvcc, "--version");
	at = out ? strstr(out, ", V") : NULL;
	v = at ? el_xstrndup(at + 3, strspn(at + 3, "0123456789.")) : el_xstrdup("");
	free(out);
	return v;
}

/* Compile the written sources; nvcc's exit status in *status and its output (stdout and stderr) in out. */
static int compile(el_verify_run *run, el_verify_stage *st, const char *nvcc, char *const *flags,
		   const char *cu, el_buf *out, int *status)
{
	const char *fixed[] = { nvcc, "-fmad=false" }, *tail[] = { "-o", run->program, cu, "-ldl" };
	el_spawn_opts so = { run->envp, 1 };
	size_t nflags = 0, k = 0;
	const char **argv;
	struct timespec t0;
	char *cmdline, secs[32];
	int rc;

	while (flags[nflags])
		nflags++;
	argv = el_xcalloc(2 + nflags + 4 + 1, sizeof(*argv));
	for (size_t i = 0; i < 2; i++)
		argv[k++] = fixed[i];
	for (size_t i = 0; i < nflags; i++)
		argv[k++] = flags[i];
	for (size_t i = 0; i < 4; i++)
		argv[k++] = tail[i];
	cmdline = join_argv(argv);
	el_jset_str(st->figures, "command", cmdline);
	free(cmdline);
	el_verify_progress(run, "compiling the training program with nvcc");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = el_spawn_ex(argv, EL_NVCC_COMPILE_MS, out, status, &so);
	snprintf(secs, sizeof(secs), "%.2f", el_verify_seconds_since(&t0));
	el_jset(st->figures, "seconds", cJSON_CreateNumber(strtod(secs, NULL)));
	free(argv);
	return rc;
}

void el_verify_toolchain(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_TOOLCHAIN];
	el_buf tried = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the nvcc paths tried");
	el_buf out = EL_BUF_INIT(EL_NVCC_OUTPUT);
	const el_toolkit *tk;
	const char *source = NULL, *gcc = run->live->compilers.def.version, *cc_name = run->live->compilers.def.name;
	const char **ccs = NULL;
	char *nvcc, *home = NULL, *version = NULL, **archs = NULL, **flags = NULL;
	char *desc = NULL, *cu = NULL;
	int status = -1, rc;

	nvcc = choose_nvcc(run, &source, &tried);
	if (!nvcc) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "no nvcc found (looked for %s)", el_buf_cstr(&tried));
		el_verify_fix(st, "install the CUDA toolkit, or name the toolkit folder to compile with");
		goto done;
	}
	el_jset_str(st->figures, "nvcc", nvcc);
	el_jset_str(st->figures, "found_by", source);
	if (!el_is_executable(nvcc)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s': %s", nvcc,
			      access(nvcc, F_OK) == 0 ? "not an executable file" : "no such file");
		el_verify_fix(st, "name a CUDA toolkit folder to compile with: the one holding bin/nvcc");
		goto done;
	}
	tk = toolkit_of_nvcc(run, nvcc, &home);
	el_jset_str(st->figures, "toolkit", home);
	version = nvcc_version(run, nvcc, tk);
	if (*version)
		el_jset_str(st->figures, "nvcc_version", version);
	if (tk && tk->version)
		run->toolkit_version = el_xstrdup(tk->version);
	if (gcc) {
		char *hc = el_xasprintf("%s %s", cc_name ? cc_name : "gcc", gcc);

		el_jset_str(st->figures, "host_compiler", hc);
		free(hc);
	}

	el_verify_progress(run, "asking nvcc for its GPU architectures");
	ccs = device_ccs(run);
	archs = nvcc_archs(run, nvcc);
	flags = el_verify_arch_flags((const char *const *)archs, ccs, &desc);
	el_jset_str(st->figures, "architectures", desc);
	if (!flags) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", desc);
		el_verify_fix(st, "compile with a CUDA toolkit that still supports this GPU");
		goto done;
	}
	if (write_sources(run, &cu) != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", envlock_error_last(run->ctx));
		goto done;
	}
	run->program = el_path_join(run->dir, "mlp");
	rc = compile(run, st, nvcc, flags, cu, &out, &status);
	if (rc == ENVLOCK_ETIMEOUT) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "nvcc was still compiling after %d s and was stopped", EL_NVCC_COMPILE_MS / 1000);
	} else if (rc != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' could not be started", nvcc);
	} else if (status != 0 || !el_is_executable(run->program)) {
		char *release = tk && tk->release ? el_xstrdup(tk->release)
			      : *version ? el_version_prefix(version, 2) : NULL;
		char *first = el_verify_first_error(out.data, out.len);

		el_jset_int(st->figures, "exit_status", status);
		el_jset_str(st->figures, "error", first);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "nvcc %s failed: %s", *version ? version : nvcc,
			      first ? first : "no message");
		explain(run, st, release, out.data);
		free(release);
		free(first);
	} else {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "nvcc %s (%s) with gcc %s compiled the training program: %s",
			      *version ? version : "(version unknown)", nvcc, gcc ? gcc : "(version unknown)", desc);
	}
done:
	if (st->pub.status != ENVLOCK_VERIFY_PASS) {
		free(run->program);
		run->program = NULL;
	}
	free(ccs);
	free(nvcc);
	free(home);
	free(version);
	el_strv_free(archs);
	el_strv_free(flags);
	free(desc);
	free(cu);
	el_buf_release(&tried);
	el_buf_release(&out);
}
