/*
 * Restore step 5: the conda environment, created from an @EXPLICIT spec
 * (one package URL per line with its digest, in the locked order: the
 * one `envlock export --format conda-explicit` writes, in the form of
 * `conda list --explicit --md5`) by the first of micromamba, mamba or
 * conda found, so no solver runs and nothing but the locked builds is
 * installed. From a kit with no conda found (or --no-conda), envlock
 * links the kit's archives itself (lib/condalink): a reinstalled machine
 * needs nothing but envlock and the kit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "condalink/condalink.h"
#include "envlock/export.h"
#include "plan.h"
#include "util/atomic.h"
#include "util/error.h"
#include "util/text.h"
#include "util/xalloc.h"

/* "name version build" of a conda package, the identity compared. */
static char *pkg_key(const el_conda_package *p)
{
	return el_xasprintf("%s %s %s", p->name ?: "?", p->version ?: "?", p->build ?: "");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted identities of a conda section's packages, for has_key. */
static void key_set(el_strvec *set, const el_conda *conda)
{
	for (size_t i = 0; conda && i < conda->npackages; i++)
		el_strvec_push_owned(set, pkg_key(&conda->packages[i]));
	el_strvec_sort(set);
}

static bool has_key(const el_strvec *set, const char *key)
{
	return set->n && bsearch(&key, set->v, set->n, sizeof(*set->v), cmp_str) != NULL;
}

/*
 * The conda-compatible program: --conda-exe, the locked install's bin/,
 * then PATH; on this machine its host path, under --root its path in the
 * tree (it runs there, chroot'ed).
 */
static char *find_conda(envlock_restore *r)
{
	static const char *const names[] = { "micromamba", "mamba", "conda" };
	const char *root_prefix = r->lock->conda.root_prefix;
	const char *path = getenv("PATH");

	if (r->opts.conda_exe)
		return el_xstrdup(r->opts.conda_exe);
	for (size_t i = 0; i < 3; i++) {
		if (root_prefix) {
			char *abs = el_xasprintf("%s/bin/%s", root_prefix, names[i]);
			char *host = el_restore_host(&r->root, abs);

			if (access(host, X_OK) == 0) {
				free(r->root.live ? abs : host);
				return r->root.live ? host : abs;
			}
			free(abs);
			free(host);
		}
		for (const char *p = path; p && *p;) {
			size_t len = strcspn(p, ":");
			char *dir = el_xstrndup(p, len), *abs, *host;

			p += len + (p[len] == ':');
			if (dir[0] != '/') {
				free(dir);
				continue;
			}
			abs = el_path_join(dir, names[i]);
			host = r->root.live ? el_xstrdup(abs) : el_restore_host(&r->root, abs);
			free(dir);
			if (access(host, X_OK) == 0) {
				free(r->root.live ? abs : host);
				return r->root.live ? host : abs;
			}
			free(abs);
			free(host);
		}
	}
	return NULL;
}

typedef struct {
	char *spec_path; /* where the spec is written before the program runs (host path) */
	bool in_tree;    /* it is in the tree, for the chroot'ed program: removed after the run */
	bool replace;    /* move the existing prefix aside first */
	const el_kit *kit; /* --kit with --chroot: its archives go into the tree at stage_dir first */
	char *stage_dir;
} create_job;

static void create_free(void *p)
{
	create_job *j = p;

	if (j) {
		free(j->spec_path);
		free(j->stage_dir);
	}
	free(j);
}

/*
 * One more locked package the kit lacks, counted in *n; the first eight
 * are named in missing (EL_BUF_FITS: eight names, each with the kit's word).
 */
static void add_missing(envlock_restore *r, const el_conda_package *p, el_buf *missing, size_t *n)
{
	const el_kit_missing *m = el_kit_missing_of(r->kit, "conda", p->name);

	if ((*n)++ >= 8)
		return;
	el_buf_addf(missing, "%s%s %s %s", missing->len ? "; " : "", p->name, p->version ?: "?", p->build ?: "");
	if (m && (m->reason || m->fetch))
		el_buf_addf(missing, " (%s%s%s)", m->reason ? m->reason : "",
			    m->reason && m->fetch ? "; fetch: " : m->fetch ? "fetch: " : "", m->fetch ? m->fetch : "");
}

/* A kit that lacks n of the total locked packages: a MANUAL item naming them. */
static void missing_item(envlock_restore *r, el_step *s, const char *target, size_t n, size_t total,
			 const el_buf *missing)
{
	el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "conda environment %s: %zu of %zu locked packages are not in the kit %s",
				  target, n, total, r->kit->shown);

	el_item_note(it, "%s%s; add them to the kit (`envlock pack` where they can be downloaded), or restore without --kit",
		     el_buf_cstr(missing), n > 8 ? "; ..." : "");
}

