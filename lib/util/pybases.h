/*
 * The bases of an OpenMMLab Python config, read from its text without
 * running it: what a top-level `_base_ = ...` names (mmcv 1.x and
 * mmengine), and the modules mmengine's `with read_base():` block imports.
 */
#ifndef EL_PYBASES_H
#define EL_PYBASES_H

#include <stdbool.h>
#include <stddef.h>

#include "vec.h"

typedef struct {
	el_strvec names;  /* the literal paths of the last `_base_ = ...`, in order */
	char *unresolved; /* its right-hand side as written when it is not literal paths (malloc'd), or NULL */
	bool read_base;   /* the file has a `with read_base():` block */
	el_strvec modules; /* the modules its `from MODULE import ...` lines name, as written (".._base_.x") */
} el_py_bases;

/*
 * Read the bases of the config text [s, s + len) into *d (zeroed first by
 * the caller; release with el_py_bases_release). Only top-level
 * statements count, and the last `_base_` assignment wins, as when
 * mmcv 1.x's Config runs the file (pybases.c says why); a `_base_ += [...]` is not literal: unresolved.
 * A literal is a string or adjacent strings, plain or r/u-prefixed, or a
 * list of them, or one in brackets; mmcv's {{ fileDirname }} makes it
 * unresolved. Text that does not tokenize (util/pytok.h) ends the
 * reading: what the statements before it said is kept.
 */
void el_py_bases_read(el_py_bases *d, const char *s, size_t len);

void el_py_bases_release(el_py_bases *d);

#endif
