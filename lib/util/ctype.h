/*
 * A UTF-8 character type for the calling thread, for libarchive.
 *
 * envlock never calls setlocale, so it runs in the C locale, whose
 * charset is ASCII: libarchive then cannot write or read back a name
 * outside ASCII (训练日志.log, épоch_12.pth), and the libarchive of
 * Debian 12 and Ubuntu 22.04 (3.6) crashes in its pax writer when given
 * one only as UTF-8 (libarchive issue 2233). While an archive is written
 * (lib/bundle/write.c) or a stream of one is open (stream.c), the
 * thread's LC_CTYPE is a UTF-8 one (uselocale: no other thread, and
 * nothing but character types, changes); Linux names are bytes, and
 * UTF-8 ones are then stored and read back as they are.
 */
#ifndef EL_CTYPE_H
#define EL_CTYPE_H

#include <locale.h>

/*
 * Switch this thread to C.UTF-8 (else en_US.UTF-8) character types;
 * returns what to give el_utf8_ctype_leave. Where neither locale exists
 * nothing changes, and names outside ASCII are refused as before.
 */
locale_t el_utf8_ctype_enter(void);
void el_utf8_ctype_leave(locale_t previous);

#endif
