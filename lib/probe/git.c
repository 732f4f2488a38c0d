/*
 * Repositories (libgit2): each --repo folder, or the repository holding
 * the current directory, with its HEAD, nearest tag, remotes (credentials
 * stripped), submodules, uncommitted changes and the patch that rebuilds
 * them from HEAD. These are paths on this machine as the user typed
 * them, never resolved under the root: the experiment lives where
 * envlock runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock/model.h"
#include "lock/untrusted.h"
#include "probe.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/text.h"
#include "util/userpath.h"
#include "util/vec.h"
#include "util/xalloc.h"

#define EL_CHANGES_MAX 1000          /* paths kept per list of "changes" */
#define EL_PATCH_TEXT_MAX (1u << 20) /* larger patches keep their digest only */
#define EL_UNTRACKED_FILE_MAX (1u << 20) /* an untracked file's text is kept up to this size */
#define EL_UNTRACKED_REPO_MAX (8u << 20) /* and a repository's untracked texts up to this in all */

/* libgit2's detail of the call that just failed, converted once here. */
static const char *lg_reason(void)
{
	const git_error *e = git_error_last();

	return e && e->message && *e->message ? e->message : "unknown libgit2 error";
}

static void oid_hex(const git_oid *oid, char hex[GIT_OID_HEXSZ + 1])
{
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, oid);
}

/* path without the trailing '/' libgit2 gives folders, malloc'd */
static char *strip_slash(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return el_xstrndup(path, n);
}

static const char *state_name(int state)
{
	switch (state) {
	case GIT_REPOSITORY_STATE_NONE: return "clean";
	case GIT_REPOSITORY_STATE_MERGE: return "merge";
	case GIT_REPOSITORY_STATE_REVERT: return "revert";
	case GIT_REPOSITORY_STATE_REVERT_SEQUENCE: return "revert-sequence";
	case GIT_REPOSITORY_STATE_CHERRYPICK: return "cherry-pick";
	case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE: return "cherry-pick-sequence";
	case GIT_REPOSITORY_STATE_BISECT: return "bisect";
	case GIT_REPOSITORY_STATE_REBASE: return "rebase";
	case GIT_REPOSITORY_STATE_REBASE_INTERACTIVE: return "rebase-interactive";
	case GIT_REPOSITORY_STATE_REBASE_MERGE: return "rebase-merge";
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX: return "apply-mailbox";
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE: return "apply-mailbox-or-rebase";
	default: return "unknown";
	}
}

/* "head": commit, branch, detached, unborn. *commit gets HEAD's id when there is one. */
static bool record_head(el_probe *p, git_repository *repo, cJSON *entry, const char *name,
			git_oid *commit)
{
	git_reference *ref = NULL;
	int unborn = git_repository_head_unborn(repo);
	int detached = git_repository_head_detached(repo);
	bool has_commit = false;
	cJSON *head;

	if (unborn < 0 || detached < 0) {
		el_probe_warn(p, "'%s': HEAD: %s", name, lg_reason());
		return false;
	}
	head = el_jset_obj(entry, "head");
	if (!unborn) {
		if (git_reference_name_to_id(commit, repo, "HEAD") == 0) {
			char hex[GIT_OID_HEXSZ + 1];

			oid_hex(commit, hex);
			el_jset_str(head, "commit", hex);
			has_commit = true;
		} else {
			el_probe_warn(p, "'%s': HEAD: %s", name, lg_reason());
		}
	}
	/* an unborn branch still has a name: HEAD is a symbolic ref to it */
	if (!detached && git_reference_lookup(&ref, repo, "HEAD") == 0 &&
	    git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
		const char *target = git_reference_symbolic_target(ref);

		if (el_starts_with(target, "refs/heads/"))
			target += strlen("refs/heads/");
		el_jset_str(head, "branch", target);
	}
	git_reference_free(ref);
	el_jset_bool(head, "detached", detached);
	el_jset_bool(head, "unborn", unborn);
	return has_commit;
}

