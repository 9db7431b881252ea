/* Spilling (record/spill.h): records past a full ring go to chunks of
 * the pool, in order, and come back to the consumer in order, whole,
 * none twice; positions a chunk skips hold nothing; records with
 * extension slots never straddle a chunk's end; the producer goes back
 * to the ring once the consumer has caught up; a used-up pool drops and
 * counts exactly; chunks go back to the pool as they are read and when
 * a thread is freed; a producer and a consumer on two threads deliver
 * every record not counted as dropped. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "record/spill.h"
#include "record/thread.h"
#include "tp_test.h"

#define RING_SLOTS 16
#define CHUNKS 8

static uint64_t next_seq;

/* One record of seq with ext extension slots, each slot holding seq
 * too; 1 recorded, 0 dropped. */
static int put(struct tp_ring *r, unsigned ext)
{
	struct tp_event *e = tp_ring_reserve_n(r, 1 + ext);
	unsigned i;

	if (!e) {
		next_seq++;
		return 0;
	}
	e->start = next_seq;
	e->flags = (uint16_t)ext;
	for (i = 1; i <= ext; i++)
		tp_ring_slot(r, i)->start = next_seq;
	tp_ring_commit_n(r, 1 + ext);
	next_seq++;
	return 1;
}

struct reader {
	uint64_t pos, want, got, bad, gaps;
	struct tp_event scratch[1 + TP_EV_EXT_MAX];
};

/* Reads everything published, as the writer does; records must come in
 * order of seq, skipping only the dropped ones (gaps, counted). */
static void drain(struct tp_ring *r, struct reader *d)
{
	uint64_t head = tp_ring_head(r);
	int spill = tp_spill_pending(r);
	const struct tp_event *e;
	unsigned n, i;

	while (d->pos != head) {
		e = tp_ring_next(r, &d->pos, head, spill, &n, d->scratch);
		if (!e)
			break;
		if (e->start < d->want)
			d->bad++;
		d->gaps += e->start - d->want;
		if (n != 1u + (e->flags & TP_EV_EXT_MASK))
			d->bad++;
		for (i = 1; i < n; i++)
			if (e[i].start != e->start)
				d->bad++;
		d->want = e->start + 1;
		d->got++;
		d->pos += n;
	}
	tp_ring_release(r, d->pos);
}

static void test_in_order(void)
{
	struct tp_ring r;
	struct reader d = { 0 };
	unsigned i, kept = 0, dropped = 0;
	struct tp_spill_stats st;

	next_seq = 0;
	tp_ring_init(&r, RING_SLOTS * sizeof(struct tp_event));
	/* The ring's 16, then a chunk's worth and more, with records of
	 * 1 to 16 slots: some land at a chunk's end. */
	for (i = 0; i < 2 * TP_SPILL_SLOTS; i++) {
		if (put(&r, i % 7 == 3 ? i % 16 : 0))
			kept++;
		else
			dropped++;
	}
	TP_CHECK_INT("spill: nothing dropped while the pool has chunks",
		     dropped, 0);
	TP_CHECK("spill: the producer is in a chunk", r.chunk != NULL, "no");
	tp_spill_stats(&st);
	TP_CHECK("spill: chunks hold what the ring could not",
		 st.taken >= 2 && st.taken < CHUNKS, "taken %lu",
		 (unsigned long)st.taken);
	drain(&r, &d);
	TP_CHECK_INT("spill: every record read back", d.got, kept);
	TP_CHECK_INT("spill: in order, whole, none twice", d.bad, 0);
	TP_CHECK_INT("spill: no gap", d.gaps, 0);
	TP_CHECK_INT("spill: chunks read to their end went back, all but the "
		     "one being filled", r.qp - r.qc, 1);
	/* The consumer keeps up from now on: at the chunk's end the
	 * producer is back in the ring. */
	for (i = 0; r.chunk && i < 2 * TP_SPILL_SLOTS; i++) {
		kept += (unsigned)put(&r, 0);
		drain(&r, &d);
	}
	TP_CHECK("spill: back in the ring once the consumer caught up",
		 r.chunk == NULL, "still in a chunk");
	for (i = 0; i < 5; i++)
		kept += (unsigned)put(&r, 0);
	drain(&r, &d);
	TP_CHECK_INT("spill: and the ring's records follow the chunk's",
		     d.got, kept);
	TP_CHECK_INT("spill: still in order", d.bad + d.gaps, 0);
	TP_CHECK_INT("spill: the last chunk went back once read",
		     r.qp - r.qc, 0);
	tp_spill_ring_free(&r);
	tp_ring_destroy(&r);
}

