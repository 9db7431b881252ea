/* tprof's commands: files they have begun and not finished (a temporary
 * name not yet renamed to the output, merge's JSON on its way to
 * Perfetto), removed when a fatal signal (INT, TERM, HUP, XFSZ) ends the
 * command, so that a killed merge or convert leaves nothing behind. */
#ifndef TP_CLI_SIGCLEAN_H
#define TP_CLI_SIGCLEAN_H

/* A slot holding path, or -1 (no path, too long, no slot free: the file
 * is then left if a signal comes). The first call installs the handlers,
 * keeping a signal the shell ignores ignored. */
int tp_sigclean_add(const char *path);
/* The file is finished or gone: a signal leaves it. slot may be -1. */
void tp_sigclean_drop(int slot);

#endif
