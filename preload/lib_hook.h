/* The shape of a hook on a library entry point (cuBLAS, cuDNN, NCCL):
 *
 *   TP_LIB_HOOK(cublasStatus_t, cublasSgemm_v2, tp_libs_cublas,
 *               TP_SRC_CUBLAS, TP_CUBLAS_SGEMM, 1,
 *               CUBLAS_STATUS_NOT_INITIALIZED,
 *               (cublasHandle_t h, ...), (h, ...), {
 *           struct gemm *g = tp_rec_ext(&r, 1);
 *           ...
 *   })
 *
 * defines the entry point with the real signature: resolve the real one
 * (once; `fail` is returned when it cannot be found), call it, and when
 * the source is recorded write one record with n_ext extension slots,
 * filled by the block (which sees the parameters, `ret`, `e` and `r`).
 *
 * Unlike a CUDA runtime hook it does not claim the CUDA calls made inside
 * it: those (seen by our runtime hooks or by CUPTI) are recorded as their
 * own events, nested in this one.
 */
#ifndef TP_LIB_HOOK_H
#define TP_LIB_HOOK_H

#include <stdint.h>

#include "trace/api.h"
#include "trace/config.h"
#include "stacks/stacks.h"
#include "trace/thread.h"
#include "resolve.h"

#define TP_LIB_HOOK(rtype, name, libs, src, api, n_ext, fail, params,   \
		    args, ...)                                           \
	static rtype (*real_##name) params;                              \
	__attribute__((visibility("default"))) rtype name params         \
	{                                                                \
		struct tp_event *e;                                      \
		struct tp_rec r;                                         \
		rtype ret;                                               \
                                                                         \
		if (!TP_REAL_OK(name, libs))                             \
			return fail;                                     \
		if (!tp_rec_begin(&r, src))                              \
			return real_##name args;                         \
		ret = real_##name args;                                  \
		e = tp_rec_end_ext(&r, api, (int32_t)ret, n_ext);        \
		if (e) {                                                 \
			__VA_ARGS__                                      \
			tp_stack_maybe(e, TP_KIND_OTHER);                \
			tp_rec_commit(&r);                               \
		}                                                        \
		return ret;                                              \
	}

/* Registration of each library's API table, at load. */
void tp_cublas_register(void);
void tp_cudnn_register(void);
void tp_nccl_register(void);
void tp_nvtx_register(void);

#endif
