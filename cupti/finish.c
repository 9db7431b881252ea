/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* How GPU collection ends, in the two places CUPTI allows it.
 *
 * After the last recording window (the writer asks, once that window's
 * GPU work had time to finish): kinds disabled, a forced flush, then
 * unsubscribe and cuptiFinalize, so CUPTI costs the rest of the run
 * nothing. cupti_activity.h asks for cuptiFinalize "from the exit
 * callsite of any of the CUDA Driver or Runtime API"; Kineto crashed
 * calling it from its own thread while others launched (its PR #686).
 * So the writer only sets a flag, and an API exit callback does it, on
 * a thread that is the only one inside a CUDA call. A thread enters a
 * CUDA call before CUPTI tells anyone, so "the only one" is judged by
 * the calls CUPTI reports (every runtime and driver call from the
 * request on) and by quiet: no other thread entered one for QUIET_NS.
 * The forced flush before the finalize takes a while, and another
 * thread may come in meanwhile: "alone" is judged again after it, and
 * if it no longer holds, finalizing waits for a later exit callback (the
 * records are in by then, so collection stops at the flush).
 * A program whose threads never pause is not finalized: after
 * GIVE_UP_NS its kinds and callbacks are disabled instead (CUPTI then
 * costs next to nothing either). Once a CUDA graph was launched, CUPTI
 * is only disabled (Kineto's PRs #748, #823: finalize with graphs alive
 * crashes).
 *
 * At exit: every CUDA module registers atexit(__cudaUnregisterBinaryUtil),
 * and the last one tears CUDA down, after which CUPTI delivers nothing;
 * library destructors run later still. So tprof registers its own atexit
 * handler after each module's (at the first API callback after a module
 * was registered: handlers run in reverse order), and there synchronizes
 * the devices the program used, disables the kinds, forces a flush and
 * has the writer convert everything, while names and contexts are alive.
 * A GPU that does not finish within EXIT_WAIT_MS is given up on, with one
 * warning: the CPU trace is completed all the same.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "output/writer.h"
#include "util/log.h"
#include "record/thread.h"
#include "session/timeline.h"
#include "collect.h"

#define DETACH_GRACE_NS 200000000ull
#define QUIET_NS 100000000ull
#define GIVE_UP_NS 5000000000ull
#define EXIT_WAIT_MS 5000

static uint64_t wanted_at_ns;
/* The detach's flush is done; only the finalize (or disable) waits. */
static int flushed;
/* When each thread last entered a CUDA call since the request (by tid;
 * two threads sharing a slot keep the later entry). */
#define ENTER_SLOTS 256
static struct {
	pid_t tid;
	uint64_t ns;
} entered[ENTER_SLOTS];

/* tprof's own CUPTI calls outside callbacks (the writer's flushes, the
 * exit flush) and the detach exclude each other: after cuptiFinalize any
 * CUPTI call would start CUPTI again. */
static pthread_mutex_t calls = PTHREAD_MUTEX_INITIALIZER;

static pid_t tp_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static uint64_t now_ns(void)
{
	return tp_clock_ns(CLOCK_MONOTONIC_RAW);
}

static void stop(const char *why)
{
	tp_cs.stopped_why = why;
	/* On any thread (at exit too) while the writer may be setting the
	 * timeline up: the map is read only once ready is seen. */
	if (__atomic_load_n(&tp_tl.ready, __ATOMIC_ACQUIRE))
		tp_cs.stopped_at_ns = (uint64_t)tp_trace_ns(tp_ticks());
	__atomic_store_n(&tp_cs.state, TP_CUPTI_STOPPED, __ATOMIC_RELEASE);
}

/* Not once cuptiFinalize ran (1), or was called and failed (-1): any
 * CUPTI call would start CUPTI again, which crashes with CUDA graphs
 * alive (PyTorch PR #112507). The writer then uses only what it has. */
int tp_cupti_calls_begin(void)
{
	pthread_mutex_lock(&calls);
	return tp_cs.finalized != 1 && tp_cs.finalized != -1;
}

void tp_cupti_calls_end(void)
{
	pthread_mutex_unlock(&calls);
}

/* The writer's periodic flush; final: the trace ends (kinds disabled
 * first, then a forced flush: Kineto's order). */
