/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* This process's summary: fed by the writer thread as it writes each
 * event, and by the recording threads' drop tables; written next to the
 * trace when it completes (<name>-rank<R>.summary.json and .md), with
 * the table on stderr TPROF_SUMMARY asks for. */
#ifndef TP_PROC_SUMMARY_H
#define TP_PROC_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "record/clock.h"
#include "encode/tev.h"

struct tp_thread;

/* A complete event the writer wrote (a GPU op, an NVTX range), its args
 * typed as it wrote them. */
void tp_psum_tspan(const char *cat, const char *name, int64_t pid,
		   int64_t tid, int64_t ts_ns, int64_t dur_ns, uint32_t corr,
		   const struct tp_targ *args, uint32_t nargs);
/* The same for a hooked API: cat and name are its table's, static; the
 * args typed, as the writer built them. */
void tp_psum_api_span(const char *cat, const char *name, int64_t pid,
		      int64_t tid, int64_t ts_ns, int64_t dur_ns,
		      uint32_t corr, const struct tp_targ *args,
		      uint32_t nargs);
/* An async range (NVTX start/end): the summary takes it at its end. */
void tp_psum_begin(uint64_t id, const char *name, int64_t tid,
		   int64_t ts_ns, const struct tp_targ *args, uint32_t nargs);
void tp_psum_end(uint64_t id, int64_t ts_ns);
void tp_psum_step(int64_t step, int64_t ts_ns, int64_t dur_ns);
/* A CPU sample: its stack as the trace's JSON array text. */
void tp_psum_sample(int64_t pid, int64_t tid, int64_t ts_ns,
		    int64_t weight_ns, const char *stack, size_t len);
/* How samples were taken (NULL: they were not). */
void tp_psum_sampler(const char *mechanism, unsigned hz);
void tp_psum_memory(int64_t device, int64_t ts_ns, int64_t bytes);
/* A device's memory, from CUPTI's device record. */
void tp_psum_device_memory(int64_t device, int64_t bytes);
/* The GPU health counters (health.h): one counter's sample, the
 * sampler's state, a device's identity and what it could not give. */
void tp_psum_health_sample(int64_t device, const char *event,
			   const char *key, size_t keylen, double v);
void tp_psum_health_state(const char *state, int64_t hz);
void tp_psum_health_device(int64_t device, const char *uuid);
void tp_psum_health_unavailable(int64_t device, const char *metric,
				const char *why);
/* A thread's drop table, once it exited or recording stopped. */
void tp_psum_thread_drops(struct tp_thread *t, const struct tp_clock_map *m);
/* The trace at trace_path is complete: write the summary beside it. */
void tp_psum_finish(const char *trace_path, uint64_t events,
		    uint64_t gpu_dropped);
void tp_psum_after_fork(void);

#endif
