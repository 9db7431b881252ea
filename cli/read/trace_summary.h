/* A trace file (tprof's, or torch.profiler's Kineto JSON; plain or
 * gzipped) folded into summary.json text by the aggregator the preload
 * uses at exit (trace/summary.h), so a report over a trace and over the
 * summary written with it agree.
 *
 * The trace is streamed: memory is the aggregator's tables plus one
 * event at a time (and the NVTX start/end ranges still open), and the
 * GPU analyses in their exact mode (summary/gpu.h): every figure exact,
 * what they hold for the end going through external sorts within a
 * fixed budget (tp_trace_summary_budget), so memory does not grow with
 * the events; past the budget the sorts spill to a temporary file.
 */
#ifndef TP_CLI_TRACE_SUMMARY_H
#define TP_CLI_TRACE_SUMMARY_H

#include <stddef.h>

#include "encode/json.h"

/* Appends the summary's JSON to out. Returns 0, or -1 with a one-line
 * reason in err (gzip or JSON errors, not a trace). */
int tp_trace_summary(const char *path, struct tp_buf *out, char *err,
		     size_t errlen);
/* The GPU analyses' memory budget per trace read (bytes; 0, the
 * default: $TPROF_CLI_MEM_BUDGET's, else TP_XSORT_BUDGET); set before
 * reading, not while traces are read. */
void tp_trace_summary_budget(size_t bytes);

/* Microseconds written as a JSON number (any decimals, an exponent) to
 * integer nanoseconds, exactly, rounding half away from zero beyond the
 * nanosecond. Returns 0, or -1 when out of range. */
int tp_trace_us_to_ns(const char *lit, int64_t *ns);

#endif
