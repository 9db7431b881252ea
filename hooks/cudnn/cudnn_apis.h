/* hooks/cudnn/: the cudnn hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Every cuDNN entry point tprof records: X(id, name, how its args are
 * printed). Names are those libcudnn.so.9 exports (the front library that
 * applications link; it forwards to libcudnn_cnn/ops/adv/graph).
 *
 * Record layout (raw values only; the formatter in cudnn_args.c turns
 * them into args):
 *   e->a.raw[TP_CUDNN_HANDLE]  the cudnnHandle_t
 *   e->a.raw[TP_CUDNN_WS]      workspace bytes (where the call takes one)
 *   e->a.raw[TP_CUDNN_RESERVE] reserve-space bytes
 *   e->a.raw[TP_CUDNN_DESC]    backend: the plan; RNN/attention: their
 *                              descriptor
 *   e->a.raw[TP_CUDNN_MORE]    backend: the variant pack;
 *                              RNN/attention: weight-space bytes
 * and extension slots: a struct tp_cudnn_conv (2 slots: shapes,
 * geometry, algo) for convolutions, a struct tp_cudnn_op (1 slot) for
 * the others but
 * cudnnBackendExecute, which has none: its workspace bytes are the
 * plan's, TP_CUDNN_UNKNOWN when they could not be read.
 */
#ifndef TP_CUDNN_APIS_H
#define TP_CUDNN_APIS_H

#include <stdint.h>

#include <cudnn.h>

#include "record/api.h"
#include "record/event.h"
#include "record/thread.h"

#define TP_CUDNN_APIS(X)                                                 \
	X(CONV_FWD, "cudnnConvolutionForward", conv)                     \
	X(CONV_BWD_DATA, "cudnnConvolutionBackwardData", conv)           \
	X(CONV_BWD_FILTER, "cudnnConvolutionBackwardFilter", conv)       \
	X(CONV_BIAS_ACT, "cudnnConvolutionBiasActivationForward", conv)  \
	X(BACKEND_EXECUTE, "cudnnBackendExecute", backend)               \
	X(BN_FWD_TRAIN, "cudnnBatchNormalizationForwardTraining", bn)    \
	X(BN_FWD_TRAIN_EX, "cudnnBatchNormalizationForwardTrainingEx", bn) \
	X(BN_FWD_INFER, "cudnnBatchNormalizationForwardInference", bn)   \
	X(BN_BWD, "cudnnBatchNormalizationBackward", bn)                 \
	X(BN_BWD_EX, "cudnnBatchNormalizationBackwardEx", bn)            \
	X(NORM_FWD_TRAIN, "cudnnNormalizationForwardTraining", norm)     \
	X(NORM_FWD_INFER, "cudnnNormalizationForwardInference", norm)    \
	X(NORM_BWD, "cudnnNormalizationBackward", norm)                  \
	X(SOFTMAX_FWD, "cudnnSoftmaxForward", softmax)                   \
	X(SOFTMAX_BWD, "cudnnSoftmaxBackward", softmax)                  \
	X(RNN_FWD, "cudnnRNNForward", rnn)                               \
	X(RNN_BWD_DATA, "cudnnRNNBackwardData_v8", rnn)                  \
	X(RNN_BWD_WEIGHTS, "cudnnRNNBackwardWeights_v8", rnn)            \
	X(MHA_FWD, "cudnnMultiHeadAttnForward", attn)                    \
	X(MHA_BWD_DATA, "cudnnMultiHeadAttnBackwardData", attn)          \
	X(MHA_BWD_WEIGHTS, "cudnnMultiHeadAttnBackwardWeights", attn)

enum tp_cudnn_api {
#define X(id, name, fmt) TP_CUDNN_##id,
	TP_CUDNN_APIS(X)
#undef X
	TP_CUDNN_N
};

#define TP_CUDNN_ID(id) TP_API_ID(TP_TABLE_CUDNN, TP_CUDNN_##id)

/* Indexes into e->a.raw. */
enum {
	TP_CUDNN_HANDLE,
	TP_CUDNN_WS,
	TP_CUDNN_RESERVE,
	TP_CUDNN_DESC,
	TP_CUDNN_MORE,
};

