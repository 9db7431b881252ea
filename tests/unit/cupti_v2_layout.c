/* The types of CUPTI 13.3+'s several subscribers: compiled with
 * -DREAL against the CUPTI 13.5 headers (CUPTI's own types and
 * prototypes), and without it against tprof's cupti/v2types.h; both
 * print the same lines or tprof's declarations are wrong
 * (tests/optional/test_cupti_layouts.py, `make test-cupti-layouts`). */
#include <stddef.h>
#include <stdio.h>

#ifdef REAL
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#define PARAMS CUpti_SubscriberParams
#define PARAMS_SIZE CUpti_SubscriberParams_STRUCT_SIZE
#define REQ CUpti_BufferCallbackRequestInfo
#define DONE CUpti_BufferCallbackCompleteInfo
#define ATTR_STATE CUPTI_ACTIVITY_ATTR_MULTIPLE_SUBSCRIBER_STATE
#define ATTR_TS CUPTI_ACTIVITY_ATTR_TIMESTAMP_CALLBACK
/* The prototypes cupti/multi.c calls through, with CUPTI's types
 * (tprof's differ only in the layout-equal structs checked below). */
#define SAME(fn, type)                                                   \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&fn), type), \
		       #fn)
SAME(cuptiSubscribe_v2, CUptiResult (*)(CUpti_SubscriberHandle *,
					CUpti_CallbackFunc, void *,
					CUpti_SubscriberParams *));
SAME(cuptiActivityEnable_v2, CUptiResult (*)(CUpti_SubscriberHandle,
					     CUpti_ActivityKind,
					     CUpti_ActivityConfig *));
SAME(cuptiActivityDisable_v2, CUptiResult (*)(CUpti_SubscriberHandle,
					      CUpti_ActivityKind,
					      CUpti_ActivityConfig *));
SAME(cuptiActivityRegisterCallbacks_v2,
     CUptiResult (*)(CUpti_SubscriberHandle,
		     CUpti_BuffersCallbackRequestFunc_v2,
		     CUpti_BuffersCallbackCompleteFunc_v2));
SAME(cuptiActivityGetNextRecord_v2,
     CUptiResult (*)(CUpti_SubscriberHandle, uint8_t *, size_t,
		     CUpti_Activity **));
SAME(cuptiActivityGetNumDroppedRecords_v2,
     CUptiResult (*)(CUpti_SubscriberHandle, CUcontext, uint32_t, size_t *));
SAME(cuptiActivitySetAttribute_v2,
     CUptiResult (*)(CUpti_SubscriberHandle, CUpti_ActivityAttribute,
		     size_t *, void *));
SAME(cuptiGetTimestamp_v2, CUptiResult (*)(CUpti_SubscriberHandle,
					   uint64_t *));
_Static_assert(__builtin_types_compatible_p(
		       CUpti_BuffersCallbackRequestFunc_v2,
		       void (*)(uint8_t **, size_t *, size_t *, REQ *)),
	       "request callback");
_Static_assert(__builtin_types_compatible_p(
		       CUpti_BuffersCallbackCompleteFunc_v2,
		       void (*)(uint8_t *, size_t, size_t, DONE *)),
	       "complete callback");
#else
#include "cupti/v2types.h"
#define PARAMS struct tp_sub_params
#define PARAMS_SIZE TP_SUB_PARAMS_SIZE
#define REQ struct tp_request_info
#define DONE struct tp_complete_info
#define ATTR_STATE TP_ATTR_MULTIPLE_SUBSCRIBER_STATE
#define ATTR_TS TP_ATTR_TIMESTAMP_CALLBACK
#endif

#define OFF(t, f) printf(#t "." #f " %zu %zu\n", offsetof(t, f), \
			 sizeof(((t *)0)->f))

int main(void)
{
	printf("params size %zu struct_size %zu\n", sizeof(PARAMS),
	       (size_t)PARAMS_SIZE);
	OFF(PARAMS, structSize);
	OFF(PARAMS, subscriberName);
	OFF(PARAMS, oldSubscriberName);
	OFF(PARAMS, oldSubscriberSize);
	OFF(PARAMS, allowMultipleSubscribers);
	printf("request info size %zu\n", sizeof(REQ));
	OFF(REQ, structSize);
	printf("complete info size %zu\n", sizeof(DONE));
	OFF(DONE, structSize);
	OFF(DONE, threadId);
	OFF(DONE, ppRecordLayouts);
	OFF(DONE, numRecordLayouts);
	printf("attr multiple_subscriber_state %d timestamp_callback %d\n",
	       (int)ATTR_STATE, (int)ATTR_TS);
	return 0;
}
