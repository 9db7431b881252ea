/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* What CUPTI tells of each device (DEVICE records) and which device each
 * context is on (CONTEXT records; sync records name only the context).
 * Writer thread only. */
#ifndef TP_CUPTI_DEVICES_H
#define TP_CUPTI_DEVICES_H

#include <stdint.h>

#include <cupti.h>

#include "encode/json.h"

struct tp_device {
	int known;
	char name[128];
	CUpti_ActivityDevice5 d;	/* name pointer not kept */
};

void tp_device_note(const CUpti_ActivityDevice5 *d);
const struct tp_device *tp_device_get(uint32_t id);
void tp_context_note(uint32_t context, uint32_t device);
/* The context's device, 0 when no CONTEXT record named it. */
uint32_t tp_context_device(uint32_t context);
/* Whether a CONTEXT record put a context on the device (it is used). */
int tp_device_used(uint32_t id);

/* Kineto's occupancy figures for a kernel on a known device: blocks and
 * warps per SM in thousandths, occupancy in percent. -1 when unknown. */
struct tp_occupancy {
	int64_t blocks_per_sm_milli;
	int64_t warps_per_sm_milli;
	int occupancy_pct;
};

int tp_occupancy(const CUpti_ActivityKernel10 *k, struct tp_occupancy *o);
void tp_devices_put_json(struct tp_buf *b);
void tp_devices_reset(void);

#endif
