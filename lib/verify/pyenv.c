/*
 * The stages of the locked Python environment: torch, conv, mmcv and
 * openmmlab. They run the environment's own python on a small script
 * envlock carries as text (programs/envcheck.py), so what is judged is
 * what that python really imports and loads: torch's version, its
 * build's CUDA, the cuDNN it loads, one convolution forward and backward
 * on the GPU against the CPU, mmcv's compiled ops and nms on CUDA, and
 * each OpenMMLab codebase the lock has. The script writes KEY=VALUE
 * lines into verify's private folder as it goes; they are read back
 * with limits, and each failure names the exception's last line and the
 * likely cause (a CPU-only torch, mmcv without ops, another version).
 *
 * Which python: the caller's (--python, restore's), else the lockfile's
 * when this machine's probe knows it (a lockfile names versions, not
 * programs to run), else the one the probe of this machine chose.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knowledge/knowledge.h"
#include "lock/model.h"
#include "rules/rules.h"
#include "util/version.h"
#include "util/atomic.h"
#include "util/root.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "verify.h"

__asm__(".section .rodata\n"
	".global el_verify_envcheck_py\n"
	".type el_verify_envcheck_py, @object\n"
	"el_verify_envcheck_py:\n"
	".incbin \"lib/verify/programs/envcheck.py\"\n"
	".byte 0\n"
	".previous\n");

#define EL_PY_MS 300000             /* importing torch and mmdet from a slow network disk */
#define EL_PY_OUTPUT (1u << 20)     /* what the libraries print, for the last line of a crash */
#define EL_PY_REPORT (512u << 10)  /* 256 keys of values up to 1000 bytes */
#define EL_PY_MAX_LINE 4096

/* ---- the script's report ---- */

void el_verify_py_report_release(el_verify_py_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->kv[i].key);
		free(r->kv[i].val);
	}
	free(r->part);
	memset(r, 0, sizeof(*r));
}

const char *el_verify_py_get(const el_verify_py_report *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->kv[i].key, key) == 0)
			return r->kv[i].val;
	return NULL;
}

void el_verify_py_report_parse(el_verify_py_report *r, const char *text, size_t len)
{
	const char *pos = text, *end, *line;
	size_t n;

	memset(r, 0, sizeof(*r));
	if (!text)
		return;
	end = text + (len > EL_PY_REPORT ? EL_PY_REPORT : len);
	while (el_next_line(&pos, end, &line, &n)) {
		const char *eq = memchr(line, '=', n);
		size_t kn, vn;

		if (n > EL_PY_MAX_LINE || !eq || eq == line)
			continue;
		kn = (size_t)(eq - line);
		vn = n - kn - 1;
		if (!r->started) {
			/* the first line says whose report this is */
			if (kn == 7 && memcmp(line, "program", 7) == 0 && vn == 18 && memcmp(eq + 1, "envlock-envcheck 1", 18) == 0)
				r->started = true;
			continue;
		}
		if (kn == 3 && memcmp(line, "end", 3) == 0) {
			r->complete = vn == 1 && eq[1] == '1';
			break;
		}
		if (kn == 4 && memcmp(line, "part", 4) == 0) {
			free(r->part);
			r->part = el_xstrndup(eq + 1, vn);
			continue;
		}
		if (kn > 128 || r->n >= EL_VERIFY_PY_MAX_KEYS)
			continue;
		{
			char *key = el_xstrndup(line, kn);

			if (el_verify_py_get(r, key)) {
				free(key); /* the first one counts */
				continue;
			}
			r->kv[r->n].key = key;
			r->kv[r->n].val = el_xstrndup(eq + 1, vn);
			r->n++;
		}
	}
}

/* ---- what the run knows ---- */

typedef struct {
	el_verify_run *run;
	const el_view *exp;      /* what is expected: the lockfile's view, else this machine's */
	const char *exp_name;    /* the lockfile's name, or "this environment's probe" */
	const char *python;
	const el_verify_py_report *r;
	bool gpu_machine;        /* this machine has a GPU (and the GPU parts are not left out) */
	bool torch_ok;           /* torch imported */
	bool torch_gpu;          /* torch can use a GPU */
} pyenv;

static el_verify_stage *stage(pyenv *p, int i)
{
	return &p->run->v->stage[i];
}

static const char *get(const pyenv *p, const char *key)
{
	return el_verify_py_get(p->r, key);
}

/* Does the view record a framework (by its registry key) or one of its pip distributions? */
static bool has_framework(const el_view *v, const char *key, const char **version)
{
	const el_framework *fw = el_view_framework(v, key);
	const el_framework_info *info = el_framework_find(key);

	*version = NULL;
	if (fw && fw->st.present) {
		*version = fw->version ? fw->version : fw->dist_version;
		return true;
	}
	for (int i = 0; info && i < 4 && info->dists[i]; i++) {
		const el_pip_dist *d = el_view_pip_dist(v, info->dists[i]);

		if (d) {
			*version = d->version;
			return true;
		}
	}
	return false;
}

