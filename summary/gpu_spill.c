/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The GPU analyses' exact mode (gpu_int.h): its external sorts, each
 * made on first use with a quarter of the budget, and the first failure
 * kept (the "gpu" member is then null, and the CLI says why). A leaf
 * below gpu_feed.c, gpu_sweep.c and gpu_join.c: it calls only the
 * external sort.
 */
#include <stdio.h>

#include "gpu_int.h"

const char *tp_gpu_error(const struct tp_gpu *g)
{
	return g->sp.err[0] ? g->sp.err : NULL;
}

void tp_gpu_sort_failed(struct tp_gpu *g, const struct tp_xsort *s)
{
	const char *e = s ? tp_xsort_error(s) : NULL;

	g->oom = 1;
	if (!g->sp.err[0])
		snprintf(g->sp.err, sizeof(g->sp.err), "%s",
			 e ? e : "out of memory");
}

struct tp_xsort *tp_gpu_sort(struct tp_gpu *g, struct tp_xsort **slot,
			     size_t rec_size, tp_xsort_cmp cmp)
{
	if (!*slot && !g->oom)
		*slot = tp_xsort_new(rec_size, cmp, g->sp.budget / 4);
	if (!*slot)
		tp_gpu_sort_failed(g, NULL);
	return *slot;
}
