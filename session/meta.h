/* session/: the run's session: configuration applied, the timeline
 * (ticks to trace time), metadata, how the run ended; on record/ and below. */
/* Metadata events ("ph":"M") of this process: the names Perfetto and
 * chrome://tracing show for its process and threads. */
#ifndef TP_META_H
#define TP_META_H

#include <sys/types.h>

#include <stdint.h>

#include "encode/json.h"

/* The names, and a sort index, as typed events (tev.h) through
 * tp_tev_put; JSON: {"ph":"M","name":"thread_name","pid":<this process>,
 * "tid":tid,"args":{"name":..}} with its leading ",\n". */
void tp_meta_thread_name(struct tp_buf *b, pid_t tid, const char *name);
void tp_meta_thread_sort(struct tp_buf *b, pid_t tid, int64_t index);
/* The process's: its name first in the trace (no ",\n" before it in
 * JSON), then its sort index. */
void tp_meta_process(struct tp_buf *b, const char *name, int64_t index);

#endif