/* Is path, an executable, one of the Python environments this machine's probe found? */
static bool probe_knows(const el_view *live, const char *path)
{
	const char *prefixes[64];
	size_t n = 0;
	struct stat st;

	if (!path || path[0] != '/' || strstr(path, "/../") || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    access(path, X_OK) != 0)
		return false;
	if (live->python.executable && strcmp(live->python.executable, path) == 0)
		return true;
	prefixes[n++] = live->python.prefix;
	prefixes[n++] = live->conda.prefix;
	prefixes[n++] = live->conda.root_prefix;
	for (size_t i = 0; i < live->python.ncandidates && n < 48; i++)
		prefixes[n++] = live->python.candidates[i].prefix;
	for (size_t i = 0; i < live->conda.nenvs && n < 64; i++)
		prefixes[n++] = live->conda.envs[i].prefix;
	for (size_t i = 0; i < n; i++) {
		size_t k = prefixes[i] ? strlen(prefixes[i]) : 0;

		if (k && strncmp(path, prefixes[i], k) == 0 && strncmp(path + k, "/bin/", 5) == 0 &&
		    !strchr(path + k + 5, '/'))
			return true;
	}
	return false;
}

/* The python to run, or NULL with *skip saying why (malloc'd). */
static char *choose_python(pyenv *p, char **skip)
{
	const el_verify_run *run = p->run;

	if (run->opts->python)
		return el_xstrdup(run->opts->python);
	if (run->locked) {
		const char *exe = run->locked->python.executable;

		if (!run->locked->python.st.present || !exe) {
			*skip = el_xasprintf("%s has no Python environment", p->exp_name);
			return NULL;
		}
		if (!probe_knows(run->live, exe)) {
			*skip = el_xasprintf("%s's python '%s' is not one this machine's probe found (name it with --python to check it)",
					     p->exp_name, exe);
			return NULL;
		}
		return el_xstrdup(exe);
	}
	if (!run->live->python.st.present || !run->live->python.executable) {
		*skip = el_xstrdup("no Python environment found on this machine (name one with --python)");
		return NULL;
	}
	return el_xstrdup(run->live->python.executable);
}

/* ---- running the script ---- */

/* The last line of what python printed that is not blank (a traceback ends with the exception); malloc'd or NULL. */
static char *last_output_line(const el_buf *out)
{
	const char *pos = out->data, *end = out->data + out->len, *line, *last = NULL;
	size_t n, lastn = 0;

	if (!out->data)
		return NULL;
	while (el_next_line(&pos, end, &line, &n)) {
		const char *s = line;
		size_t k = n;

		el_trim(&s, &k);
		if (k) {
			last = s;
			lastn = k;
		}
	}
	return last ? el_xstrndup(last, lastn > 400 ? 400 : lastn) : NULL;
}

/*
 * What the script's run needs, made on the main thread before the run
 * starts (so that only el_spawn_ex and a read happen on the python's
 * thread): the script written into the private folder, and its argv.
 * On failure *why says why (malloc'd) and nothing is to be run.
 */
static void prepare_script(el_verify_run *run, const char *python, const char *const *imports, size_t nimports,
			   bool mmcv, char **why)
{
	el_verify_py_run *py = &run->py;
	char *src = el_path_join(run->dir, "envcheck.py");
	size_t k = 0;

	py->report = el_path_join(run->dir, "envcheck.out");
	if (el_write_atomic(run->ctx, src, el_verify_envcheck_py, strlen(el_verify_envcheck_py), 0600) != 0) {
		*why = el_xstrdup(envlock_error_last(run->ctx));
		free(src);
		return;
	}
	py->src = src;
	/* -B: importing the environment writes no .pyc files into it */
	py->argv[k++] = python;
	py->argv[k++] = "-B";
	py->argv[k++] = src;
	py->argv[k++] = "--out";
	py->argv[k++] = py->report;
	if (run->opts->cpu_only)
		py->argv[k++] = "--cpu-only";
	if (mmcv)
		py->argv[k++] = "--mmcv";
	for (size_t i = 0; i < nimports; i++) {
		py->argv[k++] = "--import";
		py->argv[k++] = imports[i]; /* el_frameworks' names: static */
	}
	py->argv[k] = NULL;
}

/* Run the prepared script and read its report back; nothing here touches run->ctx (it may be another thread). */
static void run_script(el_verify_run *run)
{
	el_verify_py_run *py = &run->py;
	el_buf out = EL_BUF_INIT(EL_PY_OUTPUT), text = EL_BUF_INIT(EL_PY_REPORT);
	el_spawn_opts so = { run->envp, 1 };
	el_root live = EL_ROOT_LIVE_INIT;
	el_verify_py_report *r = &py->r;
	int status = -1, rc, err_no = 0;

	rc = el_spawn_ex(py->argv, EL_PY_MS, &out, &status, &so);
	if (rc == 0 || rc == ENVLOCK_ETIMEOUT)
		if (el_root_read(&live, py->report, &text, &err_no) == 0)
			el_verify_py_report_parse(r, text.data, text.len);
	if (rc == ENVLOCK_ENOTFOUND) {
		py->why = el_xasprintf("'%s' could not be started", py->python);
	} else if (!r->started || !r->complete) {
		char *last = last_output_line(&out);
		char *how = rc == ENVLOCK_ETIMEOUT
			? el_xasprintf("was still running after %d s and was stopped", EL_PY_MS / 1000)
			: status > 128 && status < 128 + NSIG
			? el_xasprintf("was killed by signal %d (%s)", status - 128, strsignal(status - 128))
			: el_xasprintf("stopped with exit status %d", status);

		py->why = r->part
			? el_xasprintf("'%s' %s in the %s part%s%s", py->python, how, r->part, last ? ": " : "", last ? last : "")
			: el_xasprintf("'%s' %s before it reported%s%s", py->python, how, last ? ": " : "", last ? last : "");
		free(how);
		free(last);
	}
	py->ran = true;
	el_buf_release(&out);
	el_buf_release(&text);
}

