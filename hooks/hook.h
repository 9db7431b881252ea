/* hooks/: the hooked entry points (cudart, cuBLAS, cuDNN, NCCL, NVTX),
 * each library in its own folder, and how the real functions are found; on
 * every library folder below preload/. */
/* The shape every CUDA runtime hook shares.
 *
 *   TP_HOOK(cudaFree, TP_CUDART_FREE, (void *p), (p), {
 *           e->a.mem.ptr = (uintptr_t)p;
 *   })
 *
 * defines cudaFree with the real function's signature: resolve the real
 * entry point (once), call it, and when recording is on, write one
 * record filled by the block (which sees the parameters, `ret` and `e`).
 */
#ifndef TP_HOOK_H
#define TP_HOOK_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "hooks/cudart/cudart_apis.h"
#include "record/collseq.h"
#include "hook_shape.h"

/* A runtime call claims the CUDA calls made inside it (its correlation
 * id is the one CUPTI gives the GPU work it launches). */
TP_INLINE int tp_cudart_enter(struct tp_call *k)
{
	if (!tp_rec_begin(&k->r, TP_SRC_CUDA))
		return 0;
	tp_rec_call_begin(&k->r);
	return 1;
}

TP_INLINE struct tp_event *tp_cudart_end(struct tp_call *k, uint16_t api,
					 int32_t ret)
{
	struct tp_event *e = tp_rec_end(&k->r, api, ret);

	if (e)
		e->corr = k->corr;
	return e;
}

#define TP_CUDART_HOOK(name, api, kind, params, args, ...)               \
	TP_HOOK_SHAPE(cudaError_t, name, tp_libs_cudart,                 \
		      cudaErrorInitializationError, params, args,        \
		      struct tp_call, tp_cudart_enter(&tp_call),         \
		      tp_call.corr = tp_rec_call_end(&tp_call.r),        \
		      tp_cudart_end(&tp_call, (api), (int32_t)ret),      \
		      (kind), TP_NOTHING, __VA_ARGS__)

#define TP_HOOK(name, id, params, args, ...)                             \
	TP_CUDART_HOOK(name, TP_CUDART_##id, tp_cudart_kind(TP_CUDART_##id), \
		       params, args, __VA_ARGS__)

/* TPROF_HANG: a wait for the GPU (TP_SYNC_* what, on a stream or an
 * event) says so in its inflight slot: a thread stuck there waits for
 * what that stream holds, NCCL's collectives included. */
TP_INLINE void tp_hang_sync(unsigned what, uint64_t stream, uint64_t event)
{
	struct tp_inflight *s = tp_inflight_free_slot();

	if (!s)
		return;
	tp_inflight_open(s);
	s->kind = TP_INF_SYNC;
	s->a[0] = what;
	s->a[1] = stream;
	s->a[2] = event;
}

/* A wait entered at tick t0 returned: the collectives it covers are
 * complete on the GPU (record/collseq.h). One test when none is
 * outstanding. */
TP_INLINE void tp_hang_synced(unsigned what, uint64_t stream, uint64_t event,
			      uint64_t t0, cudaError_t ret)
{
	if (__builtin_expect(!__atomic_load_n(&tp_coll_outstanding,
					      __ATOMIC_RELAXED), 1) ||
	    ret != cudaSuccess)
		return;
	if (what == TP_SYNC_EVENT)
		tp_collseq_event_synced(event);
	else
		tp_collseq_synced(stream, what == TP_SYNC_DEVICE, t0);
}

/* A sync hook: publishes what it waits for, completes what it covered. */
#define TP_SYNC_HOOK(name, id, params, args, what, stream, event, ...)   \
	TP_HOOK_SHAPE(cudaError_t, name, tp_libs_cudart,                 \
		      cudaErrorInitializationError, params, args,        \
		      struct tp_call,                                    \
		      tp_cudart_enter(&tp_call) &&                       \
		      (tp_hang_sync((what), TP_PTR(stream),              \
				    TP_PTR(event)), 1),                  \
		      tp_call.corr = tp_rec_call_end(&tp_call.r),        \
		      tp_cudart_end(&tp_call, TP_CUDART_##id, (int32_t)ret), \
		      tp_cudart_kind(TP_CUDART_##id),                    \
		      tp_hang_synced((what), TP_PTR(stream), TP_PTR(event), \
				     tp_call.r.t0, ret),                 \
		      __VA_ARGS__)

#define TP_PTR(p) ((uint64_t)(uintptr_t)(p))

/* The TPROF_BACKTRACE kind of each API: a constant once inlined. */
static inline unsigned tp_cudart_kind(unsigned id)
{
	static const unsigned char kinds[] = {
#define X(id, name, fmt, kind) TP_KIND_##kind,
		TP_CUDART_APIS(X)
#undef X
	};

	return kinds[id];
}

#endif
