/* Calls every cuDNN entry point tprof hooks, with a NULL handle (no GPU
 * needed: cuDNN rejects the call) and real descriptors, so the recorded
 * shapes can be checked exactly. Prints "name ret" per call, in order;
 * test_cudnn.py compares them with the trace. */
#include <stdio.h>
#include <stdlib.h>

#include <cudnn.h>

#define CALL(fn, ...) report(#fn, fn(__VA_ARGS__))

static void report(const char *name, cudnnStatus_t st)
{
	printf("%s %d\n", name, (int)st);
}

static void must(cudnnStatus_t st, const char *what)
{
	if (st == CUDNN_STATUS_SUCCESS)
		return;
	fprintf(stderr, "cudnn_calls: %s failed: %d\n", what, (int)st);
	exit(2);
}

static cudnnTensorDescriptor_t tensor4(cudnnDataType_t dt, int n, int c,
				       int h, int w)
{
	cudnnTensorDescriptor_t d;

	must(cudnnCreateTensorDescriptor(&d), "create tensor");
	must(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, dt, n, c, h, w),
	     "set tensor 4d");
	return d;
}

static cudnnTensorDescriptor_t tensor_nd(cudnnDataType_t dt, int nb,
					 const int *dims)
{
	cudnnTensorDescriptor_t d;
	int strides[8], i;

	strides[nb - 1] = 1;
	for (i = nb - 2; i >= 0; i--)
		strides[i] = strides[i + 1] * dims[i + 1];
	must(cudnnCreateTensorDescriptor(&d), "create tensor");
	must(cudnnSetTensorNdDescriptor(d, dt, nb, dims, strides),
	     "set tensor nd");
	return d;
}

static cudnnFilterDescriptor_t filter_nd(cudnnDataType_t dt,
					 cudnnTensorFormat_t fmt, int nb,
					 const int *dims)
{
	cudnnFilterDescriptor_t d;

	must(cudnnCreateFilterDescriptor(&d), "create filter");
	must(cudnnSetFilterNdDescriptor(d, dt, fmt, nb, dims), "set filter");
	return d;
}

static cudnnConvolutionDescriptor_t conv2d(int groups)
{
	cudnnConvolutionDescriptor_t d;

	must(cudnnCreateConvolutionDescriptor(&d), "create conv");
	must(cudnnSetConvolution2dDescriptor(d, 1, 1, 2, 2, 1, 1,
					     CUDNN_CROSS_CORRELATION,
					     CUDNN_DATA_FLOAT), "set conv 2d");
	must(cudnnSetConvolutionGroupCount(d, groups), "set groups");
	return d;
}

static void convolutions(void)
{
	static const int wdims[] = { 128, 32, 3, 3 };
	static const int x3[] = { 2, 16, 8, 32, 32 },
			 w3[] = { 32, 16, 3, 3, 3 },
			 y3[] = { 2, 32, 4, 32, 16 }, pad3[] = { 1, 2, 3 },
			 str3[] = { 1, 1, 2 }, dil3[] = { 2, 1, 1 };
	cudnnTensorDescriptor_t x = tensor4(CUDNN_DATA_HALF, 8, 64, 56, 56);
	cudnnTensorDescriptor_t y = tensor4(CUDNN_DATA_HALF, 8, 128, 28, 28);
	cudnnFilterDescriptor_t w = filter_nd(CUDNN_DATA_HALF,
					      CUDNN_TENSOR_NHWC, 4, wdims);
	cudnnConvolutionDescriptor_t c = conv2d(2), c3groups = conv2d(3), c3;
	cudnnTensorDescriptor_t x5 = tensor_nd(CUDNN_DATA_FLOAT, 5, x3);
	cudnnTensorDescriptor_t y5 = tensor_nd(CUDNN_DATA_FLOAT, 5, y3);
	cudnnFilterDescriptor_t w5 = filter_nd(CUDNN_DATA_FLOAT,
					       CUDNN_TENSOR_NCHW, 5, w3);
	float one = 1, zero = 0;

	must(cudnnCreateConvolutionDescriptor(&c3), "create conv");
	must(cudnnSetConvolutionNdDescriptor(c3, 3, pad3, str3, dil3,
					     CUDNN_CONVOLUTION,
					     CUDNN_DATA_FLOAT), "set conv nd");

	/* 2D, 2 groups, in each direction. */
	CALL(cudnnConvolutionForward, NULL, &one, x, NULL, w, NULL, c,
	     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, NULL, 4096,
	     &zero, y, NULL);
	CALL(cudnnConvolutionBackwardData, NULL, &one, w, NULL, y, NULL, c,
	     CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, NULL, 8192, &zero, x, NULL);
	CALL(cudnnConvolutionBackwardFilter, NULL, &one, x, NULL, y, NULL, c,
	     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, NULL, 0, &zero, w, NULL);
	CALL(cudnnConvolutionBiasActivationForward, NULL, &one, x, NULL, w,
	     NULL, c, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, NULL, 64,
	     &zero, y, NULL, NULL, NULL, NULL, y, NULL);
	/* 3D, from Nd descriptors. */
	CALL(cudnnConvolutionForward, NULL, &one, x5, NULL, w5, NULL, c3,
	     CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 1, &zero, y5, NULL);
	/* Nothing known. */
	CALL(cudnnConvolutionForward, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	     CUDNN_CONVOLUTION_FWD_ALGO_FFT, NULL, 0, NULL, NULL, NULL);
	/* No filter: no flops. */
	CALL(cudnnConvolutionBackwardFilter, NULL, &one, x, NULL, y, NULL, c,
	     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, NULL, 0, &zero, NULL, NULL);
	/* 3 groups do not divide 64 channels: no flops. */
	CALL(cudnnConvolutionForward, NULL, &one, x, NULL, w, NULL, c3groups,
	     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, y, NULL);
	/* No convolution descriptor: tensors only. */
	CALL(cudnnConvolutionBackwardData, NULL, &one, w, NULL, y, NULL, NULL,
	     CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0, &zero, x, NULL);

	cudnnDestroyConvolutionDescriptor(c);
	cudnnDestroyConvolutionDescriptor(c3groups);
	cudnnDestroyConvolutionDescriptor(c3);
	cudnnDestroyFilterDescriptor(w);
	cudnnDestroyFilterDescriptor(w5);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyTensorDescriptor(y);
	cudnnDestroyTensorDescriptor(x5);
	cudnnDestroyTensorDescriptor(y5);
}

