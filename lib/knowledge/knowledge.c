/* The built-in knowledge's tables: each parsed when first asked for, kept for the life of the process. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lock/arena.h"
#include "lock/model.h"
#include "util/hash.h"
#include "util/xalloc.h"

static el_kb the_kb;
static pthread_once_t counted = PTHREAD_ONCE_INIT;
static pthread_mutex_t parse_mu = PTHREAD_MUTEX_INITIALIZER;
static el_arena *arena; /* the parsed tables' nodes and strings, under parse_mu */

void el_kb_fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("envlock: fatal: built-in knowledge: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

const char *el_kb_row_source(const cJSON *table, const cJSON *row)
{
	const char *s = el_jget_str(row, "source");

	return s ? s : el_jget_str(table, "source");
}

/* Count the tables (el_kb_files) and refuse a name given twice. */
static void count_tables(void)
{
	for (const el_kb_file *f = el_kb_files; f->name; f++) {
		for (const el_kb_file *g = el_kb_files; g < f; g++)
			if (strcmp(f->name, g->name) == 0)
				el_kb_fatal("%s: table '%s' is also %s", f->path, f->name, g->path);
		the_kb.ntables++;
	}
	the_kb.tables = el_xcalloc(the_kb.ntables + 1, sizeof(*the_kb.tables));
}

/* Parse table i (once): its name, rows, and a source on the table or on every row. */
static const cJSON *parse_table(size_t i)
{
	const el_kb_file *f = &el_kb_files[i];
	cJSON *doc;
	const cJSON *row;
	const char *name;

	pthread_mutex_lock(&parse_mu);
	if (!the_kb.tables[i]) {
		/*
		 * every table in one arena (lock/arena.h), which lives as long as
		 * the process: a third of a parse is malloc otherwise, and a table
		 * is never freed
		 */
		if (!(doc = arena ? el_arena_parse_in(arena, f->text, strlen(f->text), NULL)
				  : el_arena_parse(&arena, f->text, strlen(f->text), NULL)))
			el_kb_fatal("%s: not valid JSON", f->path);
		if (el_jget_int(doc, "envlock_knowledge", 0) != 1)
			el_kb_fatal("%s: not an envlock knowledge table (\"envlock_knowledge\": 1)", f->path);
		if (!(name = el_jget_str(doc, "table")) || strcmp(name, f->name) != 0)
			el_kb_fatal("%s: \"table\" is not \"%s\", the file's name", f->path, f->name);
		if (!cJSON_IsArray(el_jget(doc, "rows")))
			el_kb_fatal("%s: no \"rows\"", f->path);
		cJSON_ArrayForEach(row, el_jget(doc, "rows"))
			if (!el_kb_row_source(doc, row))
				el_kb_fatal("%s: a row has no source", f->path);
		the_kb.tables[i] = doc; /* kept, reachable, for the life of the process */
	}
	pthread_mutex_unlock(&parse_mu);
	return the_kb.tables[i];
}

/* The index of table name, or ntables. */
static size_t table_index(const char *name)
{
	size_t i = 0;

	pthread_once(&counted, count_tables);
	while (name && i < the_kb.ntables && strcmp(el_kb_files[i].name, name) != 0)
		i++;
	return name ? i : the_kb.ntables;
}

const cJSON *el_kb_find_table(const char *name)
{
	size_t i = table_index(name);

	return i < the_kb.ntables ? parse_table(i) : NULL;
}

bool el_kb_has_table(const char *name)
{
	return table_index(name) < the_kb.ntables;
}

void el_kb_digest_into(el_sha256 *h)
{
	/* the files' digest from the build: hashing 330 KB on every save cost more than hashing the lock */
	el_sha256_update(h, el_kb_files_digest, strlen(el_kb_files_digest));
}

const el_kb *el_kb_builtin(void)
{
	pthread_once(&counted, count_tables);
	return &the_kb;
}
