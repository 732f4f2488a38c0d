/*
 * envlock — a lock in the formats people already use (`envlock export`),
 * and partial locks from what they already have (`envlock import`).
 *
 * Export formats:
 *   conda-explicit   `conda list --explicit --md5` form: "@EXPLICIT", then one
 *                    package URL per line with "#<md5>" (conda create --file)
 *   requirements     `pip freeze --all` form: name==version (name===version
 *                    for a version that is not PEP 440), editable and VCS
 *                    lines as pip writes them, --hash=sha256: when every line
 *                    has a known hash (pip's hash-checking mode needs all)
 *   environment-yml  `conda env export` form: name, channels, conda
 *                    dependencies name=version=build and a pip: section
 *   dockerfile       an nvidia/cuda:<cuda>-cudnn<major>-devel-ubuntu<release>
 *                    base (or the closest published tag, said in a comment),
 *                    the conda and pip installs above, the configs copied in
 * Every output is a function of the lock alone: the same lock gives the
 * same bytes.
 */
#ifndef ENVLOCK_EXPORT_H
#define ENVLOCK_EXPORT_H

#include "common.h"
#include "lock.h"

typedef enum {
	ENVLOCK_EXPORT_CONDA_EXPLICIT = 0,
	ENVLOCK_EXPORT_REQUIREMENTS,
	ENVLOCK_EXPORT_ENVIRONMENT_YML,
	ENVLOCK_EXPORT_DOCKERFILE
} envlock_export_format;

/** The format named "conda-explicit", "requirements", ... into *out; ENVLOCK_EINVAL for another name. */
ENVLOCK_EXTERN(int) envlock_export_format_parse(const char *name, envlock_export_format *out);

/** "conda-explicit", "requirements", "environment-yml", "dockerfile". */
ENVLOCK_EXTERN(const char *) envlock_export_format_name(envlock_export_format f);

/** Options of envlock_export(). Zero-initialise. */
typedef struct {
	/** Called for each thing the output cannot carry (may be NULL). */
	void (*on_warning)(const char *message, void *data);
	void *warning_data;
} envlock_export_opts;

/**
 * Render lock in format. *out (malloc'd, NUL-terminated, *len bytes)
 * belongs to the caller: free() it. Fails with ENVLOCK_EINVAL when the
 * lock has nothing for the format (conda-explicit of a lock without conda
 * packages, requirements without pip distributions).
 */
ENVLOCK_EXTERN(int) envlock_export(char **out, size_t *len, envlock_ctx *ctx,
				   const envlock_lock *lock, envlock_export_format format,
				   const envlock_export_opts *opts);

/** envlock_export() written to path atomically; "-" writes to stdout. */
ENVLOCK_EXTERN(int) envlock_export_write(envlock_ctx *ctx, const envlock_lock *lock,
					 envlock_export_format format, const char *path,
					 const envlock_export_opts *opts);

/** What envlock_import() read. */
typedef enum {
	ENVLOCK_IMPORT_CONDA_EXPLICIT = 0, /**< `conda list --explicit [--md5|--sha256]` */
	ENVLOCK_IMPORT_PIP_FREEZE          /**< `pip freeze` (or a requirements file of pins) */
} envlock_import_kind;

/**
 * Read a `conda list --explicit` file or `pip freeze` output (which one
 * is detected: an "@EXPLICIT" line makes it conda's) into a partial lock:
 * one with only the conda or pip section, marked "partial", which
 * `envlock diff` compares with a full lock section by section. The file
 * is untrusted: at most 16 MiB, lines of at most 8 KiB, 100,000 entries;
 * a problem in it fails with ENVLOCK_EPARSE or ENVLOCK_ELIMIT and the
 * message "<path>:<line>: <problem>". A file that cannot be read fails
 * with ENVLOCK_ENOTFOUND, ENVLOCK_EIO or ENVLOCK_EINVAL (not a regular
 * file) and "'<path>': <why>". kind may be NULL.
 */
ENVLOCK_EXTERN(int) envlock_import(envlock_lock **out, envlock_import_kind *kind,
				   envlock_ctx *ctx, const char *path);

#endif