void tp_cupti_flush(int final)
{
	pthread_mutex_lock(&calls);
	if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) != TP_CUPTI_ON)
		goto out;
	if (final)
		tp_cupti_disable_kinds();
	tp_cupti.flush_all(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	if (!final)
		goto out;
	if (!tp_cs.multi)
		__atomic_store_n(&tp_cs.check_buffers, 1, __ATOMIC_RELEASE);
	tp_cupti_count_dropped();
	stop("the trace ended");
out:
	pthread_mutex_unlock(&calls);
}

/* ---- a module unloaded mid-run ---- */

#define UNLOAD_WAIT_MS 1000

/* CUPTI's kernel names belong to their module: before it goes, what
 * CUPTI holds is flushed and the writer converts it (names copied); the
 * unloading thread waits for that, a writer cycle or so. Called in the
 * enter callback of the unloading API call (callbacks.c), where
 * cuptiActivityFlushAll is allowed; never from CUPTI's RESOURCE callback
 * for the unload, where it is not. A flush of 0 hands back only buffers
 * whose records are complete: a kernel of the module still running then
 * keeps its buffer, and its name may be gone when it comes (the unload
 * itself waits for the module's work, the flush cannot). */
void tp_cupti_module_unloading(void)
{
	if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) != TP_CUPTI_ON)
		return;
	tp_cupti_flush(0);
	tp_writer_gpu_convert(UNLOAD_WAIT_MS);
}

/* ---- another CUPTI client ---- */

/* A flush reaches every subscriber's buffers (cuptiActivityFlushAll
 * has no v2): a forced one mid-run would hand the program's profiler
 * records of work still running, without timestamps. Among several
 * subscribers, mid-run flushes are plain ones; tprof's records still
 * running come back later (a full buffer, the next flush), and are
 * converted while the writer runs. */
static uint32_t forced_flush(void)
{
	return tp_cs.multi ? 0 : CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
}

static void disable_callbacks(int how);

/* A client came while the detach waited to finalize: cuptiFinalize
 * would now tear down the client's CUPTI, so tprof only lets go. */
static void cancel_detach(void)
{
	if (!flushed ||
	    !__atomic_load_n(&tp_cupti_detach_wanted, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&tp_cupti_detach_wanted, 0, __ATOMIC_RELEASE);
	disable_callbacks(0);
	if (!tp_cs.multi)
		tp_cupti.unsubscribe(tp_cs.sub);
}

int tp_cupti_hand_over(const char *who, const uint32_t *client_kinds)
{
	int ret = -1;

	(void)who;
	pthread_mutex_lock(&calls);
	if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) != TP_CUPTI_ON) {
		cancel_detach();
		goto out;
	}
	/* 13.3: the client's clock is about to be CUPTI's, tprof's
	 * records are in the one before. */
	if (tp_cs.multi && !tp_cs.raw_ts)
		tp_cupti_clock_pin();
	tp_cupti_disable_kinds_except(client_kinds);
	tp_cupti.flush_all(forced_flush());
	tp_cupti_count_dropped();
	/* One subscriber: the client's own cuptiSubscribe would fail.
	 * Among several (13.3, a client's timestamp callback), tprof's
	 * stays, its kinds off: its handle still reads the buffers that
	 * the flush handed back. */
	if (!tp_cs.multi)
		tp_cupti.unsubscribe(tp_cs.sub);
	stop("another CUPTI client took over");
	ret = 0;
out:
	pthread_mutex_unlock(&calls);
	return ret;
}

/* ---- after the last window ---- */

void tp_cupti_detach_request(void)
{
	if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) != TP_CUPTI_ON)
		return;
	/* Every call counts as inside from now on. */
	if (!__atomic_load_n(&tp_cupti_graphs, __ATOMIC_RELAXED)) {
		tp_cupti.enable_domain(1, tp_cs.sub,
				       CUPTI_CB_DOMAIN_RUNTIME_API);
		tp_cupti.enable_domain(1, tp_cs.sub,
				       CUPTI_CB_DOMAIN_DRIVER_API);
	}
	/* Atomic: API exit callbacks on other threads read it (below)
	 * after only a relaxed look at tp_cupti_detach_wanted. */
	__atomic_store_n(&wanted_at_ns, now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&tp_cupti_detach_wanted, 1, __ATOMIC_RELEASE);
}

