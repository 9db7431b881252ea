/* hooks/cublas/: the cublas hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Every cuBLAS / cuBLASLt GEMM entry point tprof records:
 * X(id, exported symbol (the name shown)).
 *
 * Only the v2 API (cublas_api.h, a handle first) is hooked. libcublas also
 * exports the legacy handle-less cublasSgemm/Dgemm/Cgemm/Zgemm (cublas.h):
 * those keep their own signature and are not hooked. Half precision has
 * no _v2 suffix: cublasHgemm is already the handle form.
 */
#ifndef TP_CUBLAS_APIS_H
#define TP_CUBLAS_APIS_H

#include <stdint.h>

#include <cublas_api.h>

#include "record/event.h"
#include "hooks/hook_shape.h"

#define TP_CUBLAS_APIS(X)                                                \
	X(SGEMM, "cublasSgemm_v2")                                       \
	X(SGEMM_64, "cublasSgemm_v2_64")                                 \
	X(DGEMM, "cublasDgemm_v2")                                       \
	X(DGEMM_64, "cublasDgemm_v2_64")                                 \
	X(HGEMM, "cublasHgemm")                                          \
	X(HGEMM_64, "cublasHgemm_64")                                    \
	X(CGEMM, "cublasCgemm_v2")                                       \
	X(CGEMM_64, "cublasCgemm_v2_64")                                 \
	X(ZGEMM, "cublasZgemm_v2")                                       \
	X(ZGEMM_64, "cublasZgemm_v2_64")                                 \
	X(SGEMM_SB, "cublasSgemmStridedBatched")                         \
	X(SGEMM_SB_64, "cublasSgemmStridedBatched_64")                   \
	X(DGEMM_SB, "cublasDgemmStridedBatched")                         \
	X(DGEMM_SB_64, "cublasDgemmStridedBatched_64")                   \
	X(HGEMM_SB, "cublasHgemmStridedBatched")                         \
	X(HGEMM_SB_64, "cublasHgemmStridedBatched_64")                   \
	X(CGEMM_SB, "cublasCgemmStridedBatched")                         \
	X(CGEMM_SB_64, "cublasCgemmStridedBatched_64")                   \
	X(ZGEMM_SB, "cublasZgemmStridedBatched")                         \
	X(ZGEMM_SB_64, "cublasZgemmStridedBatched_64")                   \
	X(SGEMM_B, "cublasSgemmBatched")                                 \
	X(SGEMM_B_64, "cublasSgemmBatched_64")                           \
	X(DGEMM_B, "cublasDgemmBatched")                                 \
	X(DGEMM_B_64, "cublasDgemmBatched_64")                           \
	X(HGEMM_B, "cublasHgemmBatched")                                 \
	X(HGEMM_B_64, "cublasHgemmBatched_64")                           \
	X(CGEMM_B, "cublasCgemmBatched")                                 \
	X(CGEMM_B_64, "cublasCgemmBatched_64")                           \
	X(ZGEMM_B, "cublasZgemmBatched")                                 \
	X(ZGEMM_B_64, "cublasZgemmBatched_64")                           \
	X(GEMM_EX, "cublasGemmEx")                                       \
	X(GEMM_EX_64, "cublasGemmEx_64")                                 \
	X(GEMM_B_EX, "cublasGemmBatchedEx")                              \
	X(GEMM_B_EX_64, "cublasGemmBatchedEx_64")                        \
	X(GEMM_SB_EX, "cublasGemmStridedBatchedEx")                      \
	X(GEMM_SB_EX_64, "cublasGemmStridedBatchedEx_64")                \
	X(LT_MATMUL, "cublasLtMatmul")

enum tp_cublas_api {
#define X(id, name) TP_CUBLAS_##id,
	TP_CUBLAS_APIS(X)
#undef X
	TP_CUBLAS_N
};

#define TP_CUBLAS_ID(id) TP_API_ID(TP_TABLE_CUBLAS, TP_CUBLAS_##id)

/* NULL-terminated soname lists, most recent first. */
extern const char *const tp_libs_cublas[];
extern const char *const tp_libs_cublasLt[];

/* What a GEMM record holds: the call's own values, no strings. The small
 * ones go in the record (e->a), the 64-bit shape in one extension slot. */