static void backend(void)
{
	cudnnBackendDescriptor_t plan, pack;

	must(cudnnBackendCreateDescriptor(
		     CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan),
	     "create plan");
	must(cudnnBackendCreateDescriptor(
		     CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack),
	     "create variant pack");
	CALL(cudnnBackendExecute, NULL, NULL, NULL);
	/* Not finalized: the workspace size cannot be read. */
	CALL(cudnnBackendExecute, NULL, plan, pack);
	printf("plan %p pack %p\n", (void *)plan, (void *)pack);
	cudnnBackendDestroyDescriptor(plan);
	cudnnBackendDestroyDescriptor(pack);
}

static void norms(void)
{
	cudnnTensorDescriptor_t x = tensor4(CUDNN_DATA_HALF, 8, 64, 56, 56);
	cudnnTensorDescriptor_t s = tensor4(CUDNN_DATA_FLOAT, 1, 64, 1, 1);
	float one = 1, zero = 0;

	CALL(cudnnBatchNormalizationForwardTraining, NULL,
	     CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, NULL, x, NULL, s, NULL,
	     NULL, 0.1, NULL, NULL, 1e-5, NULL, NULL);
	CALL(cudnnBatchNormalizationForwardTrainingEx, NULL,
	     CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
	     CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero, x, NULL, NULL,
	     NULL, x, NULL, s, NULL, NULL, 0.1, NULL, NULL, 1e-5, NULL, NULL,
	     NULL, NULL, 1024, NULL, 2048);
	CALL(cudnnBatchNormalizationForwardInference, NULL,
	     CUDNN_BATCHNORM_PER_ACTIVATION, &one, &zero, x, NULL, x, NULL, s,
	     NULL, NULL, NULL, NULL, 1e-5);
	CALL(cudnnBatchNormalizationBackward, NULL, CUDNN_BATCHNORM_SPATIAL,
	     &one, &zero, &one, &zero, x, NULL, x, NULL, x, NULL, s, NULL,
	     NULL, NULL, 1e-5, NULL, NULL);
	CALL(cudnnBatchNormalizationBackwardEx, NULL, CUDNN_BATCHNORM_SPATIAL,
	     CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, &one, &zero, &one, &zero,
	     x, NULL, x, NULL, x, NULL, x, NULL, x, NULL, s, NULL, NULL, NULL,
	     NULL, 1e-5, NULL, NULL, NULL, NULL, 3072, NULL, 4096);
	/* NULL descriptor: no shape. */
	CALL(cudnnBatchNormalizationForwardInference, NULL,
	     CUDNN_BATCHNORM_SPATIAL, &one, &zero, NULL, NULL, NULL, NULL,
	     NULL, NULL, NULL, NULL, NULL, 1e-5);
	CALL(cudnnNormalizationForwardTraining, NULL, CUDNN_NORM_PER_CHANNEL,
	     CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_PERSIST, &one, &zero, x,
	     NULL, s, NULL, NULL, 0.1, s, NULL, NULL, 1e-5, NULL, NULL, NULL,
	     NULL, NULL, x, NULL, NULL, 512, NULL, 256, 1);
	CALL(cudnnNormalizationForwardInference, NULL,
	     CUDNN_NORM_PER_ACTIVATION, CUDNN_NORM_OPS_NORM_ACTIVATION,
	     CUDNN_NORM_ALGO_STANDARD, &one, &zero, x, NULL, s, NULL, NULL, s,
	     NULL, NULL, NULL, NULL, NULL, x, NULL, 1e-5, 1);
	CALL(cudnnNormalizationBackward, NULL, CUDNN_NORM_PER_CHANNEL,
	     CUDNN_NORM_OPS_NORM_ADD_ACTIVATION, CUDNN_NORM_ALGO_STANDARD,
	     &one, &zero, &one, &zero, x, NULL, x, NULL, x, NULL, NULL, NULL,
	     x, NULL, s, NULL, NULL, NULL, NULL, 1e-5, s, NULL, NULL, NULL,
	     NULL, 128, NULL, 64, 1);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyTensorDescriptor(s);
}

