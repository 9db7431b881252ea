/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* The process's one tick-to-trace-time mapping (see timeline.h). */
#include "timeline.h"

struct tp_timeline tp_tl;
