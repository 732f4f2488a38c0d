/*
 * The facts of a lock that `envlock show` and `envlock report` both say,
 * derived once from its view: the OS, the GPUs grouped by model, whether
 * the driver, the CUDA toolkits (the default first), cuDNN, gcc, Python,
 * conda and pip were found, and the frameworks with their builds. show
 * prints them as its aligned lines (lib/show/show.c), report as its
 * table's rows and its citation (summary.c), so the two cannot disagree
 * about a fact; each keeps only its own wording.
 *
 * Strings are borrowed from the view (untrusted, not escaped): they live
 * as long as the lock.
 */
#ifndef EL_REPORT_FACTS_H
#define EL_REPORT_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "lock/view.h"

/* A component found with a version, found without one, or not found. */
typedef enum { EL_FACT_ABSENT, EL_FACT_UNKNOWN, EL_FACT_FOUND } el_fact_state;

/* Identical GPU models, in the order each first appears in the lock. */
typedef struct {
	const char *name;               /* "unknown GPU" for a device without one */
	const el_gpu_device *first;     /* the model's first device */
	size_t count;
} el_fact_gpu;

/* A CUDA toolkit with a home, the default one first, then the others in the lock's order. */
typedef struct {
	const el_toolkit *tk;
	const char *version;            /* el_toolkit_version, or NULL */
	bool is_default;
} el_fact_toolkit;

/* Where an install of the Python environment's own comes from ("conda env", ...), or NULL for the system's. */
const char *el_fact_origin(const char *layout);

/* What a framework was built for. */
typedef enum { EL_BUILD_NONE, EL_BUILD_CUDA, EL_BUILD_ROCM, EL_BUILD_CPU } el_fact_build;

/* A framework the lock records as present, with its version, in el_frameworks' order. */
typedef struct {
	const el_framework *fw;
	const char *label;              /* its name: mmcv's distribution ("mmcv-full"), else the key */
	const char *version;
	el_fact_build build;            /* torch: CUDA, ROCm or CPU-only; the others: CUDA when recorded */
	const char *build_version;      /* the CUDA or ROCm version of the build */
	bool mmcv;                      /* this is mmcv, and ops: whether it has its compiled ops */
	bool ops;
	bool ops_known; /* mmcv: whether its ops were read at all (not in an imported list) */
} el_fact_framework;

typedef struct {
	struct {
		bool known;             /* os present */
		const char *name;       /* its pretty name, else its name; NULL when neither */
	} os;
	struct {
		bool found;
		const char *version;
	} glibc;
	el_fact_gpu *gpus;
	size_t ngpus;
	el_fact_state driver;           /* FOUND: gpu.driver.version; UNKNOWN: present, version unknown */
	const char *driver_user_space;  /* the user-space libraries' version (a container's), or NULL */
	el_fact_toolkit *toolkits;
	size_t ntoolkits;
	el_fact_state cudnn;            /* FOUND: cudnn.version; UNKNOWN: libraries without a header */
	const char *gcc;                /* the default gcc's version, or NULL */
	const char **gcc_others;        /* the other gcc versions, in the lock's order */
	size_t ngcc_others;
	bool python, conda, pip;        /* the sections present */
	long long conda_packages;       /* package_count, else the packages listed */
	size_t pip_editable, pip_also_conda;
	el_fact_framework frameworks[EL_FW_COUNT];
	size_t nframeworks;
	/* the cuDNN and CUDA runtime files torch's _C loads (the loads section), path NULL when not recorded */
	struct {
		const char *path, *version;
	} torch_cudnn, torch_cudart;
} el_facts;

/* Derive the facts of view; release them with el_facts_release(). */
void el_facts_build(el_facts *f, const el_view *view);
void el_facts_release(el_facts *f);

#endif
