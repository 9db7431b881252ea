/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* A single-producer, single-consumer ring of fixed-size event records.
 *
 * The recording thread is the only producer, the writer thread the only
 * consumer: two counters, each written by one side, and no lock. When the
 * ring is full the newest event is dropped and counted; the producer never
 * waits.
 */
#ifndef TP_RING_H
#define TP_RING_H

#include <stdint.h>
#include <stddef.h>

#include "event.h"

struct tp_ring {
	/* producer side, on its own cache line */
	uint64_t head __attribute__((aligned(64)));
	uint64_t tail_cache;
	/* head + n up to this needs no look at the tail: the end of the
	 * room known free, or sooner the fill mark at which the writer is
	 * woken. Crossing it is the only slow path, rare either way. */
	uint64_t limit;
	uint64_t woke_tail;	/* the tail when the writer was last woken */
	uint64_t dropped;
	/* consumer side: tail is what the producer may reuse, rd what the
	 * consumer has read. They are one unless hold is set (a ring in the
	 * rings file, record/ringfile.h): then slots read since the last
	 * sync point of the trace go back only at the next one
	 * (tp_ring_publish), so a kill never loses a record that is neither
	 * in the file's synced part nor in the ring. */
	uint64_t tail __attribute__((aligned(64)));
	uint64_t rd;
	int hold;
	/* fixed */
	uint64_t mask __attribute__((aligned(64)));
	struct tp_event *slots;
	size_t map_bytes;
	size_t faulted;		/* bytes made resident ahead of the producer */
	int external;		/* slots belong to the rings file */
};

int tp_ring_init(struct tp_ring *r, size_t bytes);
/* A ring over n_slots (a power of two) slots the caller mapped: released
 * by the caller, never by tp_ring_destroy. */
void tp_ring_init_at(struct tp_ring *r, struct tp_event *slots,
		     size_t n_slots);
/* The largest power-of-two number of slots that fits in bytes (>= 2). */
size_t tp_ring_slots_for(size_t bytes);
void tp_ring_destroy(struct tp_ring *r);
size_t tp_ring_capacity(const struct tp_ring *r);
void tp_ring_trim(struct tp_ring *r);
void tp_ring_prefault(struct tp_ring *r, size_t ahead);

/* The slow path of tp_ring_reserve_n: reads the tail, wakes the writer
 * when the ring is half full, counts a drop when it is full. */
struct tp_event *tp_ring_reserve_slow(struct tp_ring *r, unsigned n)
	__attribute__((noinline));

/* Called (at most once per half ring, never per event) when a ring passes
 * its fill mark or fills up; async-signal-safe. */
extern void (*tp_ring_wake_fn)(void);

/* Producer: `n` consecutive slots (a record and its extension), or NULL
 * (one more drop) when they do not all fit. The slots may wrap around the
 * end of the array: reach them with tp_ring_slot. */
static inline struct tp_event *tp_ring_reserve_n(struct tp_ring *r,
						 unsigned n)
{
	if (__builtin_expect(r->head + n > r->limit, 0))
		return tp_ring_reserve_slow(r, n);
	return &r->slots[r->head & r->mask];
}

/* Producer, past its limit (head + n > limit): the consumer's tail as
 * it is now, one load of its line, the drop path's whole look at the
 * ring. Relaxed: a drop writes no slot, so it need not see the
 * consumer's reads done (tp_ring_reserve_slow loads it again, acquire,
 * before a slot is reused), and head stays in a register. */
static inline uint64_t tp_ring_tail_now(struct tp_ring *r)
{
	return __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
}

/* n slots do not fit with the tail at tail: the ring is full. */
static inline int tp_ring_full_at(const struct tp_ring *r, unsigned n,
				  uint64_t tail)
{
	return r->head + n > tail + r->mask + 1;
}

/* The writer, woken once per position of the tail while the producer
 * drops. */
void tp_ring_wake_full(struct tp_ring *r, uint64_t tail)
	__attribute__((cold, noinline));

/* Producer: one more drop. Only the producer writes the count, the
 * writer reads it at any time: an x86 add to memory is one instruction,
 * never torn, where a relaxed atomic store of count + 1 compiles to
 * three (the drop path counts them). */
static inline void tp_ring_count_drop(struct tp_ring *r)
{
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
	__asm__("addq $1, %0" : "+m"(r->dropped));
#else
	__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
#endif
}

/* Producer: one more drop on a ring found full at tail. */
static inline void tp_ring_note_full(struct tp_ring *r, uint64_t tail)
{
	tp_ring_count_drop(r);
	if (__builtin_expect(r->woke_tail != tail, 0))
		tp_ring_wake_full(r, tail);
}

/* Producer: a slot to fill, or NULL (and one more drop) when full. */
static inline struct tp_event *tp_ring_reserve(struct tp_ring *r)
{
	return tp_ring_reserve_n(r, 1);
}

/* Producer: the i-th slot after the one reserved. */
static inline struct tp_event *tp_ring_slot(struct tp_ring *r, unsigned i)
{
	return &r->slots[(r->head + i) & r->mask];
}

/* Producer: make the n reserved slots visible to the consumer. */
static inline void tp_ring_commit_n(struct tp_ring *r, unsigned n)
{
	__atomic_store_n(&r->head, r->head + n, __ATOMIC_RELEASE);
}

static inline void tp_ring_commit(struct tp_ring *r)
{
	tp_ring_commit_n(r, 1);
}

/* Consumer: the position up to which records are published. */
static inline uint64_t tp_ring_head(struct tp_ring *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
}

/* Consumer: the record at the tail; the caller knows it is published
 * (tail < a value tp_ring_head returned). */
static inline const struct tp_event *tp_ring_at_tail(struct tp_ring *r)
{
	return &r->slots[r->tail & r->mask];
}

/* Consumer: the next published record, or NULL when empty. */
static inline const struct tp_event *tp_ring_peek(struct tp_ring *r)
{
	if (r->tail == tp_ring_head(r))
		return NULL;
	return tp_ring_at_tail(r);
}

/* Consumer: release the record returned by tp_ring_peek. */
static inline void tp_ring_pop_n(struct tp_ring *r, unsigned n)
{
	r->rd = r->tail + n;
	__atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
}

static inline void tp_ring_pop(struct tp_ring *r)
{
	tp_ring_pop_n(r, 1);
}

/* Consumer: the i-th published slot after the tail. */
static inline const struct tp_event *tp_ring_tail_slot(struct tp_ring *r,
						       unsigned i)
{
	return &r->slots[(r->tail + i) & r->mask];
}

/* Consumer: the slot at position pos (tail <= pos < head). */
static inline const struct tp_event *tp_ring_at(struct tp_ring *r,
						uint64_t pos)
{
	return &r->slots[pos & r->mask];
}

/* Consumer: every slot before pos is read and may be reused. */
static inline void tp_ring_release(struct tp_ring *r, uint64_t pos)
{
	r->rd = pos;
	if (!r->hold)
		__atomic_store_n(&r->tail, pos, __ATOMIC_RELEASE);
}

/* Consumer, at a sync point of the trace: what was read goes back. */
static inline void tp_ring_publish(struct tp_ring *r)
{
	__atomic_store_n(&r->tail, r->rd, __ATOMIC_RELEASE);
}

static inline uint64_t tp_ring_dropped(const struct tp_ring *r)
{
	return __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
}

#endif
