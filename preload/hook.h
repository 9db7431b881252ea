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

#include "trace/config.h"
#include "stacks/stacks.h"
#include "trace/thread.h"
#include "cudart_apis.h"
#include "resolve.h"

#define TP_HOOK(name, id, params, args, ...)                             \
	static cudaError_t (*real_##name) params;                        \
	__attribute__((visibility("default"))) cudaError_t name params  \
	{                                                                \
		struct tp_event *e;                                      \
		struct tp_rec r;                                         \
		cudaError_t ret;                                         \
		uint32_t corr;                                           \
                                                                         \
		if (!TP_REAL_OK(name, tp_libs_cudart))                   \
			return cudaErrorInitializationError;             \
		if (!tp_rec_begin(&r, TP_SRC_CUDA))                      \
			return real_##name args;                         \
		tp_rec_call_begin(&r);                                   \
		ret = real_##name args;                                  \
		corr = tp_rec_call_end(&r);                              \
		e = tp_rec_end(&r, TP_CUDART_##id, (int32_t)ret);        \
		if (e) {                                                 \
			e->corr = corr;                                  \
			__VA_ARGS__                                      \
			tp_stack_maybe(e, tp_cudart_kind(TP_CUDART_##id)); \
			tp_rec_commit(&r);                               \
		}                                                        \
		return ret;                                              \
	}

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
