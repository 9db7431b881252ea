/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The GPU analyses' sweep: records in order of start (gpu_heap.c), each
 * taken once, with memory that does not grow with the events.
 *
 * Slices taken in order of start make each union (all activity, and per
 * HTA class) one open interval: a slice that starts after its end closes
 * it. Each closed busy interval adds to the open steps' busy time, to
 * the utilisation, and the idle time before the next one is a gap,
 * kept if among the TP_GPU_GAPS longest. Overlap of communication and
 * computation is |comp| + |comm| - |comp or comm|, so it needs no list
 * of intervals either.
 *
 * The idle gaps' context is kept as the CPU spans that may still hold a
 * gap's middle: one that ends before the open busy interval's end cannot
 * (a gap starts there at the earliest), nor one that ends before half
 * way from there to now (a gap that ends at now or later has its middle
 * beyond).
 *
 * In the exact mode (gpu_int.h) the busy intervals go through an
 * external sort (they come in order, so it only spills them) and the
 * utilisation is taken from them when the sweep ends.
 *
 * Calls gpu_join.c (launch delays, ranges), gpu_spill.c (the sorts) and the
 * histogram helpers.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"
#include "host.h"

#define BUSY_MAX (1u << 16)	/* busy intervals kept for exact utilisation */
#define STEPS_MAX 4096		/* steps open at once (bounded window) */
#define CPU_MAX (1u << 16)	/* CPU spans kept for the gaps' context */

/* Adds [a, e) to u, taken in order of start; 1 with the interval it
 * closed in *ca, *ce. */
static int union_add(struct gpu_union *u, int64_t a, int64_t e,
		     int64_t *ca, int64_t *ce)
{
	int closed = u->open;

	if (u->open && a <= u->e) {
		if (e > u->e)
			u->e = e;
		return 0;
	}
	if (closed) {
		*ca = u->a;
		*ce = u->e;
		u->len += u->e - u->a;
	}
	u->a = a;
	u->e = e;
	u->open = 1;
	return closed;
}

static int union_end(struct gpu_union *u, int64_t *ca, int64_t *ce)
{
	if (!u->open)
		return 0;
	*ca = u->a;
	*ce = u->e;
	u->len += u->e - u->a;
	u->open = 0;
	return 1;
}

/* Coarse bins: twice as wide, each pair added up. */
static void bins_halve(struct tp_gpu *g)
{
	size_t i;

	for (i = 0; i < GPU_BINS / 2; i++)
		g->bins[i] = g->bins[2 * i] + g->bins[2 * i + 1];
	memset(g->bins + GPU_BINS / 2, 0, GPU_BINS / 2 * sizeof(*g->bins));
	g->bin_w *= 2;
}

static void bins_add(struct tp_gpu *g, int64_t a, int64_t e)
{
	int64_t lo, hi, x, y;
	size_t j;

	if (!g->bins) {
		g->bins = calloc(GPU_BINS, sizeof(*g->bins));
		if (!g->bins) {
			g->oom = 1;
			return;
		}
		g->bin0 = a;
		g->bin_w = 1;
	}
	if (a < g->bin0)	/* a late slice */
		a = g->bin0;
	while (e - g->bin0 > (int64_t)GPU_BINS * g->bin_w)
		bins_halve(g);
	for (j = (size_t)((a - g->bin0) / g->bin_w); j < GPU_BINS; j++) {
		lo = g->bin0 + (int64_t)j * g->bin_w;
		hi = lo + g->bin_w;
		if (lo >= e)
			break;
		x = a > lo ? a : lo;
		y = e < hi ? e : hi;
		if (y > x)
			g->bins[j] += y - x;
	}
}

/* Busy intervals are disjoint: their starts order them. */
static int busy_cmp(const void *x, const void *y)
{
	const struct gpu_busy *p = x, *q = y;

	return p->a < q->a ? -1 : p->a > q->a;
}

