/*
 * Restore steps 1 and 2: the NVIDIA driver (never installed by envlock:
 * checked against the locked toolkit with the rules engine) and the CUDA
 * toolkit (checked; installed toolkit-only from a runfile the user gives).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lock/model.h"
#include "plan.h"
#include "rules/rules.h"
#include "util/error.h"
#include "util/xalloc.h"

/* The minimum driver the rules table gives for a toolkit version, or NULL. */
static const char *table_min_driver(const envlock_rules *rules, const char *toolkit)
{
	const cJSON *row, *best = NULL;
	size_t mm;

	if (!toolkit)
		return NULL;
	mm = strcspn(toolkit, ".");
	if (toolkit[mm])
		mm += 1 + strcspn(toolkit + mm + 1, ".");
	cJSON_ArrayForEach(row, el_jget(el_rules_table(rules, "cuda_driver"), "rows")) {
		const char *tv = el_jget_str(row, "toolkit"), *cuda = el_jget_str(row, "cuda");

		if (tv && strcmp(tv, toolkit) == 0)
			return el_jget_str(row, "min_driver");
		/* the release's first row, when this exact update is not listed */
		if (!best && cuda && strlen(cuda) == mm && strncmp(cuda, toolkit, mm) == 0)
			best = row;
	}
	return best ? el_jget_str(best, "min_driver") : NULL;
}

void el_plan_driver(envlock_restore *r, el_step *s)
{
	const char *want = r->lock->gpu.driver.version, *have = r->live->gpu.driver.version;
	const char *toolkit = r->lock->cuda.default_tk ? r->lock->cuda.default_tk->version : NULL;
	envlock_rules *rules = NULL;
	envlock_findings *findings = NULL;
	el_view hybrid;
	const char *min = NULL;
	el_item *it;

	if (envlock_rules_load_default(&rules, NULL) == 0)
		min = table_min_driver(rules, toolkit);
	if (!have) {
		if (!want) {
			el_step_add(s, ENVLOCK_ITEM_OK, "no NVIDIA driver, none locked");
		} else {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "no NVIDIA driver found (locked: %s)", want);
			if (min)
				el_item_note(it, "install NVIDIA driver %s (or any >= %s, the minimum for CUDA %s); envlock never installs drivers",
					     want, min, toolkit);
			else
				el_item_note(it, "install NVIDIA driver %s or newer; envlock never installs drivers", want);
		}
		envlock_rules_free(rules);
		return;
	}
	/*
	 * this machine's driver with the locked toolkit and frameworks, through
	 * the rules: the live view with the lock's sections in their place
	 * (a copy of the struct; both views' strings stay where they are)
	 */
	hybrid = *r->live;
	hybrid.cuda = r->lock->cuda;
	memcpy(hybrid.frameworks, r->lock->frameworks, sizeof(hybrid.frameworks));
	hybrid.arena = NULL; /* the live view's: never freed through the copy */
	if (rules && (findings = el_check_view(rules, &hybrid)) != NULL) {
		for (size_t i = 0; i < envlock_findings_count(findings); i++) {
			const envlock_finding *f = envlock_findings_get(findings, i);

			if (strcmp(f->section, "gpu") != 0 || f->severity != ENVLOCK_SEV_BREAKING)
				continue;
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "%s: %s", f->subject, f->message);
			el_item_note(it, "%s%senvlock never installs drivers (rule %s; %s)", f->fix,
				     f->fix[0] ? "; " : "", f->rule, f->source);
		}
	}
	if (s->n == 0) {
		if (want && strcmp(want, have) != 0)
			el_step_add(s, ENVLOCK_ITEM_OK, "NVIDIA driver %s (locked %s)%s%s%s", have, want,
				    min ? ": new enough for CUDA " : "", min ? toolkit : "", min ? "" : "");
		else
			el_step_add(s, ENVLOCK_ITEM_OK, "NVIDIA driver %s", have);
	}
	envlock_findings_free(findings);
	envlock_rules_free(rules);
}

/* "cuda_10.2.89_440.33.01_linux.run" -> its toolkit version "10.2.89" (malloc'd), or NULL. */
static char *runfile_version(const char *path)
{
	const char *base = el_path_base(path);
	size_t n;

	if (strncmp(base, "cuda_", 5) != 0)
		return NULL;
	n = strcspn(base + 5, "_");
	return n ? el_xstrndup(base + 5, n) : NULL;
}

