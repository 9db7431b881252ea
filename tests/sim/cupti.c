/* CUPTI of the simulated machine (libcupti.so.13): the callback API and
 * the activity API, as cupti_callbacks.h and cupti_activity.h document
 * them, at their worst:
 *
 *  - one subscriber (a second cuptiSubscribe fails with
 *    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, before 13.3);
 *  - callbacks at enter and exit of every enabled call, with a unique
 *    correlation id per call (driver calls inside runtime calls too) and
 *    the call's correlationData slot;
 *  - process-wide buffer and timestamp callbacks: registering again
 *    replaces them;
 *  - one activity buffer per thread (CUDA 13's default,
 *    CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER): a record goes into
 *    the buffer of the thread that issued the work, and is complete once
 *    the work has ended on the GPU;
 *  - full buffers whose records are complete are handed back from
 *    CUPTI's own delivery thread, in no time order across threads;
 *    cuptiActivityFlushAll(0) hands back every buffer whose records are
 *    all complete, full or not, and FLUSH_FORCED every buffer, records of
 *    work still running with zero timestamps;
 *  - a refused buffer drops the records that needed it (counted, reset
 *    when read by cuptiActivityGetNumDroppedRecords);
 *  - record times in the unit of the registered timestamp callback,
 *    converted from the GPU's own clock by sampling the callback (no
 *    callback: CUPTI's default, nanoseconds of CLOCK_REALTIME);
 *  - kernel names owned by their module (freed at unload);
 *  - after CUDA's teardown at exit nothing is delivered any more, and
 *    cuptiFinalize aborts the process when another thread is inside a
 *    CUDA call, or enters one while it runs (cupti_activity.h: call it
 *    from an API exit callback).
 *
 * Ground truth goes to SIM_LOG (core.c); this file logs what it
 * delivered, dropped and lost.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

struct cbid_name {
	uint32_t id;
	const char *name;
};

#if SIM_CUDA == 12
#include "cbid_names_12.h"
#else
#include "cbid_names.h"
#endif

#define N_RT (sizeof(RUNTIME_NAMES) / sizeof(RUNTIME_NAMES[0]))
#define N_DRV (sizeof(DRIVER_NAMES) / sizeof(DRIVER_NAMES[0]))
#define MAX_CBID 1024
#define MAX_KIND 64
#define MAX_RECS 65536	/* records per buffer, at most */

/* A thread's buffer: the records reserved in it, each with its op. */
struct tbuf {
	uint8_t *data;
	size_t size, used;
	struct sim_op **ops;	/* NULL for records without an op */
	size_t *offs;
	unsigned n;
	int full;
	long tid;
	struct tbuf *next;
};

static struct {
	pthread_mutex_t lock;
	/* callback API */
	CUpti_CallbackFunc cb;
	void *cb_data;
	int subscribed;
	uint8_t enabled[4][MAX_CBID];
	/* activity API */
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	CUpti_TimestampCallbackFunc ts;
	uint64_t ts0_gpu, ts0_cb, ts1_gpu, ts1_cb;
	int kind_on[MAX_KIND];
	struct tbuf *pending;	/* buffers not yet handed back */
	uint64_t dropped;
	int torn_down;
	pthread_t delivery;
	int delivery_started;
	size_t attr[16];
	int attr_set[16];
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread struct tbuf *mine;

static uint64_t env_ns(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);

	return e ? strtoull(e, NULL, 10) : dflt;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000ull),
			      (long)(ns % 1000000000ull) };

	while (ns && nanosleep(&t, &t))
		;
}

static uint32_t version(void)
{
	const char *e = getenv("SIM_CUPTI_VERSION");

	return e ? (uint32_t)strtoul(e, NULL, 10) : SIM_CUDA == 12 ? 28 : 130100;
}

/* A known bug of the reported version, or as SIM_BUG_<name>=0|1 says. */
static int bug(const char *name, int by_version)
{
	char var[64];
	const char *e;

	snprintf(var, sizeof(var), "SIM_BUG_%s", name);
	e = getenv(var);
	return e ? *e == '1' : by_version;
}

