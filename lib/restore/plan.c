/*
 * The restore planner: validate the lock, probe this machine the way
 * `save` does, and let each step's planner list its items.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envlock/lock.h"
#include "plan.h"
#include "util/error.h"
#include "util/xalloc.h"
#include "util/text.h"

static const char *const step_names[EL_STEP_COUNT] = {
	"driver", "cuda", "compilers", "cudnn", "conda", "repos", "pip", "configs", "checkpoints", "verify"
};

static void (*const planners[EL_STEP_COUNT])(envlock_restore *, el_step *) = {
	el_plan_driver, el_plan_cuda, el_plan_compilers, el_plan_cudnn, el_plan_conda,
	el_plan_repos, el_plan_pip, el_plan_configs, el_plan_checkpoints, el_plan_verify
};

size_t envlock_restore_step_count(void)
{
	return EL_STEP_COUNT;
}

const char *envlock_restore_step_name(size_t i)
{
	return i < EL_STEP_COUNT ? step_names[i] : NULL;
}

const char *envlock_item_state_name(envlock_item_state s)
{
	static const char *const names[] = { "ok", "do", "manual", "done", "failed" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static int step_index(const char *name)
{
	for (int i = 0; i < EL_STEP_COUNT; i++)
		if (strcmp(step_names[i], name) == 0)
			return i;
	return -1;
}

static int check_step_names(envlock_ctx *ctx, const char *what, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char list[256];
		size_t len = 0;

		if (step_index(names[i]) >= 0)
			continue;
		/* the steps in their order, from the one list */
		for (int k = 0; k < EL_STEP_COUNT && len < sizeof(list); k++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", k ? ", " : "", step_names[k]);
		return el_error_set(ctx, ENVLOCK_EINVAL, "the step '%s' to %s does not exist (steps: %s)",
				    names[i], what, list);
	}
	return 0;
}

static bool step_wanted(const envlock_restore_opts *o, const char *name)
{
	bool wanted = o->only_count == 0;

	for (size_t i = 0; i < o->only_count; i++)
		if (strcmp(o->only[i], name) == 0)
			wanted = true;
	for (size_t i = 0; i < o->skip_count; i++)
		if (strcmp(o->skip[i], name) == 0)
			wanted = false;
	return wanted;
}

/* Does the in-root path exist (after links)? */
static bool exists_under(const el_root *root, const char *abs)
{
	struct stat st;

	return abs && el_root_stat(root, abs, &st) == 0;
}

void el_restore_env_probe(envlock_restore *r, envlock_probe_opts *popts)
{
	const el_view *v = r->lock;
	const char *exe = v->python.executable, *conda_prefix = v->conda.prefix;

	*popts = r->opts.probe;
	popts->checkpoints = popts->configs = popts->repos = NULL;
	popts->checkpoint_count = popts->config_count = popts->repo_count = 0;
	popts->default_repo = 0;
	popts->on_warning = NULL;
	if (!popts->conda_prefix) {
		const char *prefix = r->opts.conda_target ? r->opts.conda_target : conda_prefix;

		if (exists_under(&r->root, prefix))
			popts->conda_prefix = prefix;
	}
	if (popts->python || !exe)
		return;
	free(r->moved_python);
	r->moved_python = NULL;
	if (r->opts.conda_target) {
		/* the locked Python moves with the environment; one outside it stays where it is not */
		if (!conda_prefix || !el_starts_with(exe, conda_prefix) || exe[strlen(conda_prefix)] != '/')
			return;
		r->moved_python = el_xasprintf("%s%s", r->opts.conda_target, exe + strlen(conda_prefix));
		exe = r->moved_python;
	}
	if (exists_under(&r->root, exe))
		popts->python = exe;
}

