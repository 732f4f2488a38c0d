/*
 * The cuDNN stage. The loader's part runs in a small program built here
 * with this machine's C compiler (programs/cudnn_load.c, carried as
 * text), so cuDNN is loaded by its soname as any program would load it
 * (ld.so.cache, LD_LIBRARY_PATH) and envlock itself never loads a host
 * library. It reports cudnnGetVersion(), which is compared with the
 * locked version, or with the installed header's, and the file the
 * loader picked. When the loader cannot find it but the probe found the
 * file, the rules say why (a missing soname link, a stale ld.so.cache)
 * and how to fix it. Only libraries the probe found on this machine are
 * ever loaded by path: a lockfile names versions, not code to run. The
 * GPU part, one cuDNN operation checked against the CPU, runs in the
 * training program (mlp.cu) with the library found here.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock/model.h"
#include "util/version.h"
#include "util/atomic.h"
#include "util/root.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/xalloc.h"
#include "verify.h"

/*
 * The loader's source as text, with a NUL after it, as kernel.c carries
 * mlp.cu (the Makefile rebuilds this object when the file changes).
 */
__asm__(".section .rodata\n"
	".global el_verify_cudnn_load_c\n"
	".type el_verify_cudnn_load_c, @object\n"
	"el_verify_cudnn_load_c:\n"
	".incbin \"lib/verify/programs/cudnn_load.c\"\n"
	".byte 0\n"
	".previous\n");

#define EL_CC_MS 120000          /* compiling the loader */
#define EL_CC_OUTPUT (1u << 20)
#define EL_LOADER_MS 60000       /* loading cuDNN from a slow network disk */
#define EL_LOADER_OUTPUT (64u << 10)
#define EL_LOADER_MAX_LINE 4096

/*
 * cudnnGetVersion()'s number as "M.m.p": CUDNN_VERSION is MAJOR*10000 +
 * MINOR*100 + PATCHLEVEL from cuDNN 9.0 on, MAJOR*1000 + ... before
 * (cudnn_version.h of each release).
 */
static char *decode_version(size_t n)
{
	if (n >= 90000)
		return el_xasprintf("%zu.%zu.%zu", n / 10000, n % 10000 / 100, n % 100);
	return el_xasprintf("%zu.%zu.%zu", n / 1000, n % 1000 / 100, n % 100);
}

/* ---- what the loader prints ---- */

static void report_init(el_verify_cudnn_report *r)
{
	memset(r, 0, sizeof(*r));
	r->version = r->cudart = -1;
}

void el_verify_cudnn_report_release(el_verify_cudnn_report *r)
{
	free(r->loaded_path);
	free(r->error);
	report_init(r);
}

