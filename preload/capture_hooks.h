/* preload/: the library's life in the process (constructor, signals, fork,
 * exec), the program's capture gates and tprof's C API; the top layer. */
#ifndef TP_CAPTURE_HOOKS_H
#define TP_CAPTURE_HOOKS_H

/* At load: the first phase, the TPROF_SIGNAL handler, TPROF_NSYS. */
void tp_capture_setup(void);
/* NVTX reports to a tool other than tprof (nsys): nvtx_inject.c */
int tp_nvtx_other_tool(void);

#endif
