/* Drives tprof's CUPTI path end to end without a GPU: runs under the
 * preload with the fake libcupti (fake_cupti.c) linked in, makes hooked
 * calls whose "real" runtime fires CUPTI callbacks, plays the calls no
 * hook sees (static cudart, driver API), and queues real CUPTI record
 * structs. Prints the correlation ids and times the test checks
 * against, one "key value" per line.
 *
 *   cupti_feed full | refuse | calls | steps | gemm
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dlfcn.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

struct call {
	CUpti_CallbackData d;
	uint64_t data;
	int ret;
};

uint64_t fake_now(void);
uint64_t fake_after(uint64_t t, uint64_t ns);
unsigned fake_ts_registrations(void);
void fake_drop(size_t n);
void fake_add(const void *rec);
void fake_cut(void);
void fake_enter(struct call *c, CUpti_CallbackDomain dom, CUpti_CallbackId id,
		const char *name);
void fake_exit(struct call *c, CUpti_CallbackDomain dom, CUpti_CallbackId id,
	       int ret);
void fake_kernel(uint32_t corr, const char *name, uint32_t stream,
		 uint64_t start, uint64_t end, uint32_t graph, uint64_t node);
uint32_t fake_last_corr(void);
unsigned fake_finalized(void);

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static void __global__stub(void) {}

static void device_and_context(void)
{
	CUpti_ActivityDevice5 d;
	CUpti_ActivityContext3 c;

	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 0;
	d.name = "Fake H100";
	d.numMultiprocessors = 132;
	d.numThreadsPerWarp = 32;
	d.maxWarpsPerMultiprocessor = 64;
	d.maxBlocksPerMultiprocessor = 32;
	d.maxRegistersPerMultiprocessor = 65536;
	d.maxSharedMemoryPerMultiprocessor = 233472;
	d.maxRegistersPerBlock = 65536;
	d.maxSharedMemoryPerBlock = 49152;
	d.maxThreadsPerBlock = 1024;
	d.globalMemorySize = 85ull << 30;
	d.computeCapabilityMajor = 9;
	d.computeCapabilityMinor = 0;
	fake_add(&d);
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = 1;
	c.deviceId = 0;
	fake_add(&c);
}

/* A call no hook sees: the CUPTI callback times it. */
static uint32_t unhooked(CUpti_CallbackDomain dom, CUpti_CallbackId id,
			 const char *name)
{
	struct call c;

	fake_enter(&c, dom, id, name);
	fake_exit(&c, dom, id, 0);
	return c.d.correlationId;
}

static void sync_record(uint32_t type, uint32_t stream, uint64_t t0,
			uint64_t t1)
{
	CUpti_ActivitySynchronization2 s;

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = type;
	s.start = t0;
	s.end = t1;
	s.contextId = 1;
	s.streamId = stream;
	s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	fake_add(&s);
}

static void memory_record(uint32_t op, uint64_t bytes, uint64_t t)
{
	CUpti_ActivityMemory4 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = op;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = bytes;
	m.timestamp = t;
	m.deviceId = 0;
	m.contextId = 1;
	fake_add(&m);
}

static void peer_record(uint32_t corr, uint64_t t)
{
	CUpti_ActivityMemcpyPtoP4 p;

	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 1 << 20;
	p.start = fake_after(t, 3000);
	p.end = fake_after(t, 53000);
	p.deviceId = 0;
	p.contextId = 1;
	p.streamId = 11;
	p.srcDeviceId = 0;
	p.dstDeviceId = 1;
	p.correlationId = corr;
	fake_add(&p);
}

static void overhead_record(uint64_t t)
{
	CUpti_ActivityOverhead3 o;

	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.threadId = 42;
	o.start = t;
	o.end = fake_after(t, 700);
	fake_add(&o);
}

