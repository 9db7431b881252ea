/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* CUPTI 13.3 and later let several subscribers coexist: tprof subscribes
 * with cuptiSubscribe_v2 and allowMultipleSubscribers = 1, and its
 * activity calls go to its own subscriber, so the program's own
 * profiler (torch.profiler's Kineto, with the v1 calls, is CUPTI's
 * default subscriber) keeps its callbacks, kinds, buffers and clock, and
 * both get every record. Nothing is handed over (handover.c).
 *
 * The per-subscriber calls replace the process-wide ones in tp_cupti,
 * through the trampolines below, so collection, buffers and finish use
 * the table as before. Not per subscriber: cuptiActivityFlushAll
 * (every subscriber's buffers, with the same flag), and before 13.4 the
 * timestamp callback (process-wide cuptiActivityRegisterTimestampCallback;
 * from 13.4 the attribute CUPTI_ACTIVITY_ATTR_TIMESTAMP_CALLBACK per
 * subscriber). On 13.3 tprof registers none and maps CUPTI's clock per
 * batch; a client that registers one there changes the unit of tprof's
 * records, so tprof hands over then, as with one subscriber.
 *
 * Prototypes from the CUPTI 13.5.25 headers (nvidia-cuda-cupti wheel,
 * CUPTI_API_VERSION 130500), types in v2types.h.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "record/clock.h"
#include "clockmap.h"
#include "collect.h"
#include "v2types.h"

typedef void (CUPTIAPI *request_v2_fn)(uint8_t **, size_t *, size_t *,
				       struct tp_request_info *);
typedef void (CUPTIAPI *complete_v2_fn)(uint8_t *, size_t, size_t,
					struct tp_complete_info *);

static struct {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc,
				 void *, struct tp_sub_params *);
	CUptiResult (*enable)(CUpti_SubscriberHandle, CUpti_ActivityKind,
			      void *);
	CUptiResult (*disable)(CUpti_SubscriberHandle, CUpti_ActivityKind,
			       void *);
	CUptiResult (*register_callbacks)(CUpti_SubscriberHandle,
					  request_v2_fn, complete_v2_fn);
	CUptiResult (*next_record)(CUpti_SubscriberHandle, uint8_t *, size_t,
				   CUpti_Activity **);
	CUptiResult (*dropped)(CUpti_SubscriberHandle, CUcontext, uint32_t,
			       size_t *);
	CUptiResult (*set_attribute)(CUpti_SubscriberHandle,
				     CUpti_ActivityAttribute, size_t *, void *);
	CUptiResult (*timestamp)(CUpti_SubscriberHandle, uint64_t *);
	/* tprof's own buffer callbacks, called through the v2 ones */
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
} V;

#define SYM(field, name)                                                 \
	do {                                                             \
		*(void **)&V.field = dlsym(tp_cupti_lib, name);          \
		if (!V.field)                                            \
			return -1;                                       \
	} while (0)

static int resolve(void)
{
	SYM(subscribe, "cuptiSubscribe_v2");
	SYM(enable, "cuptiActivityEnable_v2");
	SYM(disable, "cuptiActivityDisable_v2");
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks_v2");
	SYM(next_record, "cuptiActivityGetNextRecord_v2");
	SYM(dropped, "cuptiActivityGetNumDroppedRecords_v2");
	SYM(set_attribute, "cuptiActivitySetAttribute_v2");
	SYM(timestamp, "cuptiGetTimestamp_v2");
	return 0;
}

/* ---- the process-wide calls, made per subscriber ---- */

static CUptiResult CUPTIAPI enable(CUpti_ActivityKind k)
{
	return V.enable(tp_cs.sub, k, NULL);
}

static CUptiResult CUPTIAPI disable(CUpti_ActivityKind k)
{
	return V.disable(tp_cs.sub, k, NULL);
}

static void CUPTIAPI requested(uint8_t **b, size_t *size, size_t *max,
			       struct tp_request_info *info)
{
	(void)info;
	V.request(b, size, max);
}

