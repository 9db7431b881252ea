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

struct tp_chunk;

/* Spill chunks a ring may hold at once (record/spill.h), and the spill
 * segments it remembers for the rings file's decoder. */
#define TP_SPILL_QUEUE 128
#define TP_SPILL_SEGS 4

struct tp_ring {
	/* producer side, on its own cache line: the next record goes at
	 * wslots[head & wmask] (the ring's own slots, or a spill chunk's
	 * while the ring is full), and head + n up to limit needs no look
	 * at the tail: the end of the room known free (less what is kept
	 * back for range ends), or sooner the fill mark at which the writer
	 * is woken. Crossing it is the only slow path, rare either way. */
	uint64_t head __attribute__((aligned(64)));
	uint64_t limit;
	struct tp_event *wslots;
	uint64_t wmask;
	/* the ring's size less the slots kept back (resv): the drop path's
	 * measure of the room, on this line */
	uint64_t room;
	uint64_t woke_tail;	/* the tail when the writer was last woken */
	/* the tail at which the last look found no room, ring or spill:
	 * drops at the same tail take the inline drop path */
	uint64_t drop_tail;
	uint64_t dropped;
	/* producer, less often: slots kept back so that the end of every
	 * range begun is sure to fit (tp_rec_open), at most resv_max; the
	 * chunk being filled (NULL: the ring) and the chunks queued; the
	 * spill segments, positions [from, to) each (to: ~0 while open;
	 * nothing before its first chunk's start), the last
	 * TP_SPILL_SEGS of seg_n */
	uint64_t resv __attribute__((aligned(64)));
	uint64_t resv_max;
	uint64_t tail_cache;
	struct tp_chunk *chunk;
	uint64_t qp;
	uint64_t seg_n;
	uint64_t seg[TP_SPILL_SEGS][3];	/* from, to, first start */
	/* consumer side: tail is what the producer may reuse, rd what the
	 * consumer has read. They are one unless hold is set (a ring in the
	 * rings file, record/ringfile.h): then slots read since the last
	 * sync point of the trace go back only at the next one
	 * (tp_ring_publish), so a kill never loses a record that is neither
	 * in the file's synced part nor in the ring. Positions count
	 * records in the ring and in spill chunks alike. */
	uint64_t tail __attribute__((aligned(64)));
	uint64_t rd;
	int hold;
	struct tp_chunk *rchunk;	/* the chunk being read, NULL: none */
	uint64_t qc;			/* chunks read to their end */
	/* fixed */
	uint64_t mask __attribute__((aligned(64)));
	struct tp_event *slots;
	size_t map_bytes;
	size_t faulted;		/* bytes made resident ahead of the producer */
	int external;		/* slots belong to the rings file */
	/* chunks in the order they were queued: entry i % TP_SPILL_QUEUE
	 * for qc <= i < qp */
	struct tp_chunk *q[TP_SPILL_QUEUE];
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

/* The slow path of tp_ring_reserve_n: tp_ring_take, and one more drop
 * counted when nothing fits. */
struct tp_event *tp_ring_reserve_slow(struct tp_ring *r, unsigned n)
	__attribute__((noinline));
/* Past the limit: reads the tail, wakes the writer at the fill mark,
 * moves between the ring and spill chunks (record/spill.h); n slots
 * where the next record goes, or NULL when none fit anywhere (not
 * counted: the caller counts the drop). */
struct tp_event *tp_ring_take(struct tp_ring *r, unsigned n)
	__attribute__((noinline));
/* Slots kept back for range ends (tp_rec_open): k more, the limit
 * brought down with them (to head at least: the next record then takes
 * the slow path, which works the limit out again); or k fewer, the
 * limit left as it is (the slow path raises it when it is next due). */
static inline void tp_ring_keep(struct tp_ring *r, unsigned k)
{
	r->resv += k;
	r->room -= k;
	r->limit = r->limit >= r->head + k ? r->limit - k : r->head;
}

static inline void tp_ring_unkeep(struct tp_ring *r, unsigned k)
{
	r->resv -= k;
	r->room += k;
}

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
	return &r->wslots[r->head & r->wmask];
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

/* n slots, with those kept back, do not fit in the ring with the tail
 * at tail: the ring is full (while a spill chunk is being filled, the
 * ring is full until the consumer has nearly caught up). */
static inline int tp_ring_full_at(const struct tp_ring *r, unsigned n,
				  uint64_t tail)
{
	return r->head + n > tail + r->room;
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
	return &r->wslots[(r->head + i) & r->wmask];
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
