/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* Where the time went: one process's events folded into per-name
 * statistics, written as <name>-rank<R>.summary.json and .summary.md.
 *
 * The same aggregator runs in two places: in the preloaded library (the
 * writer feeds it every event it writes, and the hooks' ring-full path
 * feeds it what the trace had to drop), and in `tprof report`, which feeds
 * it the events of a trace file (tprof's or torch.profiler's). So a
 * summary computed from a trace matches the one written at exit.
 *
 * Callers pass what a trace event holds: category, name, track, times in
 * nanoseconds after baseTimeNanoseconds, and the args: typed (encode/tev.h,
 * the writer's API events) or the args object's JSON text (a trace file);
 * the aggregator reads the few args it needs (GEMM shapes and FLOPs, NCCL
 * sizes, range memory, correlation) from either.
 *
 * The schema of summary.json is in docs/reference/summary-format.md.
 */
#ifndef TP_SUMMARY_H
#define TP_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "encode/json.h"
#include "encode/tev.h"

/* 2: the "gpu" member in summaries written at exit too, with its
 * "window" and "approx" (docs/reference/summary-format.md); the "host"
 * member has a version of its own. */
#define TP_SUMMARY_SCHEMA_VERSION 2

struct tp_sum;

/* The categories the summary's analyses tell apart: told once per event
 * (tp_sum_span), not compared again as text by each analysis. */
enum tp_sum_cat {
	TP_SUM_CAT_OTHER,
	TP_SUM_CAT_KERNEL,
	TP_SUM_CAT_MEMCPY,		/* gpu_memcpy */
	TP_SUM_CAT_MEMSET,		/* gpu_memset */
	TP_SUM_CAT_RUNTIME,		/* cuda_runtime */
	TP_SUM_CAT_DRIVER,		/* cuda_driver */
	TP_SUM_CAT_USER_ANNOTATION,
	TP_SUM_CAT_GPU_USER_ANNOTATION,
	TP_SUM_CAT_CUBLAS,
	TP_SUM_CAT_NCCL,
	TP_SUM_CAT_OSRT,		/* a blocking OS call */
};

enum tp_sum_cat tp_sum_cat_of(const char *cat);

/* A CUDA call that may start GPU work: the GPU analyses' launches. */
static inline int tp_sum_is_call(uint64_t corr, enum tp_sum_cat k)
{
	return corr && (k == TP_SUM_CAT_RUNTIME || k == TP_SUM_CAT_DRIVER);
}

/* A complete event: an X event, or a b/e pair the caller matched. */
struct tp_sum_span {
	const char *cat;	/* NUL-terminated; "" when absent */
	const char *name;
	int64_t pid;
	int64_t tid;
	int64_t ts_ns;		/* after the trace's base time */
	int64_t dur_ns;
	uint64_t corr;		/* args.correlation, 0 when none */
	const char *args;	/* the args object's JSON text, or NULL */
	size_t args_len;
	/* Or the args typed (the writer's own events): read as they are,
	 * never printed and parsed back. */
	const struct tp_targ *targs;
	uint32_t ntargs;
	/* cat and name live as long as the process (tprof's API tables):
	 * their row is found by address, not by hashing the text. */
	int static_names;
};

/* Identity of the process the summary is about. Strings are copied. */
struct tp_sum_info {
	const char *name;	/* TPROF_NAME or the trace's name */
	const char *host;
	const char *trace;	/* the trace file's base name */
	const char *source;	/* "tprof" (written at exit), "trace" */
	int64_t pid;
	int rank;		/* -1: unknown */
	int world_size;		/* 0: unknown */
	int64_t base_ns;	/* baseTimeNanoseconds */
};

struct tp_sum *tp_sum_new(void);
/* The GPU analyses' reorder window (gpu.h): the library's bound by
 * default; 0 holds every event until the end, so every figure is exact
 * (tprof report over a trace). Call before the first event. */
int tp_sum_gpu_window(struct tp_sum *s, size_t window);
/* Exact as window 0, with the GPU analyses' memory bounded by budget
 * bytes (external sorts spilling to a temporary file; gpu.h). */
int tp_sum_gpu_exact(struct tp_sum *s, size_t budget);
/* NULL, or why the exact mode failed (its "gpu" member is null). */
const char *tp_sum_gpu_error(const struct tp_sum *s);
void tp_sum_free(struct tp_sum *s);
void tp_sum_set_info(struct tp_sum *s, const struct tp_sum_info *info);

/* Every event of the trace, so events/wall time cover metadata too. */
void tp_sum_count_events(struct tp_sum *s, uint64_t n);
/* An X event (or a matched b/e pair). */
void tp_sum_span(struct tp_sum *s, const struct tp_sum_span *e);
/* n events of dur_ns each the trace dropped (ring full): counted in
 * their row only. */
void tp_sum_dropped(struct tp_sum *s, const char *cat, const char *name,
		    int64_t dur_ns, uint64_t n);
/* Dropped records with no name to count them under (CUPTI's). */
void tp_sum_dropped_other(struct tp_sum *s, uint64_t n);
/* A CPU sample (TPROF_TRACE=cpu): its thread, time, the CPU time it
 * stands for, and its stack as the trace holds it (a JSON array of
 * frames, innermost first). */
struct tp_sum_sample {
	int64_t pid, tid;
	int64_t ts_ns;
	int64_t weight_ns;
	const char *stack;
	size_t stack_len;
};

void tp_sum_sample(struct tp_sum *s, const struct tp_sum_sample *x);
/* How the samples were taken (the trace's tprof.sampling), for the
 * "host_activity" member. */
void tp_sum_sampler(struct tp_sum *s, const char *mechanism, unsigned hz);
/* Device memory in use on a device at a time. */
void tp_sum_memory(struct tp_sum *s, int64_t device, int64_t ts_ns,
		   int64_t bytes);
/* A device's memory (CUPTI's device record, a trace's
 * deviceProperties): memory[].capacity_bytes, for the report's "memory
 * near capacity". */
void tp_sum_device_memory(struct tp_sum *s, int64_t device, int64_t bytes);
/* A step's number, start and duration (ProfilerStep#N spans are taken
 * by tp_sum_span itself; this is for sources that know steps apart). */
void tp_sum_step(struct tp_sum *s, int64_t step, int64_t ts_ns,
		 int64_t dur_ns);

/* The GPU health counters' aggregate (health.h), fed through its
 * tp_health_* calls. */
struct tp_health **tp_sum_health(struct tp_sum *s);

/* Extra top-level members of summary.json, each as ",\n\"key\": value";
 * called while writing. */
typedef void (*tp_sum_extra_fn)(struct tp_buf *b, void *ctx);

void tp_sum_write_json(struct tp_sum *s, struct tp_buf *b,
		       tp_sum_extra_fn extra, void *ctx);
void tp_sum_write_md(struct tp_sum *s, struct tp_buf *b);
/* Text in a markdown table cell: '|' would end the cell, '<' open an
 * HTML tag (py::<module>, Layer<float>), a control character break the
 * row. tp_md_cell stops at max bytes (0: no limit) with "...". */
void tp_md_char(struct tp_buf *b, char c);
void tp_md_cell(struct tp_buf *b, const char *s, size_t max);
/* The short table printed on stderr at exit: top GPU kernels, top
 * CPU-side calls, annotated ranges; each line starts "tprof: ". */
void tp_sum_write_brief(struct tp_sum *s, struct tp_buf *b, unsigned top);

#endif