static void busy_spill(struct tp_gpu *g, int64_t a, int64_t e)
{
	struct gpu_busy b = { a, e };
	struct tp_xsort *s = tp_gpu_sort(g, &g->sp.busy, sizeof(b), busy_cmp);

	if (s && tp_xsort_add(s, &b))
		tp_gpu_sort_failed(g, s);
}

/* A closed busy interval, for the utilisation: kept while the list may
 * grow (exact), and in the bins when the window is bounded. */
static void busy_keep(struct tp_gpu *g, int64_t a, int64_t e)
{
	size_t cap;
	void *v;

	if (g->sp.budget) {
		busy_spill(g, a, e);
		return;
	}
	if (g->window)
		bins_add(g, a, e);
	if (g->ap.util_binned)
		return;
	if (g->window && g->nbusy == BUSY_MAX) {
		g->ap.util_binned = 1;
		free(g->busy);
		g->busy = NULL;
		return;
	}
	if (g->nbusy == g->capbusy) {
		cap = g->capbusy ? g->capbusy * 2 : 256;
		v = realloc(g->busy, cap * sizeof(*g->busy));
		if (!v) {
			g->oom = 1;
			return;
		}
		g->busy = v;
		g->capbusy = cap;
	}
	g->busy[g->nbusy].a = a;
	g->busy[g->nbusy].e = e;
	g->nbusy++;
}

/* A step is CPU-bound when the GPU was busy for less than half of it. */
static void steps_retire(struct tp_gpu *g, int64_t upto)
{
	size_t i, k = 0;

	for (i = 0; i < g->nsteps; i++) {
		if (g->steps[i].end > upto) {
			g->steps[k++] = g->steps[i];
			continue;
		}
		if (g->steps[i].busy * 2 < g->steps[i].end - g->steps[i].ts)
			g->steps_cpu_bound++;
		else
			g->steps_gpu_bound++;
	}
	g->nsteps = k;
}

static void steps_busy(struct tp_gpu *g, int64_t a, int64_t e)
{
	int64_t x, y;
	size_t i;

	for (i = 0; i < g->nsteps; i++) {
		x = a > g->steps[i].ts ? a : g->steps[i].ts;
		y = e < g->steps[i].end ? e : g->steps[i].end;
		if (y > x)
			g->steps[i].busy += y - x;
	}
}

static void step_open(struct tp_gpu *g, const struct gpu_rec *r)
{
	size_t cap;
	void *v;

	if (g->nsteps == g->capsteps) {
		if (g->window && g->capsteps >= STEPS_MAX) {
			g->ap.steps_dropped++;
			return;
		}
		cap = g->capsteps ? g->capsteps * 2 : 16;
		v = realloc(g->steps, cap * sizeof(*g->steps));
		if (!v) {
			g->oom = 1;
			return;
		}
		g->steps = v;
		g->capsteps = cap;
	}
	g->steps[g->nsteps].ts = r->ts;
	g->steps[g->nsteps].end = r->end;
	g->steps[g->nsteps].busy = 0;
	g->nsteps++;
}

/* The i-th CPU span kept, in order of start. */
static inline struct gpu_cpu *cpu_at(const struct tp_gpu *g, size_t i)
{
	return &g->cpu[(g->cpu0 + i) & (g->capcpu - 1)];
}

/* The TP_GAP_CPU shortest CPU spans holding t, longest first. */
static void enclosing(const struct tp_gpu *g, int64_t t, struct gpu_gap *gap)
{
	int64_t d[TP_GAP_CPU], len;
	size_t i, k, n = 0;

	for (i = 0; i < g->ncpu; i++) {
		const struct gpu_cpu *c = cpu_at(g, i);

		if (c->ts > t || c->end <= t)
			continue;
		len = c->end - c->ts;
		if (n == TP_GAP_CPU && len >= d[0])
			continue;
		if (n == TP_GAP_CPU) {
			n--;
			memmove(d, d + 1, n * sizeof(*d));
			memmove(gap->cpu, gap->cpu + 1, n * sizeof(*gap->cpu));
		}
		for (k = n; k && d[k - 1] < len; k--) {
			d[k] = d[k - 1];
			gap->cpu[k] = gap->cpu[k - 1];
		}
		d[k] = len;
		gap->cpu[k] = c->name;
		n++;
	}
	gap->ncpu = (unsigned)n;
}

