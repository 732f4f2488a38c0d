/*
 * Paths the user typed (--checkpoint, --config, --repo): resolved on this
 * machine, relative to the current directory, and shown back the way
 * they would write them.
 */
#ifndef EL_USERPATH_H
#define EL_USERPATH_H

/*
 * How to show the absolute path abs: relative to the current directory
 * when inside it ("." for the directory itself), else abs. malloc'd.
 */
char *el_userpath_display(const char *abs);

#endif