/* The v2 completion names no context or stream: CUPTI 13's buffers are
 * per thread, and tprof's v1 callback ignores them but for the dropped
 * count, which is per subscriber here. */
static void CUPTIAPI completed(uint8_t *b, size_t size, size_t valid,
			       struct tp_complete_info *info)
{
	(void)info;
	V.complete(NULL, 0, b, size, valid);
}

static CUptiResult CUPTIAPI register_callbacks(
	CUpti_BuffersCallbackRequestFunc req,
	CUpti_BuffersCallbackCompleteFunc done)
{
	V.request = req;
	V.complete = done;
	return V.register_callbacks(tp_cs.sub, requested, completed);
}

/* From 13.4, the subscriber's own; 13.3 has only the process-wide one,
 * which the program's profiler may also set: none is registered. */
static CUptiResult CUPTIAPI register_timestamp(CUpti_TimestampCallbackFunc f)
{
	size_t len = sizeof(f);

	if (tp_cs.version < 130400)
		return CUPTI_ERROR_NOT_SUPPORTED;
	return V.set_attribute(tp_cs.sub, TP_ATTR_TIMESTAMP_CALLBACK, &len,
			       (void *)&f);
}

static CUptiResult CUPTIAPI next_record(uint8_t *b, size_t valid,
					CUpti_Activity **r)
{
	return V.next_record(tp_cs.sub, b, valid, r);
}

static CUptiResult CUPTIAPI dropped(CUcontext c, uint32_t s, size_t *n)
{
	return V.dropped(tp_cs.sub, c, s, n);
}

static CUptiResult CUPTIAPI set_attribute(CUpti_ActivityAttribute a,
					  size_t *len, void *v)
{
	return V.set_attribute(tp_cs.sub, a, len, v);
}

static CUptiResult CUPTIAPI timestamp(uint64_t *t)
{
	return V.timestamp(tp_cs.sub, t);
}

/* cuptiFinalize would end every subscriber's CUPTI, the program's
 * profiler's too: never called with several (finish.c lets go by
 * disabling instead). */
static CUptiResult CUPTIAPI no_finalize(void)
{
	return CUPTI_ERROR_NOT_SUPPORTED;
}

static void use_v2(void)
{
	tp_cupti.activity_enable = enable;
	tp_cupti.activity_disable = disable;
	tp_cupti.register_callbacks = register_callbacks;
	tp_cupti.register_timestamp = register_timestamp;
	tp_cupti.get_next_record = next_record;
	tp_cupti.get_num_dropped = dropped;
	tp_cupti.set_attribute = set_attribute;
	tp_cupti.get_timestamp = timestamp;
	tp_cupti.finalize = no_finalize;
}

/* CUPTI's clock against the hooks' ticks, sampled once more and then
 * kept before a client's process-wide timestamp callback (13.3) changes
 * CUPTI's unit: the records already in stay in the old one. */
void tp_cupti_clock_pin(void)
{
	tp_cclock_sample();
	tp_cclock_freeze();
}

int tp_cupti_multi_subscribe(CUpti_CallbackFunc cb, CUptiResult *r,
			     char *other, size_t olen)
{
	struct tp_sub_params p;

	*r = CUPTI_SUCCESS;
	if (tp_cs.version < 130300 || tp_cs.version > 139999 || resolve() < 0)
		return 0;
	memset(&p, 0, sizeof(p));
	p.structSize = TP_SUB_PARAMS_SIZE;
	p.subscriberName = "tprof";
	p.oldSubscriberName = other;
	p.oldSubscriberSize = olen;
	p.allowMultipleSubscribers = 1;
	if (olen)
		other[0] = '\0';
	*r = V.subscribe(&tp_cs.sub, cb, NULL, &p);
	if (*r != CUPTI_SUCCESS)
		return -1;
	tp_cs.multi = 1;
	use_v2();
	return 1;
}