/* Idle [a, b): kept if among the longest (an equal one found earlier
 * stays ahead), with the CPU spans around its middle. */
static void keep_gap(struct tp_gpu *g, int64_t a, int64_t b)
{
	struct gpu_gap gap = { .start = a, .end = b };
	struct gpu_gap *v = g->gaps;
	size_t i = g->ngaps;

	if (i == TP_GPU_GAPS && b - a <= v[i - 1].end - v[i - 1].start)
		return;
	enclosing(g, a + (b - a) / 2, &gap);
	if (i == TP_GPU_GAPS)
		i--;
	else
		g->ngaps++;
	for (; i && b - a > v[i - 1].end - v[i - 1].start; i--)
		v[i] = v[i - 1];
	v[i] = gap;
}

/* A busy interval closed; next: where the next one starts. */
static void busy_closed(struct tp_gpu *g, int64_t a, int64_t e, int64_t next)
{
	busy_keep(g, a, e);
	steps_busy(g, a, e);
	steps_retire(g, next);
	keep_gap(g, e, next);
	tp_host_gap(g->host, e, next);
}

static void slice(struct tp_gpu *g, const struct gpu_rec *r)
{
	int64_t a, e;
	int cls = r->cls;

	if (!g->any_slice || r->ts < g->start_ns)
		g->start_ns = r->ts;
	if (!g->any_slice || r->end > g->end_ns)
		g->end_ns = r->end;
	g->any_slice = 1;
	if (union_add(&g->all, r->ts, r->end, &a, &e))
		busy_closed(g, a, e, r->ts);
	tp_host_busy_until(g->host, g->all.e);
	if (cls == TP_GPU_COMPUTE)
		union_add(&g->comp, r->ts, r->end, &a, &e);
	if (cls == TP_GPU_COMM)
		union_add(&g->comm, r->ts, r->end, &a, &e);
	if (cls == TP_GPU_MEMORY)
		union_add(&g->mem, r->ts, r->end, &a, &e);
	if (cls == TP_GPU_COMPUTE || cls == TP_GPU_COMM)
		union_add(&g->cc, r->ts, r->end, &a, &e);
	tp_gpu_join_slice(g, r);
}

