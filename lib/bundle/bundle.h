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

#endif
