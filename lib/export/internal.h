/* Exports of a lock, inside lib/export: the shared pieces of every format. */
#ifndef EL_EXPORT_INTERNAL_H
#define EL_EXPORT_INTERNAL_H

#include <stdbool.h>

#include "envlock/export.h"
#include "lock/view.h"
#include "util/buf.h"

/* One export in progress. */
typedef struct {
	const el_view *v;      /* the lock */
	const char *lock_id;   /* "sha256:<hex>" of its content */
	el_buf *out;
	const envlock_export_opts *opts;
} el_export;

/* Tell the caller (opts->on_warning) what the export left out or changed (emit.c, with the two below). */
void el_export_warn(el_export *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A word from the lock that can go into a generated file as it is: no
 * spaces, no control characters (a hostile lock could otherwise start a
 * new line, a new YAML key, a new Dockerfile instruction). NULL is not.
 */
bool el_export_word(const char *s);

/* Text from the lock that can go into a comment line: no control characters. */
bool el_export_line(const char *s);

/* Who put a Python distribution there, which says who should install it again. */
typedef enum {
	EL_OWNER_PIP = 0,  /* pip, or an unknown installer: pip installs it */
	EL_OWNER_CONDA,    /* a conda package of the environment */
	EL_OWNER_SYSTEM    /* the distribution's package manager (Debian's dist-packages) */
} el_owner;

/* One pip requirement line, as `pip freeze` writes it. */
typedef struct {
	char *key;           /* lowercase name, the sort key (pip freeze sorts by name.lower()) */
	char *name;          /* as the metadata spells it */
	char *version;       /* NULL when unknown (a partial lock's VCS line) */
	char *comment;       /* a "# ..." line pip freeze puts before it, or NULL */
	char *req;           /* "name==1.0", "name===1.0ubuntu1", "-e git+URL@rev#egg=name", "name @ URL" */
	char *sha256;        /* hex digest of the archive, when known */
	bool local_editable; /* "-e /path": the source tree is on the saving machine only */
	bool unsafe;         /* a field is not an el_export_word: the distribution is left out */
	el_owner owner;
	const el_pip_dist *dist; /* the lock's entry */
} el_pip_req;

/* The pip requirements of a lock, one per distribution name, sorted like pip freeze (reqs.c). */
void el_pip_reqs(const el_view *v, el_pip_req **out, size_t *n);
void el_pip_reqs_free(el_pip_req *r, size_t n);

/* A pip option line ("--extra-index-url URL") and the comment line before it ("# ..."). */
typedef struct {
	char *comment, *line;
} el_index_line;

/*
 * The index, extra-index and find-links lines the requirements of reqs that
 * keep() says yes to (keep may be NULL) need, to go before the pins: the
 * lock's pip configuration first, then each index or page their origins
 * name, once, its comment saying where it came from (inferred ones say
 * so). indexes.c; free with el_index_lines_free.
 */
size_t el_pip_index_lines(const el_pip_req *reqs, size_t n, bool (*keep)(const el_pip_req *r),
			  const el_view *v, el_index_line **out);
void el_index_lines_free(el_index_line *l, size_t n);

/* PEP 440's grammar (packaging's VERSION_PATTERN): may "name==version" be written? */
bool el_pep440_valid(const char *version);

/* Whether the lock has conda packages to export, and their platform ("linux-64", or NULL). */
bool el_conda_exportable(const el_view *v);
const char *el_conda_platform(const el_view *v);

/* The formats. */
int el_export_conda_explicit(el_export *e);
int el_export_requirements(el_export *e);
int el_export_environment_yml(el_export *e);
int el_export_dockerfile(el_export *e);

/*
 * Append the requirements-file lines of reqs (those keep() says yes to;
 * keep may be NULL). With image set, an editable install from a local tree
 * becomes a comment: the tree is not in the image.
 */
void el_write_requirements(el_export *e, el_pip_req *reqs, size_t n,
			   bool (*keep)(const el_pip_req *r), bool image);

/* Append the conda-explicit lines (header, @EXPLICIT, URLs). */
void el_write_conda_explicit(el_export *e);

/* The nvidia/cuda image for a lock: the tag and a comment (lines starting "# ") on why. */
typedef struct {
	char *tag;     /* "11.8.0-cudnn8-devel-ubuntu22.04"; NULL: the lock has no CUDA toolkit */
	char *os_base; /* without CUDA: "ubuntu:22.04", "debian:12" */
	char *comment; /* "# ...\n" lines */
} el_base_image;

void el_choose_base_image(el_base_image *out, const el_view *v);
void el_base_image_release(el_base_image *b);

#endif
