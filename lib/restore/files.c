/*
 * Restore steps 8 and 9: configs are written back from the text the lock
 * recorded (a different file already there is kept as
 * FILE.envlock-bak-<time>); checkpoints are only verified against their
 * digests — envlock never downloads or invents weights.
 *
 * These paths are the user's, as typed at save time (relative to where
 * envlock ran, or absolute). They are restored under the destination
 * folder (--dest, default the current one), resolved the way a chroot
 * would, so a lock can never place a file outside it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/xalloc.h"

#define EL_CONFIG_MAX (16u << 20)

char *el_restore_dest_path(const envlock_restore *r, const char *path)
{
	size_t n = strlen(r->dest);

	if (path[0] != '/')
		return el_xasprintf("/%s", path);
	if (strcmp(r->dest, "/") == 0)
		return el_xstrdup(path);
	if (strncmp(path, r->dest, n) == 0 && (path[n] == '/' || path[n] == '\0'))
		return el_xstrdup(path[n] ? path + n : "/");
	return NULL;
}

el_item *el_restore_outside(envlock_restore *r, el_step *s, const char *what, const char *path)
{
	el_item *it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "%s %s: outside %s", what, path, r->dest);

	el_item_note(it, "the lock recorded an absolute path; rerun with %s / to restore it there", el_restore_option(r, "dest"));
	return it;
}

void el_plan_configs(envlock_restore *r, el_step *s)
{
	size_t ok = 0;

	for (size_t i = 0; i < r->lock->configs.nfiles; i++) {
		const el_config *f = &r->lock->configs.files[i];
		const char *path = f->path, *sha = f->sha256, *text = f->text;
		char *in, hex[EL_SHA256_HEX];
		el_buf b = EL_BUF_INIT(EL_CONFIG_MAX);
		el_item *it;
		int e = 0, rc;

		if (!path)
			continue;
		if (!sha || !text) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "config %s: not recorded", path);
			el_item_note(it, "the save could not read it (%s)", f->error ?: "no text");
			continue;
		}
		el_sha256_buf(text, strlen(text), hex);
		if (strcmp(hex, sha) != 0) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "config %s: the recorded text does not match its digest", path);
			/* lib/redact's mask: the digest is of the file as it was, secrets included */
			if (strstr(text, "<secret>"))
				el_item_note(it, "save masked a secret in it (<secret>), so the text is not the file; not written: "
					     "take the file from its repository and put the secret back");
			else
				el_item_note(it, "the lock was edited after it was saved; not written");
			continue;
		}
		if (!(in = el_restore_dest_path(r, path))) {
			el_restore_outside(r, s, "config", path);
			continue;
		}
		rc = el_root_read(&r->dest_root, in, &b, &e);
		if (rc == 0)
			el_sha256_buf(b.data, b.len, hex);
		el_buf_release(&b);
		if (rc == 0 && strcmp(hex, sha) == 0) {
			ok++;
		} else {
			it = el_step_add(s, ENVLOCK_ITEM_DO, "%s config %s", rc == 0 ? "rewrite" : "write", path);
			if (rc == 0)
				el_item_note(it, "it differs: the current file is kept as %s.envlock-bak-<time>", path);
			it->path = el_restore_host(&r->dest_root, in);
			it->data = el_xstrdup(text);
			it->data_len = strlen(text);
			it->run = el_apply_write;
		}
		free(in);
	}
	if (ok)
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu config%s as locked", ok, ok == 1 ? "" : "s");
	if (!s->n)
		el_step_add(s, ENVLOCK_ITEM_OK, "no configs locked");
}

void el_plan_checkpoints(envlock_restore *r, el_step *s)
{
	size_t ok = 0;

	for (size_t i = 0; i < r->lock->checkpoints.nfiles; i++) {
		const char *path = r->lock->checkpoints.files[i].path, *sha = r->lock->checkpoints.files[i].sha256;
		char *in, *host, hex[EL_SHA256_HEX];
		uint64_t size;
		el_item *it;
		int e = 0, rc;

		if (!path || !sha)
			continue;
		if (!(in = el_restore_dest_path(r, path))) {
			el_restore_outside(r, s, "checkpoint", path);
			continue;
		}
		host = el_restore_host_real(&r->dest_root, in);
		rc = el_hashcache_file(r->hashes, host, hex, &size, &e);
		if (rc == 0 && strcmp(hex, sha) == 0) {
			ok++;
		} else if (rc == 0) {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "checkpoint %s differs: sha256 %.12s..., locked %.12s...",
					 path, hex, sha);
			el_item_note(it, "put the original file back (from its archive, or `envlock bundle extract` of the experiment's bundle)");
		} else {
			it = el_step_add(s, ENVLOCK_ITEM_MANUAL, "checkpoint %s: %s", path,
					 rc == ENVLOCK_ENOTFOUND ? "missing" : el_strerror(e));
			el_item_note(it, "copy it from where it is kept (sha256 %s); envlock never downloads weights", sha);
		}
		free(host);
		free(in);
	}
	if (ok)
		el_step_add(s, ENVLOCK_ITEM_OK, "%zu checkpoint%s match their digests", ok, ok == 1 ? "" : "s");
	if (!s->n)
		el_step_add(s, ENVLOCK_ITEM_OK, "no checkpoints locked");
}
