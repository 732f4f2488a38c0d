/* Inside lib/knowledge: the parsed knowledge and the typed rows built from it. */
#ifndef EL_KNOWLEDGE_INTERNAL_H
#define EL_KNOWLEDGE_INTERNAL_H

#include "knowledge.h"

/* A knowledge table compiled in (builtin.c): its name, its file and the file's NUL-terminated text. */
typedef struct {
	const char *name;
	const char *path;
	const char *text;
	bool digested; /* in el_kb_files_digest: false for a table only fix hints and install commands read (mk/knowledge.mk) */
} el_kb_file;

/* every table, ended by a NULL name */
extern const el_kb_file el_kb_files[];

/* The SHA-256 (hex) of each digested file's path, a NUL and its bytes, in that order, computed when envlock was built. */
extern const char el_kb_files_digest[];

struct el_kb {
	/* el_kb_files[i] parsed: NULL until first asked for; then kept, reachable, for the life of the process */
	cJSON **tables;
	size_t ntables;

	el_kb_codebase *codebases;
	size_t ncodebases;
	el_kb_guard *guards; /* by package, then version, oldest first */
	size_t nguards;
	el_kb_mmcv *mmcv; /* oldest first */
	size_t nmmcv;

	el_kb_torch_wheel *wheels; /* newest first */
	size_t nwheels;
	el_kb_torch_python *pythons;
	size_t npythons;
	el_kb_torch_arch *archs;
	size_t narchs;
	el_kb_torch_glibc *glibcs;
	size_t nglibcs;
	el_kb_torch_cudnn *cudnns;
	size_t ncudnns;

	el_kb_cuda_driver *drivers;
	size_t ndrivers;
	el_kb_gpu_arch *gpu_archs;
	size_t ngpu_archs;
};

/*
 * What reading a table's rows into typed rows needs: the table (or a
 * fatal line naming it when it is missing), the next row's source.
 */
const cJSON *el_kb_need_table(const el_kb *kb, const char *name);

/* A zeroed array of size-byte elements, one for each row of table name (and one more); *table the table. */
void *el_kb_rows(const el_kb *kb, const char *name, size_t size, const cJSON **table);

/* A string member of row that must be there; a fatal line naming the table when it is not. */
const char *el_kb_need_str(const cJSON *row, const char *key, const char *table);

/* A list member ([] when absent). */
el_kb_list el_kb_strings(const cJSON *row, const char *key, const char *table);

/* A fatal line: "envlock: fatal: built-in knowledge: <why>", exit 2. */
_Noreturn void el_kb_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * kb with the typed rows build() reads built: the first reader of a
 * table's typed rows builds them, once (thread-safe), so a check that
 * asks for a GPU's architecture does not build the wheel lists.
 */
const el_kb *el_kb_ready(const el_kb *kb, bool *built, void (*build)(el_kb *));

/* Is version v in the release r ("1.10.1" in "1.10", "1.10.x" or "1.10.*")? */
bool el_kb_in_release(const char *v, const char *r);

#endif
