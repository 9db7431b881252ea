/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* Symbols of JIT code from /tmp/perf-<pid>.map, the file the Python
 * interpreter (3.12 and later, with -X perf or PYTHONPERFSUPPORT=1) and
 * other JITs write for perf: one "START SIZE name" line per function. */
#ifndef TP_PERFMAP_H
#define TP_PERFMAP_H

#include <stdint.h>

/* The name of the function holding ip, or NULL. Writer thread only; the
 * string is valid until the next call. */
const char *tp_perfmap_lookup(uintptr_t ip);

/* PYTHONPERFSUPPORT=1 (tprof-run --python-stacks) in a Python process that
 * wrote no map: one warning, since its stacks show no Python function. */
void tp_perfmap_warn_missing(void);

#endif
