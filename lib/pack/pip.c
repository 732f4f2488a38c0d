/*
 * A kit's wheels: for each pip distribution of the lock, a wheel found
 * (--wheels first, then pip's built wheels, then its HTTP cache) whose
 * METADATA names it at its version, preferring the tags of the installed
 * WHEEL file and refusing one whose sha256 is not the lock's recorded
 * archive hash; else one rebuilt from the installed files; else listed
 * missing with the pip download command that fetches it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"
#include "lock/model.h"
#include "util/error.h"
#include "util/root.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The tags of the installed WHEEL file, or NULL. */
static char *installed_tags(const el_pip_dist *d)
{
	char *path = el_path_join(d->path, "WHEEL");
	el_buf b = EL_BUF_INIT(1u << 20);
	FILE *f = fopen(path, "r");
	char *tags = NULL, chunk[4096];
	size_t n;

	free(path);
	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (el_buf_put(&b, chunk, n) != 0)
			break;
	fclose(f);
	tags = pk_wheel_tags(el_buf_cstr(&b), b.len);
	el_buf_release(&b);
	return tags;
}

/* The lock's sha256 of the archive pip installed it from ("sha256=<hex>"), or NULL. */
static const char *locked_sha256(const el_pip_dist *d)
{
	const char *h = d->direct_url.archive_hash;

	return h && el_starts_with(h, "sha256=") ? h + 7 : NULL;
}

static char *fetch_command(pk_pack *p, const el_pip_dist *d)
{
	el_buf b = EL_BUF_FITS(EL_BUF_JOIN_MAX, "a command of fixed words round the lock's pin and index URLs, quoted");
	el_pip_index *ix = NULL;
	size_t nix = 0;

	el_buf_adds(&b, "pip download --no-deps -d wheels ");
	if (d->direct_url.recorded && d->direct_url.url && !d->direct_url.vcs && !d->editable &&
	    !el_starts_with(d->direct_url.url, "file:")) {
		pk_shell_word(&b, d->direct_url.url);
	} else {
		char *pin = el_xasprintf("%s==%s", d->name, d->version ? d->version : "");

		pk_shell_word(&b, pin);
		free(pin);
	}
	el_pip_indexes(p->v, &d, 1, &ix, &nix);
	for (size_t i = 0; i < nix; i++) {
		const char *flag = el_pip_option_flag(ix[i].option);

		if (!flag || !ix[i].url)
			continue;
		el_buf_addf(&b, " %s ", flag);
		pk_shell_word(&b, ix[i].url);
	}
	el_pip_indexes_free(ix, nix);
	return el_buf_detach(&b);
}

static bool same_version(const char *a, const char *b)
{
	return a && b && strcasecmp(a, b) == 0;
}

static cJSON *add_item(pk_pack *p, const el_pip_dist *d, const char *name, const char *version, const char *rel,
		     const pk_digest *dg, const char *from, const char *source, long long rebuilt_files)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		el_oom();
	(void)d;
	el_jset_str(o, "kind", "wheel");
	el_jset_str(o, "name", name);
	el_jset_str(o, "version", version);
	el_jset_str(o, "path", rel);
	el_jset_int(o, "size", dg->size);
	el_jset_str(o, "sha256", dg->sha256);
	el_jset_str(o, "from", from);
	el_jset_str(o, "source", source);
	if (rebuilt_files >= 0)
		el_jset_int(o, "rebuilt_files", rebuilt_files);
	pk_entries_add(&p->items, o, "wheel", rel, name, version);
	pk_say(p, "wheel    %s  (%s)", rel, from);
	return o;
}

/* The kit already has this file (two distributions cannot share a wheel, one lock can list one twice). */
static bool in_kit(pk_pack *p, const char *rel)
{
	for (size_t i = 0; i < p->items.n; i++)
		if (strcmp(p->items.v[i].path, rel) == 0)
			return true;
	return false;
}

