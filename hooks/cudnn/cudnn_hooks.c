/* hooks/cudnn/: the cudnn hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* cuDNN: the graph API's execute, batch-norm and normalization, softmax,
 * RNN and multi-head attention. Convolutions are in cudnn_conv.c.
 *
 * Shapes are read from the descriptors after the real call returned (a
 * call does not change its descriptors), with cuDNN's own getters: a few
 * tens of ns each, against calls that launch kernels. */
#include <cudnn.h>

#include "cudnn_apis.h"
#include "hooks/lib_hook.h"

_Static_assert(sizeof(int) == sizeof(int32_t), "dims are read as int");


#define CUDNN_HOOK(name, id, n_ext, params, args, ...)                   \
	TP_LIB_HOOK(cudnnStatus_t, name, tp_libs_cudnn, TP_SRC_CUDNN,    \
		    TP_CUDNN_ID(id), n_ext, CUDNN_STATUS_NOT_INITIALIZED, \
		    params, args, __VA_ARGS__)

#define PTR(p) ((uint64_t)(uintptr_t)(p))

static __typeof__(cudnnGetTensorNdDescriptor) *real_cudnnGetTensorNdDescriptor;
static __typeof__(cudnnGetRNNDataDescriptor) *real_cudnnGetRNNDataDescriptor;
static __typeof__(cudnnGetSeqDataDescriptor) *real_cudnnGetSeqDataDescriptor;
static __typeof__(cudnnBackendGetAttribute) *real_cudnnBackendGetAttribute;

static void no_tensor(struct tp_cudnn_tensor *t)
{
	t->nb = 0;
	t->dtype = TP_CUDNN_NO_ENUM;
}

void tp_cudnn_read_tensor(struct tp_cudnn_tensor *t,
			  cudnnTensorDescriptor_t desc)
{
	cudnnDataType_t dt;
	int nb = 0, strides[TP_CUDNN_DIMS];

	no_tensor(t);
	if (!desc || !TP_REAL_OK(cudnnGetTensorNdDescriptor, tp_libs_cudnn))
		return;
	if (TP_REAL(cudnnGetTensorNdDescriptor)(desc, TP_CUDNN_DIMS, &dt, &nb,
					    t->dim, strides) !=
	    CUDNN_STATUS_SUCCESS)
		return;
	if (nb < 1 || nb > TP_CUDNN_DIMS)
		return;
	t->nb = (uint8_t)nb;
	t->dtype = tp_cudnn_enum8(dt);
}

/* [maxSeqLength, batchSize, vectorSize]; the per-sequence lengths are
 * not read (batchSize of them). */
static void read_rnn_data(struct tp_cudnn_tensor *t,
			  cudnnRNNDataDescriptor_t desc)
{
	cudnnRNNDataLayout_t layout;
	cudnnDataType_t dt;
	double fill;	/* written in the data type: 8 bytes at most */

	no_tensor(t);
	if (!desc || !TP_REAL_OK(cudnnGetRNNDataDescriptor, tp_libs_cudnn))
		return;
	if (TP_REAL(cudnnGetRNNDataDescriptor)(desc, &dt, &layout, &t->dim[0],
					   &t->dim[1], &t->dim[2], 0, NULL,
					   &fill) != CUDNN_STATUS_SUCCESS)
		return;
	t->nb = 3;
	t->dtype = tp_cudnn_enum8(dt);
}

/* The dims indexed by cudnnSeqDataAxis_t: [time, batch, beam, vect]. */
static void read_seq_data(struct tp_cudnn_tensor *t,
			  cudnnSeqDataDescriptor_t desc)
{
	cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT];
	cudnnDataType_t dt;
	size_t nseq = 0;
	double fill;
	int nb = 0;

	no_tensor(t);
	if (!desc || !TP_REAL_OK(cudnnGetSeqDataDescriptor, tp_libs_cudnn))
		return;
	if (TP_REAL(cudnnGetSeqDataDescriptor)(desc, &dt, &nb,
					   CUDNN_SEQDATA_DIM_COUNT, t->dim,
					   axes, &nseq, 0, NULL,
					   &fill) != CUDNN_STATUS_SUCCESS)
		return;
	if (nb != CUDNN_SEQDATA_DIM_COUNT)
		return;
	t->nb = (uint8_t)nb;
	t->dtype = tp_cudnn_enum8(dt);
}

