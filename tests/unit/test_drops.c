/* What a full ring drops, by API (trace/drops.c): the drop path logs each
 * call and folds the log into the histograms when it fills or when the
 * summary reads it; every dropped call must land in its API's histogram
 * with its duration, whatever the log held when it was read. */
#include <string.h>

#include "trace/drops.h"
#include "trace/thread.h"
#include "tp_test.h"

/* The slot of api, or NULL. */
static struct tp_drop_slot *slot_of(struct tp_drops *d, uint16_t api)
{
	unsigned i;

	for (i = 0; i < d->n; i++)
		if (d->slot[i].api == api)
			return &d->slot[i];
	return NULL;
}

int main(void)
{
	static struct tp_thread t;
	struct tp_drop_slot *a, *b;
	struct tp_drops *d;
	unsigned long i, n = 3 * TP_DROP_LOG + 17;

	memset(&t, 0, sizeof(t));
	/* Two APIs by turns, API 7 lasting 100 ticks, API 9 5000: more than
	 * three logs' worth, so the log fills and folds three times and the
	 * rest is still logged when the reader folds it. */
	for (i = 0; i < n; i++)
		tp_drops_log(t.drops, &t, i % 2 ? 9 : 7, i % 2 ? 5000 : 100);
	d = t.drops;
	TP_CHECK("drops: block made at the first drop", d != NULL, "none");
	if (!d)
		return TP_TEST_DONE();
	TP_CHECK_INT("drops: the last partial log not yet folded", d->logged,
		     n - 3 * TP_DROP_LOG);
	tp_drops_fold(d);
	TP_CHECK_INT("drops: the fold empties the log", d->logged, 0);
	a = slot_of(d, 7);
	b = slot_of(d, 9);
	TP_CHECK("drops: one slot per API", d->n == 2 && a && b, "%u", d->n);
	if (!a || !b)
		return TP_TEST_DONE();
	TP_CHECK_INT("drops: API 7 counted", a->ticks.count, (n + 1) / 2);
	TP_CHECK_INT("drops: API 9 counted", b->ticks.count, n / 2);
	TP_CHECK_INT("drops: API 7 in its duration's bucket",
		     tp_hist_at(&a->ticks, tp_hist_bucket(100)), (n + 1) / 2);
	TP_CHECK_INT("drops: API 9 in its duration's bucket",
		     tp_hist_at(&b->ticks, tp_hist_bucket(5000)), n / 2);

	/* More APIs than slots: the rest is counted as other. */
	for (i = 0; i < TP_DROP_SLOTS + 5; i++)
		tp_drops_log(t.drops, &t, (uint16_t)(100 + i), 1);
	tp_drops_fold(d);
	TP_CHECK_INT("drops: slots full", d->n, TP_DROP_SLOTS);
	TP_CHECK_INT("drops: past the slots, counted as other", d->other,
		     7);
	tp_drops_free(d);
	return TP_TEST_DONE();
}
