/*
 * the files of knowledge/ (*.json), compiled in so a lone envlock binary carries what it
 * knows: the assembler includes each file's bytes as they are, with a NUL
 * after them. (The Makefile rebuilds this object when a file changes.)
 */
#include "internal.h"

#define EL_KB_INCBIN(sym, path)                  \
	__asm__(".section .rodata\n"             \
		".type " #sym ", @object\n"      \
		#sym ":\n"                       \
		".incbin \"" path "\"\n"         \
		".byte 0\n"                      \
		".previous\n")

EL_KB_INCBIN(el_kb_nvidia_text, "knowledge/nvidia.json");
EL_KB_INCBIN(el_kb_pytorch_text, "knowledge/pytorch.json");
EL_KB_INCBIN(el_kb_openmmlab_text, "knowledge/openmmlab.json");

extern const char el_kb_nvidia_text[], el_kb_pytorch_text[], el_kb_openmmlab_text[];

const el_kb_file el_kb_files[] = {
	{ "knowledge/nvidia.json", el_kb_nvidia_text },
	{ "knowledge/pytorch.json", el_kb_pytorch_text },
	{ "knowledge/openmmlab.json", el_kb_openmmlab_text },
	{ NULL, NULL }
};
