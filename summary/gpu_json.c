/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* The summary's "gpu" member (docs/reference/summary-format.md, version 2): what
 * the sweep found, the ranges by GPU time, the idle gaps with their CPU
 * context, and what a bounded window could not keep exact. Calls
 * gpu_feed.c (to end the sweep), gpu_sweep.c and gpu_join.c.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

static void put_i64(struct tp_buf *b, const char *key, int64_t v)
{
	tp_buf_lit(b, ", \"");
	tp_buf_cstr(b, key);
	tp_buf_lit(b, "\": ");
	tp_json_i64(b, v);
}

static void put_u64(struct tp_buf *b, const char *key, uint64_t v)
{
	tp_buf_lit(b, ", \"");
	tp_buf_cstr(b, key);
	tp_buf_lit(b, "\": ");
	tp_json_u64(b, v);
}

static void put_counts(const struct tp_gpu *g, struct tp_buf *b)
{
	int64_t span = g->end_ns - g->start_ns;
	int64_t idle = span - g->all.len;

	tp_buf_lit(b, ",\n\"gpu\": {\"version\": 2");
	put_u64(b, "kernels", g->n_kernel);
	put_u64(b, "memcpys", g->n_memcpy);
	put_u64(b, "memsets", g->n_memset);
	put_u64(b, "launches", g->n_launch);
	put_u64(b, "steps_cpu_bound", g->steps_cpu_bound);
	put_u64(b, "steps_gpu_bound", g->steps_gpu_bound);
	put_i64(b, "kernel_ns", g->kernel_ns);
	put_i64(b, "memcpy_ns", g->memcpy_ns);
	put_i64(b, "memset_ns", g->memset_ns);
	put_i64(b, "start_ns", g->start_ns);
	put_i64(b, "end_ns", g->end_ns);
	put_i64(b, "span_ns", span);
	put_i64(b, "busy_ns", g->all.len);
	put_i64(b, "idle_ns", idle);
	put_i64(b, "compute_ns", g->comp.len);
	put_i64(b, "comm_ns", g->comm.len);
	put_i64(b, "memory_ns", g->mem.len);
	put_i64(b, "non_compute_ns", span - g->comp.len - idle);
	put_i64(b, "overlap_ns", g->comp.len + g->comm.len - g->cc.len);
	put_i64(b, "launch_delay_sum_ns", g->delay_sum);
	put_i64(b, "launch_delay_min_ns", g->n_launch ? g->delay_min : 0);
	put_i64(b, "launch_delay_p50_ns", tp_gpu_delay_pct(g, 50));
	put_i64(b, "launch_delay_p90_ns", tp_gpu_delay_pct(g, 90));
	put_i64(b, "launch_delay_max_ns", g->n_launch ? g->delay_max : 0);
}

static void put_util(const struct tp_gpu *g, struct tp_buf *b)
{
	int64_t util[TP_GPU_BUCKETS];
	size_t i;

	tp_gpu_util(g, util);
	tp_buf_lit(b, ",\n  \"utilisation\": [");
	for (i = 0; i < TP_GPU_BUCKETS; i++) {
		if (i)
			tp_buf_lit(b, ",");
		tp_json_i64(b, util[i]);
	}
	tp_buf_lit(b, "]");
}

struct rname_ref {
	const char *name;
	const struct gpu_rname *r;
};

static int rname_cmp(const void *a, const void *b)
{
	const struct rname_ref *x = a, *y = b;

	if (x->r->gpu_ns != y->r->gpu_ns)
		return x->r->gpu_ns > y->r->gpu_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Per range name, by GPU time, largest first. */
static void put_ranges(const struct tp_gpu *g, struct tp_buf *b)
{
	struct rname_ref *v = malloc((g->capnames + 1) * sizeof(*v));
	size_t i, n = 0;

	if (!v) {
		b->oom = 1;
		return;
	}
	for (i = 0; i < g->capnames; i++)
		if (g->names[i].is_range)
			v[n++] = (struct rname_ref){ g->strs.s[i],
						     &g->names[i] };
	qsort(v, n, sizeof(*v), rname_cmp);
	tp_buf_lit(b, ", \"ranges\": [");
	for (i = 0; i < n; i++) {
		tp_buf_cstr(b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		tp_json_str(b, v[i].name);
		put_u64(b, "calls", v[i].r->calls);
		put_i64(b, "cpu_ns", v[i].r->cpu_ns);
		put_i64(b, "gpu_ns", v[i].r->gpu_ns);
		tp_buf_lit(b, "}");
	}
	tp_buf_lit(b, "]");
	free(v);
}

static void put_gaps(const struct tp_gpu *g, struct tp_buf *b)
{
	const struct gpu_gap *gap;
	size_t i, k;

	tp_buf_lit(b, ", \"idle_gaps\": [");
	for (i = 0; i < g->ngaps; i++) {
		gap = &g->gaps[i];
		tp_buf_cstr(b, i ? ",\n  {\"start_ns\": " :
				   "\n  {\"start_ns\": ");
		tp_json_i64(b, gap->start);
		put_i64(b, "dur_ns", gap->end - gap->start);
		tp_buf_lit(b, ", \"cpu\": [");
		for (k = 0; k < gap->ncpu; k++) {
			if (k)
				tp_buf_lit(b, ", ");
			tp_json_str(b, g->strs.s[gap->cpu[k]]);
		}
		tp_buf_lit(b, "]}");
	}
	tp_buf_lit(b, "]");
}

static void put_approx(const struct tp_gpu *g, struct tp_buf *b)
{
	const struct gpu_approx *a = &g->ap;

	tp_buf_lit(b, ",\n  \"window\": ");
	tp_json_u64(b, g->window);
	tp_buf_lit(b, ", \"approx\": {\"late\": ");
	tp_json_u64(b, a->late);
	put_u64(b, "late_slices", a->late_slices);
	put_i64(b, "late_slice_ns", a->late_slice_ns);
	put_u64(b, "calls_evicted", a->calls_evicted);
	put_u64(b, "cpu_dropped", a->cpu_dropped);
	put_u64(b, "ranges_dropped", a->ranges_dropped);
	put_u64(b, "steps_dropped", a->steps_dropped);
	put_u64(b, "range_tags_dropped", a->tags_dropped);
	tp_buf_lit(b, ", \"launch_delays_binned\": ");
	tp_buf_cstr(b, a->delays_binned ? "true" : "false");
	tp_buf_lit(b, ", \"utilisation_binned\": ");
	tp_buf_cstr(b, a->util_binned ? "true" : "false");
	tp_buf_lit(b, "}");
}

int64_t tp_gpu_idle_ns(const struct tp_gpu *g)
{
	if (!g || !g->any_slice || g->oom)
		return -1;
	return g->end_ns - g->start_ns - g->all.len;
}

void tp_gpu_write_json(struct tp_gpu *g, struct tp_buf *b)
{
	tp_gpu_drain(g);
	if (g->oom) {	/* the rest of the summary is still worth having */
		tp_buf_lit(b, ",\n\"gpu\": null");
		return;
	}
	put_counts(g, b);
	put_util(g, b);
	put_ranges(g, b);
	put_gaps(g, b);
	put_approx(g, b);
	tp_buf_lit(b, "}");
}