/* CUPTI 12.6 Update 2 through 13.0.x: kernel records carry zero
 * timestamps when a timestamp callback is registered (fixed in 13.1).
 * API versions do not tell 12.6's updates apart: all of 12.6 has it. */
static int bug_zero_ts(void)
{
	uint32_t v = version();

	return bug("ZERO_TS", (v >= 24 && v <= 28) ||
			      (v >= 130000 && v < 130100));
}

/* CUPTI below API 27 crashes when a buffer request is refused (Kineto
 * issue #1534). */
static int bug_refused_crash(void)
{
	return bug("REFUSED_CRASH", version() < 27);
}

SIM_EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	*v = version();
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" :
	     r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ?
	     "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" :
	     "CUPTI_ERROR_UNKNOWN";
	return CUPTI_SUCCESS;
}

/* ---- timestamps ---- */

/* GPU time in the unit of the client's clock: a line through the sample
 * taken at registration and the latest one, as CUPTI normalizes GPU
 * timestamps to the CPU's (whatever unit the callback returns). */
/* One (GPU, callback) pair, bracketed: the callback read on both sides
 * of the GPU's, the tightest of a few tries kept, as a clock correlation
 * is taken (a pair split by preemption would tilt the line). */
static void pair(uint64_t *gpu, uint64_t *cb)
{
	uint64_t c1, c2, g, best = UINT64_MAX;
	int i;

	for (i = 0; i < 8; i++) {
		c1 = S.ts();
		g = sim_gpu_now();
		c2 = S.ts();
		if (c2 - c1 >= best)
			continue;
		best = c2 - c1;
		*gpu = g;
		*cb = c1 + (c2 - c1) / 2;
	}
}

static void sample(void)
{
	if (!S.ts)
		return;
	pair(&S.ts1_gpu, &S.ts1_cb);
}

static uint64_t to_client(uint64_t gpu)
{
	long double rate;

	if (!gpu)
		return 0;
	if (!S.ts)
		return sim_gpu_to_realtime(gpu);
	rate = (long double)(S.ts1_cb - S.ts0_cb) /
	       (long double)(S.ts1_gpu - S.ts0_gpu);
	return S.ts0_cb + (uint64_t)((long double)(int64_t)(gpu - S.ts0_gpu) *
				     rate);
}

/* Two samples 10 ms apart at registration give the callback's rate from
 * the start; later samples lengthen the line (CUPTI calibrates the
 * callback against the GPU's clock when it is registered). */
SIM_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(
	CUpti_TimestampCallbackFunc f)
{
	struct timespec ms10 = { 0, 10000000 };

	pthread_mutex_lock(&S.lock);
	S.ts = f;
	if (f) {
		pair(&S.ts0_gpu, &S.ts0_cb);
		nanosleep(&ms10, NULL);
		sample();
	}
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"timestamp_callback\","
		"\"set\":%d}", f != NULL);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	*t = S.ts ? S.ts() : sim_gpu_to_realtime(sim_gpu_now());
	return CUPTI_SUCCESS;
}

/* ---- the callback API ---- */

static const char *cb_name(CUpti_CallbackDomain d, uint32_t id)
{
	const struct cbid_name *t = d == CUPTI_CB_DOMAIN_RUNTIME_API ?
				    RUNTIME_NAMES : DRIVER_NAMES;
	size_t n = d == CUPTI_CB_DOMAIN_RUNTIME_API ? N_RT : N_DRV, i;

	for (i = 0; i < n; i++)
		if (t[i].id == id)
			return t[i].name;
	return NULL;
}

