/* The runtime API of the simulated machine (libcudart.so.13), built on
 * its driver as the real runtime is: each runtime call is an API call
 * CUPTI sees (runtime domain), and makes the driver calls it needs, which
 * CUPTI sees nested inside it with correlation ids of their own. The
 * entry points nvcc's generated code calls (crt/host_runtime.h,
 * crt/device_functions.h) register modules at load, unregister them from
 * the atexit handler the generated code installs, and launch <<<>>>
 * through __cudaLaunchKernel.
 *
 * Built with SIM_CUDA=12 it is libcudart.so.12: CUDA 12's generated code
 * registers modules through the same entry points, which are no API
 * calls CUPTI 12 reports (cupti_runtime_cbid.h of 12.9 has no id for
 * them), and launches <<<>>> through cudaLaunchKernel from the host stub
 * (crt/host_runtime.h's __cudaLaunch with __NV_LEGACY_LAUNCH, CUDA
 * 12's older code), or, as 12.6-12.9's nvcc generates by default,
 * through __cudaGetKernel and __cudaLaunchKernel, which CUPTI 12 reports
 * as cudaLaunchKernel (below). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "sim.h"

#define RT(fn, params)                                                   \
	struct sim_call c_;                                              \
	sim_enter(&c_, CUPTI_CB_DOMAIN_RUNTIME_API,                      \
		  CUPTI_RUNTIME_TRACE_CBID_##fn, #fn, params)
#define RT_RET(r)                                                        \
	do {                                                             \
		cudaError_t r_ = (r);                                    \
		if (r_ != cudaSuccess)                                   \
			last_error = r_;                                 \
		sim_exit(&c_, &r_);                                      \
		return r_;                                               \
	} while (0)

/* The generated code's own entry points: API calls from CUDA 13 on. */
#if SIM_CUDA >= 13
#define RT_GEN(fn) RT(fn, NULL)
#define RT_GEN_EXIT() sim_exit(&c_, NULL)
#else
#define RT_GEN(fn) do { } while (0)
#define RT_GEN_EXIT() do { } while (0)
#endif

static __thread cudaError_t last_error;

/* The per-thread default stream: handle 2 for the driver (sim.h). */
static CUstream ptsz(cudaStream_t s)
{
	return s ? (CUstream)s : (CUstream)(uintptr_t)2;
}

/* ---- modules ---- */

SIM_EXPORT void **__cudaRegisterFatBinary(void *fatbin)
{
	void **h;

	RT_GEN(__cudaRegisterFatBinary_v13000);
	(void)fatbin;
	h = sim_module_new(1);
	RT_GEN_EXIT();
	return h;
}

SIM_EXPORT void __cudaRegisterFatBinaryEnd(void **h)
{
	RT_GEN(__cudaRegisterFatBinaryEnd_v13000);
	(void)h;
	RT_GEN_EXIT();
}

SIM_EXPORT void __cudaUnregisterFatBinary(void **h)
{
	RT_GEN(__cudaUnregisterFatBinary_v13000);
	RT_GEN_EXIT();
	sim_module_free(h);
}

SIM_EXPORT void __cudaRegisterFunction(void **h, const char *host, char *dev,
				       const char *name, int limit,
				       uint3 *tid, uint3 *bid, dim3 *bdim,
				       dim3 *gdim, int *wsize)
{
	RT_GEN(__cudaRegisterFunction_v13000);
	(void)name, (void)limit, (void)tid, (void)bid, (void)bdim,
	(void)gdim, (void)wsize;
	sim_module_add(h, host, dev);
	RT_GEN_EXIT();
}

SIM_EXPORT void __cudaRegisterVar(void **h, char *host, char *dev,
				  const char *name, int ext, size_t size,
				  int constant, int global)
{
	(void)h, (void)host, (void)dev, (void)name, (void)ext, (void)size,
	(void)constant, (void)global;
}

SIM_EXPORT char __cudaInitModule(void **h)
{
	(void)h;
	return 1;
}

#if SIM_CUDA >= 13
SIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *host)
{
	RT(__cudaGetKernel_v13000, NULL);
	*k = (cudaKernel_t)host;
	RT_RET(sim_module_find(host) ? cudaSuccess :
	       cudaErrorInvalidDeviceFunction);
}
#else
SIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *host)
{
	*k = (cudaKernel_t)host;
	return sim_module_find(host) ? cudaSuccess :
				       cudaErrorInvalidDeviceFunction;
}
#endif

