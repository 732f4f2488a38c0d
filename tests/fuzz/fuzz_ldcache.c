/* /etc/ld.so.cache (old and new formats): parse, list and look up as the probes and the loader do. */
#include "fuzz.h"
#include "util/ldcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	el_ldcache *c = NULL;

	if (el_ldcache_parse(&c, (const char *)data, size) != 0)
		return 0;
	for (size_t i = 0, n = el_ldcache_count(c); i < n && i < 64; i++) {
		const char *soname, *path;

		el_ldcache_entry(c, i, &soname, &path);
		(void)el_ldcache_lookup(c, soname);
		(void)el_ldcache_lookup_abi(c, soname, EL_LDCACHE_FLAG_ELF_LIBC6 | EL_LDCACHE_FLAG_X8664_LIB64, 0);
		(void)el_ldcache_lookup_abi(c, soname, EL_LDCACHE_FLAG_ELF_LIBC6, 1);
	}
	(void)el_ldcache_lookup(c, "libc.so.6");
	(void)el_ldcache_format_old(c);
	el_ldcache_free(c);
	return 0;
}
