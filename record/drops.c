/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <sys/mman.h>

#include "drops.h"
#include "thread.h"

struct tp_drop_slot *tp_drops_none[TP_DROP_APIS];

static void drops_unmap(struct tp_drops *d)
{
	if (d)
		munmap(d, sizeof(*d));
}

/* The thread's first drop since its block was released: a new block.
 * The released one is the thread's to free now: no drop of its own is
 * in flight on it any more. */
static struct tp_drops *drops_map(struct tp_thread *t)
{
	struct tp_drops *d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (d == MAP_FAILED)
		return NULL;
	drops_unmap(t->drops_old);
	t->drops_old = NULL;
	__atomic_store_n(&t->drop_of, d->of, __ATOMIC_RELAXED);
	/* The writer reads it once the thread is gone or recording has
	 * stopped. */
	__atomic_store_n(&t->drops, d, __ATOMIC_RELEASE);
	return d;
}

/* The slot of api, a new one if there is room, else NULL. */
static struct tp_drop_slot *take_slot(struct tp_drops *d, uint16_t api)
{
	struct tp_drop_slot *s;

	if (d->n == TP_DROP_SLOTS)
		return NULL;
	s = &d->slot[d->n++];
	s->api = api;
	d->of[api] = s;
	return s;
}

/* Under its API in t's block (one mapped at the thread's first drop). */
static void count_api(struct tp_thread *t, uint16_t api, uint64_t ticks)
{
	/* Acquire: a NULL the writer stored (tp_drops_release) comes with
	 * its drops_old, which drops_map frees. */
	struct tp_drops *d = __atomic_load_n(&t->drops, __ATOMIC_ACQUIRE);
	struct tp_drop_slot *s;

	api &= TP_DROP_APIS - 1;
	if (!d && !(d = drops_map(t)))
		return;		/* no memory: counted in the ring only */
	s = d->of[api];
	if (!s)
		s = take_slot(d, api);
	if (s)
		tp_drop_add(s, ticks);
	else
		d->other++;
}

void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks,
		   uint64_t tail)
{
	count_api(t, api, ticks);
	tp_ring_note_full(&t->ring, tail);
}

void tp_drops_count(struct tp_thread *t, uint16_t api, uint64_t ticks)
{
	count_api(t, api, ticks);
	tp_ring_count_drop(&t->ring);
}

/* No room at the first look at this tail, ring or spill: from now on
 * drops at this tail are counted inline (tp_rec_full). */
struct tp_event *tp_rec_full_slow(struct tp_thread *t, uint16_t api,
				  uint64_t ticks, unsigned n)
{
	struct tp_ring *r = &t->ring;
	struct tp_event *e = tp_ring_take(r, n);

	if (e)
		return e;
	r->drop_tail = r->tail_cache;
	tp_drops_note(t, api, ticks, r->tail_cache);
	return NULL;
}

/* Only the writer calls it, and only once per block: drops is NULL
 * until t maps the next, and t is done with drops_old by then (acquire:
 * t's release store of the new block). A drop in flight on t may still
 * add to the block it read: it stays mapped as drops_old. */
void tp_drops_release(struct tp_thread *t)
{
	struct tp_drops *d = __atomic_load_n(&t->drops, __ATOMIC_ACQUIRE);

	if (!d)
		return;
	__atomic_store_n(&t->drop_of, tp_drops_none, __ATOMIC_RELAXED);
	__atomic_store_n(&t->drops, NULL, __ATOMIC_RELEASE);
	drops_unmap(t->drops_old);
	t->drops_old = d;
}

void tp_drops_free(struct tp_thread *t)
{
	drops_unmap(t->drops);
	drops_unmap(t->drops_old);
	t->drops = NULL;
	t->drops_old = NULL;
	t->drop_of = tp_drops_none;
}

uint64_t tp_drop_slot_count(const struct tp_drop_slot *s)
{
	uint64_t n = 0;
	unsigned o;

	for (o = 0; o < TP_DROP_OCTAVES; o++)
		n += s->n[o];
	return n;
}
