/* hooks/cudart/: the cudart hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Synchronisation, events, profiler range calls. */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "hooks/hook.h"

#include "cudart_variants.h"

static inline void fill_event(struct tp_event *e, cudaEvent_t ev,
			      cudaStream_t s, unsigned int flags)
{
	e->a.ev.handle = TP_PTR(ev);
	e->a.ev.flags = flags;
	e->stream = TP_PTR(s);
}

/* Under TPROF_HANG a wait says what it waits for, and one that returned
 * marks the NCCL collectives it covered complete (hooks/hook.h). */
TP_SYNC_HOOK(cudaStreamSynchronize, STREAM_SYNC, (cudaStream_t s), (s),
	     TP_SYNC_STREAM, s, NULL, e->stream = TP_PTR(s);)
TP_SYNC_HOOK(cudaStreamSynchronize_ptsz, STREAM_SYNC_PTSZ, (cudaStream_t s),
	     (s), TP_SYNC_STREAM, s, NULL, e->stream = TP_PTR(s);)
TP_SYNC_HOOK(cudaDeviceSynchronize, DEVICE_SYNC, (void), (), TP_SYNC_DEVICE,
	     NULL, NULL, (void)e;)
TP_SYNC_HOOK(cudaEventSynchronize, EVENT_SYNC, (cudaEvent_t ev), (ev),
	     TP_SYNC_EVENT, NULL, ev, fill_event(e, ev, 0, 0);)
TP_HOOK(cudaStreamWaitEvent, STREAM_WAIT_EVENT,
	(cudaStream_t s, cudaEvent_t ev, unsigned int f), (s, ev, f),
	fill_event(e, ev, s, f);)
TP_HOOK(cudaStreamWaitEvent_ptsz, STREAM_WAIT_EVENT_PTSZ,
	(cudaStream_t s, cudaEvent_t ev, unsigned int f), (s, ev, f),
	fill_event(e, ev, s, f);)
/* An event recorded while collectives are outstanding: a later wait on
 * it completes what its stream held before it. */
TP_INLINE void hang_recorded(cudaEvent_t ev, cudaStream_t s, uint64_t t0,
			     cudaError_t ret)
{
	if (__builtin_expect(!__atomic_load_n(&tp_coll_outstanding,
					      __ATOMIC_RELAXED), 1) ||
	    ret != cudaSuccess)
		return;
	tp_collseq_event_recorded(TP_PTR(ev), TP_PTR(s), t0);
}

#define EVENT_RECORD_HOOK(name, id)                                      \
	TP_HOOK_SHAPE(cudaError_t, name, tp_libs_cudart,                 \
		      cudaErrorInitializationError,                      \
		      (cudaEvent_t ev, cudaStream_t s), (ev, s),         \
		      struct tp_call, tp_cudart_enter(&tp_call),         \
		      tp_call.corr = tp_rec_call_end(&tp_call.r),        \
		      tp_cudart_end(&tp_call, TP_CUDART_##id, (int32_t)ret), \
		      tp_cudart_kind(TP_CUDART_##id),                    \
		      hang_recorded(ev, s, tp_call.r.t0, ret),           \
		      fill_event(e, ev, s, 0);)

EVENT_RECORD_HOOK(cudaEventRecord, EVENT_RECORD)
EVENT_RECORD_HOOK(cudaEventRecord_ptsz, EVENT_RECORD_PTSZ)
