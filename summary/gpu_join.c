/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on trace/ and stacks/. */
/* The GPU analyses' joins, taken in the sweep's time order: a launch
 * call waits in a table by correlation id for its slices (HTA's launch
 * delay: a slice's start minus its call's end), tagged with the ranges
 * open on its thread when it started; each slice then adds its duration
 * to the GPU time of those ranges' names (nsys' NVTX projection).
 *
 * A bounded window bounds the table too (CALLS_MAX calls: when full,
 * the older half goes, counted when no slice had found them) and keeps
 * the delays for exact percentiles up to DELAYS_MAX, then in log-linear
 * histograms (within 1/32 of the true value). A leaf below gpu_sweep.c:
 * it calls only the histogram helpers.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

#define CALLS_MAX (1u << 15)	/* calls waiting (bounded window) */
#define DELAYS_MAX (1u << 16)	/* delays kept exactly (bounded window) */
#define RANGES_MAX 4096		/* ranges open at once (bounded window) */

/* Correlation ids are mostly sequential: their low bits put consecutive
 * calls in consecutive slots, so the table is walked, not jumped
 * through (a cache miss a call otherwise). */
static size_t slot_of(uint64_t corr, size_t cap)
{
	return (size_t)corr & (cap - 1);
}

static struct gpu_call *call_find(const struct tp_gpu *g, uint64_t corr)
{
	size_t k;

	if (!g->capcalls)
		return NULL;
	for (k = slot_of(corr, g->capcalls); g->calls[k].corr;
	     k = (k + 1) & (g->capcalls - 1))
		if (g->calls[k].corr == corr)
			return &g->calls[k];
	return NULL;
}

static void call_put(struct gpu_call *v, size_t cap, const struct gpu_call *c)
{
	size_t k;

	for (k = slot_of(c->corr, cap); v[k].corr; k = (k + 1) & (cap - 1))
		;
	v[k] = *c;
}

/* A table of cap slots holding the calls from seq `keep` on. */
static int calls_rebuild(struct tp_gpu *g, size_t cap, uint32_t keep)
{
	struct gpu_call *v = calloc(cap, sizeof(*v)), *c;
	size_t i;

	if (!v)
		return -1;
	g->ncalls = 0;
	for (i = 0; i < g->capcalls; i++) {
		c = &g->calls[i];
		if (!c->corr)
			continue;
		if ((int32_t)(c->seq - keep) < 0) {	/* older, wrapping */
			g->ap.calls_evicted += !c->joined;
			continue;
		}
		call_put(v, cap, c);
		g->ncalls++;
	}
	free(g->calls);
	g->calls = v;
	g->capcalls = cap;
	return 0;
}

/* Room for one more call: at most half full. */
static int calls_room(struct tp_gpu *g)
{
	if ((g->ncalls + 1) * 2 <= g->capcalls)
		return 0;
	if (!g->window || g->capcalls < 2 * CALLS_MAX)
		return calls_rebuild(g, g->capcalls ? g->capcalls * 2 : 1024,
				     0);
	return calls_rebuild(g, g->capcalls,
			     (uint32_t)(g->call_seq - CALLS_MAX / 2));
}

/* The ranges still open at the sweep's time. */
static void ranges_prune(struct tp_gpu *g)
{
	size_t i, k = 0;

	for (i = 0; i < g->nranges; i++)
		if (g->ranges[i].end > g->now)
			g->ranges[k++] = g->ranges[i];
	g->nranges = k;
}

void tp_gpu_join_call(struct tp_gpu *g, const struct gpu_rec *r)
{
	struct gpu_call c = { .corr = r->corr, .end = r->end };
	size_t i;

	/* a slice joins the first call of its id */
	if (call_find(g, r->corr))
		return;
	if (calls_room(g)) {
		g->oom = 1;
		return;
	}
	ranges_prune(g);
	for (i = 0; i < g->nranges; i++) {
		if (g->ranges[i].pid != r->pid || g->ranges[i].tid != r->tid ||
		    g->ranges[i].ts > r->ts || g->ranges[i].end <= r->ts)
			continue;
		if (c.ntag == GPU_TAGS) {
			g->ap.tags_dropped++;
			continue;
		}
		c.tag[c.ntag++] = g->ranges[i].name;
	}
	c.seq = g->call_seq++;
	call_put(g->calls, g->capcalls, &c);
	g->ncalls++;
}