static void *script_thread(void *data)
{
	run_script(data);
	return NULL;
}

/* ---- judging ---- */

/* v up to its local label ("1.10.0+cu113" -> "1.10.0"), malloc'd */
static char *public_version(const char *v)
{
	const char *plus = strchr(v, '+');

	return plus ? el_xstrndup(v, (size_t)(plus - v)) : el_xstrdup(v);
}

/* The same release: equal, or equal up to the local label, or equal as versions. */
static bool same_version(const char *a, const char *b)
{
	char *pa, *pb;
	bool same;

	if (!a || !b || !*a || !*b)
		return true; /* one side does not say (a module without __version__) */
	if (strcmp(a, b) == 0)
		return true;
	pa = public_version(a);
	pb = public_version(b);
	same = strcmp(pa, pb) == 0 || envlock_version_cmp(pa, pb) == 0;
	free(pa);
	free(pb);
	return same;
}

/* cuDNN's version number (torch.backends.cudnn.version(), CUDNN_VERSION) as "M.m.p". */
static char *cudnn_text(long long n)
{
	if (n >= 90000)
		return el_xasprintf("%lld.%lld.%lld", n / 10000, n % 10000 / 100, n % 100);
	return el_xasprintf("%lld.%lld.%lld", n / 1000, n % 1000 / 100, n % 100);
}

/* The first three parts of a version ("8.2.1.32" -> "8.2.1"), malloc'd. */
static char *three_parts(const char *v)
{
	const char *s = v;

	for (int dots = 0; *s; s++)
		if (*s == '.' && ++dots == 3)
			break;
	return el_xstrndup(v, (size_t)(s - v));
}

/*
 * The cuDNN the expected environment's torch loads: the version of the
 * library its loads record for torch, else of the environment's own
 * cuDNN install; NULL when neither says.
 */
static const char *expected_cudnn(const el_view *v)
{
	const el_load_need *need = el_loads_find(&v->loads, "torch", "libcudnn.so");

	if (need && (need->realpath || need->path)) {
		const char *ver = el_view_library_version(v, need->realpath ? need->realpath : need->path);

		if (ver)
			return ver;
	}
	for (size_t i = 0; i < v->cudnn.ninstalls; i++)
		if (v->cudnn.installs[i].version)
			return v->cudnn.installs[i].version;
	return NULL;
}

/* PyTorch's wheel tag of a CUDA version: "10.2" -> "102" (malloc'd) */
static char *cu_tag(const char *cuda)
{
	long major = el_version_major(cuda);
	const char *dot = strchr(cuda, '.');

	return el_xasprintf("%ld%ld", major < 0 ? 0 : major, dot ? strtol(dot + 1, NULL, 10) : 0L);
}

static bool is_none(const char *s)
{
	return !s || strcmp(s, "None") == 0;
}

/* the fix for an import that failed with err; module is what was imported */
static void import_fix(el_verify_stage *st, const pyenv *p, const char *module, const char *err,
		       const char *locked_version)
{
	char *missing = el_xasprintf("No module named '%s'", module);

	if (strstr(err, missing))
		el_verify_fix(st, "likely cause: %s is not installed in this environment ('%s'), though %s has %s %s: install it there (envlock restore installs the locked pins)",
			      module, p->python, p->exp_name, module, locked_version ? locked_version : "");
	else if (strstr(err, "GLIBC_"))
		el_verify_fix(st, "likely cause: a compiled module needs a newer glibc than this machine has (envlock ldd on it says which)");
	else if (strstr(err, "cannot open shared object file"))
		el_verify_fix(st, "likely cause: a library a compiled module needs is not on the loader's path (envlock ldd on the module says what it would load)");
	else if (strstr(err, "undefined symbol"))
		el_verify_fix(st, "likely cause: a compiled module was built against another torch (or CUDA) than the one imported: reinstall it for torch %s",
			      get(p, "torch_version") ? get(p, "torch_version") : "");
	else
		el_verify_fix(st, "likely cause: the error is %s's own, raised while it was imported; run '%s -c \"import %s\"' to see its traceback",
			      module, p->python, module);
	free(missing);
}

