/* Calls every hooked cuBLAS / cuBLASLt GEMM entry point with a NULL
 * handle (the real library returns at once, no GPU needed) and known
 * shapes; test_cublas.py checks what the trace recorded against them.
 * Prints "NAME STATUS" for each call made, in order, so the test can
 * compare the statuses the program got with the trace's `ret`.
 *
 *   cublas_calls ITERS          every hooked API, ITERS times
 *   cublas_calls nest           calls that nest (run with
 *                               tests/integration/libs/cublas_nest.c
 *                               preloaded after libtprof.so)
 *
 * Shapes: m=3 n=5 k=7 lda=11 ldb=13 ldc=17, batch 19; the _64 variants
 * use values that do not fit in 32 bits (BIG_*).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_api.h>

#define BIG_M 4294967299LL	/* 2^32 + 3 */
#define BIG_LDA 4294967307LL	/* 2^32 + 11 */
#define BIG_LDB 8589934605LL	/* 2^33 + 13 */
#define BIG_LDC 17179869201LL	/* 2^34 + 17 */
#define BIG_BATCH 2147483667LL	/* 2^31 + 19 */

static const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T,
			       C = CUBLAS_OP_C;

/* cublas_api.h declares the half precision calls for C++ only. */
typedef struct {
	unsigned short bits;
} half_t;

cublasStatus_t cublasHgemm(cublasHandle_t, cublasOperation_t,
			   cublasOperation_t, int, int, int, const half_t *,
			   const half_t *, int, const half_t *, int,
			   const half_t *, half_t *, int);
cublasStatus_t cublasHgemm_64(cublasHandle_t, cublasOperation_t,
			      cublasOperation_t, int64_t, int64_t, int64_t,
			      const half_t *, const half_t *, int64_t,
			      const half_t *, int64_t, const half_t *,
			      half_t *, int64_t);
cublasStatus_t cublasHgemmStridedBatched(
	cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
	const half_t *, const half_t *, int, long long, const half_t *, int,
	long long, const half_t *, half_t *, int, long long, int);
cublasStatus_t cublasHgemmStridedBatched_64(
	cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
	int64_t, int64_t, const half_t *, const half_t *, int64_t, long long,
	const half_t *, int64_t, long long, const half_t *, half_t *, int64_t,
	long long, int64_t);
cublasStatus_t cublasHgemmBatched(cublasHandle_t, cublasOperation_t,
				  cublasOperation_t, int, int, int,
				  const half_t *, const half_t *const[], int,
				  const half_t *const[], int, const half_t *,
				  half_t *const[], int, int);
cublasStatus_t cublasHgemmBatched_64(cublasHandle_t, cublasOperation_t,
				     cublasOperation_t, int64_t, int64_t,
				     int64_t, const half_t *,
				     const half_t *const[], int64_t,
				     const half_t *const[], int64_t,
				     const half_t *, half_t *const[], int64_t,
				     int64_t);

static int failures;

static void report(const char *name, cublasStatus_t s)
{
	printf("%s %d\n", name, (int)s);
}

/* Two steps, so that a name built by TYPED is expanded before it is
 * printed. */
#define CALL(fn, ...) CALL_(fn, __VA_ARGS__)
#define CALL_(fn, ...) report(#fn, fn(__VA_ARGS__))

/* Each typed family: one matrix, strided batch, pointer-array batch,
 * 32-bit and _64. */
#define TYPED(P, TY, ta, tb)                                               \
	do {                                                               \
		TY al, be, *a = NULL, *b = NULL, *c = NULL;                \
		const TY *const *aa = NULL, *const *ba = NULL;             \
		TY *const *ca = NULL;                                      \
                                                                           \
		memset(&al, 0, sizeof(al));                                \
		memset(&be, 0, sizeof(be));                                \
		CALL(P##_1, NULL, ta, tb, 3, 5, 7, &al, a, 11, b, 13, &be, \
		     c, 17);                                               \
		CALL(P##_1_64, NULL, ta, tb, BIG_M, 5, 7, &al, a, BIG_LDA, \
		     b, BIG_LDB, &be, c, BIG_LDC);                         \
		CALL(P##StridedBatched, NULL, ta, tb, 3, 5, 7, &al, a, 11, \
		     100, b, 13, 200, &be, c, 17, 300, 19);                \
		CALL(P##StridedBatched_64, NULL, ta, tb, BIG_M, 5, 7, &al, \
		     a, BIG_LDA, 100, b, BIG_LDB, 200, &be, c, BIG_LDC,    \
		     300, BIG_BATCH);                                      \
		CALL(P##Batched, NULL, ta, tb, 3, 5, 7, &al, aa, 11, ba,   \
		     13, &be, ca, 17, 19);                                 \
		CALL(P##Batched_64, NULL, ta, tb, BIG_M, 5, 7, &al, aa,    \
		     BIG_LDA, ba, BIG_LDB, &be, ca, BIG_LDC, BIG_BATCH);   \
	} while (0)

