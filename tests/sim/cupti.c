/* CUPTI of the simulated machine (libcupti.so.13): the callback API and
 * the state (this file), the activity records, buffers and API
 * (cupti_records.c) and the rules it enforces (cupti_rules.c), as
 * cupti_callbacks.h and cupti_activity.h document them, at their worst:
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
 *    from an API exit callback);
 *  - DEVICE records at the driver's initialization and CONTEXT records
 *    at a context's creation, only for what comes after the kind was
 *    enabled (cuptiActivityEnableAndDump also gives what exists);
 *  - what the headers forbid (cupti_rules.c): a flush or finalize from a
 *    resource or buffer callback aborts, any call after cuptiFinalize
 *    starts CUPTI again (and aborts once CUDA graphs were launched).
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

#include "cupti_int.h"

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

struct sim_cupti S = { .lock = PTHREAD_MUTEX_INITIALIZER, .multi = 2 };

uint64_t env_ns(const char *name, uint64_t dflt)
{
	const char *e = getenv(name);

	return e ? strtoull(e, NULL, 10) : dflt;
}

void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000ull),
			      (long)(ns % 1000000000ull) };

	while (ns && nanosleep(&t, &t))
		;
}

uint32_t version(void)
{
	const char *e = getenv("SIM_CUPTI_VERSION");

	return e ? (uint32_t)strtoul(e, NULL, 10) : SIM_CUDA == 12 ? 28 : 130100;
}

/* A known bug of the reported version, or as SIM_BUG_<name>=0|1 says. */
int bug(const char *name, int by_version)
{
	char var[64];
	const char *e;

	snprintf(var, sizeof(var), "SIM_BUG_%s", name);
	e = getenv(var);
	return e ? *e == '1' : by_version;
}

/* Kernel records with zero start and end when a timestamp callback is
 * registered. Once modelled as the bug of 12.6 Update 2 through 13.0.x,
 * for which no NVIDIA note was found (docs/design/cupti-rules.md): off
 * on every version, SIM_BUG_ZERO_TS=1 forces it (tprof must count such
 * records, never place them at 0). */
int bug_zero_ts(void)
{
	return bug("ZERO_TS", 0);
}

/* CUPTI below API 27 crashes when a buffer request is refused (Kineto
 * issue #1534). */
int bug_refused_crash(void)
{
	return bug("REFUSED_CRASH", version() < 27);
}

SIM_EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	rule_call("cuptiGetVersion");
	*v = version();
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	rule_call("cuptiGetResultString");
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
struct subr *clock_of(struct subr *s)
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
void sample(void)
{
	unsigned i;

	for (i = 0; i < MAX_SUBS; i++)
		if (S.sub[i].ts)
			pair(&S.sub[i], &S.sub[i].ts1_gpu, &S.sub[i].ts1_cb);
}

uint64_t to_client(struct subr *s, uint64_t gpu)
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
void set_clock(struct subr *s, CUpti_TimestampCallbackFunc f)
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
	rule_call("cuptiActivityRegisterTimestampCallback");
	set_clock(DEF, f);
	return CUPTI_SUCCESS;
}

uint64_t now_of(struct subr *s)
{
	struct subr *c = clock_of(s);

	return c->ts ? c->ts() : sim_gpu_to_realtime(sim_gpu_now());
}

SIM_EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	rule_call("cuptiGetTimestamp");
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
	rule_call("cuptiGetCallbackName");
	if (!name || (d != CUPTI_CB_DOMAIN_RUNTIME_API &&
		      d != CUPTI_CB_DOMAIN_DRIVER_API))
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = cb_name(d, id);
	return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* The subscriber a handle names, or NULL. */
struct subr *subr_of(CUpti_SubscriberHandle h)
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
	rule_call("cuptiSubscribe");
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
	rule_call("cuptiSubscribe_v2");
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

/* A v2 subscriber goes with its kinds and buffer callbacks; buffers it
 * had not been handed are lost. */
SIM_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	struct subr *s = subr_of(h);

	rule_call("cuptiUnsubscribe");
	if (!s || !s->subscribed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&S.lock);
	s->subscribed = 0;
	s->cb = NULL;
	memset(s->enabled, 0, sizeof(s->enabled));
	if (s != DEF) {
		lose(s, "unsubscribe");
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

	rule_call("cuptiEnableCallback");
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

	rule_call("cuptiEnableDomain");
	if (!s || !s->subscribed || (unsigned)d >= 4)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(s->enabled[d], !!on, MAX_CBID);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t on,
					     CUpti_SubscriberHandle sub)
{
	rule_call("cuptiEnableAllDomains");
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
		d.context = ctx ? (CUcontext)(uintptr_t)(0x1000 + ctx - 1) :
				  NULL;
		d.contextUid = ctx;
		d.correlationData = slot_of(i, corr, data);
		d.correlationId = corr;
		cb(S.sub[i].cb_data, dom, cbid, &d);
	}
	if (site && depth && nest[depth - 1].corr == corr)
		depth--;
}

/* ---- the end ---- */

/* The buffers not handed back, of subscriber sb (NULL: every one),
 * are gone (lock held). */
void lose(struct subr *sb, const char *why)
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

	rule_call("cuptiFinalize");
	rule_not_in_callback("cuptiFinalize", "cupti_activity.h "
			     "(cuptiFinalize): \"it is recommended this API "
			     "is invoked from the exit callsite of any of the "
			     "CUDA Driver or Runtime API\"");
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
	rule_finalized();
	return CUPTI_SUCCESS;
}

/* CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, in the unloading thread,
 * before the module's names go. */
static void on_module_unload(void)
{
	CUpti_CallbackFunc cb;
	CUpti_ResourceData r;
	const char *was;
	unsigned i;

	for (i = 0; i < MAX_SUBS; i++) {
		cb = S.sub[i].cb;
		if (!cb || !S.sub[i].enabled[CUPTI_CB_DOMAIN_RESOURCE]
				   [CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING])
			continue;
		memset(&r, 0, sizeof(r));
		r.context = (CUcontext)(uintptr_t)0x1000;
		was = rule_callback("resource");
		cb(S.sub[i].cb_data, CUPTI_CB_DOMAIN_RESOURCE,
		   CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, &r);
		rule_callback(was);
	}
}

static const struct sim_tool tool = {
	.api = on_api,
	.op = on_op,
	.teardown = on_teardown,
	.context = on_context,
	.module_unload = on_module_unload,
	.init = on_driver_init,
};

__attribute__((constructor)) static void attach(void)
{
	sim_attach_tool(&tool);
}