/* The first of the CPU spans, sorted by end too, that ends after thr. */
static size_t cpu_first_after(const struct tp_gpu *g, int64_t thr)
{
	size_t lo = 0, hi = g->ncpu, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cpu_at(g, mid)->end > thr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Keeps the CPU spans that end after thr, in order. When their ends
 * never decrease (one thread's calls, no enclosing range), those are
 * the ones after a binary search: nothing is read but that. Otherwise
 * they are packed towards the ring's end, so the newest, which most
 * often stay, are not moved; either way the ring then starts at the
 * first one kept. */
static void cpu_keep(struct tp_gpu *g, int64_t thr)
{
	size_t i = g->ncpu, w = g->ncpu;
	int64_t next = INT64_MAX;
	int unsorted = 0;

	if (!g->cpu_unsorted) {
		w = cpu_first_after(g, thr);
		goto out;
	}
	while (i--) {
		struct gpu_cpu *c = cpu_at(g, i);

		if (c->end <= thr)
			continue;
		unsorted |= c->end > next;
		next = c->end;
		if (--w != i)
			*cpu_at(g, w) = *c;
	}
	g->cpu_unsorted = unsorted;
out:
	g->cpu0 = (g->cpu0 + w) & (g->capcpu - 1);
	g->ncpu -= w;
}

/* Drops the CPU spans that can no longer hold a gap's middle. */
static void cpu_prune(struct tp_gpu *g)
{
	int64_t thr = g->all.e;

	if (!g->all.open)
		return;
	if (g->now > thr)
		thr += (g->now - thr) / 2;
	cpu_keep(g, thr);
}

/* Bounded and still three quarters full: let go of the spans that end
 * before the middle one (in order of start) does, which keeps the long
 * ones that may enclose what comes; then, if that was not enough, of
 * the older half. */
static void cpu_let_go(struct tp_gpu *g)
{
	size_t k, n = g->ncpu;

	cpu_keep(g, cpu_at(g, n / 2)->end);
	k = g->ncpu;
	if (k >= g->capcpu * 3 / 4) {
		g->cpu0 = (g->cpu0 + k / 2) & (g->capcpu - 1);
		g->ncpu = k - k / 2;
	}
	g->ap.cpu_dropped += n - g->ncpu;
}

/* Room for one more CPU span: pruned, grown, or (bounded) some let go. */
static int cpu_room(struct tp_gpu *g)
{
	size_t cap, wrapped;
	struct gpu_cpu *v;

	if (g->ncpu < g->capcpu)
		return 0;
	cpu_prune(g);
	if (g->ncpu < g->capcpu / 2)
		return 0;
	if (g->window && g->capcpu >= CPU_MAX) {
		if (g->ncpu >= g->capcpu * 3 / 4)
			cpu_let_go(g);
		return 0;
	}
	cap = g->capcpu ? g->capcpu * 2 : 256;
	v = realloc(g->cpu, cap * sizeof(*g->cpu));
	if (!v)
		return -1;
	/* what wrapped past the old end goes after it (as gpu_heap.c's
	 * ring_grow) */
	wrapped = g->cpu0 + g->ncpu > g->capcpu ?
		  g->cpu0 + g->ncpu - g->capcpu : 0;
	memcpy(v + g->capcpu, v, wrapped * sizeof(*v));
	g->cpu = v;
	g->capcpu = cap;
	return 0;
}

static void cpu_ctx(struct tp_gpu *g, const struct gpu_rec *r)
{
	struct gpu_cpu *c;

	if (cpu_room(g)) {
		g->oom = 1;
		return;
	}
	if (g->ncpu && r->end < cpu_at(g, g->ncpu - 1)->end)
		g->cpu_unsorted = 1;
	c = cpu_at(g, g->ncpu);
	c->ts = r->ts;
	c->end = r->end;
	c->name = r->name;
	g->ncpu++;
}

/* A CPU sample waits for the sweep's verdict when it falls after the
 * busy interval so far (the GPU is idle then, unless no activity comes
 * after it); before the first GPU activity it is outside the span. */
static void sample(struct tp_gpu *g, const struct gpu_rec *r)
{
	if (!g->host || !g->any_slice || (g->all.open && r->ts < g->all.e))
		return;
	tp_host_pending(g->host, r->name, (int64_t)r->corr);
}

void tp_gpu_sweep(struct tp_gpu *g, const struct gpu_rec *r)
{
	if (g->swept_any && r->ts < g->now) {
		g->ap.late++;
		if (r->kind == GR_SLICE) {
			g->ap.late_slices++;
			g->ap.late_slice_ns += r->end - r->ts;
		}
	} else {
		g->now = r->ts;
	}
	g->swept_any = 1;
	switch (r->kind) {
	case GR_SLICE:
		slice(g, r);
		return;
	case GR_SAMPLE:
		sample(g, r);
		return;
	case GR_OSRT:
		tp_host_osrt_open(g->host, (uint32_t)r->corr, r->ts, r->end);
		break;
	case GR_CALL:
		tp_gpu_join_call(g, r);
		break;
	case GR_RANGE:
		tp_gpu_join_range(g, r);
		break;
	case GR_STEP:
		step_open(g, r);
		break;
	}
	cpu_ctx(g, r);
}

static void util_spilled(struct tp_gpu *g);

void tp_gpu_sweep_end(struct tp_gpu *g)
{
	int64_t a, e;

	tp_host_end(g->host);
	if (union_end(&g->all, &a, &e)) {
		busy_keep(g, a, e);
		steps_busy(g, a, e);
	}
	if (g->any_slice)
		steps_retire(g, INT64_MAX);
	union_end(&g->comp, &a, &e);
	union_end(&g->comm, &a, &e);
	union_end(&g->mem, &a, &e);
	union_end(&g->cc, &a, &e);
	if (g->sp.budget)
		util_spilled(g);
	tp_gpu_join_end(g);
}

static int64_t part_lo(const struct tp_gpu *g, size_t i)
{
	int64_t span = g->end_ns - g->start_ns;

	return g->start_ns + (int64_t)((__int128)span * (int64_t)i /
				       TP_GPU_BUCKETS);
}

/* The busy intervals in order: from the list, or the exact mode's sort. */
struct busy_iter {
	const struct tp_gpu *g;
	struct tp_xsort *s;
	size_t i;
};

static const struct gpu_busy *busy_next(struct busy_iter *it)
{
	if (it->s)
		return tp_xsort_next(it->s);
	if (it->i >= it->g->nbusy)
		return NULL;
	return &it->g->busy[it->i++];
}

/* From the busy intervals, exactly. */
static void util_exact(const struct tp_gpu *g, struct busy_iter *it,
		       int64_t *util)
{
	const struct gpu_busy *b = busy_next(it);
	int64_t lo, hi, a, e;
	size_t k = 0;

	while (b && k < TP_GPU_BUCKETS) {
		lo = part_lo(g, k);
		hi = part_lo(g, k + 1);
		a = b->a > lo ? b->a : lo;
		e = b->e < hi ? b->e : hi;
		if (e > a)
			util[k] += e - a;
		if (b->e < hi)
			b = busy_next(it);
		else
			k++;
	}
}

/* The exact mode's utilisation, when the sweep ends: the span is known
 * then, and the sorted intervals are read once. */
static void util_spilled(struct tp_gpu *g)
{
	struct busy_iter it = { .g = g, .s = g->sp.busy };

	if (g->sp.have_util)
		return;
	g->sp.have_util = 1;
	memset(g->sp.util, 0, sizeof(g->sp.util));
	if (!it.s || !g->any_slice)
		return;
	if (tp_xsort_finish(it.s)) {
		tp_gpu_sort_failed(g, it.s);
		return;
	}
	util_exact(g, &it, g->sp.util);
	if (tp_xsort_error(it.s))
		tp_gpu_sort_failed(g, it.s);
	tp_xsort_free(it.s);
	g->sp.busy = NULL;
}

/* From the bins, each spread evenly over its width: a part is off by
 * less than two bins' width. */
static void util_binned(const struct tp_gpu *g, int64_t *util)
{
	int64_t lo, hi, x, y, b0;
	size_t k, j;

	for (k = 0; k < TP_GPU_BUCKETS; k++) {
		lo = part_lo(g, k);
		hi = part_lo(g, k + 1);
		j = lo > g->bin0 ? (size_t)((lo - g->bin0) / g->bin_w) : 0;
		for (; j < GPU_BINS; j++) {
			b0 = g->bin0 + (int64_t)j * g->bin_w;
			x = lo > b0 ? lo : b0;
			y = hi < b0 + g->bin_w ? hi : b0 + g->bin_w;
			if (b0 >= hi)
				break;
			if (y > x)
				util[k] += (int64_t)((__int128)g->bins[j] *
						     (y - x) / g->bin_w);
		}
	}
}

void tp_gpu_util(const struct tp_gpu *g, int64_t util[TP_GPU_BUCKETS])
{
	struct busy_iter it = { .g = g };

	memset(util, 0, TP_GPU_BUCKETS * sizeof(*util));
	if (!g->any_slice)
		return;
	if (g->sp.budget)
		memcpy(util, g->sp.util, sizeof(g->sp.util));
	else if (g->ap.util_binned && g->bins)
		util_binned(g, util);
	else
		util_exact(g, &it, util);
}
