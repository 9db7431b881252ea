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
#include "cupti_init.h"
#include "cupti_load.h"

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

/* CUPTI 13.3+'s several subscribers (cupti_callbacks.h and
 * cupti_activity.h of CUPTI 13.5.25, API 130500; the CUDA 13.0 headers
 * the simulation builds with lack these, so they are declared here).
 * CUpti_SubscriberParams of 13.5 (13.0's ends at oldSubscriberSize). */
typedef struct {
	size_t structSize;
	const char *subscriberName;
	char *oldSubscriberName;
	size_t oldSubscriberSize;
	uint8_t allowMultipleSubscribers;
	uint8_t padding[7];
} Sim_SubscriberParams;
#define SIM_SUB_PARAMS_SIZE (offsetof(Sim_SubscriberParams, padding) + 7)

typedef struct {
	size_t structSize;
} Sim_BufferCallbackRequestInfo;

typedef struct {
	size_t structSize;
	uint64_t threadId;
	void **ppRecordLayouts;
	size_t numRecordLayouts;
} Sim_BufferCallbackCompleteInfo;

typedef void (CUPTIAPI *Sim_RequestFunc_v2)(uint8_t **, size_t *, size_t *,
					    Sim_BufferCallbackRequestInfo *);
typedef void (CUPTIAPI *Sim_CompleteFunc_v2)(uint8_t *, size_t, size_t,
					     Sim_BufferCallbackCompleteInfo *);

#define SIM_ATTR_MULTIPLE_SUBSCRIBER_STATE 12
#define SIM_ATTR_TIMESTAMP_CALLBACK 22
#define SIM_MAX_ATTR 32

/* A subscriber: slot 0 is the default one, which the v1 calls act on
 * (cuptiSubscribe, cuptiActivityRegisterCallbacks, cuptiActivityEnable,
 * ...: all a CUPTI before 13.3 has); slots 1.. are cuptiSubscribe_v2's.
 * Each has its own API callback, buffer callbacks, kinds, buffers,
 * dropped count and (13.4+) timestamp callback. */
#define MAX_SUBS 8

struct subr {
	int used;		/* v2 slot taken (slot 0 always exists) */
	/* callback API */
	CUpti_CallbackFunc cb;
	void *cb_data;
	int subscribed;
	uint8_t enabled[4][MAX_CBID];
	/* activity API */
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	Sim_RequestFunc_v2 request2;
	Sim_CompleteFunc_v2 complete2;
	CUpti_TimestampCallbackFunc ts;
	uint64_t ts0_gpu, ts0_cb, ts1_gpu, ts1_cb;
	int kind_on[MAX_KIND];
	uint64_t dropped;
};

/* A thread's buffer: the records reserved in it, each with its op. */
struct tbuf {
	uint8_t *data;
	size_t size, used;
	struct sim_op **ops;	/* NULL for records without an op */
	size_t *offs;
	unsigned n;
	int full;
	long tid;
	struct subr *owner;
	struct tbuf *next;
};

static struct {
	pthread_mutex_t lock;
	struct subr sub[MAX_SUBS];
	/* CUPTI_ACTIVITY_ATTR_MULTIPLE_SUBSCRIBER_STATE: 0 one subscriber,
	 * 1 several allowed, 2 not set yet */
	int multi;
	struct tbuf *pending;	/* buffers not yet handed back */
	int torn_down;
	pthread_t delivery;
	int delivery_started;
	size_t attr[SIM_MAX_ATTR];
	int attr_set[SIM_MAX_ATTR];
} S = { .lock = PTHREAD_MUTEX_INITIALIZER, .multi = 2 };

#define DEF (&S.sub[0])

/* This thread's buffer, per subscriber. */
static __thread struct tbuf *mine[MAX_SUBS];

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

/* Whose timestamp callback a subscriber's records use: its own from
 * 13.4 (CUPTI_ACTIVITY_ATTR_TIMESTAMP_CALLBACK); before, the one
 * process-wide cuptiActivityRegisterTimestampCallback (kept in the
 * default subscriber), whoever registered it. */
static struct subr *clock_of(struct subr *s)
{
	return version() >= 130400 ? s : DEF;
}

/* GPU time in the unit of the client's clock: a line through the sample
 * taken at registration and the latest one, as CUPTI normalizes GPU
 * timestamps to the CPU's (whatever unit the callback returns). */
