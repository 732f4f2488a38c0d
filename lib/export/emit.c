/* What every export format shares: which lock text may be written as it is, and warnings. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

bool el_export_word(const char *s)
{
	if (!s || !*s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return false;
	return true;
}

bool el_export_line(const char *s)
{
	if (!s || !*s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

void el_export_warn(el_export *e, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!e->opts || !e->opts->on_warning)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->opts->on_warning(msg, e->opts->warning_data);
}
