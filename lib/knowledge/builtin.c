/*
 * The tables of knowledge/ (knowledge/<part>/<table>.json), compiled in so
 * a lone envlock binary carries what it knows: the assembler includes each
 * file's bytes as they are, with a NUL after them. knowledge_tables.h
 * lists every file, one EL_KB_TABLE(part, table, digested) line each,
 * and EL_KB_DIGEST, the SHA-256 of each digested file's path, a NUL and
 * its bytes (all but the tables only fix hints and install commands read);
 * mk/knowledge.mk writes it from the files under knowledge/ and rebuilds
 * this object when one changes.
 */
#include "internal.h"

#define EL_KB_INCBIN(sym, path)                  \
	__asm__(".section .rodata\n"             \
		".type " #sym ", @object\n"      \
		#sym ":\n"                       \
		".incbin \"" path "\"\n"         \
		".byte 0\n"                      \
		".previous\n")

#define EL_KB_PATH(part, table) "knowledge/" #part "/" #table ".json"

#define EL_KB_TABLE(part, table, digested) EL_KB_INCBIN(el_kb_##part##_##table, EL_KB_PATH(part, table));
#include "knowledge_tables.h"
#undef EL_KB_TABLE

#define EL_KB_TABLE(part, table, digested) extern const char el_kb_##part##_##table[];
#include "knowledge_tables.h"
#undef EL_KB_TABLE

const el_kb_file el_kb_files[] = {
#define EL_KB_TABLE(part, table, digested) { #table, EL_KB_PATH(part, table), el_kb_##part##_##table, digested },
#include "knowledge_tables.h"
#undef EL_KB_TABLE
	{ NULL, NULL, NULL, false }
};

const char el_kb_files_digest[] = EL_KB_DIGEST;
