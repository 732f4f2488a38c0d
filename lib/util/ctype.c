/* A UTF-8 character type for the calling thread (see ctype.h for why). */
#include <pthread.h>

#include "ctype.h"

static locale_t utf8;
static pthread_once_t made = PTHREAD_ONCE_INIT;

static void make(void)
{
	static const char *const names[] = { "C.UTF-8", "C.utf8", "en_US.UTF-8", NULL };

	for (const char *const *n = names; *n && !utf8; n++)
		utf8 = newlocale(LC_CTYPE_MASK, *n, (locale_t)0); /* kept for the process's life */
}

locale_t el_utf8_ctype_enter(void)
{
	pthread_once(&made, make);
	return utf8 ? uselocale(utf8) : (locale_t)0;
}

void el_utf8_ctype_leave(locale_t previous)
{
	if (previous)
		uselocale(previous);
}
