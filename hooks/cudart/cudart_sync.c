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

TP_HOOK(cudaStreamSynchronize, STREAM_SYNC, (cudaStream_t s), (s),
	e->stream = TP_PTR(s);)
TP_HOOK(cudaStreamSynchronize_ptsz, STREAM_SYNC_PTSZ, (cudaStream_t s), (s),
	e->stream = TP_PTR(s);)
TP_HOOK(cudaDeviceSynchronize, DEVICE_SYNC, (void), (), (void)e;)
TP_HOOK(cudaEventSynchronize, EVENT_SYNC, (cudaEvent_t ev), (ev),
	fill_event(e, ev, 0, 0);)
TP_HOOK(cudaStreamWaitEvent, STREAM_WAIT_EVENT,
	(cudaStream_t s, cudaEvent_t ev, unsigned int f), (s, ev, f),
	fill_event(e, ev, s, f);)
TP_HOOK(cudaStreamWaitEvent_ptsz, STREAM_WAIT_EVENT_PTSZ,
	(cudaStream_t s, cudaEvent_t ev, unsigned int f), (s, ev, f),
	fill_event(e, ev, s, f);)
TP_HOOK(cudaEventRecord, EVENT_RECORD, (cudaEvent_t ev, cudaStream_t s),
	(ev, s), fill_event(e, ev, s, 0);)
TP_HOOK(cudaEventRecord_ptsz, EVENT_RECORD_PTSZ,
	(cudaEvent_t ev, cudaStream_t s), (ev, s), fill_event(e, ev, s, 0);)