/* "tag": `git describe --tags` of HEAD; nothing when no tag leads to it. */
static void record_tag(el_probe *p, git_repository *repo, cJSON *entry, const char *name,
		       const git_oid *commit, bool shallow)
{
	git_describe_options opts;
	git_describe_format_options fmt;
	git_describe_result *res = NULL;
	git_object *obj = NULL;
	git_buf out = { 0 };
	int rc;

	git_describe_options_init(&opts, GIT_DESCRIBE_OPTIONS_VERSION);
	git_describe_format_options_init(&fmt, GIT_DESCRIBE_FORMAT_OPTIONS_VERSION);
	opts.describe_strategy = GIT_DESCRIBE_TAGS;
	rc = git_object_lookup(&obj, repo, commit, GIT_OBJECT_COMMIT);
	if (rc == 0)
		rc = git_describe_commit(&res, obj, &opts);
	if (rc == 0)
		rc = git_describe_format(&out, res, &fmt);
	if (rc == 0) {
		el_jset_str(entry, "tag", out.ptr);
	} else {
		const git_error *e = git_error_last();

		/*
		 * "No tag" is a describe-class error: GIT_ENOTFOUND when no tag
		 * leads to HEAD, -1 when the repository has no tag at all.
		 * libgit2 1.5 does not read .git/shallow either: its walk fails
		 * at the first missing parent, so a shallow clone may simply
		 * have no tag.
		 */
		if (rc != GIT_ENOTFOUND && !(e && e->klass == GIT_ERROR_DESCRIBE) && !shallow)
			el_probe_warn(p, "'%s': nearest tag: %s", name, lg_reason());
	}
	git_buf_dispose(&out);
	git_describe_result_free(res);
	git_object_free(obj);
}

/*
 * Configuration is read with plain iteration, never with libgit2 1.5's
 * regex-matching helpers (git_remote_list, git_remote_lookup,
 * git_submodule_foreach): with PCRE2 they leak a match block for every
 * entry that does not match (fixed upstream after 1.5: libgit2 PR #6382).
 */

/* "<section>.<middle>.<var>" with the given section and var: the middle, malloc'd; else NULL. */
static char *config_middle(const char *key, const char *section, const char *var)
{
	size_t sl = strlen(section);
	const char *dot = strrchr(key, '.');

	if (strncmp(key, section, sl) != 0 || key[sl] != '.' || !dot || dot <= key + sl + 1 ||
	    strcmp(dot + 1, var) != 0)
		return NULL;
	return el_xstrndup(key + sl + 1, (size_t)(dot - key - sl - 1));
}

static bool is_remote_key(const char *key, char **name)
{
	return (*name = config_middle(key, "remote", "url")) != NULL ||
	       (*name = config_middle(key, "remote", "pushurl")) != NULL;
}

/* url with its longest url.<base>.insteadOf prefix replaced, as git fetches it (malloc'd). */
static char *rewrite_url(const char *url, const el_strvec *rewrites)
{
	const char *best = NULL, *base = NULL;

	for (size_t i = 0; i + 1 < rewrites->n; i += 2)
		if (el_starts_with(url, rewrites->v[i]) && (!best || strlen(rewrites->v[i]) > strlen(best))) {
			best = rewrites->v[i];
			base = rewrites->v[i + 1];
		}
	return best ? el_xasprintf("%s%s", base, url + strlen(best)) : el_xstrdup(url);
}

/* "remotes": name and credential-free url (insteadOf applied), sorted by name. */
static void record_remotes(el_probe *p, git_repository *repo, cJSON *entry, const char *name)
{
	git_config *cfg = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *ce;
	el_strvec names = EL_STRVEC_INIT, rewrites = EL_STRVEC_INIT; /* rewrites: prefix, base, prefix, base... */
	cJSON *arr = el_jset_arr(entry, "remotes");
	char *middle;
	int rc;

	if (git_repository_config_snapshot(&cfg, repo) != 0 || git_config_iterator_new(&it, cfg) != 0) {
		el_probe_warn(p, "'%s': remotes: %s", name, lg_reason());
		goto done;
	}
	while ((rc = git_config_next(&ce, it)) == 0) {
		if (is_remote_key(ce->name, &middle)) {
			if (el_strvec_has(&names, middle))
				free(middle);
			else
				el_strvec_push_owned(&names, middle);
		} else if ((middle = config_middle(ce->name, "url", "insteadof")) != NULL) {
			if (ce->value) {
				el_strvec_push(&rewrites, ce->value);
				el_strvec_push_owned(&rewrites, middle);
			} else {
				free(middle);
			}
		}
	}
	if (rc != GIT_ITEROVER)
		el_probe_warn(p, "'%s': remotes: %s", name, lg_reason());
	el_strvec_sort(&names);
	for (size_t i = 0; i < names.n; i++) {
		cJSON *o = el_jpush_obj(arr);
		char *key = el_xasprintf("remote.%s.url", names.v[i]);
		const char *url = NULL;

		el_jset_str(o, "name", names.v[i]);
		if (git_config_get_string(&url, cfg, key) == 0 && url) {
			char *rewritten = rewrite_url(url, &rewrites);
			char *clean = el_url_strip_credentials(rewritten, false);

			el_jset_str(o, "url", clean);
			free(clean);
			free(rewritten);
		}
		free(key);
	}
done:
	el_strvec_release(&names);
	el_strvec_release(&rewrites);
	git_config_iterator_free(it);
	git_config_free(cfg);
}