struct tp_cublas_args {
	uint64_t handle;
	int32_t atype, btype, ctype, dtype;	/* cudaDataType */
	/* cublasComputeType_t, or a legacy cudaDataType (Ex calls from C) */
	int32_t compute;
	int32_t scale;		/* cudaDataType (cublasLtMatmul) */
	int32_t transa, transb;	/* cublasOperation_t */
};

struct tp_cublas_dims {
	int64_t m, n, k, batch;
	int64_t lda, ldb, ldc, ldd;
	uint32_t known;		/* TP_GEMM_* bits: what is recorded */
	uint32_t nested;	/* inside another recorded cuBLAS call */
};

_Static_assert(sizeof(struct tp_cublas_args) <=
	       sizeof(((struct tp_event *)0)->a), "cublas args too big");
_Static_assert(sizeof(struct tp_cublas_dims) <= TP_EV_SLOT_BYTES,
	       "cublas dims exceed one extension slot");

/* The cublasLtMatmul record holds only what its descriptors gave. */
enum {
	TP_GEMM_M = 1u << 0,
	TP_GEMM_N = 1u << 1,
	TP_GEMM_K = 1u << 2,
	TP_GEMM_BATCH = 1u << 3,
	TP_GEMM_TRANSA = 1u << 4,
	TP_GEMM_TRANSB = 1u << 5,
	TP_GEMM_ATYPE = 1u << 6,
	TP_GEMM_BTYPE = 1u << 7,
	TP_GEMM_CTYPE = 1u << 8,
	TP_GEMM_DTYPE = 1u << 9,
	TP_GEMM_COMPUTE = 1u << 10,
	TP_GEMM_SCALE = 1u << 11,
	TP_GEMM_LDA = 1u << 12,
	TP_GEMM_LDB = 1u << 13,
	TP_GEMM_LDC = 1u << 14,
	TP_GEMM_LDD = 1u << 15,
	/* A cuBLAS GEMM call: all its operands are arguments. */
	TP_GEMM_BLAS = TP_GEMM_M | TP_GEMM_N | TP_GEMM_K | TP_GEMM_BATCH |
		       TP_GEMM_TRANSA | TP_GEMM_TRANSB | TP_GEMM_ATYPE |
		       TP_GEMM_BTYPE | TP_GEMM_CTYPE | TP_GEMM_COMPUTE |
		       TP_GEMM_LDA | TP_GEMM_LDB | TP_GEMM_LDC,
};

/* Nesting depth of recorded cuBLAS/Lt calls on this thread: a call made
 * inside another one (cublasGemmEx -> cublasLtMatmul) is recorded, but
 * its FLOPs are the outer call's. */
extern __thread unsigned tp_cublas_depth
	__attribute__((tls_model("initial-exec")));

/* The hook shape for cuBLAS, with the nesting depth kept around the
 * real call and one extension slot. The block sees the parameters, `ret`,
 * `e`, `g` (struct tp_cublas_args in the record) and `d` (struct
 * tp_cublas_dims, `nested` already set). */
TP_INLINE int tp_cublas_enter(struct tp_call *k)
{
	if (!tp_rec_begin(&k->r, TP_SRC_CUBLAS))
		return 0;
	k->depth = tp_cublas_depth++;
	return 1;
}

#define TP_CUBLAS_HOOK(name, libs, id, params, args, ...)                \
	TP_HOOK_SHAPE(cublasStatus_t, name, libs,                        \
		      CUBLAS_STATUS_NOT_INITIALIZED, params, args,       \
		      struct tp_call, tp_cublas_enter(&tp_call),         \
		      tp_cublas_depth = tp_call.depth,                   \
		      tp_rec_end_ext(&tp_call.r, TP_CUBLAS_ID(id),       \
				     (int32_t)ret, 1),                   \
		      TP_KIND_OTHER, TP_NOTHING,                         \
		      struct tp_cublas_args *g =                         \
			      (struct tp_cublas_args *)(void *)&e->a;    \
		      struct tp_cublas_dims *d = tp_rec_ext(&tp_call.r, 1); \
		      (void)g;                                           \
		      d->nested = tp_call.depth != 0;                    \
		      __VA_ARGS__)

#endif