/* a decimal number of at most 18 digits (a size_t the loader printed), or -1 */
static long long parse_count(const char *v, size_t n)
{
	long long x = 0;

	if (n == 0 || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	return x;
}

void el_verify_cudnn_report_parse(el_verify_cudnn_report *r, const char *text, size_t len)
{
	el_verify_cudnn_report cur;
	const char *pos = text, *end, *line;
	bool in = false;
	size_t n;

	report_init(r);
	report_init(&cur);
	if (!text)
		return;
	end = text + (len > EL_LOADER_OUTPUT ? EL_LOADER_OUTPUT : len);
	while (el_next_line(&pos, end, &line, &n)) {
		const char *eq = memchr(line, '=', n), *v;
		size_t kn, vn;

		if (n > EL_LOADER_MAX_LINE || !eq)
			continue;
		kn = (size_t)(eq - line);
		v = eq + 1;
		vn = n - kn - 1;
		if (kn == 7 && memcmp(line, "program", 7) == 0) {
			/* a report starts: what came before it was the library's */
			el_verify_cudnn_report_release(&cur);
			in = vn == 20 && memcmp(v, "envlock-cudnn-load 1", 20) == 0;
		} else if (!in) {
			continue;
		} else if (kn == 5 && memcmp(line, "error", 5) == 0 && !cur.error) {
			cur.error = el_xstrndup(v, vn);
		} else if (kn == 6 && memcmp(line, "loaded", 6) == 0 && !cur.loaded) {
			cur.loaded = true;
			cur.loaded_path = vn ? el_xstrndup(v, vn) : NULL;
		} else if (kn == 7 && memcmp(line, "version", 7) == 0 && cur.version < 0) {
			cur.version = parse_count(v, vn);
		} else if (kn == 6 && memcmp(line, "cudart", 6) == 0 && cur.cudart < 0) {
			cur.cudart = parse_count(v, vn);
		} else if (kn == 3 && memcmp(line, "end", 3) == 0 && vn == 1 && *v == '1') {
			/* the last whole report counts; half a one says nothing */
			el_verify_cudnn_report_release(r);
			*r = cur;
			r->complete = true;
			report_init(&cur);
			in = false;
		}
	}
	el_verify_cudnn_report_release(&cur);
}

/* The cuDNN version a lock records present, or NULL (no lock, or no cuDNN). */
static const char *cudnn_version_of(const el_view *v)
{
	return v && v->cudnn.st.present ? v->cudnn.version : NULL;
}

/* The live lock's library whose soname is soname (the main libcudnn, not its parts). */
static const el_library *live_library(const el_verify_run *run, const char *soname)
{
	for (size_t i = 0; i < run->live->cudnn.nlibraries; i++) {
		const el_library *lib = &run->live->cudnn.libraries[i];

		if (lib->soname && lib->name && lib->path && strcmp(lib->soname, soname) == 0 &&
		    el_starts_with(lib->name, "libcudnn.so"))
			return lib;
	}
	return NULL;
}

/* Any libcudnn.so.N the probe found: its soname (when no version says which to load). */
static const char *any_soname(const el_verify_run *run)
{
	for (size_t i = 0; i < run->live->cudnn.nlibraries; i++) {
		const char *s = run->live->cudnn.libraries[i].soname;

		if (s && el_starts_with(s, "libcudnn.so."))
			return s;
	}
	return NULL;
}

/*
 * Write the loader into the private folder and build it with the host C
 * compiler (gcc in PATH, as nvcc finds it, else cc); its path, or NULL
 * with the stage failed saying why.
 */
static char *build_loader(el_verify_run *run, el_verify_stage *st)
{
	el_buf out = EL_BUF_INIT(EL_CC_OUTPUT);
	el_spawn_opts so = { run->envp, 1 };
	char *cc = el_which("gcc"), *src = NULL, *prog = NULL;
	int status = -1, rc;

	if (!cc)
		cc = el_which("cc");
	if (!cc) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "no C compiler to build the program that loads cuDNN (no gcc or cc in PATH)");
		el_verify_fix(st, "install gcc (nvcc needs it as its host compiler too), or add its folder to PATH");
		goto done;
	}
	el_jset_str(st->figures, "compiler", cc);
	src = el_path_join(run->dir, "cudnn_load.c");
	prog = el_path_join(run->dir, "cudnn_load");
	if (el_write_atomic(run->ctx, src, el_verify_cudnn_load_c, strlen(el_verify_cudnn_load_c), 0600) != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", envlock_error_last(run->ctx));
		goto fail;
	}
	el_verify_progress(run, "building the program that loads cuDNN");
	{
		const char *argv[] = { cc, "-O0", "-o", prog, src, "-ldl", NULL };

		rc = el_spawn_ex(argv, EL_CC_MS, &out, &status, &so);
	}
	if (rc == ENVLOCK_ETIMEOUT) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' was still compiling the program that loads cuDNN after %d s and was stopped",
			      cc, EL_CC_MS / 1000);
	} else if (rc != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' could not be started to build the program that loads cuDNN", cc);
	} else if (status != 0 || access(prog, X_OK) != 0) {
		char *first = el_verify_first_error(out.data, out.len);

		el_jset_str(st->figures, "compile_error", first);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' could not build the program that loads cuDNN: %s", cc,
			      first ? first : "no message");
		free(first);
	} else {
		goto done;
	}
fail:
	free(prog);
	prog = NULL;
done:
	free(cc);
	free(src);
	el_buf_release(&out);
	return prog;
}

enum { LOAD_OK, LOAD_NOT_FOUND, LOAD_NOT_RUN };

/*
 * Have the loader load path (a soname or a file) and read its versions
 * into figures; the loaded file in *where. LOAD_OK: it was loaded (*err
 * says so when it has no cudnnGetVersion); LOAD_NOT_FOUND: the loader
 * could not load it, *err is its error; LOAD_NOT_RUN: the program gave no
 * report, *err says why.
 */
