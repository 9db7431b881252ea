/* hooks/cublas/: the cublas hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* How recorded cuBLAS / cuBLASLt GEMMs are printed: shapes, operations,
 * type names, FLOPs. Runs in the writer thread, never on the hot path. */
#include <stddef.h>
#include <stdint.h>

#include "cublas_apis.h"
#include "hooks/lib_hook.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* cudaDataType (library_types.h): the values are the ABI, so they are
 * spelled out here and stay right whatever toolkit the build sees. */
static const char *const data_types[] = {
	[0] = "CUDA_R_32F", [1] = "CUDA_R_64F", [2] = "CUDA_R_16F",
	[3] = "CUDA_R_8I", [4] = "CUDA_C_32F", [5] = "CUDA_C_64F",
	[6] = "CUDA_C_16F", [7] = "CUDA_C_8I", [8] = "CUDA_R_8U",
	[9] = "CUDA_C_8U", [10] = "CUDA_R_32I", [11] = "CUDA_C_32I",
	[12] = "CUDA_R_32U", [13] = "CUDA_C_32U", [14] = "CUDA_R_16BF",
	[15] = "CUDA_C_16BF", [16] = "CUDA_R_4I", [17] = "CUDA_C_4I",
	[18] = "CUDA_R_4U", [19] = "CUDA_C_4U", [20] = "CUDA_R_16I",
	[21] = "CUDA_C_16I", [22] = "CUDA_R_16U", [23] = "CUDA_C_16U",
	[24] = "CUDA_R_64I", [25] = "CUDA_C_64I", [26] = "CUDA_R_64U",
	[27] = "CUDA_C_64U", [28] = "CUDA_R_8F_E4M3", [29] = "CUDA_R_8F_E5M2",
	[30] = "CUDA_R_8F_UE8M0", [31] = "CUDA_R_6F_E2M3",
	[32] = "CUDA_R_6F_E3M2", [33] = "CUDA_R_4F_E2M1",
};

