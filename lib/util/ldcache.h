/*
 * /etc/ld.so.cache as glibc's ldconfig writes it: parsed once, looked up
 * by soname. The probes use the plain lookup (what the cache lists); the
 * loader (lib/loader) asks for the entry of its own ABI, as ld.so does.
 */
#ifndef EL_LDCACHE_H
#define EL_LDCACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct el_ldcache el_ldcache;

/* The largest cache envlock reads. */
#define EL_LDCACHE_LIMIT (64u << 20)

/* ldconfig's entry flags (sysdeps/generic/ldconfig.h): the ELF kind and the ABI. */
#define EL_LDCACHE_FLAG_ELF 0x0001u
#define EL_LDCACHE_FLAG_ELF_LIBC6 0x0003u
#define EL_LDCACHE_FLAG_X8664_LIB64 0x0300u
#define EL_LDCACHE_FLAG_AARCH64_LIB64 0x0a00u

/* Parse the cache's bytes. 0, or ENVLOCK_EPARSE when ldconfig did not write them. */
int el_ldcache_parse(el_ldcache **out, const char *data, size_t len);

/* The path the cache maps soname to (its first entry of any ABI), or NULL (borrowed). */
const char *el_ldcache_lookup(const el_ldcache *c, const char *soname);

/*
 * The path of soname's first entry whose flags are flags exactly (also
 * 0x0001, plain ELF, when alt_elf is set: i386's ld.so takes both) and
 * that is no glibc-hwcaps or legacy hwcap entry, or NULL (borrowed).
 */
const char *el_ldcache_lookup_abi(const el_ldcache *c, const char *soname, uint32_t flags, int alt_elf);

size_t el_ldcache_count(const el_ldcache *c);
/* Entry i's soname and path (borrowed). */
void el_ldcache_entry(const el_ldcache *c, size_t i, const char **soname, const char **path);
/* The file holds the old "ld.so-1.7.0" table before the new one (Ubuntu 16.04's ldconfig). */
int el_ldcache_format_old(const el_ldcache *c);
void el_ldcache_free(el_ldcache *c);

#endif