/* With nobody reading, the pool runs out: every record past it is
 * dropped and counted, the ring's and the chunks' all kept. */
static void test_pool_used_up(void)
{
	struct tp_ring r;
	struct reader d = { 0 };
	unsigned i, kept = 0;
	uint64_t n = RING_SLOTS + CHUNKS * TP_SPILL_SLOTS + 1000;
	struct tp_spill_stats st;

	next_seq = 0;
	tp_ring_init(&r, RING_SLOTS * sizeof(struct tp_event));
	for (i = 0; i < n; i++)
		kept += (unsigned)put(&r, 0);
	/* The first chunk starts at position 16384: positions 16 to 16383
	 * hold nothing; the chunks are full. */
	TP_CHECK_INT("spill: the ring and the pool's chunks kept",
		     kept, RING_SLOTS + CHUNKS * TP_SPILL_SLOTS);
	TP_CHECK_INT("spill: every record past them dropped and counted",
		     tp_ring_dropped(&r), n - kept);
	tp_spill_stats(&st);
	TP_CHECK("spill: the pool said it was used up", st.refused > 0,
		 "no");
	drain(&r, &d);
	TP_CHECK_INT("spill: what was kept is read back", d.got, kept);
	TP_CHECK_INT("spill: in order, whole", d.bad, 0);
	TP_CHECK_INT("spill: the one gap is the drops", d.gaps, 0);
	/* Read: the chunks are free again, and the producer spills on. */
	for (i = 0; i < 2 * TP_SPILL_SLOTS; i++)
		kept += (unsigned)put(&r, 0);
	TP_CHECK_INT("spill: after the read the chunks take records again",
		     kept, RING_SLOTS + (CHUNKS + 2) * TP_SPILL_SLOTS);
	drain(&r, &d);
	TP_CHECK_INT("spill: the dropped records are the one gap",
		     d.gaps, n - (RING_SLOTS + CHUNKS * TP_SPILL_SLOTS));
	tp_spill_ring_free(&r);
	tp_spill_stats(&st);
	TP_CHECK_INT("spill: a freed ring gives its chunks back",
		     st.peak >= CHUNKS && r.qp == r.qc, 1);
	tp_ring_destroy(&r);
}

/* Range ends: with k slots kept back for it, an end always fits, in the
 * ring or in a chunk, however full both are, at every ring size. */
static void test_keep(void)
{
	unsigned slots, bad = 0, sizes = 0;

	for (slots = 2; slots <= 4096; slots *= 2) {
		struct tp_ring r;
		unsigned i, open = 0, ends = 0, lost = 0;

		tp_ring_init(&r, slots * sizeof(struct tp_event));
		for (i = 0; i < 3 * slots + 40000; i++) {
			if (i % 5 == 0 && r.resv + 2 <= r.resv_max) {
				tp_ring_keep(&r, 2);
				if (put(&r, 1)) {
					open++;
				} else {
					tp_ring_unkeep(&r, 2);
				}
			} else if (i % 5 == 3 && open) {
				tp_ring_unkeep(&r, 2);
				open--;
				if (put(&r, i % 2))
					ends++;
				else
					lost++;
			} else {
				put(&r, i % 3);
			}
		}
		bad += lost;
		sizes++;
		tp_spill_ring_free(&r);
		tp_ring_destroy(&r);
	}
	TP_CHECK_INT("spill: a kept end always fits (ring sizes 2 to 4096)",
		     bad, 0);
	TP_CHECK_INT("spill: ring sizes tried", sizes, 12);
}