SIM_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d,
					    uint32_t id, const char **name)
{
	if (!name || (d != CUPTI_CB_DOMAIN_RUNTIME_API &&
		      d != CUPTI_CB_DOMAIN_DRIVER_API))
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = cb_name(d, id);
	return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

SIM_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub,
				      CUpti_CallbackFunc cb, void *data)
{
	pthread_mutex_lock(&S.lock);
	if (S.subscribed) {
		pthread_mutex_unlock(&S.lock);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	S.subscribed = 1;
	S.cb = cb;
	S.cb_data = data;
	memset(S.enabled, 0, sizeof(S.enabled));
	pthread_mutex_unlock(&S.lock);
	*sub = (CUpti_SubscriberHandle)&S;
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	if (sub != (CUpti_SubscriberHandle)&S || !S.subscribed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	S.subscribed = 0;
	S.cb = NULL;
	memset(S.enabled, 0, sizeof(S.enabled));
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

static int valid_id(CUpti_CallbackDomain d, CUpti_CallbackId id)
{
	if (d == CUPTI_CB_DOMAIN_RESOURCE)
		return id > 0 && id < CUPTI_CBID_RESOURCE_SIZE;
	return id < MAX_CBID && cb_name(d, id);
}

SIM_EXPORT CUptiResult cuptiEnableCallback(uint32_t on,
					   CUpti_SubscriberHandle sub,
					   CUpti_CallbackDomain d,
					   CUpti_CallbackId id)
{
	if (sub != (CUpti_SubscriberHandle)&S || (unsigned)d >= 4 ||
	    !valid_id(d, id))
		return CUPTI_ERROR_INVALID_PARAMETER;
	S.enabled[d][id] = (uint8_t)!!on;
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiEnableDomain(uint32_t on,
					 CUpti_SubscriberHandle sub,
					 CUpti_CallbackDomain d)
{
	if (sub != (CUpti_SubscriberHandle)&S || (unsigned)d >= 4)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(S.enabled[d], !!on, MAX_CBID);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t on,
					     CUpti_SubscriberHandle sub)
{
	cuptiEnableDomain(on, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	return cuptiEnableDomain(on, sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

static void on_api(int site, CUpti_CallbackDomain dom, uint32_t cbid,
		   const char *name, const char *symbol, uint32_t corr,
		   void *params, void *ret, uint64_t *data, uint32_t ctx)
{
	CUpti_CallbackFunc cb = S.cb;
	CUpti_CallbackData d;

	if (!cb || cbid >= MAX_CBID || !S.enabled[dom][cbid])
		return;
	memset(&d, 0, sizeof(d));
	d.callbackSite = site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
	d.functionName = name;
	d.functionParams = params;
	d.functionReturnValue = ret;
	d.symbolName = symbol;
	d.context = (CUcontext)(uintptr_t)(0x1000 + ctx - 1);
	d.contextUid = ctx;
	d.correlationData = data;
	d.correlationId = corr;
	cb(S.cb_data, dom, cbid, &d);
}

/* ---- activity records ---- */

/* The records each version delivers (its cupti_activity.h's newest
 * structs): CUDA 13 Kernel10, Memcpy6, Synchronization2; CUPTI 12.8 and
 * 12.9 (API 26, 28) Kernel9, Memcpy6, Synchronization2; 12.6 (API 24)
 * Kernel9, Memcpy5, Synchronization (API 25 taken as 24). Each older
 * struct is the newer one's beginning (the CUDA 13 headers keep them in
 * cupti_activity_deprecated.h), so records are filled through the newer
 * one with the fields the older one has; only the size differs. */
_Static_assert(offsetof(CUpti_ActivityKernel10, isDeviceLaunched) ==
	       sizeof(CUpti_ActivityKernel9), "Kernel9 is Kernel10's head");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, isDeviceLaunched) ==
	       offsetof(CUpti_ActivityMemcpy5, pad2),
	       "Memcpy5 is Memcpy6's head");
_Static_assert(offsetof(CUpti_ActivitySynchronization2, cudaEventSyncId) ==
	       sizeof(CUpti_ActivitySynchronization),
	       "Synchronization is Synchronization2's head");

static int old_records(void)
{
	return SIM_CUDA == 12 && version() < 26;
}

static size_t record_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return SIM_CUDA == 12 ? sizeof(CUpti_ActivityKernel9) :
					sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return old_records() ? sizeof(CUpti_ActivityMemcpy5) :
				       sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return old_records() ?
		       sizeof(CUpti_ActivitySynchronization) :
		       sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return sizeof(CUpti_ActivityContext3);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	default:
		return 0;
	}
}

static CUpti_ActivityKind kind_of(const struct sim_op *op)
{
	switch (op->kind) {
	case SIM_KERNEL:
		return S.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ?
		       CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL :
		       CUPTI_ACTIVITY_KIND_KERNEL;
	case SIM_MEMCPY:
		return CUPTI_ACTIVITY_KIND_MEMCPY;
	case SIM_MEMSET:
		return CUPTI_ACTIVITY_KIND_MEMSET;
	default:
		return CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	}
}

/* The static part of an op's record, written when it is issued. */
static void fill_static(void *rec, CUpti_ActivityKind k,
			const struct sim_op *op)
{
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
	    k == CUPTI_ACTIVITY_KIND_KERNEL) {
		CUpti_ActivityKernel10 *r = rec;

		r->kind = k;
		r->name = op->name;
		r->deviceId = op->device;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
		r->gridX = (int32_t)op->grid[0];
		r->gridY = (int32_t)op->grid[1];
		r->gridZ = (int32_t)op->grid[2];
		r->blockX = (int32_t)op->block[0];
		r->blockY = (int32_t)op->block[1];
		r->blockZ = (int32_t)op->block[2];
		r->dynamicSharedMemory = (int32_t)op->shmem;
		r->registersPerThread = 32;
		r->graphId = op->graph_id;
		r->graphNodeId = op->graph_node;
	} else if (k == CUPTI_ACTIVITY_KIND_MEMCPY) {
		CUpti_ActivityMemcpy6 *r = rec;

		r->kind = k;
		r->copyKind = (uint8_t)op->copy_kind;
		r->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		r->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		r->bytes = op->bytes;
		r->deviceId = op->device;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
	} else if (k == CUPTI_ACTIVITY_KIND_MEMSET) {
		CUpti_ActivityMemset4 *r = rec;

		r->kind = k;
		r->value = op->value;
		r->bytes = op->bytes;
		r->deviceId = op->device;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
		r->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	} else {
		CUpti_ActivitySynchronization2 *r = rec;

		r->kind = k;
		r->type = (CUpti_ActivitySynchronizationType)op->sync_type;
		r->contextId = op->context;
		r->streamId = op->stream;
		r->correlationId = op->corr;
		r->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	}
}

/* Timestamps, once the op has ended (0 while it runs). */
static void fill_times(void *rec, const struct sim_op *op, int done)
{
	uint64_t s = done ? to_client(op->start_gpu) : 0;
	uint64_t e = done ? to_client(op->end_gpu) : 0;

	switch (((CUpti_Activity *)rec)->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		if (S.ts && bug_zero_ts())
			s = e = 0;
		((CUpti_ActivityKernel10 *)rec)->start = s;
		((CUpti_ActivityKernel10 *)rec)->end = e;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		((CUpti_ActivityMemcpy6 *)rec)->start = s;
		((CUpti_ActivityMemcpy6 *)rec)->end = e;
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		((CUpti_ActivityMemset4 *)rec)->start = s;
		((CUpti_ActivityMemset4 *)rec)->end = e;
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		((CUpti_ActivitySynchronization2 *)rec)->start = s;
		((CUpti_ActivitySynchronization2 *)rec)->end = e;
		break;
	default:
		break;
	}
}

static int op_done(const struct sim_op *op, uint64_t now)
{
	return !op || op->end_gpu <= now;
}

/* The calling thread's buffer with room for size bytes, asked of the
 * client when needed; NULL when it declined (lock held). */
static struct tbuf *room(size_t size)
{
	struct tbuf *b = mine;
	uint8_t *data = NULL;
	size_t bsize = 0, max = 0;

	if (b && !b->full && b->used + size <= b->size && b->n < MAX_RECS)
		return b;
	if (b)
		b->full = 1;
	mine = NULL;
	if (!S.request)
		return NULL;
	pthread_mutex_unlock(&S.lock);
	S.request(&data, &bsize, &max);
	pthread_mutex_lock(&S.lock);
	if ((!data || bsize < size) && bug_refused_crash()) {
		fprintf(stderr, "cupti-sim: a buffer request was refused: "
			"crash (CUPTI API %u; fixed in API 27)\n", version());
		sim_log("{\"ev\":\"abort\",\"why\":\"buffer refused\"}");
		abort();
	}
	if (!data || bsize < size)
		return NULL;
	b = calloc(1, sizeof(*b));
	b->ops = calloc(MAX_RECS, sizeof(*b->ops));
	b->offs = calloc(MAX_RECS, sizeof(*b->offs));
	if (!b || !b->ops || !b->offs)
		abort();
	b->data = data;
	b->size = bsize;
	b->tid = sim_tid();
	b->next = S.pending;
	S.pending = b;
	mine = b;
	return b;
}

/* A record for op (or a static one: op NULL, rec given). */
static void reserve(CUpti_ActivityKind k, struct sim_op *op,
		    const void *rec)
{
	size_t size = record_size(k);
	struct tbuf *b;

	pthread_mutex_lock(&S.lock);
	if (S.torn_down || !S.kind_on[k]) {
		pthread_mutex_unlock(&S.lock);
		return;
	}
	b = room(size);
	if (!b) {
		S.dropped++;
		pthread_mutex_unlock(&S.lock);
		sim_log("{\"ev\":\"dropped\",\"why\":\"no buffer\","
			"\"corr\":%u}", op ? op->corr : 0);
		return;
	}
	memset(b->data + b->used, 0, size);
	if (op)
		fill_static(b->data + b->used, k, op);
	else
		memcpy(b->data + b->used, rec, size);
	b->ops[b->n] = op;
	b->offs[b->n] = b->used;
	b->n++;
	b->used += size;
	pthread_mutex_unlock(&S.lock);
}

static void on_op(struct sim_op *op)
{
	reserve(kind_of(op), op, NULL);
}

/* SIM_NO_CONTEXT_RECORDS=1: contexts without a CONTEXT record, as one
 * made before the client enabled the kind, or a CUDA 13.2 green
 * context. */
static void on_context(uint32_t ctx, uint32_t dev)
{
	const char *no = getenv("SIM_NO_CONTEXT_RECORDS");
	CUpti_ActivityContext3 r;

	if (no && *no == '1')
		return;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	r.contextId = ctx;
	r.deviceId = dev;
	reserve(CUPTI_ACTIVITY_KIND_CONTEXT, NULL, &r);
}

static void device_records(void)
{
	CUpti_ActivityDevice5 r;
	int d;

	for (d = 0; d < sim_device_count(); d++) {
		memset(&r, 0, sizeof(r));
		r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
		r.id = (uint32_t)d;
		r.name = "NVIDIA H100 80GB HBM3";
		r.computeCapabilityMajor = 9;
		r.numMultiprocessors = 132;
		r.maxThreadsPerBlock = 1024;
		r.maxWarpsPerMultiprocessor = 64;
		r.maxBlocksPerMultiprocessor = 32;
		r.maxRegistersPerBlock = 65536;
		r.maxRegistersPerMultiprocessor = 65536;
		r.maxSharedMemoryPerBlock = 49152;
		r.maxSharedMemoryPerMultiprocessor = 233472;
		r.globalMemorySize = 85520809984ull;
		reserve(CUPTI_ACTIVITY_KIND_DEVICE, NULL, &r);
	}
}

/* ---- delivery ---- */

/* Takes the buffers to hand back off the pending list (lock held):
 * forced: all; else those whose records are complete, and only full
 * ones unless every: a flush (0) hands back partial ones too. */
static struct tbuf *take(int forced, int every)
{
	struct tbuf **pp = &S.pending, *b, *out = NULL, **tail = &out;
	uint64_t now = sim_gpu_now();
	unsigned i;

	while ((b = *pp)) {
		int ok = forced || b->full || every;

		for (i = 0; ok && !forced && i < b->n; i++)
			ok = op_done(b->ops[i], now);
		if (!ok) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		b->next = NULL;
		*tail = b;
		tail = &b->next;
		for (i = 0; i < b->n; i++)
			if (b->ops[i])
				fill_times(b->data + b->offs[i], b->ops[i],
					   op_done(b->ops[i], now));
		/* A partial buffer handed back: its thread gets a new one. */
		b->full = 1;
	}
	return out;
}

static void hand_back(struct tbuf *list, const char *who)
{
	CUpti_BuffersCallbackCompleteFunc done = S.complete;
	struct tbuf *b, *next;

	for (b = list; b; b = next) {
		next = b->next;
		sim_log("{\"ev\":\"delivered\",\"by\":\"%s\",\"thread\":%ld,"
			"\"records\":%u,\"bytes\":%zu}", who, b->tid, b->n,
			b->used);
		if (done)
			done(NULL, 0, b->data, b->size, b->used);
		/* The struct stays: its thread may still hold it (full). */
		free(b->ops);
		free(b->offs);
		b->ops = NULL;
		b->offs = NULL;
	}
}

static void *delivery_main(void *arg)
{
	struct timespec ms = { 0, 5000000 };
	struct tbuf *list;

	(void)arg;
	for (;;) {
		nanosleep(&ms, NULL);
		pthread_mutex_lock(&S.lock);
		sample();
		list = S.torn_down ? NULL : take(0, 0);
		pthread_mutex_unlock(&S.lock);
		hand_back(list, "cupti-thread");
	}
	return NULL;
}

SIM_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	struct tbuf *list;
	uint64_t start = sim_raw_now();

	pthread_mutex_lock(&S.lock);
	if (S.torn_down) {
		pthread_mutex_unlock(&S.lock);
		return CUPTI_SUCCESS;
	}
	sample();
	list = take(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, 1);
	pthread_mutex_unlock(&S.lock);
	/* SIM_FLUSH_FORCED_NS: a forced flush that takes that long (many
	 * buffers, a busy machine), other threads going on meanwhile. */
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
		sleep_ns(env_ns("SIM_FLUSH_FORCED_NS", 0));
	hand_back(list, flag ? "flush-forced" : "flush");
	sim_log("{\"ev\":\"cupti\",\"call\":\"%s\","
		"\"start_raw\":%llu,\"end_raw\":%llu}",
		flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? "flush_forced" :
							  "flush",
		(unsigned long long)start, (unsigned long long)sim_raw_now());
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req,
	CUpti_BuffersCallbackCompleteFunc done)
{
	pthread_mutex_lock(&S.lock);
	S.request = req;
	S.complete = done;
	if (!S.delivery_started &&
	    pthread_create(&S.delivery, NULL, delivery_main, NULL) == 0)
		S.delivery_started = 1;
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"register_callbacks\"}");
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if ((unsigned)k >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	S.kind_on[k] = 1;
	if (k == CUPTI_ACTIVITY_KIND_DEVICE)
		device_records();
	return record_size(k) || k == CUPTI_ACTIVITY_KIND_OVERHEAD ||
	       k == CUPTI_ACTIVITY_KIND_MEMCPY2 ||
	       k == CUPTI_ACTIVITY_KIND_MEMORY2 ? CUPTI_SUCCESS :
	       CUPTI_ERROR_NOT_COMPATIBLE;
}

SIM_EXPORT CUptiResult cuptiActivityEnableContext(CUcontext c,
						  CUpti_ActivityKind k)
{
	(void)c;
	return cuptiActivityEnable(k);
}

SIM_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if ((unsigned)k >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	S.kind_on[k] = 0;
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
						  CUpti_Activity **rec)
{
	size_t off = 0, size;

	if (*rec) {
		off = (size_t)((uint8_t *)*rec - buf);
		size = record_size((*rec)->kind);
		if (!size)
			return CUPTI_ERROR_INVALID_KIND;
		off += size;
	}
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(buf + off);
	return record_size((*rec)->kind) ? CUPTI_SUCCESS :
					   CUPTI_ERROR_INVALID_KIND;
}

SIM_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c,
							 uint32_t stream,
							 size_t *dropped)
{
	(void)c, (void)stream;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	*dropped = S.dropped;
	S.dropped = 0;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a,
						 size_t *size, void *value)
{
	size_t v = 0;

	if (!size || !value || (unsigned)a >= 16)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(&v, value, *size < sizeof(v) ? *size : sizeof(v));
	S.attr[a] = v;
	S.attr_set[a] = 1;
	sim_log("{\"ev\":\"cupti\",\"call\":\"set_attribute\",\"attr\":%d,"
		"\"value\":%zu}", (int)a, v);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute a,
						 size_t *size, void *value)
{
	if (!size || !value || (unsigned)a >= 16)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(value, &S.attr[a], *size < sizeof(size_t) ? *size :
							  sizeof(size_t));
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiGetContextId(CUcontext c, uint32_t *id)
{
	*id = (uint32_t)((uintptr_t)c - 0x1000 + 1);
	return CUPTI_SUCCESS;
}

/* ---- the end ---- */

static void lose_pending(const char *why)
{
	struct tbuf *b, *next;
	unsigned n = 0;

	for (b = S.pending; b; b = next) {
		next = b->next;
		n += b->n;
		free(b->ops);
		free(b->offs);
		b->ops = NULL;
		b->offs = NULL;
		b->full = 1;
	}
	S.pending = NULL;
	mine = NULL;
	sim_log("{\"ev\":\"lost\",\"why\":\"%s\",\"records\":%u}", why, n);
}

/* CUDA tears itself down (the runtime's atexit): what was not handed
 * back is gone, and nothing is delivered after this. */
static void on_teardown(void)
{
	pthread_mutex_lock(&S.lock);
	S.torn_down = 1;
	lose_pending("teardown");
	pthread_mutex_unlock(&S.lock);
}

/* Aborts when another thread is inside a CUDA call at the call, or
 * enters one while it runs (core.c); tearing down takes
 * SIM_FINALIZE_NS (1 ms). */
SIM_EXPORT CUptiResult cuptiFinalize(void)
{
	int others;

	sim_set_finalizing(1);
	others = sim_inside_others();
	if (others > 0) {
		fprintf(stderr, "cupti-sim: cuptiFinalize called while %d "
			"other thread(s) are inside a CUDA call: crash (call "
			"it from an API exit callback)\n", others);
		sim_log("{\"ev\":\"abort\",\"why\":\"finalize\","
			"\"others\":%d}", others);
		abort();
	}
	pthread_mutex_lock(&S.lock);
	lose_pending("finalize");
	S.subscribed = 0;
	S.cb = NULL;
	S.request = NULL;
	S.complete = NULL;
	S.ts = NULL;
	memset(S.kind_on, 0, sizeof(S.kind_on));
	memset(S.enabled, 0, sizeof(S.enabled));
	pthread_mutex_unlock(&S.lock);
	sleep_ns(env_ns("SIM_FINALIZE_NS", 1000000));
	sim_set_finalizing(0);
	sim_log("{\"ev\":\"cupti\",\"call\":\"finalize\",\"raw\":%llu,"
		"\"tid\":%ld}", (unsigned long long)sim_raw_now(), sim_tid());
	return CUPTI_SUCCESS;
}

/* CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, in the unloading thread,
 * before the module's names go. */
static void on_module_unload(void)
{
	CUpti_CallbackFunc cb = S.cb;
	CUpti_ResourceData r;

	if (!cb || !S.enabled[CUPTI_CB_DOMAIN_RESOURCE]
			     [CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING])
		return;
	memset(&r, 0, sizeof(r));
	r.context = (CUcontext)(uintptr_t)0x1000;
	cb(S.cb_data, CUPTI_CB_DOMAIN_RESOURCE,
	   CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, &r);
}

static const struct sim_tool tool = {
	.api = on_api,
	.op = on_op,
	.teardown = on_teardown,
	.context = on_context,
	.module_unload = on_module_unload,
};

__attribute__((constructor)) static void attach(void)
{
	sim_attach_tool(&tool);
}