/* <<<>>>'s configuration, pushed then popped by the launch stub. */
struct config {
	dim3 grid, block;
	size_t shmem;
	void *stream;
};

static __thread struct config configs[8];
static __thread int n_configs;

SIM_EXPORT unsigned __cudaPushCallConfiguration(dim3 g, dim3 b, size_t shmem,
						void *stream)
{
	if (n_configs == 8)
		return 1;
	configs[n_configs++] = (struct config){ g, b, shmem, stream };
	return 0;
}

SIM_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *g, dim3 *b,
						  size_t *shmem, void *stream)
{
	struct config c;

	if (!n_configs)
		return cudaErrorMissingConfiguration;
	c = configs[--n_configs];
	*g = c.grid;
	*b = c.block;
	*shmem = c.shmem;
	*(void **)stream = c.stream;
	return cudaSuccess;
}

/* ---- graphs: kernels launched into a capturing stream are kept ---- */

#define GRAPH_NODES 64

struct graph {
	uint32_t id;
	unsigned n;
	struct {
		const char *name;
		dim3 grid, block;
		uint64_t dur;
	} node[GRAPH_NODES];
};

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t capturing;
static struct graph *building;
static uint32_t next_graph = 1;

static int captured(cudaStream_t s, const char *name, dim3 g, dim3 b)
{
	uint32_t grid[3] = { g.x, g.y, g.z }, block[3] = { b.x, b.y, b.z };
	int ok = 0;

	pthread_mutex_lock(&graph_lock);
	if (building && capturing == s && building->n < GRAPH_NODES) {
		building->node[building->n].name = name;
		building->node[building->n].grid = g;
		building->node[building->n].block = b;
		building->node[building->n].dur =
			sim_take_kernel_duration(grid, block);
		building->n++;
		ok = 1;
	}
	pthread_mutex_unlock(&graph_lock);
	return ok;
}

/* ---- launches ---- */

static cudaError_t launch(const void *host, dim3 g, dim3 b, size_t shmem,
			  CUstream s)
{
	const char *name = sim_module_find(host);

	if (!name)
		return cudaErrorInvalidDeviceFunction;
	if (captured((cudaStream_t)s, name, g, b))
		return cudaSuccess;
	return cuLaunchKernel((CUfunction)name, g.x, g.y, g.z, b.x, b.y, b.z,
			      (unsigned)shmem, s, NULL, NULL) ?
	       cudaErrorLaunchFailure : cudaSuccess;
}

/* CUDA 12.6-12.9's generated code launches through these too (their
 * crt/host_runtime.h, unless __NV_LEGACY_LAUNCH), but CUPTI 12 has no
 * callback id for them: they are taken to report as cudaLaunchKernel
 * (211, 214), the launch they implement (not checked on a real CUPTI
 * 12). */
#if SIM_CUDA >= 13
#define LAUNCH_CBID __cudaLaunchKernel_v13000
#define LAUNCH_PTSZ_CBID __cudaLaunchKernel_ptsz_v13000
#define LAUNCH_PARAMS(k, g, b, args, shmem, s) NULL
#else
#define LAUNCH_CBID cudaLaunchKernel_v7000
#define LAUNCH_PTSZ_CBID cudaLaunchKernel_ptsz_v7000
/* With that id, its parameters (cupti's generated_cuda_runtime_api_meta.h). */
#define LAUNCH_PARAMS(k, g, b, args, shmem, s)                            \
	(&(cudaLaunchKernel_v7000_params){ (const void *)(k), g, b, args,  \
					   shmem, s })
#endif
#define RT_(fn, params) RT(fn, params)

/* SIM_CUDART_NEWER=1 (CUDA 12 mode): this libcudart.so.12 is newer than
 * the CUPTI 12 loaded (a pip cudart 12.8 beside a toolkit CUPTI 12.6):
 * it reports __cudaLaunchKernel with a callback id that CUPTI does not
 * have (cupti_runtime_cbid.h of 12.x has none for it), so CUPTI makes
 * no runtime API call of it: only the driver's cuLaunchKernel inside is
 * one, the outermost call CUPTI knows, whose correlation id the kernel
 * then carries. */
#if SIM_CUDA >= 13
#define NEWER_THAN_CUPTI(call) do { } while (0)
#else
static int cudart_newer(void)
{
	static int v = -1;

	if (v < 0) {
		const char *e = getenv("SIM_CUDART_NEWER");

		v = e && *e == '1';
	}
	return v;
}

