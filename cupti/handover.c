/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* Sharing CUPTI with the program's own profiler (torch.profiler's Kineto,
 * XLA's profiler, nsys, compute-sanitizer).
 *
 * Kineto collects without cuptiSubscribe: it registers process-wide
 * buffer and timestamp callbacks and enables activity kinds, which
 * silently replace tprof's (or are replaced by them). It subscribes only
 * in its teardown path (TEARDOWN_CUPTI=1: CuptiCallbackApi's
 * initCallbackApi, to call cuptiFinalize from an API exit callback) and
 * when it re-enables callbacks after that. tprof is preloaded, so the
 * program's calls of those entry points reach these definitions first:
 * the moment another client acts, tprof knows.
 *
 * A client that calls libcupti through a handle of its own (dlopen and
 * dlsym, as XLA's profiler does through TSL's CUPTI stub) reaches none of
 * these. What tprof sees of it instead:
 *  - it subscribed first: tprof's cuptiSubscribe fails with
 *    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (collect.c);
 *  - it registered buffer callbacks first: cuptiActivityFlushAll, which
 *    returns CUPTI_ERROR_INVALID_OPERATION while no one has
 *    (cupti_activity.h), succeeds when tprof probes it at start
 *    (tp_cupti_client_unseen): tprof leaves CUPTI to it;
 *  - it replaced tprof's buffer callbacks mid-run: every forced flush of
 *    tprof's (the last window's end, exit) must hand back every buffer
 *    tprof lent; those that do not come back went to the client's
 *    callbacks (tp_cupti_check_buffers): tprof says so, once, and the
 *    trace names it ("other_client").
 *  - it subscribes after tprof: its cuptiSubscribe fails (CUPTI before
 *    13.3 allows one subscriber), and it backs off (XLA's tracer does
 *    not enable activity then).
 *
 *  - tprof collecting: it hands over before the client's call goes on:
 *    disables the kinds it enabled that the client did not, forces a
 *    flush (its own buffers come back to it, converted as usual), lets
 *    go of its subscriber (CUPTI before 13.3 allows one), and warns once.
 *    The client's callbacks, kinds and buffers are then exactly as the
 *    client sets them; tprof does not take CUPTI back afterwards.
 *  - the client first (it acted before tprof started CUPTI): tprof never
 *    displaces it, and stays CPU-side with one warning.
 *
 * With CUPTI 13.3+ tprof is one subscriber among several (multi.c): the
 * client's v1 calls act on CUPTI's default subscriber, not on tprof's,
 * and nothing is handed over; only on 13.3 a client's timestamp
 * callback (process-wide there, so it would set the unit of tprof's
 * records too) makes tprof hand over as above.
 *
 * Calls made from inside libcupti itself, or by tprof (which calls the
 * real functions through tp_cupti, never these), are only forwarded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"
#include "session/session.h"
#include "session/timeline.h"
#include "collect.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
	int seen;		/* another client has acted */
	int clock;		/* it registered a timestamp callback */
	char who[128];
	double at_s;
	uint32_t client_kinds[64];	/* kinds the client enabled */
} H;

/* torch.profiler, nsys, ... from the library the call came from. */
static void name_client(const void *caller, char *out, size_t len)
{
	Dl_info info;
	const char *base;

	if (!dladdr(caller, &info) || !info.dli_fname) {
		snprintf(out, len, "another CUPTI client");
		return;
	}
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	if (strstr(base, "torch") || strstr(base, "kineto"))
		snprintf(out, len, "torch.profiler");
	else if (strstr(base, "Injection") || strstr(base, "nsys"))
		snprintf(out, len, "nsys");
	else if (strstr(base, "sanitizer"))
		snprintf(out, len, "compute-sanitizer");
	else
		snprintf(out, len, "another CUPTI client (%s)", base);
}

/* A call from libcupti itself (an entry point calling another through
 * its PLT) or from libtprof is not another client. */