/* One extension slot; the caller fills x (between quiet and loud). */
static struct tp_cudnn_op *op_rec(struct tp_rec *r, struct tp_event *e,
				  cudnnHandle_t h, uint32_t has)
{
	struct tp_cudnn_op *o = tp_rec_ext(r, 1);

	e->a.raw[TP_CUDNN_HANDLE] = PTR(h);
	e->a.raw[TP_CUDNN_WS] = 0;
	e->a.raw[TP_CUDNN_RESERVE] = 0;
	e->a.raw[TP_CUDNN_DESC] = 0;
	e->a.raw[TP_CUDNN_MORE] = 0;
	o->mode = TP_CUDNN_NO_MODE;
	o->ops = TP_CUDNN_NO_MODE;
	o->algo = TP_CUDNN_NO_MODE;
	o->idx = 0;
	o->has = has;
	return o;
}

static struct tp_cudnn_op *tensor_op(struct tp_rec *r, struct tp_event *e,
				     cudnnHandle_t h,
				     cudnnTensorDescriptor_t xdesc,
				     uint32_t has)
{
	struct tp_cudnn_op *o = op_rec(r, e, h, has);
	int was = tp_cudnn_quiet(r);

	tp_cudnn_read_tensor(&o->x, xdesc);
	tp_cudnn_loud(r, was);
	return o;
}

static void sizes(struct tp_event *e, size_t ws, size_t reserve)
{
	e->a.raw[TP_CUDNN_WS] = ws;
	e->a.raw[TP_CUDNN_RESERVE] = reserve;
}

/* Graph API (PyTorch, cudnn-frontend). The plan's workspace size is one
 * attribute read of a finalized plan; nothing in the variant pack is
 * read (its tensors are device pointers keyed by uid). */
static uint64_t plan_workspace(struct tp_rec *r, cudnnBackendDescriptor_t p)
{
	int64_t n = 0, ws = -1;
	cudnnStatus_t st;
	int was;

	if (!p || !TP_REAL_OK(cudnnBackendGetAttribute, tp_libs_cudnn))
		return TP_CUDNN_UNKNOWN;
	was = tp_cudnn_quiet(r);
	st = TP_REAL(cudnnBackendGetAttribute)(p,
			CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
			CUDNN_TYPE_INT64, 1, &n, &ws);
	tp_cudnn_loud(r, was);
	if (st != CUDNN_STATUS_SUCCESS || ws < 0)
		return TP_CUDNN_UNKNOWN;
	return (uint64_t)ws;
}

CUDNN_HOOK(cudnnBackendExecute, BACKEND_EXECUTE, 0,
	(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
	 cudnnBackendDescriptor_t pack),
	(h, plan, pack), {
		e->a.raw[TP_CUDNN_HANDLE] = PTR(h);
		e->a.raw[TP_CUDNN_WS] = plan_workspace(&tp_call.r, plan);
		e->a.raw[TP_CUDNN_RESERVE] = 0;
		e->a.raw[TP_CUDNN_DESC] = PTR(plan);
		e->a.raw[TP_CUDNN_MORE] = PTR(pack);
	})

/* Batch normalization (deprecated in cuDNN 9, still what older
 * frameworks call). */
CUDNN_HOOK(cudnnBatchNormalizationForwardTraining, BN_FWD_TRAIN, 1,
	(cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha,
	 const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
	 const cudnnTensorDescriptor_t yd, void *y,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 const void *bias, double factor, void *rmean, void *rvar,
	 double eps, void *smean, void *sinvvar),
	(h, mode, alpha, beta, xd, x, yd, y, sd, scale, bias, factor, rmean,
	 rvar, eps, smean, sinvvar), {
		tensor_op(&tp_call.r, e, h, xd, 0)->mode = (uint32_t)mode;
	})

