/*
 * Restore step 6: code repositories, with libgit2. A missing one is
 * cloned from its recorded remote; then the recorded commit is checked
 * out (fetched first when the clone lacks it) and the recorded patch of
 * uncommitted changes applied, then the recorded untracked files written
 * (untracked.c); one the lock has only the digest of is reported, never
 * silently left out. A working tree with local changes is never touched:
 * that is "manual". It comes before the pip step, whose editable installs
 * may be these checkouts (el_restore_repo_at).
 */
#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan.h"
#include "util/cacerts.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/text.h"
#include "util/xalloc.h"

typedef struct {
	char *path, *text, *sha256;
	bool executable;
} untracked_job;

typedef struct {
	char *url;     /* remote to clone or fetch from (NULL: none recorded) */
	char *commit;  /* 40 (or 64) hex */
	char *branch;  /* recorded branch, or NULL when HEAD was detached */
	char *patch;   /* uncommitted changes to apply, or NULL */
	bool clone;
	bool replace;  /* a clone an interrupted restore left half made: moved aside first */
	bool files_only; /* at the locked commit and patch already: only untracked files to write */
	untracked_job *files;
	size_t nfiles;
} repo_job;

static void repo_free(void *p)
{
	repo_job *j = p;

	if (!j)
		return;
	free(j->url);
	free(j->commit);
	free(j->branch);
	free(j->patch);
	for (size_t i = 0; i < j->nfiles; i++) {
		free(j->files[i].path);
		free(j->files[i].text);
		free(j->files[i].sha256);
	}
	free(j->files);
	free(j);
}

static const char *lg_reason(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "libgit2 failed";
}

/* What to add to a failed https:// clone or fetch when the CA certificates could not be used */
static const char *https_hint(const char *url, const char *problem)
{
	static char hint[600];

	if (!problem || !el_starts_with(url, "https://"))
		return "";
	snprintf(hint, sizeof(hint), "; %s", problem);
	return hint;
}

static int write_files(el_item *it, el_apply *ap, const repo_job *j)
{
	for (size_t i = 0; i < j->nfiles; i++)
		if (el_restore_write_untracked(it, ap, it->path, j->files[i].path, j->files[i].text, j->files[i].sha256,
					       j->files[i].executable) != 0)
			return -1;
	if (j->nfiles)
		el_apply_log(ap, "wrote %zu untracked file%s", j->nfiles, j->nfiles == 1 ? "" : "s");
	return 0;
}