static int internal(const void *caller)
{
	Dl_info me, it;

	if (!dladdr(caller, &it) || !it.dli_fname)
		return 0;
	if (dladdr((void *)internal, &me) && me.dli_fbase == it.dli_fbase)
		return 1;
	return strstr(it.dli_fname, "libcupti") != NULL;
}

/* Seconds since tprof started; 0 before (a client in a constructor). */
static double since_start_s(void)
{
	uint64_t now = tp_clock_ns(CLOCK_REALTIME);

	if (!tp_sess.anchor.unix_ns || now < tp_sess.anchor.unix_ns)
		return 0;
	return (double)(now - tp_sess.anchor.unix_ns) / 1e9;
}

/* Among several subscribers only a process-wide timestamp callback
 * (CUPTI 13.3) is a reason to hand over. */
static void hand_over(const char *why)
{
	if (!tp_sess.active || !(tp_sess.cfg.sources & TP_SRC_GPU))
		return;
	if (tp_cupti_hand_over(H.who, H.client_kinds) == 0)
		tp_warn("%s %s at %.1f s: GPU activity after that is not in "
			"this trace; CPU-side tracing goes on", H.who, why,
			H.at_s);
}

/* clock: the call sets a timestamp callback (clock_set says more). */
static void client_acts(const void *caller, int clock)
{
	if (internal(caller) ||
	    __atomic_exchange_n(&H.seen, 1, __ATOMIC_ACQ_REL))
		return;
	name_client(caller, H.who, sizeof(H.who));
	H.at_s = since_start_s();
	if (__atomic_load_n(&tp_cs.multi, __ATOMIC_ACQUIRE)) {
		if (clock && tp_cs.version < 130400)
			return;
		tp_info("%s uses CUPTI since %.1f s: both subscribers get "
			"every record", H.who, H.at_s);
		return;
	}
	hand_over("took CUPTI");
}

/* A timestamp callback: on CUPTI 13.3 with several subscribers it is
 * the one of all (tprof's records would change unit mid-run). */
static void clock_set(const void *caller)
{
	if (internal(caller))
		return;
	__atomic_store_n(&H.clock, 1, __ATOMIC_RELEASE);
	client_acts(caller, 1);
	if (!__atomic_load_n(&tp_cs.multi, __ATOMIC_ACQUIRE) ||
	    tp_cs.version >= 130400)
		return;
	hand_over("set CUPTI 13.3's process-wide timestamp callback (CUPTI "
		  "13.4 or later keeps one per subscriber)");
}

int tp_cupti_client_clock(void)
{
	return __atomic_load_n(&H.clock, __ATOMIC_ACQUIRE);
}

/* 1 when a client acted before tprof started CUPTI: tprof then leaves
 * CUPTI to it, with why. */
int tp_cupti_client_first(char *why, size_t len)
{
	if (!__atomic_load_n(&H.seen, __ATOMIC_ACQUIRE))
		return 0;
	snprintf(why, len, "%s was using CUPTI before tprof started it "
		 "(at %.1f s), and is never displaced", H.who, H.at_s);
	return 1;
}

#define OWN_HANDLE "another CUPTI client (through its own libcupti handle)"

/* Before tprof registers its buffer callbacks: a flush succeeds only if
 * someone registered theirs (CUPTI_ERROR_INVALID_OPERATION otherwise,
 * cupti_activity.h). A plain flush: what it hands back goes to that
 * client's callbacks, as its own flushes would. Not among several
 * subscribers (13.3+): there a client first is no reason to stay off. */
int tp_cupti_client_unseen(char *why, size_t len)
{
	if (tp_cupti.flush_all(0) != CUPTI_SUCCESS)
		return 0;
	if (!__atomic_exchange_n(&H.seen, 1, __ATOMIC_ACQ_REL)) {
		snprintf(H.who, sizeof(H.who), "%s", OWN_HANDLE);
		H.at_s = since_start_s();
	}
	snprintf(why, len, "%s registered CUPTI's activity buffer callbacks "
		 "before tprof started CUPTI (at %.1f s), and is never "
		 "displaced", H.who, H.at_s);
	return 1;
}

