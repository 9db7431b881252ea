/* What the CPU was doing while the GPU idled (gpu_gaps.c). */
#ifndef TP_CLI_GPU_GAPS_H
#define TP_CLI_GPU_GAPS_H

#include <stdint.h>

#include "gpu_time.h"
#include "trace/json.h"

/* CPU events named per gap, innermost last. */
#define TP_GAP_CPU 4

struct tp_ggaps;

struct tp_ggaps *tp_ggaps_new(void);
void tp_ggaps_free(struct tp_ggaps *g);
/* A CPU-side span (any X span or range that is not GPU activity). -1
 * when out of memory. */
int tp_ggaps_cpu(struct tp_ggaps *g, const char *name, int64_t ts,
		 int64_t dur);
/* ", \"idle_gaps\": [...]" for the gaps of st: each with the CPU events
 * that enclosed its middle, outermost first (at most TP_GAP_CPU, the
 * innermost ones). */
void tp_ggaps_write_json(struct tp_ggaps *g, const struct tp_gpu_stats *st,
			 struct tp_buf *b);

#endif
