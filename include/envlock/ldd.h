/*
 * envlock — what the dynamic loader will load for an ELF file, and why
 * (`envlock ldd`): every DT_NEEDED resolved as glibc's ld.so resolves it,
 * under a root, from the files alone; the file is never run. Each need
 * names the path it resolves to and what found it (DT_RPATH, DT_RUNPATH,
 * LD_LIBRARY_PATH, ld.so.cache, the default folders), or that nothing
 * did; last the symbol versions a file needs that its library lacks.
 */
#ifndef ENVLOCK_LDD_H
#define ENVLOCK_LDD_H

#include <stdio.h>
#include "common.h"

typedef struct envlock_ldd envlock_ldd;

typedef struct {
	const char *root;         /**< the tree to resolve under; NULL or "/" for this machine */
	const char *library_path; /**< LD_LIBRARY_PATH as the program would get it; NULL: unset */
} envlock_ldd_opts;

/**
 * Resolve file (a path inside the root) into *out, freed with
 * envlock_ldd_free. Errors: ENVLOCK_ENOTFOUND (no such file or root),
 * ENVLOCK_EPARSE (not an ELF file), ENVLOCK_EIO.
 */
ENVLOCK_EXTERN(int) envlock_ldd_resolve(envlock_ldd **out, envlock_ctx *ctx, const char *file,
					const envlock_ldd_opts *opts);

/** 1 when every need was found and no symbol version is missing, else 0. */
ENVLOCK_EXTERN(int) envlock_ldd_complete(const envlock_ldd *l);

/**
 * The tree for a person, like libtree: each need with its path and what
 * found it, each library's own needs shown once (a later place says
 * "see above"), then the missing symbol versions. ENVLOCK_PRINT_COLOR
 * tints it. Returns 0, or ENVLOCK_EIO when writing fails.
 */
ENVLOCK_EXTERN(int) envlock_ldd_print(const envlock_ldd *l, envlock_ctx *ctx, FILE *out, unsigned flags);

/**
 * The same as JSON: {"file", "interpreter", "needed": [{"soname", "path"
 * (null: not found), "realpath", "found_by", "needed": [...] | "repeat":
 * true, "error", and for one not found "near": [{"path", "soname", "fix"
 * (null: another version)}]}], "missing_versions": [{"file", "version", "library",
 * "library_path"}], "not_found": [names in load order: the first is where
 * ld.so stops]}, keys sorted, 2-space indent.
 */
ENVLOCK_EXTERN(int) envlock_ldd_print_json(const envlock_ldd *l, envlock_ctx *ctx, FILE *out);

ENVLOCK_EXTERN(void) envlock_ldd_free(envlock_ldd *l);

#endif
