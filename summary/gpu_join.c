/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The GPU analyses' joins, taken in the sweep's time order: a launch
 * call waits in a table by correlation id for its slices (HTA's launch
 * delay: a slice's start minus its call's end), tagged with the ranges
 * open on its thread when it started; each slice then adds its duration
 * to the GPU time of those ranges' names (nsys' NVTX projection).
 *
 * A bounded window bounds the table too (CALLS_MAX calls: when full,
 * the older half goes, counted when no slice had found them) and keeps
 * the delays for exact percentiles up to DELAYS_MAX, then in log-linear
 * histograms (within 1/32 of the true value).
 *
 * The exact mode (gpu_int.h) keeps no table: each call (with its tags)
 * and each slice becomes a record numbered in sweep order, sorted by
 * correlation id then that number; when the sweep ends each id's group
 * is walked, and a slice joins the id's first call if that came before
 * it in the sweep, as the table's lookup would. The delays go through a
 * sort too, read once for the percentiles. Same figures, and memory
 * that does not grow with the launches.
 *
 * Below gpu_sweep.c: it calls the histogram helpers and gpu_spill.c's
 * sorts.
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

/* A call or a slice of the exact mode's join. */
struct jrec {
	uint64_t corr, seq;	/* seq: sweep order */
	int64_t a, e;		/* call: a, its end; slice: start, end */
	uint32_t tag[GPU_TAGS];
	uint16_t ntag, dropped;	/* tags kept, tags over GPU_TAGS */
	uint8_t is_call;
	uint8_t pad[3];
};

