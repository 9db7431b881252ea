/* hooks/cublas/: the cublas hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* cuBLAS GEMMs: the typed S/D/H/C/Z calls (one matrix, strided batches,
 * pointer-array batches) and the Ex calls, each with its _64 variant.
 * What they record is printed by cublas_args.c. */
#include <stdint.h>

#include <cublas_api.h>

#include "cublas_apis.h"

const char *const tp_libs_cublas[] = {
	"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL,
};

const char *const tp_libs_cublasLt[] = {
	"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", NULL,
};

/* cublas_api.h declares the half precision calls for C++ only (__half is
 * a C++ class): here they take pointers to a stand-in of the same size,
 * which is all their ABI sees. */
typedef struct {
	uint16_t bits;
} tp_half;

__thread unsigned tp_cublas_depth __attribute__((tls_model("initial-exec")));

/* The shape: every argument is widened to 64 bits, so the _64 variants
 * keep their full values. */
static inline void fill(struct tp_cublas_args *g, struct tp_cublas_dims *d,
			cublasHandle_t h, cublasOperation_t ta,
			cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
			int64_t lda, int64_t ldb, int64_t ldc, int64_t batch)
{
	g->handle = (uint64_t)(uintptr_t)h;
	g->transa = (int32_t)ta;
	g->transb = (int32_t)tb;
	d->m = m;
	d->n = n;
	d->k = k;
	d->batch = batch;
	d->lda = lda;
	d->ldb = ldb;
	d->ldc = ldc;
	d->known = TP_GEMM_BLAS;
}

static inline void types(struct tp_cublas_args *g, int32_t a, int32_t b,
			 int32_t c, int32_t compute)
{
	g->atype = a;
	g->btype = b;
	g->ctype = c;
	g->compute = compute;
}

#define HEAD cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb

/* C = alpha op(A) op(B) + beta C on T elements, the types implied. */
#define GEMM(name, id, T, I, type, compute)                              \
	TP_CUBLAS_HOOK(name, tp_libs_cublas, id,                         \
		(HEAD, I m, I n, I k, const T *alpha, const T *A, I lda,  \
		 const T *B, I ldb, const T *beta, T *C, I ldc),          \
		(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), \
		fill(g, d, h, ta, tb, m, n, k, lda, ldb, ldc, 1);         \
		types(g, type, type, type, compute);)

/* batch of them, matrices `stride` elements apart */
#define GEMM_SB(name, id, T, I, type, compute)                           \
	TP_CUBLAS_HOOK(name, tp_libs_cublas, id,                         \
		(HEAD, I m, I n, I k, const T *alpha, const T *A, I lda,  \
		 long long sa, const T *B, I ldb, long long sb,           \
		 const T *beta, T *C, I ldc, long long sc, I batch),      \
		(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, \
		 C, ldc, sc, batch),                                      \
		fill(g, d, h, ta, tb, m, n, k, lda, ldb, ldc, batch);     \
		types(g, type, type, type, compute);)

/* batch of them, from arrays of matrix pointers */
#define GEMM_B(name, id, T, I, type, compute)                            \
	TP_CUBLAS_HOOK(name, tp_libs_cublas, id,                         \
		(HEAD, I m, I n, I k, const T *alpha, const T *const A[], \
		 I lda, const T *const B[], I ldb, const T *beta,         \
		 T *const C[], I ldc, I batch),                           \
		(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, \
		 batch),                                                  \
		fill(g, d, h, ta, tb, m, n, k, lda, ldb, ldc, batch);     \
		types(g, type, type, type, compute);)

GEMM(cublasSgemm_v2, SGEMM, float, int, CUDA_R_32F, CUBLAS_COMPUTE_32F)
GEMM(cublasSgemm_v2_64, SGEMM_64, float, int64_t, CUDA_R_32F,
     CUBLAS_COMPUTE_32F)