/* .gitmodules of the work tree: its path and url entries, as key/value pairs. */
static void read_gitmodules(el_probe *p, const char *workdir, const char *name, el_strvec *paths,
			    el_strvec *urls)
{
	char *file = el_xasprintf("%s.gitmodules", workdir);
	git_config *mods = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *ce;
	struct stat st;
	char *middle;
	int rc;

	if (stat(file, &st) != 0)
		goto done;
	if (git_config_open_ondisk(&mods, file) != 0 || git_config_iterator_new(&it, mods) != 0) {
		el_probe_warn(p, "'%s': .gitmodules: %s", name, lg_reason());
		goto done;
	}
	while ((rc = git_config_next(&ce, it)) == 0) {
		el_strvec *to = NULL;

		if ((middle = config_middle(ce->name, "submodule", "path")) != NULL)
			to = paths;
		else if ((middle = config_middle(ce->name, "submodule", "url")) != NULL)
			to = urls;
		if (!to)
			continue;
		if (!ce->value) {
			free(middle);
			continue;
		}
		el_strvec_push_owned(to, middle);
		el_strvec_push(to, ce->value);
	}
	if (rc != GIT_ITEROVER)
		el_probe_warn(p, "'%s': .gitmodules: %s", name, lg_reason());
done:
	git_config_iterator_free(it);
	git_config_free(mods);
	free(file);
}

/* The value of the last key/value pair with this key, or NULL. */
static const char *pairs_get(const el_strvec *pairs, const char *key)
{
	const char *v = NULL;

	for (size_t i = 0; i + 1 < pairs->n; i += 2)
		if (strcmp(pairs->v[i], key) == 0)
			v = pairs->v[i + 1];
	return v;
}

/* The key of the last pair with this value, or NULL. */
static const char *pairs_key_of(const el_strvec *pairs, const char *value)
{
	const char *k = NULL;

	for (size_t i = 0; i + 1 < pairs->n; i += 2)
		if (strcmp(pairs->v[i + 1], value) == 0)
			k = pairs->v[i];
	return k;
}

