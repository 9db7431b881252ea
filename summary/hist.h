/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on session/ and below, stacks/. */
/* A fixed log-linear histogram of durations in nanoseconds.
 *
 * Bucket b < 32 holds exactly the value b. Above, each power of two
 * [2^e, 2^(e+1)) is split into 16 equal buckets, so a bucket is at most
 * 1/16 of its lower bound wide and a percentile read from it (its middle)
 * is within 1/32 of the true value. The layout is fixed, so histograms
 * from different processes add bucket by bucket (tprof report does).
 *
 * Buckets are kept in groups of 16 allocated on first use: a name whose
 * durations span three decades touches about ten groups (1.3 KiB).
 */
#ifndef TP_HIST_H
#define TP_HIST_H

#include <stdint.h>

#define TP_HIST_SUB 16
#define TP_HIST_GROUPS 61	/* every uint64_t */
#define TP_HIST_BUCKETS (TP_HIST_GROUPS * TP_HIST_SUB)

struct tp_hist {
	uint64_t count;
	uint64_t *group[TP_HIST_GROUPS];
};

static inline unsigned tp_hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < 2 * TP_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);	/* e >= 5 */
	return (e - 3) * TP_HIST_SUB + (unsigned)((v >> (e - 4)) & 15);
}

/* Smallest value in bucket b, and the bucket's width. */
static inline uint64_t tp_hist_lower(unsigned b)
{
	unsigned e;

	if (b < 2 * TP_HIST_SUB)
		return b;
	e = b / TP_HIST_SUB + 3;
	return (uint64_t)(TP_HIST_SUB + b % TP_HIST_SUB) << (e - 4);
}

static inline uint64_t tp_hist_width(unsigned b)
{
	if (b < 2 * TP_HIST_SUB)
		return 1;
	return 1ull << (b / TP_HIST_SUB - 1);
}

/* Returns -1 when a bucket group cannot be allocated (the value is then
 * not in the histogram; count stays consistent with the buckets). */
int tp_hist_add(struct tp_hist *h, uint64_t v, uint64_t n);
uint64_t tp_hist_at(const struct tp_hist *h, unsigned b);
/* The pct-th percentile (1..100) by nearest rank: the middle of the
 * bucket holding the ceil(pct/100 * count)-th smallest value, clamped to
 * [lo, hi] (the exact min and max). 0 when empty. */
uint64_t tp_hist_percentile(const struct tp_hist *h, unsigned pct,
			    uint64_t lo, uint64_t hi);
void tp_hist_merge(struct tp_hist *into, const struct tp_hist *from);
void tp_hist_free(struct tp_hist *h);

#endif