CUDNN_HOOK(cudnnBatchNormalizationForwardTrainingEx, BN_FWD_TRAIN_EX, 1,
	(cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
	 const void *alpha, const void *beta,
	 const cudnnTensorDescriptor_t xd, const void *x,
	 const cudnnTensorDescriptor_t zd, const void *z,
	 const cudnnTensorDescriptor_t yd, void *y,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 const void *bias, double factor, void *rmean, void *rvar,
	 double eps, void *smean, void *sinvvar,
	 cudnnActivationDescriptor_t act, void *ws, size_t ws_bytes,
	 void *rs, size_t rs_bytes),
	(h, mode, ops, alpha, beta, xd, x, zd, z, yd, y, sd, scale, bias,
	 factor, rmean, rvar, eps, smean, sinvvar, act, ws, ws_bytes, rs,
	 rs_bytes), {
		struct tp_cudnn_op *o = tensor_op(&tp_call.r, e, h, xd,
				TP_CUDNN_HAS_WS | TP_CUDNN_HAS_RESERVE);

		o->mode = (uint32_t)mode;
		o->ops = (uint32_t)ops;
		sizes(e, ws_bytes, rs_bytes);
	})

CUDNN_HOOK(cudnnBatchNormalizationForwardInference, BN_FWD_INFER, 1,
	(cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *alpha,
	 const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
	 const cudnnTensorDescriptor_t yd, void *y,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 const void *bias, const void *mean, const void *var, double eps),
	(h, mode, alpha, beta, xd, x, yd, y, sd, scale, bias, mean, var, eps), {
		tensor_op(&tp_call.r, e, h, xd, 0)->mode = (uint32_t)mode;
	})

CUDNN_HOOK(cudnnBatchNormalizationBackward, BN_BWD, 1,
	(cudnnHandle_t h, cudnnBatchNormMode_t mode, const void *ad,
	 const void *bd, const void *ap, const void *bp,
	 const cudnnTensorDescriptor_t xd, const void *x,
	 const cudnnTensorDescriptor_t dyd, const void *dy,
	 const cudnnTensorDescriptor_t dxd, void *dx,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 void *dscale, void *dbias, double eps, const void *smean,
	 const void *sinvvar),
	(h, mode, ad, bd, ap, bp, xd, x, dyd, dy, dxd, dx, sd, scale, dscale,
	 dbias, eps, smean, sinvvar), {
		tensor_op(&tp_call.r, e, h, xd, 0)->mode = (uint32_t)mode;
	})

CUDNN_HOOK(cudnnBatchNormalizationBackwardEx, BN_BWD_EX, 1,
	(cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
	 const void *ad, const void *bd, const void *ap, const void *bp,
	 const cudnnTensorDescriptor_t xd, const void *x,
	 const cudnnTensorDescriptor_t yd, const void *y,
	 const cudnnTensorDescriptor_t dyd, const void *dy,
	 const cudnnTensorDescriptor_t dzd, void *dz,
	 const cudnnTensorDescriptor_t dxd, void *dx,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 const void *bias, void *dscale, void *dbias, double eps,
	 const void *smean, const void *sinvvar,
	 cudnnActivationDescriptor_t act, void *ws, size_t ws_bytes,
	 void *rs, size_t rs_bytes),
	(h, mode, ops, ad, bd, ap, bp, xd, x, yd, y, dyd, dy, dzd, dz, dxd,
	 dx, sd, scale, bias, dscale, dbias, eps, smean, sinvvar, act, ws,
	 ws_bytes, rs, rs_bytes), {
		struct tp_cudnn_op *o = tensor_op(&tp_call.r, e, h, xd,
				TP_CUDNN_HAS_WS | TP_CUDNN_HAS_RESERVE);

		o->mode = (uint32_t)mode;
		o->ops = (uint32_t)ops;
		sizes(e, ws_bytes, rs_bytes);
	})

/* Normalization: the per-channel / per-activation generalization. */
static void norm(struct tp_rec *r, struct tp_event *e, cudnnHandle_t h,
		 cudnnTensorDescriptor_t xd, cudnnNormMode_t mode,
		 cudnnNormOps_t ops, cudnnNormAlgo_t algo, uint32_t has)
{
	struct tp_cudnn_op *o = tensor_op(r, e, h, xd, has);

	o->mode = (uint32_t)mode;
	o->ops = (uint32_t)ops;
	o->algo = (uint32_t)algo;
}

