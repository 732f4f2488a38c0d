/*
 * Restore step 7: the pip-installed distributions, into the locked
 * environment's Python: exact pins, --no-deps (the lock already lists
 * every dependency), hashes with --require-hashes when the lock has one
 * for every pin, the lock's index options (pip's configuration, and the
 * indexes of the distributions' origins: PyTorch's for torch 1.10.0+cu102,
 * OpenMMLab's page for mmcv-full) as --index-url, --extra-index-url and
 * --find-links, or instead --no-index --find-links with --wheels; editable
 * and VCS installs from their recorded source (a checkout the repos step,
 * run before this one, restores counts as there). mmcv-full with compiled
 * ops, when pip has to build it, is built with MMCV_WITH_OPS=1
 * FORCE_CUDA=1 in pip's environment.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envlock/check.h"
#include "plan.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/text.h"
#include "util/xalloc.h"

typedef struct {
	char *norm;          /* PEP 503 name */
	const el_pip_dist *dist;
} named_dist;

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const named_dist *)a)->norm, ((const named_dist *)b)->norm);
}

/*
 * The live distributions sorted by PEP 503 name, for live_dist: one sort
 * instead of el_view_pip_dist's scan for each of a thousand pins.
 */
static named_dist *index_dists(const el_pip *pip, size_t *n)
{
	named_dist *v = el_xcalloc(pip->ndists + 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < pip->ndists; i++) {
		v[*n].norm = el_pep503_name(pip->dists[i].name ?: "");
		v[(*n)++].dist = &pip->dists[i];
	}
	qsort(v, *n, sizeof(*v), cmp_named);
	return v;
}

/* The live distribution with the same PEP 503 name, or NULL. */
static const el_pip_dist *live_dist(const named_dist *index, size_t n, const char *norm)
{
	named_dist key = { (char *)norm, NULL };
	const named_dist *hit = bsearch(&key, index, n, sizeof(*index), cmp_named);

	return hit ? hit->dist : NULL;
}

/* The sha256 the lock has for the distribution's archive, or NULL. */
static const char *archive_sha256(const el_pip_dist *d)
{
	const char *h = d->direct_url.archive_hash;

	if (h && strncmp(h, "sha256=", 7) == 0 && !el_bad_hex(h + 7, 64))
		return h + 7;
	return NULL;
}

/* The wheel for name-version in dir (host path, malloc'd), or NULL. */
static char *find_wheel(const char *dir, const char *name, const char *version)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *prefix, *found = NULL;

	if (!d)
		return NULL;
	/* wheel file names escape '-' in the name as '_' (PEP 427) */
	prefix = el_xasprintf("%s-%s-", name, version);
	for (char *p = prefix; p < prefix + strlen(name); p++)
		if (*p == '-' || *p == '.')
			*p = '_';
	while (!found && (e = readdir(d)) != NULL)
		if (strncasecmp(e->d_name, prefix, strlen(prefix)) == 0 && el_ends_with(e->d_name, ".whl"))
			found = el_xasprintf("%s/%s", dir, e->d_name);
	closedir(d);
	free(prefix);
	return found;
}

typedef struct {
	char *req_path; /* requirements file written before pip runs (host path); NULL: none */
	bool in_tree;   /* it is in the tree, for the chroot'ed pip: removed after the run */
	const el_kit *kit; /* --kit with --chroot: its wheels go into the tree at stage_dir first */
	char *stage_dir;
} pip_job;

static void pip_free(void *p)
{
	pip_job *j = p;

	if (j) {
		free(j->req_path);
		free(j->stage_dir);
	}
	free(j);
}

static int pip_install(el_item *it, el_apply *ap)
{
	pip_job *j = it->extra;
	int rc;

	if (j->req_path) {
		if (el_apply_write_input(ap, it, j->req_path, j->in_tree) != 0)
			return -1;
		el_apply_log(ap, "wrote '%s':\n%.*s", j->req_path, (int)it->data_len, it->data);
	}
	if (j->stage_dir && el_kit_stage(ap, it, j->kit, EL_KIT_WHEEL, j->stage_dir) != 0) {
		if (j->in_tree && j->req_path)
			el_apply_remove_input(ap, j->req_path);
		return -1;
	}
	rc = el_apply_run_argv(it, ap);
	if (j->in_tree && j->req_path)
		el_apply_remove_input(ap, j->req_path);
	if (j->stage_dir)
		el_kit_unstage(ap, j->kit, EL_KIT_WHEEL, j->stage_dir);
	return rc;
}

