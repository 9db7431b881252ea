/* The ring: exact counts under concurrency, exact drops when full, no
 * torn records. */
#include <pthread.h>
#include <stdlib.h>

#include "record/ring.h"
#include "tp_test.h"

#define PRODUCERS 8
#define PER_PRODUCER 200000

struct pair {
	struct tp_ring ring;
	uint64_t got;
	uint64_t torn;
	uint64_t out_of_order;
	int done;
};

/* Every field is derived from the sequence number, so a record read
 * before it was completely written shows up as inconsistent. */
static void fill(struct tp_event *e, uint64_t seq)
{
	unsigned i;

	e->start = seq;
	e->end = seq * 3 + 1;
	e->api = (uint16_t)seq;
	e->ret = (int32_t)(seq ^ 0x5a5a5a5a);
	e->stream = ~seq;
	for (i = 0; i < 5; i++)
		e->a.raw[i] = seq * (i + 7);
	e->stack = (uint32_t)(seq * 13);
}

static int consistent(const struct tp_event *e)
{
	uint64_t seq = e->start;
	unsigned i;

	if (e->end != seq * 3 + 1 || e->api != (uint16_t)seq ||
	    e->ret != (int32_t)(seq ^ 0x5a5a5a5a) || e->stream != ~seq)
		return 0;
	for (i = 0; i < 5; i++)
		if (e->a.raw[i] != seq * (i + 7))
			return 0;
	return e->stack == (uint32_t)(seq * 13);
}

