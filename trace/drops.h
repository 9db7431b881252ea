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

/* One mapped block, never malloc'd: the first malloc on a thread makes
 * glibc reserve a 64 MiB arena, address space the program may need
 * (`ulimit -v`). */
struct tp_drops {
	struct tp_drop_slot slot[TP_DROP_SLOTS];
	unsigned n;
	unsigned groups_used;
	uint64_t other;		/* past the slots or groups, or no memory */
	uint64_t group[TP_DROP_GROUPS][TP_HIST_SUB];
};

struct tp_thread;

/* The recording thread: one call of api lasting ticks was dropped. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks)
	__attribute__((cold, noinline));
void tp_drops_free(struct tp_drops *d);

#endif
