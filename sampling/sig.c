/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
/* The sampling signal and its handler.
 *
 * The signal is a real-time one whose disposition is the default when
 * sampling starts, from the middle of the range (programs that take one
 * take SIGRTMIN + n or SIGRTMAX - n), never SIGPROF: a program's own
 * profiler (setitimer(ITIMER_PROF), gperftools) keeps working. SA_RESTART
 * has the kernel restart the system calls it interrupts; those it never
 * restarts block the signal around themselves (hooks/osrt/).
 *
 * The handler is async-signal-safe: it reads the clock, unwinds the
 * interrupted stack into a buffer on its own stack, interns it without a
 * lock and writes one record into the thread's sample ring, whose only
 * producer it is (the signal is blocked while its handler runs). No
 * malloc, no lock but libunwind's own (taken with every signal blocked)
 * and the loader's list lock dl_iterate_phdr takes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "config/config.h"
#include "record/api.h"
#include "record/thread.h"
#include "stacks/stacks.h"
#include "stacks/unwind.h"
#include "sampler_int.h"

/* A timer's weight is capped at this many ns of CPU time: more means
 * its signal waited (the thread blocked it), and the stack it lands on
 * is not where that time went. The rest is counted as late. */
#define WEIGHT_CAP_NS 20000000ull

static uint64_t timer_weight(struct tp_hthread *h, int overrun)
{
	uint64_t w = tp_smp.period_ns * (1u + (unsigned)(overrun > 0 ?
							  overrun : 0));
	uint64_t cap = WEIGHT_CAP_NS > 2 * tp_smp.period_ns ? WEIGHT_CAP_NS :
		       2 * tp_smp.period_ns;

	if (w <= cap)
		return w;
	h->late_ns += w - cap;
	return cap;
}

static void take(struct tp_hthread *h, void *uc, uint64_t weight, int mech)
{
	void *buf[TP_UNWIND_MAX];
	struct tp_event *e;
	uint32_t id = 0;
	uint64_t t0;
	int n;

	if (!(__atomic_load_n(&tp_recording, __ATOMIC_RELAXED) & TP_SRC_CPU))
		return;
	t0 = tp_ticks();
	/* The thread was unwinding its own stack: libunwind's per-thread
	 * cache is mid-update. */
	if (tp_stk_unwinding) {
		h->lost++;
		return;
	}
	n = tp_unwind_signal(buf, (int)tp_smp.depth + 1, uc);
	if (n <= 0) {
		h->lost++;
		return;
	}
	if (n > 1)
		id = tp_stack_intern((const uintptr_t *)(buf + 1), n - 1);
	e = tp_ring_reserve(&h->ring);
	if (!e)			/* full: counted by the ring */
		goto out;
	e->start = e->end = t0;
	e->api = TP_API_ID(TP_TABLE_HOST, TP_HOST_SAMPLE);
	e->flags = 0;
	e->ret = 0;
	e->stream = 0;
	e->a.raw[0] = (uint64_t)(uintptr_t)buf[0];
	e->a.raw[1] = weight;
	e->a.raw[2] = (uint64_t)mech;
	e->a.raw[3] = (uint64_t)n;
	e->a.raw[4] = 0;
	e->stack = id;
	e->corr = 0;
	tp_ring_commit(&h->ring);
out:
	h->handler_ticks += tp_ticks() - t0;
}

static void on_sample(int sig, siginfo_t *si, void *uc)
{
	struct tp_hthread **by_fd, *h = NULL;
	int saved = errno, fd = -1;

	(void)sig;
	if (si->si_code == SI_TIMER) {
		h = si->si_value.sival_ptr;
		if (h && h->kind == TP_HT_SAMPLES && h->mech == TP_MECH_TIMER)
			take(h, uc, timer_weight(h, si->si_overrun),
			     TP_MECH_TIMER);
	} else if (si->si_code == POLL_IN || si->si_code == POLL_HUP) {
		/* A perf counter's overflow: the signal names its fd. */
		fd = si->si_fd;
		by_fd = __atomic_load_n(&tp_smp.by_fd, __ATOMIC_ACQUIRE);
		if (by_fd && fd >= 0 && (unsigned)fd < tp_smp.by_fd_max)
			h = __atomic_load_n(&by_fd[fd], __ATOMIC_ACQUIRE);
		if (h) {
			take(h, uc, tp_smp.period_ns, TP_MECH_PERF);
			tp_smp_perf_rearm(fd);
		}
	}
	errno = saved;
}

/* A signal nothing handles: the default disposition, no SA_SIGINFO. */
static int free_signal(int sig)
{
	struct sigaction old;

	return sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
	       !(old.sa_flags & SA_SIGINFO);
}

static int pick_signal(void)
{
	int lo = SIGRTMIN + 2, hi = SIGRTMAX - 2, mid = (lo + hi) / 2, d;

	for (d = 0; mid - d >= lo || mid + d <= hi; d++) {
		if (mid + d <= hi && free_signal(mid + d))
			return mid + d;
		if (d && mid - d >= lo && free_signal(mid - d))
			return mid - d;
	}
	return 0;
}

int tp_smp_install(void)
{
	struct sigaction sa;
	int sig = pick_signal();

	if (!sig)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		return -1;
	__atomic_store_n(&tp_sampler_signal, sig, __ATOMIC_RELEASE);
	return 0;
}

int tp_smp_handler_ours(void)
{
	struct sigaction cur;

	return sigaction(tp_sampler_signal, NULL, &cur) == 0 &&
	       (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sample;
}
