/* summary/: the summary aggregator: per-name statistics, histograms, steps,
 * groups, memory, and its JSON/markdown output; on util/ .. session/ and
 * stacks/. */
/* summary.md and the table on stderr at exit: the summary for people. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "host.h"
#include "summary_out.h"

static void put_time(struct tp_buf *b, double ns)
{
	char s[32];

	tp_sum_fmt_time(s, sizeof(s), ns);
	tp_buf_cstr(b, s);
}

static void put_fmt_u64(struct tp_buf *b, uint64_t v)
{
	tp_json_u64(b, v);
}

static void put_pct(struct tp_buf *b, double share)
{
	char s[32];

	snprintf(s, sizeof(s), "%.2f%%", share * 100.0);
	tp_buf_cstr(b, s);
}

static void put_bytes(struct tp_buf *b, double v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double a = v < 0 ? -v : v;
	unsigned u = 0;
	char s[32];

	while (a >= 1024.0 && u < 4) {
		a /= 1024.0;
		v /= 1024.0;
		u++;
	}
	snprintf(s, sizeof(s), u ? "%.2f %s" : "%.0f %s", v, unit[u]);
	tp_buf_cstr(b, s);
}

static int row_is(const struct sum_row *r, const char *const *cats)
{
	for (; *cats; cats++)
		if (!strcmp(r->cat, *cats))
			return 1;
	return 0;
}

static const char *const gpu_cats[] = { "kernel", NULL };
static const char *const copy_cats[] = { "gpu_memcpy", "gpu_memset",
					 "cuda_sync", NULL };
static const char *const cpu_cats[] = { "cuda_runtime", "cuda_driver",
					"cublas", "cudnn", "nccl", "cpu_op",
					NULL };

static void md_rows(struct tp_buf *b, const struct tp_sum *s,
		    const char *title, const char *const *cats)
{
	void **v = tp_sum_sorted(&s->rows, TP_SUM_ROWS);
	size_t i;
	int any = 0;

	for (i = 0; v && i < s->rows.n; i++) {
		const struct sum_row *r = v[i];

		if (!row_is(r, cats))
			continue;
		if (!any++) {
			tp_buf_cstr(b, title);
			tp_buf_lit(b, "\n| Category | Name | Count | Total | "
				   "% wall | Mean | Std | Min | p50 | p90 | "
				   "p99 | Max |\n|---|---|--:|--:|--:|--:|"
				   "--:|--:|--:|--:|--:|--:|\n");
		}
		tp_buf_lit(b, "| ");
		tp_md_cell(b, r->cat, 0);
		tp_buf_lit(b, " | ");
		tp_md_cell(b, r->name, 0);
		tp_buf_lit(b, " | ");
		put_fmt_u64(b, r->count);
		tp_buf_lit(b, " | ");
		put_time(b, (double)r->total);
		tp_buf_lit(b, " | ");
		put_pct(b, tp_sum_share(s, r->total));
		tp_buf_lit(b, " | ");
		put_time(b, r->mean);
		tp_buf_lit(b, " | ");
		put_time(b, tp_sum_row_std(r));
		tp_buf_lit(b, " | ");
		put_time(b, (double)r->min);
		tp_buf_lit(b, " | ");
		put_time(b, (double)tp_sum_row_pct(r, 50));
		tp_buf_lit(b, " | ");
		put_time(b, (double)tp_sum_row_pct(r, 90));
		tp_buf_lit(b, " | ");
		put_time(b, (double)tp_sum_row_pct(r, 99));
		tp_buf_lit(b, " | ");
		put_time(b, (double)r->max);
		tp_buf_lit(b, " |\n");
	}
	if (any)
		tp_buf_char(b, '\n');
	free(v);
}

static void md_gemm(struct tp_buf *b, const struct sum_group *g)
{
	char s[128];

	tp_buf_lit(b, "| ");
	tp_md_cell(b, g->name, 0);
	snprintf(s, sizeof(s), " | %lld | %lld | %lld | %lld | ",
		 (long long)g->m, (long long)g->n, (long long)g->k,
		 (long long)g->batch);
	tp_buf_cstr(b, s);
	tp_md_cell(b, g->dtype ? g->dtype : "?", 0);
	tp_buf_lit(b, " | ");
	put_fmt_u64(b, g->calls);
	tp_buf_lit(b, " | ");
	tp_sum_put_u128(b, g->flops);
	tp_buf_lit(b, " | ");
	put_time(b, (double)g->cpu_ns);
	tp_buf_lit(b, " | ");
	put_time(b, (double)g->gpu_ns);
	if (g->gpu_ns)
		snprintf(s, sizeof(s), " | %.3f |\n",
			 (double)g->flops / (double)g->gpu_ns / 1000.0);
	else
		snprintf(s, sizeof(s), " | - |\n");
	tp_buf_cstr(b, s);
}

static void md_nccl(struct tp_buf *b, const struct sum_group *g)
{
	char s[128];

	tp_buf_lit(b, "| ");
	tp_md_cell(b, g->name, 0);
	tp_buf_lit(b, " | ");
	put_bytes(b, (double)g->bytes);
	tp_buf_lit(b, " | ");
	tp_md_cell(b, g->dtype ? g->dtype : "?", 0);
	snprintf(s, sizeof(s), g->nranks > 0 ? " | %lld | " : " | ? | ",
		 (long long)g->nranks);
	tp_buf_cstr(b, s);
	put_fmt_u64(b, g->calls);
	tp_buf_lit(b, " | ");
	put_time(b, (double)g->cpu_ns);
	tp_buf_lit(b, " | ");
	put_time(b, (double)g->gpu_ns);
	if (g->gpu_ns)
		snprintf(s, sizeof(s), " | %.3f | %.3f |\n", tp_sum_algbw(g),
			 tp_sum_algbw(g) * tp_sum_busbw_factor(g));
	else
		snprintf(s, sizeof(s), " | - | - |\n");
	tp_buf_cstr(b, s);
}

static void md_groups(struct tp_buf *b, const struct tp_sum *s, int kind)
{
	static const char gemm_head[] =
		"## GEMMs (cuBLAS)\n\n| Function | m | n | k | batch | Type "
		"| Calls | FLOPs | CPU time | GPU time | TFLOP/s |\n|---|--:|"
		"--:|--:|--:|---|--:|--:|--:|--:|--:|\n";
	static const char nccl_head[] =
		"## NCCL collectives\n\n| Operation | Size | Type | Ranks | "
		"Calls | CPU time | GPU time | algbw GB/s | busbw GB/s |\n"
		"|---|--:|---|--:|--:|--:|--:|--:|--:|\n";
	void **v = tp_sum_sorted(&s->groups, TP_SUM_GROUPS);
	size_t i;
	int any = 0;

	for (i = 0; v && i < s->groups.n; i++) {
		const struct sum_group *g = v[i];

		if (g->kind != kind)
			continue;
		if (!any++)
			tp_buf_cstr(b, kind == SUM_GEMM ? gemm_head : nccl_head);
		if (kind == SUM_GEMM)
			md_gemm(b, g);
		else
			md_nccl(b, g);
	}
	if (any)
		tp_buf_char(b, '\n');
	free(v);
}

static void md_range(struct tp_buf *b, const struct tp_sum *s,
		     const struct sum_range *r)
{
	tp_buf_lit(b, "| ");
	tp_md_cell(b, r->name, 0);
	tp_buf_lit(b, " | ");
	tp_md_cell(b, r->domain ? r->domain : "", 0);
	tp_buf_lit(b, " | ");
	put_fmt_u64(b, r->repeats);
	tp_buf_lit(b, " | ");
	put_time(b, (double)r->total / (double)(r->repeats ? r->repeats : 1));
	tp_buf_lit(b, " | ");
	put_time(b, (double)r->total);
	tp_buf_lit(b, " | ");
	put_pct(b, tp_sum_share(s, r->total));
	tp_buf_lit(b, " | ");
	if (r->mem_n)
		put_bytes(b, r->mem_net / (double)r->mem_n);
	else
		tp_buf_lit(b, "-");
	tp_buf_lit(b, " | ");
	if (r->mem_n && r->mem_peak != INT64_MIN)
		put_bytes(b, (double)r->mem_peak);
	else
		tp_buf_lit(b, "-");
	tp_buf_lit(b, " |\n");
}

static void md_ranges(struct tp_buf *b, const struct tp_sum *s)
{
	void **v = tp_sum_sorted(&s->ranges, TP_SUM_RANGES);
	size_t i;

	if (!v || !s->ranges.n)
		goto out;
	tp_buf_lit(b, "## Ranges (NVTX, tprof)\n\n| Range | Domain | Repeats "
		   "| Average | Total | % of total | Net memory | Peak memory "
		   "|\n|---|---|--:|--:|--:|--:|--:|--:|\n");
	for (i = 0; i < s->ranges.n; i++)
		md_range(b, s, v[i]);
	tp_buf_char(b, '\n');
out:
	free(v);
}

static void md_steps(struct tp_buf *b, const struct tp_sum *s)
{
	uint64_t total = 0, lo = UINT64_MAX, hi = 0;
	size_t i;

	if (!s->n_steps)
		return;
	for (i = 0; i < s->n_steps; i++) {
		uint64_t d = (uint64_t)s->steps[i].dur;

		total += d;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	tp_buf_lit(b, "## Steps\n\n| Steps kept | Mean | Min | Max |\n"
		   "|--:|--:|--:|--:|\n| ");
	put_fmt_u64(b, s->steps_seen);
	tp_buf_lit(b, " | ");
	put_time(b, (double)total / (double)s->n_steps);
	tp_buf_lit(b, " | ");
	put_time(b, (double)lo);
	tp_buf_lit(b, " | ");
	put_time(b, (double)hi);
	tp_buf_lit(b, " |\n\n");
}

static void md_memory(struct tp_buf *b, const struct tp_sum *s)
{
	unsigned i;
	char d[32];

	if (!s->n_mem)
		return;
	tp_buf_lit(b, "## Device memory\n\n| Device | Peak allocated |\n"
		   "|--:|--:|\n");
	for (i = 0; i < s->n_mem; i++) {
		snprintf(d, sizeof(d), "| %lld | ",
			 (long long)s->mem[i]->device);
		tp_buf_cstr(b, d);
		put_bytes(b, (double)s->mem[i]->peak);
		tp_buf_lit(b, " |\n");
	}
	tp_buf_char(b, '\n');
}

void tp_sum_write_md(struct tp_sum *s, struct tp_buf *b)
{
	const struct tp_sum_info *in = &s->info;
	char line[512];

	snprintf(line, sizeof(line), "# tprof summary: %s, rank %d\n\n",
		 in->name ? in->name : "?", in->rank);
	tp_buf_cstr(b, line);
	snprintf(line, sizeof(line), "Host %s, pid %lld, trace %s.\n",
		 in->host ? in->host : "?", (long long)in->pid,
		 in->trace ? in->trace : "?");
	tp_buf_cstr(b, line);
	tp_buf_lit(b, "Wall time ");
	put_time(b, (double)tp_sum_wall(s));
	snprintf(line, sizeof(line), ", %llu events, %llu dropped.\n\n",
		 (unsigned long long)s->events,
		 (unsigned long long)s->dropped);
	tp_buf_cstr(b, line);
	md_steps(b, s);
	md_rows(b, s, "## GPU kernels\n", gpu_cats);
	md_rows(b, s, "## GPU copies, memsets and syncs\n", copy_cats);
	md_rows(b, s, "## CPU-side calls\n", cpu_cats);
	md_groups(b, s, SUM_GEMM);
	md_groups(b, s, SUM_NCCL);
	md_ranges(b, s);
	md_memory(b, s);
	if (tp_host_any(s->host))
		tp_host_write_md(s->host, b, s->gpu && tp_gpu_any(s->gpu) ?
				 tp_gpu_idle_ns(s->gpu) : -1, tp_sum_wall(s));
}
