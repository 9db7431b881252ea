/* The driver API of the simulated machine (part of libcuda.so.1): each
 * entry point is an API call CUPTI sees (driver domain, the cbid of
 * cupti_driver_cbid.h), with its *_params struct from generated_cuda_meta.h
 * where the work needs one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "sim.h"

#define DRV(fn, params)                                                  \
	struct sim_call c_;                                              \
	sim_enter(&c_, CUPTI_CB_DOMAIN_DRIVER_API,                       \
		  CUPTI_DRIVER_TRACE_CBID_##fn, #fn, params)
#define DRV_RET(r)                                                       \
	do {                                                             \
		CUresult r_ = (r);                                       \
		sim_exit(&c_, &r_);                                      \
		return r_;                                               \
	} while (0)

/* Copies move 20 bytes per ns (20 GB/s) after 1 us of setup. */
#define COPY_NS(bytes) (1000 + (bytes) / 20)

static int initialized;
static uintptr_t next_devptr = 0x7f0000000000ull;

/* CUDA_INJECTION64_PATH: the driver loads the tool it names at cuInit
 * and calls its InitializeInjection, as NVIDIA's tools rely on. */
static void inject(void)
{
	const char *p = getenv("CUDA_INJECTION64_PATH");
	int (*init)(void);
	void *h;

	if (!p || !*p)
		return;
	h = dlopen(p, RTLD_NOW);
	*(void **)&init = h ? dlsym(h, "InitializeInjection") : NULL;
	sim_log("{\"ev\":\"injection\",\"path\":\"%s\",\"found\":%d}", p,
		init != NULL);
	if (init)
		init();
}

SIM_EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	if (!__atomic_exchange_n(&initialized, 1, __ATOMIC_ACQ_REL))
		inject();
	sim_driver_init();
	DRV(cuInit, NULL);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuDriverGetVersion(int *v)
{
	const char *e = getenv("SIM_DRIVER_VERSION");

	DRV(cuDriverGetVersion, NULL);
	*v = e ? atoi(e) : SIM_CUDA == 12 ? 12090 : 13000;
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuDeviceGetCount(int *n)
{
	DRV(cuDeviceGetCount, NULL);
	*n = sim_device_count();
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	DRV(cuDeviceGet, NULL);
	if (ordinal < 0 || ordinal >= sim_device_count())
		DRV_RET(CUDA_ERROR_INVALID_DEVICE);
	*d = ordinal;
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	DRV(cuDeviceGetName, NULL);
	(void)d;
	snprintf(name, (size_t)len, "NVIDIA H100 80GB HBM3");
	DRV_RET(CUDA_SUCCESS);
}

static int attribute(CUdevice_attribute a)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
		return 233472;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
	default: return 0;
	}
}

SIM_EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a,
					 CUdevice d)
{
	DRV(cuDeviceGetAttribute, NULL);
	(void)d;
	*v = attribute(a);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	DRV(cuDeviceTotalMem_v2, NULL);
	(void)d;
	*bytes = 85520809984ull;
	DRV_RET(CUDA_SUCCESS);
}

/* ---- contexts: one primary context per device ---- */

static CUcontext ctx_of(int dev)
{
	return (CUcontext)(uintptr_t)(0x1000 + dev);
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	DRV(cuDevicePrimaryCtxRetain, NULL);
	sim_context_id(d);
	*c = ctx_of(d);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	DRV(cuDevicePrimaryCtxRelease_v2, NULL);
	(void)d;
	DRV_RET(CUDA_SUCCESS);
}

/* Active once used; asking does not make it. */
SIM_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags,
					       int *active)
{
	DRV(cuDevicePrimaryCtxGetState, NULL);
	*flags = 0;
	*active = sim_module_count() > 0 || d == 0;
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
	DRV(cuCtxGetCurrent, NULL);
	*c = ctx_of(sim_current_device());
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	DRV(cuCtxSetCurrent, NULL);
	if (c)
		sim_set_device((int)((uintptr_t)c - 0x1000));
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuCtxSynchronize(void)
{
	uint64_t t0 = sim_gpu_now();

	DRV(cuCtxSynchronize, NULL);
	sim_wait_device(sim_current_device());
	sim_sync_done(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
		      (uintptr_t)-1, t0);
	DRV_RET(CUDA_SUCCESS);
}

/* ---- modules: an image is "kernels: NAME NAME ..." ---- */

SIM_EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	const char *p = image;
	char name[256];
	void *mod;
	int n;

	DRV(cuModuleLoadData, NULL);
	if (!p || strncmp(p, "kernels:", 8))
		DRV_RET(CUDA_ERROR_INVALID_IMAGE);
	mod = sim_module_new(0);
	for (p += 8; sscanf(p, " %255s%n", name, &n) == 1; p += n)
		sim_module_add(mod, (const char *)mod + strlen(name) +
			       (size_t)(p - (const char *)image), name);
	*m = (CUmodule)mod;
	DRV_RET(CUDA_SUCCESS);
}

