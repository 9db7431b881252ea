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

void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks)
{
	struct tp_drops *d = t->drops;
	unsigned i;

	if (!d) {
		d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (d == MAP_FAILED)
			return;
		/* The writer reads it once the thread is gone or recording
		 * has stopped. */
		__atomic_store_n(&t->drops, d, __ATOMIC_RELEASE);
	}
	for (i = 0; i < d->n; i++)
		if (d->slot[i].api == api)
			break;
	if (i == d->n && d->n < TP_DROP_SLOTS)
		d->slot[d->n++].api = api;
	if (i == TP_DROP_SLOTS || add(d, &d->slot[i].ticks, ticks) < 0)
		d->other++;
}

void tp_drops_free(struct tp_drops *d)
{
	if (d)
		munmap(d, sizeof(*d));
}