static void *producer(void *arg)
{
	struct pair *p = arg;
	uint64_t seq = 0;

	while (seq < PER_PRODUCER) {
		struct tp_event *e = tp_ring_reserve(&p->ring);

		if (!e) {
			/* Full: undo the drop count and retry, so this
			 * test sees every record (drops are tested below). */
			p->ring.dropped--;
			continue;
		}
		fill(e, seq++);
		tp_ring_commit(&p->ring);
	}
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *consumer(void *arg)
{
	struct pair *p = arg;
	uint64_t expect = 0;

	for (;;) {
		int done = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
		const struct tp_event *e;

		while ((e = tp_ring_peek(&p->ring))) {
			if (!consistent(e))
				p->torn++;
			if (e->start != expect)
				p->out_of_order++;
			expect = e->start + 1;
			p->got++;
			tp_ring_pop(&p->ring);
		}
		if (done && !tp_ring_peek(&p->ring))
			return NULL;
	}
}

static void test_concurrent(void)
{
	struct pair *p = calloc(PRODUCERS, sizeof(*p));
	pthread_t prod[PRODUCERS], cons[PRODUCERS];
	uint64_t got = 0, torn = 0, order = 0;
	int i;

	for (i = 0; i < PRODUCERS; i++) {
		tp_ring_init(&p[i].ring, 64 * 1024);	/* small: wraps often */
		pthread_create(&prod[i], NULL, producer, &p[i]);
		pthread_create(&cons[i], NULL, consumer, &p[i]);
	}
	for (i = 0; i < PRODUCERS; i++) {
		pthread_join(prod[i], NULL);
		pthread_join(cons[i], NULL);
		got += p[i].got;
		torn += p[i].torn;
		order += p[i].out_of_order;
		tp_ring_destroy(&p[i].ring);
	}
	TP_CHECK_INT("ring: 8 producer/consumer pairs deliver every record",
		     got, (uint64_t)PRODUCERS * PER_PRODUCER);
	TP_CHECK_INT("ring: no torn record", torn, 0);
	TP_CHECK_INT("ring: records arrive in order", order, 0);
	free(p);
}

static void test_drops(void)
{
	struct tp_ring r;
	size_t cap, i, stored = 0;

	tp_ring_init(&r, 16 * sizeof(struct tp_event));
	cap = tp_ring_capacity(&r);
	TP_CHECK_INT("ring: capacity is the largest power of two that fits",
		     cap, 16);
	for (i = 0; i < 100; i++) {
		struct tp_event *e = tp_ring_reserve(&r);

		if (!e)
			continue;
		fill(e, i);
		tp_ring_commit(&r);
		stored++;
	}
	TP_CHECK_INT("ring: a full ring keeps exactly its capacity", stored,
		     16);
	TP_CHECK_INT("ring: every refused event is counted", tp_ring_dropped(&r),
		     84);
	/* The oldest are kept, the newest dropped. */
	TP_CHECK_INT("ring: the oldest record is kept",
		     tp_ring_peek(&r)->start, 0);
	for (i = 0; i < 4; i++)
		tp_ring_pop(&r);
	for (i = 0; i < 10; i++) {
		struct tp_event *e = tp_ring_reserve(&r);

		if (!e)
			continue;
		fill(e, 1000 + i);
		tp_ring_commit(&r);
	}
	TP_CHECK_INT("ring: freed slots are reused, the rest counted",
		     tp_ring_dropped(&r), 84 + 6);
	tp_ring_destroy(&r);
}

/* A record with extension slots: all of it fits or none of it is taken,
 * and it may wrap around the end of the array. */
static void test_extension(void)
{
	struct tp_ring r;
	struct tp_event *e;
	unsigned i, wrapped_ok = 1;

	tp_ring_init(&r, 16 * sizeof(struct tp_event));
	for (i = 0; i < 13; i++) {		/* head and tail at 13 */
		tp_ring_reserve(&r);
		tp_ring_commit(&r);
		tp_ring_pop(&r);
	}
	e = tp_ring_reserve_n(&r, 6);
	TP_CHECK("ring: 1+5 slots reserved across the end", e != NULL, "no");
	if (!e)
		goto out;
	for (i = 0; i < 6; i++)
		tp_ring_slot(&r, i)->start = 100 + i;
	tp_ring_commit_n(&r, 6);
	TP_CHECK_INT("ring: the record starts at slot 13",
		     (long)(e - r.slots), 13);
	TP_CHECK_INT("ring: its extension wraps to slot 0",
		     r.slots[0].start, 103);
	for (i = 0; i < 6; i++)
		if (tp_ring_tail_slot(&r, i)->start != 100 + i)
			wrapped_ok = 0;
	TP_CHECK("ring: the consumer reads the slots in order", wrapped_ok, "no");
	TP_CHECK("ring: 11 more slots do not fit in 10", tp_ring_reserve_n(&r, 11) == NULL, "no");
	TP_CHECK_INT("ring: the refused record counts as one drop",
		     tp_ring_dropped(&r), 1);
	TP_CHECK("ring: 10 slots fit", tp_ring_reserve_n(&r, 10) != NULL, "no");
	tp_ring_commit_n(&r, 10);
	TP_CHECK("ring: then nothing does", tp_ring_reserve(&r) == NULL, "no");
	tp_ring_pop_n(&r, 6);
	TP_CHECK("ring: popping the record frees all its slots", tp_ring_reserve_n(&r, 6) != NULL, "no");
out:
	tp_ring_destroy(&r);
}

static unsigned wakes;

static void count_wake(void)
{
	wakes++;
}

static void put(struct tp_ring *r, unsigned n)
{
	while (n--) {
		if (tp_ring_reserve(r))
			tp_ring_commit(r);
	}
}

/* The writer is woken when a ring passes half full, once per position of
 * its tail, never per event, and not at all below the mark. */
static void test_wake(void)
{
	struct tp_ring r;

	tp_ring_init(&r, 16 * sizeof(struct tp_event));
	tp_ring_wake_fn = count_wake;
	put(&r, 8);
	TP_CHECK_INT("ring wake: not below half full", wakes, 0);
	put(&r, 1);
	TP_CHECK_INT("ring wake: once past half full", wakes, 1);
	put(&r, 7 + 50);
	TP_CHECK_INT("ring wake: not again while full (same tail)", wakes, 1);
	TP_CHECK_INT("ring wake: the drops still counted", tp_ring_dropped(&r),
		     50);
	tp_ring_pop_n(&r, 12);
	put(&r, 4);
	TP_CHECK_INT("ring wake: no wake at 8 of 16 after the tail moved",
		     wakes, 1);
	put(&r, 1);
	TP_CHECK_INT("ring wake: again past half with a new tail", wakes, 2);
	tp_ring_wake_fn = NULL;
	tp_ring_destroy(&r);
}

/* A held ring (the rings file): slots read go back to the producer only
 * at tp_ring_publish, so nothing read since the last sync is overwritten;
 * a full ring still drops the newest and counts it. */
static void test_hold(void)
{
	struct tp_ring r;
	uint64_t head;

	tp_ring_init(&r, 16 * sizeof(struct tp_event));
	r.hold = 1;
	put(&r, 16);
	head = tp_ring_head(&r);
	tp_ring_release(&r, head);
	TP_CHECK_INT("ring hold: read position moves", r.rd, 16);
	TP_CHECK_INT("ring hold: tail does not before a sync", r.tail, 0);
	put(&r, 3);
	TP_CHECK_INT("ring hold: read slots are not reused: drops counted",
		     tp_ring_dropped(&r), 3);
	TP_CHECK_INT("ring hold: nothing written over", tp_ring_head(&r), 16);
	tp_ring_publish(&r);
	TP_CHECK_INT("ring hold: the sync gives them back", r.tail, 16);
	put(&r, 3);
	TP_CHECK_INT("ring hold: then the producer writes again",
		     tp_ring_head(&r), 19);
	TP_CHECK_INT("ring hold: no more drops", tp_ring_dropped(&r), 3);
	tp_ring_destroy(&r);
}

int main(void)
{
	test_wake();
	test_hold();
	test_concurrent();
	test_drops();
	test_extension();
	return TP_TEST_DONE();
}
