/* hooks/nvtx/: the nvtx hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Between the writer's NVTX files: nvtx_emit.c (push/pop ranges, marks,
 * the extension), nvtx_async.c (start/end ranges) and nvtx_put.c (what
 * both write with). */
#ifndef TP_NVTX_EMIT_H
#define TP_NVTX_EMIT_H

#include <sys/types.h>

#include "encode/tev.h"
#include "record/event.h"
#include "nvtx.h"

struct tp_buf;
struct tp_thread;

/* nvtx_put.c */
const char *tp_nvtx_name_of(const struct tp_event *e);
/* Messages cut at TP_NVTX_MSG_MAX, so far. */
uint64_t tp_nvtx_truncated(void);
struct tp_nvtx_args tp_nvtx_args_of(const struct tp_event *e);
/* The args of the next event put: x's (NULL: none), flag set to 1
 * (NULL: none), the device memory around a range (NULL: none). */
const struct tp_targs *tp_nvtx_put_args(const struct tp_nvtx_args *x,
					const char *flag,
					const struct tp_nvtx_mem *mem);
/* An event on thread tid's track (id != 0: the async track of range
 * id), with the args last put. */
void tp_nvtx_put(struct tp_buf *b, pid_t tid, enum tp_tev_phase ph,
		 const char *name, uint64_t id, int64_t ts, int64_t dur);

/* nvtx_async.c: the emit functions of START and END records, and what
 * is still held when the trace ends. */
unsigned tp_nvtx_async_start(struct tp_buf *b, struct tp_thread *t,
			     const struct tp_event *e);
unsigned tp_nvtx_async_end(struct tp_buf *b, struct tp_thread *t,
			   const struct tp_event *e);
unsigned tp_nvtx_async_trace_end(struct tp_buf *b, int64_t end_ns);
void tp_nvtx_async_put_stats(struct tp_buf *b);
void tp_nvtx_async_after_fork(void);

#endif
