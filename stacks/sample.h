/* stacks/: call stacks: capture (libunwind, Python perf trampolines),
 * symbolization, interning; on util/ .. session/. */
/* Another thread's stack, now: a thread cannot safely unwind another, so
 * the thread is sent a signal tprof handles (TPROF_DUMP_SIGNAL) and
 * unwinds itself in the handler, while the asker waits. For the hang
 * watchdog: where a thread that is in no hooked call is (host code,
 * Python, data loading). */
#ifndef TP_SAMPLE_H
#define TP_SAMPLE_H

#include <sys/types.h>

/* Signal sig's handler is tprof's and calls tp_stack_sample_take:
 * samples may be asked for (none until then). */
void tp_stack_sample_enable(int sig);
/* Asks thread tid for its stack and waits up to timeout_ms: the
 * interned stack at the point the signal interrupted, or 0 (no handler
 * ran in time: the signal blocked, the thread gone; or no signal).
 * One asker at a time (the writer thread). */
unsigned tp_stack_sample(pid_t tid, int timeout_ms);
/* In sig's handler: 1 when the signal was tp_stack_sample's request to
 * this thread, whose stack was then taken; 0 otherwise (another sender,
 * another thread). Async-signal-safe. */
int tp_stack_sample_take(int sig, int si_code, pid_t sender);

#endif
