/* libarchive's error messages, converted once into envlock's style. */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "bundle.h"
#include "util/error.h"

const char *el_archive_reason(struct archive *a)
{
	static _Thread_local char buf[512];
	const size_t n = sizeof(buf);
	const char *msg = archive_error_string(a);
	int e = archive_errno(a);

	/* for a file that cannot be opened, the system's reason says it better than "Failed to open 'x'" */
	if (e > 0 && e != EILSEQ && (!msg || strncmp(msg, "Failed to open", 14) == 0))
		snprintf(buf, n, "%s", el_strerror(e));
	else
		snprintf(buf, n, "%s", msg && *msg ? msg : "cannot be read");
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

const char *el_archive_pathname(struct archive_entry *e)
{
	const char *u = archive_entry_pathname_utf8(e);

	return u ? u : archive_entry_pathname(e);
}

const char *el_archive_symlink(struct archive_entry *e)
{
	const char *u = archive_entry_symlink_utf8(e);

	return u ? u : archive_entry_symlink(e);
}
