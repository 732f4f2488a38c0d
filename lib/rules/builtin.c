/*
 * rules/envlock.rules.json, compiled in so a lone envlock binary carries
 * its rules: the assembler includes the file's bytes as they are, with a
 * NUL after them. (The Makefile rebuilds this object when the file changes.)
 */
#include "rules.h"

__asm__(".section .rodata\n"
	".global el_rules_builtin\n"
	".type el_rules_builtin, @object\n"
	"el_rules_builtin:\n"
	".incbin \"rules/envlock.rules.json\"\n"
	".byte 0\n"
	".previous\n");
