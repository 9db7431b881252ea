/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
/* What a thread's full ring made it drop, by API, with the durations in
 * ticks: the summary still counts those calls (the trace cannot). Kept
 * by the recording thread itself, only on the ring-full path.
 *
 * The drop path must cost less than a recorded call (issue 17): a
 * dropped call only stores its API and duration in a small log, two
 * stores like a record's; the histograms are filled from the log once
 * it is full (or when the summary reads them), a loop whose clock-read
 * dependencies overlap instead of stalling every call. */
#ifndef TP_DROPS_H
#define TP_DROPS_H

#include <stdint.h>

#include "hist.h"

#define TP_DROP_SLOTS 32

struct tp_drop_slot {
	uint16_t api;
	struct tp_hist ticks;
};

/* Dropped calls logged before they are added to the histograms. */
#define TP_DROP_LOG 256

/* Histogram groups for the slots, from the block itself. */
#define TP_DROP_GROUPS 64

/* One mapped block, never malloc'd: the first malloc on a thread makes
 * glibc reserve a 64 MiB arena, address space the program may need
 * (`ulimit -v`). */
struct tp_drops {
	struct tp_drop_slot slot[TP_DROP_SLOTS];
	unsigned n;
	unsigned groups_used;
	uint64_t other;		/* past the slots or groups, or no memory */
	unsigned logged;	/* entries of log_* not yet in the slots */
	uint16_t log_api[TP_DROP_LOG];
	uint64_t log_ticks[TP_DROP_LOG];
	uint64_t group[TP_DROP_GROUPS][TP_HIST_SUB];
};

struct tp_thread;

/* The slow path of tp_drops_log: makes the block, folds the full log
 * into the histograms, then logs this call. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks)
	__attribute__((cold, noinline));
/* Adds what is logged to the histograms: the reader, before it reads
 * them (the thread gone or recording stopped). */
void tp_drops_fold(struct tp_drops *d);
void tp_drops_free(struct tp_drops *d);

/* The recording thread: one call of api lasting ticks was dropped. */
static inline void tp_drops_log(struct tp_drops *d, struct tp_thread *t,
				uint16_t api, uint64_t ticks)
{
	if (__builtin_expect(!d || d->logged == TP_DROP_LOG, 0)) {
		tp_drops_note(t, api, ticks);
		return;
	}
	d->log_api[d->logged] = api;
	d->log_ticks[d->logged] = ticks;
	d->logged++;
}

#endif
