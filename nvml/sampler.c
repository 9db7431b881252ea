/* nvml/: the GPU health counters from NVML, sampled beside the trace; on
 * util/ .. cupti/. */
/* The sampling thread. Like the writer it takes no signal (a handler of
 * the program must never run on it), records nothing (tp_self is
 * internal), and never holds up the program: it is detached, a stop
 * waits for it a bounded time (a blocked NVML call leaves it behind,
 * said in the trace), the process's exit does not wait for it at all,
 * and a fork child has none (tp_gpumetrics_after_fork). Every NVML call's
 * return is looked at: a refusal that will not change (not supported,
 * no permission, a function this NVML lacks) stops that counter for the
 * device, and the trace lists it; any other failure leaves that value
 * out of the sample and is counted. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "record/futex.h"
#include "record/ring_budget.h"
#include "record/thread.h"
#include "gpumetrics_int.h"

#define TP_GM_NAME(id, name) [GM_##id] = name,
const char *const tp_gm_names[GM_N] = { TP_GM_METRICS(TP_GM_NAME) };
#undef TP_GM_NAME

struct tp_gm_state tp_gm;

static struct tp_nvml_fns F;
static nvmlEventSet_t xid_set;
static int xid_rc = 1;		/* 1: not made yet; 0 made; else why not */

static void set_state(const char *s)
{
	snprintf(tp_gm.state, sizeof(tp_gm.state), "%s", s);
	__atomic_store_n(&tp_gm.state_ready, 1, __ATOMIC_RELEASE);
}

/* A refusal that does not change from one call to the next. */
static int permanent(int rc)
{
	return rc == NVML_ERROR_NOT_SUPPORTED ||
	       rc == NVML_ERROR_NO_PERMISSION ||
	       rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
	       rc == NVML_ERROR_INVALID_ARGUMENT || rc == TP_GM_NO_SYMBOL;
}

/* Whether to ask for metric m: not when it is gone, nor when this NVML
 * lacks the function (then it is gone). */
static int ask(struct tp_gm_dev *d, int m, const void *fn)
{
	if (__atomic_load_n(&d->gone[m], __ATOMIC_RELAXED))
		return 0;
	if (fn)
		return 1;
	__atomic_store_n(&d->gone[m], TP_GM_NO_SYMBOL, __ATOMIC_RELAXED);
	return 0;
}

/* A query's return for metric m: 1 when its value may be used. */
static int took(struct tp_gm_dev *d, int m, int rc)
{
	if (rc == NVML_SUCCESS)
		return 1;
	if (permanent(rc)) {
		__atomic_store_n(&d->gone[m], rc, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&d->failed[m], 1, __ATOMIC_RELAXED);
		__atomic_store_n(&d->last_rc[m], rc, __ATOMIC_RELAXED);
	}
	return 0;
}

static void put(struct tp_gm_sample *s, int m, uint64_t v)
{
	s->v[m] = v;
	s->valid |= 1u << m;
}

/* Two values from one call: the second follows the first's fate. */
static void put2(struct tp_gm_dev *d, struct tp_gm_sample *s, int m, int rc,
		 uint64_t a, uint64_t b)
{
	if (!took(d, m, rc)) {
		took(d, m + 1, rc);
		return;
	}
	put(s, m, a);
	put(s, m + 1, b);
}

static void one(struct tp_gm_dev *d, struct tp_gm_sample *s, int m,
		nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *))
{
	unsigned int u = 0;

	if (ask(d, m, (const void *)fn) && took(d, m, fn(d->h, &u)))
		put(s, m, u);
}

static void typed(struct tp_gm_dev *d, struct tp_gm_sample *s, int m,
		  int which, int kind)
{
	unsigned int u = 0;
	int rc;

	if (kind == 0 && !ask(d, m, (const void *)F.clock))
		return;
	if (kind == 1 && !ask(d, m, (const void *)F.pcie))
		return;
	if (kind == 2 && !ask(d, m, (const void *)F.temp))
		return;
	rc = kind == 0 ? F.clock(d->h, which, &u) :
	     kind == 1 ? F.pcie(d->h, which, &u) : F.temp(d->h, which, &u);
	if (took(d, m, rc))
		put(s, m, u);
}

static void ecc(struct tp_gm_dev *d, struct tp_gm_sample *s, int m,
		int type)
{
	unsigned long long n = 0;

	if (ask(d, m, (const void *)F.ecc) &&
	    took(d, m, F.ecc(d->h, type, NVML_VOLATILE_ECC, &n)))
		put(s, m, n);
}

static uint64_t field_value(const nvmlFieldValue_t *v)
{
	switch (v->valueType) {
	case NVML_VALUE_TYPE_UNSIGNED_INT:
		return v->value.uiVal;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		return v->value.ulVal;
	default:
		return v->value.ullVal;
	}
}

