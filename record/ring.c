/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#include <string.h>

#include "ring.h"
#include "spill.h"

/* mmap rather than malloc: pages a thread never fills are never touched,
 * so a large per-thread size costs only address space until used. */
size_t tp_ring_slots_for(size_t bytes)
{
	size_t n = 1;

	while (n * 2 * sizeof(struct tp_event) <= bytes)
		n *= 2;
	return n < 2 ? 2 : n;
}

void tp_ring_init_at(struct tp_ring *r, struct tp_event *slots,
		     size_t n_slots)
{
	memset(r, 0, sizeof(*r));
	r->limit = n_slots / 2;
	r->wslots = slots;
	r->wmask = n_slots - 1;
	r->woke_tail = ~0ull;
	r->drop_tail = ~0ull;
	r->resv_max = tp_spill_resv_max(n_slots);
	r->room = n_slots;
	r->mask = n_slots - 1;
	r->slots = slots;
	r->map_bytes = n_slots * sizeof(struct tp_event);
	r->external = 1;
}

int tp_ring_init(struct tp_ring *r, size_t bytes)
{
	size_t n = tp_ring_slots_for(bytes);
	void *p;

	p = mmap(NULL, n * sizeof(struct tp_event), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	tp_ring_init_at(r, p, n);
	r->external = 0;
	return 0;
}

void (*tp_ring_wake_fn)(void);

/* Once per position of the tail: a producer spinning on a full ring
 * must not call the writer on every dropped event. */
static void wake_writer(struct tp_ring *r)
{
	/* Atomic: set when the writer starts, while others record. */
	void (*wake)(void) = __atomic_load_n(&tp_ring_wake_fn,
					     __ATOMIC_ACQUIRE);

	if (r->woke_tail == r->tail_cache || !wake)
		return;
	r->woke_tail = r->tail_cache;
	wake();
}

/* Once per position of the tail, like wake_writer, and marked even with
 * no writer yet to wake (it drains every ring when it starts). */
void tp_ring_wake_full(struct tp_ring *r, uint64_t tail)
{
	void (*wake)(void) = __atomic_load_n(&tp_ring_wake_fn,
					     __ATOMIC_ACQUIRE);

	r->tail_cache = tail;
	r->woke_tail = tail;
	if (wake)
		wake();
}

/* The fill mark: past it the writer is woken. */
static uint64_t fill_mark(const struct tp_ring *r, uint64_t tail)
{
	return tail + (r->mask + 1) / 2;
}

/* In the ring: below the fill mark the next stop is the mark; past it
 * the writer is woken and the next stop is the end of the free room,
 * where the tail is read again. So a producer the writer keeps up with
 * reads the tail and wakes the writer about once per half ring. */
static struct tp_event *in_ring(struct tp_ring *r, unsigned n, uint64_t tail)
{
	uint64_t room = tail + r->room, head = r->head;

	if (head + n > fill_mark(r, tail)) {
		wake_writer(r);
		r->limit = room;
	} else {
		r->limit = fill_mark(r, tail) < room ? fill_mark(r, tail) : room;
	}
	return &r->slots[head & r->mask];
}

struct tp_event *tp_ring_take(struct tp_ring *r, unsigned n)
{
	uint64_t tail;

	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	r->tail_cache = tail;
	if (!tp_ring_full_at(r, n, tail) && tp_spill_may_leave(r, tail)) {
		if (r->chunk)
			tp_spill_leave(r);
		return in_ring(r, n, tail);
	}
	if (r->chunk) {
		struct tp_event *e = tp_spill_fit(r, n);

		if (e)
			return e;
	}
	/* Full: a spill chunk takes the record, if there is one to have. */
	wake_writer(r);
	return tp_spill_take(r, n);
}

struct tp_event *tp_ring_reserve_slow(struct tp_ring *r, unsigned n)
{
	struct tp_event *e = tp_ring_take(r, n);

	if (!e)
		tp_ring_count_drop(r);
	return e;
}

void tp_ring_destroy(struct tp_ring *r)
{
	if (r->slots && !r->external)
		munmap(r->slots, r->map_bytes);
	r->slots = NULL;
}

/* The producer, at its thread's exit: the pages past its last record were
 * only made resident ahead of it and will never be written. Giving them
 * back at once keeps an ended thread's cost to the pages it filled, even
 * while the writer has not yet come round to free its ring. */
void tp_ring_trim(struct tp_ring *r)
{
	size_t used = (size_t)((r->head & r->mask) * sizeof(struct tp_event));

	if (r->head > r->mask)		/* wrapped: every page holds records */
		return;
	used = (used + 4095) & ~(size_t)4095;
	if (used < r->map_bytes)
		madvise((char *)r->slots + used, r->map_bytes - used,
			MADV_DONTNEED);
}

size_t tp_ring_capacity(const struct tp_ring *r)
{
	return (size_t)r->mask + 1;
}

/* A page fault on the recording thread costs microseconds: keep `ahead`
 * bytes past the producer resident, from whichever thread calls this (the
 * writer, and the owner once when the ring is made). Once the whole ring
 * has been through, there is nothing left to do. Kernels before 5.14 lack
 * MADV_POPULATE_WRITE: the producer then faults pages in itself. */
void tp_ring_prefault(struct tp_ring *r, size_t ahead)
{
	size_t used = (size_t)(__atomic_load_n(&r->head, __ATOMIC_RELAXED) *
			       sizeof(struct tp_event));
	size_t want = used + ahead;

	if (r->faulted >= r->map_bytes || want <= r->faulted)
		return;
	want = (want + 4095) & ~(size_t)4095;
	if (want > r->map_bytes)
		want = r->map_bytes;
	if (madvise((char *)r->slots + r->faulted, want - r->faulted,
		    MADV_POPULATE_WRITE) < 0) {
		r->faulted = r->map_bytes;	/* unsupported: stop trying */
		return;
	}
	r->faulted = want;
}
