/* Bundles inside the library: the archive's fixed names, the manifest's limits, the shared reader. */
#ifndef EL_BUNDLE_H
#define EL_BUNDLE_H

#include <cJSON.h>
#include <stddef.h>

#include "envlock/bundle.h"

#define EL_BUNDLE_LOCK "envlock.lock.json"
#define EL_BUNDLE_MANIFEST "MANIFEST.json"
#define EL_BUNDLE_MAX_META (64u << 20) /* lockfile and manifest size caps */
#define EL_BUNDLE_CHUNK (1u << 20)

struct archive;

/*
 * What extraction accepts (extract.c), so that create never writes an
 * entry extract would refuse. An entry path: relative, no '..', no empty
 * or '.' component, no control character; its trailing-slash-free form
 * goes to out. A symlink at path: a relative target that stays inside the
 * archive's top folder, with no '..' after a name. NULL when acceptable,
 * else the reason ("control character in the name").
 */
const char *el_bundle_check_name(const char *name, char *out, size_t size);
const char *el_bundle_check_target(const char *path, const char *target);

/*
 * libarchive's last error on a as one lowercase clause for envlock's
 * messages ("truncated zstd input", "no such file or directory").
 * Valid until the next call on this thread.
 */
const char *el_archive_reason(struct archive *a);

/*
 * An entry's name and symlink target as the archive holds them: the UTF-8
 * of a pax header, else the locale's form (the bytes of a ustar name).
 */
struct archive_entry;
const char *el_archive_pathname(struct archive_entry *e);
const char *el_archive_symlink(struct archive_entry *e);

/*
 * A bundle opened for reading. Its zstd frames are decoded by libzstd on
 * a second thread into a few fixed buffers, which libarchive's tar
 * reader (tar only: no other format or decompressor sees the input)
 * parses in place, so decoding overlaps whatever the caller does with
 * the data. A file that does not start with a zstd frame goes to the tar
 * reader as it is (plain tar). Decoding errors reach libarchive as read
 * errors with libarchive's own wording ("truncated zstd input", "zstd
 * decompression failed: ..."), reported at the entry they cut.
 */
typedef struct el_bstream el_bstream;

/*
 * Open path and start reading it. Fails with ENVLOCK_ENOTFOUND (no such
 * file), ENVLOCK_EIO, or ENVLOCK_EPARSE (not a tar archive), the error
 * naming path.
 */
int el_bstream_open(el_bstream **out, envlock_ctx *ctx, const char *path);
/* The tar reader: archive_read_next_header(), archive_read_data*(). Borrowed. */
struct archive *el_bstream_archive(el_bstream *s);
/* Compressed bytes decoded into what the tar reader has been given so far (for ratio limits). */
unsigned long long el_bstream_compressed(const el_bstream *s);
/* Stop the decoder and free everything. NULL is fine. */
void el_bstream_close(el_bstream *s);

/* What a path is: listed in the manifest only, or what the archive (or an extraction) made of it. */
enum { EL_MADE_NONE, EL_MADE_IMPLICIT_DIR, EL_MADE_DIR, EL_MADE_FILE, EL_MADE_LINK };

typedef struct {
	char *path;           /* NULL: free slot */
	const cJSON *want;    /* the manifest's record, or NULL */
	int made;
} el_bnode;

/* Paths of a manifest and of an archive's entries, by open addressing. Zero-initialise. */
typedef struct {
	el_bnode *v;
	size_t cap, n;
} el_bindex;

/*
 * The node for path[0..n), added when add is set (else NULL if absent).
 * Adding may move every node: a pointer from before is stale after.
 */
el_bnode *el_bindex_find(el_bindex *t, const char *path, size_t n, int add);
void el_bindex_release(el_bindex *t);

/*
 * A bundle of files named by the caller rather than found by walking a
 * folder (lib/pack's .tar.zst kits): each item is read once from src,
 * hashed (sha256, and md5 when asked) and compressed from the same
 * buffers, and checked at its end against the digests it must have. The
 * archive is laid out as envlock_bundle_create's: the lock, MANIFEST.json,
 * then the entries under "<name>/" (the folders of the items' paths and
 * dirs, then the items, in the walk's order), then the late file last.
 */
typedef struct {
	const char *path;          /* under the top folder ("conda/x.conda"), checked as a name */
	const char *src;           /* the file read (a symlink is followed) */
	long long offset;          /* where the item's bytes start in src */
	unsigned long long size;   /* how many: src must still be the file stat() saw (see below) */
	unsigned long long src_size; /* src's own size, as stat() found it */
	unsigned long long dev, ino; /* and its identity and times, checked on open and at the end */
	long long mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
	int executable;            /* mode 0755, else 0644 */
	int md5;                   /* hash md5 too */
	int stored_raw;            /* already compressed (a package archive, a wheel): its data in raw
				      zstd blocks, which any zstd reader reads, at no compression cost */
	const char *want_sha256;   /* the digests it must have (lowercase or not), or NULL */
	const char *want_md5;
	/* set by the writer */
	char sha256[65];
	char md5_hex[33];
	int mismatch;              /* its digest is not the wanted one: the bundle failed */
} el_bundle_item;

/* Fill in it's identity fields from src (stat, following links); 0 or -1 with errno. */
int el_bundle_item_stat(el_bundle_item *it);

typedef struct {
	const char *name;          /* the top folder */
	const char *const *dirs;   /* folders listed even when empty ("conda") */
	size_t ndirs;
	el_bundle_item *items;
	size_t nitems;
	/*
	 * The late file: written after every item, once their digests are
	 * set; late() returns its bytes (malloc'd), exactly late_size of them.
	 */
	const char *late_path;
	size_t late_size;
	char *(*late)(void *data, size_t *len);
	void *late_data;
} el_bundle_plan;

/*
 * Write the bundle of plan to out_path atomically, with the lockfile of
 * opts->lock_path (required). A digest that is not the wanted one fails
 * it with ENVLOCK_ERROR and sets that item's mismatch; nothing is left at
 * out_path on any failure.
 */
int el_bundle_create_plan(envlock_ctx *ctx, const el_bundle_plan *plan, const char *out_path,
			  const envlock_bundle_opts *opts);

#endif
