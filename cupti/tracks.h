/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on trace/ .. output/. */
/* The tracks GPU records land on, for clamping and for their names.
 * Writer thread only. */
#ifndef TP_CUPTI_TRACKS_H
#define TP_CUPTI_TRACKS_H

#include <stdint.h>

#define TP_MAX_DEVICES 64

/* tids of tracks that are not streams: syncs wait on the CPU's behalf and
 * would overlap the stream's kernels, so they get tracks of their own. */
#define TP_SYNC_TID_BASE 0x40000000u
#define TP_SYNC_TID_DEVICE (TP_SYNC_TID_BASE | 0x3fffffffu)
#define TP_OVERHEAD_TID 0x7ffffff0u

struct tp_track {
	uint32_t pid, tid;	/* device (or our pid) and stream */
	int64_t last_end;	/* ns relative to the trace base */
	int used;
};

/* The track, created on first use; NULL only when the table is full. */
struct tp_track *tp_track_get(uint32_t pid, uint32_t tid);
/* Calls fn for every track, in no particular order. */
void tp_track_each(void (*fn)(const struct tp_track *t, void *arg), void *arg);
void tp_track_reset(void);

#endif
