/* hooks/cudnn/: the cudnn hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* How each recorded cuDNN call's args are printed, and the table that
 * names them. Runs on the writer thread: names and FLOPs are worked out
 * here, never on the calling thread. */
#include <stddef.h>
#include <string.h>

#include "cudnn_apis.h"
#include "hooks/lib_hook.h"
#include "hooks/resolve.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

struct status_name {
	int code;
	const char *name;
};

/* cudnnStatus_t of cuDNN 9 (cudnn_graph.h), the names cudnnGetErrorString
 * gives them. */
static const struct status_name statuses[] = {
	{ 0, "CUDNN_STATUS_SUCCESS" },
	{ 1001, "CUDNN_STATUS_NOT_INITIALIZED" },
	{ 1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH" },
	{ 1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH" },
	{ 1004, "CUDNN_STATUS_DEPRECATED" },
	{ 1005, "CUDNN_STATUS_LICENSE_ERROR" },
	{ 1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS" },
	{ 1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW" },
	{ 1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED" },
	{ 2000, "CUDNN_STATUS_BAD_PARAM" },
	{ 2001, "CUDNN_STATUS_INVALID_VALUE" },
	{ 2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER" },
	{ 2003, "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER" },
	{ 2004, "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED" },
	{ 2005, "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND" },
	{ 2006, "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT" },
	{ 2007, "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH" },
	{ 2008, "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH" },
	{ 2009, "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES" },
	{ 2010, "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE" },
	{ 2011, "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH" },
	{ 2012, "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE" },
	{ 3000, "CUDNN_STATUS_NOT_SUPPORTED" },
	{ 3001, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN" },
	{ 3002, "CUDNN_STATUS_NOT_SUPPORTED_SHAPE" },
	{ 3003, "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE" },
	{ 3004, "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT" },
	{ 3005, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER" },
	{ 3006, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART" },
	{ 3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH" },
	{ 3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING" },
	{ 3009, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE" },
	{ 3010, "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT" },
	{ 3011, "CUDNN_STATUS_NOT_SUPPORTED_PADDING" },
	{ 3012, "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM" },
	{ 3013, "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API" },
	{ 3014, "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE" },
	{ 4000, "CUDNN_STATUS_INTERNAL_ERROR" },
	{ 4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED" },
	{ 4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE" },
	{ 4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED" },
	{ 4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED" },
	{ 4005, "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM" },
	{ 4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED" },
	{ 5000, "CUDNN_STATUS_EXECUTION_FAILED" },
	{ 5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER" },
	{ 5002, "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS" },
	{ 5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDART" },
	{ 5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND" },
};

static const char *const dtypes[] = {
	"CUDNN_DATA_FLOAT", "CUDNN_DATA_DOUBLE", "CUDNN_DATA_HALF",
	"CUDNN_DATA_INT8", "CUDNN_DATA_INT32", "CUDNN_DATA_INT8x4",
	"CUDNN_DATA_UINT8", "CUDNN_DATA_UINT8x4", "CUDNN_DATA_INT8x32",
	"CUDNN_DATA_BFLOAT16", "CUDNN_DATA_INT64", "CUDNN_DATA_BOOLEAN",
	"CUDNN_DATA_FP8_E4M3", "CUDNN_DATA_FP8_E5M2",
	"CUDNN_DATA_FAST_FLOAT_FOR_FP8", "CUDNN_DATA_FP8_E8M0",
	"CUDNN_DATA_FP4_E2M1", "CUDNN_DATA_INT4", "CUDNN_DATA_UINT4",
	"CUDNN_DATA_UINT32", "CUDNN_DATA_COMPLEX_FP32",
	"CUDNN_DATA_COMPLEX_FP64",
};

static const char *const conv_modes[] = {
	"CUDNN_CONVOLUTION", "CUDNN_CROSS_CORRELATION",
};

static const char *const bn_modes[] = {
	"CUDNN_BATCHNORM_PER_ACTIVATION", "CUDNN_BATCHNORM_SPATIAL",
	"CUDNN_BATCHNORM_SPATIAL_PERSISTENT",
};

static const char *const bn_ops[] = {
	"CUDNN_BATCHNORM_OPS_BN", "CUDNN_BATCHNORM_OPS_BN_ACTIVATION",
	"CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION",
};

static const char *const norm_modes[] = {
	"CUDNN_NORM_PER_ACTIVATION", "CUDNN_NORM_PER_CHANNEL",
};

static const char *const norm_ops[] = {
	"CUDNN_NORM_OPS_NORM", "CUDNN_NORM_OPS_NORM_ACTIVATION",
	"CUDNN_NORM_OPS_NORM_ADD_ACTIVATION",
};

static const char *const norm_algos[] = {
	"CUDNN_NORM_ALGO_STANDARD", "CUDNN_NORM_ALGO_PERSIST",
};

static const char *const softmax_algos[] = {
	"CUDNN_SOFTMAX_FAST", "CUDNN_SOFTMAX_ACCURATE", "CUDNN_SOFTMAX_LOG",
};

static const char *const softmax_modes[] = {
	"CUDNN_SOFTMAX_MODE_INSTANCE", "CUDNN_SOFTMAX_MODE_CHANNEL",
};

static const char *const fwd_modes[] = {
	"CUDNN_FWD_MODE_INFERENCE", "CUDNN_FWD_MODE_TRAINING",
};

static const char *const wgrad_modes[] = {
	"CUDNN_WGRAD_MODE_ADD", "CUDNN_WGRAD_MODE_SET",
};

struct names {
	const char *const *v;
	unsigned n;
};

#define NAMES(a) ((struct names){ (a), N_OF(a) })
#define NO_NAMES ((struct names){ NULL, 0 })

typedef const char *(*error_string_fn)(cudnnStatus_t);

/* A code newer than this table: cuDNN's own name for it, when it has
 * one (it says CUDNN_UNKNOWN_STATUS otherwise). */
static const char *status_name(int code)
{
	error_string_fn fn;
	const char *s = NULL;
	unsigned i;

	for (i = 0; i < N_OF(statuses); i++)
		if (statuses[i].code == code)
			return statuses[i].name;
	fn = (error_string_fn)tp_resolve_companion(TP_CUDNN_ERROR_STRING);
	if (fn)
		s = fn((cudnnStatus_t)code);
	if (s && !strncmp(s, "CUDNN_STATUS_", 13))
		return s;
	return "CUDNN_UNKNOWN_STATUS";
}

static void put_common(struct tp_targs *w, const struct tp_event *e)
{
	if (e->ret)
		tp_targs_cstr(w, "status", status_name(e->ret));
	tp_targs_ptr(w, "handle", e->a.raw[TP_CUDNN_HANDLE]);
}

/* The name, or the number for a value newer than the table. */
static void put_enum(struct tp_targs *w, const char *key, size_t len,
		     struct names t, uint32_t v)
{
	if (v < t.n) {
		tp_targs_strk(w, key, len, t.v[v], strlen(t.v[v]));
		return;
	}
	tp_targs_uintk(w, key, len, v);
}

#define PUT_ENUM(w, key, t, v) put_enum((w), key, sizeof(key) - 1, (t), (v))

static void put_ints(struct tp_targs *w, const char *key, size_t key_len,
		     const int32_t *v, unsigned n)
{
	unsigned i;

	tp_targs_openk(w, key, key_len, 0);
	for (i = 0; i < n; i++)
		tp_targs_int(w, NULL, v[i]);
	tp_targs_close(w);
}

/* "key":[dims] when the descriptor was read. */
static void put_dims(struct tp_targs *w, const char *key, size_t key_len,
		     const struct tp_cudnn_tensor *t)
{
	if (!t->nb)
		return;
	put_ints(w, key, key_len, t->dim, t->nb);
}

#define PUT_DIMS(w, key, t) put_dims((w), key, sizeof(key) - 1, (t))

static void put_dtype(struct tp_targs *w, const struct tp_cudnn_tensor *t)
{
	if (!t->nb || t->dtype == TP_CUDNN_NO_ENUM)
		return;
	PUT_ENUM(w, "dtype", NAMES(dtypes), t->dtype);
}

static void put_bytes(struct tp_targs *w, const struct tp_event *e)
{
	tp_targs_uint(w, "workspace bytes", e->a.raw[TP_CUDNN_WS]);
}

/* 2 * N * K * prod(output spatial) * (C / groups) * prod(filter spatial),
 * the multiply-adds of the forward pass, counted for each direction.
 * 0 when a shape is missing, inconsistent or the count overflows. */
static uint64_t conv_flops(const struct tp_cudnn_conv *c)
{
	const struct tp_cudnn_tensor *x = &c->x, *w = &c->w, *y = &c->y;
	uint64_t f = 2;
	unsigned i;

	if (!x->nb || x->nb != w->nb || x->nb != y->nb || x->nb < 3 ||
	    c->groups < 1)
		return 0;
	for (i = 0; i < x->nb; i++)
		if (x->dim[i] < 1 || w->dim[i] < 1 || y->dim[i] < 1)
			return 0;
	if (x->dim[1] % c->groups)
		return 0;
	if (__builtin_mul_overflow(f, (uint64_t)x->dim[0], &f) ||
	    __builtin_mul_overflow(f, (uint64_t)w->dim[0], &f) ||
	    __builtin_mul_overflow(f, (uint64_t)(x->dim[1] / c->groups), &f))
		return 0;
	for (i = 2; i < x->nb; i++)
		if (__builtin_mul_overflow(f, (uint64_t)y->dim[i], &f) ||
		    __builtin_mul_overflow(f, (uint64_t)w->dim[i], &f))
			return 0;
	return f;
}

static void put_geometry(struct tp_targs *w, const struct tp_cudnn_conv *c)
{
	if (!c->spatial)
		return;
	put_ints(w, "pad", 3, c->pad, c->spatial);
	put_ints(w, "stride", 6, c->stride, c->spatial);
	put_ints(w, "dilation", 8, c->dilation, c->spatial);
	if (c->mode != TP_CUDNN_NO_ENUM)
		PUT_ENUM(w, "mode", NAMES(conv_modes), c->mode);
	if (c->compute != TP_CUDNN_NO_ENUM)
		PUT_ENUM(w, "compute type", NAMES(dtypes), c->compute);
}

static void fmt_conv(struct tp_targs *w, const struct tp_event *e)
{
	const struct tp_cudnn_conv *c = tp_event_ext(e);
	uint64_t flops = conv_flops(c);

	put_common(w, e);
	PUT_DIMS(w, "x", &c->x);
	PUT_DIMS(w, "w", &c->w);
	PUT_DIMS(w, "y", &c->y);
	/* The data type of the first tensor that was read. */
	put_dtype(w, c->x.nb ? &c->x : c->w.nb ? &c->w : &c->y);
	put_geometry(w, c);
	if (c->groups)
		tp_targs_uint(w, "groups", (uint64_t)c->groups);
	tp_targs_int(w, "algo", c->algo);
	put_bytes(w, e);
	if (flops)
		tp_targs_uint(w, "flops", flops);
}

static void fmt_backend(struct tp_targs *w, const struct tp_event *e)
{
	put_common(w, e);
	tp_targs_ptr(w, "plan", e->a.raw[TP_CUDNN_DESC]);
	tp_targs_ptr(w, "variant pack", e->a.raw[TP_CUDNN_MORE]);
	if (e->a.raw[TP_CUDNN_WS] != TP_CUDNN_UNKNOWN)
		put_bytes(w, e);
}

/* Batch-norm, normalization, softmax, RNN, attention: the enums each
 * family has, under the same keys. */
struct op_names {
	const char *x_key;
	size_t x_len;
	struct names mode, ops, algo;
};

static void put_op_enum(struct tp_targs *w, const char *key, size_t len,
			struct names t, uint32_t v)
{
	if (v == TP_CUDNN_NO_MODE)
		return;
	put_enum(w, key, len, t, v);
}

static void put_op(struct tp_targs *w, const struct tp_event *e,
		   const struct op_names *n)
{
	const struct tp_cudnn_op *o = tp_event_ext(e);

	put_common(w, e);
	put_dims(w, n->x_key, n->x_len, &o->x);
	put_dtype(w, &o->x);
	put_op_enum(w, "mode", 4, n->mode, o->mode);
	put_op_enum(w, "ops", 3, n->ops, o->ops);
	put_op_enum(w, "algo", 4, n->algo, o->algo);
	if (o->has & TP_CUDNN_HAS_IDX)
		tp_targs_int(w, "curr idx", o->idx);
	if (o->has & TP_CUDNN_HAS_WS)
		put_bytes(w, e);
	if (o->has & TP_CUDNN_HAS_RESERVE)
		tp_targs_uint(w, "reserve bytes", e->a.raw[TP_CUDNN_RESERVE]);
}

static void fmt_bn(struct tp_targs *w, const struct tp_event *e)
{
	static const struct op_names n = {
		"x", 1, NAMES(bn_modes), NAMES(bn_ops), NO_NAMES,
	};

	put_op(w, e, &n);
}

static void fmt_norm(struct tp_targs *w, const struct tp_event *e)
{
	static const struct op_names n = {
		"x", 1, NAMES(norm_modes), NAMES(norm_ops), NAMES(norm_algos),
	};

	put_op(w, e, &n);
}

static void fmt_softmax(struct tp_targs *w, const struct tp_event *e)
{
	static const struct op_names n = {
		"x", 1, NAMES(softmax_modes), NO_NAMES, NAMES(softmax_algos),
	};

	put_op(w, e, &n);
}

/* RNN and attention: their descriptor and weight-space bytes too. */
static void put_seq(struct tp_targs *w, const struct tp_event *e,
		    const struct op_names *n, const char *desc_key,
		    size_t desc_len)
{
	put_op(w, e, n);
	tp_targs_ptrk(w, desc_key, desc_len, e->a.raw[TP_CUDNN_DESC]);
	tp_targs_uint(w, "weight bytes", e->a.raw[TP_CUDNN_MORE]);
}

static void fmt_rnn(struct tp_targs *w, const struct tp_event *e)
{
	static const struct op_names fwd = {
		"x", 1, NAMES(fwd_modes), NO_NAMES, NO_NAMES,
	};
	static const struct op_names bwd = {
		"x", 1, NAMES(wgrad_modes), NO_NAMES, NO_NAMES,
	};

	put_seq(w, e, e->api == TP_CUDNN_ID(RNN_FWD) ? &fwd : &bwd, "rnn", 3);
}

static void fmt_attn(struct tp_targs *w, const struct tp_event *e)
{
	static const struct op_names n = {
		"q", 1, NAMES(wgrad_modes), NO_NAMES, NO_NAMES,
	};

	put_seq(w, e, &n, "attn", 4);
}

static const struct tp_api cudnn_apis[] = {
#define X(id, nm, fmt) { .name = nm, .cat = "cudnn", .args = fmt_##fmt },
	TP_CUDNN_APIS(X)
#undef X
};

void tp_cudnn_register(void)
{
	tp_api_register(TP_TABLE_CUDNN, cudnn_apis, TP_CUDNN_N);
}