/*
 * Where the live alias leads: the home of the live toolkit it is an alias
 * of, else (the probe only looks at /usr/local/cuda*, $CUDA_HOME and
 * $CUDA_PATH, so an alias elsewhere may not be in its view) the folder it
 * resolves to. malloc'd, or NULL when it leads nowhere.
 */
static char *alias_target(envlock_restore *r, const char *alias)
{
	const el_toolkit *tk = el_view_toolkit_at(r->live, alias);
	char *real = NULL;
	int e = 0;

	if (tk && tk->home)
		return el_xstrdup(tk->home);
	if (el_root_realpath(&r->root, alias, &real, &e) == 0)
		return real;
	free(real);
	return NULL;
}

void el_plan_cuda(envlock_restore *r, el_step *s)
{
	const char *home = r->lock->cuda.default_home;
	const el_toolkit *want = r->lock->cuda.default_tk, *have;
	const char *version = want ? want->version : NULL;
	const char *have_version;
	char *host;
	el_item *it;

	if (!want || !version) {
		el_step_add(s, ENVLOCK_ITEM_OK, "no CUDA toolkit locked");
		return;
	}
	have = el_view_toolkit_at(r->live, home);
	/* the Python environment's own CUDA is its packages', and their steps reinstall it */
	if (el_env_layout(want->layout)) {
		have_version = have ? have->version : NULL;
		if (have_version && strcmp(have_version, version) == 0) {
			el_step_add(s, ENVLOCK_ITEM_OK, "CUDA %s at %s", version, home);
		} else {
			it = el_step_add(s, ENVLOCK_ITEM_OK, "CUDA %s at %s comes with the environment", version, home);
			el_item_note(it, strcmp(want->layout, "conda") == 0 ? "the conda step installs its packages"
					 : strcmp(want->layout, "wheel") == 0 ? "the pip step installs NVIDIA's wheels"
									: "the pip step installs torch, which carries it");
		}
		return;
	}
	have_version = have ? have->version : NULL;
	if (have_version && strcmp(have_version, version) == 0) {
		el_step_add(s, ENVLOCK_ITEM_OK, "CUDA %s at %s", version, home);
	} else if (have_version) {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "CUDA at %s is %s, locked %s", home, have_version, version);
		el_item_note(it, "envlock does not replace an installed toolkit: install CUDA %s into another folder (runfile --toolkitpath) and point %s at it",
			     version, home);
	} else if (r->opts.cuda_runfile) {
		char *rv = runfile_version(r->opts.cuda_runfile);

		if (rv && strcmp(rv, version) != 0) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "CUDA %s at %s: missing", version, home);
			el_item_note(it, "'%s' installs CUDA %s, not the locked %s", r->opts.cuda_runfile, rv, version);
		} else {
			char *flag;

			host = el_restore_host(&r->root, home);
			flag = el_xasprintf("--toolkitpath=%s", host);
			it = el_step_add(s, ENVLOCK_ITEM_DO, "install CUDA %s (toolkit only, no driver) into %s from %s",
					 version, home, r->opts.cuda_runfile);
			el_args_push(&it->argv, "sh", r->opts.cuda_runfile, "--silent", "--toolkit", flag,
				     "--override", NULL);
			it->run = el_apply_run_argv;
			free(flag);
			free(host);
		}
		free(rv);
	} else {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "CUDA %s at %s: missing", version, home);
		el_restore_runfile_note(r, it, version, home);
	}
	/* the locked aliases (/usr/local/cuda -> cuda-10.2) */
	for (size_t i = 0; i < want->aliases.n; i++) {
		const char *alias = want->aliases.v[i];
		char *real;

		if (el_bad_abs_path(alias))
			continue;
		real = alias_target(r, alias);
		if (real && strcmp(real, home) == 0) {
			free(real);
			continue;
		}
		if (!have_version && s->items[0].state != ENVLOCK_ITEM_DO) {
			free(real);
			break; /* the toolkit itself is the instruction */
		}
		if (real) {
			/* points elsewhere: only say so */
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "%s does not lead to %s", alias, home);
			el_item_note(it, "point it at the locked toolkit: ln -sfn %s %s", home, alias);
			free(real);
			continue;
		}
		it = el_step_add(s, ENVLOCK_ITEM_DO, "link %s -> %s", alias, home);
		it->path = el_restore_host(&r->root, alias);
		it->target = el_xstrdup(home);
		it->run = el_apply_symlink;
	}
}