/* The one-matrix calls' names differ per type: _v2 except for H. */
#define cublasSgemm_1 cublasSgemm_v2
#define cublasSgemm_1_64 cublasSgemm_v2_64
#define cublasDgemm_1 cublasDgemm_v2
#define cublasDgemm_1_64 cublasDgemm_v2_64
#define cublasHgemm_1 cublasHgemm
#define cublasHgemm_1_64 cublasHgemm_64
#define cublasCgemm_1 cublasCgemm_v2
#define cublasCgemm_1_64 cublasCgemm_v2_64
#define cublasZgemm_1 cublasZgemm_v2
#define cublasZgemm_1_64 cublasZgemm_v2_64

static void typed(void)
{
	TYPED(cublasSgemm, float, T, N);
	TYPED(cublasDgemm, double, T, N);
	TYPED(cublasHgemm, half_t, T, N);
	TYPED(cublasCgemm, cuComplex, C, T);
	TYPED(cublasZgemm, cuDoubleComplex, C, T);
}

static void ex(void)
{
	float al = 1, be = 0;
	const void *const *arr = NULL;

	CALL(cublasGemmEx, NULL, N, T, 3, 5, 7, &al, NULL, CUDA_R_16BF, 11,
	     NULL, CUDA_R_16BF, 13, &be, NULL, CUDA_R_16BF, 17,
	     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	/* A legacy cudaDataType compute type, as old C code passes. */
	CALL(cublasGemmEx, NULL, N, T, 3, 5, 7, &al, NULL, CUDA_R_32F, 11,
	     NULL, CUDA_R_32F, 13, &be, NULL, CUDA_R_32F, 17,
	     (cublasComputeType_t)CUDA_R_32F, CUBLAS_GEMM_DEFAULT);
	/* Nonsense values are recorded as passed, and no FLOPs. */
	CALL(cublasGemmEx, NULL, (cublasOperation_t)7, T, -1, 5, 7, &al, NULL,
	     (cudaDataType)99, 11, NULL, CUDA_R_32F, 13, &be, NULL,
	     CUDA_R_32F, 17, (cublasComputeType_t)1234, CUBLAS_GEMM_DEFAULT);
	CALL(cublasGemmEx_64, NULL, N, T, BIG_M, 5, 7, &al, NULL,
	     CUDA_R_8F_E4M3, BIG_LDA, NULL, CUDA_R_8F_E5M2, BIG_LDB, &be,
	     NULL, CUDA_R_16F, BIG_LDC, CUBLAS_COMPUTE_32F_FAST_TF32,
	     CUBLAS_GEMM_DEFAULT);
	CALL(cublasGemmBatchedEx, NULL, N, T, 3, 5, 7, &al, arr, CUDA_R_8I,
	     11, arr, CUDA_R_8I, 13, &be, NULL, CUDA_R_32I, 17, 19,
	     CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
	CALL(cublasGemmBatchedEx_64, NULL, N, T, BIG_M, 5, 7, &al, arr,
	     CUDA_R_16F, BIG_LDA, arr, CUDA_R_16F, BIG_LDB, &be, NULL,
	     CUDA_R_16F, BIG_LDC, BIG_BATCH, CUBLAS_COMPUTE_32F_FAST_16F,
	     CUBLAS_GEMM_DEFAULT);
	CALL(cublasGemmStridedBatchedEx, NULL, N, T, 3, 5, 7, &al, NULL,
	     CUDA_C_32F, 11, 100, NULL, CUDA_C_32F, 13, 200, &be, NULL,
	     CUDA_C_32F, 17, 300, 19, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	CALL(cublasGemmStridedBatchedEx_64, NULL, N, T, BIG_M, 5, 7, &al,
	     NULL, CUDA_R_16BF, BIG_LDA, 100, NULL, CUDA_R_16BF, BIG_LDB, 200,
	     &be, NULL, CUDA_R_16BF, BIG_LDC, 300, BIG_BATCH,
	     CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT);
}

/* Setup steps must work without a GPU: a failure is the test's. */
static void must(const char *what, cublasStatus_t s)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return;
	fprintf(stderr, "cublas_calls: %s failed: %d\n", what, (int)s);
	failures++;
}

static cublasLtMatmulDesc_t desc(cublasComputeType_t ct, cudaDataType st,
				 cublasOperation_t ta, cublasOperation_t tb)
{
	cublasLtMatmulDesc_t m = NULL;
	int32_t a = ta, b = tb;

	must("cublasLtMatmulDescCreate", cublasLtMatmulDescCreate(&m, ct, st));
	must("TRANSA", cublasLtMatmulDescSetAttribute(
		m, CUBLASLT_MATMUL_DESC_TRANSA, &a, sizeof(a)));
	must("TRANSB", cublasLtMatmulDescSetAttribute(
		m, CUBLASLT_MATMUL_DESC_TRANSB, &b, sizeof(b)));
	return m;
}

static cublasLtMatrixLayout_t layout(cudaDataType t, uint64_t rows,
				     uint64_t cols, int64_t ld, int32_t batch)
{
	cublasLtMatrixLayout_t l = NULL;

	must("cublasLtMatrixLayoutCreate",
	     cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld));
	if (batch != 1)
		must("BATCH_COUNT", cublasLtMatrixLayoutSetAttribute(
			l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
			sizeof(batch)));
	return l;
}

#define LT(m, al, bl, cl, dl)                                             \
	CALL(cublasLtMatmul, NULL, m, &one, NULL, al, NULL, bl, &zero, NULL, \
	     cl, NULL, dl, NULL, NULL, 0, (cudaStream_t)0x42)

/* 1. all descriptors, C and D distinct: op(A) = A^T, A is k x m.
 * 2. complex, C and D one layout, m = 2^33 + 1: op(A) = A^H, B is n x k.
 * 3. no matmul descriptor; 4. no A layout; 5. nothing. */
static void lt(void)
{
	float one = 1, zero = 0;
	cublasLtMatmulDesc_t m1, m2;
	cublasLtMatrixLayout_t a1, b1, c1, d1, a2, b2, cd2;

	m1 = desc(CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, T, N);
	a1 = layout(CUDA_R_16BF, 7, 3, 11, 4);
	b1 = layout(CUDA_R_16BF, 7, 5, 13, 4);
	c1 = layout(CUDA_R_16F, 3, 5, 17, 4);
	d1 = layout(CUDA_R_32F, 3, 5, 23, 4);
	m2 = desc(CUBLAS_COMPUTE_32F, CUDA_C_32F, C, T);
	a2 = layout(CUDA_C_32F, 7, 8589934593ULL, 11, 1);
	b2 = layout(CUDA_C_32F, 5, 7, 13, 1);
	cd2 = layout(CUDA_C_32F, 8589934593ULL, 5, 8589934600LL, 1);

	LT(m1, a1, b1, c1, d1);
	LT(m2, a2, b2, cd2, cd2);
	LT(NULL, a1, b1, c1, d1);
	LT(m1, NULL, b1, c1, d1);
	LT(NULL, NULL, NULL, NULL, NULL);

	cublasLtMatrixLayoutDestroy(a1);
	cublasLtMatrixLayoutDestroy(b1);
	cublasLtMatrixLayoutDestroy(c1);
	cublasLtMatrixLayoutDestroy(d1);
	cublasLtMatrixLayoutDestroy(a2);
	cublasLtMatrixLayoutDestroy(b2);
	cublasLtMatrixLayoutDestroy(cd2);
	cublasLtMatmulDescDestroy(m1);
	cublasLtMatmulDescDestroy(m2);
}

/* With cublas_nest.so behind libtprof: cublasSgemm_v2 -> cublasGemmEx ->
 * cublasLtMatmul, then each of the inner two called directly. */
static void nest(void)
{
	float one = 1, zero = 0;
	cublasLtMatmulDesc_t m1 = desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, T, N);
	cublasLtMatrixLayout_t a = layout(CUDA_R_32F, 7, 3, 11, 1);
	cublasLtMatrixLayout_t b = layout(CUDA_R_32F, 7, 5, 13, 1);
	cublasLtMatrixLayout_t cd = layout(CUDA_R_32F, 3, 5, 17, 1);

	CALL(cublasSgemm_v2, NULL, T, N, 3, 5, 7, &one, NULL, 11, NULL, 13,
	     &zero, NULL, 17);
	LT(m1, a, b, cd, cd);
	CALL(cublasGemmEx, NULL, T, N, 3, 5, 7, &one, NULL, CUDA_R_32F, 11,
	     NULL, CUDA_R_32F, 13, &zero, NULL, CUDA_R_32F, 17,
	     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	cublasLtMatrixLayoutDestroy(a);
	cublasLtMatrixLayoutDestroy(b);
	cublasLtMatrixLayoutDestroy(cd);
	cublasLtMatmulDescDestroy(m1);
}

int main(int argc, char **argv)
{
	int i, iters;

	if (argc != 2) {
		fprintf(stderr, "usage: cublas_calls ITERS | nest\n");
		return 2;
	}
	if (!strcmp(argv[1], "nest")) {
		nest();
		return failures ? 1 : 0;
	}
	iters = atoi(argv[1]);
	for (i = 0; i < iters; i++) {
		typed();
		ex();
		lt();
	}
	return failures ? 1 : 0;
}