/* The commit checked out in the submodule at path, if it is checked out. */
static bool submodule_head(const char *workdir, const char *path, git_oid *out)
{
	char *dir = el_xasprintf("%s%s", workdir, path);
	git_repository *sub = NULL;
	bool ok;

	/* NO_SEARCH: an empty (not checked out) folder must not find the superproject */
	ok = git_repository_open_ext(&sub, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 &&
	     git_reference_name_to_id(out, sub, "HEAD") == 0;
	git_repository_free(sub);
	free(dir);
	return ok;
}

/*
 * "submodules": each gitlink of the index (the commit the superproject
 * records), its url from .gitmodules, and the commit checked out in it
 * when that differs. Sorted by path.
 */
static void record_submodules(el_probe *p, git_repository *repo, cJSON *entry, const char *name)
{
	const char *workdir = git_repository_workdir(repo);
	cJSON *arr = el_jset_arr(entry, "submodules");
	el_strvec paths = EL_STRVEC_INIT, urls = EL_STRVEC_INIT;
	git_index *index = NULL;

	if (git_repository_index(&index, repo) != 0) {
		el_probe_warn(p, "'%s': submodules: %s", name, lg_reason());
		return;
	}
	read_gitmodules(p, workdir, name, &paths, &urls);
	/* the index is sorted by path, so the list is too */
	for (size_t i = 0; i < git_index_entrycount(index); i++) {
		const git_index_entry *e = git_index_get_byindex(index, i);
		char hex[GIT_OID_HEXSZ + 1];
		const char *sm_name, *url;
		git_oid wd;
		cJSON *o;

		if ((e->mode & 0170000) != GIT_FILEMODE_COMMIT || GIT_INDEX_ENTRY_STAGE(e) != 0)
			continue;
		o = el_jpush_obj(arr);
		el_jset_str(o, "path", e->path);
		oid_hex(&e->id, hex);
		el_jset_str(o, "commit", hex);
		sm_name = pairs_key_of(&paths, e->path);
		url = sm_name ? pairs_get(&urls, sm_name) : NULL;
		if (url) {
			char *clean = el_url_strip_credentials(url, false);

			el_jset_str(o, "url", clean);
			free(clean);
		}
		if (submodule_head(workdir, e->path, &wd) && !git_oid_equal(&wd, &e->id)) {
			oid_hex(&wd, hex);
			el_jset_str(o, "workdir_commit", hex);
		}
	}
	el_strvec_release(&paths);
	el_strvec_release(&urls);
	git_index_free(index);
}

/* One sorted list of "changes", capped; true when it was cut. */
static bool put_changes(el_probe *p, cJSON *changes, const char *key, el_strvec *s, const char *name)
{
	cJSON *arr = el_jset_arr(changes, key);
	size_t n = s->n < EL_CHANGES_MAX ? s->n : EL_CHANGES_MAX;

	el_strvec_sort(s);
	for (size_t i = 0; i < n; i++)
		el_jpush_str(arr, s->v[i]);
	if (s->n > n)
		el_probe_warn(p, "'%s': %zu %s paths, only the first %d recorded", name, s->n, key,
			      EL_CHANGES_MAX);
	return s->n > n;
}

/*
 * "changes": staged, modified, untracked and conflicted paths. Submodules
 * are left out here (and of the patch): their state is in "submodules".
 * Returns whether the work tree is dirty: staged, modified or conflicted
 * files. Untracked files alone do not make it dirty, as for git
 * describe --dirty: HEAD plus the patch still rebuild every tracked file,
 * and the untracked ones are recorded apart (record_untracked_files).
 * *untracked_out gets the untracked paths, sorted.
 */
static bool record_changes(el_probe *p, git_repository *repo, cJSON *entry, const char *name,
			   el_strvec *untracked_out)
{
	git_status_options opts;
	git_status_list *list = NULL;
	el_strvec staged = EL_STRVEC_INIT, modified = EL_STRVEC_INIT, untracked = EL_STRVEC_INIT,
		  conflicted = EL_STRVEC_INIT;
	cJSON *changes;
	bool truncated = false, dirty;

	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		     GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&list, repo, &opts) != 0) {
		el_probe_warn(p, "'%s': status: %s", name, lg_reason());
		return false;
	}
	for (size_t i = 0; i < git_status_list_entrycount(list); i++) {
		const git_status_entry *e = git_status_byindex(list, i);
		const git_diff_delta *d = e->head_to_index ? e->head_to_index : e->index_to_workdir;
		const char *path;

		if (!d)
			continue;
		path = d->new_file.path ? d->new_file.path : d->old_file.path;
		if (e->status & GIT_STATUS_CONFLICTED) {
			el_strvec_push(&conflicted, path);
			continue;
		}
		if (e->status & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
				 GIT_STATUS_INDEX_RENAMED | GIT_STATUS_INDEX_TYPECHANGE))
			el_strvec_push(&staged, path);
		if (e->status & (GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_DELETED | GIT_STATUS_WT_RENAMED |
				 GIT_STATUS_WT_TYPECHANGE | GIT_STATUS_WT_UNREADABLE))
			el_strvec_push(&modified, path);
		if (e->status & GIT_STATUS_WT_NEW)
			el_strvec_push(&untracked, path);
	}
	changes = el_jset_obj(entry, "changes");
	truncated |= put_changes(p, changes, "staged", &staged, name);
	truncated |= put_changes(p, changes, "modified", &modified, name);
	truncated |= put_changes(p, changes, "untracked", &untracked, name);
	truncated |= put_changes(p, changes, "conflicted", &conflicted, name);
	if (truncated)
		el_jset_bool(changes, "truncated", true);
	dirty = staged.n || modified.n || conflicted.n;
	el_jset_bool(entry, "dirty", dirty);
	git_status_list_free(list);
	el_strvec_release(&staged);
	el_strvec_release(&modified);
	*untracked_out = untracked; /* sorted by put_changes */
	el_strvec_release(&conflicted);
	return dirty;
}

/* Where the patch goes as libgit2 prints it: a digest, a size, the text up to a cap. */
typedef struct {
	el_sha256 *md;
	uint64_t size;
	el_buf text;
	bool keep;
	git_diff *conflicts;            /* HEAD against the work tree, for the conflicted paths */
	const git_diff_delta *replaced; /* the conflicted delta printed last */
} el_patch_sink;

