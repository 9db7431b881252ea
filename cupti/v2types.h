/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* The types of CUPTI 13.3+'s several subscribers that tprof uses, as the
 * CUPTI 13.5.25 headers define them (nvidia-cuda-cupti 13.5.25 wheel,
 * CUPTI_API_VERSION 130500: cupti_callbacks.h, cupti_activity.h). The
 * CUDA 13.0 toolkit tprof builds with declares a shorter
 * CUpti_SubscriberParams (no allowMultipleSubscribers) and none of the
 * v2 activity calls. `make test-cupti-layouts` compiles
 * tests/unit/cupti_v2_layout.c against this and against those headers,
 * and compares every offset and value. */
#ifndef TP_CUPTI_V2TYPES_H
#define TP_CUPTI_V2TYPES_H

#include <stddef.h>
#include <stdint.h>

/* CUpti_SubscriberParams */
struct tp_sub_params {
	size_t structSize;
	const char *subscriberName;
	char *oldSubscriberName;
	size_t oldSubscriberSize;
	uint8_t allowMultipleSubscribers;
	uint8_t padding[7];
};
/* CUpti_SubscriberParams_STRUCT_SIZE: up to the end of padding. */
#define TP_SUB_PARAMS_SIZE (offsetof(struct tp_sub_params, padding) + 7)

/* CUpti_BufferCallbackRequestInfo */
struct tp_request_info {
	size_t structSize;
};

/* CUpti_BufferCallbackCompleteInfo (the record layouts: user-defined
 * records, which tprof does not enable) */
struct tp_complete_info {
	size_t structSize;
	uint64_t threadId;
	void **ppRecordLayouts;
	size_t numRecordLayouts;
};

/* CUpti_ActivityAttribute values 13.0 lacks */
#define TP_ATTR_MULTIPLE_SUBSCRIBER_STATE 12
#define TP_ATTR_TIMESTAMP_CALLBACK 22

#endif
