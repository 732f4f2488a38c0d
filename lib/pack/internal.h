/* Restore kits, inside lib/pack: one pack in progress and its pieces. */
#ifndef EL_PACK_INTERNAL_H
#define EL_PACK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cJSON.h>

#include "bundle/bundle.h"
#include "envlock/pack.h"
#include "lock/view.h"
#include "util/buf.h"
#include "util/vec.h"

#define PK_MD5_HEX 33

/* A wheel found in a cache or folder, identified by its own METADATA and WHEEL. */
typedef struct {
	char *path;       /* the file it is in */
	off_t offset;     /* where the zip starts in it (pip's old HTTP cache embeds it) */
	off_t length;     /* its bytes */
	const char *from; /* "pip-wheel-cache", "pip-http-cache", "wheels-dir" */
	char *name, *norm, *version;
	char *tags;       /* "py3-none-any": from the WHEEL file's Tag lines */
	char *file;       /* the PEP 427 file name it gets in the kit */
} pk_wheel;

/*
 * A manifest entry being built: its sort keys kept beside the object, so
 * that the kit's own manifest is never read back through JSON.
 */
typedef struct {
	char *kind, *path, *name, *version; /* path "" for a missing one */
	cJSON *obj;
} pk_entry;

typedef struct {
	pk_entry *v;
	size_t n, cap;
} pk_entries;

/* Add obj (owned from now on) to list with its sort keys (copied; NULL is ""). */
void pk_entries_add(pk_entries *list, cJSON *obj, const char *kind, const char *path,
		    const char *name, const char *version);

/*
 * A .tar.zst kit's item, left for the bundle writer to read, hash, check
 * against the lock and compress in one pass; obj's "sha256" (and "md5")
 * get its digests before the kit's manifest, written last, is made.
 */
typedef struct {
	el_bundle_item it;
	cJSON *obj;         /* its manifest entry, or NULL (the lock's copy) */
	char *rel, *src, *want_sha256, *want_md5;
} pk_staged;

/* One pack in progress. */
typedef struct {
	envlock_ctx *ctx;
	const envlock_pack_opts *opts;
	const el_view *v;
	char *kit;          /* the folder being built */
	FILE *stream;
	pk_entries items;   /* sorted at the end */
	pk_entries missing;
	size_t not_needed;
	bool link;          /* hard link where possible: --link, or a temporary kit the bundle writer reads */
	void *progress;     /* an el_progress while the conda archives are copied, else NULL */
	pk_wheel *wheels;
	size_t nwheels, wcap;
	/* a .tar.zst kit in one pass: items staged for the bundle writer, not copied nor hashed here */
	bool staging;
	pk_staged *staged;
	size_t nstaged, scap;
	el_strvec warnings;  /* held back, with the stream's lines, until the archive is written */
} pk_pack;

/* A warning line for the caller (opts->on_warning). */
void pk_warn(pk_pack *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A line on the pack's stream. */
void pk_say(pk_pack *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add a missing entry: kind, name, version, reason, fetch command. */
void pk_missing(pk_pack *p, const char *kind, const char *name, const char *version,
		const char *reason, const char *fetch);

/* path made absolute against the working folder (malloc'd), for the manifest's "from" and "source". */
char *pk_abs(const char *path);

/* A word shell-quoted ('...' with ' as '\''), appended to b. */
void pk_shell_word(el_buf *b, const char *s);

/* Digests of a copy. */
typedef struct {
	char sha256[65];
	char md5[PK_MD5_HEX];
	long long size;
} pk_digest;

/*
 * Copy length bytes (-1: to the end) from offset of src into dst (which
 * must not exist), hashing what is read in the same pass (sha256, and md5
 * when md5 is set; else d->md5 is ""); with link and a whole file, a hard
 * link instead of the copy (the file is still read once to hash it). 0,
 * or ENVLOCK_EIO with the file named on ctx; dst is removed on failure.
 */
int pk_copy(envlock_ctx *ctx, const char *src, off_t offset, off_t length, const char *dst,
	    bool link, bool md5, pk_digest *d, void *progress);

/*
 * Staging, instead of pk_copy: what length bytes (-1: to the end) from
 * offset of src are, as stat() sees them, into *it; d gets their size and
 * stand-in digests of the real ones' length (md5 too when md5 is set).
 * 0, or ENVLOCK_EIO with the file named on ctx.
 */
int pk_stage(envlock_ctx *ctx, const char *src, off_t offset, off_t length, bool md5, el_bundle_item *it,
	     pk_digest *d);

/* A staged item into the kit at rel, obj its manifest entry (or NULL); want_*: what the lock records (or NULL). */
void pk_stage_add(pk_pack *p, const el_bundle_item *it, cJSON *obj, const char *rel, const char *want_sha256,
		  const char *want_md5);

/* Hash a file (sha256, and md5 when md5 is set), 0 or ENVLOCK_EIO; progress (an el_progress, or NULL) hears of the bytes. */
int pk_hash_file(envlock_ctx *ctx, const char *path, bool md5, pk_digest *d, void *progress);

/* conda.c: the lock's conda packages, from the package caches. */
void pk_conda(pk_pack *p);

/* wheels.c: find and identify the wheels of the caches and folders. */
void pk_wheels_scan(pk_pack *p);
void pk_wheels_free(pk_pack *p);

/* Identify the wheel in length bytes at offset of path: 0 with w filled (path not set), else -1. */
int pk_wheel_identify(const char *path, off_t offset, off_t length, pk_wheel *w);

/* The PEP 427 file name of a wheel: escaped name, version, build tag (or NULL) and tags; NULL when not safe or over 1 KiB. */
char *pk_wheel_filename(const char *name, const char *version, const char *build, const char *tags);

/* The compressed tag set of a WHEEL file's text ("py2.py3-none-any"), or NULL. */
char *pk_wheel_tags(const char *text, size_t len);

/* pip.c: the lock's pip distributions, from the wheels found or rebuilt. */
void pk_pip(pk_pack *p);

/*
 * rebuild.c: a wheel rebuilt from the installed files of dist (its
 * dist-info's RECORD) into the kit's wheels/. 0 with *file (malloc'd, the
 * kit file name) and *nfiles set; else -1 with *why (malloc'd) saying
 * what stops it.
 */
int pk_rebuild(pk_pack *p, const el_pip_dist *dist, char **file, long long *nfiles, char **why);

#endif