static int full(void)
{
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	uint32_t c;
	uint64_t t;
	char buf[64];

	/* CUPTI reports devices and contexts when it starts. */
	device_and_context();
	/* The first hooked call starts CUPTI. */
	cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
			 (cudaStream_t)7);
	printf("hooked_launch %u\n", fake_last_corr());
	printf("ts_registrations %u\n", fake_ts_registrations());

	t = fake_now();
	printf("static_launch_t %llu\n", (unsigned long long)t);
	c = unhooked(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		     "cudaLaunchKernel");
	printf("static_launch %u\n", c);
	/* Converted start before its launch: moved to the launch. */
	fake_kernel(c, "_Z4tinyv", 8, 2 * t - fake_after(t, 50000),
		    fake_after(t, 30000), 0, 0);

	c = unhooked(DRV, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		     "cuLaunchKernel");
	printf("driver_launch %u\n", c);
	t = fake_now();
	fake_kernel(c, "triton_poi_fused_add_0", 10, fake_after(t, 40000), fake_after(t, 41000), 0, 0);

	{	/* cudaMemcpy (unhooked) calls cuMemcpyHtoD: one call. */
		struct call rt, drv;

		fake_enter(&rt, RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
			   "cudaMemcpy");
		fake_enter(&drv, DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
			   "cuMemcpyHtoD_v2");
		fake_exit(&drv, DRV, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, 0);
		fake_exit(&rt, RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
			  0);
		printf("nested_memcpy %u\n", rt.d.correlationId);
		printf("nested_driver %u\n", drv.d.correlationId);
		peer_record(rt.d.correlationId, fake_now());
	}

	cudaGraphLaunch((cudaGraphExec_t)0x1, (cudaStream_t)9);
	printf("graph_launch %u\n", fake_last_corr());
	cudaMemcpyAsync(buf, buf, 1 << 20, cudaMemcpyHostToDevice,
			(cudaStream_t)12);
	printf("memcpy_async %u\n", fake_last_corr());

	/* Two kernels overlapping on stream 20: the second is moved. */
	c = unhooked(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		     "cudaLaunchKernel");
	t = fake_now();
	fake_kernel(c, "_Z5firstv", 20, fake_after(t, 100000), fake_after(t, 200000), 0, 0);
	printf("overlap_a %u\n", c);
	c = unhooked(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		     "cudaLaunchKernel");
	fake_kernel(c, "_Z6secondv", 20, fake_after(t, 150000), fake_after(t, 250000), 0, 0);
	printf("overlap_b %u\n", c);

	printf("orphan_t %llu\n", (unsigned long long)t);
	/* No timestamp; no launch ever seen. */
	fake_kernel(c, "_Z8no_timev", 21, 0, 0, 0, 0);
	fake_kernel(99999, "_Z8orphanedv", 21, fake_after(t, 10000), fake_after(t, 20000), 0, 0);

	t = fake_now();
	printf("clock_t %llu\n", (unsigned long long)t);
	memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 4096, t);
	memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 8192,
		      fake_after(t, 1000));
	memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 4096,
		      fake_after(t, 2000));
	sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 7,
		    fake_after(t, 3000), fake_after(t, 9000));
	sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
		    CUPTI_SYNCHRONIZATION_INVALID_VALUE, fake_after(t, 10000), fake_after(t, 11000));
	overhead_record(fake_after(t, 500));
	/* Exactly 5 ms after clock_t on the GPU's clock. */
	c = unhooked(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		     "cudaLaunchKernel");
	fake_kernel(c, "_Z5timedv", 30, fake_after(t, 5000000), fake_after(t, 6000000), 0, 0);
	printf("timed %u\n", c);
	fake_drop(5);
	fake_cut();

	/* A launch whose record comes in a later buffer, after the writer
	 * has flushed a few times. */
	c = unhooked(RT, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		     "cudaLaunchKernel");
	t = fake_now();
	printf("late %u\n", c);
	fflush(stdout);
	usleep(600000);
	fake_kernel(c, "_Z4latev", 13, fake_after(t, 1000), fake_after(t, 2000), 0, 0);
	return 0;
}