static void sink_put(el_patch_sink *s, const void *data, size_t n)
{
	el_sha256_update(s->md, data, n);
	s->size += n;
	if (s->keep && el_buf_put(&s->text, data, n) != 0) {
		s->keep = false;
		el_buf_release(&s->text);
	}
}

/* The bytes git_diff_to_buf would hold, streamed: the origin of +/-/context lines, then the line. */
static int sink_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
		     const git_diff_line *line, void *payload)
{
	char origin = line->origin;

	(void)delta;
	(void)hunk;
	if (origin == GIT_DIFF_LINE_CONTEXT || origin == GIT_DIFF_LINE_ADDITION ||
	    origin == GIT_DIFF_LINE_DELETION)
		sink_put(payload, &origin, 1);
	sink_put(payload, line->content, line->content_len);
	return 0;
}

/* The conflicted path's own diff of HEAD against the work tree, as `git diff HEAD` shows it. */
static int print_conflicted(el_patch_sink *s, const char *path)
{
	for (size_t i = 0; i < git_diff_num_deltas(s->conflicts); i++) {
		git_patch *patch = NULL;
		int rc;

		if (strcmp(git_diff_get_delta(s->conflicts, i)->new_file.path, path) != 0)
			continue;
		rc = git_patch_from_diff(&patch, s->conflicts, i);
		if (rc == 0 && patch)
			rc = git_patch_print(patch, sink_line, s);
		git_patch_free(patch);
		return rc;
	}
	return 0;
}

/*
 * libgit2 1.5 prints a conflicted index entry as a bare "old mode 0"
 * header with no content; git diff HEAD shows HEAD against the file with
 * its conflict markers. The delta's lines are replaced by that diff.
 */
static int patch_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
		      const git_diff_line *line, void *payload)
{
	el_patch_sink *s = payload;

	if (delta->status != GIT_DELTA_CONFLICTED)
		return sink_line(delta, hunk, line, payload);
	if (delta == s->replaced)
		return 0;
	s->replaced = delta;
	return print_conflicted(s, delta->new_file.path ? delta->new_file.path : delta->old_file.path);
}

/* HEAD against the work tree, alone, for the paths conflicted in diff; NULL when none are. */
static int conflicts_diff(git_diff **out, git_repository *repo, git_tree *tree, git_diff *diff,
			  const git_diff_options *base)
{
	git_diff_options opts = *base;
	el_strvec paths = EL_STRVEC_INIT;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (d->status == GIT_DELTA_CONFLICTED)
			el_strvec_push(&paths, d->new_file.path ? d->new_file.path : d->old_file.path);
	}
	if (paths.n) {
		opts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
		opts.pathspec.strings = paths.v;
		opts.pathspec.count = paths.n;
		rc = git_diff_tree_to_workdir(out, repo, tree, &opts);
	}
	el_strvec_release(&paths);
	return rc;
}

/*
 * "patch": HEAD (an empty tree when unborn) against the work tree and
 * index, as `git diff HEAD` shows it. The digest always; the text when
 * wanted and not over EL_PATCH_TEXT_MAX. It is streamed (git_diff_print,
 * the bytes git_diff_to_buf would collect) so a huge change costs no
 * more memory than its largest file.
 */
static void record_patch(el_probe *p, git_repository *repo, cJSON *entry, const char *name,
			 const git_oid *commit)
{
	git_diff_options opts;
	git_commit *head = NULL;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	el_patch_sink sink = { .text = EL_BUF_INIT(EL_PATCH_TEXT_MAX), .keep = !p->opts->no_patch };
	char hex[EL_SHA256_HEX];
	cJSON *patch;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags |= GIT_DIFF_IGNORE_SUBMODULES;
	if ((commit && (git_commit_lookup(&head, repo, commit) != 0 || git_commit_tree(&tree, head) != 0)) ||
	    git_diff_tree_to_workdir_with_index(&diff, repo, tree, &opts) != 0 ||
	    conflicts_diff(&sink.conflicts, repo, tree, diff, &opts) != 0) {
		el_probe_warn(p, "'%s': patch: %s", name, lg_reason());
		goto done;
	}
	sink.md = el_sha256_begin();
	if (git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, patch_line, &sink) != 0) {
		el_probe_warn(p, "'%s': patch: %s", name, lg_reason());
		goto done;
	}
	el_sha256_end(sink.md, hex);
	sink.md = NULL;
	patch = el_jset_obj(entry, "patch");
	el_jset_str(patch, "sha256", hex);
	el_jset_int(patch, "size", (long long)sink.size);
	if (p->opts->no_patch)
		goto done;
	if (!sink.keep) {
		el_jset_bool(patch, "truncated", true);
		el_probe_warn(p, "'%s': uncommitted changes make a %llu-byte patch, over %u bytes: only its sha256 is recorded",
			      name, (unsigned long long)sink.size, EL_PATCH_TEXT_MAX);
	} else if (!el_is_text(sink.text.data ? sink.text.data : "", sink.text.len)) {
		/* JSON cannot hold these bytes unchanged; the digest would no longer match the text */
		el_jset_bool(patch, "truncated", true);
		el_probe_warn(p, "'%s': the patch of uncommitted changes is not UTF-8 text: only its sha256 is recorded",
			      name);
	} else {
		el_jset_strn(patch, "text", sink.text.data ? sink.text.data : "", sink.text.len);
	}
