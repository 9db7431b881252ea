/* sampling/: the host side: CPU samples (signal handler, per-thread timers
 * or perf events) and the rings of blocking OS calls; on util/ ..
 * capture/. */
/* Per-thread host rings: one a sampled thread's signal handler writes
 * its CPU samples into, one a thread's blocking OS calls (hooks/osrt/)
 * go into. Each ring has one producer: the handler, which never nests
 * in itself, or the thread in its own context, guarded against a
 * program signal handler that makes a blocking call in the middle of a
 * record (the nested call is then counted, not recorded). The writer
 * drains both (output/writer_host.c) and frees a ring once its thread
 * is gone from /proc/self/task.
 *
 * They are apart from the CUDA records' rings (record/thread.h) because
 * a signal may land in the middle of a hook writing one of those.
 */
#ifndef TP_HTHREAD_H
#define TP_HTHREAD_H

#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "record/ring.h"

enum tp_ht_kind {
	TP_HT_SAMPLES,		/* written by the sampling signal's handler */
	TP_HT_OSRT,		/* written by the thread's blocking calls */
};

/* How a thread is sampled. */
enum tp_mech {
	TP_MECH_NONE,
	TP_MECH_PERF,		/* perf_event_open task-clock, one fd */
	TP_MECH_TIMER,		/* timer_create on its CPU-time clock */
};

struct tp_hthread {
	struct tp_ring ring;
	struct tp_hthread *next;	/* registry, pushed lock-free */
	pid_t tid;
	uint32_t kind;
	uint32_t busy;		/* OSRT: a record is being written */
	uint32_t born;		/* the scan generation when made */
	int gone;		/* writer: its thread has exited */
	int stopped;		/* sampling stopped (the trace ended): armed
				 * again if recording resumes (a failed
				 * exec) */
	/* the sampler's (SAMPLES), set up by the writer */
	int mech;
	int fd;			/* perf: the event's descriptor */
	uint64_t perf_id;	/* and its id (PERF_EVENT_IOC_ID) */
	timer_t timer;
	/* counted by the producer */
	uint64_t lost;		/* samples not taken, records not made */
	uint64_t late_ns;	/* timer: CPU time past the weight cap */
	uint64_t handler_ticks;	/* spent in the handler, for its cost */
	/* writer side */
	uint64_t written;
	uint32_t seen;		/* the scan generation that last saw it */
};

/* Ring sizes: samples arrive at most at the sampling rate, a record each;
 * blocking calls over the threshold at most one per threshold. */
#define TP_HT_SAMPLE_RING (256u << 10)
#define TP_HT_OSRT_RING (64u << 10)

/* A new host thread and its ring, pushed on the registry: mmap and a
 * compare-and-swap, so async-signal-safe. NULL when no memory. */
struct tp_hthread *tp_ht_new(pid_t tid, enum tp_ht_kind kind);
struct tp_hthread *tp_ht_list(void);
/* Writer only. */
void tp_ht_unlink(struct tp_hthread *h);
void tp_ht_free(struct tp_hthread *h);
/* The scan generation: bumped by the writer before each listing of
 * /proc/self/task, read by tp_ht_new. */
uint32_t tp_ht_generation(void);
uint32_t tp_ht_next_generation(void);
/* A fork child: every host thread is the parent's. Frees them. */
void tp_ht_reset_after_fork(void);

#endif