static int repo_restore(el_item *it, el_apply *ap)
{
	repo_job *j = it->extra;
	git_repository *repo = NULL;
	git_remote *remote = NULL;
	git_commit *commit = NULL;
	git_reference *ref = NULL;
	git_diff *diff = NULL;
	git_oid oid;
	int rc = -1;
	const char *ca_problem;

	if (j->files_only)
		return write_files(it, ap, j);
	git_libgit2_init();
	ca_problem = el_cacerts_use_for_git();
	if (j->clone) {
		git_clone_options co;
		struct stat st;

		if (j->replace && lstat(it->path, &st) == 0 && el_apply_aside(ap, it, it->path, NULL) != 0)
			goto done;
		el_apply_journal(ap, "creating %s", it->path);

		git_clone_options_init(&co, GIT_CLONE_OPTIONS_VERSION);
		co.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;
		el_apply_log(ap, "clone '%s' into '%s'", j->url, it->path);
		if (git_clone(&repo, j->url, it->path, &co) != 0) {
			el_item_fail(it, "clone of '%s': %s%s", j->url, lg_reason(), https_hint(j->url, ca_problem));
			goto done;
		}
	} else if (git_repository_open(&repo, it->path) != 0) {
		el_item_fail(it, "'%s': %s", it->path, lg_reason());
		goto done;
	}
	if (git_oid_fromstr(&oid, j->commit) != 0) {
		el_item_fail(it, "commit %s: %s", j->commit, lg_reason());
		goto done;
	}
	if (git_commit_lookup(&commit, repo, &oid) != 0) {
		if (!j->url) {
			el_item_fail(it, "commit %.12s is not in '%s' and no remote is recorded", j->commit, it->path);
			goto done;
		}
		el_apply_log(ap, "fetch '%s' for commit %s", j->url, j->commit);
		if (git_remote_create_anonymous(&remote, repo, j->url) != 0 ||
		    git_remote_fetch(remote, NULL, NULL, NULL) != 0) {
			el_item_fail(it, "fetch from '%s': %s%s", j->url, lg_reason(), https_hint(j->url, ca_problem));
			goto done;
		}
		if (git_commit_lookup(&commit, repo, &oid) != 0) {
			el_item_fail(it, "commit %.12s: not in '%s' after fetching", j->commit, j->url);
			goto done;
		}
	}
	{
		git_checkout_options co;

		git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
		/* safe: files with local changes make the checkout fail instead of being overwritten */
		co.checkout_strategy = GIT_CHECKOUT_SAFE;
		if (git_checkout_tree(repo, (const git_object *)commit, &co) != 0) {
			el_item_fail(it, "checkout of %.12s: %s", j->commit, lg_reason());
			goto done;
		}
	}
	/* the recorded branch when it can point at the commit without moving anything else */
	if (j->branch && git_branch_lookup(&ref, repo, j->branch, GIT_BRANCH_LOCAL) != 0) {
		if (git_branch_create(&ref, repo, j->branch, commit, 0) == 0)
			el_apply_log(ap, "created branch '%s' at %s", j->branch, j->commit);
	}
	if (ref && git_oid_equal(git_reference_target(ref), &oid)) {
		if (git_repository_set_head(repo, git_reference_name(ref)) != 0) {
			el_item_fail(it, "HEAD: %s", lg_reason());
			goto done;
		}
	} else if (git_repository_set_head_detached(repo, &oid) != 0) {
		el_item_fail(it, "HEAD: %s", lg_reason());
		goto done;
	}
	el_apply_log(ap, "'%s' is at %s", it->path, j->commit);
	if (j->patch) {
		git_apply_options ao;

		git_apply_options_init(&ao, GIT_APPLY_OPTIONS_VERSION);
		if (git_diff_from_buffer(&diff, j->patch, strlen(j->patch)) != 0 ||
		    git_apply(repo, diff, GIT_APPLY_LOCATION_WORKDIR, &ao) != 0) {
			el_item_fail(it, "the recorded patch does not apply: %s", lg_reason());
			goto done;
		}
		el_apply_log(ap, "applied the recorded patch (%zu bytes)", strlen(j->patch));
	}
	if (write_files(it, ap, j) != 0)
		goto done;
	if (j->clone)
		el_apply_journal(ap, "created %s", it->path);
	rc = 0;
done:
	git_diff_free(diff);
	git_reference_free(ref);
	git_commit_free(commit);
	git_remote_free(remote);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return rc;
}

/* The live entry probed for host path (its "requested"), or NULL: a few repositories, so a scan. */
static const el_repo *live_repo(envlock_restore *r, const char *host)
{
	for (size_t i = 0; i < r->live->repos.nrepos; i++) {
		const el_repo *e = &r->live->repos.repos[i];

		if (e->requested && strcmp(e->requested, host) == 0)
			return e;
	}
	return NULL;
}

static bool has_local_changes(const el_repo *entry)
{
	return entry->changes.staged.n || entry->changes.modified.n || entry->changes.conflicted.n;
}

static const char *first_remote(const el_repo *entry)
{
	const char *url = NULL;

	for (size_t i = 0; i < entry->nremotes; i++) {
		const char *name = entry->remotes[i].name, *u = entry->remotes[i].url;

		if (u && (!url || (name && strcmp(name, "origin") == 0)))
			url = u;
	}
	return url;
}

/* Is the locked entry one the repos step restores (a repository with a commit)? */
static bool restorable(const el_repo *e)
{
	return e->path && e->status && strcmp(e->status, "present") == 0 && e->head.commit;
}

/* The host path the repository recorded at path is restored at (malloc'd), or NULL when outside --dest. */
static char *repo_host(const envlock_restore *r, const char *path)
{
	char *in = el_restore_dest_path(r, path), *host;

	if (!in)
		return NULL;
	host = el_restore_host(&r->dest_root, in);
	free(in);
	return host;
}

