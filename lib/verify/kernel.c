/*
 * lib/verify/mlp.cu and mlp.h, compiled in as text so a lone envlock
 * binary carries its training program: the assembler includes each
 * file's bytes as they are, with a NUL after them (as lib/rules/builtin.c
 * does for the rules; the Makefile rebuilds this object when they change).
 */
#include "verify.h"

__asm__(".section .rodata\n"
	".global el_verify_mlp_cu\n"
	".type el_verify_mlp_cu, @object\n"
	"el_verify_mlp_cu:\n"
	".incbin \"lib/verify/mlp.cu\"\n"
	".byte 0\n"
	".global el_verify_mlp_h\n"
	".type el_verify_mlp_h, @object\n"
	"el_verify_mlp_h:\n"
	".incbin \"lib/verify/mlp.h\"\n"
	".byte 0\n"
	".previous\n");
