/*
 * The typed view of a lock: what a lock's facts mean, defined once, for
 * every consumer (show, check, diff, restore, export, report, bundle,
 * verify). A document reaching these has passed the schema at load (or
 * was built by the probes), so the types are known; these say which
 * toolkit is the default, when a section counts as present, and which
 * frameworks envlock knows.
 */
#ifndef EL_VIEW_H
#define EL_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/*
 * A section or item counts as present when it is an object whose "status"
 * is "present", or that has no status (the items of a section, hand-made
 * partial locks). "absent", "unknown" and "unreadable" are not present.
 */
bool el_present(const cJSON *o);

/* o's string member key when o is present, else NULL. */
const char *el_present_str(const cJSON *o, const char *key);

/*
 * The default CUDA toolkit: the entry of cuda.toolkits that cuda.default
 * names, by its home or one of its aliases (/usr/local/cuda is usually a
 * link to /usr/local/cuda-X.Y). NULL when the cuda section is not present,
 * names no default, or no toolkit is there: nothing is guessed.
 */
const cJSON *el_default_toolkit(const cJSON *doc);

/* The toolkit of doc whose home or one of whose aliases is path, or NULL. */
const cJSON *el_toolkit_at(const cJSON *doc, const char *path);

/* A toolkit's version: the full one (version.json), else its release ("11.8"), else NULL. */
const char *el_toolkit_version(const cJSON *toolkit);

/* What envlock knows of a framework. */
enum {
	EL_FW_OPENMMLAB = 1 << 0, /* an OpenMMLab codebase */
	EL_FW_MMCV_OPS = 1 << 1,  /* its models call mmcv's compiled ops (mmcv-full, or mmcv 2.x with ops) */
	EL_FW_CITED = 1 << 2,     /* a library a paper builds on: named in report's citation line */
};

typedef struct {
	const char *key;      /* the key under "frameworks", also its import name */
	const char *dists[4]; /* its distributions (PEP 503 names), preferred first; NULL-ended */
	unsigned flags;       /* EL_FW_* */
} el_framework_info;

/* The frameworks envlock records, in the order show and report list them; NULL-ended by key. */
extern const el_framework_info el_frameworks[];

/* The framework whose key is key, or NULL. */
const el_framework_info *el_framework_find(const char *key);

#endif
