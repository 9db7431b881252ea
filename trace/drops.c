/* trace/: the recording core: records, per-thread rings, threads, clock and
 * timeline, configuration, JSON and gzip, file naming; calls no other
 * folder. */
#include <stdlib.h>

#include "drops.h"
#include "thread.h"

void tp_drops_note(struct tp_thread *t, uint16_t api, uint64_t ticks)
{
	struct tp_drops *d = t->drops;
	unsigned i;

	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
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
	if (i == TP_DROP_SLOTS ||
	    tp_hist_add(&d->slot[i].ticks, ticks, 1) < 0)
		d->other++;
}

void tp_drops_free(struct tp_drops *d)
{
	unsigned i;

	if (!d)
		return;
	for (i = 0; i < d->n; i++)
		tp_hist_free(&d->slot[i].ticks);
	free(d);
}