void tp_gpu_join_range(struct tp_gpu *g, const struct gpu_rec *r)
{
	size_t cap;
	void *v;

	ranges_prune(g);
	if (g->nranges == g->capranges) {
		if (g->window && g->capranges >= RANGES_MAX) {
			g->ap.ranges_dropped++;
			return;
		}
		cap = g->capranges ? g->capranges * 2 : 16;
		v = realloc(g->ranges, cap * sizeof(*g->ranges));
		if (!v) {
			g->oom = 1;
			return;
		}
		g->ranges = v;
		g->capranges = cap;
	}
	g->ranges[g->nranges].ts = r->ts;
	g->ranges[g->nranges].end = r->end;
	g->ranges[g->nranges].pid = r->pid;
	g->ranges[g->nranges].tid = r->tid;
	g->ranges[g->nranges].name = r->name;
	g->nranges++;
}

int tp_gpu_range_name(struct tp_gpu *g, uint32_t name, int64_t dur)
{
	size_t cap = g->capnames;
	void *v;

	if (name >= cap) {
		while (name >= cap)
			cap = cap ? cap * 2 : 64;
		v = realloc(g->names, cap * sizeof(*g->names));
		if (!v)
			return -1;
		g->names = v;
		memset(g->names + g->capnames, 0,
		       (cap - g->capnames) * sizeof(*g->names));
		g->capnames = cap;
	}
	g->names[name].calls++;
	g->names[name].cpu_ns += dur;
	g->names[name].is_range = 1;
	return 0;
}

static void hist_add(struct tp_gpu *g, int64_t d)
{
	if (d < 0)
		tp_hist_add(&g->dneg, (uint64_t)-d, 1);
	else
		tp_hist_add(&g->dpos, (uint64_t)d, 1);
}

/* Exact while the window is unbounded or the delays fit; then binned. */
static void delay_keep(struct tp_gpu *g, int64_t d)
{
	size_t i, cap;
	void *v;

	if (g->ap.delays_binned) {
		hist_add(g, d);
		return;
	}
	if (g->window && g->ndelays == DELAYS_MAX) {
		for (i = 0; i < g->ndelays; i++)
			hist_add(g, g->delays[i]);
		free(g->delays);
		g->delays = NULL;
		g->ap.delays_binned = 1;
		hist_add(g, d);
		return;
	}
	if (g->ndelays == g->capdelays) {
		cap = g->capdelays ? g->capdelays * 2 : 1024;
		v = realloc(g->delays, cap * sizeof(*g->delays));
		if (!v) {
			g->oom = 1;
			return;
		}
		g->delays = v;
		g->capdelays = cap;
	}
	g->delays[g->ndelays++] = d;
}

void tp_gpu_join_slice(struct tp_gpu *g, const struct gpu_rec *r)
{
	struct gpu_call *c = r->corr ? call_find(g, r->corr) : NULL;
	int64_t d;
	unsigned i;

	if (!c)
		return;
	c->joined = 1;
	d = r->ts - c->end;
	g->n_launch++;
	g->delay_sum += d;
	if (d < g->delay_min)
		g->delay_min = d;
	if (d > g->delay_max)
		g->delay_max = d;
	delay_keep(g, d);
	for (i = 0; i < c->ntag; i++)
		g->names[c->tag[i]].gpu_ns += r->end - r->ts;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

void tp_gpu_join_end(struct tp_gpu *g)
{
	/* delays is NULL when there are none: no qsort(NULL, 0, ...). */
	if (!g->ap.delays_binned && g->ndelays)
		qsort(g->delays, g->ndelays, sizeof(*g->delays), i64_cmp);
}

/* The k-th smallest (1-based) of a histogram: its bucket's middle. */
static uint64_t hist_kth(const struct tp_hist *h, uint64_t k)
{
	uint64_t seen = 0;
	unsigned b;

	for (b = 0; b < TP_HIST_BUCKETS; b++) {
		seen += tp_hist_at(h, b);
		if (seen >= k)
			return tp_hist_lower(b) + tp_hist_width(b) / 2;
	}
	return 0;
}

/* Nearest rank: the ceil(pct/100 * n)-th smallest. */
int64_t tp_gpu_delay_pct(const struct tp_gpu *g, unsigned pct)
{
	uint64_t n = g->n_launch, k, nneg = g->dneg.count;
	int64_t v;

	if (!n)
		return 0;
	k = (n * pct + 99) / 100;
	if (!g->ap.delays_binned)	/* fewer only when out of memory */
		return k <= g->ndelays ? g->delays[k - 1] : 0;
	if (k <= nneg)
		v = -(int64_t)hist_kth(&g->dneg, nneg - k + 1);
	else
		v = (int64_t)hist_kth(&g->dpos, k - nneg);
	if (v < g->delay_min)
		v = g->delay_min;
	if (v > g->delay_max)
		v = g->delay_max;
	return v;
}

void tp_gpu_join_free(struct tp_gpu *g)
{
	free(g->calls);
	free(g->names);
	free(g->delays);
	tp_hist_free(&g->dpos);
	tp_hist_free(&g->dneg);
}