/* torch built for CUDA cuda (tag: "102"), when the knowledge has no command for that build */
static void torch_cpu_fallback(el_verify_stage *st, const char *torch, const char *cuda, const char *tag)
{
	const char *host, *conda;

	el_kb_torch_sources(el_kb_builtin(), &host, &conda);
	el_verify_fix(st, "likely cause: a CPU-only torch build (pip's default wheel on some platforms, +cpu, or Debian's python3-torch) was installed where the CUDA %s one was meant: install torch %s built for CUDA %s (a +cu%s wheel from %s, or conda's %s for CUDA %s)",
		      cuda, torch, cuda, tag, host, conda, cuda);
}

/* The build row of mmcv's release version, into *b; false when the knowledge has none. */
static bool mmcv_build(const char *version, el_kb_mmcv_build *b)
{
	return version && el_kb_mmcv_build_of(el_kb_builtin(), version, b);
}

static void judge_torch(pyenv *p)
{
	el_verify_stage *st = stage(p, EL_VERIFY_TORCH);
	const el_framework *fw = el_view_framework(p->exp, "torch");
	const char *version = get(p, "torch_version"), *cuda = get(p, "torch_cuda"), *err = get(p, "torch_error");
	const char *cudnn = get(p, "torch_cudnn"), *avail = get(p, "torch_cuda_available"), *count = get(p, "torch_device_count");
	const char *locked_version = NULL, *locked_cuda = fw && fw->st.present ? fw->cuda : NULL;
	const char *locked_cudnn = expected_cudnn(p->exp);
	bool locked_cpu = fw && fw->st.present && (fw->cuda_none || fw->cpu_only == EL_YES);
	char *cudnn_ver = NULL, *build = NULL, *gpus = NULL, *locked3 = locked_cudnn ? three_parts(locked_cudnn) : NULL;
	char *tag = locked_cuda ? cu_tag(locked_cuda) : NULL;

	has_framework(p->exp, "torch", &locked_version);
	el_jset_str(st->figures, "python", p->python);
	el_jset_str(st->figures, "python_version", get(p, "python_version"));
	el_jset_str(st->figures, "expected_version", locked_version);
	el_jset_str(st->figures, "expected_from", p->exp_name);
	if (locked_cuda)
		el_jset_str(st->figures, "expected_cuda", locked_cuda);
	else if (locked_cpu)
		el_jset(st->figures, "expected_cuda", cJSON_CreateNull());
	el_jset_str(st->figures, "expected_cudnn", locked_cudnn);
	if (err) {
		el_jset_str(st->figures, "error", err);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "import torch with '%s': %s", p->python, err);
		import_fix(st, p, "torch", err, locked_version);
		goto done;
	}
	if (!version) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' did not say which torch it imports", p->python);
		goto done;
	}
	p->torch_ok = true;
	el_jset_str(st->figures, "version", version);
	el_jset_str(st->figures, "file", get(p, "torch_file"));
	el_jset_str_or_null(st->figures, "cuda", is_none(cuda) ? NULL : cuda);
	if (cudnn && !is_none(cudnn)) {
		char *e;
		long long n = strtoll(cudnn, &e, 10);

		if (*e == 0 && n > 0 && n < 1000000)
			cudnn_ver = cudnn_text(n);
	}
	el_jset_str_or_null(st->figures, "cudnn", cudnn_ver);
	if (get(p, "torch_cudnn_error"))
		el_jset_str(st->figures, "cudnn_error", get(p, "torch_cudnn_error"));
	p->torch_gpu = avail && strcmp(avail, "1") == 0;
	if (avail)
		el_jset_bool(st->figures, "cuda_available", p->torch_gpu);
	if (count)
		el_jset_int(st->figures, "device_count", strtoll(count, NULL, 10));
	if (get(p, "torch_device"))
		el_jset_str(st->figures, "device", get(p, "torch_device"));

	build = is_none(cuda) ? el_xstrdup("a CPU-only build (torch.version.cuda is None)")
			      : el_xasprintf("built for CUDA %s", cuda);
	if (p->run->opts->cpu_only)
		gpus = el_xstrdup("GPU not asked (CPU parts only)");
	else if (p->torch_gpu)
		gpus = el_xasprintf("torch.cuda.is_available() True, %s GPU(s)", count ? count : "?");
	else
		gpus = el_xasprintf("torch.cuda.is_available() False%s", p->gpu_machine ? "" : " (no GPU)");

	if (locked_version && !same_version(version, locked_version)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "a version mismatch: torch %s imports from '%s', but %s has torch %s",
			      version, get(p, "torch_file") ? get(p, "torch_file") : "?", p->exp_name, locked_version);
		el_verify_fix(st, "likely cause: another torch was installed over the locked one, or an earlier one on sys.path shadows it: install torch %s into '%s'",
			      locked_version, p->python);
	} else if (is_none(cuda) && locked_cuda) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "a CPU-only torch: torch %s has torch.version.cuda None, but %s's torch was built for CUDA %s",
			      version, p->exp_name, locked_cuda);
		char *cmd = el_fix_torch_build(locked_version ? locked_version : version, locked_cuda);

		if (cmd)
			el_verify_fix(st, "likely cause: a CPU-only torch build (pip's default wheel on some platforms, +cpu, or Debian's python3-torch) was installed where the CUDA %s one was meant: %s",
				      locked_cuda, cmd);
		else
			torch_cpu_fallback(st, locked_version ? locked_version : version, locked_cuda, tag);
		free(cmd);
	} else if (!is_none(cuda) && locked_cuda && !same_version(cuda, locked_cuda)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "torch %s was built for CUDA %s, but %s's torch for CUDA %s", version, cuda,
			      p->exp_name, locked_cuda);
		el_verify_fix(st, "likely cause: another build of torch %s was installed: install the one built for CUDA %s",
			      locked_version ? locked_version : version, locked_cuda);
	} else if (!is_none(cuda) && locked_cpu) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "torch %s is built for CUDA %s, but %s's torch was a CPU-only build", version,
			      cuda, p->exp_name);
		el_verify_fix(st, "likely cause: another build of torch was installed than the locked CPU-only one");
	} else if (cudnn_ver && locked_cudnn && !same_version(cudnn_ver, locked3)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "torch loads cuDNN %s, but %s's torch loaded cuDNN %s", cudnn_ver, p->exp_name,
			      locked_cudnn);
		el_verify_fix(st, "likely cause: another cuDNN comes first on the loader's path (LD_LIBRARY_PATH, ld.so.cache) or torch's bundled one was replaced: envlock ldd on torch/_C*.so says which it loads");
	} else if (!p->torch_gpu && p->gpu_machine && !is_none(cuda)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "torch %s, built for CUDA %s, cannot use this machine's GPU: torch.cuda.is_available() is False",
			      version, cuda);
		el_verify_fix(st, "likely cause: the driver is too old for CUDA %s (the runtime stage says what it supports), or CUDA_VISIBLE_DEVICES hides the GPUs",
			      cuda);
	} else if (!p->torch_gpu && p->gpu_machine && !locked_cpu) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "a CPU-only torch: torch %s has torch.version.cuda None on a machine with a GPU", version);
		el_verify_fix(st, "likely cause: a CPU-only torch build was installed: install torch %s built for this machine's CUDA",
			      version);
	} else {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "torch %s imports from '%s': %s; cuDNN %s; %s%s%s", version,
			      get(p, "torch_file") ? get(p, "torch_file") : "?", build, cudnn_ver ? cudnn_ver : "none", gpus,
			      locked_version ? "; matches " : "", locked_version ? p->exp_name : "");
	}