void tp_cupti_note_enter(void)
{
	pid_t tid = tp_gettid();
	unsigned i = (unsigned)tid % ENTER_SLOTS;

	__atomic_store_n(&entered[i].tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&entered[i].ns, now_ns(), __ATOMIC_RELAXED);
}

/* No thread but this one is in a CUDA call, nor entered one lately.
 * The stamps are read before the clock, and compared as signed
 * differences: a thread that enters meanwhile is recent, never a wrap. */
static int alone(void)
{
	pid_t self = tp_gettid();
	uint64_t latest = 0, ns;
	unsigned i;

	if (__atomic_load_n(&tp_cupti_inside, __ATOMIC_SEQ_CST) != 1)
		return 0;
	for (i = 0; i < ENTER_SLOTS; i++) {
		if (__atomic_load_n(&entered[i].tid, __ATOMIC_RELAXED) == self)
			continue;
		ns = __atomic_load_n(&entered[i].ns, __ATOMIC_ACQUIRE);
		if (ns > latest)
			latest = ns;
	}
	if ((int64_t)(now_ns() - latest) < (int64_t)QUIET_NS)
		return 0;
	return __atomic_load_n(&tp_cupti_inside, __ATOMIC_SEQ_CST) == 1;
}

/* Every callback off: CUPTI has nothing left to do for tprof. */
static void disable_callbacks(int how)
{
	tp_cupti.enable_domain(0, tp_cs.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	tp_cupti.enable_domain(0, tp_cs.sub, CUPTI_CB_DOMAIN_DRIVER_API);
	tp_cs.finalized = how;
}

/* finalized: 1 finalized, 2 disabled (graphs), 3 disabled (threads
 * never paused), 4 disabled (several subscribers: cuptiFinalize would
 * end the others' CUPTI too; tprof's subscriber stays, its kinds and
 * callbacks off), -1 cuptiFinalize failed. */
static void let_go(int finalize)
{
	if (tp_cs.multi) {
		disable_callbacks(4);
		return;
	}
	if (__atomic_load_n(&tp_cupti_graphs, __ATOMIC_RELAXED)) {
		disable_callbacks(2);
		return;
	}
	if (!finalize) {
		disable_callbacks(3);
		return;
	}
	tp_cupti.unsubscribe(tp_cs.sub);
	tp_cs.finalized = tp_cupti.finalize() == CUPTI_SUCCESS ? 1 : -1;
}

/* Kinds off and a forced flush: every record is in, collection stops. */
static void detach_flush(void)
{
	tp_cupti_disable_kinds();
	tp_cupti.flush_all(forced_flush());
	if (!tp_cs.multi)
		__atomic_store_n(&tp_cs.check_buffers, 1, __ATOMIC_RELEASE);
	tp_cupti_count_dropped();
	stop("the last recording window ended");
	flushed = 1;
}

/* In an API exit callback; depth: this thread's nesting of CUDA calls. */
void tp_cupti_detach_here(unsigned depth)
{
	uint64_t since = now_ns() -
			 __atomic_load_n(&wanted_at_ns, __ATOMIC_RELAXED);
	int finalize, give_up = (int64_t)since >= (int64_t)GIVE_UP_NS;

	if (depth != 1 || (int64_t)since < (int64_t)DETACH_GRACE_NS)
		return;
	/* Several subscribers: nothing is finalized, no need to be alone. */
	finalize = tp_cs.multi || alone();
	if (!finalize && !give_up)
		return;
	if (pthread_mutex_trylock(&calls))
		return;
	if (!__atomic_load_n(&tp_cupti_detach_wanted, __ATOMIC_ACQUIRE))
		goto out;
	if (!flushed) {
		/* Stopped meanwhile (a client took over, the trace ended):
		 * nothing left to detach. */
		if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) !=
		    TP_CUPTI_ON) {
			__atomic_store_n(&tp_cupti_detach_wanted, 0,
					 __ATOMIC_RELEASE);
			goto out;
		}
		detach_flush();
		/* The flush took a while: another thread may be in now. */
		finalize = tp_cs.multi || alone();
		if (!finalize && !give_up)
			goto out;
	}
	let_go(finalize);
	__atomic_store_n(&tp_cupti_detach_wanted, 0, __ATOMIC_RELEASE);
	tp_info("the last recording window has ended: CUPTI %s",
		tp_cs.finalized == 1 ? "finalized" :
		tp_cs.finalized == 2 ? "disabled (CUDA graphs were launched)" :
		tp_cs.finalized == 3 ? "disabled (other threads kept calling "
				       "CUDA)" :
		tp_cs.finalized == 4 ? "disabled (other subscribers share "
				       "it)" :
				       "unsubscribed (cuptiFinalize failed)");
