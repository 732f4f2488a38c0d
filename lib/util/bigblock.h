/*
 * Large scratch blocks for loading lockfiles: 2 MiB-aligned mappings the
 * kernel may back with transparent huge pages (MADV_HUGEPAGE: one page
 * fault for 2 MiB, not one for every 4 KiB, which was a third of a
 * two-lock diff's time), and a few kept after use for the next load, so
 * the thousand loads of a fleet's drift map almost none. The memory of a
 * block handed out again is not cleared.
 */
#ifndef EL_BIGBLOCK_H
#define EL_BIGBLOCK_H

#include <stddef.h>

#define EL_BIGBLOCK_MIN ((size_t)2 << 20)

/* A block of at least want bytes (*size: all it has), or NULL: then use malloc. */
void *el_bigblock_get(size_t want, size_t *size);

/* Give back a block from el_bigblock_get, with the size it said. NULL is fine. */
void el_bigblock_put(void *block, size_t size);

#endif
