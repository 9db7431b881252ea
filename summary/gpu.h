/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The GPU analyses of the summary's "gpu" member: GPU time (kernels,
 * copies, sets, busy as the union over streams, span), HTA's temporal
 * breakdown and communication/computation overlap, launch delays and a
 * per-step CPU/GPU-bound verdict, GPU time per annotated range, the
 * longest idle gaps with the CPU events around them, and utilisation over
 * time. The same code runs in the library (fed by the writer at run time)
 * and in `tprof report` (fed by a trace file), through the aggregator.
 *
 * Events go through a reorder window (gpu_feed.c) and are swept in time
 * order (gpu_sweep.c, gpu_join.c), so memory does not grow with the
 * events: with window 0 the window holds everything and every figure is
 * exact; the exact mode (tp_gpu_new_exact, the CLI) gives the same
 * figures through external sorts within a memory budget (gpu_int.h);
 * with a bounded window (the library) the figures are
 * exact as long as no event arrives more than the window late, and the
 * member's "approx" object counts what was not (docs/reference/summary-format.md
 * says by how much each figure can then be off).
 */
#ifndef TP_GPU_H
#define TP_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "summary.h"
#include "encode/json.h"

/* The library's window: events held for reordering (48 bytes each). */
#define TP_GPU_WINDOW (1u << 16)

/* HTA's kernel classes, from the name (hta/utils/utils.py). */
enum { TP_GPU_COMPUTE, TP_GPU_COMM, TP_GPU_MEMORY, TP_GPU_OTHER };

struct tp_gpu;

/* window: events held back for reordering; 0: all of them (exact). */
struct tp_gpu *tp_gpu_new(size_t window);
/* Exact (as window 0) with memory bounded by budget bytes: what window 0
 * holds goes through external sorts, spilling to a temporary file past
 * the budget (the CLI). */
struct tp_gpu *tp_gpu_new_exact(size_t budget);
/* NULL, or why an exact-mode sort failed (the "gpu" member is null). */
const char *tp_gpu_error(const struct tp_gpu *g);
void tp_gpu_free(struct tp_gpu *g);
/* Any span the aggregator takes (not steps): a GPU slice (kernel,
 * gpu_memcpy, gpu_memset), a launch call (cuda_runtime, cuda_driver with
 * a correlation id), an annotated range (user_annotation), or another
 * CPU-side span (the idle gaps' context). */
void tp_gpu_span(struct tp_gpu *g, const struct tp_sum_span *e,
		 enum tp_sum_cat k);
/* The host side's samples and blocking calls go through the sweep, which
 * tells host (host.h) which fell while the GPU was idle. */
struct tp_host;
void tp_gpu_set_host(struct tp_gpu *g, struct tp_host *host);
/* A CPU sample of stack id (host's) standing for weight_ns. */
void tp_gpu_sample(struct tp_gpu *g, int64_t ts_ns, int64_t weight_ns,
		   uint32_t stack);
/* A blocking call of host's key, named name (the gaps' context). */
void tp_gpu_osrt(struct tp_gpu *g, const struct tp_sum_span *e, uint32_t key);
/* The GPU's idle time in its span (after tp_gpu_write_json or the end of
 * the sweep); -1 without GPU activity. */
int64_t tp_gpu_idle_ns(const struct tp_gpu *g);
/* A step's window (for the per-step verdict); name is its span's. */
void tp_gpu_step(struct tp_gpu *g, const char *name, int64_t ts_ns,
		 int64_t dur_ns);
/* Whether there was any GPU activity (else no "gpu" member). */
int tp_gpu_any(const struct tp_gpu *g);
/* Sweeps what the window still holds and writes ",\n\"gpu\": {...}". */
void tp_gpu_write_json(struct tp_gpu *g, struct tp_buf *b);
/* The class HTA gives a kernel of this name. */
int tp_gpu_class(const char *name);

#endif
