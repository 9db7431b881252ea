/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
/* CPU sampling (TPROF_TRACE=cpu): every thread of the process sampled on
 * its own CPU time, TPROF_SAMPLE_HZ times per second of it, each sample
 * its call stack (docs/design/host-sampling.md says why this way).
 *
 * The writer drives it: at each cycle it lists /proc/self/task and gives
 * each thread it has not seen a sample ring and a clock (a perf_event
 * task-clock counter whose overflow signals the thread, else a timer on
 * the thread's CPU-time clock), and takes both back from threads that
 * have gone. The signal is a real-time one no handler holds (never
 * SIGPROF), installed with SA_RESTART; its handler only unwinds into a
 * buffer on its stack, interns the stack without a lock and writes one
 * record into the thread's sample ring.
 */
#ifndef TP_SAMPLER_H
#define TP_SAMPLER_H

#include <stdint.h>

/* The record of a sample (a tp_event of table TP_TABLE_HOST): start =
 * end = ticks when taken, a.raw[0] the interrupted instruction pointer,
 * a.raw[1] the CPU time it stands for (ns), a.raw[2] the mechanism
 * (enum tp_mech), stack the interned stack of its callers (return
 * addresses, innermost first). */
#define TP_HOST_SAMPLE 0

/* The signal the sampler took (0: none yet): the blocking OS calls that
 * a handler would interrupt with EINTR whatever SA_RESTART says (poll,
 * epoll_wait, nanosleep, ...) block it around the call
 * (hooks/osrt/). */
extern int tp_sampler_signal;

/* Writer: the first call starts sampling (TPROF_TRACE=cpu); each call
 * arms the threads that appeared and disarms those gone. Host threads
 * (both kinds) whose thread is gone are marked gone, for the drain to
 * free. Returns the scan's generation. */
void tp_sampler_cycle(void);
/* Writer, at the end of the trace: every clock disarmed, no more
 * samples. */
void tp_sampler_stop(void);
void tp_sampler_after_fork(void);

struct tp_sampler_stats {
	const char *mechanism;	/* "timer", "perf_event",
				 * "timer+perf_event", "none" */
	char why_timer[256];	/* why timer_create was refused, or "" */
	char why_perf[256];	/* why perf_event_open was, or "" */
	int signal;
	unsigned hz;
	uint64_t period_ns;
	uint64_t threads_perf, threads_timer, threads_failed;
	uint64_t lost;		/* of threads already freed */
	uint64_t late_ns;
	uint64_t handler_ticks;	/* CPU time in the handler, in ticks */
};

void tp_sampler_stats(struct tp_sampler_stats *s);
/* The writer frees a host thread: its counts go to the totals. */
void tp_sampler_forget(uint64_t lost, uint64_t late_ns, uint64_t handler);

#endif
