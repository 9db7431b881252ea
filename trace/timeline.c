/* The process's one tick-to-trace-time mapping (see timeline.h). */
#include "timeline.h"

struct tp_timeline tp_tl;
