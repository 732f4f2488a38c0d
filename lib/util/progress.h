/*
 * A progress bar on stderr for long work measured in bytes: bytes done /
 * total, rate and ETA, redrawn a few times a second by its own thread,
 * shown only after the work has taken about a second, and only when the
 * caller says stderr is a terminal. el_progress_add is safe from any thread.
 */
#ifndef EL_PROGRESS_H
#define EL_PROGRESS_H

#include <stdint.h>

typedef struct el_progress el_progress;

/* Start; enabled 0 gives a handle that only counts. Never NULL. */
el_progress *el_progress_start(const char *label, uint64_t total, int enabled);
void el_progress_add(uint64_t n, void *progress);
/* Stop the redraw thread, clear the line, free. NULL is fine. */
void el_progress_finish(el_progress *p);

#endif
