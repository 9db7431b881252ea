/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
/* Inside the sampler: the state arm.c (a thread's clock, and the state
 * itself), sig.c (the signal and its handler) and scan.c (the writer's
 * cycle) share; each calls only the ones before it. */
#ifndef TP_SAMPLER_INT_H
#define TP_SAMPLER_INT_H

#include <stdint.h>

#include "hthread.h"
#include "sampler.h"

struct tp_sampler_state {
	int started;		/* 1: signal installed; -1: could not be */
	int want;		/* TPROF_SAMPLER (enum tp_sampler) */
	int perf_off;		/* perf_event_open refused: not tried again */
	int timer_off;		/* timer_create refused: not tried again */
	uint64_t period_ns;
	unsigned depth;		/* frames per sample */
	unsigned perf_max;	/* perf descriptors allowed */
	unsigned perf_now;	/* held */
	uint64_t threads_perf, threads_timer, threads_failed;
	uint64_t lost, late_ns, handler_ticks;
	int said_failed;
	char why_perf[256];	/* why perf_event_open was refused */
	char why_timer[256];	/* why timer_create was refused */
	/* perf: the host thread of each descriptor (the signal says only
	 * the descriptor) */
	struct tp_hthread **by_fd;
	unsigned by_fd_max;
};

extern struct tp_sampler_state tp_smp;

/* arm.c: a thread's clock, made or taken back (writer). 0 or -1. */
int tp_smp_arm(struct tp_hthread *h);
void tp_smp_disarm(struct tp_hthread *h);
/* Re-enables a perf counter for its next overflow (the handler). */
void tp_smp_perf_rearm(int fd);

/* sig.c: installs the handler on a free real-time signal: 0 or -1. */
int tp_smp_install(void);
/* 1 while the signal's handler is still tprof's. */
int tp_smp_handler_ours(void);

#endif
