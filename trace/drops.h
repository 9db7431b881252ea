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

/* A dropped API's durations, bucket by bucket in one flat array (the
 * fold adds to it with no lookup: 7.6 KiB a slot, touched only where
 * durations fall); its count is their sum (tp_drop_slot_count). */
struct tp_drop_slot {
	uint16_t api;
	uint64_t bucket[TP_HIST_BUCKETS];
};

/* Drops are first only logged, one word each (the duration in ticks in
 * the top 48 bits, the API below), at the thread's drop_pos, and
 * folded into the slots TP_DROP_LOG at a time: the drop path is then one
 * store, and the fold a tight loop with no search (issue 17: a dropped
 * call must cost less than a recorded one). A duration of 2^48
 * ticks or more (a day and more) does not fit a word: tp_drops_note adds
 * it directly. */
#define TP_DROP_LOG 256
#define TP_DROP_TICKS_SHIFT 16
#define TP_DROP_TICKS_MAX (1ull << (64 - TP_DROP_TICKS_SHIFT))

static inline uint64_t tp_drop_word(uint16_t api, uint64_t ticks)
{
	return ticks << TP_DROP_TICKS_SHIFT | api;
}

/* One mapped block, never malloc'd: the first malloc on a thread makes
 * glibc reserve a 64 MiB arena, address space the program may need
 * (`ulimit -v`). Its pages are touched only as slots fill. */
struct tp_drops {
	uint64_t log[TP_DROP_LOG];
	unsigned n;
	uint64_t other;		/* past the slots */
	/* API -> 1 + its slot (0: none yet): no search, whatever the order
	 * of the APIs (a loop of launch, copy, sync alternates them). 64
	 * KiB of address space, one page touched for the usual APIs. */
	uint8_t slot_of[1u << 16];
	struct tp_drop_slot slot[TP_DROP_SLOTS];
};

struct tp_thread;

/* The recording thread, its ring found full at tail
 * (tp_ring_full_tail): one call of api lasting ticks was dropped. What
 * tp_rec_drop does not do inline: the first drop (maps the block), a
 * full log (folds it), a duration past a word, a wake of the writer
 * due. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks,
		   uint64_t tail) __attribute__((noinline));
/* Folds t's log into its slots: by the recording thread, or by the
 * writer once that thread has ended or recording has stopped. */
void tp_drops_fold(struct tp_thread *t);
/* The writer, done with t's drops (t ended or recording stopped): what
 * t drops from now on starts a new block. */
void tp_drops_release(struct tp_thread *t);
void tp_drops_free(struct tp_drops *d);
uint64_t tp_drop_slot_count(const struct tp_drop_slot *s);

#endif
