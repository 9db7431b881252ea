/* hooks/cudart/: the cudart hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* The runtime's per-thread-default-stream variants and the entry points
 * nvcc-generated code calls, which cuda_runtime_api.h declares only when
 * per-thread default streams are on (or not at all). */
#ifndef TP_CUDART_VARIANTS_H
#define TP_CUDART_VARIANTS_H

#include <cuda_runtime_api.h>

cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t,
			       cudaStream_t);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t,
				    cudaStream_t);
cudaError_t __cudaGetKernel(cudaKernel_t *, const void *);
void __cudaRegisterFunction(void **, const char *, char *, const char *, int,
			    uint3 *, uint3 *, dim3 *, dim3 *, int *);
cudaError_t cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t,
				  cudaStream_t);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *,
				     void **);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *, dim3, dim3,
					     void **, size_t, cudaStream_t);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t, cudaStream_t);
cudaError_t cudaMemcpy_ptds(void *, const void *, size_t,
			    enum cudaMemcpyKind);
cudaError_t cudaMemcpyAsync_ptsz(void *, const void *, size_t,
				 enum cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy2D_ptds(void *, size_t, const void *, size_t, size_t,
			      size_t, enum cudaMemcpyKind);
cudaError_t cudaMemcpy2DAsync_ptsz(void *, size_t, const void *, size_t,
				   size_t, size_t, enum cudaMemcpyKind,
				   cudaStream_t);
cudaError_t cudaMemset_ptds(void *, int, size_t);
cudaError_t cudaMemsetAsync_ptsz(void *, int, size_t, cudaStream_t);
cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
cudaError_t cudaFreeAsync_ptsz(void *, cudaStream_t);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t, cudaEvent_t, unsigned int);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);

#endif