CUDNN_HOOK(cudnnNormalizationForwardTraining, NORM_FWD_TRAIN, 1,
	(cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops,
	 cudnnNormAlgo_t algo, const void *alpha, const void *beta,
	 const cudnnTensorDescriptor_t xd, const void *x,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 const void *bias, double factor, const cudnnTensorDescriptor_t mvd,
	 void *rmean, void *rvar, double eps, void *smean, void *sinvvar,
	 cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t zd,
	 const void *z, const cudnnTensorDescriptor_t yd, void *y, void *ws,
	 size_t ws_bytes, void *rs, size_t rs_bytes, int groups),
	(h, mode, ops, algo, alpha, beta, xd, x, sd, scale, bias, factor, mvd,
	 rmean, rvar, eps, smean, sinvvar, act, zd, z, yd, y, ws, ws_bytes, rs,
	 rs_bytes, groups), {
		norm(&tp_call.r, e, h, xd, mode, ops, algo,
		     TP_CUDNN_HAS_WS | TP_CUDNN_HAS_RESERVE);
		sizes(e, ws_bytes, rs_bytes);
	})

CUDNN_HOOK(cudnnNormalizationForwardInference, NORM_FWD_INFER, 1,
	(cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops,
	 cudnnNormAlgo_t algo, const void *alpha, const void *beta,
	 const cudnnTensorDescriptor_t xd, const void *x,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 const void *bias, const cudnnTensorDescriptor_t mvd,
	 const void *mean, const void *var, const cudnnTensorDescriptor_t zd,
	 const void *z, cudnnActivationDescriptor_t act,
	 const cudnnTensorDescriptor_t yd, void *y, double eps, int groups),
	(h, mode, ops, algo, alpha, beta, xd, x, sd, scale, bias, mvd, mean,
	 var, zd, z, act, yd, y, eps, groups), {
		norm(&tp_call.r, e, h, xd, mode, ops, algo, 0);
	})

CUDNN_HOOK(cudnnNormalizationBackward, NORM_BWD, 1,
	(cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops,
	 cudnnNormAlgo_t algo, const void *ad, const void *bd,
	 const void *ap, const void *bp, const cudnnTensorDescriptor_t xd,
	 const void *x, const cudnnTensorDescriptor_t yd, const void *y,
	 const cudnnTensorDescriptor_t dyd, const void *dy,
	 const cudnnTensorDescriptor_t dzd, void *dz,
	 const cudnnTensorDescriptor_t dxd, void *dx,
	 const cudnnTensorDescriptor_t sd, const void *scale,
	 const void *bias, void *dscale, void *dbias, double eps,
	 const cudnnTensorDescriptor_t mvd, const void *smean,
	 const void *sinvvar, cudnnActivationDescriptor_t act, void *ws,
	 size_t ws_bytes, void *rs, size_t rs_bytes, int groups),
	(h, mode, ops, algo, ad, bd, ap, bp, xd, x, yd, y, dyd, dy, dzd, dz,
	 dxd, dx, sd, scale, bias, dscale, dbias, eps, mvd, smean, sinvvar,
	 act, ws, ws_bytes, rs, rs_bytes, groups), {
		norm(&tp_call.r, e, h, xd, mode, ops, algo,
		     TP_CUDNN_HAS_WS | TP_CUDNN_HAS_RESERVE);
		sizes(e, ws_bytes, rs_bytes);
	})

/* Softmax: x is the input forward, dx backward (as for convolutions). */
static void softmax(struct tp_rec *r, struct tp_event *e, cudnnHandle_t h,
		    cudnnTensorDescriptor_t xd, cudnnSoftmaxAlgorithm_t algo,
		    cudnnSoftmaxMode_t mode)
{
	struct tp_cudnn_op *o = tensor_op(r, e, h, xd, 0);

	o->mode = (uint32_t)mode;
	o->algo = (uint32_t)algo;
}

CUDNN_HOOK(cudnnSoftmaxForward, SOFTMAX_FWD, 1,
	(cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo,
	 cudnnSoftmaxMode_t mode, const void *alpha,
	 const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
	 const cudnnTensorDescriptor_t yd, void *y),
	(h, algo, mode, alpha, xd, x, beta, yd, y), {
		softmax(&tp_call.r, e, h, xd, algo, mode);
	})