static int jrec_cmp(const void *a, const void *b)
{
	const struct jrec *x = a, *y = b;

	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void jrec_add(struct tp_gpu *g, struct jrec *j)
{
	struct tp_xsort *s = tp_gpu_sort(g, &g->sp.join, sizeof(*j),
					 jrec_cmp);

	j->seq = g->sp.join_seq++;
	if (s && tp_xsort_add(s, j))
		tp_gpu_sort_failed(g, s);
}

static uint16_t ranges_tag(struct tp_gpu *g, const struct gpu_rec *r,
			   uint32_t *tag, uint16_t *ntag);

void tp_gpu_join_call(struct tp_gpu *g, const struct gpu_rec *r)
{
	struct gpu_call c = { .corr = r->corr, .end = r->end };
	struct jrec j;

	if (g->sp.budget) {
		memset(&j, 0, sizeof(j));
		j.corr = r->corr;
		j.a = r->end;
		j.is_call = 1;
		j.dropped = ranges_tag(g, r, j.tag, &j.ntag);
		jrec_add(g, &j);
		return;
	}
	/* a slice joins the first call of its id */
	if (call_find(g, r->corr))
		return;
	if (calls_room(g)) {
		g->oom = 1;
		return;
	}
	g->ap.tags_dropped += ranges_tag(g, r, c.tag, &c.ntag);
	c.seq = g->call_seq++;
	call_put(g->calls, g->capcalls, &c);
	g->ncalls++;
}

/* The names of the ranges open on r's thread when it started; returns
 * how many did not fit. */
static uint16_t ranges_tag(struct tp_gpu *g, const struct gpu_rec *r,
			   uint32_t *tag, uint16_t *ntag)
{
	uint16_t dropped = 0;
	size_t i;

	ranges_prune(g);
	for (i = 0; i < g->nranges; i++) {
		if (g->ranges[i].pid != r->pid || g->ranges[i].tid != r->tid ||
		    g->ranges[i].ts > r->ts || g->ranges[i].end <= r->ts)
			continue;
		if (*ntag == GPU_TAGS) {
			dropped++;
			continue;
		}
		tag[(*ntag)++] = g->ranges[i].name;
	}
	return dropped;
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

static int i64_cmp(const void *a, const void *b);

/* Exact while the window is unbounded or the delays fit; then binned.
 * The exact mode sorts them (delays_walk takes the percentiles). */
static void delay_keep(struct tp_gpu *g, int64_t d)
{
	struct tp_xsort *s;
	size_t i, cap;
	void *v;

	if (g->sp.budget) {
		s = tp_gpu_sort(g, &g->sp.delays, sizeof(d), i64_cmp);
		if (s && tp_xsort_add(s, &d))
			tp_gpu_sort_failed(g, s);
		return;
	}
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

/* A slice found its call (ending at end, with its tags). */
static void join_apply(struct tp_gpu *g, int64_t end, const uint32_t *tag,
		       unsigned ntag, const struct gpu_rec *r)
{
	int64_t d = r->ts - end;
	unsigned i;

	g->n_launch++;
	g->delay_sum += d;
	if (d < g->delay_min)
		g->delay_min = d;
	if (d > g->delay_max)
		g->delay_max = d;
	delay_keep(g, d);
	for (i = 0; i < ntag; i++)
		g->names[tag[i]].gpu_ns += r->end - r->ts;
}

void tp_gpu_join_slice(struct tp_gpu *g, const struct gpu_rec *r)
{
	struct gpu_call *c;
	struct jrec j;

	if (g->sp.budget) {
		if (!r->corr)
			return;
		memset(&j, 0, sizeof(j));
		j.corr = r->corr;
		j.a = r->ts;
		j.e = r->end;
		jrec_add(g, &j);
		return;
	}
	c = r->corr ? call_find(g, r->corr) : NULL;
	if (!c)
		return;
	c->joined = 1;
	join_apply(g, c->end, c->tag, c->ntag, r);
}

/* The exact mode's join: each id's records in sweep order; the first
 * call is the one the table would have kept (later ones were ignored),
 * and the slices after it join it. */
static void join_walk(struct tp_gpu *g)
{
	struct tp_xsort *s = g->sp.join;
	const struct jrec *j;
	struct jrec call;
	struct gpu_rec r;
	int have = 0;

	if (!s)
		return;
	if (tp_xsort_finish(s)) {
		tp_gpu_sort_failed(g, s);
		return;
	}
	memset(&r, 0, sizeof(r));
	while ((j = tp_xsort_next(s))) {
		if (have && j->corr != call.corr)
			have = 0;
		if (j->is_call) {
			if (have)
				continue;
			call = *j;
			have = 1;
			g->ap.tags_dropped += j->dropped;
			continue;
		}
		if (!have)
			continue;
		r.ts = j->a;
		r.end = j->e;
		join_apply(g, call.a, call.tag, call.ntag, &r);
	}
	if (tp_xsort_error(s))
		tp_gpu_sort_failed(g, s);
	tp_xsort_free(s);
	g->sp.join = NULL;
}

/* The exact mode's percentiles, from the sorted delays read once. */
static void delays_walk(struct tp_gpu *g)
{
	static const unsigned pcts[2] = { 50, 90 };
	struct tp_xsort *s = g->sp.delays;
	const int64_t *d;
	uint64_t k[2], i = 0;
	unsigned p;

	g->sp.have_pct = 1;
	if (!s || !g->n_launch)
		return;
	for (p = 0; p < 2; p++)
		k[p] = (g->n_launch * pcts[p] + 99) / 100;
	if (tp_xsort_finish(s)) {
		tp_gpu_sort_failed(g, s);
		return;
	}
	while ((d = tp_xsort_next(s))) {
		i++;
		for (p = 0; p < 2; p++)
			if (i == k[p])
				g->sp.pct[p] = *d;
		if (i >= k[1])
			break;
	}
	if (tp_xsort_error(s))
		tp_gpu_sort_failed(g, s);
	tp_xsort_free(s);
	g->sp.delays = NULL;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

void tp_gpu_join_end(struct tp_gpu *g)
{
	if (g->sp.budget) {
		if (!g->sp.have_pct) {
			join_walk(g);
			delays_walk(g);
		}
		return;
	}
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
	if (g->sp.budget)
		return pct == 50 ? g->sp.pct[0] : pct == 90 ? g->sp.pct[1] : 0;
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
