/* cupti/: the CUPTI client: GPU activity, API callbacks, devices, GPU
 * tracks; on trace/ .. output/. */
/* CUPTI's own clock mapped to the trace's, for the records that carry it
 * (no timestamp callback of tprof's: CUPTI 12.6 Update 2 to 13.0.x, and
 * 13.3 among several subscribers).
 *
 * A pair is three reads: ticks, cuptiGetTimestamp, ticks. The CUPTI time
 * was taken somewhere between the two tick reads, so the pair is known
 * to within their distance, its bracket; a preemption, an interrupt or a
 * slow call in between widens it by as much. Each sample is the
 * narrowest of TP_CCLOCK_TRIES pairs. The samples of the last
 * TP_CCLOCK_WINDOW batches are fitted by a line (the offset from CUPTI's
 * clock to Unix time, as a function of CUPTI's time), weighted by their
 * brackets, so one batch moves nothing by itself and a rate that differs
 * from the ticks' (CUPTI's clock follows CLOCK_REALTIME, which NTP slews)
 * is followed; a sample whose bracket is far wider than the window's
 * narrowest is rejected, and counted. See docs/design/clocks-and-linking.md.
 */
#ifndef TP_CUPTI_CLOCKMAP_H
#define TP_CUPTI_CLOCKMAP_H

#include <stdint.h>

#include "record/clock.h"

#define TP_CCLOCK_TRIES 8
#define TP_CCLOCK_WINDOW 16

/* The line a batch is converted with: Unix ns of CUPTI time c is
 * c + off + slope * (c - ref). */
struct tp_cclock_line {
	int64_t ref;
	int64_t off;
	double slope;
	int ok;
};

struct tp_cclock_stats {
	uint64_t samples;	/* batches sampled */
	uint64_t rejected;	/* samples not used: bracket too wide */
	uint64_t widest_used_ns;	/* the widest bracket a fit used */
	uint64_t narrowest_ns;
};

/* Takes a sample (any thread); 0, or -1 when cuptiGetTimestamp failed
 * or the mapping is frozen. */
int tp_cclock_sample(void);
/* No sample is taken any more: CUPTI's unit is about to change (a
 * client's timestamp callback on 13.3); the records in stay in the
 * line as it is. */
void tp_cclock_freeze(void);
int tp_cclock_frozen(void);
/* The line through the window's samples, with the trace's tick mapping
 * (the writer's, once calibrated). */
void tp_cclock_line(const struct tp_clock_map *m, struct tp_cclock_line *l);
void tp_cclock_get_stats(const struct tp_clock_map *m,
			 struct tp_cclock_stats *s);
void tp_cclock_reset(void);

static inline int64_t tp_cclock_unix(const struct tp_cclock_line *l,
				     uint64_t c)
{
	double d = (double)(int64_t)(c - (uint64_t)l->ref) * l->slope;

	return (int64_t)c + l->off + (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

#endif
