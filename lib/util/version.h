/* Version strings as found on real machines, parsed and compared. */
#ifndef EL_VERSION_H
#define EL_VERSION_H

#include <stdbool.h>
#include <stddef.h>

/* Is v a PEP 440 pre-release or development release ("2.0.0rc4", "1.0.dev3")? */
bool el_version_is_prerelease(const char *v);

/* "10.2.89" -> 10 (the first number), -1 when there is none. */
long el_version_major(const char *v);

/* "1.10.0+cu102" -> "10.2"; "+cu92" -> "9.2"; NULL when the local part names no CUDA. malloc'd. */
char *el_version_local_cuda(const char *v);

/*
 * A field of a conda build string: ("py3.7_cuda10.2.89_cudnn7.6.5_0",
 * "cuda") -> "10.2.89". malloc'd, NULL when absent.
 */
char *el_conda_build_field(const char *build, const char *field);

/* Does version v belong to release r ("10.2.89" in "10.2", "11.4" in "11.x")? */
bool el_version_in_release(const char *v, const char *r);

/* The first n numeric parts of v joined by '.' ("10.2.89", 2 -> "10.2"). malloc'd. */
char *el_version_prefix(const char *v, int n);

/*
 * Does version v meet the PEP 440 specifier set spec, as a Requires-Python
 * says it (">=3.8.0", ">=3.6, !=3.7.*, <4", "~=3.9")? 1 yes, 0 no, -1 when
 * spec is not one this reads (an empty clause, an unknown operator, a
 * wildcard where PEP 440 allows none).
 */
int el_version_satisfies(const char *v, const char *spec);

#endif