#define NEWER_THAN_CUPTI(call)                                           \
	do {                                                             \
		if (cudart_newer()) {                                    \
			cudaError_t r_ = (call);                         \
			if (r_ != cudaSuccess)                           \
				last_error = r_;                         \
			return r_;                                       \
		}                                                        \
	} while (0)
#endif

SIM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b,
					  void **args, size_t shmem,
					  cudaStream_t s)
{
	NEWER_THAN_CUPTI(launch(k, g, b, shmem, (CUstream)s));
	RT_(LAUNCH_CBID, LAUNCH_PARAMS(k, g, b, args, shmem, s));
	(void)args;
	RT_RET(launch(k, g, b, shmem, (CUstream)s));
}

SIM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b,
					       void **args, size_t shmem,
					       cudaStream_t s)
{
	NEWER_THAN_CUPTI(launch(k, g, b, shmem, ptsz(s)));
	RT_(LAUNCH_PTSZ_CBID, LAUNCH_PARAMS(k, g, b, args, shmem, s));
	(void)args;
	RT_RET(launch(k, g, b, shmem, ptsz(s)));
}

SIM_EXPORT cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b,
					void **args, size_t shmem,
					cudaStream_t s)
{
	cudaLaunchKernel_v7000_params p = { f, g, b, args, shmem, s };

	RT(cudaLaunchKernel_v7000, &p);
	RT_RET(launch(f, g, b, shmem, (CUstream)s));
}

SIM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *f, dim3 g, dim3 b,
					     void **args, size_t shmem,
					     cudaStream_t s)
{
	RT(cudaLaunchKernel_ptsz_v7000, NULL);
	(void)args;
	RT_RET(launch(f, g, b, shmem, ptsz(s)));
}

/* cudaLaunchAttributeProgrammaticStreamSerialization (driver_types.h):
 * the kernel may overlap the one before it on its stream. */
static void launch_attrs(const cudaLaunchConfig_t *c)
{
	unsigned i;

	for (i = 0; c->attrs && i < c->numAttrs; i++)
		if (c->attrs[i].id ==
		    cudaLaunchAttributeProgrammaticStreamSerialization &&
		    c->attrs[i].val.programmaticStreamSerializationAllowed)
			sim_next_programmatic();
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c,
					   const void *f, void **args)
{
	RT(cudaLaunchKernelExC_v11060, NULL);
	(void)args;
	launch_attrs(c);
	RT_RET(launch(f, c->gridDim, c->blockDim, c->dynamicSmemBytes,
		      (CUstream)c->stream));
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c,
						const void *f, void **args)
{
	RT(cudaLaunchKernelExC_ptsz_v11060, NULL);
	(void)args;
	launch_attrs(c);
	RT_RET(launch(f, c->gridDim, c->blockDim, c->dynamicSmemBytes,
		      ptsz(c->stream)));
}

/* ---- memory ---- */

SIM_EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
	CUdeviceptr d = 0;
	cudaError_t r;

	RT(cudaMalloc_v3020, NULL);
	r = cuMemAlloc(&d, n) ? cudaErrorMemoryAllocation : cudaSuccess;
	*p = (void *)d;
	RT_RET(r);
}

SIM_EXPORT cudaError_t cudaFree(void *p)
{
	RT(cudaFree_v3020, NULL);
	cuMemFree((CUdeviceptr)p);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaMallocHost(void **p, size_t n)
{
	RT(cudaMallocHost_v3020, NULL);
	*p = malloc(n ? n : 1);
	RT_RET(*p ? cudaSuccess : cudaErrorMemoryAllocation);
}

SIM_EXPORT cudaError_t cudaFreeHost(void *p)
{
	RT(cudaFreeHost_v3020, NULL);
	free(p);
	RT_RET(cudaSuccess);
}

static cudaError_t memcpy_async(void *dst, const void *src, size_t n,
				enum cudaMemcpyKind kind, CUstream s)
{
	if (kind == cudaMemcpyHostToDevice)
		return cuMemcpyHtoDAsync((CUdeviceptr)dst, src, n, s) ?
		       cudaErrorInvalidValue : cudaSuccess;
	if (kind == cudaMemcpyDeviceToHost)
		return cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, n, s) ?
		       cudaErrorInvalidValue : cudaSuccess;
	return cuMemcpyAsync((CUdeviceptr)dst, (CUdeviceptr)src, n, s) ?
	       cudaErrorInvalidValue : cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n,
				  enum cudaMemcpyKind kind)
{
	cudaMemcpy_v3020_params p = { dst, src, n, kind };
	cudaError_t r;