done:
	free(locked3);
	free(tag);
	free(cudnn_ver);
	free(build);
	free(gpus);
}

/* "skipped" for a GPU part: for want of a GPU (no_gpu), or for why the GPU cannot be used */
static bool gpu_skip(pyenv *p, el_verify_stage *st, const char *what_ran)
{
	if (p->run->opts->cpu_only) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "CPU parts only: %s; the GPU part was not run", what_ran);
		st->no_gpu = true;
		return true;
	}
	if (!p->gpu_machine) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "no GPU: %s; the GPU part was not run", what_ran);
		st->no_gpu = true;
		return true;
	}
	if (!p->torch_gpu) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "torch cannot use the GPU (the torch stage says why): %s; the GPU part was not run",
			      what_ran);
		return true;
	}
	return false;
}

static void judge_conv(pyenv *p)
{
	el_verify_stage *st = stage(p, EL_VERIFY_CONV);
	const char *err = get(p, "conv_cpu_error"), *gerr = get(p, "conv_gpu_error"), *rel = get(p, "conv_max_rel_err");
	double e;

	if (!p->torch_ok) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "not run: torch did not import (the torch stage says why)");
		return;
	}
	el_jset_str(st->figures, "shape", get(p, "conv_shape"));
	el_jset(st->figures, "tolerance", cJSON_CreateNumber(ENVLOCK_VERIFY_CONV_TOLERANCE));
	if (err) {
		el_jset_str(st->figures, "cpu_error", err);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the convolution on the CPU failed: %s", err);
		el_verify_fix(st, "likely cause: a broken torch install (its compiled part does not match its Python files): reinstall torch");
		return;
	}
	if (!get(p, "conv_cpu"))
		return;
	el_jset_str(st->figures, "cpu", "ran");
	if (gpu_skip(p, st, "the convolution forward and backward ran on the CPU (float64)"))
		return;
	if (gerr) {
		el_jset_str(st->figures, "gpu_error", gerr);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the convolution on the GPU failed: %s", gerr);
		if (strstr(gerr, "no kernel image"))
			el_verify_fix(st, "likely cause: this torch was not built for this GPU's architecture: install a torch build that lists it (torch.cuda.get_arch_list())");
		else if (strstr(gerr, "CUDNN") || strstr(gerr, "cuDNN") || strstr(gerr, "cudnn"))
			el_verify_fix(st, "likely cause: the cuDNN torch loads does not match its build (the torch stage names it), or it is out of GPU memory");
		else
			el_verify_fix(st, "likely cause: the driver, the GPU or torch's CUDA build (the runtime and torch stages say more)");
		return;
	}
	if (!rel)
		return;
	e = strtod(rel, NULL);
	el_jset(st->figures, "max_rel_error", cJSON_CreateNumber(e));
	if (get(p, "torch_device"))
		el_jset_str(st->figures, "device", get(p, "torch_device"));
	if (!(e <= ENVLOCK_VERIFY_CONV_TOLERANCE)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the convolution's forward and backward on the GPU differ from the CPU's by up to %.3g relative (%.0e allowed)",
			      e, ENVLOCK_VERIFY_CONV_TOLERANCE);
		el_verify_fix(st, "likely cause: a faulty GPU, or a cuDNN that does not match torch's build");
	} else {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "a convolution forward and backward on the GPU matches the CPU within %.0e (largest %.2g relative)",
			      ENVLOCK_VERIFY_CONV_TOLERANCE, e);
	}
}