/* Is path dir or inside it? */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const char *el_restore_repo_at(const envlock_restore *r, const char *host_path, bool *doing)
{
	const el_step *s = &r->steps[EL_STEP_REPOS];
	const el_repo *found = NULL;
	char *found_host = NULL;

	*doing = false;
	/* the innermost of the locked repositories that hold the path (a clone inside another) */
	for (size_t i = 0; i < r->lock->repos.nrepos; i++) {
		const el_repo *e = &r->lock->repos.repos[i];
		char *host;

		if (!restorable(e) || !(host = repo_host(r, e->path)))
			continue;
		if (path_under(host_path, host) && (!found_host || strlen(host) > strlen(found_host))) {
			free(found_host);
			found_host = host;
			found = e;
		} else {
			free(host);
		}
	}
	for (size_t k = 0; found && k < s->n; k++)
		*doing |= s->items[k].state == ENVLOCK_ITEM_DO && s->items[k].run == repo_restore &&
			  s->items[k].path && strcmp(s->items[k].path, found_host) == 0;
	free(found_host);
	return found ? found->path : NULL;
}

/* Does every untracked file with text in the lock hold what its digest says? */
static bool untracked_texts_match(const el_repo *e)
{
	char hex[EL_SHA256_HEX];

	for (size_t i = 0; i < e->nuntracked_files; i++) {
		const el_untracked_file *f = &e->untracked_files[i];

		if (!f->text)
			continue;
		el_sha256_buf(f->text, strlen(f->text), hex);
		if (!f->sha256 || strcmp(hex, f->sha256) != 0)
			return false;
	}
	return true;
}

static const el_untracked_file *live_untracked(const el_repo *live, const char *path)
{
	for (size_t i = 0; live && i < live->nuntracked_files; i++)
		if (live->untracked_files[i].path && strcmp(live->untracked_files[i].path, path) == 0)
			return &live->untracked_files[i];
	return NULL;
}

static const char *omitted_why(const char *omitted)
{
	if (!omitted)
		return "no text recorded";
	if (strcmp(omitted, "binary") == 0)
		return "binary";
	if (strcmp(omitted, "too_large") == 0)
		return "over 1 MiB";
	if (strcmp(omitted, "over_repo_limit") == 0)
		return "over the repository's 8 MiB of untracked text";
	if (strcmp(omitted, "no_patch") == 0)
		return "saved with --no-patch";
	if (strcmp(omitted, "symlink") == 0)
		return "a symbolic link";
	return omitted;
}

/*
 * The recorded untracked files the work tree (live, NULL when it is not
 * there yet) lacks: those with text go into the job; one with only a
 * digest, or one there with other content, is a manual item naming it.
 */
static void plan_untracked(el_step *s, const el_repo *e, const el_repo *live, repo_job *j)
{
	for (size_t i = 0; i < e->nuntracked_files; i++) {
		const el_untracked_file *f = &e->untracked_files[i], *have;
		el_item *it;

		if (!f->path || !f->sha256)
			continue;
		have = live_untracked(live, f->path);
		if (have && have->sha256 && strcmp(have->sha256, f->sha256) == 0)
			continue;
		if (have) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s: untracked '%s' differs from the lock", e->path,
					 f->path);
			el_item_note(it, "envlock never overwrites it: move it away, then rerun (locked sha256 %.12s)", f->sha256);
		} else if (!f->text) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s: untracked '%s' not restorable: content not in the lock",
					 e->path, f->path);
			el_item_note(it, "%s, %lld bytes, sha256 %s: copy it into %s from your own copy", omitted_why(f->omitted),
				     f->size, f->sha256, e->path);
		} else {
			untracked_job *u;

			j->files = el_xrealloc(j->files, (j->nfiles + 1) * sizeof(*j->files));
			u = &j->files[j->nfiles++];
			u->path = el_xstrdup(f->path);
			u->text = el_xstrdup(f->text);
			u->sha256 = el_xstrdup(f->sha256);
			u->executable = f->executable;
		}
	}
}

