/*
 * Just enough ELF to identify a shared library and to follow the dynamic
 * loader: class, machine, the DT_SONAME it is looked up by, what it needs
 * (DT_NEEDED), where it asks to be searched (DT_RPATH, DT_RUNPATH,
 * PT_INTERP) and the symbol versions it needs and defines (DT_VERNEED,
 * DT_VERDEF). Reads only the headers, the dynamic segment and what it
 * points at, through pread, so a 500 MB library costs a few small reads.
 * The file is untrusted: every offset is checked against its size, and
 * every count has a cap.
 */
#ifndef EL_ELF_H
#define EL_ELF_H

#include <stddef.h>

/* A needed symbol version: DT_VERNEED's library file name and a Vernaux name. */
typedef struct {
	char *file;          /* "libc.so.6" */
	char *version;       /* "GLIBC_2.29" */
	int weak;            /* VER_FLG_WEAK: the loader does not fail when it is missing */
} el_elf_verneed;

typedef struct {
	int bits;            /* 32 or 64 */
	int machine;         /* e_machine */
	int big_endian;
	int type;            /* e_type: ET_DYN, ET_EXEC, ... */
	int dynamic;         /* has a PT_DYNAMIC segment (not statically linked) */
	unsigned long flags_1; /* DT_FLAGS_1 (DF_1_NODEFLIB, ...) */
	char *soname;        /* malloc'd, NULL when the file has none */
	char **needed;       /* DT_NEEDED names, malloc'd, NULL-terminated (NULL when none) */
	char *interp;        /* PT_INTERP, malloc'd, NULL when none */
	char *rpath;         /* DT_RPATH as stored, malloc'd, NULL when none */
	char *runpath;       /* DT_RUNPATH as stored, malloc'd, NULL when none */
	el_elf_verneed *verneed; /* malloc'd, nverneed entries */
	size_t nverneed;
	char **verdef;       /* DT_VERDEF names but the base (the soname), NULL-terminated; NULL: no DT_VERDEF */
} el_elf_info;

/*
 * Parse the ELF file open on fd. 0 on success; ENVLOCK_EPARSE when it is
 * not ELF or its structures point outside the file.
 */
int el_elf_read(int fd, el_elf_info *out);
void el_elf_info_release(el_elf_info *info);

/* "x86_64", "aarch64", "ppc64le", ... or NULL for others. */
const char *el_elf_machine_name(int machine, int bits, int big_endian);

#endif