/* Does a locked codebase call mmcv's compiled ops, or does the lock say mmcv has them? */
static bool ops_needed(const pyenv *p, const char **who)
{
	const el_framework *mmcv = el_view_framework(p->exp, "mmcv");
	const char *v;

	*who = NULL;
	if (mmcv && mmcv->st.present && mmcv->ops == EL_YES)
		return true;
	for (const el_framework_info *f = el_frameworks; f->key; f++)
		if ((f->flags & EL_FW_MMCV_OPS) && has_framework(p->exp, f->key, &v)) {
			*who = f->key;
			return true;
		}
	return false;
}

static void judge_mmcv(pyenv *p, bool asked)
{
	el_verify_stage *st = stage(p, EL_VERIFY_MMCV);
	const char *locked_version = NULL, *version = get(p, "mmcv_version"), *err = get(p, "mmcv_error");
	const char *ext = get(p, "mmcv_ext"), *who, *cerr = get(p, "nms_cpu_error"), *gerr = get(p, "nms_gpu_error");
	const char *ref = get(p, "nms_ref_keep"), *cpu = get(p, "nms_cpu_keep"), *gpu = get(p, "nms_gpu_keep");
	el_kb_mmcv_build b;
	char *ran = NULL;

	if (!asked) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "%s has no mmcv", p->exp_name);
		return;
	}
	has_framework(p->exp, "mmcv", &locked_version);
	el_jset_str(st->figures, "expected_version", locked_version);
	if (err) {
		el_jset_str(st->figures, "error", err);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "import mmcv with '%s': %s", p->python, err);
		import_fix(st, p, "mmcv", err, locked_version);
		return;
	}
	if (!version)
		return;
	el_jset_str(st->figures, "version", version);
	el_jset_str(st->figures, "file", get(p, "mmcv_file"));
	if (ext)
		el_jset_bool(st->figures, "ops", strcmp(ext, "1") == 0);
	if (locked_version && !same_version(version, locked_version)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "a version mismatch: mmcv %s imports from '%s', but %s has mmcv %s", version,
			      get(p, "mmcv_file") ? get(p, "mmcv_file") : "?", p->exp_name, locked_version);
		el_verify_fix(st, "likely cause: another mmcv was installed over the locked one (mim or pip resolving a newer one): install %s %s",
			      mmcv_build(locked_version, &b) ? b.package : "mmcv", locked_version);
		return;
	}
	if (ext && strcmp(ext, "0") == 0) {
		const char *e = get(p, "mmcv_ext_error");
		bool needed = ops_needed(p, &who);

		el_jset_str(st->figures, "ops_error", e);
		if (!needed) {
			el_verify_set(st, ENVLOCK_VERIFY_PASS, "mmcv %s imports; it has no compiled ops (import mmcv._ext: %s), as %s has it, and no locked codebase needs them",
				      version, e ? e : "?", p->exp_name);
			return;
		}
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "mmcv %s has no compiled ops: import mmcv._ext: %s%s%s%s", version, e ? e : "?",
			      who ? " (" : "", who ? who : "", who ? " calls them)" : "");
		if (mmcv_build(version, &b)) {
			/* the family of that release: the package with the ops, its prebuilt wheel, else a build */
			const char *tc = get(p, "torch_cuda");
			char *cmd = el_fix_mmcv_wheel(b.package, version, get(p, "torch_version"),
						      tc && strcmp(tc, "None") != 0 ? tc : NULL);

			if (!cmd)
				cmd = el_kb_mmcv_build_pip(&b, version);
			el_verify_fix(st, "likely cause: %s: install %s %s with its ops: %s", b.without_ops, b.package, version, cmd);
			free(cmd);
		}
		return;
	}
	if (!ext)
		return;
	el_jset_str(st->figures, "ops_file", get(p, "mmcv_ext_file"));
	if (!p->torch_ok) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "mmcv %s has compiled ops (mmcv._ext imports); nms was not run: torch did not import", version);
		return;
	}
	el_jset_str(st->figures, "nms_reference_keep", ref);
	if (cerr) {
		el_jset_str(st->figures, "nms_cpu_error", cerr);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "mmcv.ops.nms on the CPU: %s", cerr);
		el_verify_fix(st, "likely cause: mmcv's compiled ops were built against another torch than the one imported (%s): reinstall %s %s for it",
			      get(p, "torch_version") ? get(p, "torch_version") : "?", mmcv_build(version, &b) ? b.package : "mmcv",
			      version);
		return;
	}
	if (!cpu)
		return;
	el_jset_str(st->figures, "nms_cpu_keep", cpu);
	if (ref && strcmp(cpu, ref) != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "mmcv.ops.nms on the CPU keeps boxes %s, the reference keeps %s", cpu, ref);
		return;
	}
	ran = el_xasprintf("mmcv %s has compiled ops (mmcv._ext imports); nms on the CPU keeps boxes %s as the reference does", version, cpu);
	if (gpu_skip(p, st, ran))
		goto done;
	if (gerr) {
		el_jset_str(st->figures, "nms_gpu_error", gerr);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "mmcv.ops.nms on CUDA: %s", gerr);
		if (strstr(gerr, "not compiled with GPU") && mmcv_build(version, &b)) {
			/* a build that forces CUDA fixes it however this one came */
			char *cmd = el_kb_mmcv_build_pip(&b, version);

			el_verify_fix(st, "likely cause: %s %s was built without CUDA (a CPU wheel, or no nvcc at its build, or CUDA not forced): rebuild it for CUDA %s: %s",
				      b.package, version, get(p, "torch_cuda") ? get(p, "torch_cuda") : "?", cmd);
			free(cmd);
		} else if (strstr(gerr, "not compiled with GPU")) {
			el_verify_fix(st, "likely cause: mmcv %s was built without CUDA (a CPU wheel, or no nvcc at its build, or CUDA not forced): rebuild it for CUDA %s",
				      version, get(p, "torch_cuda") ? get(p, "torch_cuda") : "?");
		} else {
			el_verify_fix(st, "likely cause: mmcv's ops were built for another CUDA or GPU architecture than torch's (%s)",
				      get(p, "torch_cuda") ? get(p, "torch_cuda") : "?");
		}
		goto done;
	}
	if (!gpu)
		goto done;
	el_jset_str(st->figures, "nms_gpu_keep", gpu);
	if (strcmp(gpu, cpu) != 0)
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "mmcv.ops.nms on CUDA keeps boxes %s, on the CPU %s", gpu, cpu);
	else
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "mmcv %s with compiled ops: nms on CUDA keeps boxes %s, as on the CPU and the reference", version, gpu);
done:
	free(ran);
}

