/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <stdlib.h>

#include "corrmap.h"

static struct tp_corr *slots;
static uint32_t size;		/* a power of two */
static int failed;
static uint32_t lowest_kept;

/* Every call kept in a table twice the size; where two land on one slot
 * (ids a whole table apart) the newer stays. Failing leaves it as it
 * was. */
static int grow(void)
{
	struct tp_corr *n = calloc((size_t)size * 2, sizeof(*n)), *d;
	uint32_t i;

	if (!n)
		return -1;
	for (i = 0; i < size; i++) {
		if (!slots[i].corr)
			continue;
		d = &n[slots[i].corr & (size * 2 - 1)];
		if (!d->corr || d->corr < slots[i].corr)
			*d = slots[i];
	}
	free(slots);
	slots = n;
	size *= 2;
	return 0;
}

/* The slot's call may still get GPU records: too recent, and none seen. */
static int still_wanted(const struct tp_corr *c, uint32_t corr,
			int64_t ts_ns)
{
	return c->corr && c->corr != corr && !c->flowed &&
	       ts_ns - c->ts_ns < TP_CORR_HOLD_NS;
}

void tp_corr_note(uint32_t corr, uint32_t tid, int64_t ts_ns, int kept)
{
	struct tp_corr *c;

	if (!slots && !failed) {
		slots = calloc(TP_CORR_SLOTS, sizeof(*slots));
		size = TP_CORR_SLOTS;
		failed = !slots;
	}
	if (!slots || !corr)
		return;
	c = &slots[corr & (size - 1)];
	while (still_wanted(c, corr, ts_ns) && size < TP_CORR_MAX_SLOTS &&
	       grow() == 0)
		c = &slots[corr & (size - 1)];
	c->corr = corr;
	c->tid = tid;
	c->ts_ns = ts_ns;
	c->flowed = 0;
	c->kept = (uint8_t)kept;
	if (kept && (!lowest_kept || corr < lowest_kept))
		lowest_kept = corr;
}

struct tp_corr *tp_corr_find(uint32_t corr)
{
	struct tp_corr *c;

	if (!slots || !corr)
		return NULL;
	c = &slots[corr & (size - 1)];
	return c->corr == corr ? c : NULL;
}

uint32_t tp_corr_slots(void)
{
	return slots ? size : 0;
}

uint32_t tp_corr_lowest_kept(void)
{
	return lowest_kept;
}

void tp_corr_reset(void)
{
	lowest_kept = 0;
	free(slots);
	slots = NULL;
	size = 0;
	failed = 0;
}
