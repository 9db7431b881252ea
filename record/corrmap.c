/* record/: the recording core: records, per-thread rings, threads,
 * drops, the clock, the rings file; on files/ .. util/. */
#include <stdlib.h>

#include "corrmap.h"

static struct tp_corr *slots;
static int failed;
static uint32_t lowest_kept;

void tp_corr_note(uint32_t corr, uint32_t tid, int64_t ts_ns, int kept)
{
	struct tp_corr *c;

	if (!slots && !failed) {
		slots = calloc(TP_CORR_SLOTS, sizeof(*slots));
		failed = !slots;
	}
	if (!slots || !corr)
		return;
	c = &slots[corr & (TP_CORR_SLOTS - 1)];
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
	c = &slots[corr & (TP_CORR_SLOTS - 1)];
	return c->corr == corr ? c : NULL;
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
	failed = 0;
}
