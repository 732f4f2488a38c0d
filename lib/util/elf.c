#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf.h"
#include "envlock/common.h"
#include "vec.h"
#include "xalloc.h"

#define EL_ELF_MAX_PHDRS 256
#define EL_ELF_MAX_DYN (64 * 1024)
#define EL_ELF_MAX_NEEDED 1024
#define EL_ELF_MAX_STRING 4096   /* a name or a search path */
#define EL_ELF_MAX_VERSIONS 4096 /* Verneed/Vernaux or Verdef entries in all */

/*
 * The file is read through a few cached 4 KiB blocks: the headers, the
 * version tables and the names sit close together, and a read per entry
 * and per name was 14,000 pread(2) calls in a live save, most of its
 * loads probe's time. A read larger than a block bypasses the cache.
 */
#define EL_ELF_BLOCK 4096u
#define EL_ELF_BLOCKS 16

typedef struct {
	uint64_t off;      /* the block's file offset, a multiple of EL_ELF_BLOCK */
	size_t len;        /* bytes in it: fewer at the file's end; 0 when unused */
	unsigned last;     /* when it was last used */
	unsigned char data[EL_ELF_BLOCK];
} elf_block;

typedef struct {
	int fd;
	int big;
	int bits;
	uint64_t size;
	elf_block *blocks; /* EL_ELF_BLOCKS of them */
	unsigned clock;
} elf_file;

/* The cached block holding file offset off (below f->size), read in when needed; NULL if the read fails. */
static const elf_block *block_at(elf_file *f, uint64_t off)
{
	uint64_t start = off - off % EL_ELF_BLOCK;
	elf_block *b = &f->blocks[0];
	size_t want;
	ssize_t n;

	for (int i = 0; i < EL_ELF_BLOCKS; i++) {
		elf_block *c = &f->blocks[i];

		if (c->len && c->off == start) {
			c->last = ++f->clock;
			return c;
		}
		if (!c->len || c->last < b->last)
			b = c; /* an unused block, else the least recently used */
		if (!c->len)
			break;
	}
	want = f->size - start < EL_ELF_BLOCK ? (size_t)(f->size - start) : EL_ELF_BLOCK;
	b->len = 0;
	n = pread(f->fd, b->data, want, (off_t)start);
	if (n != (ssize_t)want || want == 0)
		return NULL;
	b->off = start;
	b->len = want;
	b->last = ++f->clock;
	return b;
}

static uint64_t get(const elf_file *f, const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++) {
		int k = f->big ? i : n - 1 - i;
		v = (v << 8) | p[k];
	}
	return v;
}

