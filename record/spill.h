/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
/* Spilling: what a thread records while its ring is full goes to chunks
 * taken from one bounded pool shared by the process (TPROF_SPILL_MB),
 * before anything is dropped. A burst far larger than a ring is then
 * kept, at the cost of the pool's pages while it lasts; only a pool
 * used up (or a thread holding TP_SPILL_QUEUE chunks) drops, and
 * counts, as a full ring did.
 *
 * Positions: a ring's head and tail count records wherever they are.
 * When the ring is full at position H the producer takes a chunk,
 * which holds positions [start, start + TP_SPILL_SLOTS) with start the
 * first multiple of TP_SPILL_SLOTS at or after H (the positions in
 * between hold nothing: the consumer skips them), and writes there
 * through the same fast path (wslots and wmask are the chunk's, limit
 * its end). A record never straddles a chunk's end. At a chunk's end
 * the producer goes back to the ring if it has room for what comes next
 * (the consumer has nearly caught up: position p's slot p & mask is
 * free once p < tail + ring size), else to a new chunk. The consumer
 * reads positions in order: the ring's slots, and at a queued chunk's
 * `from` the chunk's, to its `end`, then gives the chunk back.
 *
 * The producer's side never blocks, takes no lock and makes no system
 * call, except the pool's one mmap at the process's first spill (MAP_NORESERVE: pages cost memory only once written). The
 * writer gives the pages of free chunks back to the system once no
 * thread has spilled for a while (tp_spill_upkeep).
 */
#ifndef TP_SPILL_H
#define TP_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

/* Records per chunk: 1.25 MiB. */
#define TP_SPILL_SLOTS 16384u
#define TP_SPILL_OPEN (~0ull)

struct tp_chunk {
	uint64_t from;		/* where the storage before it ended */
	uint64_t start;		/* its first position */
	uint64_t end;		/* past its last record; TP_SPILL_OPEN while
				 * the producer may still write in it */
	struct tp_event *slots;
};

/* The pool's size in bytes (TPROF_SPILL_MB); 0: no spilling. Set at
 * load, before any thread records. */
void tp_spill_configure(size_t bytes);
/* What spilling did so far, for the trailer. */
struct tp_spill_stats {
	uint64_t pool_bytes;	/* mapped, 0: none (yet) */
	uint64_t chunks;	/* in the pool */
	uint64_t taken;		/* chunks handed out */
	uint64_t peak;		/* the most in use at once */
	uint64_t refused;	/* times a full ring found no chunk */
};
void tp_spill_stats(struct tp_spill_stats *s);

/* The most slots a ring of n_slots keeps back for range ends: a chunk
 * or the ring must still hold them with a record of TP_EV_EXT_MAX + 1
 * slots. */
uint64_t tp_spill_resv_max(uint64_t n_slots);

/* Producer (tp_ring_take). The chunk being filled, if n slots and those
 * kept back still fit in it; NULL otherwise. */
struct tp_event *tp_spill_fit(struct tp_ring *r, unsigned n);
/* The ring is full: n slots at the start of a new chunk, or NULL (no
 * pool, the pool used up, TP_SPILL_QUEUE chunks queued, or the rings
 * file's decoder could not be told). */
struct tp_event *tp_spill_take(struct tp_ring *r, unsigned n);
/* Back to the ring: the chunk being filled ends at head. */
void tp_spill_leave(struct tp_ring *r);
/* Whether the producer may go back to a ring with room, the tail at
 * tail: a ring of the rings file only once the tail (its synced
 * position) is past the start of the spill segment being written, so
 * that no more than two segments are ever past the synced position (the
 * decoder is told of the last TP_SPILL_SEGS). */
static inline int tp_spill_may_leave(const struct tp_ring *r, uint64_t tail)
{
	return !r->chunk || !r->hold ||
	       tail >= r->seg[(r->seg_n - 1) % TP_SPILL_SEGS][0];
}

/* Consumer. Whether records from *pos on may be in chunks (head is
 * what the consumer loaded: the chunks queued before it are seen). */
static inline int tp_spill_pending(struct tp_ring *r)
{
	return r->rchunk || r->qc != __atomic_load_n(&r->qp, __ATOMIC_ACQUIRE);
}

/* The record at *pos (< head): moves *pos over positions that hold
 * nothing (to head at most), gives back chunks read to their end, and
 * returns the record when it lies in a chunk (contiguous), or NULL when
 * it is in the ring's slots (or *pos reached head). */
const struct tp_event *tp_spill_read(struct tp_ring *r, uint64_t *pos,
				     uint64_t head);
/* The next record from *pos (< head) and its n - 1 extension slots,
 * contiguous (copied to scratch, of 1 + TP_EV_EXT_MAX slots, where they
 * wrap around the ring's end), with *n set; *pos moved over positions
 * that hold nothing. NULL when *pos reached head. spill:
 * tp_spill_pending, looked at after head was loaded. */
const struct tp_event *tp_ring_unwrap(struct tp_ring *r, uint64_t pos,
				      unsigned n, struct tp_event *scratch);

static inline const struct tp_event *tp_ring_next(struct tp_ring *r,
						  uint64_t *pos,
						  uint64_t head, int spill,
						  unsigned *n,
						  struct tp_event *scratch)
{
	const struct tp_event *e;
	uint64_t p;

	if (__builtin_expect(spill, 0)) {
		e = tp_spill_read(r, pos, head);
		if (e) {	/* in a chunk: never wraps */
			*n = 1 + (e->flags & TP_EV_EXT_MASK);
			return e;
		}
	}
	p = *pos;
	if (p == head)
		return NULL;
	e = tp_ring_at(r, p);
	*n = 1 + (e->flags & TP_EV_EXT_MASK);
	if (__builtin_expect(*n > head - p, 0))	/* cannot be: never wait */
		*n = (unsigned)(head - p);
	if (__builtin_expect((p & r->mask) + *n <= r->mask + 1, 1))
		return e;
	return tp_ring_unwrap(r, p, *n, scratch);
}
/* The ring's thread is gone: its chunks go back to the pool. */
void tp_spill_ring_free(struct tp_ring *r);
/* The writer, each cycle: the pages of free chunks go back to the
 * system after a second without a spill. */
void tp_spill_upkeep(void);
/* The writer, while a thread spills (often: every few hundred records
 * it reads): the next free chunks are made resident ahead of it. */
void tp_spill_prefault(void);
/* A fork child: no thread holds a chunk any more. */
void tp_spill_after_fork(void);

/* For the rings file's decoder: when position pos lies in one of the
 * spill segments the ring remembers (its records were in chunks, not in
 * the ring's slots), the segment's end (TP_SPILL_OPEN: still open),
 * with *first the position of its first record; else pos. */
uint64_t tp_spill_seg_end(const struct tp_ring *r, uint64_t pos,
			  uint64_t *first);

#endif
