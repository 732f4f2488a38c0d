/* An ELF file (a library a probe finds): headers, dynamic section, version needs and definitions, PT_INTERP. */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "util/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	el_elf_info info;

	if (fd < 0 && (fd = memfd_create("envlock-fuzz-elf", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (el_elf_read(fd, &info) == 0) {
		(void)el_elf_machine_name(info.machine, info.bits, info.big_endian);
		el_elf_info_release(&info);
	}
	return 0;
}