/* Can the in-root program be run (its links followed in the tree, as a chroot would)? */
static bool runnable(const el_root *root, const char *abs)
{
	char *host = el_restore_host_real(root, abs);
	bool ok = access(host, X_OK) == 0;

	free(host);
	return ok;
}

/*
 * The argv of pip install for python: its own pip, or the runner the plan
 * found for an environment without one; pip's options that uv does not
 * take are left out for uv.
 */
static void push_pip_install(const envlock_restore *r, el_strvec *argv, const char *python)
{
	if (!r->pip_runner.n) {
		el_args_push(argv, python, "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check",
			     NULL);
		return;
	}
	for (size_t i = 0; i < r->pip_runner.n; i++)
		el_strvec_push(argv, r->pip_runner.v[i]);
	if (r->pip_runner_uv)
		el_args_push(argv, "install", "--python", python, "--no-deps", NULL);
	else
		el_args_push(argv, "--python", python, "install", "--no-deps", "--no-input", "--disable-pip-version-check",
			     NULL);
}

/* pip's --force-reinstall; uv's word for it */
static const char *reinstall_flag(const envlock_restore *r)
{
	return r->pip_runner_uv ? "--reinstall" : "--force-reinstall";
}

/* The pip version a "pip X.Y.Z from ..." line names is 22.3 or later (the first with --python) */
static bool pip_has_python_option(const char *version_line)
{
	const char *v = el_starts_with(version_line, "pip ") ? version_line + 4 : NULL;

	return v && envlock_version_cmp(v, "22.3") >= 0;
}

/*
 * When python's environment has no pip (the probe of that environment
 * lists none), find what runs pip for it: python3 (or python) on PATH
 * whose pip takes --python, else uv. Sets r->pip_runner; returns false
 * when neither is there.
 */
static bool find_pip_runner(envlock_restore *r, const char *python)
{
	static const char *const pythons[] = { "python3", "python" };
	char *uv;

	for (size_t i = 0; i < 2; i++) {
		char *exe = el_which(pythons[i]);
		const char *argv[] = { exe, "-m", "pip", "--version", NULL };
		el_buf out = EL_BUF_INIT(1u << 16);
		int status = -1;

		if (exe && strcmp(exe, python) != 0 && el_spawn(argv, 20000, &out, &status) == 0 && status == 0 &&
		    pip_has_python_option(el_buf_cstr(&out))) {
			el_args_push(&r->pip_runner, exe, "-m", "pip", NULL);
			el_buf_release(&out);
			free(exe);
			return true;
		}
		el_buf_release(&out);
		free(exe);
	}
	if ((uv = el_which("uv")) != NULL) {
		el_args_push(&r->pip_runner, uv, "pip", NULL);
		r->pip_runner_uv = true;
		free(uv);
		return true;
	}
	return false;
}

/* it's note, and then more (a note can say several things) */
static void note_more(el_item *it, const char *more)
{
	if (it->note)
		el_item_note(it, "%s; %s", it->note, more);
	else
		el_item_note(it, "%s", more);
}

/*
 * The lock's index options for the distributions an install pins (none
 * for editable installs: only the configured ones) onto pip's command
 * line, and a note saying which; --wheels installs offline instead.
 */
