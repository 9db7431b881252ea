/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* Another thread's stack (see sample.h). The request is one slot: the
 * asker sets the thread's id and REQUESTED, then tgkill; the handler on
 * that thread claims the slot (TAKING), unwinds into it and publishes
 * DONE. An asker that gives up takes the slot back from REQUESTED, or
 * waits for a handler that already claimed it. libunwind's local
 * unwinding is safe in a signal handler (it blocks signals around its
 * own lock). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "stacks.h"
#include "sample.h"
#include "unwind.h"

#define MAX_FRAMES (TP_MAX_BT_DEPTH + 8)

enum { IDLE, REQUESTED, TAKING, DONE };

static struct {
	uint32_t state;
	pid_t tid;
	int n;
	void *buf[MAX_FRAMES];
} S;
static int sample_sig;

void tp_stack_sample_enable(int sig)
{
	__atomic_store_n(&sample_sig, sig, __ATOMIC_RELEASE);
}

int tp_stack_sample_take(int sig, int si_code, pid_t sender)
{
	uint32_t want = REQUESTED;

	(void)sig;
	if (si_code != SI_TKILL || sender != getpid() ||
	    __atomic_load_n(&S.tid, __ATOMIC_ACQUIRE) != syscall(SYS_gettid) ||
	    !__atomic_compare_exchange_n(&S.state, &want, TAKING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	S.n = tp_unwind(S.buf, MAX_FRAMES);
	__atomic_store_n(&S.state, DONE, __ATOMIC_RELEASE);
	return 1;
}

/* The frames of the interrupted code: those after the handler's return
 * address, which is the signal's restorer (the kernel's sigreturn
 * trampoline libc installed); after the outermost one when the thread
 * was in another handler (a SIGTERM's, while the trace is completed). */
static unsigned interrupted(int sig)
{
	struct sigaction sa;
	int i;

	if (sigaction(sig, NULL, &sa) < 0)
		return 0;
	for (i = S.n - 1; i >= 0; i--)
		if (S.buf[i] == (void *)sa.sa_restorer)
			return tp_stack_intern((uintptr_t *)&S.buf[i + 1],
					       S.n - i - 1);
	return 0;
}

static int wait_done(int ms)
{
	struct timespec tick = { 0, 1000000 };

	while (ms-- > 0) {
		if (__atomic_load_n(&S.state, __ATOMIC_ACQUIRE) == DONE)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

unsigned tp_stack_sample(pid_t tid, int timeout_ms)
{
	int sig = __atomic_load_n(&sample_sig, __ATOMIC_ACQUIRE);
	uint32_t want = REQUESTED;
	unsigned id = 0;

	if (!sig || __atomic_load_n(&S.state, __ATOMIC_ACQUIRE) != IDLE)
		return 0;
	S.n = 0;
	__atomic_store_n(&S.tid, tid, __ATOMIC_RELEASE);
	__atomic_store_n(&S.state, REQUESTED, __ATOMIC_RELEASE);
	if (syscall(SYS_tgkill, getpid(), tid, sig) < 0) {
		__atomic_store_n(&S.state, IDLE, __ATOMIC_RELEASE);
		return 0;
	}
	if (!wait_done(timeout_ms) &&
	    __atomic_compare_exchange_n(&S.state, &want, IDLE, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;	/* no handler came */
	/* A handler that claimed the request finishes it. */
	if (wait_done(1000))
		id = interrupted(sig);
	__atomic_store_n(&S.state, IDLE, __ATOMIC_RELEASE);
	return id;
}
