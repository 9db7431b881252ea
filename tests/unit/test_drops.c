/* The drop path of a recording thread (tp_rec_at on a full ring): every
 * dropped call counted in its ring and under its API in its duration's
 * octave, with its ticks, exactly (runs of one API, alternating APIs,
 * more APIs than slots, a duration of days and past 2^63, both sides of
 * every power of two, 0); the writer woken once per position of the
 * tail; a record fits again as soon as the tail moves; a released block
 * is left alone and the next drop starts a new one from zero. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "record/thread.h"
#include "tp_test.h"

#define SLOTS 16
#define API_A 7
#define API_B 300

static unsigned wakes;
/* What each API should hold, octave by octave, from a reference octave
 * of its own (a loop, not a bit scan). */
struct want {
	uint64_t n[TP_DROP_OCTAVES];
	uint64_t ticks[TP_DROP_OCTAVES];
};
static struct want want_a, want_b;
static uint64_t n_a, n_b;

static unsigned octave_of(uint64_t ticks)
{
	unsigned o = 0;

	while (o < 63 && ticks >> (o + 1))
		o++;
	return o;
}

static void want_add(struct want *w, uint64_t ticks)
{
	w->n[octave_of(ticks)]++;
	w->ticks[octave_of(ticks)] += ticks;
}

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
		want_add(&want_a, ticks);
		n_a++;
	} else if (api == API_B) {
		want_add(&want_b, ticks);
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

static unsigned octave_mismatches(const struct tp_drop_slot *s,
				  const struct want *w)
{
	unsigned o, bad = 0;

	for (o = 0; o < TP_DROP_OCTAVES; o++)
		bad += s->n[o] != w->n[o] || s->ticks[o] != w->ticks[o];
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
	/* A duration of 2^50 ticks (days), and one past 2^63. */
	drop(API_B, 1ull << 50);
	drop(API_B, (1ull << 63) + 5);
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
	a = slot_of(d, API_A);
	b = slot_of(d, API_B);
	TP_CHECK("drops: a slot for each API", a && b, "missing");
	if (a && b) {
		TP_CHECK_INT("drops: API A's count", tp_drop_slot_count(a), n_a);
		TP_CHECK_INT("drops: API B's count", tp_drop_slot_count(b), n_b);
		TP_CHECK_INT("drops: API A's durations, octave by octave",
			     octave_mismatches(a, &want_a), 0);
		TP_CHECK_INT("drops: API B's durations, octave by octave",
			     octave_mismatches(b, &want_b), 0);
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

/* On a thread of its own (its own drop table): both sides of every
 * power of two, 0 and 1; then the block released as the writer does
 * once it has counted it, and the next drop. */
static void *run_powers(void *arg)
{
	const struct tp_drop_slot *a;
	struct tp_thread *t;
	struct tp_drops *old;
	unsigned i;

	(void)arg;
	memset(&want_a, 0, sizeof(want_a));
	n_a = 0;
	for (i = 0; i < SLOTS; i++)
		call(API_A, 5);
	t = tp_self;
	for (i = 1; i < 64; i++) {
		drop(API_A, (1ull << i) - 1);
		drop(API_A, 1ull << i);
		drop(API_A, (1ull << i) + 1);
		drop(API_A, (3ull << (i - 1)) + 7);
	}
	drop(API_A, 0);
	drop(API_A, ~0ull);
	TP_CHECK_INT("drops: every power of two dropped", n_a, 63 * 4 + 2);
	if (!t->drops)
		return NULL;
	a = slot_of(t->drops, API_A);
	TP_CHECK("drops: powers of two: a slot", a != NULL, "missing");
	if (!a)
		return NULL;
	TP_CHECK_INT("drops: powers of two: count", tp_drop_slot_count(a), n_a);
	TP_CHECK_INT("drops: powers of two: octave by octave",
		     octave_mismatches(a, &want_a), 0);
	TP_CHECK_INT("drops: 0 ticks in octave 0", a->n[0], want_a.n[0]);
	TP_CHECK_INT("drops: powers of two: none counted as other",
		     t->drops->other, 0);

	/* Counted: the writer lets the block go. A drop in flight could
	 * still add to it, so it stays mapped until the thread's next
	 * block. */
	old = t->drops;
	tp_drops_release(t);
	TP_CHECK_INT("drops: released: no block", t->drops == NULL, 1);
	TP_CHECK_INT("drops: released: kept until the next one",
		     t->drops_old == old, 1);
	TP_CHECK_INT("drops: released: untouched", tp_drop_slot_count(a), n_a);
	drop(API_A, 100);
	TP_CHECK("drops: the next drop maps a new block",
		 t->drops && t->drops != old, "none or the same");
	TP_CHECK_INT("drops: and frees the released one",
		     t->drops_old == NULL, 1);
	if (!t->drops)
		return NULL;
	a = slot_of(t->drops, API_A);
	TP_CHECK_INT("drops: a new block counts from zero",
		     a ? tp_drop_slot_count(a) : 0, 1);
	TP_CHECK_INT("drops: its ticks", a ? a->ticks[6] : 0, 100);
	return NULL;
}

/* The summary's split of an octave into whole ns at its mean. */
static void mean_split(void)
{
	uint64_t q, up;

	tp_drop_mean_split(1000, 3, &q, &up);
	TP_CHECK_INT("drops: 1000 ns over 3 calls: 333 ns each", q, 333);
	TP_CHECK_INT("drops: and one of them 334 (the total exact)", up, 1);
	TP_CHECK_INT("drops: 3 * 333 + 1", (3 - up) * q + up * (q + 1), 1000);
	tp_drop_mean_split(7, 7, &q, &up);
	TP_CHECK_INT("drops: an even split", q * 10 + up, 10);
	tp_drop_mean_split(~0ull, 2, &q, &up);
	TP_CHECK_INT("drops: the largest total", (2 - up) * q + up * (q + 1),
		     ~0ull);
}

int main(void)
{
	pthread_t th;

	mean_split();
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
