/* An OpenMMLab codebase's __init__.py (mmdet, mmseg, ...): the mmcv range its import-time asserts put. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util/pysource.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	el_mmcv_range r;

	memcpy(text, data, size);
	text[size] = '\0';
	if (el_py_mmcv_range(text, size, &r) == 1)
		el_mmcv_range_release(&r);
	free(text);
	return 0;
}
