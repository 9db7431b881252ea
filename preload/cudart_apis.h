/* Every CUDA runtime entry point tprof records: X(id, shown name, args).
 * The shown name is the public API name (cudaLaunchKernel for
 * __cudaLaunchKernel); per-thread-stream variants keep their suffix. */
#ifndef TP_CUDART_APIS_H
#define TP_CUDART_APIS_H

#include "../trace/api.h"

#define TP_CUDART_APIS(X)                                                \
	X(LAUNCH, "cudaLaunchKernel", launch)                            \
	X(LAUNCH_PTSZ, "cudaLaunchKernel_ptsz", launch)                  \
	X(LAUNCH_EX, "cudaLaunchKernelExC", launch)                      \
	X(LAUNCH_EX_PTSZ, "cudaLaunchKernelExC_ptsz", launch)            \
	X(LAUNCH_COOP, "cudaLaunchCooperativeKernel", launch)            \
	X(LAUNCH_COOP_PTSZ, "cudaLaunchCooperativeKernel_ptsz", launch)  \
	X(GRAPH_LAUNCH, "cudaGraphLaunch", graph)                        \
	X(GRAPH_LAUNCH_PTSZ, "cudaGraphLaunch_ptsz", graph)              \
	X(MEMCPY, "cudaMemcpy", copy)                                    \
	X(MEMCPY_PTDS, "cudaMemcpy_ptds", copy)                          \
	X(MEMCPY_ASYNC, "cudaMemcpyAsync", copy)                         \
	X(MEMCPY_ASYNC_PTSZ, "cudaMemcpyAsync_ptsz", copy)               \
	X(MEMCPY2D, "cudaMemcpy2D", copy)                                \
	X(MEMCPY2D_PTDS, "cudaMemcpy2D_ptds", copy)                      \
	X(MEMCPY2D_ASYNC, "cudaMemcpy2DAsync", copy)                     \
	X(MEMCPY2D_ASYNC_PTSZ, "cudaMemcpy2DAsync_ptsz", copy)           \
	X(MEMCPY_PEER, "cudaMemcpyPeer", peer)                           \
	X(MEMCPY_PEER_ASYNC, "cudaMemcpyPeerAsync", peer)                \
	X(MEMSET, "cudaMemset", memset)                                  \
	X(MEMSET_PTDS, "cudaMemset_ptds", memset)                        \
	X(MEMSET_ASYNC, "cudaMemsetAsync", memset)                       \
	X(MEMSET_ASYNC_PTSZ, "cudaMemsetAsync_ptsz", memset)             \
	X(MALLOC, "cudaMalloc", alloc)                                   \
	X(FREE, "cudaFree", free)                                        \
	X(MALLOC_ASYNC, "cudaMallocAsync", alloc)                        \
	X(MALLOC_ASYNC_PTSZ, "cudaMallocAsync_ptsz", alloc)              \
	X(FREE_ASYNC, "cudaFreeAsync", free)                             \
	X(FREE_ASYNC_PTSZ, "cudaFreeAsync_ptsz", free)                   \
	X(MALLOC_HOST, "cudaMallocHost", alloc)                          \
	X(HOST_ALLOC, "cudaHostAlloc", alloc)                            \
	X(FREE_HOST, "cudaFreeHost", free)                               \
	X(MALLOC_MANAGED, "cudaMallocManaged", alloc)                    \
	X(STREAM_SYNC, "cudaStreamSynchronize", stream)                  \
	X(STREAM_SYNC_PTSZ, "cudaStreamSynchronize_ptsz", stream)        \
	X(DEVICE_SYNC, "cudaDeviceSynchronize", none)                    \
	X(EVENT_SYNC, "cudaEventSynchronize", event)                     \
	X(STREAM_WAIT_EVENT, "cudaStreamWaitEvent", event)               \
	X(STREAM_WAIT_EVENT_PTSZ, "cudaStreamWaitEvent_ptsz", event)     \
	X(EVENT_RECORD, "cudaEventRecord", event)                        \
	X(EVENT_RECORD_PTSZ, "cudaEventRecord_ptsz", event)              \
	X(PROFILER_START, "cudaProfilerStart", none)                     \
	X(PROFILER_STOP, "cudaProfilerStop", none)

#define TP_CUDART_TABLE 0

enum tp_cudart_api {
#define X(id, name, fmt) TP_CUDART_##id,
	TP_CUDART_APIS(X)
#undef X
	TP_CUDART_N
};

void tp_cudart_register(void);

#endif
