/*
 * An arena for the cJSON document of a loaded lock.
 *
 * Parsing a lock is most of what diff, drift, show and check do, and with
 * malloc a third of a parse is malloc, and freeing the document as much
 * again: one call per node and per string, tens of thousands a lock. A
 * lock's document is parsed into an arena instead (a few large blocks,
 * bump allocation) and given back in one go.
 *
 * cJSON's hooks are global, so every cJSON allocation of the process goes
 * through el_cjson_alloc / el_cjson_free:
 * - el_cjson_alloc takes from the arena only on the thread that is inside
 *   el_arena_parse, and only for the duration of the parse; everything
 *   else (probes building documents, a consumer editing a loaded one, the
 *   writer's buffers) comes from malloc as before;
 * - el_cjson_free is a no-op for a pointer inside a live arena (a member
 *   deleted from a loaded lock waits for its arena) and free() otherwise;
 *   it looks in the list of live arenas only while one exists.
 * So a loaded document may be edited like any other, and el_arena_delete
 * still walks it with cJSON_Delete, so that whatever an edit added from
 * malloc is freed; the walk over the arena's own nodes costs a compare
 * each (the last block matched is kept per thread), not a free().
 */
#ifndef EL_ARENA_H
#define EL_ARENA_H

#include <stddef.h>

#include <cJSON.h>

typedef struct el_arena el_arena;

/* Install the hooks (once per process: envlock_ctx_new, context.c, does it). */
void el_cjson_hooks_install(void);

/*
 * Parse text[0..len) (text[len] is read: a NUL) into a new arena.
 * Returns the document and sets *arena_out, or returns NULL (bad JSON;
 * *end where cJSON stopped) with no arena left behind.
 */
cJSON *el_arena_parse(el_arena **arena_out, const char *text, size_t len, const char **end);

/*
 * An empty arena whose first block is a big one (util/bigblock.h), with
 * room at its start for the text it is to parse: the lock loader reads
 * the file there, so text and nodes share one block (one huge page for
 * a lock of a few hundred KB, not two).
 */
el_arena *el_arena_new_room(char **room, size_t *cap);

/*
 * Parse text[0..len) (text[len] a NUL; in the room or anywhere) into a.
 * NULL for bad JSON (*end where cJSON stopped): the caller deletes a.
 */
cJSON *el_arena_parse_in(el_arena *a, const char *text, size_t len, const char **end);

/* Free doc (from el_arena_parse with this arena) and the arena; NULLs are fine. */
void el_arena_delete(el_arena *arena, cJSON *doc);

void *el_cjson_alloc(size_t size);
void el_cjson_free(void *p);

#endif