/* NVLink data throughput, every link summed (scopeId UINT_MAX). */
static void nvlink(struct tp_gm_dev *d, struct tp_gm_sample *s)
{
	nvmlFieldValue_t fv[2];
	int i, rc;
	int tx = ask(d, GM_NVL_TX, (const void *)F.fields);

	/* both asked: each is marked when the function is missing */
	if (!ask(d, GM_NVL_RX, (const void *)F.fields) || !tx)
		return;
	memset(fv, 0, sizeof(fv));
	fv[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
	fv[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
	fv[0].scopeId = fv[1].scopeId = UINT_MAX;
	rc = F.fields(d->h, 2, fv);
	for (i = 0; i < 2; i++)
		if (took(d, GM_NVL_TX + i, rc != NVML_SUCCESS ? rc :
			 fv[i].nvmlReturn))
			put(s, GM_NVL_TX + i, field_value(&fv[i]));
}

static void xid_register(struct tp_gm_dev *d)
{
	int rc;

	if (xid_rc == 1) {
		xid_rc = !F.set_create || !F.register_events || !F.set_wait ?
			 TP_GM_NO_SYMBOL : F.set_create(&xid_set);
	}
	rc = xid_rc ? xid_rc :
	     F.register_events(d->h, nvmlEventTypeXidCriticalError, xid_set);
	if (rc) {
		took(d, GM_XID_N, rc);
		took(d, GM_XID_LAST, rc);
	}
}

/* The XID events since the last period, without waiting. */
static void xid_poll(void)
{
	nvmlEventData_t e;
	unsigned i, k, n = __atomic_load_n(&tp_gm.ndev, __ATOMIC_ACQUIRE);

	if (xid_rc)
		return;
	for (k = 0; k < 64; k++) {
		memset(&e, 0, sizeof(e));
		if (F.set_wait(xid_set, &e, 0) != NVML_SUCCESS)
			return;
		if (!(e.eventType & nvmlEventTypeXidCriticalError))
			continue;
		for (i = 0; i < n; i++)
			if (tp_gm.dev[i].mapped && tp_gm.dev[i].h == e.device) {
				tp_gm.dev[i].xid_count++;
				tp_gm.dev[i].xid_last = e.eventData;
			}
	}
}

static void sample(struct tp_gm_dev *d, struct tp_gm_sample *s)
{
	nvmlUtilization_t u;
	nvmlMemory_t mem;
	unsigned long long r = 0;
	int rc;

	typed(d, s, GM_SM, NVML_CLOCK_SM, 0);
	typed(d, s, GM_MEMCLK, NVML_CLOCK_MEM, 0);
	one(d, s, GM_POWER, F.power);
	one(d, s, GM_LIMIT, F.limit);
	typed(d, s, GM_TEMP, NVML_TEMPERATURE_GPU, 2);
	/* the call before its values are read: argument order is not */
	memset(&u, 0, sizeof(u));
	if (ask(d, GM_GUTIL, (const void *)F.util)) {
		rc = F.util(d->h, &u);
		put2(d, s, GM_GUTIL, rc, u.gpu, u.memory);
	}
	memset(&mem, 0, sizeof(mem));
	if (ask(d, GM_MUSED, (const void *)F.mem)) {
		rc = F.mem(d->h, &mem);
		put2(d, s, GM_MUSED, rc, mem.used, mem.total);
	}
	if (ask(d, GM_REASONS, (const void *)F.reasons) &&
	    took(d, GM_REASONS, F.reasons(d->h, &r)))
		put(s, GM_REASONS, r);
	typed(d, s, GM_PCIE_TX, NVML_PCIE_UTIL_TX_BYTES, 1);
	typed(d, s, GM_PCIE_RX, NVML_PCIE_UTIL_RX_BYTES, 1);
	nvlink(d, s);
	ecc(d, s, GM_ECC_C, NVML_MEMORY_ERROR_TYPE_CORRECTED);
	ecc(d, s, GM_ECC_U, NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
	if (!__atomic_load_n(&d->gone[GM_XID_N], __ATOMIC_RELAXED)) {
		put(s, GM_XID_N, d->xid_count);
		put(s, GM_XID_LAST, d->xid_last);
	}
}

static void push(const struct tp_gm_sample *s)
{
	uint64_t head = tp_gm.head;

	if (head - __atomic_load_n(&tp_gm.tail, __ATOMIC_ACQUIRE) >=
	    TP_GM_RING) {
		__atomic_add_fetch(&tp_gm.dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	tp_gm.ring[head % TP_GM_RING] = *s;
	__atomic_store_n(&tp_gm.head, head + 1, __ATOMIC_RELEASE);
}

/* The devices the writer published since: found by their UUID (NVML
 * numbers devices its own way, not as CUDA_VISIBLE_DEVICES does). */
static void map_new(unsigned *mapped)
{
	unsigned n = __atomic_load_n(&tp_gm.ndev, __ATOMIC_ACQUIRE);
	struct tp_gm_dev *d;
	int rc;

	for (; *mapped < n; (*mapped)++) {
		d = &tp_gm.dev[*mapped];
		rc = !d->uuid[0] ? NVML_ERROR_NOT_FOUND : !F.by_uuid ?
		     TP_GM_NO_SYMBOL : F.by_uuid(d->uuid, &d->h);
		__atomic_store_n(&d->map_rc, rc ? rc : 0, __ATOMIC_RELAXED);
		if (rc)
			continue;
		d->mapped = 1;
		xid_register(d);
	}
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Until the next period's start, or the stop. */
static void wait_next(uint64_t next)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int ms;

	if (now >= next)
		return;
	ms = (int)((next - now + 999999) / 1000000);
	tp_futex_wait(&tp_gm.stop, 0, ms);
}

/* One sample of each mapped device (only of those never sampled when
 * first_only); sampled[] counts them. */
static void pass(unsigned mapped, unsigned *sampled, int first_only)
{
	struct tp_gm_sample s;
	unsigned i;

	for (i = 0; i < mapped; i++) {
		if (!tp_gm.dev[i].mapped || (first_only && sampled[i]))
			continue;
		memset(&s, 0, sizeof(s));
		s.ticks = tp_ticks();
		s.slot = i;
		sample(&tp_gm.dev[i], &s);
		s.ticks = s.ticks / 2 + tp_ticks() / 2;
		push(&s);
		sampled[i]++;
	}
}

static void run(void)
{
	uint64_t next = now_ns(CLOCK_MONOTONIC);
	unsigned sampled[TP_GM_DEVICES] = { 0 };
	unsigned mapped = 0;

	while (!__atomic_load_n(&tp_gm.stop, __ATOMIC_ACQUIRE)) {
		map_new(&mapped);
		xid_poll();
		pass(mapped, sampled, 0);
		next += tp_gm.period_ns;
		wait_next(next);
	}
	/* The stop can come before the first pass: the writer publishes a
	 * device when CUPTI's first buffer with its context arrives, which
	 * on a loaded machine is the last flush, and nvmlInit_v2 may take
	 * longer than the rest of the run. Each device never sampled gets
	 * one reading now, or its summary would say nothing of it. */
	map_new(&mapped);
	pass(mapped, sampled, 1);
}

static void *sampler_main(void *arg)
{
	uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t w0 = now_ns(CLOCK_MONOTONIC);
	char why[160];

	(void)arg;
	tp_self = tp_thread_internal();
	if (tp_nvml_open(&F, why, sizeof(why)) < 0) {
		set_state(why);
	} else {
		set_state("sampled");
		run();
		if (!xid_rc && F.set_free)
			F.set_free(xid_set);
		if (F.shutdown)
			F.shutdown();
	}
	tp_gm.cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	tp_gm.wall_ns = now_ns(CLOCK_MONOTONIC) - w0;
	__atomic_store_n(&tp_gm.done, 1, __ATOMIC_RELEASE);
	tp_futex_wake_all(&tp_gm.done);
	return NULL;
}

/* Under an address-space limit its stack is small: the program's own
 * threads need the room. */
#define LIMITED_STACK (256u << 10)

int tp_gm_sampler_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (tp_as_limited())
		pthread_attr_setstacksize(&attr, LIMITED_STACK);
	rc = pthread_create(&t, &attr, sampler_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	tp_gm.started = 1;
	if (rc) {
		set_state("not sampled: the sampling thread could not be "
			  "started");
		__atomic_store_n(&tp_gm.done, 1, __ATOMIC_RELEASE);
		return -1;
	}
	pthread_setname_np(t, "tprof-gpumetric");
	return 0;
}

int tp_gm_sampler_stop(int wait_ms)
{
	int waited;

	if (!tp_gm.started)
		return 0;
	__atomic_store_n(&tp_gm.stop, 1, __ATOMIC_RELEASE);
	tp_futex_wake_all(&tp_gm.stop);
	for (waited = 0; !__atomic_load_n(&tp_gm.done, __ATOMIC_ACQUIRE) &&
	     waited < wait_ms; waited += 10)
		tp_futex_wait(&tp_gm.done, 0, 10);
	if (__atomic_load_n(&tp_gm.done, __ATOMIC_ACQUIRE))
		return 0;
	tp_gm.abandoned = 1;
	return -1;
}

/* The child has no sampler: forget the parent's, keep the rate. */
void tp_gm_sampler_after_fork(void)
{
	int64_t hz = tp_gm.hz;
	uint64_t period = tp_gm.period_ns;

	memset(&tp_gm, 0, sizeof(tp_gm));
	tp_gm.hz = hz;
	tp_gm.period_ns = period;
	memset(&F, 0, sizeof(F));
	xid_rc = 1;
	xid_set = NULL;
}