/* cublasComputeType_t (cublas_api.h), from CUBLAS_COMPUTE_16F = 64. */
#define COMPUTE_BASE 64
static const char *const compute_types[] = {
	[64 - COMPUTE_BASE] = "CUBLAS_COMPUTE_16F",
	[65 - COMPUTE_BASE] = "CUBLAS_COMPUTE_16F_PEDANTIC",
	[68 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32F",
	[69 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32F_PEDANTIC",
	[70 - COMPUTE_BASE] = "CUBLAS_COMPUTE_64F",
	[71 - COMPUTE_BASE] = "CUBLAS_COMPUTE_64F_PEDANTIC",
	[72 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32I",
	[73 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32I_PEDANTIC",
	[74 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32F_FAST_16F",
	[75 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32F_FAST_16BF",
	[77 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32F_FAST_TF32",
	[78 - COMPUTE_BASE] = "CUBLAS_COMPUTE_32F_EMULATED_16BFX9",
	[79 - COMPUTE_BASE] = "CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT",
};

/* cublasStatus_t */
static const char *const statuses[] = {
	[0] = "CUBLAS_STATUS_SUCCESS",
	[1] = "CUBLAS_STATUS_NOT_INITIALIZED",
	[3] = "CUBLAS_STATUS_ALLOC_FAILED",
	[7] = "CUBLAS_STATUS_INVALID_VALUE",
	[8] = "CUBLAS_STATUS_ARCH_MISMATCH",
	[11] = "CUBLAS_STATUS_MAPPING_ERROR",
	[13] = "CUBLAS_STATUS_EXECUTION_FAILED",
	[14] = "CUBLAS_STATUS_INTERNAL_ERROR",
	[15] = "CUBLAS_STATUS_NOT_SUPPORTED",
	[16] = "CUBLAS_STATUS_LICENSE_ERROR",
};

static const char *const ops[] = { "N", "T", "C" };

static const char *name_of(const char *const *table, size_t n, int64_t v)
{
	if (v < 0 || (uint64_t)v >= n)
		return NULL;
	return table[v];
}

static const char *data_type(int32_t v)
{
	return name_of(data_types, N_OF(data_types), v);
}

/* A name from the table, else the raw value. */
static void put_enum(struct tp_targs *w, const char *key, const char *s,
		     int32_t v)
{
	if (s)
		tp_targs_cstr(w, key, s);
	else
		tp_targs_int(w, key, v);
}

static void put_op(struct tp_targs *w, const char *key, int32_t v)
{
	put_enum(w, key, name_of(ops, N_OF(ops), v), v);
}

/* computeType: a cublasComputeType_t, or the cudaDataType that C callers
 * of the Ex calls may still pass. */
static void put_compute(struct tp_targs *w, int32_t v)
{
	const char *s = name_of(compute_types, N_OF(compute_types),
				(int64_t)v - COMPUTE_BASE);

	put_enum(w, "compute type", s ? s : data_type(v), v);
}

/* 2mnk per matrix, 8mnk when complex (a complex multiply-add is four
 * real multiplies and four real adds). The product of four 64-bit
 * values can exceed 64 bits: it is kept in 128 bits (written exactly),
 * and left out only when even that overflows. */
static int flops(const struct tp_cublas_args *g,
		 const struct tp_cublas_dims *d, unsigned __int128 *out)
{
	const uint32_t shape = TP_GEMM_M | TP_GEMM_N | TP_GEMM_K |
			       TP_GEMM_BATCH;
	unsigned __int128 f;
	const char *type;

	if (d->nested || (d->known & shape) != shape)
		return 0;
	if (d->known & TP_GEMM_DTYPE)
		type = data_type(g->dtype);
	else if (d->known & TP_GEMM_CTYPE)
		type = data_type(g->ctype);
	else
		return 0;
	/* An unknown output type cannot tell real from complex. */
	if (!type || d->m < 0 || d->n < 0 || d->k < 0 || d->batch < 0)
		return 0;
	f = type[5] == 'C' ? 8 : 2;	/* "CUDA_C_..." */
	if (__builtin_mul_overflow(f, (unsigned __int128)d->m, &f) ||
	    __builtin_mul_overflow(f, (unsigned __int128)d->n, &f) ||
	    __builtin_mul_overflow(f, (unsigned __int128)d->k, &f) ||
	    __builtin_mul_overflow(f, (unsigned __int128)d->batch, &f))
		return 0;
	*out = f;
	return 1;
}

#define PUT_DIM(bit, key, v)                                             \
	do {                                                             \
		if (d->known & (bit)) {                                  \
			tp_targs_int(w, key, (v));                       \
		}                                                        \
	} while (0)

#define PUT_TYPE(bit, key, v)                                            \
	do {                                                             \
		if (d->known & (bit)) {                                  \
			put_enum(w, key, data_type(v), (v));             \
		}                                                        \
	} while (0)

static void put_shape(struct tp_targs *w, const struct tp_cublas_args *g,
		      const struct tp_cublas_dims *d)
{
	PUT_DIM(TP_GEMM_M, "m", d->m);
	PUT_DIM(TP_GEMM_N, "n", d->n);
	PUT_DIM(TP_GEMM_K, "k", d->k);
	PUT_DIM(TP_GEMM_BATCH, "batch", d->batch);
	if (d->known & TP_GEMM_TRANSA) {
		put_op(w, "transa", g->transa);
	}
	if (d->known & TP_GEMM_TRANSB) {
		put_op(w, "transb", g->transb);
	}
	PUT_TYPE(TP_GEMM_ATYPE, "a type", g->atype);
	PUT_TYPE(TP_GEMM_BTYPE, "b type", g->btype);
	PUT_TYPE(TP_GEMM_CTYPE, "c type", g->ctype);
	PUT_TYPE(TP_GEMM_DTYPE, "d type", g->dtype);
	if (d->known & TP_GEMM_COMPUTE) {
		put_compute(w, g->compute);
	}
	PUT_TYPE(TP_GEMM_SCALE, "scale type", g->scale);
	PUT_DIM(TP_GEMM_LDA, "lda", d->lda);
	PUT_DIM(TP_GEMM_LDB, "ldb", d->ldb);
	PUT_DIM(TP_GEMM_LDC, "ldc", d->ldc);
	PUT_DIM(TP_GEMM_LDD, "ldd", d->ldd);
}

static void fmt_gemm(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_cublas_args *g = (const void *)&e->a;
	const struct tp_cublas_dims *d = tp_event_ext(e);
	unsigned __int128 f;

	if ((e->flags & TP_EV_EXT_MASK) < 1)
		return;
	put_shape(w, g, d);
	if (flops(g, d, &f))
		tp_targs_u128(w, "flops", f);
	if (e->ret) {
		const char *s = name_of(statuses, N_OF(statuses), e->ret);

		tp_targs_cstr(w, "status", s ? s : "unknown status");
	}
	tp_targs_ptr(w, "handle", g->handle);
	if (e->api == TP_CUBLAS_ID(LT_MATMUL))
		tp_targs_ptr(w, "stream", e->stream);
	if (d->nested)
		tp_targs_int(w, "nested", 1);
}

static const struct tp_api cublas_apis[] = {
#define X(id, nm) { .name = nm, .cat = "cublas", .args = fmt_gemm },
	TP_CUBLAS_APIS(X)
#undef X
};

void tp_cublas_register(void)
{
	tp_api_register(TP_TABLE_CUBLAS, cublas_apis, TP_CUBLAS_N);
}
