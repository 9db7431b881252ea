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

struct tp_drops {
	struct tp_drop_slot slot[TP_DROP_SLOTS];
	unsigned n;
	uint64_t other;		/* past the slots, or out of memory */
};

struct tp_thread;

/* The recording thread: one call of api lasting ticks was dropped. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks)
	__attribute__((cold, noinline));
void tp_drops_free(struct tp_drops *d);

#endif
