/*
 * The digest cache: (device, inode, size, mtime ns, ctime ns) -> SHA-256,
 * kept in $XDG_CACHE_HOME/envlock/hashes (else ~/.cache/envlock/hashes),
 * so saving again re-hashes only the files that changed.
 */
#ifndef EL_HASHCACHE_H
#define EL_HASHCACHE_H

#include <stdint.h>

#include "envlock/lock.h"
#include "hash.h"

typedef struct el_hashcache el_hashcache;

/*
 * Load the cache (disabled: hash everything, store nothing). A corrupt
 * cache file is ignored and its problem reported through *warning
 * (malloc'd, NULL when none).
 */
el_hashcache *el_hashcache_open(int disabled, char **warning);

/*
 * SHA-256 of the regular file at host_path, from the cache when its
 * identity is unchanged. A file that changes while it is read is read
 * again; if it keeps changing the result is ENVLOCK_ERROR ("changed while
 * being hashed"), never a wrong digest. Other failures: ENVLOCK_ENOTFOUND,
 * ENVLOCK_EIO with *err_no. Safe to call from several threads at once.
 */
int el_hashcache_file(el_hashcache *c, const char *host_path,
		      char hex[EL_SHA256_HEX], uint64_t *size, int *err_no);

/* Files, cache hits and bytes read so far. */
void el_hashcache_stats(el_hashcache *c, envlock_hash_stats *out);

/*
 * Called with the byte count after every chunk read while hashing (from
 * whichever thread is hashing; the callback must be thread-safe).
 */
void el_hashcache_set_progress(el_hashcache *c, void (*on_bytes)(uint64_t n, void *data), void *data);

/* Write the cache back if it changed (atomically); failures are ignored. */
void el_hashcache_save(el_hashcache *c);
void el_hashcache_free(el_hashcache *c);

#endif
