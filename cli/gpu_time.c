/* GPU time of one trace: kernel, copy and set sums, the union of all
 * activity over the streams (busy, and idle within the span), and HTA's
 * temporal breakdown and communication/computation overlap, exactly, in
 * integer nanoseconds.
 *
 * Definitions follow HTA (get_temporal_breakdown, get_comm_comp_overlap):
 * the span runs from the first GPU slice's start to the last one's end;
 * idle = span - |union of all slices|; compute = |union of computation
 * kernels|; non-compute = span - compute - idle; overlap = |union of
 * communication ∩ union of computation|. A kernel's class comes from its
 * name (tp_gpu_class). Slices are kept (24 bytes each) until the trace
 * ends, then sorted once.
 *
 * A leaf: it calls only the JSON buffer helpers of trace/json.h. Fed by
 * trace_summary.c.
 */
#include "gpu_time.h"

#include <stdlib.h>
#include <string.h>

struct slice {
	int64_t ts, end;
	uint64_t corr;		/* 0: none */
	int cls;
};


struct tp_gpu {
	struct slice *v;
	size_t n, cap;
	struct tp_gpu_call *calls;
	size_t ncalls, capcalls;
	struct slice *steps;	/* step windows */
	size_t nsteps, capsteps;
	struct tp_gpu_stats st;
};

struct tp_gpu *tp_gpu_new(void)
{
	return calloc(1, sizeof(struct tp_gpu));
}

void tp_gpu_free(struct tp_gpu *g)
{
	if (!g)
		return;
	free(g->v);
	free(g->calls);
	free(g->steps);
	free(g);
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* ^nccl.*Kernel */
static int is_comm(const char *name)
{
	return starts(name, "nccl") && strstr(name + 4, "Kernel");
}

/* HTA: communication if ^nccl.*Kernel; else memory if ^Memcpy, ^Memset
 * or ^dma; else computation unless the name holds Memcpy or Sync; else
 * other. */
int tp_gpu_class(const char *name)
{
	if (is_comm(name))
		return TP_GPU_COMM;
	if (starts(name, "Memcpy") || starts(name, "Memset") ||
	    starts(name, "dma"))
		return TP_GPU_MEMORY;
	if (strstr(name, "Memcpy") || strstr(name, "Sync"))
		return TP_GPU_OTHER;
	return TP_GPU_COMPUTE;
}

static int count(struct tp_gpu_stats *st, const char *cat, int64_t dur)
{
	if (!strcmp(cat, "kernel")) {
		st->n_kernel++;
		st->kernel_ns += dur;
	} else if (!strcmp(cat, "gpu_memcpy")) {
		st->n_memcpy++;
		st->memcpy_ns += dur;
	} else if (!strcmp(cat, "gpu_memset")) {
		st->n_memset++;
		st->memset_ns += dur;
	} else {
		return 0;
	}
	return 1;
}

int tp_gpu_add(struct tp_gpu *g, const char *cat, const char *name,
	       int64_t ts, int64_t dur, uint64_t corr)
{
	struct slice *v;
	size_t cap;

	if (!count(&g->st, cat, dur))
		return 0;
	if (g->n == g->cap) {
		cap = g->cap ? g->cap * 2 : 1024;
		v = realloc(g->v, cap * sizeof(*v));
		if (!v)
			return -1;
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n].ts = ts;
	g->v[g->n].end = ts + dur;
	g->v[g->n].cls = tp_gpu_class(name);
	g->v[g->n].corr = corr;
	g->n++;
	return 0;
}

int tp_gpu_call(struct tp_gpu *g, const char *cat, uint64_t corr,
		int64_t pid, int64_t tid, int64_t ts, int64_t end)
{
	struct tp_gpu_call *c;
	size_t cap;

	if (strcmp(cat, "cuda_runtime") && strcmp(cat, "cuda_driver"))
		return 0;
	if (g->ncalls == g->capcalls) {
		cap = g->capcalls ? g->capcalls * 2 : 1024;
		c = realloc(g->calls, cap * sizeof(*c));
		if (!c)
			return -1;
		g->calls = c;
		g->capcalls = cap;
	}
	c = &g->calls[g->ncalls++];
	c->corr = corr;
	c->pid = pid;
	c->tid = tid;
	c->ts = ts;
	c->end = end;
	c->gpu_ns = 0;
	return 0;
}

int tp_gpu_step(struct tp_gpu *g, int64_t ts, int64_t dur)
{
	struct slice *v;
	size_t cap;

	if (g->nsteps == g->capsteps) {
		cap = g->capsteps ? g->capsteps * 2 : 64;
		v = realloc(g->steps, cap * sizeof(*v));
		if (!v)
			return -1;
		g->steps = v;
		g->capsteps = cap;
	}
	g->steps[g->nsteps].ts = ts;
	g->steps[g->nsteps].end = ts + dur;
	g->steps[g->nsteps].corr = 0;
	g->steps[g->nsteps].cls = 0;
	g->nsteps++;
	return 0;
}

struct tp_gpu_call *tp_gpu_calls(struct tp_gpu *g, size_t *n)
{
	*n = g->ncalls;
	return g->calls;
}

static int slice_cmp(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Merges the slices of class cls (all when cls < 0), sorted by start,
 * into out (disjoint, sorted); returns how many. */
static size_t merge(const struct slice *v, size_t n, int cls,
		    struct slice *out)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (cls >= 0 && v[i].cls != cls)
			continue;
		if (k && v[i].ts <= out[k - 1].end) {
			if (v[i].end > out[k - 1].end)
				out[k - 1].end = v[i].end;
			continue;
		}
		out[k++] = v[i];
	}
	return k;
}