/*
 * The @EXPLICIT spec of a kit: the locked packages in the lock's order,
 * each the kit's archive by a file:// URL under base (the kit folder, or
 * where it is put in the tree) with the lock's digest; the packages the
 * kit lacks go into missing instead, with the kit's word on each.
 * NULL when the spec would be longer than KIT_SPEC_MAX.
 */
#define KIT_SPEC_MAX (64u << 20)

static char *kit_spec(envlock_restore *r, const char *base, size_t *len, el_buf *missing, size_t *nmissing)
{
	const el_conda *conda = &r->lock->conda;
	el_buf b = EL_BUF_INIT(KIT_SPEC_MAX);

	el_buf_addf(&b, "# created-by: envlock restore of lock %s from the kit %s\n@EXPLICIT\n", r->id, r->kit->shown);
	for (size_t i = 0; i < conda->npackages; i++) {
		const el_conda_package *p = &conda->packages[i];
		const el_kit_item *it = el_kit_conda(r->kit, el_path_base(p->url));
		char *rel, *url;

		if (!it) {
			add_missing(r, p, missing, nmissing);
			continue;
		}
		rel = el_xasprintf("conda/%s", it->file);
		url = el_kit_file_url(base, rel);
		/* md5 is what every conda reads; the lock's digest, which the kit's file was checked against */
		el_buf_addf(&b, "%s#%s\n", url, p->md5 ? p->md5 : p->sha256);
		free(url);
		free(rel);
	}
	if (el_buf_failed(&b)) {
		el_buf_release(&b);
		return NULL;
	}
	*len = b.len;
	return el_buf_detach(&b);
}

static int create_env(el_item *it, el_apply *ap)
{
	create_job *j = it->extra;
	struct stat st;
	int rc;

	if (j->replace && lstat(it->path, &st) == 0 && el_apply_aside(ap, it, it->path, NULL) != 0)
		return -1;
	if (el_apply_write_input(ap, it, j->spec_path, j->in_tree) != 0)
		return -1;
	el_apply_log(ap, "wrote the explicit spec '%s'", j->spec_path);
	if (j->stage_dir && el_kit_stage(ap, it, j->kit, EL_KIT_CONDA, j->stage_dir) != 0) {
		el_apply_remove_input(ap, j->spec_path);
		return -1;
	}
	el_apply_journal(ap, "creating %s", it->path);
	rc = el_apply_run_argv(it, ap);
	if (j->in_tree)
		el_apply_remove_input(ap, j->spec_path);
	if (j->stage_dir)
		el_kit_unstage(ap, j->kit, EL_KIT_CONDA, j->stage_dir);
	if (rc != 0)
		return -1;
	el_apply_journal(ap, "created %s", it->path);
	return 0;
}

typedef struct {
	bool replace;    /* move the existing prefix aside first */
	char *prefix;    /* the environment's path as its programs see it (in the tree, under --root) */
} link_job;

static void link_free(void *p)
{
	link_job *j = p;

	if (j)
		free(j->prefix);
	free(j);
}

/*
 * Link the kit's archives into it->path (lib/condalink), each the kit's
 * file checked against the lock by el_kit_open: nothing is hashed again.
 * Under --root, the .pyc of noarch python packages need the tree's python:
 * compiled chroot'ed with --chroot, else left to their first import.
 */