/* After a forced flush of tprof's (kinds off): every buffer CUPTI had
 * comes back to the registered completion callback. Buffers of tprof's
 * still out went to another client's, registered through a handle of
 * its own: tprof's records since then are lost to it. */
void tp_cupti_check_buffers(void)
{
	uint64_t out = tp_cupti_buffers_out();

	if (!out || __atomic_exchange_n(&H.seen, 1, __ATOMIC_ACQ_REL))
		return;
	snprintf(H.who, sizeof(H.who), "%s", OWN_HANDLE);
	H.at_s = since_start_s();
	tp_warn("%s replaced tprof's activity buffer callbacks before %.1f s "
		"(%llu buffers lent to CUPTI never came back): GPU activity "
		"after that is missing from this trace; CPU-side tracing goes "
		"on", H.who, H.at_s, (unsigned long long)out);
}

const char *tp_cupti_client(double *at_s)
{
	if (!__atomic_load_n(&H.seen, __ATOMIC_ACQUIRE))
		return NULL;
	*at_s = H.at_s;
	return H.who;
}

static void *real(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name), *h;

	if (p)
		return p;
	static const char *const sonames[] = {
		"libcupti.so.13", "libcupti.so.12", "libcupti.so", NULL,
	};
	unsigned i;

	/* libcupti opened RTLD_LOCAL: not in the global scope. */
	for (i = 0; sonames[i]; i++) {
		h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
		p = h ? dlsym(h, name) : NULL;
		if (p)
			return p;
	}
	return NULL;
}

#define FORWARD(type, name, params, args)                                \
	EXPORT CUptiResult name params                                   \
	{                                                                \
		static type fn;                                          \
                                                                         \
		client_acts(__builtin_return_address(0), 0);             \
		if (!fn)                                                 \
			*(void **)&fn = real(#name);                     \
		return fn ? fn args : CUPTI_ERROR_NOT_INITIALIZED;       \
	}

typedef CUptiResult (*reg_fn)(CUpti_BuffersCallbackRequestFunc,
			      CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*ts_fn)(CUpti_TimestampCallbackFunc);
typedef CUptiResult (*sub_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc,
			      void *);
typedef CUptiResult (*fin_fn)(void);
typedef CUptiResult (*ctx_fn)(CUcontext, CUpti_ActivityKind);
typedef CUptiResult (*kind_fn)(CUpti_ActivityKind);

FORWARD(reg_fn, cuptiActivityRegisterCallbacks,
	(CUpti_BuffersCallbackRequestFunc req,
	 CUpti_BuffersCallbackCompleteFunc done), (req, done))
FORWARD(sub_fn, cuptiSubscribe,
	(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *data),
	(sub, cb, data))
FORWARD(fin_fn, cuptiFinalize, (void), ())
FORWARD(ctx_fn, cuptiActivityEnableContext,
	(CUcontext ctx, CUpti_ActivityKind kind), (ctx, kind))
FORWARD(kind_fn, cuptiActivityDisable, (CUpti_ActivityKind kind), (kind))

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(
	CUpti_TimestampCallbackFunc f)
{
	static ts_fn fn;

	clock_set(__builtin_return_address(0));
	if (!fn)
		*(void **)&fn = real("cuptiActivityRegisterTimestampCallback");
	return fn ? fn(f) : CUPTI_ERROR_NOT_INITIALIZED;
}

/* Enabling a kind: noted, so that handing over keeps it on. */
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	static kind_fn fn;
	const void *caller = __builtin_return_address(0);

	if (!internal(caller) && (unsigned)kind < 64 * 32)
		__atomic_or_fetch(&H.client_kinds[kind / 32], 1u << (kind % 32),
				  __ATOMIC_RELAXED);
	client_acts(caller, 0);
	if (!fn)
		*(void **)&fn = real("cuptiActivityEnable");
	return fn ? fn(kind) : CUPTI_ERROR_NOT_INITIALIZED;
}
