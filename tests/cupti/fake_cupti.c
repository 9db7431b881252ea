/* A stand-in for libcupti.so.13 on machines without a GPU: the real CUPTI
 * entry points tprof calls, delivering REAL record structs (from the
 * installed CUPTI headers) through tprof's own buffer callbacks, and
 * invoking tprof's API callback as CUDA calls would.
 *
 * It also defines cudaLaunchKernel, cudaGraphLaunch and cudaMemcpyAsync
 * as the "real" runtime behind tprof's hooks: each invokes the CUPTI
 * callback inside the call, as libcudart does, and queues the GPU records
 * the call would produce. The test driver (cupti_feed.c) links this
 * library and calls fake_* helpers for everything else.
 *
 * Environment: FAKE_CUPTI_VERSION (default 130100), FAKE_CUPTI_SUBSCRIBE
 * (an error code cuptiSubscribe returns).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_CallbackFunc subscriber;
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static CUpti_TimestampCallbackFunc timestamp;
static double rate;	/* callback units per ns */

static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned ts_registrations, flushes, forced_flushes;
static unsigned enabled_kinds[64];
static unsigned next_corr = 1000;
static size_t dropped_next;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Queued records, cut into batches: one batch per buffer. */
#define MAX_BYTES (1 << 20)
struct batch {
	unsigned char data[MAX_BYTES];
	size_t len;
};
static struct batch batches[16];
static unsigned nbatch, cur;

static size_t record_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return sizeof(CUpti_ActivityContext3);
	default:
		return 0;
	}
}

static size_t aligned(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable,
				      CUpti_SubscriberHandle sub,
				      CUpti_CallbackDomain dom)
{
	(void)enable;
	(void)sub;
	(void)dom;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a,
					     size_t *size, void *value)
{
	(void)a;
	(void)size;
	(void)value;
	return CUPTI_SUCCESS;
}

EXPORT uint64_t fake_now(void);

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	*t = fake_now();
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	const char *e = getenv("FAKE_CUPTI_VERSION");

	/* as CUPTI 13.2 without a driver dies (a recursion without end):
	 * tprof must not call CUPTI then */
	if (getenv("FAKE_CUPTI_CRASH"))
		abort();
	*v = e ? (uint32_t)atoi(e) : 130100;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ?
		"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" :
		r == CUPTI_ERROR_UNKNOWN ? "CUPTI_ERROR_UNKNOWN" :
		"CUPTI_ERROR_OTHER";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h,
				  CUpti_CallbackFunc cb, void *ud)
{
	const char *e = getenv("FAKE_CUPTI_SUBSCRIBE");

	(void)ud;
	if (e)
		return (CUptiResult)atoi(e);
	subscriber = cb;
	*h = (CUpti_SubscriberHandle)&subscriber;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	(void)h;
	subscriber = NULL;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle h,
				       CUpti_CallbackDomain d,
				       CUpti_CallbackId id)
{
	(void)on; (void)h; (void)d; (void)id;
	return CUPTI_SUCCESS;
}

/* The names real CUPTI 13 gives these ids; others are not offered. */
EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t id,
					const char **name)
{
	static const struct {
		CUpti_CallbackDomain d;
		uint32_t id;
		const char *name;
	} names[] = {
		{ CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		  "cudaLaunchKernel_v7000" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
		  "cudaGraphLaunch_v10000" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		  "cudaMemcpyAsync_v3020" },
		{ CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
		  "cudaGetDevice_v3020" },
		{ CUPTI_CB_DOMAIN_DRIVER_API,
		  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel" },
		{ CUPTI_CB_DOMAIN_DRIVER_API,
		  CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2" },
	};
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].d == d && names[i].id == id) {
			*name = names[i].name;
			return CUPTI_SUCCESS;
		}
	}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if ((unsigned)k < 64)
		enabled_kinds[k] = 1;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if ((unsigned)k < 64)
		enabled_kinds[k] = 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req,
	CUpti_BuffersCallbackCompleteFunc done)
{
	requested = req;
	completed = done;
	return CUPTI_SUCCESS;
}

/* A (raw ns, callback) pair: the callback read on both sides, the
 * tightest of a few tries, so that preemption does not tilt the rate. */
