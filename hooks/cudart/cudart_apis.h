/* hooks/cudart/: the cudart hooks, on hooks/ (resolve.c: how the real
 * functions are found) and every library folder below it. */
/* Every CUDA runtime entry point tprof records:
 * X(id, shown name, how its args are printed, kind for TPROF_BACKTRACE).
 * The shown name is the public API name (cudaLaunchKernel for
 * __cudaLaunchKernel); per-thread-stream variants keep their suffix. */
#ifndef TP_CUDART_APIS_H
#define TP_CUDART_APIS_H

#include "record/api.h"

#define TP_CUDART_APIS(X)                                                \
	X(LAUNCH, "cudaLaunchKernel", launch, LAUNCH)                            \
	X(LAUNCH_PTSZ, "cudaLaunchKernel_ptsz", launch, LAUNCH)                  \
	X(LAUNCH_EX, "cudaLaunchKernelExC", launch, LAUNCH)                      \
	X(LAUNCH_EX_PTSZ, "cudaLaunchKernelExC_ptsz", launch, LAUNCH)            \
	X(LAUNCH_COOP, "cudaLaunchCooperativeKernel", launch, LAUNCH)            \
	X(LAUNCH_COOP_PTSZ, "cudaLaunchCooperativeKernel_ptsz", launch, LAUNCH)  \
	X(GRAPH_LAUNCH, "cudaGraphLaunch", graph, LAUNCH)                        \
	X(GRAPH_LAUNCH_PTSZ, "cudaGraphLaunch_ptsz", graph, LAUNCH)              \
	X(MEMCPY, "cudaMemcpy", copy, MEMCPY)                                    \
	X(MEMCPY_PTDS, "cudaMemcpy_ptds", copy, MEMCPY)                          \
	X(MEMCPY_ASYNC, "cudaMemcpyAsync", copy, MEMCPY)                         \
	X(MEMCPY_ASYNC_PTSZ, "cudaMemcpyAsync_ptsz", copy, MEMCPY)               \
	X(MEMCPY2D, "cudaMemcpy2D", copy, MEMCPY)                                \
	X(MEMCPY2D_PTDS, "cudaMemcpy2D_ptds", copy, MEMCPY)                      \
	X(MEMCPY2D_ASYNC, "cudaMemcpy2DAsync", copy, MEMCPY)                     \
	X(MEMCPY2D_ASYNC_PTSZ, "cudaMemcpy2DAsync_ptsz", copy, MEMCPY)           \
	X(MEMCPY_PEER, "cudaMemcpyPeer", peer, MEMCPY)                           \
	X(MEMCPY_PEER_ASYNC, "cudaMemcpyPeerAsync", peer, MEMCPY)                \
	X(MEMSET, "cudaMemset", memset, MEMCPY)                                  \
	X(MEMSET_PTDS, "cudaMemset_ptds", memset, MEMCPY)                        \
	X(MEMSET_ASYNC, "cudaMemsetAsync", memset, MEMCPY)                       \
	X(MEMSET_ASYNC_PTSZ, "cudaMemsetAsync_ptsz", memset, MEMCPY)             \
	X(MALLOC, "cudaMalloc", alloc, ALLOC)                                   \
	X(FREE, "cudaFree", free, ALLOC)                                        \
	X(MALLOC_ASYNC, "cudaMallocAsync", alloc, ALLOC)                        \
	X(MALLOC_ASYNC_PTSZ, "cudaMallocAsync_ptsz", alloc, ALLOC)              \
	X(FREE_ASYNC, "cudaFreeAsync", free, ALLOC)                             \
	X(FREE_ASYNC_PTSZ, "cudaFreeAsync_ptsz", free, ALLOC)                   \
	X(MALLOC_HOST, "cudaMallocHost", alloc, ALLOC)                          \
	X(HOST_ALLOC, "cudaHostAlloc", alloc, ALLOC)                            \
	X(FREE_HOST, "cudaFreeHost", free, ALLOC)                               \
	X(MALLOC_MANAGED, "cudaMallocManaged", alloc, ALLOC)                    \
	X(STREAM_SYNC, "cudaStreamSynchronize", stream, SYNC)                  \
	X(STREAM_SYNC_PTSZ, "cudaStreamSynchronize_ptsz", stream, SYNC)        \
	X(DEVICE_SYNC, "cudaDeviceSynchronize", none, SYNC)                    \
	X(EVENT_SYNC, "cudaEventSynchronize", event, SYNC)                     \
	X(STREAM_WAIT_EVENT, "cudaStreamWaitEvent", event, OTHER)               \
	X(STREAM_WAIT_EVENT_PTSZ, "cudaStreamWaitEvent_ptsz", event, OTHER)     \
	X(EVENT_RECORD, "cudaEventRecord", event, OTHER)                        \
	X(EVENT_RECORD_PTSZ, "cudaEventRecord_ptsz", event, OTHER)              \
	X(PROFILER_START, "cudaProfilerStart", none, OTHER)                     \
	X(PROFILER_STOP, "cudaProfilerStop", none, OTHER)

#define TP_CUDART_TABLE TP_TABLE_CUDART

enum tp_cudart_api {
#define X(id, name, fmt, kind) TP_CUDART_##id,
	TP_CUDART_APIS(X)
#undef X
	TP_CUDART_N
};

void tp_cudart_register(void);

#endif