static void add_indexes(envlock_restore *r, el_item *it, const el_pip_dist *const *dists, size_t n)
{
	el_pip_index *ix;
	size_t nix, used = 0;
	el_buf note = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's index URLs, where they came from and the names they serve");

	el_pip_indexes(r->lock, dists, n, &ix, &nix);
	for (size_t i = 0; i < nix; i++) {
		const char *flag = el_pip_option_flag(ix[i].option);

		if (!flag)
			continue;
		used++;
		if (r->opts.wheels || r->kit)
			continue;
		/* the URL passed el_bad_index_url (untrusted.c): http(s) or file, no '-' first, no credentials */
		el_args_push(&it->argv, flag, ix[i].url, NULL);
		el_buf_addf(&note, "%s%s %s", note.len ? ", " : "pip also looks in ", flag, ix[i].url);
		if (!ix[i].from && ix[i].ndists) {
			el_buf_adds(&note, " (inferred for");
			for (size_t k = 0; k < ix[i].ndists; k++)
				el_buf_addf(&note, "%s %s", k ? "," : "", ix[i].dists[k]->name);
			el_buf_adds(&note, ")");
		} else if (ix[i].from) {
			el_buf_addf(&note, " (from %s)", ix[i].from);
		}
	}
	if (used && (r->opts.wheels || r->kit))
		el_buf_addf(&note, "offline (%s): not the %zu index option%s the lock names", r->kit ? "--kit" : "--wheels",
			      used, used == 1 ? "" : "s");
	if (note.len)
		note_more(it, el_buf_cstr(&note));
	el_buf_release(&note);
	el_pip_indexes_free(ix, nix);
}

/*
 * An install of reqs with python (its host path on this machine, its path
 * in the tree under --root) from wheels (--wheels, the same way; NULL: none).
 */
/*
 * What a requirements file installs, for the plan's text: the first 10
 * pins ("torch==1.10.0+cu102"; a VCS or editable install by its name or
 * folder) and how many more. malloc'd.
 */
static char *req_names(const el_buf *reqs)
{
	el_buf out = EL_BUF_FITS(EL_BUF_JOIN_MAX, "ten names of a requirements file and a count");
	const char *p = el_buf_cstr(reqs);
	size_t n = 0;

	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *name = p, *egg;
		size_t nlen;

		if (el_starts_with(p, "-e ")) {
			name = p + 3;
			egg = strstr(name, "#egg=");
			if (egg && egg < p + len) {
				name = egg + 5;
			} else {
				const char *slash = memrchr(name, '/', (size_t)(p + len - name));

				name = slash && slash + 1 < p + len ? slash + 1 : name;
			}
		}
		nlen = strcspn(name, " \n");
		if (len && n++ < 10)
			el_buf_addf(&out, "%s%.*s", out.len ? ", " : "", (int)nlen, name);
		p += len + (p[len] == '\n');
	}
	if (n > 10)
		el_buf_addf(&out, " and %zu more", n - 10);
	return el_buf_detach(&out);
}

static el_item *add_install(envlock_restore *r, el_step *s, const char *python, const char *wheels,
			    el_buf *reqs, size_t count, const char *what, const char *file, bool hashes,
			    bool mmcv_ops, const char *only_binary, const char *reinstall)
{
	pip_job *j = el_xcalloc(1, sizeof(*j));
	char *names = req_names(reqs);
	el_item *it = el_step_add(s, ENVLOCK_ITEM_DO, "pip install %zu %s into %s%s%s: %s", count, what, python,
				  hashes ? " (hash-checked)" : "", r->opts.chroot ? ", inside the tree (chroot)" : "", names);
	char *req_in_tree = NULL;

	free(names);

	if (r->root.live) {
		j->req_path = el_xasprintf("%s/restore-%s.%s", r->state_dir, r->short_id, file);
	} else {
		j->req_path = el_restore_tree_file(r, file, &req_in_tree);
		j->in_tree = true;
		it->chroot = true;
	}
	push_pip_install(r, &it->argv, python);
	if (hashes)
		el_strvec_push(&it->argv, "--require-hashes");
	if (wheels)
		el_args_push(&it->argv, "--no-index", "--find-links", wheels, NULL);
	/* OpenMMLab's page has mmcv-full pre-built for the locked torch and CUDA: never a build from PyPI's sdist */
	if (only_binary) {
		el_args_push(&it->argv, "--only-binary", only_binary, NULL);
		el_item_note(it, "%s only as a pre-built wheel (--only-binary %s): from its page, never built here", only_binary, only_binary);
	}
	el_args_push(&it->argv, "-r", req_in_tree ? req_in_tree : j->req_path, NULL);
	free(req_in_tree);
	/* at the locked version but not as locked: pip replaces it only when told to */
	if (reinstall) {
		el_strvec_push(&it->argv, reinstall_flag(r));
		note_more(it, reinstall);
	}
	if (mmcv_ops) {
		el_args_push(&it->envv, "MMCV_WITH_OPS=1", "FORCE_CUDA=1", NULL);
		el_item_note(it, "mmcv-full, if pip builds it from source, is built with its CUDA ops (MMCV_WITH_OPS=1 FORCE_CUDA=1)");
	}
	it->data_len = reqs->len;
	it->data = el_buf_detach(reqs);
	it->extra = j;
	it->free_extra = pip_free;
	it->run = pip_install;
	return it;
}

