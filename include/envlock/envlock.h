/*
 * envlock — public API, all headers.
 */
#ifndef ENVLOCK_ENVLOCK_H
#define ENVLOCK_ENVLOCK_H

#include "common.h"
#include "lock.h"
#include "show.h"
#include "check.h"
#include "bundle.h"
#include "restore.h"
#include "diff.h"
#include "sign.h"
#include "export.h"
#include "report.h"
#include "verify.h"
#include "save.h"
#include "ldd.h"
#include "pack.h"
#include "redact.h"
#include "solve.h"
#include "config.h"

#endif
