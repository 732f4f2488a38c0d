/* The digest cache ($XDG_CACHE_HOME/envlock/hashes): load, a lookup that may hit, and the rewrite. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "util/hashcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char file[4096];
	char hex[EL_SHA256_HEX], *warning = NULL;
	el_hashcache *c;
	uint64_t len;
	int err_no;

	if (!file[0]) {
		char xdg[4096];

		snprintf(xdg, sizeof(xdg), "%s/cache", fz_dir());
		setenv("XDG_CACHE_HOME", xdg, 1);
		snprintf(file, sizeof(file), "%s", fz_write("hashed.bin", "some bytes to hash\n", 19));
	}
	fz_write("cache/envlock/hashes", data, size);
	c = el_hashcache_open(0, &warning);
	free(warning);
	(void)el_hashcache_file(c, file, hex, &len, &err_no);
	el_hashcache_save(c);
	el_hashcache_free(c);
	return 0;
}