/* The function handle is the module's copy of its name. */
SIM_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m,
					const char *name)
{
	char key[300];

	DRV(cuModuleGetFunction, NULL);
	snprintf(key, sizeof(key), "%s", name);
	*f = (CUfunction)sim_module_add(m, f, name);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuModuleUnload(CUmodule m)
{
	DRV(cuModuleUnload, NULL);
	sim_module_free(m);
	DRV_RET(CUDA_SUCCESS);
}

/* ---- launches ---- */

SIM_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
				   unsigned gz, unsigned bx, unsigned by,
				   unsigned bz, unsigned shmem, CUstream s,
				   void **params, void **extra)
{
	cuLaunchKernel_params p = { f, gx, gy, gz, bx, by, bz, shmem, s,
				    params, extra };
	struct sim_op op = { .kind = SIM_KERNEL };
	const volatile uint32_t *flag;
	uint32_t value;
	uint64_t dur;

	DRV(cuLaunchKernel, &p);
	if (!f)
		DRV_RET(CUDA_ERROR_INVALID_HANDLE);
	op.name = (const char *)f;
	op.grid[0] = gx, op.grid[1] = gy, op.grid[2] = gz;
	op.block[0] = bx, op.block[1] = by, op.block[2] = bz;
	op.shmem = shmem;
	dur = sim_take_kernel_duration(op.grid, op.block);
	if (sim_take_kernel_wait(&flag, &value))
		sim_issue_waiting(&op, (uintptr_t)s, dur, flag, value);
	else
		sim_issue(&op, (uintptr_t)s, dur);
	DRV_RET(CUDA_SUCCESS);
}

/* ---- memory ---- */

SIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	DRV(cuMemAlloc_v2, NULL);
	*p = __atomic_fetch_add(&next_devptr, (bytes + 255) & ~255ull,
				__ATOMIC_RELAXED);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	DRV(cuMemFree_v2, NULL);
	(void)p;
	DRV_RET(CUDA_SUCCESS);
}

static void copy(size_t n, int kind, CUstream s, int wait)
{
	struct sim_op op = { .kind = SIM_MEMCPY, .bytes = n,
			     .copy_kind = kind };
	uint64_t t0 = sim_gpu_now();

	sim_issue(&op, (uintptr_t)s, COPY_NS(n));
	if (!wait)
		return;
	sim_wait_stream(sim_current_device(), (uintptr_t)s);
	(void)t0;
}

SIM_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
	DRV(cuMemcpyHtoD_v2, NULL);
	(void)d, (void)h;
	copy(n, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, NULL, 1);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n)
{
	DRV(cuMemcpyDtoH_v2, NULL);
	(void)d, (void)h;
	copy(n, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, NULL, 1);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h,
					 size_t n, CUstream s)
{
	DRV(cuMemcpyHtoDAsync_v2, NULL);
	(void)d, (void)h;
	copy(n, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, s, 0);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n,
					 CUstream s)
{
	DRV(cuMemcpyDtoHAsync_v2, NULL);
	(void)d, (void)h;
	copy(n, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, s, 0);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n,
				  CUstream st)
{
	DRV(cuMemcpyAsync, NULL);
	(void)d, (void)s;
	copy(n, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, st, 0);
	DRV_RET(CUDA_SUCCESS);
}

static void set(size_t n, unsigned char v, CUstream s)
{
	struct sim_op op = { .kind = SIM_MEMSET, .bytes = n, .value = v };

	sim_issue(&op, (uintptr_t)s, COPY_NS(n) / 2);
}

