/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
#include <sys/mman.h>

#include "drops.h"
#include "thread.h"

/* tp_hist_add, with the groups taken from the block. */
static int add(struct tp_drops *d, struct tp_hist *h, uint64_t ticks)
{
	unsigned b = tp_hist_bucket(ticks);
	uint64_t **g = &h->group[b / TP_HIST_SUB];

	if (!*g) {
		if (d->groups_used == TP_DROP_GROUPS)
			return -1;
		*g = d->group[d->groups_used++];
	}
	(*g)[b % TP_HIST_SUB]++;
	h->count++;
	return 0;
}

static struct tp_drops *drops_map(struct tp_thread *t)
{
	struct tp_drops *d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (d == MAP_FAILED)
		return NULL;
	/* The writer reads it once the thread is gone or recording has
	 * stopped. */
	__atomic_store_n(&t->drops, d, __ATOMIC_RELEASE);
	return d;
}

/* The slot of api, a new one if there is room, else NULL. */
static struct tp_drop_slot *find_slot(struct tp_drops *d, uint16_t api)
{
	unsigned i;

	for (i = 0; i < d->n; i++)
		if (d->slot[i].api == api)
			break;
	if (i == d->n) {
		if (d->n == TP_DROP_SLOTS)
			return NULL;
		d->slot[d->n++].api = api;
	}
	d->last = i;
	return &d->slot[i];
}

static void add_one(struct tp_drops *d, uint16_t api, uint64_t ticks)
{
	struct tp_drop_slot *s = &d->slot[d->last];

	if (!d->n || s->api != api)
		s = find_slot(d, api);
	if (!s || add(d, &s->ticks, ticks) < 0)
		d->other++;
}

/* One run of drops of the same API (a thread that drops usually drops
 * the same call again): its slot looked up once, its count added once. */
static unsigned fold_run(struct tp_drops *d, unsigned i, unsigned n)
{
	uint16_t api = d->log_api[i];
	struct tp_drop_slot *s = &d->slot[d->last];
	uint64_t count = 0;

	if (!d->n || s->api != api)
		s = find_slot(d, api);
	if (!s) {
		for (; i < n && d->log_api[i] == api; i++)
			d->other++;
		return i;
	}
	for (; i < n && d->log_api[i] == api; i++) {
		uint64_t ticks = d->log_ticks[i];
		unsigned b = tp_hist_bucket(ticks);
		uint64_t *g = s->ticks.group[b / TP_HIST_SUB];

		if (__builtin_expect(!g, 0)) {
			if (add(d, &s->ticks, ticks) < 0)
				d->other++;
			continue;
		}
		g[b % TP_HIST_SUB]++;
		count++;
	}
	s->ticks.count += count;
	return i;
}

void tp_drops_fold(struct tp_drops *d)
{
	unsigned i = 0, n = d->nlog;

	while (i < n)
		i = fold_run(d, i, n);
	d->nlog = 0;
}

/* The log is full (every TP_DROP_LOG drops) or the block is not there
 * yet: folded, then this one added. */
static void __attribute__((noinline)) note_slow(struct tp_thread *t,
						uint16_t api, uint64_t ticks,
						uint64_t tail)
{
	struct tp_drops *d = t->drops;

	if (d || (d = drops_map(t))) {
		tp_drops_fold(d);
		add_one(d, api, ticks);
	}
	tp_ring_note_full(&t->ring, tail);
}

/* A leaf but for its tail calls: an append to the log. */
void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks,
		   uint64_t tail)
{
	struct tp_drops *d = t->drops;

	if (__builtin_expect(!d || d->nlog == TP_DROP_LOG, 0)) {
		note_slow(t, api, ticks, tail);
		return;
	}
	d->log_ticks[d->nlog] = ticks;
	d->log_api[d->nlog++] = api;
	tp_ring_note_full(&t->ring, tail);
}

void tp_drops_free(struct tp_drops *d)
{
	if (d)
		munmap(d, sizeof(*d));
}
