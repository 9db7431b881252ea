/* hooks/cublas/: the cublas hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* cublasLtMatmul: its shape and types are not arguments but attributes of
 * its matmul descriptor and matrix layouts, read back after the call with
 * the library's own getters (found at run time, like the call itself).
 *
 * Each read costs a call into libcublasLt (about 6 ns), so only what
 * cannot be derived is read: m, n and the batch count from D (C and D
 * shapes must match), k from the one dimension of A that holds it (which
 * depends on transa), C's type and ld not at all when C and D share a
 * layout. A NULL descriptor or a failing read leaves its values out of the
 * record (and the FLOPs with them), rather than guessed.
 *
 * The reads happen while the record's slots are reserved: that is safe
 * because the getters make no call that a tprof hook records.
 */
#include <stdint.h>

#include <cublasLt.h>

#include "cublas_apis.h"

static cublasStatus_t (*real_cublasLtMatmulDescGetAttribute)(
	cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *, size_t,
	size_t *);
static cublasStatus_t (*real_cublasLtMatrixLayoutGetAttribute)(
	cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void *,
	size_t, size_t *);

static inline void desc_get(struct tp_cublas_dims *d, cublasLtMatmulDesc_t m,
			    cublasLtMatmulDescAttributes_t attr, int32_t *v,
			    uint32_t bit)
{
	size_t n = 0;

	if (TP_REAL(cublasLtMatmulDescGetAttribute)(m, attr, v, sizeof(*v), &n) ==
	    CUBLAS_STATUS_SUCCESS && n == sizeof(*v))
		d->known |= bit;
}

static inline void layout_get(struct tp_cublas_dims *d,
			      cublasLtMatrixLayout_t l,
			      cublasLtMatrixLayoutAttribute_t attr, void *v,
			      size_t size, uint32_t bit)
{
	size_t n = 0;

	if (TP_REAL(cublasLtMatrixLayoutGetAttribute)(l, attr, v, size, &n) ==
	    CUBLAS_STATUS_SUCCESS && n == size)
		d->known |= bit;
}

static void read_desc(struct tp_cublas_args *g, struct tp_cublas_dims *d,
		      cublasLtMatmulDesc_t m)
{
	if (!m || !TP_REAL_OK(cublasLtMatmulDescGetAttribute,
			      tp_libs_cublasLt))
		return;
	desc_get(d, m, CUBLASLT_MATMUL_DESC_TRANSA, &g->transa,
		 TP_GEMM_TRANSA);
	desc_get(d, m, CUBLASLT_MATMUL_DESC_TRANSB, &g->transb,
		 TP_GEMM_TRANSB);
	desc_get(d, m, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &g->compute,
		 TP_GEMM_COMPUTE);
	desc_get(d, m, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &g->scale,
		 TP_GEMM_SCALE);
}

/* D: the output, m x n, batch count. */
static void read_d(struct tp_cublas_args *g, struct tp_cublas_dims *d,
		   cublasLtMatrixLayout_t l)
{
	int32_t batch;

	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &g->dtype,
		   sizeof(g->dtype), TP_GEMM_DTYPE);
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_ROWS, &d->m, sizeof(d->m),
		   TP_GEMM_M);
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_COLS, &d->n, sizeof(d->n),
		   TP_GEMM_N);
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_LD, &d->ldd, sizeof(d->ldd),
		   TP_GEMM_LDD);
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
		   sizeof(batch), TP_GEMM_BATCH);
	d->batch = batch;
}

/* C: in place (the same layout as D) is the common case. */
static void read_c(struct tp_cublas_args *g, struct tp_cublas_dims *d,
		   cublasLtMatrixLayout_t l, cublasLtMatrixLayout_t dl)
{
	if (l == dl) {
		g->ctype = g->dtype;
		d->ldc = d->ldd;
		if (d->known & TP_GEMM_DTYPE)
			d->known |= TP_GEMM_CTYPE;
		if (d->known & TP_GEMM_LDD)
			d->known |= TP_GEMM_LDC;
		return;
	}
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &g->ctype,
		   sizeof(g->ctype), TP_GEMM_CTYPE);
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_LD, &d->ldc, sizeof(d->ldc),
		   TP_GEMM_LDC);
}

/* A: op(A) is m x k, so k is A's columns, or its rows when transposed. */
static void read_a(struct tp_cublas_args *g, struct tp_cublas_dims *d,
		   cublasLtMatrixLayout_t l)
{
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &g->atype,
		   sizeof(g->atype), TP_GEMM_ATYPE);
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_LD, &d->lda, sizeof(d->lda),
		   TP_GEMM_LDA);
	if (!(d->known & TP_GEMM_TRANSA))
		return;
	layout_get(d, l, g->transa == CUBLAS_OP_N ?
		   CUBLASLT_MATRIX_LAYOUT_COLS : CUBLASLT_MATRIX_LAYOUT_ROWS,
		   &d->k, sizeof(d->k), TP_GEMM_K);
}

static void read_b(struct tp_cublas_args *g, struct tp_cublas_dims *d,
		   cublasLtMatrixLayout_t l)
{
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &g->btype,
		   sizeof(g->btype), TP_GEMM_BTYPE);
	layout_get(d, l, CUBLASLT_MATRIX_LAYOUT_LD, &d->ldb, sizeof(d->ldb),
		   TP_GEMM_LDB);
}

static void fill_lt(struct tp_event *e, struct tp_cublas_args *g,
		    struct tp_cublas_dims *d, cublasLtHandle_t h,
		    cublasLtMatmulDesc_t m, cublasLtMatrixLayout_t al,
		    cublasLtMatrixLayout_t bl, cublasLtMatrixLayout_t cl,
		    cublasLtMatrixLayout_t dl, cudaStream_t s)
{
	g->handle = (uint64_t)(uintptr_t)h;
	e->stream = (uint64_t)(uintptr_t)s;
	d->known = 0;
	read_desc(g, d, m);
	if (!TP_REAL_OK(cublasLtMatrixLayoutGetAttribute, tp_libs_cublasLt))
		return;
	if (dl)
		read_d(g, d, dl);
	if (cl)
		read_c(g, d, cl, dl);
	if (al)
		read_a(g, d, al);
	if (bl)
		read_b(g, d, bl);
}

TP_CUBLAS_HOOK(cublasLtMatmul, tp_libs_cublasLt, LT_MATMUL,
	(cublasLtHandle_t h, cublasLtMatmulDesc_t m, const void *alpha,
	 const void *A, cublasLtMatrixLayout_t al, const void *B,
	 cublasLtMatrixLayout_t bl, const void *beta, const void *C,
	 cublasLtMatrixLayout_t cl, void *D, cublasLtMatrixLayout_t dl,
	 const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_bytes,
	 cudaStream_t s),
	(h, m, alpha, A, al, B, bl, beta, C, cl, D, dl, algo, ws, ws_bytes, s),
	fill_lt(e, g, d, h, m, al, bl, cl, dl, s);)