	RT(cudaMemcpy_v3020, &p);
	if (kind == cudaMemcpyHostToDevice)
		r = cuMemcpyHtoD((CUdeviceptr)dst, src, n) ?
		    cudaErrorInvalidValue : cudaSuccess;
	else if (kind == cudaMemcpyDeviceToHost)
		r = cuMemcpyDtoH(dst, (CUdeviceptr)src, n) ?
		    cudaErrorInvalidValue : cudaSuccess;
	else
		r = memcpy_async(dst, src, n, kind, NULL);
	sim_wait_stream(sim_current_device(), 0);
	RT_RET(r);
}

SIM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
				       enum cudaMemcpyKind kind,
				       cudaStream_t s)
{
	RT(cudaMemcpyAsync_v3020, NULL);
	RT_RET(memcpy_async(dst, src, n, kind, (CUstream)s));
}

SIM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src,
					    size_t n, enum cudaMemcpyKind kind,
					    cudaStream_t s)
{
	RT(cudaMemcpyAsync_ptsz_v7000, NULL);
	RT_RET(memcpy_async(dst, src, n, kind, ptsz(s)));
}

SIM_EXPORT cudaError_t cudaMemset(void *p, int v, size_t n)
{
	RT(cudaMemset_v3020, NULL);
	cuMemsetD8((CUdeviceptr)p, (unsigned char)v, n);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t n,
				       cudaStream_t s)
{
	RT(cudaMemsetAsync_v3020, NULL);
	cuMemsetD8Async((CUdeviceptr)p, (unsigned char)v, n, (CUstream)s);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *p, int v, size_t n,
					    cudaStream_t s)
{
	RT(cudaMemsetAsync_ptsz_v7000, NULL);
	cuMemsetD8Async((CUdeviceptr)p, (unsigned char)v, n, ptsz(s));
	RT_RET(cudaSuccess);
}

/* ---- streams, events, syncs ---- */

SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
	RT(cudaStreamCreate_v3020, NULL);
	cuStreamCreate((CUstream *)s, 0);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s,
						 unsigned flags)
{
	RT(cudaStreamCreateWithFlags_v5000, NULL);
	cuStreamCreate((CUstream *)s, flags);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	RT(cudaStreamDestroy_v5050, NULL);
	cuStreamDestroy((CUstream)s);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	RT(cudaStreamSynchronize_v3020, NULL);
	cuStreamSynchronize((CUstream)s);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
	RT(cudaStreamSynchronize_ptsz_v7000, NULL);
	cuStreamSynchronize(ptsz(s));
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	RT(cudaDeviceSynchronize_v3020, NULL);
	cuCtxSynchronize();
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	RT(cudaEventCreate_v3020, NULL);
	RT_RET(cuEventCreate((CUevent *)e, 0) ? cudaErrorMemoryAllocation :
	       cudaSuccess);
}

SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f)
{
	RT(cudaEventCreateWithFlags_v3020, NULL);
	RT_RET(cuEventCreate((CUevent *)e, f) ? cudaErrorMemoryAllocation :
	       cudaSuccess);
}

SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	RT(cudaEventDestroy_v3020, NULL);
	cuEventDestroy((CUevent)e);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	RT(cudaEventRecord_v3020, NULL);
	cuEventRecord((CUevent)e, (CUstream)s);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	RT(cudaEventSynchronize_v3020, NULL);
	cuEventSynchronize((CUevent)e);
	RT_RET(cudaSuccess);
}

/* CUDA 13's cudaEventElapsedTime is taken to be 12.8's _v2 (callback id
 * 486; 13's cuda_runtime_api.h has one, 12.8's had both): not checked on
 * a real CUPTI 13. */
#if SIM_CUDA >= 13
#define ELAPSED_CBID cudaEventElapsedTime_v12080
#else
#define ELAPSED_CBID cudaEventElapsedTime_v3020
#endif