SIM_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	DRV(cuMemsetD8_v2, NULL);
	(void)d;
	set(n, v, NULL);
	sim_wait_stream(sim_current_device(), 0);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n,
				    CUstream s)
{
	DRV(cuMemsetD8Async, NULL);
	(void)d;
	set(n, v, s);
	DRV_RET(CUDA_SUCCESS);
}

/* ---- streams and events ---- */

SIM_EXPORT CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
	DRV(cuStreamCreate, NULL);
	(void)flags;
	*s = (CUstream)sim_stream_create(sim_current_device());
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	DRV(cuStreamDestroy_v2, NULL);
	(void)s;
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	uint64_t t0 = sim_gpu_now();

	DRV(cuStreamSynchronize, NULL);
	sim_wait_stream(sim_current_device(), (uintptr_t)s);
	sim_sync_done(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
		      (uintptr_t)s, t0);
	DRV_RET(CUDA_SUCCESS);
}

/* An event is the GPU time its stream reaches it: once the work queued
 * before it has ended, and not before the call that records it; the end
 * of the op it follows when that one waits in the stream's queue (its
 * end not known yet). */
struct event {
	uint64_t at;
	const struct sim_op *after;
	int dev;
	int recorded;
	unsigned flags;
};

static uint64_t event_at(const struct event *ev)
{
	return ev->after ? __atomic_load_n(&ev->after->end_gpu,
					   __ATOMIC_ACQUIRE) : ev->at;
}

SIM_EXPORT CUresult cuEventCreate(CUevent *e, unsigned flags)
{
	DRV(cuEventCreate, NULL);
	*e = calloc(1, sizeof(struct event));
	if (*e)
		((struct event *)*e)->flags = flags;
	DRV_RET(*e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

SIM_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	DRV(cuEventDestroy_v2, NULL);
	free(e);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	struct event *ev = (struct event *)e;
	uint64_t now = sim_gpu_now();

	DRV(cuEventRecord, NULL);
	ev->dev = sim_current_device();
	ev->after = sim_stream_last(ev->dev, (uintptr_t)s);
	ev->at = ev->after ? SIM_OPEN : sim_stream_tail(ev->dev, (uintptr_t)s);
	if (ev->at < now)
		ev->at = now;
	ev->recorded = 1;
	DRV_RET(CUDA_SUCCESS);
}

/* cuda.h: "in milliseconds with a resolution of around 0.5
 * microseconds": each end is read on a 500 ns grid. Not recorded, or
 * created with CU_EVENT_DISABLE_TIMING: CUDA_ERROR_INVALID_HANDLE; not
 * yet reached: CUDA_ERROR_NOT_READY. */
static CUresult elapsed(float *ms, const struct event *a,
			const struct event *b)
{
	uint64_t now = sim_gpu_now();

	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	if (!a || !b || !a->recorded || !b->recorded ||
	    a->dev != b->dev ||
	    ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	if (now < event_at(a) || now < event_at(b))
		return CUDA_ERROR_NOT_READY;
	*ms = (float)((double)((int64_t)(event_at(b) / 500 * 500) -
			       (int64_t)(event_at(a) / 500 * 500)) / 1e6);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	DRV(cuEventElapsedTime_v2, NULL);
	DRV_RET(elapsed(ms, (struct event *)a, (struct event *)b));
}

SIM_EXPORT CUresult cuEventSynchronize(CUevent e)
{
	struct event *ev = (struct event *)e;
	uint64_t t0 = sim_gpu_now();

	DRV(cuEventSynchronize, NULL);
	while (sim_gpu_now() < event_at(ev)) {
		struct timespec ms = { 0, 1000000 };

		/* Behind a waiting kernel: its end is not known. */
		if (event_at(ev) == SIM_OPEN)
			nanosleep(&ms, NULL);
	}
	sim_sync_done(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE,
		      (uintptr_t)-1, t0);
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
	struct event *ev = (struct event *)e;

	DRV(cuStreamWaitEvent, NULL);
	(void)flags;
	if (ev->after && event_at(ev) == SIM_OPEN)
		sim_stream_after_op(sim_current_device(), (uintptr_t)s,
				    ev->after);
	else
		sim_stream_after(sim_current_device(), (uintptr_t)s,
				 event_at(ev));
	DRV_RET(CUDA_SUCCESS);
}

SIM_EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
	*s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_UNKNOWN";
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
	*s = r == CUDA_SUCCESS ? "no error" : "unknown error";
	return CUDA_SUCCESS;
}
