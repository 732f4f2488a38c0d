/*
 * ld.so.conf as glibc's ldconfig reads it (elf/ldconfig.c, parse_conf):
 * the folders it names, in order. The probe records them; the loader
 * asks whether ldconfig scans a folder.
 */
#ifndef EL_LDCONF_H
#define EL_LDCONF_H

#include "buf.h"
#include "root.h"

/* Read the in-root file path into b, the caller's way (its limits and warnings); 0 when it did. */
typedef int (*el_ldconf_read_fn)(const char *path, el_buf *b, void *arg);
/* One folder the file names, as written ("/usr/local/cuda/lib64"). */
typedef void (*el_ldconf_add_fn)(const char *dir, void *arg);

/*
 * The folders of the in-root ld.so.conf file path and the files it
 * includes: one folder a line ("DIR=TYPE" of old files ends at '=',
 * trailing slashes dropped), '#' starts a comment, "include GLOB..."
 * reads more files (a relative GLOB from the including file's folder,
 * listed under root), "hwcap" lines name no folder. An include loop ends
 * at a depth of 4.
 */
void el_ldconf_dirs(const el_root *root, const char *path, el_ldconf_read_fn read, el_ldconf_add_fn add, void *arg);

#endif