/* Copy the best of the wheels found for d; true when one is in the kit. */
static bool from_found(pk_pack *p, const el_pip_dist *d, const char *norm, char **reason)
{
	char *want = installed_tags(d);
	const char *sha = locked_sha256(d);
	bool done = false;

	/* two rounds: the installed tags first, then any */
	for (int round = 0; round < 2 && !done; round++) {
		for (size_t i = 0; i < p->nwheels && !done; i++) {
			pk_wheel *w = &p->wheels[i];
			char *rel, *dst;
			pk_digest dg;

			if (strcmp(w->norm, norm) != 0 || !same_version(w->version, d->version))
				continue;
			/* another build of the version is not the one installed: a rebuild gives that one */
			if ((round == 0) != (want && strcmp(want, w->tags) == 0) || (round == 1 && want))
				continue;
			rel = el_xasprintf("wheels/%s", w->file);
			if (in_kit(p, rel)) {
				free(rel);
				done = true;
				break;
			}
			dst = el_path_join(p->kit, rel);
			if (p->staging) {
				el_bundle_item it;

				/* the bundle writer reads it once and checks it against the lock's sha256 */
				if (pk_stage(p->ctx, w->path, w->offset, w->offset ? w->length : -1, false, &it, &dg) != 0) {
					pk_warn(p, "%s", envlock_error_last(p->ctx));
				} else {
					pk_stage_add(p, &it, add_item(p, d, w->name, w->version, rel, &dg, w->from, w->path, -1),
						     rel, sha, NULL);
					done = true;
				}
			} else if (pk_copy(p->ctx, w->path, w->offset, w->offset ? w->length : -1,
				    dst, p->link, false, &dg, NULL) != 0) {
				pk_warn(p, "%s", envlock_error_last(p->ctx));
			} else if (sha && strcasecmp(sha, dg.sha256) != 0) {
				unlink(dst);
				pk_warn(p, "'%s': sha256 %s is not the lock's %s (the file pip installed from): not used",
					w->path, dg.sha256, sha);
				free(*reason);
				*reason = el_xasprintf("'%s' is not the file pip installed it from (sha256 differs)", w->path);
			} else {
				add_item(p, d, w->name, w->version, rel, &dg, w->from, w->path, -1);
				done = true;
			}
			free(dst);
			free(rel);
		}
	}
	free(want);
	return done;
}

static void pack_dist(pk_pack *p, const el_pip_dist *d)
{
	char *norm, *reason = NULL, *why = NULL, *file = NULL;
	long long nfiles = 0;

	if (!d->name || !d->version)
		return;
	if (d->editable || d->direct_url.editable) {
		p->not_needed++;
		pk_say(p, "skip     %s %s: an editable install, restore uses its repository", d->name, d->version);
		return;
	}
	/* who installed it, as export decides (lib/export/reqs.c) */
	if ((d->installer && strcmp(d->installer, "conda") == 0) ||
	    (d->also_conda && (!d->installer || strcmp(d->installer, "pip") != 0))) {
		p->not_needed++;
		pk_say(p, "skip     %s %s: conda installed it, its conda package brings it", d->name, d->version);
		return;
	}
	if ((!d->installer || strcmp(d->installer, "debian") == 0) && d->path &&
	    (el_starts_with(d->path, "/usr/lib/python3/dist-packages/") ||
	     el_starts_with(d->path, "/usr/lib/python2.7/dist-packages/"))) {
		p->not_needed++;
		pk_say(p, "skip     %s %s: the system's package manager installed it", d->name, d->version);
		return;
	}
	norm = el_pep503_name(d->name);
	if (from_found(p, d, norm, &reason))
		goto done;
	if (d->kind && strcmp(d->kind, "dist-info") == 0 && d->path) {
		if (pk_rebuild(p, d, &file, &nfiles, &why) == 0) {
			char *rel = el_xasprintf("wheels/%s", file);
			char *dst = el_path_join(p->kit, rel);
			pk_digest dg;
			el_bundle_item it;

			if (p->staging && pk_stage(p->ctx, dst, 0, -1, false, &it, &dg) == 0) {
				pk_stage_add(p, &it, add_item(p, d, d->name, d->version, rel, &dg, "rebuilt", d->path, nfiles),
					     rel, NULL, NULL);
				free(rel), free(dst);
				goto done;
			}
			if (!p->staging && pk_hash_file(p->ctx, dst, false, &dg, NULL) == 0) {
				add_item(p, d, d->name, d->version, rel, &dg, "rebuilt", d->path, nfiles);
				free(rel), free(dst);
				goto done;
			}
			free(why);
			why = el_xstrdup(envlock_error_last(p->ctx));
			free(rel), free(dst);
		}
	} else {
		why = el_xasprintf("no wheel found, and a %s install has no RECORD to rebuild one from",
				   d->kind ? d->kind : "unknown");
	}
	{
		char *fetch = fetch_command(p, d);
		char *full = el_xasprintf("%s%s%s", reason ? reason : "no wheel in the caches",
					  why ? "; cannot rebuild it: " : "", why ? why : "");

		pk_missing(p, "wheel", d->name, d->version, full, fetch);
		free(full);
		free(fetch);
	}
done:
	free(norm), free(reason), free(why), free(file);
}

void pk_pip(pk_pack *p)
{
	if (!p->v->pip.st.present || p->v->pip.ndists == 0)
		return;
	pk_wheels_scan(p);
	for (size_t i = 0; i < p->v->pip.ndists; i++)
		pack_dist(p, &p->v->pip.dists[i]);
}
