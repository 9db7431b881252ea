/* hooks/: the hooked entry points (cudart, cuBLAS, cuDNN, NCCL, NVTX),
 * each library in its own folder, and how the real functions are found; on
 * every library folder below preload/. */
/* The shape of a hook on a library entry point (cuBLAS, cuDNN, NCCL):
 *
 *   TP_LIB_HOOK(cublasStatus_t, cublasSgemm_v2, tp_libs_cublas,
 *               TP_SRC_CUBLAS, TP_CUBLAS_SGEMM, 1,
 *               CUBLAS_STATUS_NOT_INITIALIZED,
 *               (cublasHandle_t h, ...), (h, ...), {
 *           struct gemm *g = tp_rec_ext(&tp_call.r, 1);
 *           ...
 *   })
 *
 * defines the entry point with the real signature: resolve the real one
 * (once; `fail` is returned when it cannot be found), call it, and when
 * the source is recorded write one record with n_ext extension slots,
 * filled by the block (which sees the parameters, `ret`, `e` and
 * `tp_call.r`). See hook_shape.h.
 *
 * Unlike a CUDA runtime hook it does not claim the CUDA calls made inside
 * it: those (seen by our runtime hooks or by CUPTI) are recorded as their
 * own events, nested in this one.
 */
#ifndef TP_LIB_HOOK_H
#define TP_LIB_HOOK_H

#include <stdint.h>

#include "hook_shape.h"

#define TP_LIB_HOOK(rtype, name, libs, src, api, n_ext, fail, params,   \
		    args, ...)                                           \
	TP_HOOK_SHAPE(rtype, name, libs, fail, params, args,             \
		      struct tp_call, TP_ENTER_SRC(src), TP_NOTHING,     \
		      tp_rec_end_ext(&tp_call.r, (api), (int32_t)ret,    \
				     (n_ext)),                           \
		      TP_KIND_OTHER, TP_NOTHING, __VA_ARGS__)

void tp_cublas_register(void);
void tp_cudnn_register(void);
void tp_nccl_register(void);
void tp_nvtx_register(void);

#endif