static int load(el_verify_run *run, const char *prog, const char *path, el_verify_stage *st, char **version,
		char **where, char **err)
{
	const char *argv[] = { prog, path, NULL };
	el_spawn_opts so = { run->envp, 0 };
	el_buf out = EL_BUF_INIT(EL_LOADER_OUTPUT);
	el_verify_cudnn_report r;
	int status = -1, rc, result = LOAD_OK;

	rc = el_spawn_ex(argv, EL_LOADER_MS, &out, &status, &so);
	el_verify_cudnn_report_parse(&r, rc == 0 ? out.data : NULL, out.len);
	if (rc == ENVLOCK_ETIMEOUT) {
		*err = el_xasprintf("the program that loads %s was still running after %d s and was stopped", path,
				    EL_LOADER_MS / 1000);
		result = LOAD_NOT_RUN;
	} else if (rc != 0) {
		*err = el_xasprintf("'%s' could not be started", prog);
		result = LOAD_NOT_RUN;
	} else if (!r.complete) {
		*err = status > 128 && status < 128 + NSIG
			? el_xasprintf("the program that loads %s was killed by signal %d (%s) before it reported", path,
				       status - 128, strsignal(status - 128))
			: el_xasprintf("the program that loads %s stopped (exit status %d) before it reported", path, status);
		result = LOAD_NOT_RUN;
	} else if (!r.loaded) {
		*err = el_xstrdup(r.error ? r.error : "cannot be loaded");
		result = LOAD_NOT_FOUND;
	} else if (r.version < 0) {
		*err = el_xasprintf("%s: no cudnnGetVersion", path);
	} else {
		*version = decode_version((size_t)r.version);
		el_jset_str(st->figures, "library_version", *version);
		el_jset_int(st->figures, "cudnnGetVersion", r.version);
		if (r.cudart >= 0) {
			char *cv = el_verify_cuda_version((long)r.cudart);

			el_jset_str(st->figures, "built_with_cuda", cv);
			free(cv);
		}
		if (r.loaded_path) {
			char *real = realpath(r.loaded_path, NULL);

			*where = el_xstrdup(real ? real : r.loaded_path);
			free(real);
		} else {
			*where = el_xstrdup(path);
		}
		el_jset_str(st->figures, "library", *where);
	}
	el_verify_cudnn_report_release(&r);
	el_buf_release(&out);
	return result;
}

/* The loader cannot find soname though the probe found lib: the rules' fix, or the loader path's. */
static void loader_fix(el_verify_run *run, el_verify_stage *st, const el_library *lib)
{
	const char *path = lib->path;
	const envlock_finding *f = el_verify_finding(run, "soname-link-missing", path, NULL);
	char *dir;

	if (!f)
		f = el_verify_finding(run, "ld-cache-stale", path, NULL);
	if (f) {
		el_jset_str(st->figures, "rule", f->rule);
		el_verify_fix(st, "%s (%s)", f->fix, f->message);
		return;
	}
	dir = el_path_dir(path);
	el_verify_fix(st, "'%s' is not on the loader's path: add it to a file in /etc/ld.so.conf.d/ and run ldconfig, or set LD_LIBRARY_PATH",
		      dir);
	free(dir);
}