static int link_env(el_item *it, el_apply *ap)
{
	envlock_restore *r = ap->r;
	link_job *j = it->extra;
	const el_conda *conda = &r->lock->conda;
	el_clink_pkg *pkgs = el_xcalloc(conda->npackages + 1, sizeof(*pkgs));
	el_clink_opts o = { 0 };
	el_clink_result res = { 0 };
	struct timespec t0, t1;
	struct stat st;
	char *cmd;
	int rc;

	for (size_t i = 0; i < conda->npackages; i++) {
		const el_conda_package *p = &conda->packages[i];
		const el_kit_item *k = el_kit_conda(r->kit, el_path_base(p->url));

		pkgs[i].archive = k->host;
		pkgs[i].channel = p->channel;
		pkgs[i].url = p->url;
		pkgs[i].md5 = p->md5 ? p->md5 : k->md5[0] ? k->md5 : NULL;
		pkgs[i].sha256 = p->sha256 ? p->sha256 : k->sha256;
		pkgs[i].verified = true;
	}
	if (j->replace && lstat(it->path, &st) == 0 && el_apply_aside(ap, it, it->path, NULL) != 0) {
		free(pkgs);
		return -1;
	}
	cmd = el_xasprintf("envlock restore --kit %s (lock %s)", r->kit->shown, r->id);
	o.prefix = j->prefix;
	o.host_prefix = it->path;
	o.chroot = r->root.live ? NULL : r->opts.chroot ? r->root.prefix : NULL;
	o.no_pyc = !r->root.live && !r->opts.chroot;
	o.history_cmd = cmd;
	o.log_fd = ap->log_fd;
	el_apply_journal(ap, "creating %s", it->path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = el_clink_create(&res, ap->ctx, &o, pkgs, conda->npackages);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc != 0) {
		el_item_fail(it, "%s", envlock_error_last(ap->ctx));
	} else {
		el_apply_log(ap, "linked %zu packages into '%s': %zu files (%zu hard links, %zu copies, %zu with the prefix replaced, %zu links), %zu entry points, %zu .pyc, in %.3f s",
			     res.packages, it->path, res.files, res.hardlinks, res.copies, res.patched, res.softlinks,
			     res.entry_points, res.pycs, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		if (res.note) {
			el_apply_log(ap, "%s", res.note);
			if (ap->progress) {
				fputs("envlock: conda: ", ap->progress);
				el_term_put(ap->progress, res.note);
				fputc('\n', ap->progress);
			}
		}
		el_apply_journal(ap, "created %s", it->path);
	}
	el_clink_result_release(&res);
	free(cmd);
	free(pkgs);
	return rc != 0 ? -1 : 0;
}

/* The kit's missing conda packages, for the "manual" item; their count. */
static size_t kit_missing(envlock_restore *r, el_buf *missing)
{
	const el_conda *conda = &r->lock->conda;
	size_t n = 0;

	for (size_t i = 0; i < conda->npackages; i++)
		if (!el_kit_conda(r->kit, el_path_base(conda->packages[i].url)))
			add_missing(r, &conda->packages[i], missing, &n);
	return n;
}

void el_plan_conda(envlock_restore *r, el_step *s)
{
	const el_conda *conda = &r->lock->conda;
	const char *target = r->opts.conda_target ? r->opts.conda_target : conda->prefix;
	const char *live_prefix = r->live->conda.prefix;
	el_buf diff = EL_BUF_FITS(EL_BUF_JOIN_MAX, "five of the lock's package keys");
	el_buf nourl = EL_BUF_FITS(EL_BUF_JOIN_MAX, "the names of the lock's packages");
	size_t total = 0, differ = 0, extra = 0;
	bool here, exists, ours;
	el_strvec live_keys = EL_STRVEC_INIT;
	char *host = NULL;
	struct stat st;
	el_item *it;
	char *exe;

	if (!target || !conda->npackages) {
		el_step_add(s, ENVLOCK_ITEM_OK, "no conda environment locked");
		goto done;
	}
	here = live_prefix && strcmp(live_prefix, target) == 0;
	if (here)
		key_set(&live_keys, &r->live->conda);
	exists = el_root_stat(&r->root, target, &st) == 0;
	for (size_t i = 0; i < conda->npackages; i++) {
		const el_conda_package *p = &conda->packages[i];
		char *key = pkg_key(p);

		total++;
		if (!here || !has_key(&live_keys, key)) {
			if (differ++ < 5)
				el_buf_addf(&diff, "%s%s", diff.len ? ", " : "", key);
		}
		free(key);
		if (!p->url || (!p->md5 && !p->sha256)) {
			el_buf_addf(&nourl, "%s%s", nourl.len ? ", " : "", p->name ?: "?");
			continue;
		}
	}
	if (here) {
		el_strvec locked = EL_STRVEC_INIT;

		key_set(&locked, conda);
		for (size_t i = 0; i < live_keys.n; i++)
			extra += !has_key(&locked, live_keys.v[i]);
		el_strvec_release(&locked);
	}
	if (here && differ == 0 && extra == 0) {
		el_step_add(s, ENVLOCK_ITEM_OK, "conda environment %s: %zu packages as locked", target, total);
		goto done;
	}
	if (nourl.len) {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "conda environment %s cannot be recreated exactly", target);
		el_item_note(it, "the lock has no URL and digest for: %s (saved from a conda that did not record them)",
			     el_buf_cstr(&nourl));
		goto done;
	}
	host = el_restore_host(&r->root, target);
	ours = exists && el_restore_created(r, host);
	if (exists && !r->opts.force && !ours) {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "conda environment %s differs: %zu of %zu locked packages %s%s%s",
				 target, differ, total, differ ? "missing or different (" : "as locked",
				 differ ? el_buf_cstr(&diff) : "", differ > 5 ? ", ...)" : differ ? ")" : "");
		el_item_note(it, "%srerun with %s to replace it (the old one is moved aside, not deleted), or %s (or %s) to create it elsewhere",
			     extra ? "it also has packages the lock does not; " : "", el_restore_option(r, "force"),
			     el_restore_option(r, "conda_target"), el_restore_option(r, "conda_name"));
		goto done;
	}
	if (r->opts.no_conda && !r->kit) {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "create conda environment %s (%zu packages)", target, total);
		el_item_note(it, "envlock links conda archives itself only from a kit (%s, offline): give one, or leave %s out",
			     el_restore_option(r, "kit"), el_restore_option(r, "no_conda"));
		goto done;
	}
	exe = r->opts.no_conda ? NULL : find_conda(r);
	if (!exe && r->kit) {
		el_buf missing = EL_BUF_FITS(EL_BUF_JOIN_MAX, "eight of the lock's packages, each with the kit's word on it");
		size_t nmissing = kit_missing(r, &missing);
		link_job *j;

		if (nmissing) {
			missing_item(r, s, target, nmissing, total, &missing);
			el_buf_release(&missing);
			goto done;
		}
		el_buf_release(&missing);
		it = el_step_add(s, ENVLOCK_ITEM_DO, "%s conda environment %s with envlock (%zu packages, offline, linked from the kit's archives%s)",
				 exists ? "replace" : "create", target, total, r->opts.no_conda ? "" : "; no conda found");
		if (ours)
			el_item_note(it, "an earlier restore began it and was interrupted: that one is moved aside first");
		else if (exists)
			el_item_note(it, "the existing one is moved aside first (%zu packages differ)", differ);
		j = el_xcalloc(1, sizeof(*j));
		j->replace = exists;
		j->prefix = el_xstrdup(target);
		it->path = host;
		host = NULL;
		it->extra = j;
		it->free_extra = link_free;
		it->run = link_env;
		goto done;
	}
	if (!exe) {
		it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "create conda environment %s (%zu packages)", target, total);
		el_item_note(it, "no micromamba, mamba or conda found: install one (Miniforge provides conda and mamba), pass %s, or restore from a kit (%s): envlock then links it itself",
			     el_restore_option(r, "conda_exe"), el_restore_option(r, "kit"));
		goto done;
	}
	{
		create_job *j = el_xcalloc(1, sizeof(*j));
		char *spec_text = NULL;
		size_t spec_len = 0;
		char *kit_in_tree = NULL;

		if (r->kit) {
			el_buf missing = EL_BUF_FITS(EL_BUF_JOIN_MAX, "eight of the lock's packages, each with the kit's word on it");
			size_t nmissing = 0;

			/* under --chroot the archives are put into the tree's /tmp, and conda reads them there */
			if (!r->root.live)
				kit_in_tree = el_xasprintf("/tmp/envlock-restore-%s.kit", r->short_id);
			spec_text = kit_spec(r, kit_in_tree ? kit_in_tree : r->kit->dir, &spec_len, &missing, &nmissing);
			if (nmissing) {
				missing_item(r, s, target, nmissing, total, &missing);
				el_buf_release(&missing);
				free(spec_text);
				free(kit_in_tree);
				free(j);
				free(exe);
				goto done;
			}
			el_buf_release(&missing);
			if (!spec_text) {
				it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "conda environment %s: the explicit spec of the kit's %zu packages is longer than %u MiB",
						 target, total, KIT_SPEC_MAX >> 20);
				free(kit_in_tree);
				free(j);
				free(exe);
				goto done;
			}
		}
		/* the same spec `envlock export --format conda-explicit` writes */
		if (!r->kit && envlock_export(&spec_text, &spec_len, NULL, r->lock_obj, ENVLOCK_EXPORT_CONDA_EXPLICIT, NULL) != 0) {
			free(j);
			free(exe);
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "conda environment %s: no explicit spec can be written", target);
			goto done;
		}
		j->replace = exists;
		it = el_step_add(s, ENVLOCK_ITEM_DO, "%s conda environment %s with %s (%zu packages, %s)%s",
				 exists ? "replace" : "create", target, el_path_base(exe), total,
				 r->kit ? "offline, from the kit's archives and the lock's digests" : "explicit URLs and digests",
				 r->opts.chroot ? ", inside the tree (chroot)" : "");
		if (ours)
			el_item_note(it, "an earlier restore began it and was interrupted: that one is moved aside first");
		else if (exists)
			el_item_note(it, "the existing one is moved aside first (%zu packages differ)", differ);
		it->path = host;
		host = NULL;
		it->data_len = spec_len;
		it->data = spec_text;
		if (r->root.live) {
			j->spec_path = el_xasprintf("%s/restore-%s.conda-explicit.txt", r->state_dir, r->short_id);
			el_args_push(&it->argv, exe, "create", "--yes", NULL);
			if (r->kit)
				el_strvec_push(&it->argv, "--offline");
			el_args_push(&it->argv, "--prefix", it->path, "--file", j->spec_path, NULL);
		} else {
			/* in the tree, by the tree's paths, so none of this machine's end up in the environment */
			char *spec_in_tree;

			j->spec_path = el_restore_tree_file(r, "conda-explicit.txt", &spec_in_tree);
			j->in_tree = true;
			el_args_push(&it->argv, exe, "create", "--yes", NULL);
			if (r->kit)
				el_strvec_push(&it->argv, "--offline");
			el_args_push(&it->argv, "--prefix", target, "--file", spec_in_tree, NULL);
			if (kit_in_tree) {
				j->kit = r->kit;
				j->stage_dir = el_restore_host(&r->root, kit_in_tree);
			}
			it->chroot = true;
			free(spec_in_tree);
		}
		it->extra = j;
		it->free_extra = create_free;
		it->run = create_env;
		if (EL_RESTORE_REFUSE_TREE(r))
			el_restore_needs_chroot(r, it, r->kit ? "the spec lists the kit's archives, put into the tree's /tmp first"
							      : "the spec is what `envlock export --format conda-explicit` writes");
		free(kit_in_tree);
		free(exe);
	}
done:
	el_strvec_release(&live_keys);
	free(host);
	el_buf_release(&diff);
	el_buf_release(&nourl);
}
