/* Parsing the built-in knowledge once: every file's tables, then each part's typed rows. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lock/model.h"
#include "util/hash.h"
#include "util/vec.h"
#include "util/xalloc.h"

static el_kb the_kb;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Each table of a file: a name, rows, and a source on the table or on every row. */
static void add_tables(el_kb *kb, const char *file, const cJSON *doc)
{
	const cJSON *tables = el_jget(doc, "tables"), *t, *row;
	size_t cap = kb->ntables;

	if (el_jget_int(doc, "envlock_knowledge", 0) != 1 || !cJSON_IsObject(tables))
		el_kb_fatal("%s: not a knowledge file (no \"envlock_knowledge\": 1 and \"tables\")", file);
	cJSON_ArrayForEach(t, tables) {
		if (el_kb_table(kb, t->string))
			el_kb_fatal("%s: table '%s' is defined twice", file, t->string);
		if (!cJSON_IsArray(el_jget(t, "rows")))
			el_kb_fatal("%s: table '%s' has no \"rows\"", file, t->string);
		cJSON_ArrayForEach(row, el_jget(t, "rows"))
			if (!el_kb_row_source(t, row))
				el_kb_fatal("%s: a row of '%s' has no source", file, t->string);
		EL_GROW(kb->tables, kb->ntables + 1, cap);
		kb->tables[kb->ntables].name = t->string;
		kb->tables[kb->ntables++].table = t;
	}
}

static void load(void)
{
	size_t i = 0;

	for (const el_kb_file *f = el_kb_files; f->name; f++, i++) {
		/* not in an arena: one that lives forever would slow every cJSON free of the process */
		cJSON *doc = cJSON_ParseWithLength(f->text, strlen(f->text));

		if (!doc)
			el_kb_fatal("%s: not valid JSON", f->name);
		if (i >= sizeof(the_kb.docs) / sizeof(the_kb.docs[0]))
			el_kb_fatal("more files than %zu", sizeof(the_kb.docs) / sizeof(the_kb.docs[0]));
		the_kb.docs[i] = doc;
		add_tables(&the_kb, f->name, doc);
	}
	el_kb_build_openmmlab(&the_kb);
	el_kb_build_pytorch(&the_kb);
	el_kb_build_nvidia(&the_kb);
}

void el_kb_digest_into(el_sha256 *h)
{
	for (const el_kb_file *f = el_kb_files; f->name; f++)
		el_sha256_update(h, f->text, strlen(f->text));
}

const el_kb *el_kb_builtin(void)
{
	pthread_once(&once, load);
	return &the_kb;
}