/* A ring of the rings file (hold): what was read goes back to the
 * producer only at a sync (here, as the writer does, each quarter ring
 * read), and the decoder is told of the last TP_SPILL_SEGS spill
 * segments, so no more may be past the synced position. A consumer that
 * lags by a little more, then a little less, than the ring makes the
 * producer spill and come back over and over: nothing may be dropped
 * while the pool has chunks. */
static void test_hold_oscillating(void)
{
	const uint64_t cap = 131072;
	struct tp_ring r;
	struct reader d = { 0 };
	uint64_t i, made = 0, kept = 0, target;

	next_seq = 0;
	tp_ring_init(&r, cap * sizeof(struct tp_event));
	r.hold = 1;
	for (i = 0; i < 600; i++) {
		unsigned k;

		for (k = 0; k < 4096; k++, made++)
			kept += (unsigned)put(&r, 0);
		target = i % 2 ? cap - 30000 : cap + 10000;
		while (tp_ring_head(&r) - d.pos > target) {
			uint64_t head = tp_ring_head(&r);
			const struct tp_event *e;
			unsigned n, reads = 0;
			int spill = tp_spill_pending(&r);

			while (reads++ < 1000 && (e = tp_ring_next(&r, &d.pos,
					head, spill, &n, d.scratch))) {
				d.bad += e->start < d.want;
				d.gaps += e->start - d.want;
				d.want = e->start + 1;
				d.got++;
				d.pos += n;
			}
			tp_ring_release(&r, d.pos);
			if (r.rd - r.tail >= cap / 4)
				tp_ring_publish(&r);
		}
	}
	TP_CHECK_INT("spill: rings file ring, spilling on and off: none "
		     "dropped", made - kept, 0);
	TP_CHECK("spill: ... over and over", r.seg_n > 2 * TP_SPILL_SEGS,
		 "%lu segments", (unsigned long)r.seg_n);
	TP_CHECK_INT("spill: ... read in order", d.bad + d.gaps, 0);
	tp_spill_ring_free(&r);
	tp_ring_destroy(&r);
}

/* A producer and a consumer on two threads: every record not counted
 * as dropped arrives, in order, whole. */
struct pair {
	struct tp_ring r;
	uint64_t made, done;
	struct reader d;
};

static void *producer(void *arg)
{
	struct pair *p = arg;
	uint64_t i;

	for (i = 0; i < p->made; i++) {
		struct tp_event *e = tp_ring_reserve_n(&p->r, 1 + (i % 11 == 0));

		if (!e)
			continue;
		e->start = i + 1;	/* 0: never written */
		e->flags = i % 11 == 0;
		if (e->flags)
			tp_ring_slot(&p->r, 1)->start = i + 1;
		tp_ring_commit_n(&p->r, 1 + e->flags);
	}
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *consumer(void *arg)
{
	struct pair *p = arg;
	int done;

	p->d.want = 1;
	do {
		done = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
		drain(&p->r, &p->d);
	} while (!done);
	return NULL;
}

static void test_concurrent(void)
{
	struct pair p;
	pthread_t a, b;

	memset(&p, 0, sizeof(p));
	p.made = 3000000;
	tp_ring_init(&p.r, 256 * sizeof(struct tp_event));
	pthread_create(&a, NULL, producer, &p);
	pthread_create(&b, NULL, consumer, &p);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	TP_CHECK_INT("spill: two threads: every record kept arrives",
		     p.d.got + tp_ring_dropped(&p.r), p.made);
	TP_CHECK_INT("spill: two threads: in order, whole, none twice",
		     p.d.bad, 0);
	TP_CHECK_INT("spill: two threads: the gaps are the drops",
		     p.d.gaps + (p.d.want - 1 < p.made ?
				 p.made - (p.d.want - 1) : 0),
		     tp_ring_dropped(&p.r));
	tp_spill_ring_free(&p.r);
	tp_ring_destroy(&p.r);
}

int main(void)
{
	tp_spill_configure((size_t)CHUNKS * TP_SPILL_SLOTS *
			   sizeof(struct tp_event));
	test_in_order();
	test_pool_used_up();
	test_keep();
	test_hold_oscillating();
	test_concurrent();
	return TP_TEST_DONE();
}
