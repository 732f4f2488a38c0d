#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf.h"
#include "envlock/common.h"
#include "xalloc.h"

#define EL_ELF_MAX_PHDRS 256
#define EL_ELF_MAX_DYN (64 * 1024)
#define EL_ELF_MAX_NEEDED 64

typedef struct {
	int fd;
	int big;
	int bits;
	uint64_t size;
} elf_file;

static uint64_t get(const elf_file *f, const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++) {
		int k = f->big ? i : n - 1 - i;
		v = (v << 8) | p[k];
	}
	return v;
}

static int read_at(const elf_file *f, void *buf, size_t n, uint64_t off)
{
	if (off > f->size || n > f->size - off)
		return ENVLOCK_EPARSE;
	return pread(f->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : ENVLOCK_EPARSE;
}

typedef struct {
	uint64_t type, offset, vaddr, filesz;
} phdr;

static void read_phdr(const elf_file *f, const unsigned char *p, phdr *ph)
{
	ph->type = get(f, p, 4);
	if (f->bits == 64) {
		ph->offset = get(f, p + 8, 8);
		ph->vaddr = get(f, p + 16, 8);
		ph->filesz = get(f, p + 32, 8);
	} else {
		ph->offset = get(f, p + 4, 4);
		ph->vaddr = get(f, p + 8, 4);
		ph->filesz = get(f, p + 16, 4);
	}
}

/* Map a virtual address to a file offset through the PT_LOAD segments. */
static int vaddr_to_off(const phdr *ph, int n, uint64_t vaddr, uint64_t *off)
{
	for (int i = 0; i < n; i++)
		if (ph[i].type == PT_LOAD && vaddr >= ph[i].vaddr &&
		    vaddr - ph[i].vaddr < ph[i].filesz) {
			*off = ph[i].offset + (vaddr - ph[i].vaddr);
			return 0;
		}
	return ENVLOCK_EPARSE;
}

/* The NUL-terminated name at strtab file offset base + off (at most 255 bytes), or NULL. */
static char *dyn_string(const elf_file *f, uint64_t base, uint64_t off)
{
	char name[256];
	ssize_t n;
	size_t len;

	if (base > f->size || off > f->size - base)
		return NULL;
	memset(name, 0, sizeof(name));
	n = pread(f->fd, name, sizeof(name) - 1, (off_t)(base + off));
	if (n <= 0)
		return NULL;
	len = strnlen(name, (size_t)n);
	if (len == 0 || len == (size_t)n)
		return NULL;
	return el_xstrndup(name, len);
}

int el_elf_read(int fd, el_elf_info *out)
{
	unsigned char eh[64], *pbuf = NULL, *dyn = NULL;
	elf_file f = { fd, 0, 0, 0 };
	phdr ph[EL_ELF_MAX_PHDRS];
	uint64_t phoff, phentsize, phnum, strtab = 0, soname = UINT64_MAX;
	int rc = ENVLOCK_EPARSE, have_strtab = 0;
	uint64_t needed[EL_ELF_MAX_NEEDED];
	size_t nneeded = 0;
	struct stat st;
	const phdr *dynph = NULL;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st) != 0)
		return ENVLOCK_EIO;
	f.size = (uint64_t)st.st_size;
	if (read_at(&f, eh, 52, 0) != 0 || memcmp(eh, ELFMAG, SELFMAG) != 0)
		return ENVLOCK_EPARSE;
	if (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64)
		return ENVLOCK_EPARSE;
	f.bits = eh[EI_CLASS] == ELFCLASS64 ? 64 : 32;
	f.big = eh[EI_DATA] == ELFDATA2MSB;
	if (f.bits == 64 && read_at(&f, eh, 64, 0) != 0)
		return ENVLOCK_EPARSE;
	out->bits = f.bits;
	out->big_endian = f.big;
	out->machine = (int)get(&f, eh + 18, 2);
	if (f.bits == 64) {
		phoff = get(&f, eh + 32, 8);
		phentsize = get(&f, eh + 54, 2);
		phnum = get(&f, eh + 56, 2);
	} else {
		phoff = get(&f, eh + 28, 4);
		phentsize = get(&f, eh + 42, 2);
		phnum = get(&f, eh + 44, 2);
	}
	if (phnum == 0)
		return 0;	/* no program headers: an object without a soname */
	if (phnum > EL_ELF_MAX_PHDRS || phentsize < (f.bits == 64 ? 56u : 32u))
		return ENVLOCK_EPARSE;
	pbuf = el_xmalloc(phnum * phentsize);
	if (read_at(&f, pbuf, phnum * phentsize, phoff) != 0)
		goto done;
	for (uint64_t i = 0; i < phnum; i++) {
		read_phdr(&f, pbuf + i * phentsize, &ph[i]);
		if (ph[i].type == PT_DYNAMIC)
			dynph = &ph[i];
	}
	rc = 0;
	if (!dynph)
		goto done;
	rc = ENVLOCK_EPARSE;
	{
		size_t entsz = f.bits == 64 ? 16 : 8;
		uint64_t dsz = dynph->filesz;

		if (dsz > EL_ELF_MAX_DYN)
			dsz = EL_ELF_MAX_DYN;
		dyn = el_xmalloc(dsz ? dsz : 1);
		if (read_at(&f, dyn, dsz, dynph->offset) != 0)
			goto done;
		for (uint64_t o = 0; o + entsz <= dsz; o += entsz) {
			uint64_t tag = get(&f, dyn + o, (int)entsz / 2);
			uint64_t val = get(&f, dyn + o + entsz / 2, (int)entsz / 2);

			if (tag == DT_NULL)
				break;
			if (tag == DT_STRTAB) {
				strtab = val;
				have_strtab = 1;
			} else if (tag == DT_SONAME) {
				soname = val;
			} else if (tag == DT_NEEDED && nneeded < EL_ELF_MAX_NEEDED) {
				needed[nneeded++] = val;
			}
		}
	}
	rc = 0;
	if (have_strtab && (soname != UINT64_MAX || nneeded)) {
		uint64_t base;

		rc = ENVLOCK_EPARSE;
		if (vaddr_to_off(ph, (int)phnum, strtab, &base) != 0)
			goto done;
		if (soname != UINT64_MAX && !(out->soname = dyn_string(&f, base, soname)))
			goto done;
		out->needed = el_xcalloc(nneeded + 1, sizeof(char *));
		for (size_t i = 0, k = 0; i < nneeded; i++)
			if ((out->needed[k] = dyn_string(&f, base, needed[i])) != NULL)
				k++;
		rc = 0;
	}
done:
	free(pbuf);
	free(dyn);
	return rc;
}

void el_elf_info_release(el_elf_info *info)
{
	free(info->soname);
	info->soname = NULL;
	for (char **n = info->needed; n && *n; n++)
		free(*n);
	free(info->needed);
	info->needed = NULL;
}

const char *el_elf_machine_name(int machine, int bits, int big_endian)
{
	switch (machine) {
	case EM_X86_64:
		return "x86_64";
	case EM_386:
		return "i686";
	case EM_AARCH64:
		return "aarch64";
	case EM_ARM:
		return "armv7l";
	case EM_PPC64:
		return big_endian ? "ppc64" : "ppc64le";
	case EM_S390:
		return bits == 64 ? "s390x" : "s390";
	case EM_RISCV:
		return bits == 64 ? "riscv64" : "riscv32";
	default:
		return NULL;
	}
}
