/* GPU time of one trace (gpu_time.c): what the GPU did and when, from
 * its activity slices, with HTA's definitions. */
#ifndef TP_CLI_GPU_TIME_H
#define TP_CLI_GPU_TIME_H

#include <stdint.h>

#include "trace/json.h"

/* HTA's kernel classes, from the name (hta/utils/utils.py). */
enum { TP_GPU_COMPUTE, TP_GPU_COMM, TP_GPU_MEMORY, TP_GPU_OTHER };

#define TP_GPU_GAPS 5
/* The span is cut in this many equal parts for utilisation over time. */
#define TP_GPU_BUCKETS 100

struct tp_gpu_stats {
	uint64_t n_kernel, n_memcpy, n_memset;
	int64_t kernel_ns, memcpy_ns, memset_ns;	/* sums */
	int64_t start_ns, end_ns;	/* first start, last end */
	int64_t span_ns;	/* end - start: HTA's "kernel_time" */
	int64_t busy_ns;	/* union over streams of every slice */
	int64_t idle_ns;	/* span - busy */
	int64_t compute_ns;	/* union of computation kernels */
	int64_t comm_ns;	/* union of communication kernels */
	int64_t memory_ns;	/* union of memcpy/memset/dma */
	int64_t non_compute_ns;	/* span - compute - idle, as HTA */
	int64_t overlap_ns;	/* communication while computation ran */
	/* launch delay, HTA's get_cuda_kernel_launch_stats: a GPU slice's
	 * start - the end of the runtime call with its correlation id */
	uint64_t n_launch;	/* slices matched to their call */
	int64_t delay_sum_ns, delay_min_ns, delay_p50_ns, delay_p90_ns,
		delay_max_ns;
	/* the longest GPU-idle intervals within the span, longest first
	 * (ties: earliest first) */
	size_t ngaps;
	struct { int64_t start, end; } gaps[TP_GPU_GAPS];
	/* busy ns in part i of the span: [start + span * i / B,
	 * start + span * (i + 1) / B), B = TP_GPU_BUCKETS */
	int64_t util[TP_GPU_BUCKETS];
	/* steps (ProfilerStep#N) whose window the GPU was busy in for less
	 * than half (it waited for the CPU's launches) and the others */
	uint64_t steps_cpu_bound, steps_gpu_bound;
};

/* A launch call: where it ran and the GPU time of what it launched. */
struct tp_gpu_call {
	uint64_t corr;
	int64_t pid, tid, ts, end;
	int64_t gpu_ns;		/* the slices of its correlation id */
};

struct tp_gpu;

struct tp_gpu *tp_gpu_new(void);
void tp_gpu_free(struct tp_gpu *g);
/* A slice of category cat ("kernel", "gpu_memcpy", "gpu_memset"; any
 * other is not GPU activity and is ignored). -1 when out of memory. */
int tp_gpu_add(struct tp_gpu *g, const char *cat, const char *name,
	       int64_t ts, int64_t dur, uint64_t corr);
/* A CPU-side call of category cat ("cuda_runtime", "cuda_driver"; others
 * are ignored) with correlation id corr, ending at end. */
int tp_gpu_call(struct tp_gpu *g, const char *cat, uint64_t corr,
		int64_t pid, int64_t tid, int64_t ts, int64_t end);
/* A step's CPU-side window, for the per-step verdict. -1 when out of
 * memory. */
int tp_gpu_step(struct tp_gpu *g, int64_t ts, int64_t dur);
/* After tp_gpu_finish: the calls, by correlation id, with gpu_ns. */
struct tp_gpu_call *tp_gpu_calls(struct tp_gpu *g, size_t *n);
/* Sorts and sweeps; 0 when there was no GPU activity at all. */
int tp_gpu_finish(struct tp_gpu *g, struct tp_gpu_stats *st);
/* ",\n\"gpu\": {...": the summary's gpu member (docs/summary-format.md),
 * left open for the caller to add members and close. */
void tp_gpu_write_json(const struct tp_gpu_stats *st, struct tp_buf *b);
/* The class HTA gives a kernel of this name. */
int tp_gpu_class(const char *name);

#endif