/* Holds more buffers than TPROF_CUPTI_BUFFER_MB allows. */
static int refuse(void)
{
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	int i;

	for (i = 0; i < 3; i++) {
		cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
				 (cudaStream_t)7);
		fake_cut();
	}
	return 0;
}

/* A launch per step, each kernel running 2 ms after its step ended;
 * with TPROF_WAIT=1 TPROF_ACTIVE=1 TPROF_REPEAT=1 only step 1's kernel is
 * kept, and CUPTI is let go once the window has ended, at the next
 * CUDA call. */
static int steps(void)
{
	long (*step)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "tprof_step");
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	struct timespec pause = { 1, 200000000 };
	/* CUPTI's names outlive the records: literals, not a buffer. */
	static const char *const names[] = { "k0", "k1", "k2", "k3" };
	uint64_t t;
	int i;

	device_and_context();
	for (i = 0; i < 4; i++) {
		cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
				 (cudaStream_t)7);
		t = fake_now();
		printf("launch%d %u\n", i, fake_last_corr());
		fake_kernel(fake_last_corr(), names[i], 7, fake_after(t, 2000000),
			    fake_after(t, 2100000), 0, 0);
		if (step)
			step();
	}
	fake_cut();
	printf("finalized_before %u\n", fake_finalized());
	fflush(stdout);
	nanosleep(&pause, NULL);
	/* CUPTI is let go in the exit callback of the next CUDA call. */
	cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
			 (cudaStream_t)7);
	printf("finalized_after %u\n", fake_finalized());
	return 0;
}

/* A cuBLAS GEMM (played by gemm_launch.so, preloaded after libtprof)
 * launching one kernel that runs 1 ms, and a launch outside it. */
static int gemm(void)
{
	typedef int (*sgemm_fn)(void *, int, int, int, int, int,
				const float *, const float *, int,
				const float *, int, const float *, float *,
				int);
	sgemm_fn sgemm = (sgemm_fn)dlsym(RTLD_DEFAULT, "cublasSgemm_v2");
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	float one = 1.0f;
	uint64_t t;

	if (!sgemm)
		return 3;
	device_and_context();
	sgemm((void *)0x1, 0, 0, 1024, 1024, 1024, &one, NULL, 1024, NULL,
	      1024, &one, NULL, 1024);
	t = fake_now();
	printf("gemm_launch %u\n", fake_last_corr());
	fake_kernel(fake_last_corr(), "sgemm_128x64_kernel", 7, fake_after(t, 10000),
		    fake_after(t, 1010000), 0, 0);
	cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
			 (cudaStream_t)7);
	printf("other_launch %u\n", fake_last_corr());
	fake_kernel(fake_last_corr(), "other_kernel", 7, fake_after(t, 2000000),
		    fake_after(t, 2500000), 0, 0);
	fake_cut();
	return 0;
}

/* A record an hour after its launch (another tool replaced CUPTI's
 * timestamp source), beside a right one: the first is counted, not
 * placed. */
static int far(void)
{
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	uint64_t t;

	device_and_context();
	cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
			 (cudaStream_t)7);
	t = fake_now();
	fake_kernel(fake_last_corr(), "near_kernel", 7, fake_after(t, 1000),
		    fake_after(t, 2000), 0, 0);
	cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
			 (cudaStream_t)7);
	fake_kernel(fake_last_corr(), "far_kernel", 7,
		    fake_after(t, 3600000000000ull),
		    fake_after(t, 3600000001000ull), 0, 0);
	fake_cut();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "full";

	if (!strcmp(mode, "full"))
		return full();
	if (!strcmp(mode, "refuse"))
		return refuse();
	if (!strcmp(mode, "steps"))
		return steps();
	if (!strcmp(mode, "gemm"))
		return gemm();
	if (!strcmp(mode, "far"))
		return far();
	if (!strcmp(mode, "calls")) {
		dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };

		cudaLaunchKernel((const void *)__global__stub, g, b, NULL, 0,
				 (cudaStream_t)7);
		printf("hooked_launch %u\n", fake_last_corr());
		return 0;
	}
	return 2;
}