static void pair(uint64_t *raw, uint64_t *ts)
{
	uint64_t t1, t2, r, best = UINT64_MAX;
	int i;

	for (i = 0; i < 8; i++) {
		t1 = timestamp();
		r = raw_ns();
		t2 = timestamp();
		if (t2 - t1 >= best)
			continue;
		best = t2 - t1;
		*raw = r;
		*ts = t1 + (t2 - t1) / 2;
	}
}

/* The callback's rate against CLOCK_MONOTONIC_RAW, over 50 ms. */
static void calibrate(void)
{
	struct timespec d = { 0, 50000000 };
	uint64_t ts0, raw0, ts1, raw1;

	pair(&raw0, &ts0);
	nanosleep(&d, NULL);
	pair(&raw1, &ts1);
	rate = (double)(ts1 - ts0) / (double)(raw1 - raw0);
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(
	CUpti_TimestampCallbackFunc f)
{
	timestamp = f;
	if (f)
		calibrate();
	ts_registrations++;
	return CUPTI_SUCCESS;
}

/* Every finished batch goes out in a buffer of tprof's; a batch tprof
 * has no buffer for is dropped and counted, as CUPTI does. */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	unsigned i, last;

	/* cupti_activity.h: CUPTI_ERROR_INVALID_OPERATION "if not preceded
	 * by a successful call to cuptiActivityRegisterCallbacks". */
	if (!requested)
		return CUPTI_ERROR_INVALID_OPERATION;
	pthread_mutex_lock(&lock);
	flushes++;
	forced_flushes += !!(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	last = flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? cur + 1 : cur;
	for (i = 0; i < last && i < nbatch; i++) {
		uint8_t *buf = NULL;
		size_t size = 0, maxr = 0;

		if (!batches[i].len)
			continue;
		requested(&buf, &size, &maxr);
		if (!buf || size < batches[i].len) {
			dropped_next += 1;
		} else {
			memcpy(buf, batches[i].data, batches[i].len);
			completed(NULL, 0, buf, size, batches[i].len);
		}
		batches[i].len = 0;
	}
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
					      CUpti_Activity **r)
{
	size_t off = 0;

	if (*r)
		off = (size_t)((uint8_t *)*r - buf) +
		      aligned(record_size((*r)->kind));
	if (off >= valid) {
		*r = NULL;
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	*r = (CUpti_Activity *)(buf + off);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s,
						     size_t *n)
{
	(void)c; (void)s;
	*n = dropped_next;
	dropped_next = 0;
	return CUPTI_SUCCESS;
}

static unsigned finalized;

EXPORT CUptiResult cuptiFinalize(void)
{
	finalized++;
	return CUPTI_SUCCESS;
}

EXPORT unsigned fake_finalized(void)
{
	return finalized;
}

/* ---- helpers for the driver ---- */

EXPORT uint64_t fake_now(void)
{
	struct timespec ts;

	if (timestamp)
		return timestamp();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* t + ns of GPU time, in the unit of the registered timestamp callback:
 * CUPTI converts its GPU clock into whatever the callback returns by
 * sampling it, and so does this, against CLOCK_MONOTONIC_RAW from the
 * registration on. */
EXPORT uint64_t fake_after(uint64_t t, uint64_t ns)
{
	if (!timestamp || rate <= 0)
		return t + ns;
	return t + (uint64_t)((double)ns * rate + 0.5);
}

EXPORT unsigned fake_ts_registrations(void) { return ts_registrations; }
EXPORT unsigned fake_forced_flushes(void) { return forced_flushes; }
EXPORT int fake_kind_enabled(int k) { return enabled_kinds[k]; }
EXPORT void fake_drop(size_t n) { dropped_next += n; }

EXPORT void fake_add(const void *rec)
{
	size_t n = aligned(record_size(((const CUpti_Activity *)rec)->kind));

	pthread_mutex_lock(&lock);
	if (cur >= nbatch)
		nbatch = cur + 1;
	if (batches[cur].len + n <= MAX_BYTES) {
		memcpy(batches[cur].data + batches[cur].len, rec, n);
		batches[cur].len += n;
	}
	pthread_mutex_unlock(&lock);
}

/* Later records go to another buffer; the finished ones are delivered at
 * the next flush. */
EXPORT void fake_cut(void)
{
	pthread_mutex_lock(&lock);
	if (cur < 15)
		cur++;
	pthread_mutex_unlock(&lock);
}

struct call {
	CUpti_CallbackData d;
	uint64_t data;
	int ret;
};

EXPORT void fake_enter(struct call *c, CUpti_CallbackDomain dom,
		       CUpti_CallbackId id, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->d.callbackSite = CUPTI_API_ENTER;
	c->d.functionName = name;
	c->d.correlationData = &c->data;
	c->d.correlationId = __atomic_fetch_add(&next_corr, 1, __ATOMIC_RELAXED);
	c->d.functionReturnValue = &c->ret;
	if (subscriber)
		subscriber(NULL, dom, id, &c->d);
}

EXPORT void fake_exit(struct call *c, CUpti_CallbackDomain dom,
		      CUpti_CallbackId id, int ret)
{
	c->d.callbackSite = CUPTI_API_EXIT;
	c->ret = ret;
	if (subscriber)
		subscriber(NULL, dom, id, &c->d);
}

EXPORT size_t fake_call_size(void)
{
	return sizeof(struct call);
}

EXPORT uint32_t fake_call_corr(const struct call *c)
{
	return c->d.correlationId;
}

/* A kernel record as CUPTI 13 writes it. */
EXPORT void fake_kernel(uint32_t corr, const char *name, uint32_t stream,
			uint64_t start, uint64_t end, uint32_t graph,
			uint64_t node)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.registersPerThread = 32;
	k.start = start;
	k.end = end;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = stream;
	k.gridX = 264; k.gridY = 1; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 3072;
	k.correlationId = corr;
	k.name = name;
	k.graphId = graph;
	k.graphNodeId = node;
	fake_add(&k);
}

static uint32_t last_corr;

EXPORT uint32_t fake_last_corr(void)
{
	return last_corr;
}

/* The runtime behind the hooks: the CUPTI callback fires inside. */
EXPORT cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **a,
				    size_t sh, cudaStream_t s)
{
	struct call c;
	uint64_t t;

	(void)f; (void)g; (void)b; (void)a; (void)sh;
	fake_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
		   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		   "cudaLaunchKernel");
	t = fake_now();
	fake_exit(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0);
	last_corr = c.d.correlationId;
	fake_kernel(last_corr, "_Z5saxpyifPfS_", (uint32_t)(uintptr_t)s,
		    fake_after(t, 2000), fake_after(t, 12000), 0, 0);
	return cudaSuccess;
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s)
{
	CUpti_ActivityMemset4 m;
	struct call c;
	uint64_t t;

	(void)g;
	fake_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
		   CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
		   "cudaGraphLaunch");
	t = fake_now();
	fake_exit(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 0);
	last_corr = c.d.correlationId;
	fake_kernel(last_corr, "_ZN3ops4stepILi1EEEvPf", (uint32_t)(uintptr_t)s,
		    fake_after(t, 5000), fake_after(t, 8000), 5, 11);
	fake_kernel(last_corr, "_ZN3ops4stepILi2EEEvPf", (uint32_t)(uintptr_t)s,
		    fake_after(t, 8000), fake_after(t, 9000), 5, 12);
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.bytes = 4096;
	m.start = fake_after(t, 9500);
	m.end = fake_after(t, 10500);
	m.streamId = (uint32_t)(uintptr_t)s;
	m.contextId = 1;
	m.correlationId = last_corr;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.graphId = 5;
	m.graphNodeId = 13;
	fake_add(&m);
	return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n,
				   enum cudaMemcpyKind kind, cudaStream_t s)
{
	CUpti_ActivityMemcpy6 m;
	struct call c;
	uint64_t t;

	(void)dst; (void)src; (void)kind;
	fake_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
		   CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
		   "cudaMemcpyAsync");
	t = fake_now();
	fake_exit(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 0);
	last_corr = c.d.correlationId;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = n;
	m.start = fake_after(t, 20000);
	m.end = fake_after(t, 120000);
	m.contextId = 1;
	m.streamId = (uint32_t)(uintptr_t)s;
	m.correlationId = last_corr;
	fake_add(&m);
	return cudaSuccess;
}