/* One (GPU, callback) pair, bracketed: the callback read on both sides
 * of the GPU's, the tightest of a few tries kept, as a clock correlation
 * is taken (a pair split by preemption would tilt the line). */
static void pair(struct subr *c, uint64_t *gpu, uint64_t *cb)
{
	uint64_t c1, c2, g, best = UINT64_MAX;
	int i;

	for (i = 0; i < 8; i++) {
		c1 = c->ts();
		g = sim_gpu_now();
		c2 = c->ts();
		if (c2 - c1 >= best)
			continue;
		best = c2 - c1;
		*gpu = g;
		*cb = c1 + (c2 - c1) / 2;
	}
}

/* Every registered callback sampled (lock held). */
static void sample(void)
{
	unsigned i;

	for (i = 0; i < MAX_SUBS; i++)
		if (S.sub[i].ts)
			pair(&S.sub[i], &S.sub[i].ts1_gpu, &S.sub[i].ts1_cb);
}

static uint64_t to_client(struct subr *s, uint64_t gpu)
{
	struct subr *c = clock_of(s);
	long double rate;

	if (!gpu)
		return 0;
	if (!c->ts)
		return sim_gpu_to_realtime(gpu);
	rate = (long double)(c->ts1_cb - c->ts0_cb) /
	       (long double)(c->ts1_gpu - c->ts0_gpu);
	return c->ts0_cb + (uint64_t)((long double)(int64_t)(gpu - c->ts0_gpu) *
				      rate);
}

/* Two samples 10 ms apart at registration give the callback's rate from
 * the start; later samples lengthen the line (CUPTI calibrates the
 * callback against the GPU's clock when it is registered). */
static void set_clock(struct subr *s, CUpti_TimestampCallbackFunc f)
{
	struct timespec ms10 = { 0, 10000000 };

	pthread_mutex_lock(&S.lock);
	s->ts = f;
	if (f) {
		pair(s, &s->ts0_gpu, &s->ts0_cb);
		nanosleep(&ms10, NULL);
		pair(s, &s->ts1_gpu, &s->ts1_cb);
	}
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"timestamp_callback\","
		"\"set\":%d,\"sub\":%d}", f != NULL, (int)(s - S.sub));
}

/* Process-wide before 13.4; from 13.4 the default subscriber's. */
SIM_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(
	CUpti_TimestampCallbackFunc f)
{
	set_clock(DEF, f);
	return CUPTI_SUCCESS;
}

static uint64_t now_of(struct subr *s)
{
	struct subr *c = clock_of(s);

	return c->ts ? c->ts() : sim_gpu_to_realtime(sim_gpu_now());
}

SIM_EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	sim_preempt(0);
	*t = now_of(DEF);
	sim_preempt(1);
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

/* The subscriber a handle names, or NULL. */
static struct subr *subr_of(CUpti_SubscriberHandle h)
{
	struct subr *s = (struct subr *)h;

	if (s < S.sub || s >= S.sub + MAX_SUBS ||
	    (size_t)((char *)s - (char *)S.sub) % sizeof(*s))
		return NULL;
	return s == DEF || s->used ? s : NULL;
}

static int v2_subscribers(void)
{
	int i, n = 0;

	for (i = 1; i < MAX_SUBS; i++)
		n += S.sub[i].used;
	return n;
}

static void name_old(Sim_SubscriberParams *p, const char *who)
{
	if (p && p->oldSubscriberName && p->oldSubscriberSize)
		snprintf(p->oldSubscriberName, p->oldSubscriberSize,
			 "CUPTI for %s", who);
}

/* v1: the default subscriber. One subscriber unless several were
 * allowed by a cuptiSubscribe_v2 before (an assumption: the headers do
 * not say how v1 calls behave then); a first v1 subscriber makes the
 * state "one subscriber". */