static int64_t length(const struct slice *v, size_t n)
{
	int64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += v[i].end - v[i].ts;
	return sum;
}

/* |a ∩ b| of two disjoint sorted lists. */
static int64_t intersection(const struct slice *a, size_t na,
			    const struct slice *b, size_t nb)
{
	size_t i = 0, k = 0;
	int64_t sum = 0, lo, hi;

	while (i < na && k < nb) {
		lo = a[i].ts > b[k].ts ? a[i].ts : b[k].ts;
		hi = a[i].end < b[k].end ? a[i].end : b[k].end;
		if (hi > lo)
			sum += hi - lo;
		if (a[i].end < b[k].end)
			i++;
		else
			k++;
	}
	return sum;
}

static int call_cmp(const void *a, const void *b)
{
	const struct tp_gpu_call *x = a, *y = b;

	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static struct tp_gpu_call *find_call(const struct tp_gpu *g, uint64_t corr)
{
	struct tp_gpu_call key = { .corr = corr };

	if (!g->ncalls)		/* calls is NULL: no bsearch(NULL, ...) */
		return NULL;
	return bsearch(&key, g->calls, g->ncalls, sizeof(key), call_cmp);
}

/* Each slice with a correlation id joined to its call (the first call of
 * that id); the delays' count, sum, min, nearest-rank p50 and p90, max. */
static int launch_delays(struct tp_gpu *g, struct tp_gpu_stats *st)
{
	struct tp_gpu_call *c;
	int64_t *d = malloc((g->n ? g->n : 1) * sizeof(*d));
	size_t i, n = 0;

	if (!d)
		return -1;
	if (g->ncalls)	/* calls is NULL when there are none */
		qsort(g->calls, g->ncalls, sizeof(*g->calls), call_cmp);
	for (i = 0; i < g->n; i++) {
		c = g->v[i].corr ? find_call(g, g->v[i].corr) : NULL;
		while (c && c > g->calls && c[-1].corr == c->corr)
			c--;
		if (!c)
			continue;
		d[n++] = g->v[i].ts - c->end;
		c->gpu_ns += g->v[i].end - g->v[i].ts;
	}
	st->n_launch = n;
	if (n) {
		qsort(d, n, sizeof(*d), i64_cmp);
		for (i = 0; i < n; i++)
			st->delay_sum_ns += d[i];
		st->delay_min_ns = d[0];
		st->delay_p50_ns = d[(n + 1) / 2 - 1];
		st->delay_p90_ns = d[(n * 9 + 9) / 10 - 1];
		st->delay_max_ns = d[n - 1];
	}
	free(d);
	return 0;
}

/* Inserts gap [a, b) into the top list if it is long enough. */
static void keep_gap(struct tp_gpu_stats *st, int64_t a, int64_t b)
{
	size_t i = st->ngaps;

	if (i == TP_GPU_GAPS &&
	    b - a <= st->gaps[i - 1].end - st->gaps[i - 1].start)
		return;
	if (i == TP_GPU_GAPS)
		i--;
	else
		st->ngaps++;
	/* longer first; an equal one found earlier stays ahead */
	for (; i && b - a > st->gaps[i - 1].end - st->gaps[i - 1].start; i--)
		st->gaps[i] = st->gaps[i - 1];
	st->gaps[i].start = a;
	st->gaps[i].end = b;
}

static int64_t bucket_lo(const struct tp_gpu_stats *st, size_t i)
{
	return st->start_ns + (int64_t)((__int128)st->span_ns * (int64_t)i /
					TP_GPU_BUCKETS);
}

/* Busy time per part of the span, from the disjoint sorted union. */
static void utilisation(struct tp_gpu_stats *st, const struct slice *v,
			size_t n)
{
	size_t i = 0, k = 0;
	int64_t lo, hi, a, e;

	while (i < n && k < TP_GPU_BUCKETS) {
		lo = bucket_lo(st, k);
		hi = bucket_lo(st, k + 1);
		a = v[i].ts > lo ? v[i].ts : lo;
		e = v[i].end < hi ? v[i].end : hi;
		if (e > a)
			st->util[k] += e - a;
		if (v[i].end < hi)
			i++;
		else
			k++;
	}
}

/* |[a, e) ∩ union|, the union disjoint and sorted (binary search for
 * the first part that ends after a). */
static int64_t busy_within(const struct slice *v, size_t n, int64_t a,
			   int64_t e)
{
	size_t lo = 0, hi = n, mid;
	int64_t sum = 0, x, y;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && v[lo].ts < e; lo++) {
		x = v[lo].ts > a ? v[lo].ts : a;
		y = v[lo].end < e ? v[lo].end : e;
		sum += y > x ? y - x : 0;
	}
	return sum;
}

