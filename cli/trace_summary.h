/* A trace file (tprof's, or torch.profiler's Kineto JSON; plain or
 * gzipped) folded into summary.json text by the aggregator the preload
 * uses at exit (trace/summary.h), so a report over a trace and over the
 * summary written with it agree.
 *
 * The trace is streamed: memory is the aggregator's tables plus one
 * event at a time (and the NVTX start/end ranges still open), and the
 * GPU analyses' reorder window (summary/gpu.h), unbounded here so every
 * figure is exact: about 48 bytes per event until the end.
 */
#ifndef TP_CLI_TRACE_SUMMARY_H
#define TP_CLI_TRACE_SUMMARY_H

#include <stddef.h>

#include "trace/json.h"

/* Appends the summary's JSON to out. Returns 0, or -1 with a one-line
 * reason in err (gzip or JSON errors, not a trace). */
int tp_trace_summary(const char *path, struct tp_buf *out, char *err,
		     size_t errlen);

/* Microseconds written as a JSON number (any decimals, an exponent) to
 * integer nanoseconds, exactly, rounding half away from zero beyond the
 * nanosecond. Returns 0, or -1 when out of range. */
int tp_trace_us_to_ns(const char *lit, int64_t *ns);

#endif
