/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
/* Crash signals and _exit: see crash.c. */
#ifndef TP_PRELOAD_CRASH_H
#define TP_PRELOAD_CRASH_H

/* Installs tprof's handlers for the crash signals (from the constructor,
 * once the session is set up). */
void tp_crash_install(void);

#endif