done:
	el_sha256_abort(sink.md);
	el_buf_release(&sink.text);
	git_diff_free(sink.conflicts);
	git_diff_free(diff);
	git_tree_free(tree);
	git_commit_free(head);
}

/* What the lock keeps of one untracked file: a budget of text shared by the repository's files. */
typedef struct {
	el_probe *p;
	const char *name;    /* the repository, as shown */
	size_t text_left;    /* of EL_UNTRACKED_REPO_MAX */
	el_strvec by_digest; /* the files kept by digest only, for the warning */
} el_untracked_ctx;

/* The bytes of the file open at fd: 0, -1 with errno, or -2 when it is over out's limit (it grew). */
static int read_small(int fd, el_buf *out)
{
	char chunk[65536];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (el_buf_put(out, chunk, (size_t)n) != 0)
			return -2;
	}
	return 0;
}

/*
 * Is this text a lock envlock wrote (save's default output lands in the
 * work tree)? It describes the machine, not the code: a lock kept in the
 * next lock would nest every earlier one.
 */
static bool is_envlock_lock(const char *text, size_t len)
{
	cJSON *doc = cJSON_ParseWithLength(text, len);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(doc, "id");
	bool yes = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(doc, "envlock")) && cJSON_IsString(id) &&
		   el_starts_with(id->valuestring, "sha256:");

	cJSON_Delete(doc);
	return yes;
}

/*
 * One untracked file into o: sha256 and size always, the text when it is
 * UTF-8 text within both limits (and not --no-patch), else "omitted".
 * false when it could not be read (warned) or is envlock's own lock:
 * left out of the list.
 */
static bool untracked_file(el_untracked_ctx *u, const char *workdir, const char *rel, cJSON *o)
{
	char *path = el_xasprintf("%s%s", workdir, rel), hex[EL_SHA256_HEX];
	el_buf text = EL_BUF_INIT(EL_UNTRACKED_FILE_MAX);
	const char *omitted = NULL;
	struct stat st;
	uint64_t size = 0;
	bool ok = false;
	int fd = -1, err_no = 0;

	if (lstat(path, &st) != 0) {
		el_probe_warn(u->p, "'%s': untracked '%s': %s", u->name, rel, el_strerror(errno));
		goto done;
	}
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target));

		if (n < 0) {
			el_probe_warn(u->p, "'%s': untracked '%s': %s", u->name, rel, el_strerror(errno));
			goto done;
		}
		el_sha256_buf(target, (size_t)n, hex);
		size = (uint64_t)n;
		omitted = "symlink";
	} else if (!S_ISREG(st.st_mode)) {
		goto done; /* a socket or fifo: nothing git could track either */
	} else if ((uint64_t)st.st_size > EL_UNTRACKED_FILE_MAX) {
		if (el_hashcache_file(u->p->hashes, path, hex, &size, &err_no) != 0) {
			el_probe_warn(u->p, "'%s': untracked '%s': %s", u->name, rel,
				      err_no ? el_strerror(err_no) : "changed while being hashed");
			goto done;
		}
		omitted = "too_large";
	} else {
		int rc = -1;

		if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 || (rc = read_small(fd, &text)) != 0) {
			el_probe_warn(u->p, "'%s': untracked '%s': %s", u->name, rel,
				      rc == -2 ? "grew past 1 MiB while being read" : el_strerror(errno));
			goto done;
		}
		size = text.len;
		el_sha256_buf(text.data ? text.data : "", text.len, hex);
		if (!el_is_text(text.data ? text.data : "", text.len))
			omitted = "binary";
		else if (text.len && text.data[0] == '{' && is_envlock_lock(text.data, text.len))
			goto done;
		else if (u->p->opts->no_patch)
			omitted = "no_patch";
		else if (text.len > u->text_left)
			omitted = "over_repo_limit";
	}
	el_jset_str(o, "path", rel);
	el_jset_str(o, "sha256", hex);
	el_jset_int(o, "size", (long long)size);
	if (S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR))
		el_jset_bool(o, "executable", true);
	if (omitted) {
		el_jset_str(o, "omitted", omitted);
		if (strcmp(omitted, "no_patch") != 0)
			el_strvec_push(&u->by_digest, rel);
	} else {
		el_jset_strn(o, "text", text.data ? text.data : "", text.len);
		u->text_left -= text.len;
	}
	ok = true;
