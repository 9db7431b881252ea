/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on util/ .. output/. */
/* GPU tracks: one per (device, stream), with its own sync and overhead
 * tracks, each holding the ops already placed on it so that a new op is
 * never written overlapping one of them.
 *
 * CUPTI delivers the records of one stream out of order when several
 * threads issue work to it (CUDA 13 keeps one activity buffer per thread),
 * and ops on one stream can really overlap (several threads waiting on
 * one stream; programmatic dependent launch). An op's times are never
 * altered to fit: one that overlaps an op of its track goes to the next
 * lane of that track ("stream 7 (2)"), so every track nests strictly.
 *
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
/* Lane k (1..TP_MAX_LANES) of a track: its tid with k in bits 24-27
 * (stream ids are far below 2^24). */
#define TP_LANE_SHIFT 24
#define TP_MAX_LANES 15

/* An op on a lane: [s, e) in ns from the trace base. */
struct tp_span {
	int64_t s, e;
};

struct tp_track {
	uint32_t pid, tid;	/* device (or our pid) and stream */
	uint32_t base_tid;	/* the tid of lane 0 */
	unsigned lane;
	int used;
	/* Placed ops, sorted, non-overlapping; the oldest are forgotten
	 * past TP_TRACK_SPANS. */
	struct tp_span *v;
	unsigned n, cap;
	int64_t horizon;	/* ops ending before it were forgotten */
};

#define TP_TRACK_SPANS 8192

/* The track, created on first use; NULL only when the table is full. */
struct tp_track *tp_track_get(uint32_t pid, uint32_t tid);
/* The first lane of (pid, tid) where [s, e) overlaps no op, the op
 * placed there; NULL when every lane is taken (or out of memory).
 * *late: the op is older than what the lane remembers. */
struct tp_track *tp_track_place(uint32_t pid, uint32_t tid, int64_t s,
				int64_t e, int *late);
/* Calls fn for every track, in no particular order. */
void tp_track_each(void (*fn)(const struct tp_track *t, void *arg), void *arg);
void tp_track_reset(void);

#endif
