/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
#include <sys/mman.h>

#include "drops.h"
#include "thread.h"

static struct tp_drops *drops_map(struct tp_thread *t)
{
	struct tp_drops *d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (d == MAP_FAILED)
		return NULL;
	t->drop_pos = d->log;
	t->drop_end = d->log + TP_DROP_LOG;
	/* The writer reads it once the thread is gone or recording has
	 * stopped. */
	__atomic_store_n(&t->drops, d, __ATOMIC_RELEASE);
	return d;
}

/* The slot of api, a new one if there is room, else NULL. */
static struct tp_drop_slot *find_slot(struct tp_drops *d, uint16_t api)
{
	if (!d->slot_of[api]) {
		if (d->n == TP_DROP_SLOTS)
			return NULL;
		d->slot[d->n].api = api;
		d->slot_of[api] = (uint8_t)++d->n;
	}
	return &d->slot[d->slot_of[api] - 1];
}

static void add_one(struct tp_drops *d, uint16_t api, uint64_t ticks)
{
	struct tp_drop_slot *s = find_slot(d, api);

	if (!s) {
		d->other++;
		return;
	}
	s->bucket[tp_hist_bucket(ticks)]++;
}

/* tp_hist_bucket for a logged duration (below 2^48 ticks, so exact as
 * a double): from 16 on, the double's exponent and its top four
 * mantissa bits are the bucket, (e - 3) * 16 + those bits, one
 * conversion instead of a bit scan and a variable shift. */
static inline unsigned log_bucket(uint64_t v)
{
	union {
		double f;
		uint64_t u;
	} x;

	if (v < TP_HIST_SUB)
		return (unsigned)v;
	x.f = (double)(int64_t)v;
	return (unsigned)(x.u >> 48) - ((1023u + 3u) << 4);
}

void tp_drops_fold(struct tp_thread *t)
{
	struct tp_drops *d = t->drops;
	const uint64_t *p, *end = t->drop_pos;

	if (!d)
		return;
	for (p = d->log; p < end; p++) {
		uint16_t api = (uint16_t)*p;
		uint64_t ticks = *p >> TP_DROP_TICKS_SHIFT;
		unsigned si = d->slot_of[api];

		if (__builtin_expect(!si, 0)) {
			add_one(d, api, ticks);
			continue;
		}
		d->slot[si - 1].bucket[log_bucket(ticks)]++;
	}
	t->drop_pos = d->log;
}

/* The log is full (every TP_DROP_LOG drops), the block is not there yet
 * or the duration does not fit a word: folded, then this one added. */
static void __attribute__((noinline)) note_slow(struct tp_thread *t,
						uint16_t api, uint64_t ticks,
						uint64_t tail)
{
	struct tp_drops *d = t->drops;

	if (d || (d = drops_map(t))) {
		tp_drops_fold(t);
		add_one(d, api, ticks);
	}
	tp_ring_note_full(&t->ring, tail);
}

/* A leaf but for its tail calls: an append to the log. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks,
		   uint64_t tail)
{
	uint64_t *p = t->drop_pos;

	if (__builtin_expect(p == t->drop_end || ticks >= TP_DROP_TICKS_MAX,
			     0)) {
		note_slow(t, api, ticks, tail);
		return;
	}
	*p = tp_drop_word(api, ticks);
	t->drop_pos = p + 1;
	tp_ring_note_full(&t->ring, tail);
}

void tp_drops_release(struct tp_thread *t)
{
	struct tp_drops *d = t->drops;

	t->drop_pos = NULL;
	t->drop_end = NULL;
	__atomic_store_n(&t->drops, NULL, __ATOMIC_RELEASE);
	tp_drops_free(d);
}

uint64_t tp_drop_slot_count(const struct tp_drop_slot *s)
{
	uint64_t n = 0;
	unsigned b;

	for (b = 0; b < TP_HIST_BUCKETS; b++)
		n += s->bucket[b];
	return n;
}

void tp_drops_free(struct tp_drops *d)
{
	if (d)
		munmap(d, sizeof(*d));
}
