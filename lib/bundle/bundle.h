/* Bundles inside the library: the archive's fixed names and the manifest's limits. */
#ifndef EL_BUNDLE_H
#define EL_BUNDLE_H

#include "envlock/bundle.h"

#define EL_BUNDLE_LOCK "envlock.lock.json"
#define EL_BUNDLE_MANIFEST "MANIFEST.json"
#define EL_BUNDLE_MAX_META (64u << 20) /* lockfile and manifest size caps */
#define EL_BUNDLE_CHUNK (1u << 20)

struct archive;

/*
 * libarchive's last error on a as one lowercase clause for envlock's
 * messages ("truncated zstd input", "no such file or directory").
 * Valid until the next call on this thread.
 */
const char *el_archive_reason(struct archive *a);

#endif
