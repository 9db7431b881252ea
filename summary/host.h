/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The host side of the summary (its "host_activity" member): what the threads
 * did, from CPU samples (each a stack and the CPU time it stands for)
 * and blocking OS calls, over the whole run and over the GPU's idle
 * intervals.
 *
 * Stacks come as their trace text (a JSON array of frames, innermost
 * first); each frame is folded to its function ("f (lib)" without the
 * offset, a Python function as it is), and each distinct sequence of
 * functions is kept once, with its CPU time in all and while the GPU
 * was idle. Blocking calls are kept by (call, file): time in all and
 * the part of it that overlapped the GPU's idle intervals.
 *
 * Which samples fell while the GPU was idle is decided by the GPU
 * analyses' sweep (gpu_sweep.c), which sees every record in time order:
 * a sample after the end of the busy interval so far waits (pending)
 * until the next GPU activity starts, which makes the time between an
 * idle gap; a sample still pending when the sweep ends came after the
 * GPU's last activity, outside its span, and is not counted as idle.
 * Memory grows with the distinct stacks and functions, never with the
 * samples.
 */
#ifndef TP_HOST_H
#define TP_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "encode/json.h"

#define TP_HOST_SUMMARY_VERSION 1

struct tp_host;

struct tp_host *tp_host_new(void);
void tp_host_free(struct tp_host *h);

/* A sample's stack (JSON text) as its id, interned; -1 when it cannot
 * be read or memory ran out. The whole run's time is added. */
int64_t tp_host_sample(struct tp_host *h, const char *stack, size_t len,
		       int64_t weight_ns, int64_t tid);
/* A blocking call's (name, file, thread) as its id, its whole-run time
 * added; -1 when out of memory. target may be NULL. */
int64_t tp_host_osrt(struct tp_host *h, const char *name, const char *target,
		     int64_t dur_ns, int64_t tid);
/* A thread made a CUDA call: the blocking calls listed are those of such
 * threads, when there are any (the others wait for work, not the GPU
 * for them). 0 once tid is among them, -1 when it could not be added. */
int tp_host_feeder(struct tp_host *h, int64_t tid);

/* The sweep's side (gpu_sweep.c). */
void tp_host_pending(struct tp_host *h, uint32_t stack, int64_t weight_ns);
void tp_host_osrt_open(struct tp_host *h, uint32_t key, int64_t ts,
		       int64_t end);
/* The GPU was idle from a to b: pending samples, and the part of the
 * open blocking calls within it, count as idle. */
void tp_host_gap(struct tp_host *h, int64_t a, int64_t b);
/* The sweep ended: samples still pending were after the GPU's span. */
void tp_host_end(struct tp_host *h);
/* The GPU is busy until e at least: blocking calls that end before it
 * can overlap no later gap. */
void tp_host_busy_until(struct tp_host *h, int64_t e);

/* What the sampler said (the trace's tprof.sampling): NULL when unknown
 * (a summary computed from a trace without it). */
void tp_host_set_sampler(struct tp_host *h, const char *mechanism,
			 unsigned hz);
int tp_host_any(const struct tp_host *h);
/* ",\n\"host\": {...}" (docs/reference/summary-format.md), with the GPU's
 * idle time (-1: no GPU activity). */
void tp_host_write_json(struct tp_host *h, struct tp_buf *b,
			int64_t gpu_idle_ns);
/* The summary.md section: shares of the GPU's idle time, or without
 * GPU activity of wall_ns. */
void tp_host_write_md(struct tp_host *h, struct tp_buf *b,
		      int64_t gpu_idle_ns, int64_t wall_ns);

#endif
