/*
 * What envlock's fuzz harnesses share: a private scratch folder on tmpfs
 * for the parsers that read a path, inputs split into several files, and
 * a probe context over a scratch root for the parsers that live inside a
 * probe. Each harness defines LLVMFuzzerTestOneInput; libFuzzer drives it
 * under `make fuzz`, replay.c runs it over the corpus under `make test`.
 */
#ifndef EL_FUZZ_H
#define EL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "envlock/envlock.h"
#include "probe/probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's scratch folder (made on first use, removed at exit). */
const char *fz_dir(void);

/* Write data to <fz_dir>/name (parents made); the host path (static buffer). */
const char *fz_write(const char *name, const void *data, size_t len);

/*
 * Inputs that are several files are split at FZ_SEP (in the dictionaries):
 * part i starts at parts[i].data. Returns the number of parts (at most max;
 * the last takes the rest).
 */
#define FZ_SEP "\n@@@@\n"
typedef struct {
	const uint8_t *data;
	size_t len;
} fz_part;
size_t fz_split(const uint8_t *data, size_t len, fz_part *parts, size_t max);

/*
 * A scratch root holding exactly the files named in paths (in-root absolute
 * paths, NULL-terminated), part i of data written to paths[i]; paths past
 * the last part are removed. Returns the root's host path.
 */
const char *fz_root(const char *const paths[], const uint8_t *data, size_t len);

/* A probe over the scratch root, as envlock_lock_probe sets one up (no digest cache, no environment). */
void fz_probe_init(el_probe *p, envlock_ctx *ctx, const envlock_probe_opts *opts);
void fz_probe_release(el_probe *p);

/* Give the probe a Python environment at prefix with one site folder (pip and frameworks read it). */
void fz_probe_python(el_probe *p, const char *prefix, const char *site);

/* A context for one input; aborts when it cannot be made. */
envlock_ctx *fz_ctx(void);

#endif