/* A step is CPU-bound when the GPU was busy for less than half of it. */
static void step_verdicts(const struct tp_gpu *g, struct tp_gpu_stats *st,
			  const struct slice *v, size_t n)
{
	const struct slice *s;
	size_t i;

	for (i = 0; i < g->nsteps; i++) {
		s = &g->steps[i];
		if (busy_within(v, n, s->ts, s->end) * 2 < s->end - s->ts)
			st->steps_cpu_bound++;
		else
			st->steps_gpu_bound++;
	}
}

int tp_gpu_finish(struct tp_gpu *g, struct tp_gpu_stats *st)
{
	struct slice *all, *comp, *comm;
	size_t i, nall, ncomp, ncomm;

	*st = g->st;
	if (!g->n)
		return 0;
	all = malloc(3 * g->n * sizeof(*all));
	if (!all)
		return -1;
	comp = all + g->n;
	comm = comp + g->n;
	qsort(g->v, g->n, sizeof(*g->v), slice_cmp);
	st->start_ns = g->v[0].ts;
	st->end_ns = g->v[0].end;
	for (i = 1; i < g->n; i++)
		if (g->v[i].end > st->end_ns)
			st->end_ns = g->v[i].end;
	st->span_ns = st->end_ns - st->start_ns;
	nall = merge(g->v, g->n, -1, all);
	st->busy_ns = length(all, nall);
	for (i = 1; i < nall; i++)
		keep_gap(st, all[i - 1].end, all[i].ts);
	utilisation(st, all, nall);
	step_verdicts(g, st, all, nall);
	st->idle_ns = st->span_ns - st->busy_ns;
	ncomp = merge(g->v, g->n, TP_GPU_COMPUTE, comp);
	ncomm = merge(g->v, g->n, TP_GPU_COMM, comm);
	st->compute_ns = length(comp, ncomp);
	st->comm_ns = length(comm, ncomm);
	st->non_compute_ns = st->span_ns - st->compute_ns - st->idle_ns;
	st->overlap_ns = intersection(comm, ncomm, comp, ncomp);
	nall = merge(g->v, g->n, TP_GPU_MEMORY, all);
	st->memory_ns = length(all, nall);
	free(all);
	return launch_delays(g, st) ? -1 : 1;
}

void tp_gpu_write_json(const struct tp_gpu_stats *s, struct tp_buf *b)
{
	static const char *const keys[] = {
		"kernel_ns", "memcpy_ns", "memset_ns", "start_ns", "end_ns",
		"span_ns", "busy_ns", "idle_ns", "compute_ns", "comm_ns",
		"memory_ns", "non_compute_ns", "overlap_ns", "launch_delay_sum_ns",
		"launch_delay_min_ns", "launch_delay_p50_ns",
		"launch_delay_p90_ns", "launch_delay_max_ns",
	};
	const int64_t v[] = {
		s->kernel_ns, s->memcpy_ns, s->memset_ns, s->start_ns,
		s->end_ns, s->span_ns, s->busy_ns, s->idle_ns, s->compute_ns,
		s->comm_ns, s->memory_ns, s->non_compute_ns, s->overlap_ns,
		s->delay_sum_ns, s->delay_min_ns, s->delay_p50_ns,
		s->delay_p90_ns, s->delay_max_ns,
	};
	size_t i;

	tp_buf_lit(b, ",\n\"gpu\": {\"version\": 1, \"kernels\": ");
	tp_json_u64(b, s->n_kernel);
	tp_buf_lit(b, ", \"memcpys\": ");
	tp_json_u64(b, s->n_memcpy);
	tp_buf_lit(b, ", \"memsets\": ");
	tp_json_u64(b, s->n_memset);
	tp_buf_lit(b, ", \"launches\": ");
	tp_json_u64(b, s->n_launch);
	tp_buf_lit(b, ", \"steps_cpu_bound\": ");
	tp_json_u64(b, s->steps_cpu_bound);
	tp_buf_lit(b, ", \"steps_gpu_bound\": ");
	tp_json_u64(b, s->steps_gpu_bound);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		tp_buf_lit(b, ", \"");
		tp_buf_cstr(b, keys[i]);
		tp_buf_lit(b, "\": ");
		tp_json_i64(b, v[i]);
	}
	tp_buf_lit(b, ",\n  \"utilisation\": [");
	for (i = 0; i < TP_GPU_BUCKETS; i++) {
		if (i)
			tp_buf_lit(b, ",");
		tp_json_i64(b, s->util[i]);
	}
	tp_buf_lit(b, "]");
}
