/* output/: the background writer: drains the rings into the trace file,
 * with its metadata and trailer; on every folder above. */
/* The hang dump's parts shared by the watchdog (hang.c) and the dump's
 * JSON (hang_dump.c). */
#ifndef TP_HANG_INT_H
#define TP_HANG_INT_H

#include <stdint.h>

#include "session/timeline.h"

struct tp_buf;

/* ns a call entered at t0 has been running by now. */
static inline int64_t tp_hang_running_ns(uint64_t t0, uint64_t now)
{
	return now > t0 ? tp_trace_ns(now) - tp_trace_ns(t0) : 0;
}

/* The dump (schema tprof.hang) into b; reason: why it is written, alive:
 * whether the process goes on after it. */
void tp_hang_put_dump(struct tp_buf *b, const char *reason, int alive,
		      const char *trace);

#endif