static void softmax(void)
{
	cudnnTensorDescriptor_t x = tensor4(CUDNN_DATA_FLOAT, 32, 1000, 1, 1);
	cudnnTensorDescriptor_t dx = tensor4(CUDNN_DATA_BFLOAT16, 16, 10, 7, 7);
	float one = 1, zero = 0;

	CALL(cudnnSoftmaxForward, NULL, CUDNN_SOFTMAX_LOG,
	     CUDNN_SOFTMAX_MODE_CHANNEL, &one, x, NULL, &zero, x, NULL);
	CALL(cudnnSoftmaxBackward, NULL, CUDNN_SOFTMAX_ACCURATE,
	     CUDNN_SOFTMAX_MODE_INSTANCE, &one, x, NULL, x, NULL, &zero, dx,
	     NULL);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyTensorDescriptor(dx);
}

static void rnn(void)
{
	cudnnRNNDataDescriptor_t x;
	int lens[4] = { 20, 18, 5, 1 };
	float fill = 0;

	must(cudnnCreateRNNDataDescriptor(&x), "create rnn data");
	must(cudnnSetRNNDataDescriptor(x, CUDNN_DATA_HALF,
			CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 20, 4, 256,
			lens, &fill), "set rnn data");
	CALL(cudnnRNNForward, NULL, NULL, CUDNN_FWD_MODE_TRAINING, NULL, x,
	     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1000, NULL,
	     2000, NULL, 3000, NULL);
	CALL(cudnnRNNBackwardData_v8, NULL, NULL, NULL, NULL, NULL, NULL, x,
	     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1001, NULL,
	     2001, NULL, 3001, NULL);
	CALL(cudnnRNNBackwardWeights_v8, NULL, NULL, CUDNN_WGRAD_MODE_SET,
	     NULL, x, NULL, NULL, NULL, NULL, NULL, 1002, NULL, 2002, NULL,
	     3002, NULL);
	/* No RNN data descriptor: no shape. */
	CALL(cudnnRNNForward, NULL, NULL, CUDNN_FWD_MODE_INFERENCE, NULL, NULL,
	     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0,
	     NULL, 0, NULL);
	cudnnDestroyRNNDataDescriptor(x);
}

static void attention(void)
{
	cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT] = {
		CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
		CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM,
	};
	int dims[CUDNN_SEQDATA_DIM_COUNT], lens[2] = { 12, 9 };
	cudnnSeqDataDescriptor_t q;
	float fill = 0;

	dims[CUDNN_SEQDATA_TIME_DIM] = 12;
	dims[CUDNN_SEQDATA_BATCH_DIM] = 2;
	dims[CUDNN_SEQDATA_BEAM_DIM] = 1;
	dims[CUDNN_SEQDATA_VECT_DIM] = 64;
	must(cudnnCreateSeqDataDescriptor(&q), "create seq data");
	must(cudnnSetSeqDataDescriptor(q, CUDNN_DATA_FLOAT, 4, dims, axes, 2,
				       lens, &fill), "set seq data");
	CALL(cudnnMultiHeadAttnForward, NULL, NULL, -1, NULL, NULL, NULL, NULL,
	     q, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 100, NULL, 200,
	     NULL, 300, NULL);
	CALL(cudnnMultiHeadAttnBackwardData, NULL, NULL, NULL, NULL, NULL,
	     NULL, NULL, NULL, q, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	     NULL, 101, NULL, 201, NULL, 301, NULL);
	CALL(cudnnMultiHeadAttnBackwardWeights, NULL, NULL,
	     CUDNN_WGRAD_MODE_ADD, q, NULL, NULL, NULL, NULL, NULL, NULL,
	     NULL, 102, NULL, NULL, 202, NULL, 302, NULL);
	/* No sequence data descriptor: no shape. */
	CALL(cudnnMultiHeadAttnForward, NULL, NULL, 3, NULL, NULL, NULL, NULL,
	     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0,
	     NULL, 0, NULL);
	cudnnDestroySeqDataDescriptor(q);
}

int main(void)
{
	convolutions();
	backend();
	norms();
	softmax();
	rnn();
	attention();
	return 0;
}
