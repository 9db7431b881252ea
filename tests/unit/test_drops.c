/* The drop path of a recording thread (tp_rec_at on a full ring): every
 * dropped call counted in its ring and under its API with its duration's
 * bucket, exactly, through the log and its folds (runs of one API,
 * alternating APIs, more APIs than slots, a duration of days, both
 * sides of every power of two); the writer
 * woken once per position of the tail; a record fits again as soon as the
 * tail moves. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "trace/config.h"
#include "trace/hist.h"
#include "trace/thread.h"
#include "tp_test.h"

#define SLOTS 16
#define API_A 7
#define API_B 300

static unsigned wakes;
static uint64_t want_a[TP_HIST_BUCKETS], want_b[TP_HIST_BUCKETS];
static uint64_t n_a, n_b;

static void count_wake(void)
{
	wakes++;
}

/* One call of api lasting ticks; 1 when recorded, 0 when dropped. */
static int call(uint16_t api, uint64_t ticks)
{
	struct tp_event *e;
	struct tp_rec r;

	if (!tp_rec_begin(&r, TP_SRC_CUDA))
		return -1;
	r.t0 = 1000;
	e = tp_rec_at(&r, api, 0, 0, 1000 + ticks);
	if (!e)
		return 0;
	tp_rec_commit(&r);
	return 1;
}

static void drop(uint16_t api, uint64_t ticks)
{
	if (call(api, ticks) != 0)
		return;
	if (api == API_A) {
		want_a[tp_hist_bucket(ticks)]++;
		n_a++;
	} else if (api == API_B) {
		want_b[tp_hist_bucket(ticks)]++;
		n_b++;
	}
}

static const struct tp_drop_slot *slot_of(const struct tp_drops *d,
					  uint16_t api)
{
	unsigned i;

	for (i = 0; i < d->n; i++)
		if (d->slot[i].api == api)
			return &d->slot[i];
	return NULL;
}

static unsigned bucket_mismatches(const struct tp_drop_slot *s,
				  const uint64_t *want)
{
	unsigned b, bad = 0;

	for (b = 0; b < TP_HIST_BUCKETS; b++)
		bad += s->bucket[b] != want[b];
	return bad;
}

static void *run(void *arg)
{
	struct tp_thread *t;
	struct tp_drops *d;
	const struct tp_drop_slot *a, *b;
	unsigned i, recorded = 0, extra = 0;
	uint64_t head;

	(void)arg;
	for (i = 0; i < SLOTS; i++)
		recorded += call(API_A, 5) == 1;
	TP_CHECK_INT("drops: the ring takes its 16 slots", recorded, SLOTS);
	t = tp_self;
	head = t->ring.head;
	/* A run of one API longer than the log, then runs of alternating
	 * APIs, durations over many buckets. */
	for (i = 0; i < 1000; i++)
		drop(API_A, (i * 7919u) % 100000 + 1);
	for (i = 0; i < 700; i++)
		drop(i % 3 ? API_A : API_B, (uint64_t)i * i + 3);
	/* A duration of 2^50 ticks (days): its bucket all the same. */
	drop(API_B, 1ull << 50);
	/* More APIs than slots: the last ones under "other". */
	for (i = 0; i < 40; i++)
		extra += call((uint16_t)(1000 + i), 10) == 0;
	TP_CHECK_INT("drops: nothing past the full ring was recorded",
		     t->ring.head, head);
	TP_CHECK_INT("drops: every drop counted in the ring",
		     tp_ring_dropped(&t->ring), n_a + n_b + extra);
	/* At half full; not again while full with the same tail. */
	TP_CHECK_INT("drops: the writer woken once for one tail", wakes, 1);
	d = t->drops;
	if (!d) {
		TP_CHECK("drops: the per-API table exists", 0, "none");
		return NULL;
	}
	tp_drops_fold(t);
	TP_CHECK_INT("drops: the log is empty after a fold",
		     t->drop_pos == d->log, 1);
	a = slot_of(d, API_A);
	b = slot_of(d, API_B);
	TP_CHECK("drops: a slot for each API", a && b, "missing");
	if (a && b) {
		TP_CHECK_INT("drops: API A's count", tp_drop_slot_count(a), n_a);
		TP_CHECK_INT("drops: API B's count", tp_drop_slot_count(b), n_b);
		TP_CHECK_INT("drops: API A's durations, bucket by bucket",
			     bucket_mismatches(a, want_a), 0);
		TP_CHECK_INT("drops: API B's durations, bucket by bucket",
			     bucket_mismatches(b, want_b), 0);
	}
	TP_CHECK_INT("drops: all 32 slots used", d->n, TP_DROP_SLOTS);
	TP_CHECK_INT("drops: the APIs past the slots counted as other",
		     d->other, 40 - (TP_DROP_SLOTS - 2));
	/* The writer frees 4 slots: the next call is recorded, at once. */
	__atomic_store_n(&t->ring.tail, t->ring.tail + 4, __ATOMIC_RELEASE);
	TP_CHECK_INT("drops: a call fits again once the tail moved",
		     call(API_A, 9), 1);
	TP_CHECK_INT("drops: and was not counted as a drop",
		     tp_ring_dropped(&t->ring), n_a + n_b + extra);
	for (i = 0; i < 4; i++)
		call(API_A, 9);
	TP_CHECK_INT("drops: past the mark at a new tail: woken once more, not per drop",
		     wakes, 2);
	return NULL;
}

/* On a thread of its own (its own drop table, its groups not shared
 * with run's): both sides of every power of two a log word holds (the
 * fold buckets them from a double's bits), and the first past them. */
static void *run_powers(void *arg)
{
	const struct tp_drop_slot *a;
	unsigned i;

	(void)arg;
	memset(want_a, 0, sizeof(want_a));
	n_a = 0;
	for (i = 0; i < SLOTS; i++)
		call(API_A, 5);
	for (i = 4; i < 48; i++) {
		drop(API_A, (1ull << i) - 1);
		drop(API_A, 1ull << i);
		drop(API_A, (1ull << i) + 1);
		drop(API_A, (3ull << (i - 1)) + 7);
	}
	drop(API_A, (1ull << 48) - 1);
	drop(API_A, 1ull << 48);
	for (i = 0; i < 16; i++)
		drop(API_A, i);
	TP_CHECK_INT("drops: every power of two dropped", n_a, 44 * 4 + 2 + 16);
	if (!tp_self->drops)
		return NULL;
	tp_drops_fold(tp_self);
	a = slot_of(tp_self->drops, API_A);
	TP_CHECK("drops: powers of two: a slot", a != NULL, "missing");
	if (!a)
		return NULL;
	TP_CHECK_INT("drops: powers of two: count", tp_drop_slot_count(a), n_a);
	TP_CHECK_INT("drops: powers of two: bucket by bucket",
		     bucket_mismatches(a, want_a), 0);
	TP_CHECK_INT("drops: powers of two: none counted as other",
		     tp_self->drops->other, 0);
	return NULL;
}

int main(void)
{
	pthread_t th;

	tp_clock_init();
	tp_thread_set_ring_bytes(SLOTS * sizeof(struct tp_event));
	tp_ring_wake_fn = count_wake;
	tp_recording = TP_SRC_ALL;
	if (pthread_create(&th, NULL, run, NULL))
		return 1;
	pthread_join(th, NULL);
	if (pthread_create(&th, NULL, run_powers, NULL))
		return 1;
	pthread_join(th, NULL);
	return TP_TEST_DONE();
}