void el_plan_repos(envlock_restore *r, el_step *s)
{
	size_t ok = 0;

	for (size_t i = 0; i < r->lock->repos.nrepos; i++) {
		const el_repo *e = &r->lock->repos.repos[i], *live;
		const char *path = e->path, *commit = e->head.commit, *url = first_remote(e);
		const char *patch_text = e->patch.text, *patch_sha = e->patch.sha256;
		bool want_patch = e->patch.recorded && e->patch.size > 0, half_made, at_commit = false;
		char *host, hex[EL_SHA256_HEX];
		struct stat st;
		repo_job *j;
		el_item *it;

		if (!restorable(e))
			continue;
		if (!(host = repo_host(r, path))) {
			el_restore_outside(r, s, "repository", path);
			continue;
		}
		if (want_patch && patch_text) {
			el_sha256_buf(patch_text, strlen(patch_text), hex);
			if (!patch_sha || strcmp(hex, patch_sha) != 0) {
				it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s: the recorded patch does not match its digest", path);
				el_item_note(it, "the lock was edited after it was saved; nothing done");
				free(host);
				continue;
			}
		}
		if (!untracked_texts_match(e)) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s: a recorded untracked file does not match its digest", path);
			el_item_note(it, "the lock was edited after it was saved; nothing done");
			free(host);
			continue;
		}
		if (want_patch && !patch_text) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s: uncommitted changes were not recorded", path);
			el_item_note(it, "the lock has only the patch's digest (sha256 %s; saved with %s, or over the size limit): check out %.12s and apply the changes from your own copy",
				     patch_sha ? patch_sha : "?", el_restore_option(r, "no_patch"), commit);
			free(host);
			continue;
		}
		live = live_repo(r, host);
		half_made = stat(host, &st) == 0 && el_restore_created(r, host);
		if (half_made)
			live = NULL; /* whatever is there, this restore began it: clone again */
		else if (stat(host, &st) == 0 && (!live || strcmp(live->status ?: "", "present") != 0)) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s: exists but is not a git repository", path);
			el_item_note(it, "move it away, then rerun to clone %s there", url ? url : "the repository");
			free(host);
			continue;
		}
		j = el_xcalloc(1, sizeof(*j));
		if (live) {
			const char *have = live->head.commit, *have_patch = live->patch.sha256;
			bool live_patch = live->patch.size > 0;

			at_commit = have && strcmp(have, commit) == 0 &&
				    (want_patch ? live_patch && have_patch && patch_sha && strcmp(have_patch, patch_sha) == 0
						: !live_patch);
			if (!at_commit && has_local_changes(live)) {
				it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s has local changes (at %.12s, locked %.12s%s)",
						 path, have ? have : "?", commit, want_patch ? " with a patch" : "");
				el_item_note(it, "envlock never overwrites them: commit or stash them, then rerun");
				repo_free(j);
				free(host);
				continue;
			}
		} else if (!url) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "repository %s: %s, and no remote is recorded", path,
					 half_made ? "left half cloned by an interrupted restore" : "missing");
			el_item_note(it, "put a clone there, then rerun to check out %.12s", commit);
			repo_free(j);
			free(host);
			continue;
		}
		plan_untracked(s, e, live, j);
		if (at_commit && !j->nfiles) {
			ok++;
			repo_free(j);
			free(host);
			continue;
		}
		j->url = url ? el_xstrdup(url) : NULL;
		j->commit = el_xstrdup(commit);
		/* no head recorded counts as detached (the schema requires "detached" in a head) */
		j->branch = !e->head.recorded || e->head.detached ? NULL : el_xstrdup(e->head.branch ?: "");
		if (j->branch && !j->branch[0])
			free(j->branch), j->branch = NULL;
		j->patch = want_patch ? el_xstrdup(patch_text) : NULL;
		j->clone = !live;
		j->replace = half_made;
		j->files_only = at_commit;
		if (at_commit)
			it = el_step_add(s, ENVLOCK_ITEM_DO, "write %zu untracked file%s into %s", j->nfiles,
					 j->nfiles == 1 ? "" : "s", path);
		else if (j->nfiles)
			it = el_step_add(s, ENVLOCK_ITEM_DO, "%s%s at %.12s%s, then write %zu untracked file%s",
					 live ? "check out " : "clone ", live ? path : url, commit,
					 want_patch ? ", apply the recorded patch" : "", j->nfiles, j->nfiles == 1 ? "" : "s");
		else
			it = el_step_add(s, ENVLOCK_ITEM_DO, "%s%s at %.12s%s", live ? "check out " : "clone ",
					 live ? path : url, commit, want_patch ? ", then apply the recorded patch" : "");
		if (half_made)
			el_item_note(it, "into %s; an interrupted restore left a half-made clone there: moved aside first", path);
		else if (!live)
			el_item_note(it, "into %s", path);
		it->path = host;
		it->extra = j;
		it->free_extra = repo_free;
		it->run = repo_restore;
	}
	if (ok)
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu repositor%s at the locked commit", ok, ok == 1 ? "y" : "ies");
	if (!s->n)
		el_step_add(s, ENVLOCK_ITEM_OK, "no repositories locked");
}
