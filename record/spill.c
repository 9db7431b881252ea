/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "ring_budget.h"
#include "spill.h"

#define CHUNK_BYTES ((size_t)TP_SPILL_SLOTS * sizeof(struct tp_event))
/* Free chunks' pages go back to the system after this long without a
 * chunk taken. */
#define IDLE_NS 1000000000ull
/* Free chunks the writer keeps resident ahead of a spilling thread: a
 * fresh chunk's page faults would cost the thread about 150 ns a
 * record. */
#define AHEAD 4

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { POOL_UNMAPPED, POOL_MAPPING, POOL_READY, POOL_NONE };

/* The chunks: headers, free-list links and slots in one mapping. The
 * free list is a stack of indexes (1-based, 0: empty) under a tag that
 * every change bumps, so a pop that read a stale link fails its
 * compare-and-swap instead of corrupting the list. */
static struct {
	size_t want;
	int state;
	char *map;
	size_t map_bytes;
	struct tp_chunk *hdr;
	uint32_t *next;
	uint8_t *resident;	/* its pages were written or made resident */
	char *slots;
	uint32_t n;
	uint64_t top;
	uint64_t in_use, peak, taken, refused;
	/* writer side (tp_spill_upkeep) */
	uint64_t seen_taken, idle_since;
	int trimmed;
} P;

void tp_spill_configure(size_t bytes)
{
	P.want = bytes;
}

uint64_t tp_spill_resv_max(uint64_t n_slots)
{
	uint64_t m = n_slots / 2;

	return m < TP_SPILL_SLOTS / 4 ? m : TP_SPILL_SLOTS / 4;
}

static uint64_t pack(uint64_t top, uint32_t idx)
{
	return ((top >> 32) + 1) << 32 | idx;
}

static struct tp_chunk *pool_pop(void)
{
	uint64_t top = __atomic_load_n(&P.top, __ATOMIC_ACQUIRE), want;
	uint32_t idx;

