/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* summary.json: the aggregator's tables in the documented schema
 * (docs/reference/summary-format.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tprof.h>

#include "gpu.h"
#include "health.h"
#include "host.h"
#include "summary_int.h"
#include "summary_out.h"

static int cmp_rows(const void *a, const void *b)
{
	const struct sum_row *x = *(const struct sum_row *const *)a;
	const struct sum_row *y = *(const struct sum_row *const *)b;
	int c;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	c = strcmp(x->cat, y->cat);
	return c ? c : strcmp(x->name, y->name);
}

static int cmp_ranges(const void *a, const void *b)
{
	const struct sum_range *x = *(const struct sum_range *const *)a;
	const struct sum_range *y = *(const struct sum_range *const *)b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_groups(const void *a, const void *b)
{
	const struct sum_group *x = *(const struct sum_group *const *)a;
	const struct sum_group *y = *(const struct sum_group *const *)b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns > y->gpu_ns ? -1 : 1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* The table's items in report order; free() the result. */
void **tp_sum_sorted(const struct sum_tab *t, int which)
{
	static int (*const cmp[])(const void *, const void *) = {
		[TP_SUM_ROWS] = cmp_rows,
		[TP_SUM_RANGES] = cmp_ranges,
		[TP_SUM_GROUPS] = cmp_groups,
	};
	void **v = malloc((t->n ? t->n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	if (t->n)
		memcpy(v, t->items, t->n * sizeof(*v));
	qsort(v, t->n, sizeof(*v), cmp[which]);
	return v;
}

int64_t tp_sum_wall(const struct tp_sum *s)
{
	return s->end > s->start ? s->end - s->start : 0;
}

double tp_sum_share(const struct tp_sum *s, uint64_t ns)
{
	int64_t wall = tp_sum_wall(s);

	return wall > 0 ? (double)ns / (double)wall : 0.0;
}

double tp_sum_row_std(const struct sum_row *r)
{
	return r->count ? sqrt(r->m2 / (double)r->count) : 0.0;
}

/* A value with at most three decimals. */
static void put_milli(struct tp_buf *b, double v)
{
	tp_json_us(b, (int64_t)llround(v * 1000.0));
}

static void put_share(struct tp_buf *b, double v)
{
	char s[32];

	snprintf(s, sizeof(s), "%.6f", v);
	tp_buf_cstr(b, s);
}

static void put_str_or_null(struct tp_buf *b, const char *s)
{
	if (s)
		tp_json_str(b, s);
	else
		tp_buf_lit(b, "null");
}

void tp_sum_put_u128(struct tp_buf *b, unsigned __int128 v)
{
	char tmp[48];
	int n = sizeof(tmp);

	do {
		tmp[--n] = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	} while (v);
	tp_buf_put(b, tmp + n, sizeof(tmp) - (size_t)n);
}

void tp_sum_fmt_time(char *s, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(s, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(s, len, "%.3f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(s, len, "%.3f ms", ns / 1e6);
	else
		snprintf(s, len, "%.3f s", ns / 1e9);
}

static void put_hist(struct tp_buf *b, const struct tp_hist *h)
{
	const char *sep = "";
	unsigned i;

	tp_buf_char(b, '[');
	for (i = 0; i < TP_HIST_BUCKETS; i++) {
		uint64_t n = tp_hist_at(h, i);

		if (!n)
			continue;
		tp_buf_cstr(b, sep);
		tp_buf_char(b, '[');
		tp_json_u64(b, i);
		tp_buf_char(b, ',');
		tp_json_u64(b, n);
		tp_buf_char(b, ']');
		sep = ",";
	}
	tp_buf_char(b, ']');
}

uint64_t tp_sum_row_pct(const struct sum_row *r, unsigned pct)
{
	return tp_hist_percentile(&r->hist, pct, r->min, r->max);
}

static void put_row(struct tp_buf *b, const struct tp_sum *s,
		    const struct sum_row *r)
{
	tp_buf_lit(b, "{\"cat\": ");
	tp_json_str(b, r->cat);
	tp_buf_lit(b, ", \"name\": ");
	tp_json_str(b, r->name);
	tp_buf_lit(b, ", \"count\": ");
	tp_json_u64(b, r->count);
	tp_buf_lit(b, ", \"total_ns\": ");
	tp_json_u64(b, r->total);
	tp_buf_lit(b, ", \"mean_ns\": ");
	put_milli(b, r->mean);
	tp_buf_lit(b, ", \"std_ns\": ");
	put_milli(b, tp_sum_row_std(r));
	tp_buf_lit(b, ", \"min_ns\": ");
	tp_json_u64(b, r->count ? r->min : 0);
	tp_buf_lit(b, ", \"max_ns\": ");
	tp_json_u64(b, r->max);
	tp_buf_lit(b, ", \"p50_ns\": ");
	tp_json_u64(b, tp_sum_row_pct(r, 50));
	tp_buf_lit(b, ", \"p90_ns\": ");
	tp_json_u64(b, tp_sum_row_pct(r, 90));
	tp_buf_lit(b, ", \"p99_ns\": ");
	tp_json_u64(b, tp_sum_row_pct(r, 99));
	tp_buf_lit(b, ", \"share\": ");
	put_share(b, tp_sum_share(s, r->total));
	tp_buf_lit(b, ", \"dropped\": ");
	tp_json_u64(b, r->dropped);
	tp_buf_lit(b, ", \"hist\": ");
	put_hist(b, &r->hist);
	tp_buf_char(b, '}');
}

static void put_calls(struct tp_buf *b, const struct tp_sum *s)
{
	void **v = tp_sum_sorted(&s->rows, TP_SUM_ROWS);
	size_t i;

	tp_buf_lit(b, ",\n\"calls\": [");
	for (i = 0; v && i < s->rows.n; i++) {
		tp_buf_cstr(b, i ? ",\n " : "\n ");
		put_row(b, s, v[i]);
	}
	tp_buf_lit(b, "]");
	free(v);
}

/* Bytes per ns is GB/s, over the calls that launched a kernel (one
 * each: calls inside a group launch none of their own). */
double tp_sum_algbw(const struct sum_group *g)
{
	uint64_t n = g->kernels < g->calls ? g->kernels : g->calls;

	return g->gpu_ns ? (double)g->bytes * (double)n /
			   (double)g->gpu_ns : 0.0;
}

/* nccl-tests' bus bandwidth factor. */
double tp_sum_busbw_factor(const struct sum_group *g)
{
	double n = (double)g->nranks;

	if (g->nranks <= 0)
		return 1.0;
	if (!strcmp(g->name, "ncclAllReduce"))
		return 2.0 * (n - 1.0) / n;
	if (!strcmp(g->name, "ncclAllGather") ||
	    !strcmp(g->name, "ncclReduceScatter") ||
	    !strncmp(g->name, "ncclAllToAll", 12) ||
	    !strncmp(g->name, "ncclAlltoAll", 12))
		return (n - 1.0) / n;
	return 1.0;
}

static void put_gemm(struct tp_buf *b, const struct sum_group *g)
{
	tp_buf_lit(b, "{\"name\": ");
	tp_json_str(b, g->name);
	tp_buf_lit(b, ", \"m\": ");
	tp_json_i64(b, g->m);
	tp_buf_lit(b, ", \"n\": ");
	tp_json_i64(b, g->n);
	tp_buf_lit(b, ", \"k\": ");
	tp_json_i64(b, g->k);
	tp_buf_lit(b, ", \"batch\": ");
	tp_json_i64(b, g->batch);
	tp_buf_lit(b, ", \"dtype\": ");
	put_str_or_null(b, g->dtype);
	tp_buf_lit(b, ", \"calls\": ");
	tp_json_u64(b, g->calls);
	tp_buf_lit(b, ", \"cpu_ns\": ");
	tp_json_u64(b, g->cpu_ns);
	tp_buf_lit(b, ", \"flops\": ");
	tp_sum_put_u128(b, g->flops);
	tp_buf_lit(b, ", \"kernels\": ");
	tp_json_u64(b, g->kernels);
	tp_buf_lit(b, ", \"gpu_ns\": ");
	tp_json_u64(b, g->gpu_ns);
	tp_buf_lit(b, ", \"tflops\": ");
	if (g->gpu_ns)
		put_milli(b, (double)g->flops / (double)g->gpu_ns / 1000.0);
	else
		tp_buf_lit(b, "null");
	tp_buf_char(b, '}');
}

static void put_nccl(struct tp_buf *b, const struct sum_group *g)
{
	tp_buf_lit(b, "{\"name\": ");
	tp_json_str(b, g->name);
	tp_buf_lit(b, ", \"bytes\": ");
	tp_json_u64(b, g->bytes);
	tp_buf_lit(b, ", \"dtype\": ");
	put_str_or_null(b, g->dtype);
	tp_buf_lit(b, ", \"nranks\": ");
	if (g->nranks > 0)
		tp_json_i64(b, g->nranks);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"calls\": ");
	tp_json_u64(b, g->calls);
	tp_buf_lit(b, ", \"cpu_ns\": ");
	tp_json_u64(b, g->cpu_ns);
	tp_buf_lit(b, ", \"kernels\": ");
	tp_json_u64(b, g->kernels);
	tp_buf_lit(b, ", \"gpu_ns\": ");
	tp_json_u64(b, g->gpu_ns);
	tp_buf_lit(b, ", \"algbw_gbs\": ");
	if (g->gpu_ns)
		put_milli(b, tp_sum_algbw(g));
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"busbw_gbs\": ");
	if (g->gpu_ns)
		put_milli(b, tp_sum_algbw(g) * tp_sum_busbw_factor(g));
	else
		tp_buf_lit(b, "null");
	tp_buf_char(b, '}');
}

static void put_groups(struct tp_buf *b, const struct tp_sum *s, int kind)
{
	void **v = tp_sum_sorted(&s->groups, TP_SUM_GROUPS);
	const char *sep = "\n ";
	size_t i;

	tp_buf_cstr(b, kind == SUM_GEMM ? ",\n\"gemm\": [" : ",\n\"nccl\": [");
	for (i = 0; v && i < s->groups.n; i++) {
		const struct sum_group *g = v[i];

		if (g->kind != kind)
			continue;
		tp_buf_cstr(b, sep);
		if (kind == SUM_GEMM)
			put_gemm(b, g);
		else
			put_nccl(b, g);
		sep = ",\n ";
	}
	tp_buf_lit(b, "]");
	free(v);
}

static void put_range(struct tp_buf *b, const struct tp_sum *s,
		      const struct sum_range *r)
{
	tp_buf_lit(b, "{\"name\": ");
	tp_json_str(b, r->name);
	tp_buf_lit(b, ", \"domain\": ");
	put_str_or_null(b, r->domain);
	tp_buf_lit(b, ", \"repeats\": ");
	tp_json_u64(b, r->repeats);
	tp_buf_lit(b, ", \"mean_ns\": ");
	put_milli(b, r->repeats ? (double)r->total / (double)r->repeats : 0);
	tp_buf_lit(b, ", \"total_ns\": ");
	tp_json_u64(b, r->total);
	tp_buf_lit(b, ", \"share\": ");
	put_share(b, tp_sum_share(s, r->total));
	tp_buf_lit(b, ", \"min_ns\": ");
	tp_json_u64(b, r->repeats ? r->min : 0);
	tp_buf_lit(b, ", \"max_ns\": ");
	tp_json_u64(b, r->max);
	tp_buf_lit(b, ", \"mem_net_bytes\": ");
	if (r->mem_n)
		tp_json_i64(b, (int64_t)llround(r->mem_net /
						(double)r->mem_n));
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"mem_peak_bytes\": ");
	if (r->mem_n && r->mem_peak != INT64_MIN)
		tp_json_i64(b, r->mem_peak);
	else
		tp_buf_lit(b, "null");
	tp_buf_char(b, '}');
}

static void put_ranges(struct tp_buf *b, const struct tp_sum *s)
{
	void **v = tp_sum_sorted(&s->ranges, TP_SUM_RANGES);
	size_t i;

	tp_buf_lit(b, ",\n\"ranges\": [");
	for (i = 0; v && i < s->ranges.n; i++) {
		tp_buf_cstr(b, i ? ",\n " : "\n ");
		put_range(b, s, v[i]);
	}
	tp_buf_lit(b, "]");
	free(v);
}

static void put_steps(struct tp_buf *b, const struct tp_sum *s)
{
	size_t i;

	tp_buf_lit(b, ",\n\"steps\": {\"count\": ");
	tp_json_u64(b, s->steps_seen);
	tp_buf_lit(b, ", \"times\": [");
	for (i = 0; i < s->n_steps; i++) {
		tp_buf_cstr(b, i ? ", [" : "[");
		tp_json_i64(b, s->steps[i].step);
		tp_buf_char(b, ',');
		tp_json_i64(b, s->steps[i].ts);
		tp_buf_char(b, ',');
		tp_json_i64(b, s->steps[i].dur);
		tp_buf_char(b, ']');
	}
	tp_buf_lit(b, "]}");
}

/* The device's memory, null when the trace did not say. */
static void put_capacity(struct tp_buf *b, const struct tp_sum *s,
			 int64_t device)
{
	unsigned i;

	for (i = 0; i < s->n_capacity; i++)
		if (s->capacity[i].device == device) {
			tp_json_i64(b, s->capacity[i].bytes);
			return;
		}
	tp_buf_lit(b, "null");
}

static void put_memory(struct tp_buf *b, struct tp_sum *s)
{
	unsigned i, j;

	tp_sum_memory_flush(s);
	tp_buf_lit(b, ",\n\"memory\": [");
	for (i = 0; i < s->n_mem; i++) {
		const struct sum_mem *m = s->mem[i];

		tp_buf_cstr(b, i ? ",\n {\"device\": " : "\n {\"device\": ");
		tp_json_i64(b, m->device);
		tp_buf_lit(b, ", \"peak_bytes\": ");
		tp_json_i64(b, m->peak);
		tp_buf_lit(b, ", \"capacity_bytes\": ");
		put_capacity(b, s, m->device);
		tp_buf_lit(b, ", \"points\": [");
		for (j = 0; j < m->n; j++) {
			tp_buf_cstr(b, j ? ",[" : "[");
			tp_json_i64(b, m->pts[j][0]);
			tp_buf_char(b, ',');
			tp_json_i64(b, m->pts[j][1]);
			tp_buf_char(b, ']');
		}
		tp_buf_lit(b, "]}");
	}
	tp_buf_lit(b, "]");
}

static void put_head(struct tp_buf *b, const struct tp_sum *s)
{
	const struct tp_sum_info *in = &s->info;

	tp_buf_lit(b, "{\n\"schema\": \"tprof.summary\",\n"
		   "\"schema_version\": ");
	tp_json_u64(b, TP_SUMMARY_SCHEMA_VERSION);
	tp_buf_lit(b, ",\n\"tprof_version\": \"" TPROF_VERSION
		   "\",\n\"source\": ");
	put_str_or_null(b, in->source);
	tp_buf_lit(b, ",\n\"name\": ");
	put_str_or_null(b, in->name);
	tp_buf_lit(b, ", \"trace\": ");
	put_str_or_null(b, in->trace);
	tp_buf_lit(b, ", \"host\": ");
	put_str_or_null(b, in->host);
	tp_buf_lit(b, ",\n\"pid\": ");
	tp_json_i64(b, in->pid);
	tp_buf_lit(b, ", \"rank\": ");
	if (in->rank >= 0)
		tp_json_i64(b, in->rank);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ", \"world_size\": ");
	if (in->world_size > 0)
		tp_json_i64(b, in->world_size);
	else
		tp_buf_lit(b, "null");
	tp_buf_lit(b, ",\n\"base_time_ns\": ");
	tp_json_i64(b, in->base_ns);
	tp_buf_lit(b, ",\n\"start_ns\": ");
	tp_json_i64(b, s->end > s->start ? s->start : 0);
	tp_buf_lit(b, ", \"end_ns\": ");
	tp_json_i64(b, s->end > s->start ? s->end : 0);
	tp_buf_lit(b, ", \"wall_ns\": ");
	tp_json_i64(b, tp_sum_wall(s));
	tp_buf_lit(b, ",\n\"events\": ");
	tp_json_u64(b, s->events);
	tp_buf_lit(b, ",\n\"dropped\": ");
	tp_json_u64(b, s->dropped);
}

void tp_sum_write_json(struct tp_sum *s, struct tp_buf *b,
		       tp_sum_extra_fn extra, void *ctx)
{
	put_head(b, s);
	put_steps(b, s);
	put_calls(b, s);
	put_groups(b, s, SUM_GEMM);
	put_groups(b, s, SUM_NCCL);
	put_ranges(b, s);
	put_memory(b, s);
	if (s->gpu && tp_gpu_any(s->gpu))
		tp_gpu_write_json(s->gpu, b);
	tp_health_write_json(s->health, b);
	if (tp_host_any(s->host))
		tp_host_write_json(s->host, b, s->gpu && tp_gpu_any(s->gpu) ?
				   tp_gpu_idle_ns(s->gpu) : -1);
	if (extra)
		extra(b, ctx);
	tp_buf_lit(b, "\n}\n");
}