void el_verify_cudnn_load(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_CUDNN];
	const char *locked = cudnn_version_of(run->locked), *installed = cudnn_version_of(run->live);
	const char *expected = locked ? locked : installed, *soname_found, *header = run->live->cudnn.header;
	char *soname = NULL, *version = NULL, *where = NULL, *err = NULL, *err2 = NULL, *prog = NULL;
	const el_library *lib;
	int loaded;

	if (expected) {
		el_jset_str(st->figures, "expected", expected);
		el_jset_str(st->figures, "expected_from", locked ? "lockfile" : header);
	}
	if (locked && !installed && !any_soname(run)) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "the lockfile has cuDNN %s; this machine has none (no header, no libcudnn)", locked);
		el_verify_fix(st, "install cuDNN %s for this CUDA toolkit", locked);
		return;
	}
	if (expected && el_version_major(expected) > 0) {
		soname = el_xasprintf("libcudnn.so.%ld", el_version_major(expected));
	} else if ((soname_found = any_soname(run)) != NULL) {
		soname = el_xstrdup(soname_found);
	} else {
		el_verify_set(st, ENVLOCK_VERIFY_SKIPPED, "no cuDNN on this machine (no cudnn_version.h or cudnn.h, no libcudnn)");
		return;
	}
	el_jset_str(st->figures, "soname", soname);
	if (!(prog = build_loader(run, st)))
		goto done;
	el_verify_progress(run, "loading cuDNN");
	loaded = load(run, prog, soname, st, &version, &where, &err);
	if (loaded == LOAD_NOT_FOUND) {
		lib = live_library(run, soname);
		el_jset_str(st->figures, "loader_error", err);
		if (!lib) {
			el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", err);
			el_verify_fix(st, "install cuDNN %s (its %s was found nowhere on this machine)",
				      expected ? expected : "", soname);
			goto done;
		}
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s cannot be loaded by its soname, though '%s' has it: %s", soname,
			      lib->path, err);
		loader_fix(run, st, lib);
		/* read its version all the same, from the file the probe found */
		load(run, prog, lib->path, st, &version, &where, &err2);
		goto done;
	}
	if (err) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s", err);
		goto done;
	}
	if (expected && envlock_version_cmp(version, expected) != 0) {
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "'%s' reports cuDNN %s, but %s has %s", where, version,
			      locked ? "the lockfile" : header, expected);
		el_verify_fix(st, locked ? "install cuDNN %s, or put its library first on the loader's path"
					 : "the header and the library come from different cuDNN installs (%s): remove one, or order the loader's path",
			      expected);
		goto done;
	}
	run->cudnn_path = el_xstrdup(where);
	run->cudnn_summary = expected
		? el_xasprintf("cuDNN %s loaded by its soname from '%s' matches %s", version, where,
			       locked ? "the lockfile" : header)
		: el_xasprintf("cuDNN %s loaded by its soname from '%s' (no header or lockfile to compare with)", version, where);
done:
	free(soname);
	free(version);
	free(where);
	free(err);
	free(err2);
	free(prog);
}

void el_verify_cudnn_op(el_verify_run *run)
{
	el_verify_stage *st = &run->v->stage[EL_VERIFY_CUDNN];
	const el_verify_stage *rt = &run->v->stage[EL_VERIFY_RUNTIME];
	const el_verify_report *r = &run->report;

	if (st->done)
		return;
	if (rt->pub.status != ENVLOCK_VERIFY_PASS) {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "%s; no cuDNN operation was run: %s", run->cudnn_summary,
			      rt->no_gpu ? (run->opts->cpu_only ? "CPU parts only" : "no GPU") : "the runtime stage did not pass");
		return;
	}
	if (r->cudnn_op)
		el_jset_str(st->figures, "operation", r->cudnn_op);
	if (r->cudnn_error) {
		el_jset_str(st->figures, "error", r->cudnn_error);
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s, but its operation on the GPU failed: %s", run->cudnn_summary,
			      r->cudnn_error);
		return;
	}
	if (r->cudnn_max_abs_err < 0) {
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "%s; no cuDNN operation was run: the program stopped before it", run->cudnn_summary);
		return;
	}
	el_jset(st->figures, "max_abs_error", cJSON_CreateNumber(r->cudnn_max_abs_err));
	el_jset(st->figures, "tolerance", cJSON_CreateNumber(ENVLOCK_VERIFY_CUDNN_TOLERANCE));
	if (!(r->cudnn_max_abs_err <= ENVLOCK_VERIFY_CUDNN_TOLERANCE))
		el_verify_set(st, ENVLOCK_VERIFY_FAIL, "%s, but its %s differs from the CPU's by up to %.3g (%.0e allowed)",
			      run->cudnn_summary, r->cudnn_op ? r->cudnn_op : "operation", r->cudnn_max_abs_err,
			      ENVLOCK_VERIFY_CUDNN_TOLERANCE);
	else
		el_verify_set(st, ENVLOCK_VERIFY_PASS, "%s; its %s on the GPU matches the CPU within %.0e (largest %.2g)",
			      run->cudnn_summary, r->cudnn_op ? r->cudnn_op : "operation", ENVLOCK_VERIFY_CUDNN_TOLERANCE,
			      r->cudnn_max_abs_err);
}
