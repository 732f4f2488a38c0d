/*
 * The loader's answer: what glibc's ld.so (2.36, elf/dl-load.c and
 * elf/dl-version.c) would load for an ELF file under a root, found by
 * reading files only; nothing is run. A file's DT_NEEDED names are
 * resolved breadth first, as _dl_map_object_deps does, each through
 * DT_RPATH of the object and of the objects that loaded it (when the
 * object has no DT_RUNPATH), LD_LIBRARY_PATH, the object's own
 * DT_RUNPATH, <root>/etc/ld.so.cache and the default folders; a name
 * already loaded is not searched again. Then each object's DT_VERNEED is
 * checked against the DT_VERDEF of the library it names.
 *
 * One el_loader per root keeps the parsed cache and every ELF file it
 * read (by real path), so resolving many files parses each library once.
 * Not modelled: glibc-hwcaps and legacy hwcap subfolders (faster builds
 * of the same library), LD_PRELOAD, /etc/ld.so.preload, audit modules.
 */
#ifndef EL_LOADER_H
#define EL_LOADER_H

#include <stddef.h>

#include "envlock/common.h"
#include "util/elf.h"
#include "util/root.h"
#include "util/vec.h"

/* What found an object (ld.so's own words in LD_DEBUG=libs, plus the loader's own cases). */
typedef enum {
	EL_LD_NOT_FOUND = 0,
	EL_LD_RPATH,           /* DT_RPATH of the object or of one that loaded it */
	EL_LD_RUNPATH,         /* DT_RUNPATH of the object that needs it */
	EL_LD_LIBRARY_PATH,    /* LD_LIBRARY_PATH */
	EL_LD_CACHE,           /* ld.so.cache */
	EL_LD_DEFAULT,         /* the default folders */
	EL_LD_DIRECT,          /* the needed name has a '/': opened as it is */
	EL_LD_INTERP,          /* the program interpreter, loaded before anything */
	EL_LD_MAIN             /* the file asked about */
} el_ld_how;

/* "rpath", "runpath", "ld_library_path", "ld.so.cache", "default", "path", "interpreter", "file"; NULL for not found. */
const char *el_ld_how_name(el_ld_how how);

typedef struct el_ld_obj el_ld_obj;

/*
 * A near miss of a need not found: a file in a folder the search looked
 * in that is the same library under another name (libcudnn.so.8.2.1 or
 * libcudnn.so.9 for libcudnn.so.8), one the loader could load there.
 */
typedef struct {
	char *path;            /* in-root: the folder as it was searched, and the file's name */
	char *soname;          /* its DT_SONAME, NULL when it has none */
	char *fix;             /* its soname is the name wanted: the command that makes the link
				  ("ln -s libcudnn.so.8.2.1 /usr/local/cuda/lib64/libcudnn.so.8 && ldconfig");
				  NULL for another version, or when a file of that name is in the way */
	int ldconfig;          /* fix is set and ldconfig scans the folder: ldconfig alone makes the link */
} el_ld_near;

/* One DT_NEEDED entry of an object. */
typedef struct {
	char *name;            /* as the object names it */
	el_ld_obj *obj;        /* what it resolved to (borrowed from the tree), NULL: not found */
	char *error;           /* why a file the search found cannot be loaded ("file too short"), or NULL */
	int expand;            /* the tree shows obj's own needs here, its first place depth first */
	char **searched;       /* not found: the folders searched, in order ("ld.so.cache" for the cache), NULL-terminated; else NULL */
	el_ld_near *near;      /* not found: its near misses, nearest first (el_loader_near); else NULL */
	size_t nnear;
	int near_again;        /* an earlier need of this name was searched in the same folders: near is a copy of its */
} el_ld_need;

struct el_ld_obj {
	char *path;            /* in-root path ld.so opened it by (not resolved: $ORIGIN is its folder) */
	char *realpath;        /* in-root, symlinks resolved */
	el_ld_how how;
	const el_elf_info *elf;/* borrowed from the el_loader */
	el_ld_need *needed;
	size_t nneeded;
	const el_ld_obj *parent; /* the object whose need loaded it (ld.so's l_loader); NULL for the file */
	const struct el_ld_tree *tree; /* the tree that loaded it (el_ld_tree_owns) */
};

