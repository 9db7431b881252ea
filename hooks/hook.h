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
