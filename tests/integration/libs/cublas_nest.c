/* Stands in for libcublas behind libtprof.so (LD_PRELOAD=libtprof.so:
 * cublas_nest.so) to make nested calls without a GPU, as the real library
 * does on one: its cublasSgemm_v2 calls cublasGemmEx, whose cublasGemmEx
 * describes the same GEMM to cublasLtMatmul. The inner calls go through
 * the dynamic linker, so libtprof's hooks see them, on the same thread.
 * Both report success, whatever cublasLtMatmul (the real one, which
 * fails without a handle) returned.
 */
#include <stdint.h>

#include <cublasLt.h>
#include <cublas_api.h>

static cublasLtMatrixLayout_t layout(cudaDataType t, cublasOperation_t op,
				     int rows, int cols, int ld)
{
	cublasLtMatrixLayout_t l = NULL;

	if (op != CUBLAS_OP_N) {
		int x = rows;

		rows = cols;
		cols = x;
	}
	cublasLtMatrixLayoutCreate(&l, t, (uint64_t)rows, (uint64_t)cols, ld);
	return l;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
			    cublasOperation_t tb, int m, int n, int k,
			    const void *alpha, const void *A, cudaDataType at,
			    int lda, const void *B, cudaDataType bt, int ldb,
			    const void *beta, void *C, cudaDataType ct,
			    int ldc, cublasComputeType_t comp,
			    cublasGemmAlgo_t algo)
{
	cublasLtMatrixLayout_t al, bl, cl;
	cublasLtMatmulDesc_t d = NULL;
	int32_t a = ta, b = tb;

	(void)algo;
	cublasLtMatmulDescCreate(&d, comp, CUDA_R_32F);
	cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &a,
				       sizeof(a));
	cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &b,
				       sizeof(b));
	al = layout(at, ta, m, k, lda);
	bl = layout(bt, tb, k, n, ldb);
	cl = layout(ct, CUBLAS_OP_N, m, n, ldc);
	cublasLtMatmul((cublasLtHandle_t)h, d, alpha, A, al, B, bl, beta, C,
		       cl, C, cl, NULL, NULL, 0, 0);
	cublasLtMatrixLayoutDestroy(al);
	cublasLtMatrixLayoutDestroy(bl);
	cublasLtMatrixLayoutDestroy(cl);
	cublasLtMatmulDescDestroy(d);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta,
			      cublasOperation_t tb, int m, int n, int k,
			      const float *alpha, const float *A, int lda,
			      const float *B, int ldb, const float *beta,
			      float *C, int ldc)
{
	return cublasGemmEx(h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, B,
			    CUDA_R_32F, ldb, beta, C, CUDA_R_32F, ldc,
			    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
