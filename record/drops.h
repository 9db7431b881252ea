/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* What a thread's full ring made it drop, by API and by octave of
 * duration: the summary still counts those calls (the trace cannot).
 * Kept by the recording thread itself, only on the ring-full path. */
#ifndef TP_DROPS_H
#define TP_DROPS_H

#include <stdint.h>

#include "api.h"

#define TP_DROP_SLOTS 32
#define TP_DROP_OCTAVES 64
#define TP_DROP_APIS (TP_API_MAX_TABLES << TP_API_TABLE_SHIFT)

/* One API's drops by octave of duration, octave o holding [2^o,
 * 2^(o+1)) ticks (octave 0 also 0): how many, and their ticks in all.
 * The summary puts them at their mean, so an API's dropped time is
 * exact, not a bucket's middle. Two arrays, not pairs: an index scaled
 * by 8 is part of an x86 address, one by 16 is two instructions more. */
struct tp_drop_slot {
	uint64_t n[TP_DROP_OCTAVES];
	uint64_t ticks[TP_DROP_OCTAVES];
	uint16_t api;
};

/* One mapped block per dropping thread, never malloc'd: the first
 * malloc on a thread makes glibc reserve a 64 MiB arena, address space
 * the program may need (`ulimit -v`). of[] is 128 KiB of address space
 * of which one page is touched for the usual APIs; a slot is 1 KiB. */
struct tp_drops {
	/* API -> its slot, NULL: none yet. The drop path's one lookup: no
	 * search, whatever the order of the APIs. */
	struct tp_drop_slot *of[TP_DROP_APIS];
	unsigned n;
	uint64_t other;		/* past the slots */
	struct tp_drop_slot slot[TP_DROP_SLOTS];
};

/* What a thread that has not dropped yet looks its APIs up in: all
 * NULL, so the inline path needs no test of its own for "no block". */
extern struct tp_drop_slot *tp_drops_none[TP_DROP_APIS];

/* One dropped call of ticks: an octave found with one bit scan, two adds
 * (a dropped call must cost less than a recorded one). */
static inline void tp_drop_add(struct tp_drop_slot *s, uint64_t ticks)
{
#if defined(__x86_64__) && !defined(__clang__)
	/* bsr itself: gcc's __builtin_clzll's int costs a sign extension
	 * (clang has no __builtin_ia32_bsrdi: `make fuzz` builds with it). */
	long long o = __builtin_ia32_bsrdi((long long)(ticks | 1));
#else
	unsigned o = 63 ^ (unsigned)__builtin_clzll(ticks | 1);
#endif

	s->n[o]++;
	s->ticks[o] += ticks;
}

/* n calls of total ns in all at their mean, in whole ns that add up to
 * total: n - *n_up of them at *q, *n_up at *q + 1. */
static inline void tp_drop_mean_split(uint64_t total, uint64_t n,
				      uint64_t *q, uint64_t *n_up)
{
	*q = total / n;
	*n_up = total % n;
}

struct tp_thread;

/* The recording thread, its ring found full at tail
 * (tp_ring_full_at): one call of api lasting ticks was dropped. What
 * tp_rec_drop does not do inline: the first drop of the thread or of an
 * API (maps the block, takes a slot) and a wake of the writer due. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks,
		   uint64_t tail) __attribute__((noinline));
/* The writer, done with t's drops (t ended or recording stopped): what
 * t drops from now on starts a new block. The old one is freed with t,
 * or by t when it maps the next: a drop in flight on t may still add to
 * it. */
void tp_drops_release(struct tp_thread *t);
/* Frees t's blocks (t is gone, or this is a fork child's copy). */
void tp_drops_free(struct tp_thread *t);
uint64_t tp_drop_slot_count(const struct tp_drop_slot *s);

#endif
