/*
 * Just enough ELF to identify a shared library: class, machine and the
 * DT_SONAME the dynamic loader will look it up by. Reads only the headers
 * and the dynamic segment through pread, so a 500 MB library costs a few
 * small reads.
 */
#ifndef EL_ELF_H
#define EL_ELF_H

typedef struct {
	int bits;            /* 32 or 64 */
	int machine;         /* e_machine */
	int big_endian;
	char *soname;        /* malloc'd, NULL when the file has none */
	char **needed;       /* DT_NEEDED names, malloc'd, NULL-terminated (NULL when none) */
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
