/*
 * envlock — the human summary of a lock (`envlock show`).
 */
#ifndef ENVLOCK_SHOW_H
#define ENVLOCK_SHOW_H

#include <stdio.h>
#include "common.h"
#include "lock.h"

/**
 * Print a short aligned summary of lock to out: OS, glibc, driver,
 * toolkits, cuDNN, gcc, Python, conda env, frameworks, package counts
 * and warnings. Returns 0, or ENVLOCK_EIO when writing fails.
 */
ENVLOCK_EXTERN(int) envlock_show_print(const envlock_lock *lock,
				       envlock_ctx *ctx, FILE *out);

#endif