/*
 * mmcv-full (or mmcv with its ops) that neither the kit, --wheels nor
 * OpenMMLab's page has pre-built: its own item after the pins, pip
 * building it from source — with the torch they install (its setup.py
 * imports it: --no-build-isolation), its CUDA ops (MMCV_WITH_OPS=1
 * FORCE_CUDA=1), the locked toolkit's nvcc (CUDA_HOME) and, when this
 * machine's gcc is too new for that nvcc, the installed gcc-N that fits
 * (CC, CXX). The item's text shows all of it.
 */
static void add_mmcv_build(envlock_restore *r, el_step *s, const char *python, const char *wheels,
			   const el_pip_dist *d, const char *reinstall)
{
	const el_toolkit *tk = r->lock->cuda.default_tk;
	pip_job *j = el_xcalloc(1, sizeof(*j));
	char *cc = NULL, *cxx = NULL, *pin = el_xasprintf("%s==%s", d->name, d->version);
	/* env is read back into the command's environment: it is never cut */
	el_buf env = EL_BUF_FITS(EL_BUF_JOIN_MAX, "three variables of fixed names, the lock's CUDA home and two compiler names");
	el_buf cmd = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a command's words");
	el_item *it;

	el_buf_adds(&env, "MMCV_WITH_OPS=1 FORCE_CUDA=1");
	if (tk && tk->home && !el_bad_abs_path(tk->home))
		el_buf_addf(&env, " CUDA_HOME=%s", tk->home);
	if (el_restore_nvcc_gcc(r, &cc, &cxx))
		el_buf_addf(&env, " CC=%s CXX=%s", cc, cxx);
	it = el_step_add(s, ENVLOCK_ITEM_DO, "build %s %s from source with pip: %s%s", d->name, d->version,
			 el_buf_cstr(&env), r->opts.chroot ? ", inside the tree (chroot)" : "");
	for (const char *p = el_buf_cstr(&env); *p;) {
		size_t n = strcspn(p, " ");

		el_strvec_push_owned(&it->envv, el_xstrndup(p, n));
		p += n + (p[n] == ' ');
	}
	push_pip_install(r, &it->argv, python);
	el_args_push(&it->argv, "--no-build-isolation", "--no-binary", d->name, NULL);
	if (wheels)
		el_args_push(&it->argv, "--no-index", "--find-links", wheels, NULL);
	el_strvec_push(&it->argv, pin);
	if (reinstall) {
		el_strvec_push(&it->argv, reinstall_flag(r));
		note_more(it, reinstall);
	}
	add_indexes(r, it, &d, 1);
	for (size_t i = 0; i < it->argv.n; i++)
		el_buf_addf(&cmd, "%s%s", i ? " " : "", it->argv.v[i]);
	note_more(it, "no pre-built wheel of it: the lock records no OpenMMLab page for it");
	{
		char *run = el_xasprintf("it runs: %s %s", el_buf_cstr(&env), el_buf_cstr(&cmd));

		note_more(it, run);
		free(run);
	}
	it->chroot = !r->root.live;
	it->extra = j;
	it->free_extra = pip_free;
	it->run = pip_install;
	if (EL_RESTORE_REFUSE_TREE(r))
		el_restore_needs_chroot(r, it, NULL);
	el_buf_release(&env);
	el_buf_release(&cmd);
	free(pin);
	free(cc);
	free(cxx);
}

/*
 * Why a distribution installed at the locked version is installed again,
 * as check would judge it: mmcv without the compiled ops the locked one
 * has, torch a CPU-only build where the locked one is a CUDA build. NULL
 * when it is as locked.
 */
