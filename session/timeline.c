/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
/* The process's one tick-to-trace-time mapping (see timeline.h). */
#include "timeline.h"

struct tp_timeline tp_tl;