static void judge_imports(pyenv *p, const char *const *names, size_t n)
{
	el_verify_stage *st = stage(p, EL_VERIFY_OPENMMLAB);
	cJSON *list = n ? el_jset_arr(st->figures, "imports") : NULL;
	el_buf ok = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the names and the versions the script printed, in memory already");

	if (!n) {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "%s has no OpenMMLab codebase (mmdet, mmpose, mmpretrain, ...)", p->exp_name);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char key[160];
		const char *version, *err, *locked = NULL;
		cJSON *o = el_jpush_obj(list);

		has_framework(p->exp, names[i], &locked);
		snprintf(key, sizeof(key), "mod.%s.error", names[i]);
		err = get(p, key);
		snprintf(key, sizeof(key), "mod.%s.version", names[i]);
		version = get(p, key);
		el_jset_str(o, "module", names[i]);
		el_jset_str(o, "expected_version", locked);
		if (err) {
			el_jset_str(o, "error", err);
			el_verify_set(st, ENVLOCK_VERIFY_FAIL, "import %s with '%s': %s", names[i], p->python, err);
			if (strstr(err, "MMCV") || strstr(err, "mmcv"))
				el_verify_fix(st, "likely cause: the mmcv here (%s) is outside the versions %s %s accepts: install the locked mmcv",
					      get(p, "mmcv_version") ? get(p, "mmcv_version") : "not importable", names[i],
					      locked ? locked : "");
			else
				import_fix(st, p, names[i], err, locked);
			continue;
		}
		if (!version)
			continue;
		el_jset_str(o, "version", version);
		snprintf(key, sizeof(key), "mod.%s.file", names[i]);
		el_jset_str(o, "file", get(p, key));
		if (locked && !same_version(version, locked)) {
			el_verify_set(st, ENVLOCK_VERIFY_FAIL, "a version mismatch: %s %s imports, but %s has %s %s", names[i], version,
				      p->exp_name, names[i], locked);
			el_verify_fix(st, "likely cause: another %s was installed, or an earlier copy on sys.path (a repository on PYTHONPATH) shadows it: install %s %s",
				      names[i], names[i], locked);
			continue;
		}
		el_buf_addf(&ok, "%s%s %s", ok.len ? ", " : "", names[i], version);
	}
	if (ok.len)
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "%s import%s", el_buf_cstr(&ok), n > 1 ? "" : "s");
	el_buf_release(&ok);
}

/* ---- the stages ---- */

static const int env_stages[] = { EL_VERIFY_TORCH, EL_VERIFY_CONV, EL_VERIFY_MMCV, EL_VERIFY_OPENMMLAB };

static void skip_all(pyenv *p, const char *why)
{
	for (size_t i = 0; i < sizeof(env_stages) / sizeof(env_stages[0]); i++)
		el_verify_set(stage(p, env_stages[i]), ENVLOCK_VERIFY_SKIPPED, "%s", why);
}

