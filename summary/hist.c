/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on session/ and below, stacks/. */
/* The log-linear duration histogram; see hist.h. */
#include "hist.h"

#include <stdlib.h>

int tp_hist_add(struct tp_hist *h, uint64_t v, uint64_t n)
{
	unsigned b = tp_hist_bucket(v);
	uint64_t **g = &h->group[b / TP_HIST_SUB];

	if (!*g) {
		*g = calloc(TP_HIST_SUB, sizeof(**g));
		if (!*g)
			return -1;
	}
	(*g)[b % TP_HIST_SUB] += n;
	h->count += n;
	return 0;
}

uint64_t tp_hist_at(const struct tp_hist *h, unsigned b)
{
	const uint64_t *g;

	if (b >= TP_HIST_BUCKETS)
		return 0;
	g = h->group[b / TP_HIST_SUB];
	return g ? g[b % TP_HIST_SUB] : 0;
}

uint64_t tp_hist_percentile(const struct tp_hist *h, unsigned pct,
			    uint64_t lo, uint64_t hi)
{
	uint64_t rank, seen = 0, v;
	unsigned b;

	if (!h->count)
		return 0;
	/* In integers: 0.9 * 10 must be 9, not 9.000000000000002. */
	rank = (uint64_t)(((unsigned __int128)pct * h->count + 99) / 100);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < TP_HIST_BUCKETS; b++) {
		if (!h->group[b / TP_HIST_SUB]) {
			b += TP_HIST_SUB - 1;
			continue;
		}
		seen += tp_hist_at(h, b);
		if (seen >= rank)
			break;
	}
	if (b >= TP_HIST_BUCKETS)
		return hi;
	v = tp_hist_lower(b) + tp_hist_width(b) / 2;
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return v;
}

void tp_hist_merge(struct tp_hist *into, const struct tp_hist *from)
{
	unsigned b;

	for (b = 0; b < TP_HIST_BUCKETS; b++) {
		uint64_t n = tp_hist_at(from, b);

		if (n)
			tp_hist_add(into, tp_hist_lower(b), n);
	}
}

void tp_hist_free(struct tp_hist *h)
{
	unsigned i;

	for (i = 0; i < TP_HIST_GROUPS; i++)
		free(h->group[i]);
	h->count = 0;
}