/* A size that could not be read (the plan's workspace). */
#define TP_CUDNN_UNKNOWN UINT64_MAX

/* A tensor, filter or RNN/sequence data descriptor as read at call time.
 * nb == 0: not known (NULL descriptor, or the getter failed). */
#define TP_CUDNN_DIMS 8			/* CUDNN_DIM_MAX */
/* An enum that is unknown, or too big for a byte. */
#define TP_CUDNN_NO_ENUM 0xffu

struct tp_cudnn_tensor {
	int32_t dim[TP_CUDNN_DIMS];
	uint8_t nb;
	uint8_t dtype;			/* cudnnDataType_t */
	uint8_t pad[2];
};

/* A convolution: its three tensors in the API's order of meaning (x the
 * input activation, w the filter, y the output; dx/dw/dy in the backward
 * directions) and the convolution descriptor. */
#define TP_CUDNN_SPATIAL 3		/* 1D to 3D convolutions */

struct tp_cudnn_conv {
	struct tp_cudnn_tensor x, w, y;
	int32_t pad[TP_CUDNN_SPATIAL];
	int32_t stride[TP_CUDNN_SPATIAL];
	int32_t dilation[TP_CUDNN_SPATIAL];
	int32_t groups;			/* 0: not known */
	int32_t algo;
	uint8_t spatial;		/* pad/stride/dilation; 0: unknown */
	uint8_t mode;			/* cudnnConvolutionMode_t */
	uint8_t compute;		/* cudnnDataType_t */
	uint8_t unused;
};

#define TP_CUDNN_CONV_SLOTS 2
_Static_assert(sizeof(struct tp_cudnn_conv) <=
	       TP_CUDNN_CONV_SLOTS * TP_EV_SLOT_BYTES,
	       "tp_cudnn_conv does not fit its extension slots");

/* Batch-norm, normalization, softmax, RNN, attention: `x` is the data
 * tensor (RNN: [maxSeqLength, batchSize, vectorSize] of the RNN data
 * descriptor; attention: the queries' sequence data dims, indexed by
 * cudnnSeqDataAxis_t). Enums are TP_CUDNN_NO_MODE where the call has no
 * such argument; `has` says which of the raw sizes apply. */
#define TP_CUDNN_NO_MODE 0xffffffffu
#define TP_CUDNN_HAS_WS 1u		/* e->a.raw[TP_CUDNN_WS] */
#define TP_CUDNN_HAS_RESERVE 2u		/* e->a.raw[TP_CUDNN_RESERVE] */
#define TP_CUDNN_HAS_IDX 4u		/* idx */

struct tp_cudnn_op {
	struct tp_cudnn_tensor x;
	uint32_t mode;
	uint32_t ops;
	uint32_t algo;
	int32_t idx;			/* attention forward: currIdx */
	uint32_t has;
};

_Static_assert(sizeof(struct tp_cudnn_op) <= TP_EV_SLOT_BYTES,
	       "tp_cudnn_op does not fit an extension slot");

extern const char *const tp_libs_cudnn[];

/* Reads a tensor descriptor with the real cudnnGetTensorNdDescriptor
 * (resolved at run time); leaves t->nb 0 when desc is NULL or the getter
 * fails. Call it between tp_cudnn_quiet and tp_cudnn_loud. */
void tp_cudnn_read_tensor(struct tp_cudnn_tensor *t,
			  cudnnTensorDescriptor_t desc);

/* Getters run after the record is reserved and before it is committed:
 * whatever they call that is hooked (or seen by CUPTI) must not record
 * into the reserved slots meanwhile. */
static inline int tp_cudnn_quiet(struct tp_rec *r)
{
	int was = r->t->internal;

	r->t->internal = 1;
	return was;
}

static inline void tp_cudnn_loud(struct tp_rec *r, int was)
{
	r->t->internal = was;
}

/* cudnnDataType_t and the like, in a byte: TP_CUDNN_NO_ENUM when it does
 * not fit (then not printed). */
static inline uint8_t tp_cudnn_enum8(int v)
{
	return v >= 0 && v < (int)TP_CUDNN_NO_ENUM ? (uint8_t)v
						    : TP_CUDNN_NO_ENUM;
}

#endif