/* the stage of a part the script names */
static int part_stage(const char *part)
{
	if (!part || strcmp(part, "torch") == 0)
		return EL_VERIFY_TORCH;
	if (strcmp(part, "conv") == 0)
		return EL_VERIFY_CONV;
	if (strcmp(part, "mmcv") == 0)
		return EL_VERIFY_MMCV;
	return EL_VERIFY_OPENMMLAB;
}

/* What both the run and the judging need: what is expected, and whether this machine has a GPU. */
static void setup(pyenv *p, el_verify_run *run, const char **imports, size_t *nimports, bool *mmcv)
{
	const char *v;

	memset(p, 0, sizeof(*p));
	p->run = run;
	p->exp = run->locked ? run->locked : run->live;
	/* as the lock stage names it */
	p->exp_name = run->locked ? (run->opts->lock_name ? run->opts->lock_name : "the lockfile") : "this environment's probe";
	p->gpu_machine = !run->opts->cpu_only &&
			 (run->ran && run->report.device_count >= 0 ? run->report.device_count > 0 : run->live->gpu.ndevices > 0);
	*mmcv = has_framework(p->exp, "mmcv", &v);
	*nimports = 0;
	for (const el_framework_info *f = el_frameworks; f->key && *nimports < EL_PY_MAX_IMPORTS; f++)
		if ((f->flags & EL_FW_OPENMMLAB) && strcmp(f->key, "mmcv") != 0 && has_framework(p->exp, f->key, &v))
			imports[(*nimports)++] = f->key;
}

void el_verify_pyenv_judge(el_verify_run *run, const char *python, const el_verify_py_report *r, const char *stopped)
{
	pyenv p;
	const char *imports[EL_PY_MAX_IMPORTS];
	size_t nimports;
	bool mmcv;

	setup(&p, run, imports, &nimports, &mmcv);
	p.python = python;
	p.r = r;
	if (!r->started) {
		el_verify_set(stage(&p, EL_VERIFY_TORCH), ENVLOCK_VERIFY_FAIL, "%s", stopped ? stopped : "no report");
		el_verify_fix(stage(&p, EL_VERIFY_TORCH), "likely cause: '%s' is not a working Python 3 (run it to see)", python);
		skip_all(&p, "not checked: the environment's python gave no report (the torch stage says why)");
		return;
	}
	if (stopped) {
		/* it stopped inside a part: that part fails, those after it were never reached */
		int at = part_stage(r->part);
		bool after = false;

		el_verify_set(stage(&p, at), ENVLOCK_VERIFY_FAIL, "%s", stopped);
		for (size_t i = 0; i < sizeof(env_stages) / sizeof(env_stages[0]); i++) {
			if (after)
				el_verify_set(stage(&p, env_stages[i]), ENVLOCK_VERIFY_SKIPPED,
					      "not checked: the environment's python stopped in the %s part", r->part ? r->part : "torch");
			after |= env_stages[i] == at;
		}
	}
	judge_torch(&p);
	judge_conv(&p);
	judge_mmcv(&p, mmcv);
	judge_imports(&p, imports, nimports);
	skip_all(&p, "not checked: the environment's python did not report it");
}

void el_verify_pyenv_start(el_verify_run *run)
{
	el_verify_py_run *py = &run->py;
	pyenv p;
	const char *imports[EL_PY_MAX_IMPORTS], *v;
	size_t nimports;
	bool mmcv;

	setup(&p, run, imports, &nimports, &mmcv);
	if (!(py->python = choose_python(&p, &py->skip)))
		return;
	if (!has_framework(p.exp, "torch", &v)) {
		py->skip = el_xasprintf("%s has no torch", p.exp_name);
		return;
	}
	prepare_script(run, py->python, imports, nimports, mmcv, &py->why);
	if (py->why)
		return;
	el_verify_progress(run, "importing torch and the frameworks with the environment's python (beside the compile)");
	/* without a thread, el_verify_pyenv runs it in place */
	py->started = pthread_create(&py->thread, NULL, script_thread, run) == 0;
}

static void join_script(el_verify_run *run)
{
	if (run->py.started) {
		pthread_join(run->py.thread, NULL);
		run->py.started = false;
	}
}

void el_verify_pyenv(el_verify_run *run)
{
	el_verify_py_run *py = &run->py;
	pyenv p;
	const char *imports[EL_PY_MAX_IMPORTS];
	size_t nimports;
	bool mmcv;

	setup(&p, run, imports, &nimports, &mmcv);
	if (!py->python) {
		skip_all(&p, py->skip);
		return;
	}
	for (size_t i = 0; i < sizeof(env_stages) / sizeof(env_stages[0]); i++)
		el_jset_str(stage(&p, env_stages[i])->figures, "python", py->python);
	if (py->skip) {
		skip_all(&p, py->skip);
		return;
	}
	join_script(run);
	if (!py->ran && !py->why)
		run_script(run);
	el_verify_pyenv_judge(run, py->python, &py->r, py->why);
}

void el_verify_pyenv_release(el_verify_run *run)
{
	el_verify_py_run *py = &run->py;

	join_script(run);
	el_verify_py_report_release(&py->r);
	free(py->python);
	free(py->skip);
	free(py->why);
	free(py->src);
	free(py->report);
	memset(py, 0, sizeof(*py));
}