static int read_at(elf_file *f, void *buf, size_t n, uint64_t off)
{
	unsigned char *out = buf;

	if (off > f->size || n > f->size - off)
		return ENVLOCK_EPARSE;
	if (n > EL_ELF_BLOCK)
		return pread(f->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : ENVLOCK_EPARSE;
	while (n) {
		const elf_block *b = block_at(f, off);
		size_t at, take;

		if (!b)
			return ENVLOCK_EPARSE;
		at = (size_t)(off - b->off);
		take = b->len - at < n ? b->len - at : n;
		memcpy(out, b->data + at, take);
		out += take;
		off += take;
		n -= take;
	}
	return 0;
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

/*
 * The NUL-terminated string at strtab file offset base + off (at most
 * EL_ELF_MAX_STRING - 1 bytes, empty only when allowed), or NULL.
 */
static char *dyn_string_at(elf_file *f, uint64_t base, uint64_t off, int empty_ok)
{
	char name[EL_ELF_MAX_STRING];
	size_t len = 0;
	uint64_t at;

	if (base > f->size || off >= f->size - base)
		return NULL;
	/* through the cached blocks, to the NUL, the file's end or the limit */
	for (at = base + off; at < f->size && len < sizeof(name) - 1;) {
		const elf_block *b = block_at(f, at);
		const unsigned char *p, *nul;
		size_t avail;

		if (!b)
			return NULL;
		p = b->data + (at - b->off);
		avail = b->len - (size_t)(at - b->off);
		if (avail > sizeof(name) - 1 - len)
			avail = sizeof(name) - 1 - len;
		nul = memchr(p, '\0', avail);
		if (nul) {
			memcpy(name + len, p, (size_t)(nul - p));
			len += (size_t)(nul - p);
			if (len == 0 && !empty_ok)
				return NULL;
			return el_xstrndup(name, len);
		}
		memcpy(name + len, p, avail);
		len += avail;
		at += avail;
	}
	return NULL; /* no NUL within the limit or the file */
}

static char *dyn_string(elf_file *f, uint64_t base, uint64_t off)
{
	return dyn_string_at(f, base, off, 0);
}

/* The dynamic tags read_dynamic keeps (values are addresses or strtab offsets). */
typedef struct {
	int have_strtab;
	uint64_t strtab, soname, rpath, runpath, verneed, verneednum, verdef, verdefnum;
	uint64_t needed[EL_ELF_MAX_NEEDED];
	size_t nneeded;
} dyn_tags;

#define DYN_NONE UINT64_MAX

static int read_dynamic(elf_file *f, const phdr *dynph, dyn_tags *t, el_elf_info *out)
{
	size_t entsz = f->bits == 64 ? 16 : 8;
	uint64_t dsz = dynph->filesz;
	unsigned char *dyn;

	if (dsz > EL_ELF_MAX_DYN)
		dsz = EL_ELF_MAX_DYN;
	dyn = el_xmalloc(dsz ? dsz : 1);
	if (read_at(f, dyn, dsz, dynph->offset) != 0) {
		free(dyn);
		return ENVLOCK_EPARSE;
	}
	for (uint64_t o = 0; o + entsz <= dsz; o += entsz) {
		uint64_t tag = get(f, dyn + o, (int)entsz / 2);
		uint64_t val = get(f, dyn + o + entsz / 2, (int)entsz / 2);

		switch (tag) {
		case DT_NULL: o = dsz; break;
		case DT_STRTAB: t->strtab = val; t->have_strtab = 1; break;
		case DT_SONAME: t->soname = val; break;
		case DT_RPATH: t->rpath = val; break;
		case DT_RUNPATH: t->runpath = val; break;
		case DT_VERNEED: t->verneed = val; break;
		case DT_VERNEEDNUM: t->verneednum = val; break;
		case DT_VERDEF: t->verdef = val; break;
		case DT_VERDEFNUM: t->verdefnum = val; break;
		case DT_FLAGS_1: out->flags_1 = (unsigned long)val; break;
		case DT_NEEDED:
			if (t->nneeded < EL_ELF_MAX_NEEDED)
				t->needed[t->nneeded++] = val;
			break;
		default: break;
		}
	}
	free(dyn);
	return 0;
}

/*
 * DT_VERNEED: a chain of Elf_Verneed (vn_version, vn_cnt, vn_file, vn_aux,
 * vn_next: 16 bytes in both classes), each with a chain of Elf_Vernaux
 * (vna_hash, vna_flags, vna_other, vna_name, vna_next: 16 bytes).
 */
static int read_verneed(elf_file *f, const phdr *ph, int nph, const dyn_tags *t, uint64_t base,
			el_elf_info *out)
{
	uint64_t off, total = 0;
	size_t cap = 0;
	unsigned char vn[16], va[16];

	if (vaddr_to_off(ph, nph, t->verneed, &off) != 0)
		return ENVLOCK_EPARSE;
	for (uint64_t i = 0; i < t->verneednum; i++) {
		uint64_t cnt, aoff;
		char *file;

		if (read_at(f, vn, sizeof(vn), off) != 0)
			return ENVLOCK_EPARSE;
		cnt = get(f, vn + 2, 2);
		if (!(file = dyn_string(f, base, get(f, vn + 4, 4))))
			return ENVLOCK_EPARSE;
		aoff = off + get(f, vn + 8, 4);
		for (uint64_t j = 0; j < cnt; j++) {
			el_elf_verneed *v;
			char *name;

			if (++total > EL_ELF_MAX_VERSIONS || read_at(f, va, sizeof(va), aoff) != 0 ||
			    !(name = dyn_string(f, base, get(f, va + 8, 4)))) {
				free(file);
				return ENVLOCK_EPARSE;
			}
			EL_GROW(out->verneed, out->nverneed + 1, cap);
			v = &out->verneed[out->nverneed++];
			v->file = el_xstrdup(file);
			v->version = name;
			v->weak = (get(f, va + 4, 2) & VER_FLG_WEAK) != 0;
			if (get(f, va + 12, 4) == 0)
				break;
			aoff += get(f, va + 12, 4);
		}
		free(file);
		if (get(f, vn + 12, 4) == 0)
			break;
		off += get(f, vn + 12, 4);
	}
	return 0;
}

/*
 * DT_VERDEF: a chain of Elf_Verdef (vd_version, vd_flags, vd_ndx, vd_cnt,
 * vd_hash, vd_aux, vd_next: 20 bytes in both classes); the name is the
 * first Elf_Verdaux's (vda_name, vda_next). The VER_FLG_BASE entry names
 * the file itself and is not a version.
 */
static int read_verdef(elf_file *f, const phdr *ph, int nph, const dyn_tags *t, uint64_t base,
		       el_elf_info *out)
{
	el_strvec names = EL_STRVEC_INIT;
	unsigned char vd[20], vda[8];
	uint64_t off;

	if (vaddr_to_off(ph, nph, t->verdef, &off) != 0)
		return ENVLOCK_EPARSE;
	for (uint64_t i = 0; i < t->verdefnum && i < EL_ELF_MAX_VERSIONS; i++) {
		char *name;

		if (read_at(f, vd, sizeof(vd), off) != 0 || read_at(f, vda, sizeof(vda), off + get(f, vd + 12, 4)) != 0 ||
		    !(name = dyn_string(f, base, get(f, vda, 4)))) {
			el_strvec_release(&names);
			return ENVLOCK_EPARSE;
		}
		if (get(f, vd + 2, 2) & VER_FLG_BASE)
			free(name);
		else
			el_strvec_push_owned(&names, name);
		if (get(f, vd + 16, 4) == 0)
			break;
		off += get(f, vd + 16, 4);
	}
	out->verdef = el_strvec_detach(&names);
	return 0;
}

/* What the dynamic segment names: its strings, then the version tables. */
static int read_names(elf_file *f, const phdr *ph, int nph, const dyn_tags *t, el_elf_info *out)
{
	uint64_t base;

	if (!t->have_strtab)
		return 0;
	if (vaddr_to_off(ph, nph, t->strtab, &base) != 0)
		return ENVLOCK_EPARSE;
	if (t->soname != DYN_NONE && !(out->soname = dyn_string(f, base, t->soname)))
		return ENVLOCK_EPARSE;
	if (t->rpath != DYN_NONE && !(out->rpath = dyn_string_at(f, base, t->rpath, 1)))
		return ENVLOCK_EPARSE;
	if (t->runpath != DYN_NONE && !(out->runpath = dyn_string_at(f, base, t->runpath, 1)))
		return ENVLOCK_EPARSE;
	if (t->nneeded) {
		out->needed = el_xcalloc(t->nneeded + 1, sizeof(char *));
		for (size_t i = 0, k = 0; i < t->nneeded; i++)
			if ((out->needed[k] = dyn_string(f, base, t->needed[i])) != NULL)
				k++;
	}
	if (t->verneed != DYN_NONE && t->verneednum && read_verneed(f, ph, nph, t, base, out) != 0)
		return ENVLOCK_EPARSE;
	if (t->verdef != DYN_NONE && t->verdefnum && read_verdef(f, ph, nph, t, base, out) != 0)
		return ENVLOCK_EPARSE;
	return 0;
}

/* PT_INTERP: the path of the program interpreter, NUL-terminated inside the segment. */
static char *read_interp(elf_file *f, const phdr *ip)
{
	char buf[EL_ELF_MAX_STRING];
	size_t n = ip->filesz < sizeof(buf) ? (size_t)ip->filesz : sizeof(buf);
	size_t len;

	if (n == 0 || read_at(f, buf, n, ip->offset) != 0)
		return NULL;
	len = strnlen(buf, n);
	if (len == 0 || len == n)
		return NULL;
	return el_xstrndup(buf, len);
}

int el_elf_read(int fd, el_elf_info *out)
{
	unsigned char eh[64], *pbuf = NULL;
	elf_file f = { fd, 0, 0, 0, NULL, 0 };
	phdr ph[EL_ELF_MAX_PHDRS];
	uint64_t phoff, phentsize, phnum;
	int rc = ENVLOCK_EPARSE;
	struct stat st;
	const phdr *dynph = NULL, *interp = NULL;
	dyn_tags *t = NULL;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st) != 0)
		return ENVLOCK_EIO;
	f.size = (uint64_t)st.st_size;
	f.blocks = el_xmalloc(EL_ELF_BLOCKS * sizeof(*f.blocks));
	for (int i = 0; i < EL_ELF_BLOCKS; i++)
		f.blocks[i].len = 0;
	if (read_at(&f, eh, 52, 0) != 0 || memcmp(eh, ELFMAG, SELFMAG) != 0 ||
	    (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64))
		goto done;
	f.bits = eh[EI_CLASS] == ELFCLASS64 ? 64 : 32;
	f.big = eh[EI_DATA] == ELFDATA2MSB;
	if (f.bits == 64 && read_at(&f, eh, 64, 0) != 0)
		goto done;
	out->bits = f.bits;
	out->big_endian = f.big;
	out->type = (int)get(&f, eh + 16, 2);
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
	rc = 0;
	if (phnum == 0)
		goto done;	/* no program headers: an object without a soname */
	rc = ENVLOCK_EPARSE;
	if (phnum > EL_ELF_MAX_PHDRS || phentsize < (f.bits == 64 ? 56u : 32u))
		goto done;
	pbuf = el_xmalloc(phnum * phentsize);
	if (read_at(&f, pbuf, phnum * phentsize, phoff) != 0)
		goto done;
	for (uint64_t i = 0; i < phnum; i++) {
		read_phdr(&f, pbuf + i * phentsize, &ph[i]);
		if (ph[i].type == PT_DYNAMIC && !dynph)
			dynph = &ph[i];
		else if (ph[i].type == PT_INTERP && !interp)
			interp = &ph[i];
	}
	if (interp && !(out->interp = read_interp(&f, interp)))
		goto done;
	rc = 0;
	if (!dynph)
		goto done;
	out->dynamic = 1;
	t = el_xcalloc(1, sizeof(*t));
	t->soname = t->rpath = t->runpath = t->verneed = t->verdef = DYN_NONE;
	if ((rc = read_dynamic(&f, dynph, t, out)) == 0)
		rc = read_names(&f, ph, (int)phnum, t, out);
done:
	if (rc != 0)
		el_elf_info_release(out);
	free(t);
	free(pbuf);
	free(f.blocks);
	return rc;
}

void el_elf_info_release(el_elf_info *info)
{
	el_strv_free(info->needed);
	el_strv_free(info->verdef);
	free(info->soname);
	free(info->interp);
	free(info->rpath);
	free(info->runpath);
	for (size_t i = 0; i < info->nverneed; i++) {
		free(info->verneed[i].file);
		free(info->verneed[i].version);
	}
	free(info->verneed);
	memset(info, 0, sizeof(*info));
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
