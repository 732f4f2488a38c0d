/*
 * What a Python module checks when it is imported, read from its source
 * text without running it: the mmcv versions an OpenMMLab codebase's
 * __init__.py asserts (mmdet, mmpose, mmseg, ...).
 */
#ifndef EL_PYSOURCE_H
#define EL_PYSOURCE_H

#include <stdbool.h>
#include <stddef.h>

/* The mmcv versions a module accepts: min <= mmcv, mmcv <= max (or < max). */
typedef struct {
	char *min, *max;    /* malloc'd; NULL: that side is not bounded */
	bool max_inclusive; /* the assert compares with <= (mmdet 2.x), not < (3.x) */
} el_mmcv_range;

/*
 * The range the module's import-time asserts put on mmcv's version, as
 * the OpenMMLab codebases write them: string literals for the bounds
 * (mmcv_minimum_version = '1.3.17', MMCV_MAX = '1.4.0'), compared with
 * mmcv.__version__ through digit_version() in one assert or several,
 * chained (min <= v <= max) or joined by "and", either side of the
 * operator. Comments, strings, bracketed continuation lines and the
 * bodies of functions and classes (not run at import) are skipped.
 *
 * Returns 1 with *r filled (free with el_mmcv_range_release) when
 * asserts bound mmcv's version; 0 when the module checks no mmcv version
 * at all; -1 when it checks it in a way this cannot read for certain (a
 * bound that is not a literal, an "or", an if ... raise, a check under a
 * condition, a statement too long to follow, text that does not tokenize).
 */
int el_py_mmcv_range(const char *text, size_t len, el_mmcv_range *r);

void el_mmcv_range_release(el_mmcv_range *r);

#endif
