/* hooks/cudnn/: the cudnn hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* cuDNN convolutions (the legacy API: what frameworks without the graph
 * API call, and cuDNN's own convolution samples).
 *
 * Each record carries its three tensors under the same names in every
 * direction: x the input activation (dx in BackwardData), w the filter
 * (dw in BackwardFilter), y the output (dy in both backward ones), so the
 * writer counts the same FLOPs for the three passes of one layer. */
#include <string.h>

#include <cudnn.h>

#include "cudnn_apis.h"
#include "hooks/lib_hook.h"

#define CUDNN_HOOK(name, id, n_ext, params, args, ...)                   \
	TP_LIB_HOOK(cudnnStatus_t, name, tp_libs_cudnn, TP_SRC_CUDNN,    \
		    TP_CUDNN_ID(id), n_ext, CUDNN_STATUS_NOT_INITIALIZED, \
		    params, args, __VA_ARGS__)

/* What cudnnGetConvolutionNdDescriptor may return: CUDNN_DIM_MAX - 2. */
#define CONV_MAX_SPATIAL (TP_CUDNN_DIMS - 2)

static __typeof__(cudnnGetFilterNdDescriptor) *real_cudnnGetFilterNdDescriptor;
static __typeof__(cudnnGetConvolutionNdDescriptor)
	*real_cudnnGetConvolutionNdDescriptor;
static __typeof__(cudnnGetConvolutionGroupCount)
	*real_cudnnGetConvolutionGroupCount;

/* Dims in KCRS order whatever the format, as for tensors. */
static void read_filter(struct tp_cudnn_tensor *t, cudnnFilterDescriptor_t d)
{
	cudnnTensorFormat_t fmt;
	cudnnDataType_t dt;
	int nb = 0;

	t->nb = 0;
	t->dtype = TP_CUDNN_NO_ENUM;
	if (!d || !TP_REAL_OK(cudnnGetFilterNdDescriptor, tp_libs_cudnn))
		return;
	if (TP_REAL(cudnnGetFilterNdDescriptor)(d, TP_CUDNN_DIMS, &dt, &fmt, &nb,
					    t->dim) != CUDNN_STATUS_SUCCESS)
		return;
	if (nb < 1 || nb > TP_CUDNN_DIMS)
		return;
	t->nb = (uint8_t)nb;
	t->dtype = tp_cudnn_enum8(dt);
}

/* The getter copies only as many values as asked for and reports the
 * real length: ask for the most there can be, keep up to 3 (cuDNN's
 * convolutions are 1D to 3D); anything longer is left unknown. */
static void read_geometry(struct tp_cudnn_conv *c,
			  cudnnConvolutionDescriptor_t d)
{
	int n = 0, pad[CONV_MAX_SPATIAL], stride[CONV_MAX_SPATIAL],
	    dil[CONV_MAX_SPATIAL];
	cudnnConvolutionMode_t mode;
	cudnnDataType_t compute;
	size_t len;

	if (!TP_REAL_OK(cudnnGetConvolutionNdDescriptor, tp_libs_cudnn))
		return;
	if (TP_REAL(cudnnGetConvolutionNdDescriptor)(d, CONV_MAX_SPATIAL, &n, pad,
						 stride, dil, &mode,
						 &compute) !=
	    CUDNN_STATUS_SUCCESS)
		return;
	if (n < 1 || n > TP_CUDNN_SPATIAL)
		return;
	len = (size_t)n * sizeof(int);
	memcpy(c->pad, pad, len);
	memcpy(c->stride, stride, len);
	memcpy(c->dilation, dil, len);
	c->spatial = (uint8_t)n;
	c->mode = tp_cudnn_enum8(mode);
	c->compute = tp_cudnn_enum8(compute);
}

static void read_conv(struct tp_cudnn_conv *c, cudnnConvolutionDescriptor_t d)
{
	int groups = 0;

	c->spatial = 0;
	c->groups = 0;
	c->mode = TP_CUDNN_NO_ENUM;
	c->compute = TP_CUDNN_NO_ENUM;
	if (!d)
		return;
	read_geometry(c, d);
	if (!TP_REAL_OK(cudnnGetConvolutionGroupCount, tp_libs_cudnn))
		return;
	if (TP_REAL(cudnnGetConvolutionGroupCount)(d, &groups) ==
	    CUDNN_STATUS_SUCCESS && groups >= 1)
		c->groups = groups;
}

