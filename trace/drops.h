/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* What a thread's full ring made it drop, by API, with the durations in
 * ticks: the summary still counts those calls (the trace cannot). Kept
 * by the recording thread itself, only on the ring-full path. */
#ifndef TP_DROPS_H
#define TP_DROPS_H

#include <stdint.h>

#include "hist.h"

#define TP_DROP_SLOTS 32

struct tp_drop_slot {
	uint16_t api;
	struct tp_hist ticks;
};

/* Histogram groups for the slots, from the block itself. */
#define TP_DROP_GROUPS 64

/* Drops are first only logged, duration and API, and folded into the
 * histograms TP_DROP_LOG at a time: the drop path is then an append, and
 * the fold a tight loop over one API, mostly (issue 17: a dropped call
 * must cost no more than a recorded one). */
#define TP_DROP_LOG 256

/* One mapped block, never malloc'd: the first malloc on a thread makes
 * glibc reserve a 64 MiB arena, address space the program may need
 * (`ulimit -v`). */
struct tp_drops {
	unsigned nlog;
	uint64_t log_ticks[TP_DROP_LOG];
	uint16_t log_api[TP_DROP_LOG];
	struct tp_drop_slot slot[TP_DROP_SLOTS];
	unsigned n;
	unsigned last;		/* the slot of the last drop: a thread that
				 * drops usually drops the same call again */
	unsigned groups_used;
	uint64_t other;		/* past the slots or groups, or no memory */
	uint64_t group[TP_DROP_GROUPS][TP_HIST_SUB];
};

struct tp_thread;

/* The recording thread, its ring found full at tail
 * (tp_ring_full_tail): one call of api lasting ticks was dropped. What
 * tp_rec_drop does not do inline: the first drop (maps the block), a
 * full log (folds it), a wake of the writer due. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks,
		   uint64_t tail) __attribute__((noinline));
/* Folds the log into the histograms: by the recording thread, or by the
 * writer once that thread has ended or recording has stopped. */
void tp_drops_fold(struct tp_drops *d);
void tp_drops_free(struct tp_drops *d);

#endif
