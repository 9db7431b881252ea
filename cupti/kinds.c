/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* The activity kinds tprof enables, and CUPTI's count of what it dropped. */
#include <stdio.h>
#include <string.h>

#include "session/session.h"
#include "collect.h"

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
	CUPTI_ACTIVITY_KIND_MEMORY2,
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static int enabled[N_KINDS];

/* DEVICE records are emitted at the driver's initialization, CONTEXT
 * records at each context's creation, to a CUPTI attached then with the
 * kind enabled (cupti_activity.h, cuptiActivityEnableAndDump). tprof may
 * start CUPTI after cuInit (a program whose first CUDA call tprof sees
 * comes after the driver was initialized): cuptiActivityEnableAndDump
 * also dumps the devices and contexts that exist, so GPUs are named and
 * kernels get occupancy. Its dump goes to the registered buffer
 * callbacks (registered before this). The v1 call acts on CUPTI's
 * default subscriber: not among several (13.3+), where tprof's is
 * another one. */
static CUptiResult enable(CUpti_ActivityKind k)
{
	if ((k == CUPTI_ACTIVITY_KIND_DEVICE ||
	     k == CUPTI_ACTIVITY_KIND_CONTEXT) && tp_cupti.enable_and_dump &&
	    !tp_cs.multi)
		return tp_cupti.enable_and_dump(k);
	return tp_cupti.activity_enable(k);
}

int tp_cupti_enable_kinds(void)
{
	CUptiResult r;
	unsigned i;

	for (i = 0; i < N_KINDS; i++) {
		if (kinds[i] == CUPTI_ACTIVITY_KIND_MEMORY2 &&
		    !(tp_sess.cfg.sources & TP_SRC_MEM))
			continue;
		r = enable(kinds[i]);
		enabled[i] = r == CUPTI_SUCCESS;
		if (r == CUPTI_SUCCESS ||
		    kinds[i] != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		tp_cupti_disable_kinds();
		snprintf(tp_cs.reason, sizeof(tp_cs.reason), "CUPTI cannot "
			 "record kernels (cuptiActivityEnable: %s)",
			 tp_cupti_result(r));
		return -1;
	}
	tp_cs.kinds_on = 1;
	return 0;
}

void tp_cupti_disable_kinds(void)
{
	unsigned i;

	for (i = 0; i < N_KINDS; i++)
		if (enabled[i])
			tp_cupti.activity_disable(kinds[i]);
	memset(enabled, 0, sizeof(enabled));
	tp_cs.kinds_on = 0;
}

/* Drops not yet reported with a buffer are counted only by asking. */
void tp_cupti_count_dropped(void)
{
	size_t dropped = 0;

	if (tp_cupti.get_num_dropped(NULL, 0, &dropped) != CUPTI_SUCCESS)
		return;
	pthread_mutex_lock(&tp_cs.lock);
	tp_cs.dropped += dropped;
	pthread_mutex_unlock(&tp_cs.lock);
}

/* Handing over: the kinds the other client enabled stay on. */
void tp_cupti_disable_kinds_except(const uint32_t *keep)
{
	unsigned i, k;

	for (i = 0; i < N_KINDS; i++) {
		k = (unsigned)kinds[i];
		if (!enabled[i] || (keep[k / 32] >> (k % 32) & 1))
			continue;
		tp_cupti.activity_disable(kinds[i]);
	}
	memset(enabled, 0, sizeof(enabled));
	tp_cs.kinds_on = 0;
}