/* A DT_VERNEED version the library it names does not define. */
typedef struct {
	char *file;            /* the object that needs it (its path) */
	char *version;         /* "GLIBC_2.29" */
	char *library;         /* "libc.so.6", as DT_VERNEED names it */
	char *library_path;    /* the path that library resolved to */
} el_ld_missing;

typedef struct el_ld_tree {
	el_ld_obj *main;
	el_ld_obj *interp;     /* NULL when the root has none */
	el_ld_obj **objs;      /* everything loaded, in load order: the file first */
	size_t nobjs;
	el_ld_missing *missing;
	size_t nmissing;
	size_t not_found;      /* needs that resolved to nothing, or to a file that cannot be loaded */
	char **not_found_names;/* their names in load order, NULL-terminated: the first is where ld.so stops */
	int truncated;         /* more objects than EL_LD_MAX_OBJECTS: the rest was not resolved */
	const char *const *defaults; /* the default folders searched, each with its final '/' (static) */
} el_ld_tree;

#define EL_LD_MAX_OBJECTS 8192

typedef struct {
	const char *library_path; /* LD_LIBRARY_PATH as the program would get it; NULL: unset */
	const char *platform;     /* $PLATFORM; NULL: the file's machine name ("x86_64") */
	const char *lib;          /* $LIB; NULL: from the root's layout (see loader.c) */
	/*
	 * The process the file is loaded into, for modules a program
	 * dlopens (python's extension modules). program: the program's
	 * tree; its DT_RPATH is searched after the file's own and its
	 * loaders' (dl-load.c: "try the DT_RPATH of the executable
	 * itself"). preloaded: other trees already loaded (torch's _C for
	 * torchvision's and mmcv's modules), NULL-terminated. A needed name
	 * an object of these answers to is that object, as _dl_map_object's
	 * name match finds it, and is not searched. Borrowed; they must
	 * outlive the resolved tree. NULL: none.
	 */
	const el_ld_tree *program;
	const el_ld_tree *const *preloaded;
} el_ld_opts;

/* Whether obj belongs to t (and not to one of the trees it was resolved with). */
int el_ld_tree_owns(const el_ld_tree *t, const el_ld_obj *obj);

typedef struct el_loader el_loader;

/* A loader for root (borrowed; it must outlive the loader). Reads <root>/etc/ld.so.cache now. */
int el_loader_new(el_loader **out, envlock_ctx *ctx, const el_root *root);
void el_loader_free(el_loader *ld);

/*
 * Resolve file (an in-root path; a relative one is taken from the
 * root's "/", or from the working folder on the live root). *out is the
 * tree, freed with el_ld_tree_free. Errors: ENVLOCK_ENOTFOUND (no such
 * file), ENVLOCK_EPARSE (not an ELF file), ENVLOCK_EIO.
 */
int el_loader_resolve(el_ld_tree **out, envlock_ctx *ctx, el_loader *ld, const char *file,
		      const el_ld_opts *opts);
void el_ld_tree_free(el_ld_tree *t);

/* The most near misses named for one need. */
#define EL_LD_MAX_NEAR 3

/*
 * Fill the near misses (el_ld_need.near) of every need of t that no
 * folder answered: the files in the folders searched for it (the
 * folders of the ld.so.cache entries for the cache) named as the same
 * library with another version (the same stem before ".so"), of t's
 * class and machine, at most EL_LD_MAX_NEAR, nearest first: the ones
 * whose DT_SONAME is the name wanted (a missing soname link), then the
 * same major version, then others, each group by name. Whether ldconfig
 * scans a folder is read from <root>/etc/ld.so.conf and its includes,
 * and the default folders. t must come from ld. Reads files only.
 */
void el_loader_near(el_loader *ld, el_ld_tree *t);

#endif