out:
	pthread_mutex_unlock(&calls);
}

/* ---- at exit ---- */

static unsigned modules = 1, handled;
static int exit_ran, exit_done;

/* preload: a CUDA module was registered; its atexit follows. */
void tp_cupti_module_registered(void)
{
	__atomic_add_fetch(&modules, 1, __ATOMIC_RELAXED);
}

struct drv {
	int (*count)(int *);
	int (*state)(int, unsigned *, int *);
	int (*retain)(void **, int);
	int (*set)(void *);
	int (*sync)(void);
	int (*release)(int);
};

static int drv_load(struct drv *d)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

	if (!h)
		return -1;
	*(void **)&d->count = dlsym(h, "cuDeviceGetCount");
	*(void **)&d->state = dlsym(h, "cuDevicePrimaryCtxGetState");
	*(void **)&d->retain = dlsym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&d->set = dlsym(h, "cuCtxSetCurrent");
	*(void **)&d->sync = dlsym(h, "cuCtxSynchronize");
	*(void **)&d->release = dlsym(h, "cuDevicePrimaryCtxRelease_v2");
	return d->count && d->state && d->retain && d->set && d->sync &&
	       d->release ? 0 : -1;
}

/* Waits for the work in flight on every device whose primary context
 * is active (none is created for a device the program did not use), on
 * this thread's own current context, so the program's is untouched. */
static void sync_devices(void)
{
	struct drv d;
	unsigned flags;
	int n = 0, dev, active;
	void *ctx;

	if (drv_load(&d) < 0 || d.count(&n))
		return;
	for (dev = 0; dev < n; dev++) {
		if (d.state(dev, &flags, &active) || !active)
			continue;
		if (d.retain(&ctx, dev))
			continue;
		if (!d.set(ctx))
			d.sync();
		d.set(NULL);
		d.release(dev);
	}
}

static void *exit_flush(void *arg)
{
	(void)arg;
	tp_self = tp_thread_internal();
	sync_devices();
	tp_cupti_flush(1);
	__atomic_store_n(&exit_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int wait_flag(int *flag, int timeout_ms)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < timeout_ms; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return 0;
		nanosleep(&ms, NULL);
	}
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE) ? 0 : -1;
}

static void gpu_at_exit(void)
{
	pthread_attr_t a;
	pthread_t t;
	int started;

	if (__atomic_exchange_n(&exit_ran, 1, __ATOMIC_ACQ_REL))
		return;
	if (__atomic_load_n(&tp_cs.state, __ATOMIC_ACQUIRE) == TP_CUPTI_OFF)
		return;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	started = pthread_create(&t, &a, exit_flush, NULL) == 0;
	pthread_attr_destroy(&a);
	if (!started)
		exit_flush(NULL);
	if (wait_flag(&exit_done, EXIT_WAIT_MS) < 0) {
		tp_cs.exit_timeouts++;
		stop("the GPU did not finish at exit");
		tp_warn("the GPU work in flight at exit did not finish within "
			"%d ms (a kernel that does not end?): GPU activity "
			"after that is not in the trace, the CPU trace is "
			"complete", EXIT_WAIT_MS);
	}
	tp_writer_gpu_final(EXIT_WAIT_MS);
}

/* From API callbacks: once per module registered, after its atexit. */
void tp_cupti_exit_check(void)
{
	unsigned m = __atomic_load_n(&modules, __ATOMIC_RELAXED);
	unsigned h = __atomic_load_n(&handled, __ATOMIC_RELAXED);

	if (__builtin_expect(m == h, 1))
		return;
	if (!__atomic_compare_exchange_n(&handled, &h, m, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	atexit(gpu_at_exit);
}

void tp_cupti_exit_setup(void)
{
	__atomic_store_n(&handled, 0, __ATOMIC_RELAXED);
}