GEMM(cublasDgemm_v2, DGEMM, double, int, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM(cublasDgemm_v2_64, DGEMM_64, double, int64_t, CUDA_R_64F,
     CUBLAS_COMPUTE_64F)
GEMM(cublasHgemm, HGEMM, tp_half, int, CUDA_R_16F, CUBLAS_COMPUTE_16F)
GEMM(cublasHgemm_64, HGEMM_64, tp_half, int64_t, CUDA_R_16F,
     CUBLAS_COMPUTE_16F)
GEMM(cublasCgemm_v2, CGEMM, cuComplex, int, CUDA_C_32F, CUBLAS_COMPUTE_32F)
GEMM(cublasCgemm_v2_64, CGEMM_64, cuComplex, int64_t, CUDA_C_32F,
     CUBLAS_COMPUTE_32F)
GEMM(cublasZgemm_v2, ZGEMM, cuDoubleComplex, int, CUDA_C_64F,
     CUBLAS_COMPUTE_64F)
GEMM(cublasZgemm_v2_64, ZGEMM_64, cuDoubleComplex, int64_t, CUDA_C_64F,
     CUBLAS_COMPUTE_64F)

GEMM_SB(cublasSgemmStridedBatched, SGEMM_SB, float, int, CUDA_R_32F,
	CUBLAS_COMPUTE_32F)
GEMM_SB(cublasSgemmStridedBatched_64, SGEMM_SB_64, float, int64_t,
	CUDA_R_32F, CUBLAS_COMPUTE_32F)
GEMM_SB(cublasDgemmStridedBatched, DGEMM_SB, double, int, CUDA_R_64F,
	CUBLAS_COMPUTE_64F)
GEMM_SB(cublasDgemmStridedBatched_64, DGEMM_SB_64, double, int64_t,
	CUDA_R_64F, CUBLAS_COMPUTE_64F)
GEMM_SB(cublasHgemmStridedBatched, HGEMM_SB, tp_half, int, CUDA_R_16F,
	CUBLAS_COMPUTE_16F)
GEMM_SB(cublasHgemmStridedBatched_64, HGEMM_SB_64, tp_half, int64_t,
	CUDA_R_16F, CUBLAS_COMPUTE_16F)
GEMM_SB(cublasCgemmStridedBatched, CGEMM_SB, cuComplex, int, CUDA_C_32F,
	CUBLAS_COMPUTE_32F)
GEMM_SB(cublasCgemmStridedBatched_64, CGEMM_SB_64, cuComplex, int64_t,
	CUDA_C_32F, CUBLAS_COMPUTE_32F)
GEMM_SB(cublasZgemmStridedBatched, ZGEMM_SB, cuDoubleComplex, int,
	CUDA_C_64F, CUBLAS_COMPUTE_64F)
GEMM_SB(cublasZgemmStridedBatched_64, ZGEMM_SB_64, cuDoubleComplex, int64_t,
	CUDA_C_64F, CUBLAS_COMPUTE_64F)

GEMM_B(cublasSgemmBatched, SGEMM_B, float, int, CUDA_R_32F,
       CUBLAS_COMPUTE_32F)
GEMM_B(cublasSgemmBatched_64, SGEMM_B_64, float, int64_t, CUDA_R_32F,
       CUBLAS_COMPUTE_32F)
GEMM_B(cublasDgemmBatched, DGEMM_B, double, int, CUDA_R_64F,
       CUBLAS_COMPUTE_64F)
GEMM_B(cublasDgemmBatched_64, DGEMM_B_64, double, int64_t, CUDA_R_64F,
       CUBLAS_COMPUTE_64F)
GEMM_B(cublasHgemmBatched, HGEMM_B, tp_half, int, CUDA_R_16F,
       CUBLAS_COMPUTE_16F)
GEMM_B(cublasHgemmBatched_64, HGEMM_B_64, tp_half, int64_t, CUDA_R_16F,
       CUBLAS_COMPUTE_16F)
GEMM_B(cublasCgemmBatched, CGEMM_B, cuComplex, int, CUDA_C_32F,
       CUBLAS_COMPUTE_32F)
GEMM_B(cublasCgemmBatched_64, CGEMM_B_64, cuComplex, int64_t, CUDA_C_32F,
       CUBLAS_COMPUTE_32F)
GEMM_B(cublasZgemmBatched, ZGEMM_B, cuDoubleComplex, int, CUDA_C_64F,
       CUBLAS_COMPUTE_64F)
GEMM_B(cublasZgemmBatched_64, ZGEMM_B_64, cuDoubleComplex, int64_t,
       CUDA_C_64F, CUBLAS_COMPUTE_64F)

/* The Ex calls name their types. computeType is recorded as passed: C
 * callers may still pass a legacy cudaDataType there (the formatter names
 * either kind). */
#define GEMM_EX(name, id, I)                                              \
	TP_CUBLAS_HOOK(name, tp_libs_cublas, id,                          \
		(HEAD, I m, I n, I k, const void *alpha, const void *A,    \
		 cudaDataType at, I lda, const void *B, cudaDataType bt,   \
		 I ldb, const void *beta, void *C, cudaDataType ct, I ldc, \
		 cublasComputeType_t comp, cublasGemmAlgo_t algo),         \
		(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta,  \
		 C, ct, ldc, comp, algo),                                  \
		fill(g, d, h, ta, tb, m, n, k, lda, ldb, ldc, 1);          \
		types(g, at, bt, ct, comp);)

#define GEMM_B_EX(name, id, I)                                            \
	TP_CUBLAS_HOOK(name, tp_libs_cublas, id,                          \
		(HEAD, I m, I n, I k, const void *alpha,                   \
		 const void *const A[], cudaDataType at, I lda,            \
		 const void *const B[], cudaDataType bt, I ldb,            \
		 const void *beta, void *const C[], cudaDataType ct,       \
		 I ldc, I batch, cublasComputeType_t comp,                 \
		 cublasGemmAlgo_t algo),                                   \
		(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta,  \
		 C, ct, ldc, batch, comp, algo),                           \
		fill(g, d, h, ta, tb, m, n, k, lda, ldb, ldc, batch);      \
		types(g, at, bt, ct, comp);)

#define GEMM_SB_EX(name, id, I)                                           \
	TP_CUBLAS_HOOK(name, tp_libs_cublas, id,                          \
		(HEAD, I m, I n, I k, const void *alpha, const void *A,    \
		 cudaDataType at, I lda, long long sa, const void *B,      \
		 cudaDataType bt, I ldb, long long sb, const void *beta,   \
		 void *C, cudaDataType ct, I ldc, long long sc, I batch,   \
		 cublasComputeType_t comp, cublasGemmAlgo_t algo),         \
		(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb,    \
		 sb, beta, C, ct, ldc, sc, batch, comp, algo),             \
		fill(g, d, h, ta, tb, m, n, k, lda, ldb, ldc, batch);      \
		types(g, at, bt, ct, comp);)

GEMM_EX(cublasGemmEx, GEMM_EX, int)
GEMM_EX(cublasGemmEx_64, GEMM_EX_64, int64_t)
GEMM_B_EX(cublasGemmBatchedEx, GEMM_B_EX, int)
GEMM_B_EX(cublasGemmBatchedEx_64, GEMM_B_EX_64, int64_t)
GEMM_SB_EX(cublasGemmStridedBatchedEx, GEMM_SB_EX, int)
GEMM_SB_EX(cublasGemmStridedBatchedEx_64, GEMM_SB_EX_64, int64_t)
