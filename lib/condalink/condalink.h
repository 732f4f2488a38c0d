/*
 * conda's "link" step without conda: a conda environment made from
 * explicit package archives (.conda and .tar.bz2), as conda's package
 * format defines it, so that envlock and a kit bring an environment back
 * on a machine with no conda at all.
 *
 * The format, as this follows it (data/conda-package-format.json cites
 * each rule with its source):
 *  - conda-build's package specification (docs.conda.io, conda-build,
 *    resources/package-spec): info/index.json, info/paths.json (paths
 *    version 1: _path, path_type hardlink|softlink, prefix_placeholder,
 *    file_mode text|binary, no_link), and for old packages info/files,
 *    info/has_prefix and info/no_link; info/link.json for noarch python
 *    (entry points);
 *  - conda's own linking (conda/core/portability.py: text replacement is
 *    every occurrence; binary replacement is within each NUL-terminated
 *    string, padded with NULs so no length changes, and refused when the
 *    new prefix is longer; conda/common/path.py: noarch python's
 *    site-packages/ and python-scripts/; conda/core/path_actions.py: the
 *    entry point script and the .pyc paths; conda/models/records.py and
 *    conda/core/prefix_data.py: the conda-meta record).
 *
 * Order: every archive is checked (digests, paths, links, placeholders)
 * and unpacked into a package cache in a staging folder beside the
 * target before anything is linked; the environment is built in that
 * staging folder and renamed into place at the end. A failure or a
 * signal removes the staging folder: nothing is left half-made.
 */
#ifndef EL_CONDALINK_H
#define EL_CONDALINK_H

#include <stdbool.h>
#include <stdint.h>

#include "envlock/common.h"

/* conda's standard placeholder of old packages (conda/base/constants.py PREFIX_PLACEHOLDER). */
#define EL_CLINK_PLACEHOLDER "/opt/anaconda1anaconda2anaconda3"
/* Limits on what an archive may hold: every read of one is capped. */
#define EL_CLINK_META_MAX (64u << 20)   /* info/paths.json and the other info/ files */
#define EL_CLINK_FILES_MAX 500000       /* paths in one package */
#define EL_CLINK_PLACEHOLDER_MAX 1024   /* bytes of a prefix placeholder */
#define EL_CLINK_FILE_MAX (1ull << 36)  /* bytes of one file of a package */
#define EL_CLINK_RECORD_MAX (1u << 30)  /* bytes of a package's conda-meta record */

/* One package to link, as the lock records it. */
typedef struct {
	const char *archive;   /* host path of its .conda or .tar.bz2 */
	const char *channel;   /* the lock's channel and url: the package's origin */
	const char *url;
	const char *md5;       /* the lock's digests (either may be NULL, not both) */
	const char *sha256;
	bool verified;         /* the caller read the archive and found those digests */
} el_clink_pkg;

typedef struct {
	const char *prefix;       /* the environment's path as its programs see it (absolute) */
	const char *host_prefix;  /* where it is made on this machine (differs under --root) */
	const char *chroot;       /* run the environment's python chroot'ed here (NULL: on this machine) */
	bool no_pyc;              /* do not run the environment's python: no .pyc (reported in *note) */
	const char *history_cmd;  /* the "# cmd:" line of conda-meta/history */
	int log_fd;               /* the output of what runs (compileall), or -1 */
} el_clink_opts;

typedef struct {
	size_t packages, files, hardlinks, copies, patched, shebangs, softlinks, entry_points, pycs;
	char *note;               /* what was left out and why (malloc'd), or NULL */
} el_clink_result;

/*
 * Make the conda environment of the n packages (in the lock's order: a
 * later one's file replaces an earlier one's, as conda's) at
 * o->host_prefix, which must not exist. 0; or an ENVLOCK_E code with one
 * line on ctx naming the archive and its problem, and nothing left of
 * the environment. ENVLOCK_ERROR with "interrupted" after a signal.
 */
int el_clink_create(el_clink_result *res, envlock_ctx *ctx, const el_clink_opts *o, const el_clink_pkg *pkgs, size_t n);
void el_clink_result_release(el_clink_result *res);

/*
 * conda's prefix replacement of data (len bytes) in place or into *out:
 * text mode replaces every occurrence (the length may change: *out is
 * malloc'd, *out_len its length); binary mode replaces inside each
 * NUL-terminated string that holds the placeholder and pads the string
 * with NULs (in place: *out is data). -1 when the new prefix is longer
 * than the placeholder in binary mode (nothing changed). *count: the
 * occurrences replaced.
 */
int el_clink_replace(char **out, size_t *out_len, char *data, size_t len, const char *placeholder,
		     const char *prefix, bool binary, size_t *count);

/*
 * The longest "#!" line conda leaves in a text file (conda/core/portability.py
 * MAX_SHEBANG_LENGTH on Linux: the kernel reads 127 bytes of it, and cuts the rest).
 */
#define EL_CLINK_SHEBANG_MAX 127

/*
 * conda's long shebang rule, run on a text file after its prefix
 * replacement: a first line "#!PATH OPTIONS" longer than
 * EL_CLINK_SHEBANG_MAX bytes, or whose PATH's folder holds an escaped
 * space, becomes "#!/usr/bin/env NAME OPTIONS" (NAME: PATH's last
 * component), wherever that line occurs in the data. *data (malloc'd,
 * *len bytes) is replaced by a new one (NUL after it) and true returned
 * when it changes.
 */
bool el_clink_long_shebang(char **data, size_t *len);

/* The python X.Y of a python package's version ("3.7.12" -> "3.7"), malloc'd, or NULL. */
char *el_clink_python_xy(const char *version);

/*
 * Where a noarch python package's path goes in an environment of python
 * xy (conda/common/path.py): site-packages/... under lib/pythonX.Y/,
 * python-scripts/... under bin/; others unchanged. malloc'd.
 */
char *el_clink_noarch_path(const char *path, const char *xy);

/* The .pyc conda lists for a .py of python xy (PEP 3147): dir/__pycache__/stem.cpython-XY.pyc, malloc'd. */
char *el_clink_pyc_path(const char *py, const char *xy);

/*
 * Is a link at rel (a path in the prefix) to target inside prefix?
 * Relative targets resolve from rel's folder, lexically; an absolute one
 * must lie under prefix.
 */
bool el_clink_link_inside(const char *rel, const char *target, const char *prefix);

#endif