/* Read on the stack (4 getters), then copied into the two extension
 * slots, which may wrap around the end of the ring. */
static void fill_conv(struct tp_rec *r, struct tp_event *e, cudnnHandle_t h,
		      cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
		      cudnnConvolutionDescriptor_t cd,
		      cudnnTensorDescriptor_t y, int algo, size_t ws)
{
	struct tp_cudnn_conv c;
	int was = tp_cudnn_quiet(r);

	tp_cudnn_read_tensor(&c.x, x);
	read_filter(&c.w, w);
	tp_cudnn_read_tensor(&c.y, y);
	read_conv(&c, cd);
	tp_cudnn_loud(r, was);
	c.algo = algo;
	c.unused = 0;
	tp_rec_ext_copy(r, 0, &c, sizeof(c));
	e->a.raw[TP_CUDNN_HANDLE] = (uintptr_t)h;
	e->a.raw[TP_CUDNN_WS] = ws;
	e->a.raw[TP_CUDNN_RESERVE] = 0;
	e->a.raw[TP_CUDNN_DESC] = 0;
	e->a.raw[TP_CUDNN_MORE] = 0;
}

CUDNN_HOOK(cudnnConvolutionForward, CONV_FWD, TP_CUDNN_CONV_SLOTS,
	(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
	 const void *x, const cudnnFilterDescriptor_t wd, const void *w,
	 const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
	 void *ws, size_t ws_bytes, const void *beta,
	 const cudnnTensorDescriptor_t yd, void *y),
	(h, alpha, xd, x, wd, w, cd, algo, ws, ws_bytes, beta, yd, y), {
		fill_conv(&tp_call.r, e, h, xd, wd, cd, yd, (int)algo, ws_bytes);
	})

CUDNN_HOOK(cudnnConvolutionBackwardData, CONV_BWD_DATA, TP_CUDNN_CONV_SLOTS,
	(cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd,
	 const void *w, const cudnnTensorDescriptor_t dyd, const void *dy,
	 const cudnnConvolutionDescriptor_t cd,
	 cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t ws_bytes,
	 const void *beta, const cudnnTensorDescriptor_t dxd, void *dx),
	(h, alpha, wd, w, dyd, dy, cd, algo, ws, ws_bytes, beta, dxd, dx), {
		fill_conv(&tp_call.r, e, h, dxd, wd, cd, dyd, (int)algo, ws_bytes);
	})

CUDNN_HOOK(cudnnConvolutionBackwardFilter, CONV_BWD_FILTER,
	TP_CUDNN_CONV_SLOTS,
	(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
	 const void *x, const cudnnTensorDescriptor_t dyd, const void *dy,
	 const cudnnConvolutionDescriptor_t cd,
	 cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t ws_bytes,
	 const void *beta, const cudnnFilterDescriptor_t dwd, void *dw),
	(h, alpha, xd, x, dyd, dy, cd, algo, ws, ws_bytes, beta, dwd, dw), {
		fill_conv(&tp_call.r, e, h, xd, dwd, cd, dyd, (int)algo, ws_bytes);
	})

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias): z and bias are not
 * recorded (z has y's shape, bias is 1xKx1x1). */
CUDNN_HOOK(cudnnConvolutionBiasActivationForward, CONV_BIAS_ACT,
	TP_CUDNN_CONV_SLOTS,
	(cudnnHandle_t h, const void *alpha1, const cudnnTensorDescriptor_t xd,
	 const void *x, const cudnnFilterDescriptor_t wd, const void *w,
	 const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
	 void *ws, size_t ws_bytes, const void *alpha2,
	 const cudnnTensorDescriptor_t zd, const void *z,
	 const cudnnTensorDescriptor_t bd, const void *bias,
	 const cudnnActivationDescriptor_t act,
	 const cudnnTensorDescriptor_t yd, void *y),
	(h, alpha1, xd, x, wd, w, cd, algo, ws, ws_bytes, alpha2, zd, z, bd,
	 bias, act, yd, y), {
		fill_conv(&tp_call.r, e, h, xd, wd, cd, yd, (int)algo, ws_bytes);
	})
