/* What the files of lib/condalink share: one package as it is read and linked. */
#ifndef EL_CONDALINK_INTERNAL_H
#define EL_CONDALINK_INTERNAL_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "condalink/condalink.h"
#include "util/buf.h"
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
	const struct cl_entry_s *ent; /* the archive's entry (a file or link), once checked */
	cl_kind kind;
	bool binary, no_link;
} cl_path;

/* The info/ files the link step reads, kept in memory as they stream by. */
enum { CL_INFO_INDEX, CL_INFO_PATHS, CL_INFO_FILES, CL_INFO_HAS_PREFIX, CL_INFO_NO_LINK, CL_INFO_LINK, CL_INFO_N };
extern const char *const el_clink_info_names[CL_INFO_N];

/* One entry of the archive, as unpacked into the package cache. */
typedef struct cl_entry_s {
	char *name;           /* its path in the package */
	char *target;         /* a symbolic link's target; NULL for a file */
	char *hardlink;       /* a hard link entry's path it shares its file with, until resolved */
	long file;            /* its file in the cache (<cache><file>); -1 for a link */
	mode_t mode;
	uint64_t size;
} cl_entry;

typedef struct {
	const el_clink_pkg *in;
	/*
	 * Where its files go in the package cache: "<pkgs>/<n>." then each
	 * file's number. Flat, one folder for every package: a folder per
	 * package folder would cost a mkdir and an rmdir each, which on a
	 * journaling file system is most of a link's time.
	 */
	char *cache;
	cl_entry *ents;       /* sorted by name once unpacked */
	size_t nents, ents_cap;
	long nfiles;
	el_buf info[CL_INFO_N];
	bool has_info[CL_INFO_N];
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

/* Unpack p->in->archive into the package cache; -1 with p->err set (unpack.c). */
int el_clink_unpack(cl_pkg *p);
/* The entry of that name, or NULL (after el_clink_unpack). */
const cl_entry *el_clink_entry(const cl_pkg *p, const char *name);
/* The host path of an entry's file in the cache (malloc'd). */
char *el_clink_cached(const cl_pkg *p, const cl_entry *e);

#endif