done:
	if (fd >= 0)
		close(fd);
	el_buf_release(&text);
	free(path);
	return ok;
}

/*
 * "untracked_files": the work tree's new files that .gitignore does not
 * exclude (git status lists them; submodules are left out), so that a
 * change made of new files survives restore. Names restore would refuse
 * are warned about and left out; so is what envlock itself writes there
 * (restore's .envlock state folder, lockfiles), silently.
 */
static void record_untracked_files(el_probe *p, git_repository *repo, cJSON *entry, const char *name,
				   const el_strvec *untracked)
{
	el_untracked_ctx u = { p, name, EL_UNTRACKED_REPO_MAX, EL_STRVEC_INIT };
	const char *workdir = git_repository_workdir(repo);
	size_t n = untracked->n < EL_CHANGES_MAX ? untracked->n : EL_CHANGES_MAX, recorded = 0;
	cJSON *arr;

	if (!n || !workdir)
		return;
	arr = el_jset_arr(entry, "untracked_files");
	for (size_t i = 0; i < n; i++) {
		const char *rel = untracked->v[i], *why = el_bad_repo_file(rel);
		cJSON *o;

		/* git status shows a repository inside the work tree as its folder, and does not look in */
		if (rel[0] && rel[strlen(rel) - 1] == '/') {
			el_probe_warn(p, "'%s': untracked '%s' is a git repository of its own: not recorded (name it with --repo)",
				      name, rel);
			continue;
		}
		if (why) {
			el_probe_warn(p, "'%s': untracked '%s' %s: not recorded, restore could not write it", name, rel, why);
			continue;
		}
		/* restore's state folder, made where it ran: the work tree or a folder in it */
		if (el_starts_with(rel, ".envlock/") || strstr(rel, "/.envlock/"))
			continue;
		o = cJSON_CreateObject();
		if (!o)
			el_oom();
		if (untracked_file(&u, workdir, rel, o) && cJSON_AddItemToArray(arr, o))
			recorded++;
		else
			cJSON_Delete(o);
	}
	if (u.by_digest.n)
		el_probe_warn(p, "'%s': %zu untracked file%s recorded by sha256 only (binary, a link, or over %u MiB): restore cannot recreate %s: '%s'%s",
			      name, u.by_digest.n, u.by_digest.n == 1 ? "" : "s", EL_UNTRACKED_FILE_MAX >> 20,
			      u.by_digest.n == 1 ? "it" : "them", u.by_digest.v[0], u.by_digest.n > 1 ? ", ..." : "");
	if (!recorded)
		cJSON_DeleteItemFromObjectCaseSensitive(entry, "untracked_files");
	el_strvec_release(&u.by_digest);
}

/* A folder the user named, as they would name it (malloc'd). */
static char *shown_path(const char *arg)
{
	char *real = realpath(arg, NULL), *shown;

	if (!real)
		return el_xstrdup(arg);
	shown = el_userpath_display(real);
	free(real);
	return shown;
}

/*
 * Record one repository: arg as typed (NULL for the current directory's).
 * A folder outside any repository is recorded and warned about; a --repo
 * that cannot be opened at all (missing, unreadable, refused by libgit2)
 * is a request error: the lock does not hold what was asked for.
 * Whether it wrote an entry into arr.
 */
