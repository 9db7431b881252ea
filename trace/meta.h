/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* Metadata events ("ph":"M") of this process: the names Perfetto and
 * chrome://tracing show for its process and threads. */
#ifndef TP_META_H
#define TP_META_H

#include <sys/types.h>

#include "json.h"

/* {"ph":"M","name":what,"pid":<this process>,"tid":tid,"args":{"name":..}} */
void tp_meta_put(struct tp_buf *b, const char *what, pid_t tid,
		 const char *name);
void tp_meta_thread_name(struct tp_buf *b, pid_t tid, const char *name);

#endif