SIM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a,
					    cudaEvent_t b)
{
	CUresult r;

	RT_(ELAPSED_CBID, NULL);
	r = cuEventElapsedTime(ms, (CUevent)a, (CUevent)b);
	RT_RET(r == CUDA_SUCCESS ? cudaSuccess :
	       r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady :
	       r == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidValue :
	       cudaErrorInvalidResourceHandle);
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e,
					   unsigned flags)
{
	RT(cudaStreamWaitEvent_v3020, NULL);
	cuStreamWaitEvent((CUstream)s, (CUevent)e, flags);
	RT_RET(cudaSuccess);
}

/* ---- graphs ---- */

SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s,
					      enum cudaStreamCaptureMode m)
{
	RT(cudaStreamBeginCapture_v10000, NULL);
	(void)m;
	pthread_mutex_lock(&graph_lock);
	building = calloc(1, sizeof(*building));
	if (building)
		building->id = next_graph++;
	capturing = s;
	pthread_mutex_unlock(&graph_lock);
	RT_RET(building ? cudaSuccess : cudaErrorMemoryAllocation);
}

SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
	RT(cudaStreamEndCapture_v10000, NULL);
	(void)s;
	pthread_mutex_lock(&graph_lock);
	*g = (cudaGraph_t)building;
	building = NULL;
	capturing = NULL;
	pthread_mutex_unlock(&graph_lock);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g,
					    unsigned long long flags)
{
	RT(cudaGraphInstantiate_v12000, NULL);
	(void)flags;
	*e = (cudaGraphExec_t)g;
	RT_RET(cudaSuccess);
}

/* Each node runs as a kernel of the launch, with its graph's ids. */
SIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
	struct graph *g = (struct graph *)e;
	struct sim_call d;
	unsigned i;

	RT(cudaGraphLaunch_v10000, NULL);
	sim_note_graph_launch();
	sim_enter(&d, CUPTI_CB_DOMAIN_DRIVER_API,
		  CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", NULL);
	for (i = 0; g && i < g->n; i++) {
		struct sim_op op = { .kind = SIM_KERNEL,
				     .name = g->node[i].name,
				     .graph_id = g->id,
				     .graph_node = (uint64_t)g->id << 32 | i };

		op.grid[0] = g->node[i].grid.x;
		op.grid[1] = g->node[i].grid.y;
		op.grid[2] = g->node[i].grid.z;
		op.block[0] = g->node[i].block.x;
		op.block[1] = g->node[i].block.y;
		op.block[2] = g->node[i].block.z;
		sim_issue(&op, (uintptr_t)s, g->node[i].dur);
	}
	sim_exit(&d, &(CUresult){ CUDA_SUCCESS });
	RT_RET(g ? cudaSuccess : cudaErrorInvalidValue);
}

SIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e)
{
	RT(cudaGraphExecDestroy_v10000, NULL);
	(void)e;
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
	RT(cudaGraphDestroy_v10000, NULL);
	free(g);
	RT_RET(cudaSuccess);
}

/* ---- devices, errors, versions ---- */

SIM_EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
	RT(cudaGetDeviceCount_v3020, NULL);
	cuDeviceGetCount(n);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaSetDevice(int dev)
{
	CUcontext c;

	RT(cudaSetDevice_v3020, NULL);
	if (dev < 0 || dev >= sim_device_count())
		RT_RET(cudaErrorInvalidDevice);
	cuDevicePrimaryCtxRetain(&c, dev);
	cuCtxSetCurrent(c);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaGetDevice(int *dev)
{
	RT(cudaGetDevice_v3020, NULL);
	*dev = sim_current_device();
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaDeviceReset(void)
{
	RT(cudaDeviceReset_v3020, NULL);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t r = last_error;

	last_error = cudaSuccess;
	return r;
}

SIM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

SIM_EXPORT const char *cudaGetErrorName(cudaError_t r)
{
	return r == cudaSuccess ? "cudaSuccess" : "cudaErrorUnknown";
}

SIM_EXPORT const char *cudaGetErrorString(cudaError_t r)
{
	return r == cudaSuccess ? "no error" : "unknown error";
}

SIM_EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
	RT(cudaDriverGetVersion_v3020, NULL);
	cuDriverGetVersion(v);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
	RT(cudaRuntimeGetVersion_v3020, NULL);
	*v = 13000;
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaProfilerStart(void)
{
	RT(cudaProfilerStart_v4000, NULL);
	RT_RET(cudaSuccess);
}

SIM_EXPORT cudaError_t cudaProfilerStop(void)
{
	RT(cudaProfilerStop_v4000, NULL);
	RT_RET(cudaSuccess);
}
