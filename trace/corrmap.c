#include <stdlib.h>

#include "corrmap.h"

static struct tp_corr *slots;
static int failed;

void tp_corr_note(uint32_t corr, uint32_t tid, int64_t ts_ns)
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
}

struct tp_corr *tp_corr_find(uint32_t corr)
{
	struct tp_corr *c;

	if (!slots || !corr)
		return NULL;
	c = &slots[corr & (TP_CORR_SLOTS - 1)];
	return c->corr == corr ? c : NULL;
}

void tp_corr_reset(void)
{
	free(slots);
	slots = NULL;
	failed = 0;
}