CUDNN_HOOK(cudnnSoftmaxBackward, SOFTMAX_BWD, 1,
	(cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo,
	 cudnnSoftmaxMode_t mode, const void *alpha,
	 const cudnnTensorDescriptor_t yd, const void *y,
	 const cudnnTensorDescriptor_t dyd, const void *dy, const void *beta,
	 const cudnnTensorDescriptor_t dxd, void *dx),
	(h, algo, mode, alpha, yd, y, dyd, dy, beta, dxd, dx), {
		softmax(&tp_call.r, e, h, dxd, algo, mode);
	})

/* RNN: the sizes passed, and x's RNN data descriptor. */
static struct tp_cudnn_op *rnn(struct tp_rec *r, struct tp_event *e,
			       cudnnHandle_t h, cudnnRNNDescriptor_t rd,
			       cudnnRNNDataDescriptor_t xd, size_t wbytes,
			       size_t ws, size_t rs)
{
	struct tp_cudnn_op *o = op_rec(r, e, h, TP_CUDNN_HAS_WS |
				       TP_CUDNN_HAS_RESERVE);
	int was = tp_cudnn_quiet(r);

	read_rnn_data(&o->x, xd);
	tp_cudnn_loud(r, was);
	sizes(e, ws, rs);
	e->a.raw[TP_CUDNN_DESC] = PTR(rd);
	e->a.raw[TP_CUDNN_MORE] = wbytes;
	return o;
}

CUDNN_HOOK(cudnnRNNForward, RNN_FWD, 1,
	(cudnnHandle_t h, cudnnRNNDescriptor_t rd, cudnnForwardMode_t mode,
	 const int32_t seqlens[], cudnnRNNDataDescriptor_t xd, const void *x,
	 cudnnRNNDataDescriptor_t yd, void *y, cudnnTensorDescriptor_t hd,
	 const void *hx, void *hy, cudnnTensorDescriptor_t cd,
	 const void *cx, void *cy, size_t wbytes, const void *w,
	 size_t ws_bytes, void *ws, size_t rs_bytes, void *rs),
	(h, rd, mode, seqlens, xd, x, yd, y, hd, hx, hy, cd, cx, cy, wbytes,
	 w, ws_bytes, ws, rs_bytes, rs), {
		rnn(&tp_call.r, e, h, rd, xd, wbytes, ws_bytes, rs_bytes)->mode =
			(uint32_t)mode;
	})

CUDNN_HOOK(cudnnRNNBackwardData_v8, RNN_BWD_DATA, 1,
	(cudnnHandle_t h, cudnnRNNDescriptor_t rd, const int32_t seqlens[],
	 cudnnRNNDataDescriptor_t yd, const void *y, const void *dy,
	 cudnnRNNDataDescriptor_t xd, void *dx, cudnnTensorDescriptor_t hd,
	 const void *hx, const void *dhy, void *dhx,
	 cudnnTensorDescriptor_t cd, const void *cx, const void *dcy,
	 void *dcx, size_t wbytes, const void *w, size_t ws_bytes, void *ws,
	 size_t rs_bytes, void *rs),
	(h, rd, seqlens, yd, y, dy, xd, dx, hd, hx, dhy, dhx, cd, cx, dcy, dcx,
	 wbytes, w, ws_bytes, ws, rs_bytes, rs), {
		rnn(&tp_call.r, e, h, rd, xd, wbytes, ws_bytes, rs_bytes);
	})

CUDNN_HOOK(cudnnRNNBackwardWeights_v8, RNN_BWD_WEIGHTS, 1,
	(cudnnHandle_t h, cudnnRNNDescriptor_t rd, cudnnWgradMode_t mode,
	 const int32_t seqlens[], cudnnRNNDataDescriptor_t xd, const void *x,
	 cudnnTensorDescriptor_t hd, const void *hx,
	 cudnnRNNDataDescriptor_t yd, const void *y, size_t wbytes,
	 void *dw, size_t ws_bytes, void *ws, size_t rs_bytes, void *rs),
	(h, rd, mode, seqlens, xd, x, hd, hx, yd, y, wbytes, dw, ws_bytes, ws,
	 rs_bytes, rs), {
		rnn(&tp_call.r, e, h, rd, xd, wbytes, ws_bytes, rs_bytes)->mode =
			(uint32_t)mode;
	})

