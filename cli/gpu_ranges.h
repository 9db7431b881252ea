/* GPU time per annotated range (gpu_ranges.c). */
#ifndef TP_CLI_GPU_RANGES_H
#define TP_CLI_GPU_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_time.h"
#include "trace/json.h"

struct tp_granges;

struct tp_granges *tp_granges_new(void);
void tp_granges_free(struct tp_granges *g);
/* One range (record_function, NVTX, tprof_range: cat user_annotation)
 * on thread (pid, tid). -1 when out of memory. */
int tp_granges_add(struct tp_granges *g, const char *name, int64_t pid,
		   int64_t tid, int64_t ts, int64_t dur);
/* Each range's GPU time: that of the work launched by the calls on its
 * thread within it. calls is reordered. -1 when out of memory. */
int tp_granges_finish(struct tp_granges *g, struct tp_gpu_call *calls,
		      size_t ncalls);
/* ", \"ranges\": [{\"name\", \"calls\", \"cpu_ns\", \"gpu_ns\"}, ...]",
 * by GPU time, largest first. */
void tp_granges_write_json(const struct tp_granges *g, struct tp_buf *b);

#endif
