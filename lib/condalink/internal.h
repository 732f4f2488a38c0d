/* What the files of lib/condalink share: one package as it is read and linked. */
#ifndef EL_CONDALINK_INTERNAL_H
#define EL_CONDALINK_INTERNAL_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "condalink/condalink.h"
#include "util/hash.h"
#include "util/root.h"
#include "util/vec.h"

typedef enum { CL_HARDLINK, CL_SOFTLINK, CL_ENTRY_POINT, CL_PYC } cl_kind;

typedef struct {
	char *path;           /* in the package, as info/paths.json (or info/files) names it */
	char *dest;           /* in the environment (noarch python's mapped) */
	char *placeholder;    /* its prefix placeholder, or NULL */
	char *sha256;         /* info/paths.json's, or NULL */
	char *sha256_in_prefix; /* of the file as linked, when its prefix was replaced */
	long long size;       /* info/paths.json's size_in_bytes, or -1 */
	cl_kind kind;
	bool binary, no_link;
} cl_path;

typedef struct {
	const el_clink_pkg *in;
	char *cache;          /* host path of its folder in the package cache */
	char *err;            /* the first problem, set by the unpacking thread */
	size_t entries;
	cJSON *index;         /* info/index.json */
	const char *name, *version, *build; /* its members (borrowed) */
	bool noarch_python;
	cl_path *paths;
	size_t npaths, cap;
	el_strvec entry_points; /* "name = module:func", from info/link.json */
	char md5[EL_MD5_HEX], sha256[EL_SHA256_HEX];
	uint64_t size;
	bool hashed;
} cl_pkg;

/* Unpack p->in->archive into p->cache (made already); -1 with p->err set (unpack.c). */
int el_clink_unpack(cl_pkg *p);

#endif