/* Multi-head attention (deprecated in cuDNN 9): the sizes passed and
 * the queries' (or their gradient's) sequence data dims. */
static struct tp_cudnn_op *attn(struct tp_rec *r, struct tp_event *e,
				cudnnHandle_t h, cudnnAttnDescriptor_t ad,
				cudnnSeqDataDescriptor_t qd, size_t wbytes,
				size_t ws, size_t rs)
{
	struct tp_cudnn_op *o = op_rec(r, e, h, TP_CUDNN_HAS_WS |
				       TP_CUDNN_HAS_RESERVE);
	int was = tp_cudnn_quiet(r);

	read_seq_data(&o->x, qd);
	tp_cudnn_loud(r, was);
	sizes(e, ws, rs);
	e->a.raw[TP_CUDNN_DESC] = PTR(ad);
	e->a.raw[TP_CUDNN_MORE] = wbytes;
	return o;
}

CUDNN_HOOK(cudnnMultiHeadAttnForward, MHA_FWD, 1,
	(cudnnHandle_t h, const cudnnAttnDescriptor_t ad, int idx,
	 const int lo[], const int hi[], const int sqo[], const int skv[],
	 const cudnnSeqDataDescriptor_t qd, const void *q, const void *res,
	 const cudnnSeqDataDescriptor_t kd, const void *k,
	 const cudnnSeqDataDescriptor_t vd, const void *v,
	 const cudnnSeqDataDescriptor_t od, void *o, size_t wbytes,
	 const void *w, size_t ws_bytes, void *ws, size_t rs_bytes, void *rs),
	(h, ad, idx, lo, hi, sqo, skv, qd, q, res, kd, k, vd, v, od, o, wbytes,
	 w, ws_bytes, ws, rs_bytes, rs), {
		struct tp_cudnn_op *a = attn(&tp_call.r, e, h, ad, qd, wbytes,
					     ws_bytes, rs_bytes);

		a->idx = idx;
		a->has |= TP_CUDNN_HAS_IDX;
	})

CUDNN_HOOK(cudnnMultiHeadAttnBackwardData, MHA_BWD_DATA, 1,
	(cudnnHandle_t h, const cudnnAttnDescriptor_t ad, const int lo[],
	 const int hi[], const int sqo[], const int skv[],
	 const cudnnSeqDataDescriptor_t dod, const void *dout,
	 const cudnnSeqDataDescriptor_t dqd, void *dq, const void *q,
	 const cudnnSeqDataDescriptor_t dkd, void *dk, const void *k,
	 const cudnnSeqDataDescriptor_t dvd, void *dv, const void *v,
	 size_t wbytes, const void *w, size_t ws_bytes, void *ws,
	 size_t rs_bytes, void *rs),
	(h, ad, lo, hi, sqo, skv, dod, dout, dqd, dq, q, dkd, dk, k, dvd, dv,
	 v, wbytes, w, ws_bytes, ws, rs_bytes, rs), {
		attn(&tp_call.r, e, h, ad, dqd, wbytes, ws_bytes, rs_bytes);
	})

CUDNN_HOOK(cudnnMultiHeadAttnBackwardWeights, MHA_BWD_WEIGHTS, 1,
	(cudnnHandle_t h, const cudnnAttnDescriptor_t ad,
	 cudnnWgradMode_t mode, const cudnnSeqDataDescriptor_t qd,
	 const void *q, const cudnnSeqDataDescriptor_t kd, const void *k,
	 const cudnnSeqDataDescriptor_t vd, const void *v,
	 const cudnnSeqDataDescriptor_t dod, const void *dout, size_t wbytes,
	 const void *w, void *dw, size_t ws_bytes, void *ws, size_t rs_bytes,
	 void *rs),
	(h, ad, mode, qd, q, kd, k, vd, v, dod, dout, wbytes, w, dw, ws_bytes,
	 ws, rs_bytes, rs), {
		attn(&tp_call.r, e, h, ad, qd, wbytes, ws_bytes, rs_bytes)->mode =
			(uint32_t)mode;
	})