int envlock_restore_plan(envlock_restore **out, envlock_ctx *ctx, const envlock_lock *lock,
			 const envlock_restore_opts *opts)
{
	const el_view *v = el_lock_view(lock);
	envlock_probe_opts popts;
	envlock_restore *r;
	el_strvec repos = EL_STRVEC_INIT;
	char cwd[PATH_MAX], *warning = NULL;
	const char *dest;
	int rc;

	*out = NULL;
	if ((rc = check_step_names(ctx, "plan alone", opts->only, opts->only_count)) != 0 ||
	    (rc = check_step_names(ctx, "leave out", opts->skip, opts->skip_count)) != 0)
		return rc;
	if ((rc = el_restore_check_cudnn(ctx, v)) != 0 || (rc = el_lock_check_untrusted(ctx, lock)) != 0)
		return rc;

	r = el_xcalloc(1, sizeof(*r));
	r->lock_obj = lock;
	r->lock = v;
	r->opts = *opts;
	if (opts->conda_name) {
		const char *root_prefix = v->conda.root_prefix;
		const char *why = el_bad_name(opts->conda_name);

		if (why || !root_prefix || opts->conda_target) {
			rc = el_error_set(ctx, ENVLOCK_EINVAL, "the conda environment name '%s': %s", opts->conda_name,
					  why ? why : opts->conda_target ? "give a name or a target prefix, not both"
									 : "the lock names no conda install to put it in");
			goto fail;
		}
		r->named_target = el_xasprintf("%s/envs/%s", root_prefix, opts->conda_name);
		r->opts.conda_target = r->named_target;
	}
	r->id = el_xstrdup(envlock_lock_id(lock));
	r->short_id = el_xstrndup(r->id + strlen("sha256:"), 12);
	r->state_dir = el_xstrdup(opts->state_dir ? opts->state_dir : ".envlock");
	r->journal_path = el_xasprintf("%s/restore-%s.journal", r->state_dir, r->short_id);
	r->log_path = el_xasprintf("%s/restore-%s.log", r->state_dir, r->short_id);
	el_restore_read_journal(r);
	for (int i = 0; i < EL_STEP_COUNT; i++)
		r->steps[i].name = step_names[i];

	if ((rc = el_root_init(&r->root, ctx, opts->probe.root)) != 0)
		goto fail;
	if (opts->chroot && r->root.live) {
		rc = el_error_set(ctx, ENVLOCK_EINVAL, "running programs inside the tree needs a tree: give %s DIR",
				  el_restore_option(r, "root"));
		goto fail;
	}
	dest = opts->dest ? opts->dest : (getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	if ((rc = el_root_init(&r->dest_root, ctx, dest)) != 0)
		goto fail;
	r->dest = el_xstrdup(r->dest_root.prefix[0] ? r->dest_root.prefix : "/");
	r->hashes = el_hashcache_open(opts->probe.no_cache, &warning);
	free(warning);
	/* a kit is checked (what the steps that run use of it) before anything is probed or planned */
	if (opts->kit) {
		const el_kit_item *f;

		unsigned uses = (step_wanted(opts, "conda") ? EL_KIT_USE_CONDA : 0) |
				(step_wanted(opts, "pip") ? EL_KIT_USE_WHEELS : 0) |
				(step_wanted(opts, "cudnn") ? EL_KIT_USE_CUDNN : 0) |
				(step_wanted(opts, "cuda") ? EL_KIT_USE_RUNFILE : 0);

		if ((rc = el_kit_open(&r->kit, ctx, opts->kit, r->state_dir, r->short_id, lock, v, uses)) != 0)
			goto fail;
		if (!r->opts.cudnn_archive && (f = el_kit_file(r->kit, "cudnn-archive")) != NULL)
			r->opts.cudnn_archive = f->host;
		if (!r->opts.cuda_runfile && (f = el_kit_file(r->kit, "cuda-runfile")) != NULL)
			r->opts.cuda_runfile = f->host;
	}

	el_restore_env_probe(r, &popts);
	r->live_opts = popts;
	/* and the locked repositories that are there, to compare their commits and changes */
	for (size_t i = 0; i < v->repos.nrepos; i++) {
		const char *path = v->repos.repos[i].path;
		char *in = path ? el_restore_dest_path(r, path) : NULL, *host;
		struct stat st;

		if (!in)
			continue;
		host = el_restore_host(&r->dest_root, in);
		/* a clone an interrupted restore left half made is not probed: it is cloned again */
		if (stat(host, &st) == 0 && S_ISDIR(st.st_mode) && !el_restore_created(r, host))
			el_strvec_push_owned(&repos, host);
		else
			free(host);
		free(in);
	}
	popts.repos = (const char *const *)repos.v;
	popts.repo_count = repos.n;
	rc = envlock_lock_probe(&r->live_obj, ctx, &popts);
	el_strvec_release(&repos);
	if (rc != 0)
		goto fail;
	r->live = el_lock_view(r->live_obj);

	for (int i = 0; i < EL_STEP_COUNT; i++) {
		if (!step_wanted(opts, step_names[i])) {
			r->steps[i].skipped = true;
			continue;
		}
		planners[i](r, &r->steps[i]);
	}
	*out = r;
	return 0;
fail:
	envlock_restore_free(r);
	return rc;
}

size_t envlock_restore_count(const envlock_restore *r, envlock_item_state s)
{
	size_t n = 0;

	for (int i = 0; i < EL_STEP_COUNT; i++)
		for (size_t k = 0; k < r->steps[i].n; k++)
			n += r->steps[i].items[k].state == s;
	return n;
}

const char *envlock_restore_log_path(const envlock_restore *r)
{
	return r->log_path;
}

const char *envlock_restore_interrupted(const envlock_restore *r)
{
	return r->interrupted;
}

void envlock_restore_free(envlock_restore *r)
{
	if (!r)
		return;
	for (int i = 0; i < EL_STEP_COUNT; i++) {
		el_step *s = &r->steps[i];

		for (size_t k = 0; k < s->n; k++)
			el_item_release(&s->items[k]);
		free(s->items);
	}
	envlock_lock_free(r->live_obj);
	el_kit_free(r->kit);
	el_root_release(&r->root);
	el_root_release(&r->dest_root);
	if (r->hashes) {
		el_hashcache_save(r->hashes);
		el_hashcache_free(r->hashes);
	}
	free(r->dest);
	free(r->named_target);
	free(r->moved_python);
	el_strvec_release(&r->pip_runner);
	free(r->id);
	free(r->short_id);
	free(r->state_dir);
	free(r->journal_path);
	free(r->log_path);
	free(r->interrupted);
	el_strvec_release(&r->option_texts);
	el_strvec_release(&r->created);
	free(r);
}