static bool probe_repo(el_probe *p, cJSON *arr, const char *arg, el_strvec *seen)
{
	git_repository *repo = NULL;
	const char *start = arg ? arg : ".";
	cJSON *entry;
	char *key, *name;
	struct stat st;
	git_oid commit;
	bool bare, shallow, has_commit;
	int rc, state;

	if (arg && stat(arg, &st) != 0) {
		entry = el_jpush_obj(arr);
		el_jset_str(entry, "path", arg);
		el_jset_str(entry, "requested", arg);
		el_jset_str(entry, "status", "error");
		el_probe_request_error(p, "'%s': %s", arg, el_strerror(errno));
		return true;
	}
	rc = git_repository_open_ext(&repo, start, 0, NULL);
	if (rc == GIT_ENOTFOUND && !arg)
		return false;
	if (rc != 0) {
		entry = el_jpush_obj(arr);
		name = shown_path(start);
		el_jset_str(entry, "path", name);
		el_jset_str(entry, "requested", arg);
		if (rc == GIT_ENOTFOUND) {
			el_jset_str(entry, "status", "not_a_repository");
			el_probe_warn(p, "'%s': not inside a git repository", arg);
		} else {
			el_jset_str(entry, "status", "error");
			if (arg)
				el_probe_request_error(p, "'%s': %s", arg, lg_reason());
			else
				el_probe_warn(p, "'.': %s", lg_reason());
		}
		free(name);
		return true;
	}
	bare = git_repository_is_bare(repo);
	key = strip_slash(bare || !git_repository_workdir(repo) ? git_repository_path(repo)
							       : git_repository_workdir(repo));
	if (el_strvec_has(seen, key)) {
		free(key);
		git_repository_free(repo);
		return false;
	}
	el_strvec_push_owned(seen, key);
	name = el_userpath_display(key);
	shallow = git_repository_is_shallow(repo) == 1;
	state = git_repository_state(repo);

	entry = el_jpush_obj(arr);
	el_jset_str(entry, "path", name);
	el_jset_str(entry, "requested", arg);
	el_jset_str(entry, "status", "present");
	el_jset_bool(entry, "bare", bare);
	el_jset_bool(entry, "shallow", shallow);
	el_jset_str(entry, "state", state_name(state));
	if (state != GIT_REPOSITORY_STATE_NONE && state != GIT_REPOSITORY_STATE_BISECT)
		el_probe_warn(p, "'%s': a %s is in progress: the recorded work tree is not a commit",
			      name, state_name(state));
	has_commit = record_head(p, repo, entry, name, &commit);
	if (has_commit)
		record_tag(p, repo, entry, name, &commit, shallow);
	record_remotes(p, repo, entry, name);
	if (!bare) {
		el_strvec untracked = EL_STRVEC_INIT;

		record_submodules(p, repo, entry, name);
		if (record_changes(p, repo, entry, name, &untracked))
			record_patch(p, repo, entry, name, has_commit ? &commit : NULL);
		record_untracked_files(p, repo, entry, name, &untracked);
		el_strvec_release(&untracked);
	}
	free(name);
	git_repository_free(repo);
	return true;
}

/*
 * Could the current directory be inside a git repository: is there a
 * ".git" (folder or gitfile) in it or a folder above it, or a GIT_DIR?
 * Starting libgit2 costs milliseconds; without a ".git" on the way up
 * there is nothing for it to find.
 */
static bool cwd_may_be_in_repo(void)
{
	char *dir = getcwd(NULL, 0);
	bool found = getenv("GIT_DIR") != NULL;

	while (dir && !found) {
		char *git = el_path_join(dir, ".git");
		struct stat st;

		found = lstat(git, &st) == 0;
		free(git);
		if (strcmp(dir, "/") == 0)
			break;
		{
			char *up = el_path_dir(dir);

			free(dir);
			dir = up;
		}
	}
	free(dir);
	return found;
}

void el_probe_repos(el_probe *p)
{
	cJSON *sec = el_probe_section(p, EL_SEC_REPOS);
	cJSON *arr = el_jset_arr(sec, "repositories");
	const envlock_probe_opts *o = p->opts;
	el_strvec seen = EL_STRVEC_INIT;
	size_t recorded = 0;

	if (o->repo_count || (o->default_repo && p->root.live && cwd_may_be_in_repo())) {
		if (git_libgit2_init() < 0) {
			el_probe_warn(p, "repositories: %s", lg_reason());
		} else {
			for (size_t i = 0; i < o->repo_count; i++)
				recorded += probe_repo(p, arr, o->repos[i], &seen);
			if (!o->repo_count)
				recorded += probe_repo(p, arr, NULL, &seen);
			git_libgit2_shutdown();
		}
	}
	/* "absent" is the status alone: no repository was asked for or found */
	if (recorded > 0) {
		el_jset_str(sec, "status", "present");
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(sec, "repositories");
		el_jset_str(sec, "status", "absent");
	}
	el_strvec_release(&seen);
}