	do {
		idx = (uint32_t)top;
		if (!idx)
			return NULL;
		want = pack(top, __atomic_load_n(&P.next[idx - 1],
						 __ATOMIC_RELAXED));
	} while (!__atomic_compare_exchange_n(&P.top, &top, want, 1,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return &P.hdr[idx - 1];
}

static void pool_push(struct tp_chunk *c)
{
	uint32_t idx = (uint32_t)(c - P.hdr) + 1;
	uint64_t top = __atomic_load_n(&P.top, __ATOMIC_RELAXED);

	do {
		__atomic_store_n(&P.next[idx - 1], (uint32_t)top,
				 __ATOMIC_RELAXED);
	} while (!__atomic_compare_exchange_n(&P.top, &top, pack(top, idx), 1,
					      __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/* Every chunk free, in index order. */
static void pool_fill(void)
{
	uint32_t i;

	for (i = 0; i < P.n; i++) {
		P.hdr[i].slots = (struct tp_event *)(P.slots +
						      (size_t)i * CHUNK_BYTES);
		P.next[i] = i + 1 < P.n ? i + 2 : 0;
	}
	__atomic_store_n(&P.top, pack(P.top, P.n ? 1 : 0), __ATOMIC_RELEASE);
	P.in_use = 0;
}

/* Headers and links, rounded to a page, then the chunks. */
static size_t meta_bytes(uint32_t n)
{
	size_t b = n * (sizeof(struct tp_chunk) + sizeof(uint32_t) + 1);

	return (b + 4095) & ~(size_t)4095;
}

/* Once per process, by the first thread that spills; the others drop
 * meanwhile rather than wait. Under an address-space limit the pool
 * takes its bytes from the rings' budget (ring_budget.h). */
static int pool_map(void)
{
	size_t bytes = tp_as_limited() ? tp_ring_budget_take_pool(P.want) :
		       P.want;
	uint32_t n = (uint32_t)(bytes / CHUNK_BYTES);
	size_t meta = meta_bytes(n);
	void *p;

	if (!n)
		goto none;
	p = mmap(NULL, meta + (size_t)n * CHUNK_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		goto none;
	P.map = p;
	P.map_bytes = meta + (size_t)n * CHUNK_BYTES;
	P.hdr = p;
	P.next = (uint32_t *)(P.hdr + n);
	P.resident = (uint8_t *)(P.next + n);
	P.slots = P.map + meta;
	P.n = n;
	pool_fill();
	if (tp_as_limited())
		tp_ring_budget_give(bytes - (size_t)n * CHUNK_BYTES);
	return POOL_READY;
none:
	if (tp_as_limited())
		tp_ring_budget_give(bytes);
	return POOL_NONE;
}

static int pool_ready(void)
{
	int st = __atomic_load_n(&P.state, __ATOMIC_ACQUIRE);

	if (st == POOL_UNMAPPED && P.want &&
	    __atomic_compare_exchange_n(&P.state, &st, POOL_MAPPING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		st = pool_map();
		__atomic_store_n(&P.state, st, __ATOMIC_RELEASE);
	}
	return st == POOL_READY;
}

static struct tp_chunk *chunk_take(void)
{
	struct tp_chunk *c = pool_pop();
	uint64_t used;

	if (!c) {
		__atomic_add_fetch(&P.refused, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	__atomic_store_n(&P.resident[c - P.hdr], 1, __ATOMIC_RELAXED);
	used = __atomic_add_fetch(&P.in_use, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&P.taken, 1, __ATOMIC_RELAXED);
	if (used > __atomic_load_n(&P.peak, __ATOMIC_RELAXED))
		__atomic_store_n(&P.peak, used, __ATOMIC_RELAXED);
	return c;
}

static void chunk_give(struct tp_chunk *c)
{
	__atomic_sub_fetch(&P.in_use, 1, __ATOMIC_RELAXED);
	pool_push(c);
}

struct tp_event *tp_spill_fit(struct tp_ring *r, unsigned n)
{
	struct tp_chunk *c = r->chunk;
	uint64_t end = c->start + TP_SPILL_SLOTS;

	if (r->head + n + r->resv > end)
		return NULL;
	r->limit = end - r->resv;
	return &c->slots[r->head - c->start];
}

/* A ring of the rings file tells its decoder which positions were
 * spilled by its last TP_SPILL_SEGS segments: a new one may replace the
 * oldest only once the tail (for such a ring, the synced position) is
 * past it. */
static int seg_room(struct tp_ring *r)
{
	const uint64_t *old = r->seg[r->seg_n % TP_SPILL_SEGS];

	return !r->hold || r->seg_n < TP_SPILL_SEGS ||
	       old[1] <= __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}

static void seg_open(struct tp_ring *r, uint64_t from, uint64_t start)
{
	uint64_t *s = r->seg[r->seg_n % TP_SPILL_SEGS];

	__atomic_store_n(&s[1], TP_SPILL_OPEN, __ATOMIC_RELAXED);
	__atomic_store_n(&s[0], from, __ATOMIC_RELAXED);
	__atomic_store_n(&s[2], start, __ATOMIC_RELAXED);
	__atomic_store_n(&r->seg_n, r->seg_n + 1, __ATOMIC_RELEASE);
}

struct tp_event *tp_spill_take(struct tp_ring *r, unsigned n)
{
	struct tp_chunk *c, *prev = r->chunk;
	uint64_t at = r->head, start;

	(void)n;	/* a chunk holds any record with resv_max kept */
	if (!pool_ready())
		return NULL;
	if (r->qp - __atomic_load_n(&r->qc, __ATOMIC_ACQUIRE) >=
	    TP_SPILL_QUEUE || (!prev && !seg_room(r)))
		return NULL;
	c = chunk_take();
	if (!c)
		return NULL;
	start = (at + TP_SPILL_SLOTS - 1) & ~(uint64_t)(TP_SPILL_SLOTS - 1);
	c->from = at;
	c->start = start;
	c->end = TP_SPILL_OPEN;
	if (prev)
		__atomic_store_n(&prev->end, at, __ATOMIC_RELEASE);
	else
		seg_open(r, at, start);
	r->q[r->qp % TP_SPILL_QUEUE] = c;
	__atomic_store_n(&r->qp, r->qp + 1, __ATOMIC_RELEASE);
	r->chunk = c;
	r->wslots = c->slots;
	r->wmask = TP_SPILL_SLOTS - 1;
	/* Positions [at, start) hold nothing. */
	__atomic_store_n(&r->head, start, __ATOMIC_RELEASE);
	r->limit = start + TP_SPILL_SLOTS - r->resv;
	return &c->slots[0];
}

void tp_spill_leave(struct tp_ring *r)
{
	uint64_t *s = r->seg[(r->seg_n - 1) % TP_SPILL_SEGS];

	__atomic_store_n(&r->chunk->end, r->head, __ATOMIC_RELEASE);
	__atomic_store_n(&s[1], r->head, __ATOMIC_RELEASE);
	r->chunk = NULL;
	r->wslots = r->slots;
	r->wmask = r->mask;
}

/* The chunk being read is done: its queue entry, then the chunk, go
 * back. */
static void read_done(struct tp_ring *r)
{
	struct tp_chunk *c = r->rchunk;

	r->rchunk = NULL;
	__atomic_store_n(&r->qc, r->qc + 1, __ATOMIC_RELEASE);
	chunk_give(c);
}

const struct tp_event *tp_spill_read(struct tp_ring *r, uint64_t *pos,
				     uint64_t head)
{
	struct tp_chunk *c;

	for (;;) {
		c = r->rchunk;
		if (c) {
			if (*pos >= head)
				return NULL;
			if (*pos < __atomic_load_n(&c->end, __ATOMIC_ACQUIRE))
				return &c->slots[*pos - c->start];
			read_done(r);
			continue;
		}
		if (r->qc == __atomic_load_n(&r->qp, __ATOMIC_ACQUIRE))
			return NULL;
		c = r->q[r->qc % TP_SPILL_QUEUE];
		if (*pos != c->from)
			return NULL;
		r->rchunk = c;
		*pos = c->start;
	}
}

const struct tp_event *tp_ring_unwrap(struct tp_ring *r, uint64_t pos,
				      unsigned n, struct tp_event *scratch)
{
	unsigned i;

	for (i = 0; i < n; i++)
		scratch[i] = *tp_ring_at(r, pos + i);
	return scratch;
}

void tp_spill_ring_free(struct tp_ring *r)
{
	uint64_t i;

	for (i = r->qc; i < r->qp; i++)
		chunk_give(r->q[i % TP_SPILL_QUEUE]);
	r->qc = r->qp;
	r->rchunk = NULL;
	r->chunk = NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Takes the whole free list; each chunk's pages go, then the chunk goes
 * back at once, so a thread that spills meanwhile soon finds one. */
static void trim(void)
{
	uint64_t top = __atomic_load_n(&P.top, __ATOMIC_ACQUIRE);
	uint32_t idx, next;

	while (!__atomic_compare_exchange_n(&P.top, &top, pack(top, 0), 1,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	for (idx = (uint32_t)top; idx; idx = next) {
		next = P.next[idx - 1];
		madvise(P.hdr[idx - 1].slots, CHUNK_BYTES, MADV_DONTNEED);
		P.resident[idx - 1] = 0;
		pool_push(&P.hdr[idx - 1]);
	}
}

/* The free chunks next in line made resident. The walk down the free
 * list races with takers: a link read stale leads to a chunk in use,
 * which making resident leaves as it is (MADV_POPULATE_WRITE writes
 * nothing); a kernel without it: nothing done. */
void tp_spill_prefault(void)
{
	uint32_t idx, i;

	if (__atomic_load_n(&P.state, __ATOMIC_ACQUIRE) != POOL_READY ||
	    !__atomic_load_n(&P.in_use, __ATOMIC_RELAXED))
		return;
	idx = (uint32_t)__atomic_load_n(&P.top, __ATOMIC_ACQUIRE);
	for (i = 0; i < AHEAD && idx && idx <= P.n; i++) {
		if (!__atomic_load_n(&P.resident[idx - 1], __ATOMIC_RELAXED)) {
			__atomic_store_n(&P.resident[idx - 1], 1,
					 __ATOMIC_RELAXED);
			madvise(P.hdr[idx - 1].slots, CHUNK_BYTES,
				MADV_POPULATE_WRITE);
		}
		idx = __atomic_load_n(&P.next[idx - 1], __ATOMIC_RELAXED);
	}
}

void tp_spill_upkeep(void)
{
	uint64_t taken, now;

	if (__atomic_load_n(&P.state, __ATOMIC_ACQUIRE) != POOL_READY)
		return;
	taken = __atomic_load_n(&P.taken, __ATOMIC_RELAXED);
	now = mono_ns();
	if (taken != P.seen_taken ||
	    __atomic_load_n(&P.in_use, __ATOMIC_RELAXED)) {
		P.seen_taken = taken;
		P.idle_since = now;
		P.trimmed = 0;
		return;
	}
	if (P.trimmed || now - P.idle_since < IDLE_NS)
		return;
	trim();
	P.trimmed = 1;
}

void tp_spill_after_fork(void)
{
	if (P.state == POOL_READY)
		pool_fill();
	else if (P.state == POOL_MAPPING)	/* the parent's mapper */
		P.state = POOL_UNMAPPED;
	P.taken = P.peak = P.refused = P.seen_taken = 0;
	P.trimmed = 0;
}

void tp_spill_stats(struct tp_spill_stats *s)
{
	int ready = __atomic_load_n(&P.state, __ATOMIC_ACQUIRE) == POOL_READY;

	memset(s, 0, sizeof(*s));
	s->pool_bytes = ready ? (uint64_t)P.n * CHUNK_BYTES : 0;
	s->chunks = ready ? P.n : 0;
	s->taken = __atomic_load_n(&P.taken, __ATOMIC_RELAXED);
	s->peak = __atomic_load_n(&P.peak, __ATOMIC_RELAXED);
	s->refused = __atomic_load_n(&P.refused, __ATOMIC_RELAXED);
}

uint64_t tp_spill_seg_end(const struct tp_ring *r, uint64_t pos,
			  uint64_t *first)
{
	uint64_t i, n = r->seg_n;

	for (i = n > TP_SPILL_SEGS ? n - TP_SPILL_SEGS : 0; i < n; i++) {
		const uint64_t *s = r->seg[i % TP_SPILL_SEGS];

		if (pos >= s[0] && pos < s[1]) {
			*first = s[2];
			return s[1];
		}
	}
	return pos;
}