static const char *reinstall_reason(const envlock_restore *r, const char *norm)
{
	const char *key = strcmp(norm, "torch") == 0 ? "torch"
			  : strcmp(norm, "mmcv-full") == 0 || strcmp(norm, "mmcv") == 0 ? "mmcv" : NULL;
	const el_framework *want = key ? el_view_framework(r->lock, key) : NULL;
	const el_framework *have = key ? el_view_framework(r->live, key) : NULL;

	if (!want || !have || !want->st.present || !have->st.present)
		return NULL;
	if (strcmp(key, "mmcv") == 0)
		return want->ops == EL_YES && have->ops == EL_NO ? "installed without its compiled ops" : NULL;
	return want->cpu_only == EL_NO && have->cpu_only == EL_YES ? "installed as a CPU-only build" : NULL;
}

/* Does the lock say d came from a page of find-links (OpenMMLab's, for mmcv-full)? */
static bool from_page(const el_pip_dist *d)
{
	return d->origin.recorded && d->origin.url && d->origin.option && strcmp(d->origin.option, "find-links") == 0;
}

#define PIP_REQS_MAX (64u << 20)

void el_plan_pip(envlock_restore *r, el_step *s)
{
	const el_pip *pip = &r->lock->pip;
	const char *lock_prefix = r->lock->python.prefix, *live_prefix = r->live->python.prefix;
	const char *conda_prefix = r->lock->conda.prefix, *exe = r->lock->python.executable;
	const el_framework *mmcv = el_view_framework(r->lock, "mmcv");
	/* the requirements files pip reads: capped, and checked before they are used */
	el_buf pinned = EL_BUF_INIT(PIP_REQS_MAX), editable = EL_BUF_INIT(PIP_REQS_MAX);
	el_buf with_hash = EL_BUF_INIT(PIP_REQS_MAX);
	/* the notes: names, versions and sources of the lock's distributions */
	el_buf refused = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's distributions that disagree with their files");
	el_buf from_repos_text = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's editable distributions and their repos");
	el_buf reinstall = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's distributions installed again, and why");
	el_buf kit_missing = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's distributions the kit lacks, with the kit's word");
	el_buf kit_used = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the lock's distributions and the kit's wheels");
	size_t n_ok = 0, n_pinned = 0, n_hashed = 0, n_editable = 0, n_conda = 0;
	const char *why, *mmcv_build_why = NULL;
	bool mmcv_ops = mmcv && mmcv->ops == EL_YES;
	bool mmcv_pending = false, same_env;
	char *python = NULL, *python_in_tree = NULL, *wheels_in_tree = NULL;
	const char *python_arg, *wheels = NULL;
	size_t n_kit_missing = 0;
	const el_pip_dist *mmcv_build = NULL;
	const char *only_binary = NULL;
	named_dist *index = NULL;
	size_t n_index = 0;
	const el_pip_dist **pinned_dists = el_xcalloc(pip->ndists + 1, sizeof(*pinned_dists));

	if (!pip->ndists) {
		el_step_add(s, ENVLOCK_ITEM_OK, "no pip distributions locked");
		goto done;
	}
	/* the Python to install with: --python, else the locked one (moved with --conda-target) */
	if (r->opts.probe.python) {
		python_in_tree = el_xstrdup(r->opts.probe.python);
		same_env = true;
	} else if (exe) {
		if (r->opts.conda_target && conda_prefix && el_starts_with(exe, conda_prefix) &&
		    exe[strlen(conda_prefix)] == '/')
			python_in_tree = el_xasprintf("%s%s", r->opts.conda_target, exe + strlen(conda_prefix));
		else
			python_in_tree = el_xstrdup(exe);
		same_env = live_prefix && lock_prefix && !r->opts.conda_target && strcmp(live_prefix, lock_prefix) == 0;
	} else {
		el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "pip distributions: the lock names no Python");
		el_item_note(it, "rerun with %s to install them into that Python", el_restore_option(r, "python"));
		goto done;
	}
	python = el_restore_host(&r->root, python_in_tree);
	/* pip runs as the tree's Python under --root: by its path there (a chroot), else by its host path */
	python_arg = r->root.live ? python : python_in_tree;
	index = index_dists(&r->live->pip, &n_index);
	/* the environment the probe read is the one to install into, and it has no pip of its own */
	if (r->root.live && same_env && runnable(&r->root, python_in_tree) && !live_dist(index, n_index, "pip") &&
	    !find_pip_runner(r, python)) {
		el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "pip distributions: %s has no pip, and there is no other to run for it",
					  python);

		el_item_note(it, "give it one (%s -m ensurepip), or put uv, or a python3 whose pip is 22.3 or later (pip --python), on PATH",
			     python);
		goto done;
	}
	for (size_t i = 0; i < pip->ndists; i++) {
		const el_pip_dist *d = &pip->dists[i], *have;
		const char *name = d->name, *version = d->version, *installer = d->installer;
		const char *url = d->direct_url.url, *vcs = d->direct_url.vcs;
		const char *commit = d->direct_url.commit_id, *sha = archive_sha256(d);
		bool is_editable = d->editable;
		char *norm;

		if (!name || !version)
			continue;
		if ((installer && strcmp(installer, "conda") == 0) || d->also_conda) {
			n_conda++;
			continue;
		}
		norm = el_pep503_name(name);
		have = same_env ? live_dist(index, n_index, norm) : NULL;
		why = NULL;
		if (have && strcmp(have->version ?: "", version) == 0 && have->editable == is_editable &&
		    (is_editable || (why = reinstall_reason(r, norm)) == NULL)) {
			n_ok++;
			free(norm);
			continue;
		}
		if (is_editable && (strcmp(norm, "mmcv-full") == 0 || strcmp(norm, "mmcv") == 0))
			mmcv_pending = mmcv_ops;
		if (is_editable) {
			const char *src = d->source, *repo = NULL;
			struct stat st;
			bool missing = src && el_root_stat(&r->root, src, &st) != 0, from_repos = false;

			/* a checkout the repos step restores in this run is there by the time pip runs */
			if (missing) {
				char *host = el_restore_host(&r->root, src);

				repo = el_restore_repo_at(r, host, &from_repos);
				free(host);
			}
			if (vcs && url && commit) {
				el_buf_addf(&editable, "-e %s+%s@%s#egg=%s\n", vcs, url, commit, name);
			} else if (missing && !from_repos) {
				el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "editable %s %s: its source %s is missing",
							  name, version, src);

				if (repo)
					el_item_note(it, "the repos step restores it (the locked repository %s)%s", repo,
						     r->steps[EL_STEP_REPOS].skipped ? ": plan that step too" : ", but cannot this time: see there");
				else
					el_item_note(it, "put the source tree back (record it with %s %s to have restore clone it)",
						     el_restore_option(r, "repo"), src);
				free(norm);
				continue;
			} else if (src) {
				char *host = r->root.live ? el_restore_host(&r->root, src) : el_xstrdup(src);

				el_buf_addf(&editable, "-e %s\n", host);
				free(host);
				if (from_repos)
					el_buf_addf(&from_repos_text, "%s%s (%s)", from_repos_text.len ? ", " : "", name, repo);
			}
			else if (url && el_starts_with(url, "file://"))
				el_buf_addf(&editable, "-e %s\n", url + 7);
			else
				el_buf_addf(&refused, "%s%s (editable, no source recorded)", refused.len ? ", " : "", name);
			n_editable++;
		} else if (r->kit && vcs && url && commit) {
			/* a VCS install needs its repository's host: not offline */
			el_buf_addf(&kit_missing, "%s%s %s (a %s install from %s)", kit_missing.len ? "; " : "", name, version, vcs, url);
			n_kit_missing++;
		} else if (vcs && url && commit) {
			el_buf_addf(&pinned, "%s @ %s+%s@%s\n", name, vcs, url, commit);
			el_buf_addf(&with_hash, "%s @ %s+%s@%s\n", name, vcs, url, commit);
			n_pinned++;
		} else {
			const el_kit_item *w = r->kit ? el_kit_wheel(r->kit, norm, version) : NULL;
			bool is_mmcv = strcmp(norm, "mmcv-full") == 0 || (strcmp(norm, "mmcv") == 0 && mmcv_ops);

			if (r->kit && !w) {
				const el_kit_missing *m = el_kit_missing_of(r->kit, "wheel", name);

				el_buf_addf(&kit_missing, "%s%s %s", kit_missing.len ? "; " : "", name, version);
				if (m && (m->reason || m->fetch))
					el_buf_addf(&kit_missing, " (%s%s%s)", m->reason ? m->reason : "",
						      m->reason && m->fetch ? "; fetch: " : m->fetch ? "fetch: " : "", m->fetch ? m->fetch : "");
				n_kit_missing++;
				free(norm);
				continue;
			}
			if (w && is_mmcv)
				el_buf_addf(&kit_used, "%s%s %s from the kit's %s", kit_used.len ? "; " : "", name, version, w->path);
			/*
			 * a wheel from the kit; from --wheels, whatever the folder holds (a
			 * wheel, or the source pip builds with the ops); OpenMMLab's page,
			 * binary only; else a build of its own
			 */
			if (is_mmcv && r->opts.wheels && !r->kit)
				mmcv_pending = true;
			else if (is_mmcv && !r->kit && from_page(d))
				only_binary = name;
			else if (is_mmcv && !r->kit && !mmcv_build) {
				mmcv_build = d;
				mmcv_build_why = why;
				free(norm);
				continue;
			}
			if (w)
				sha = w->sha256;
			if (why)
				el_buf_addf(&reinstall, "%s%s %s is %s: installed again (%s)",
					      reinstall.len ? "; " : "", name, version, why, reinstall_flag(r));
			pinned_dists[n_pinned] = d;
			el_buf_addf(&pinned, "%s==%s\n", name, version);
			if (sha) {
				el_buf_addf(&with_hash, "%s==%s --hash=sha256:%s\n", name, version, sha);
				n_hashed++;
			}
			n_pinned++;
			/* a wheel in --wheels that is not the locked file is refused before pip runs */
			if (sha && r->opts.wheels && !r->kit) {
				char *whl = find_wheel(r->opts.wheels, name, version), hex[EL_SHA256_HEX];
				uint64_t size;
				int e = 0;

				if (whl && el_hashcache_file(r->hashes, whl, hex, &size, &e) == 0 && strcmp(hex, sha) != 0)
					el_buf_addf(&refused, "%s%s has sha256 %.12s..., the lock recorded %.12s...",
						      refused.len ? "; " : "", el_path_base(whl), hex, sha);
				free(whl);
			}
		}
		free(norm);
	}
	if (n_ok)
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu distributions as locked", n_ok);
	if (n_conda)
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu distributions come with the conda packages (conda step)", n_conda);
	if (refused.len) {
		el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "pip install refused: the lock and the files disagree");
		el_item_note(it, "%s", el_buf_cstr(&refused));
		goto done;
	}
	if (el_buf_failed(&pinned) || el_buf_failed(&with_hash) || el_buf_failed(&editable)) {
		el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "pip install %zu distributions: their requirements are longer than %u MiB",
					  n_pinned + n_editable, PIP_REQS_MAX >> 20);
		el_item_note(it, "envlock writes no requirements file it would have to cut: install them yourself");
		goto done;
	}
	if ((n_pinned || n_editable) && !runnable(&r->root, python_in_tree)) {
		const el_step *conda = &r->steps[EL_STEP_CONDA];
		bool created = false;

		for (size_t k = 0; k < conda->n; k++)
			created |= conda->items[k].state == ENVLOCK_ITEM_DO;
		if (!created) {
			el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "pip install %zu distributions: no Python at %s",
						  n_pinned + n_editable, python);
			el_item_note(it, "create the environment first (conda step), or rerun with %s", el_restore_option(r, "python"));
			goto done;
		}
	}
	if ((n_pinned || n_editable) && r->opts.wheels && !r->root.live) {
		char *real = realpath(r->opts.wheels, NULL);

		wheels_in_tree = real ? el_restore_in_tree(r, real) : NULL;
		free(real);
		if (!wheels_in_tree) {
			el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "pip install from %s: outside the tree %s",
						  r->opts.wheels, r->root.prefix);

			el_item_note(it, "pip runs inside the tree and cannot read it there: copy the wheels into the tree and pass that folder to --wheels");
			goto done;
		}
	}
	wheels = r->root.live ? r->opts.wheels : wheels_in_tree;
	if (r->kit) {
		/* the kit's wheels: from its folder here, or put into the tree's /tmp for the pip there */
		free(wheels_in_tree);
		wheels_in_tree = r->root.live ? el_path_join(r->kit->dir, "wheels")
					      : el_xasprintf("/tmp/envlock-restore-%s.kit/wheels", r->short_id);
		wheels = wheels_in_tree;
	}
	if (n_kit_missing) {
		el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "pip: %zu distribution%s not in the kit %s", n_kit_missing,
					  n_kit_missing == 1 ? " is" : "s are", r->kit->shown);

		el_item_note(it, "%s; put them into the kit's wheels/ (`envlock pack` where they can be downloaded), or install them yourself",
			     el_buf_cstr(&kit_missing));
	}
	if (n_pinned) {
		/* hash-checking mode needs a hash for every pin, so hashes go in only when all have one */
		bool hashes = n_hashed == n_pinned;
		el_item *it = add_install(r, s, python_arg, wheels, hashes ? &with_hash : &pinned, n_pinned,
					  n_pinned == 1 ? "pinned distribution" : "pinned distributions",
					  "requirements.txt", hashes, mmcv_pending, only_binary,
					  reinstall.len ? el_buf_cstr(&reinstall) : NULL);

		if (r->kit) {
			note_more(it, "offline from the kit's wheels, each checked by pip against the kit's sha256");
			if (kit_used.len)
				note_more(it, el_buf_cstr(&kit_used));
		}
		if (r->kit && !r->root.live) {
			pip_job *j = it->extra;
			char *in = el_xasprintf("/tmp/envlock-restore-%s.kit", r->short_id);

			j->kit = r->kit;
			j->stage_dir = el_restore_host(&r->root, in);
			free(in);
		}

		if (!hashes && n_hashed == 0 && !it->note)
			el_item_note(it, "the lock has no archive hashes for them: pinned by exact version only");
		else if (!hashes && !it->note)
			el_item_note(it, "only %zu of %zu have an archive hash in the lock: pinned by exact version only",
				     n_hashed, n_pinned);
		/* VCS pins leave their place in pinned_dists NULL */
		{
			size_t k = 0;

			for (size_t i = 0; i < n_pinned; i++)
				if (pinned_dists[i])
					pinned_dists[k++] = pinned_dists[i];
			add_indexes(r, it, pinned_dists, k);
		}
		if (EL_RESTORE_REFUSE_TREE(r))
			el_restore_needs_chroot(r, it, "the file lists the pins, as `envlock export --format requirements` writes them");
	}
	if (mmcv_build) {
		char *again = mmcv_build_why ? el_xasprintf("%s %s is %s: built again (%s)", mmcv_build->name,
							    mmcv_build->version, mmcv_build_why, reinstall_flag(r)) : NULL;

		add_mmcv_build(r, s, python_arg, wheels, mmcv_build, again);
		free(again);
	}
	if (n_editable) {
		el_item *it = add_install(r, s, python_arg, wheels, &editable, n_editable,
					  n_editable == 1 ? "editable install" : "editable installs", "editable.txt",
					  false, mmcv_pending && !n_pinned, NULL, NULL);

		add_indexes(r, it, NULL, 0);
		if (from_repos_text.len)
			el_item_note(it, "%s%sfrom the checkouts the repos step restores first: %s", it->note ? it->note : "",
				     it->note ? "; " : "", el_buf_cstr(&from_repos_text));
		if (EL_RESTORE_REFUSE_TREE(r))
			el_restore_needs_chroot(r, it, "the file lists the editable installs, one '-e SOURCE' a line");
	}
done:
	free(pinned_dists);
	for (size_t i = 0; i < n_index; i++)
		free(index[i].norm);
	free(index);
	free(python);
	free(python_in_tree);
	free(wheels_in_tree);
	el_buf_release(&pinned);
	el_buf_release(&editable);
	el_buf_release(&with_hash);
	el_buf_release(&kit_missing);
	el_buf_release(&kit_used);
	el_buf_release(&refused);
	el_buf_release(&from_repos_text);
	el_buf_release(&reinstall);
}