SIM_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub,
				      CUpti_CallbackFunc cb, void *data)
{
	sim_cupti_start();
	pthread_mutex_lock(&S.lock);
	if (DEF->subscribed || (S.multi != 1 && v2_subscribers())) {
		pthread_mutex_unlock(&S.lock);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	if (S.multi == 2)
		S.multi = 0;
	DEF->subscribed = 1;
	DEF->cb = cb;
	DEF->cb_data = data;
	memset(DEF->enabled, 0, sizeof(DEF->enabled));
	pthread_mutex_unlock(&S.lock);
	*sub = (CUpti_SubscriberHandle)DEF;
	return CUPTI_SUCCESS;
}

/* cupti_callbacks.h (13.5): allowMultipleSubscribers 1 asks for several,
 * refused (MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, the other's name in
 * oldSubscriberName) when a subscriber that wanted one is there; 0 asks
 * for one. Only from 13.3: before, CUPTI_ERROR_NOT_SUPPORTED. */
SIM_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *sub,
					 CUpti_CallbackFunc cb, void *data,
					 CUpti_SubscriberParams *params)
{
	/* The toolkit's 13.0 header declares the shorter struct; 13.5's
	 * adds allowMultipleSubscribers after it (structSize tells). */
	Sim_SubscriberParams *p = (Sim_SubscriberParams *)(void *)params;
	int allow = p && p->structSize >= SIM_SUB_PARAMS_SIZE &&
		    p->allowMultipleSubscribers == 1;
	int i, others;

	if (version() < 130300)
		return CUPTI_ERROR_NOT_SUPPORTED;
	sim_cupti_start();
	if (!sub || (p && p->structSize < offsetof(Sim_SubscriberParams,
						    allowMultipleSubscribers)))
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	others = v2_subscribers() + DEF->subscribed;
	if (others && (S.multi != 1 || !allow)) {
		pthread_mutex_unlock(&S.lock);
		name_old(p, "another tool");
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	for (i = 1; i < MAX_SUBS && S.sub[i].used; i++)
		;
	if (i == MAX_SUBS) {
		pthread_mutex_unlock(&S.lock);
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	memset(&S.sub[i], 0, sizeof(S.sub[i]));
	S.sub[i].used = 1;
	S.sub[i].subscribed = 1;
	S.sub[i].cb = cb;
	S.sub[i].cb_data = data;
	S.multi = allow;
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"subscribe_v2\",\"sub\":%d,"
		"\"allow\":%d}", i, allow);
	*sub = (CUpti_SubscriberHandle)&S.sub[i];
	return CUPTI_SUCCESS;
}

static void lose_of(struct subr *s, const char *why);

/* A v2 subscriber goes with its kinds and buffer callbacks; buffers it
 * had not been handed are lost. */
SIM_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	struct subr *s = subr_of(h);

	if (!s || !s->subscribed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	s->subscribed = 0;
	s->cb = NULL;
	memset(s->enabled, 0, sizeof(s->enabled));
	if (s != DEF) {
		lose_of(s, "unsubscribe");
		s->used = 0;
		memset(s->kind_on, 0, sizeof(s->kind_on));
		s->request2 = NULL;
		s->complete2 = NULL;
		s->ts = NULL;
	}
	if (!DEF->subscribed && !v2_subscribers())
		S.multi = 2;
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
	struct subr *s = subr_of(sub);

	if (!s || !s->subscribed || (unsigned)d >= 4 || !valid_id(d, id))
		return CUPTI_ERROR_INVALID_PARAMETER;
	s->enabled[d][id] = (uint8_t)!!on;
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiEnableDomain(uint32_t on,
					 CUpti_SubscriberHandle sub,
					 CUpti_CallbackDomain d)
{
	struct subr *s = subr_of(sub);

	if (!s || !s->subscribed || (unsigned)d >= 4)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(s->enabled[d], !!on, MAX_CBID);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t on,
					     CUpti_SubscriberHandle sub)
{
	cuptiEnableDomain(on, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	return cuptiEnableDomain(on, sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

/* The correlationData slot of each subscriber but the default one (whose
 * slot is the call's own) for the calls this thread is in; they nest
 * (a runtime call's driver calls). */
#define MAX_NEST 16
static __thread struct {
	uint32_t corr;
	uint64_t v[MAX_SUBS];
} nest[MAX_NEST];
static __thread unsigned depth;

static uint64_t *slot_of(unsigned sub, uint32_t corr, uint64_t *data)
{
	unsigned i = depth;

	if (!sub)
		return data;
	while (i-- > 0)
		if (nest[i].corr == corr)
			return &nest[i].v[sub];
	return data;
}

/* Every subscriber that enabled the id is called, in slot order, each
 * with a correlationData slot of its own. */
static void on_api(int site, CUpti_CallbackDomain dom, uint32_t cbid,
		   const char *name, const char *symbol, uint32_t corr,
		   void *params, void *ret, uint64_t *data, uint32_t ctx)
{
	CUpti_CallbackData d;
	CUpti_CallbackFunc cb;
	unsigned i;

	if (!site && depth < MAX_NEST) {
		memset(&nest[depth], 0, sizeof(nest[depth]));
		nest[depth++].corr = corr;
	}
	for (i = 0; cbid < MAX_CBID && i < MAX_SUBS; i++) {
		cb = S.sub[i].cb;
		if (!cb || !S.sub[i].enabled[dom][cbid])
			continue;
		memset(&d, 0, sizeof(d));
		d.callbackSite = site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
		d.functionName = name;
		d.functionParams = params;
		d.functionReturnValue = ret;
		d.symbolName = symbol;
		d.context = (CUcontext)(uintptr_t)(0x1000 + ctx - 1);
		d.contextUid = ctx;
		d.correlationData = slot_of(i, corr, data);
		d.correlationId = corr;
		cb(S.sub[i].cb_data, dom, cbid, &d);
	}
	if (site && depth && nest[depth - 1].corr == corr)
		depth--;
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

static CUpti_ActivityKind kind_of(const struct subr *sb,
				  const struct sim_op *op)
{
	switch (op->kind) {
	case SIM_KERNEL:
		return sb->kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] ?
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
static void fill_times(struct subr *sb, void *rec, const struct sim_op *op,
		       int done)
{
	uint64_t s = done ? to_client(sb, op->start_gpu) : 0;
	uint64_t e = done ? to_client(sb, op->end_gpu) : 0;

	switch (((CUpti_Activity *)rec)->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		if (clock_of(sb)->ts && bug_zero_ts())
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

/* The calling thread's buffer of subscriber sb with room for size
 * bytes, asked of the client when needed; NULL when it declined (lock
 * held). */
static struct tbuf *room(struct subr *sb, size_t size)
{
	unsigned slot = (unsigned)(sb - S.sub);
	struct tbuf *b = mine[slot];
	uint8_t *data = NULL;
	size_t bsize = 0, max = 0;
	Sim_BufferCallbackRequestInfo info = { sizeof(info) };
	CUpti_BuffersCallbackRequestFunc req = sb->request;
	Sim_RequestFunc_v2 req2 = sb->request2;

	if (b && !b->full && b->used + size <= b->size && b->n < MAX_RECS)
		return b;
	if (b)
		b->full = 1;
	mine[slot] = NULL;
	if (!req && !req2)
		return NULL;
	pthread_mutex_unlock(&S.lock);
	if (req2)
		req2(&data, &bsize, &max, &info);
	else
		req(&data, &bsize, &max);
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
	b->owner = sb;
	b->next = S.pending;
	S.pending = b;
	mine[slot] = b;
	return b;
}

/* A record for op (or a static one: op NULL, rec given) in subscriber
 * sb's buffer. */
static void reserve(struct subr *sb, CUpti_ActivityKind k,
		    struct sim_op *op, const void *rec)
{
	size_t size = record_size(k);
	struct tbuf *b;

	pthread_mutex_lock(&S.lock);
	if (S.torn_down || !sb->kind_on[k] || (sb != DEF && !sb->used)) {
		pthread_mutex_unlock(&S.lock);
		return;
	}
	b = room(sb, size);
	if (!b) {
		sb->dropped++;
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

/* Every subscriber that enabled the op's kind gets a record of it. */
static void on_op(struct sim_op *op)
{
	unsigned i;

	for (i = 0; i < MAX_SUBS; i++)
		reserve(&S.sub[i], kind_of(&S.sub[i], op), op, NULL);
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
	for (unsigned i = 0; i < MAX_SUBS; i++)
		reserve(&S.sub[i], CUPTI_ACTIVITY_KIND_CONTEXT, NULL, &r);
}

static void device_records(struct subr *sb)
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
		reserve(sb, CUPTI_ACTIVITY_KIND_DEVICE, NULL, &r);
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
				fill_times(b->owner, b->data + b->offs[i],
					   b->ops[i],
					   op_done(b->ops[i], now));
		/* A partial buffer handed back: its thread gets a new one. */
		b->full = 1;
	}
	return out;
}

static void hand_back(struct tbuf *list, const char *who)
{
	CUpti_BuffersCallbackCompleteFunc done;
	Sim_CompleteFunc_v2 done2;
	Sim_BufferCallbackCompleteInfo info;
	struct tbuf *b, *next;

	for (b = list; b; b = next) {
		next = b->next;
		done = b->owner->complete;
		done2 = b->owner->complete2;
		sim_log("{\"ev\":\"delivered\",\"by\":\"%s\",\"thread\":%ld,"
			"\"records\":%u,\"bytes\":%zu,\"sub\":%d}", who,
			b->tid, b->n, b->used, (int)(b->owner - S.sub));
		memset(&info, 0, sizeof(info));
		info.structSize = sizeof(info);
		info.threadId = (uint64_t)b->tid;
		if (done2)
			done2(b->data, b->size, b->used, &info);
		else if (done)
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

static void start_delivery(void)
{
	if (!S.delivery_started &&
	    pthread_create(&S.delivery, NULL, delivery_main, NULL) == 0)
		S.delivery_started = 1;
}

SIM_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req,
	CUpti_BuffersCallbackCompleteFunc done)
{
	sim_cupti_start();
	pthread_mutex_lock(&S.lock);
	DEF->request = req;
	DEF->complete = done;
	start_delivery();
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"register_callbacks\"}");
	return CUPTI_SUCCESS;
}

static CUptiResult kind_on(struct subr *sb, CUpti_ActivityKind k)
{
	if ((unsigned)k >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	sb->kind_on[k] = 1;
	if (k == CUPTI_ACTIVITY_KIND_DEVICE)
		device_records(sb);
	return record_size(k) || k == CUPTI_ACTIVITY_KIND_OVERHEAD ||
	       k == CUPTI_ACTIVITY_KIND_MEMCPY2 ||
	       k == CUPTI_ACTIVITY_KIND_MEMORY2 ? CUPTI_SUCCESS :
	       CUPTI_ERROR_NOT_COMPATIBLE;
}

static CUptiResult kind_off(struct subr *sb, CUpti_ActivityKind k)
{
	if ((unsigned)k >= MAX_KIND)
		return CUPTI_ERROR_INVALID_KIND;
	sb->kind_on[k] = 0;
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	return kind_on(DEF, k);
}

SIM_EXPORT CUptiResult cuptiActivityEnableContext(CUcontext c,
						  CUpti_ActivityKind k)
{
	(void)c;
	return cuptiActivityEnable(k);
}

SIM_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	return kind_off(DEF, k);
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

static CUptiResult dropped_of(struct subr *sb, size_t *dropped)
{
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	*dropped = sb->dropped;
	sb->dropped = 0;
	pthread_mutex_unlock(&S.lock);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c,
							 uint32_t stream,
							 size_t *dropped)
{
	(void)c, (void)stream;
	return dropped_of(DEF, dropped);
}

SIM_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a,
						 size_t *size, void *value)
{
	size_t v = 0;

	if (!size || !value || (unsigned)a >= SIM_MAX_ATTR)
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
	if (!size || !value || (unsigned)a >= SIM_MAX_ATTR)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(value, &S.attr[a], *size < sizeof(size_t) ? *size :
							  sizeof(size_t));
	return CUPTI_SUCCESS;
}

/* ---- the v2 activity API (CUPTI 13.3+, per subscriber) ---- */

/* A v2 call's subscriber: NULL before 13.3 (the entry points return
 * CUPTI_ERROR_NOT_SUPPORTED there) or for a handle that is not one. */
static struct subr *v2(CUpti_SubscriberHandle h, CUptiResult *r)
{
	struct subr *sb = version() >= 130300 ? subr_of(h) : NULL;

	*r = version() < 130300 ? CUPTI_ERROR_NOT_SUPPORTED :
				  CUPTI_ERROR_INVALID_PARAMETER;
	return sb;
}

SIM_EXPORT CUptiResult cuptiActivityRegisterCallbacks_v2(
	CUpti_SubscriberHandle h, Sim_RequestFunc_v2 req,
	Sim_CompleteFunc_v2 done)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	if (!sb)
		return r;
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	sb->request2 = req;
	sb->complete2 = done;
	start_delivery();
	pthread_mutex_unlock(&S.lock);
	sim_log("{\"ev\":\"cupti\",\"call\":\"register_callbacks_v2\","
		"\"sub\":%d}", (int)(sb - S.sub));
	return CUPTI_SUCCESS;
}

/* pActivityConfig (CUpti_ActivityConfig) may be NULL; field selection
 * is not modelled. */
SIM_EXPORT CUptiResult cuptiActivityEnable_v2(CUpti_SubscriberHandle h,
					      CUpti_ActivityKind k,
					      void *config)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	(void)config;
	return sb ? kind_on(sb, k) : r;
}

SIM_EXPORT CUptiResult cuptiActivityDisable_v2(CUpti_SubscriberHandle h,
					       CUpti_ActivityKind k,
					       void *config)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	(void)config;
	return sb ? kind_off(sb, k) : r;
}

SIM_EXPORT CUptiResult cuptiActivityGetNextRecord_v2(CUpti_SubscriberHandle h,
						     uint8_t *buf,
						     size_t valid,
						     CUpti_Activity **rec)
{
	CUptiResult r;

	if (!v2(h, &r))
		return r;
	if (!buf || !rec)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return cuptiActivityGetNextRecord(buf, valid, rec);
}

SIM_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords_v2(
	CUpti_SubscriberHandle h, CUcontext c, uint32_t stream,
	size_t *dropped)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	(void)c, (void)stream;
	return sb ? dropped_of(sb, dropped) : r;
}

/* TIMESTAMP_CALLBACK (22) only from 13.4; MULTIPLE_SUBSCRIBER_STATE is
 * read-only; the rest as cuptiActivitySetAttribute. */
SIM_EXPORT CUptiResult cuptiActivitySetAttribute_v2(CUpti_SubscriberHandle h,
						    CUpti_ActivityAttribute a,
						    size_t *size, void *value)
{
	CUpti_TimestampCallbackFunc f;
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	if (!sb)
		return r;
	if (!size || !value || a == SIM_ATTR_MULTIPLE_SUBSCRIBER_STATE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (a != SIM_ATTR_TIMESTAMP_CALLBACK)
		return cuptiActivitySetAttribute(a, size, value);
	if (version() < 130400 || *size != sizeof(f))
		return CUPTI_ERROR_INVALID_PARAMETER;
	memcpy(&f, value, sizeof(f));
	set_clock(sb, f);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetAttribute_v2(CUpti_SubscriberHandle h,
						    CUpti_ActivityAttribute a,
						    size_t *size, void *value)
{
	CUptiResult r;
	uint8_t st;

	if (!v2(h, &r))
		return r;
	if (!size || !value)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (a != SIM_ATTR_MULTIPLE_SUBSCRIBER_STATE)
		return cuptiActivityGetAttribute(a, size, value);
	if (*size < 1)
		return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
	st = (uint8_t)S.multi;
	memcpy(value, &st, 1);
	*size = 1;
	return CUPTI_SUCCESS;
}

/* 13.3: cuptiGetTimestamp's (the process-wide callback); 13.4+: the
 * subscriber's own. */
SIM_EXPORT CUptiResult cuptiGetTimestamp_v2(CUpti_SubscriberHandle h,
					    uint64_t *t)
{
	CUptiResult r;
	struct subr *sb = v2(h, &r);

	if (!sb)
		return r;
	if (!t)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim_preempt(0);
	*t = now_of(sb);
	sim_preempt(1);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiGetContextId(CUcontext c, uint32_t *id)
{
	*id = (uint32_t)((uintptr_t)c - 0x1000 + 1);
	return CUPTI_SUCCESS;
}

/* ---- the end ---- */

/* The buffers not handed back, of subscriber sb (NULL: every one),
 * are gone (lock held). */
static void lose(struct subr *sb, const char *why)
{
	struct tbuf **pp = &S.pending, *b;
	unsigned n = 0, i;

	while ((b = *pp)) {
		if (sb && b->owner != sb) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		n += b->n;
		free(b->ops);
		free(b->offs);
		b->ops = NULL;
		b->offs = NULL;
		b->full = 1;
	}
	for (i = 0; i < MAX_SUBS; i++)
		if (!sb || sb == &S.sub[i])
			mine[i] = NULL;
	sim_log("{\"ev\":\"lost\",\"why\":\"%s\",\"records\":%u}", why, n);
}

static void lose_pending(const char *why)
{
	lose(NULL, why);
}

static void lose_of(struct subr *s, const char *why)
{
	lose(s, why);
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
	/* Every subscriber's state, whoever calls it. */
	lose_pending("finalize");
	memset(S.sub, 0, sizeof(S.sub));
	S.multi = 2;
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
	CUpti_CallbackFunc cb;
	CUpti_ResourceData r;
	unsigned i;

	for (i = 0; i < MAX_SUBS; i++) {
		cb = S.sub[i].cb;
		if (!cb || !S.sub[i].enabled[CUPTI_CB_DOMAIN_RESOURCE]
				   [CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING])
			continue;
		memset(&r, 0, sizeof(r));
		r.context = (CUcontext)(uintptr_t)0x1000;
		cb(S.sub[i].cb_data, CUPTI_CB_DOMAIN_RESOURCE,
		   CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, &r);
	}
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
