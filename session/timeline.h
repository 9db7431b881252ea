/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
/* The trace's timeline: how the hooks' ticks map to trace time (ns after
 * baseTimeNanoseconds). The writer fixes the mapping once the tick rate
 * is measured; every formatter (CPU events, steps, NVTX, GPU records)
 * reads it from here, so there is one mapping in the process. */
#ifndef TP_TIMELINE_H
#define TP_TIMELINE_H

#include <stdint.h>

#include "record/clock.h"
#include "session.h"

struct tp_timeline {
	struct tp_clock_map map;
	int ready;
};

extern struct tp_timeline tp_tl;

/* Trace time of a tick; valid once tp_tl.ready. */
static inline int64_t tp_trace_ns(uint64_t ticks)
{
	return (int64_t)(tp_clock_to_unix(&tp_tl.map, ticks) -
			 (uint64_t)tp_sess.base_ns);
}

#endif
