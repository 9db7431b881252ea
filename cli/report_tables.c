/* tprof report: the report's tables as plain text cells, built once and
 * rendered as Markdown or HTML, so the two always say the same. */
#define _GNU_SOURCE	/* vasprintf */
#include "report_tables.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T 40	/* room for one formatted time */

static void add_cell(struct rp_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends the next cell, row by row; out of memory: marks the table. */
static void add_cell(struct rp_table *t, const char *fmt, ...)
{
	size_t n = t->nrows * t->ncols + t->fill, cap;
	va_list ap;
	char **v;

	if (t->oom)
		return;
	if (n == t->cap) {
		cap = t->cap ? t->cap * 2 : 64;
		v = realloc(t->cells, cap * sizeof(*v));
		if (!v) {
			t->oom = 1;
			return;
		}
		t->cells = v;
		t->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&t->cells[n], fmt, ap) < 0)
		t->oom = 1;
	va_end(ap);
	if (t->oom)
		return;
	if (++t->fill == t->ncols) {
		t->fill = 0;
		t->nrows++;
	}
}

/* Ends a row: remembers whether it is flagged. */
static void end_row(struct rp_table *t, int flagged)
{
	unsigned char *f;

	if (t->oom)
		return;
	f = realloc(t->flag, t->nrows ? t->nrows : 1);
	if (!f) {
		t->oom = 1;
		return;
	}
	t->flag = f;
	t->flag[t->nrows - 1] = (unsigned char)flagged;
}

static void table_init(struct rp_table *t, const char *title,
		       const char *const *head, const char *align)
{
	memset(t, 0, sizeof(*t));
	t->title = title;
	t->head = head;
	t->align = align;
	t->ncols = strlen(align);
}

static size_t count_kind(const struct rp_report *rep, const char *kind)
{
	size_t i, n = 0;

	for (i = 0; i < rep->nranks; i++)
		n += !strcmp(rep->ranks[i]->kind, kind);
	return n;
}

static void t_ranks(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "file", "source", "wall", "events", "dropped", "steps",
		"peak GPU memory",
	};
	const struct rp_rank *r;
	char w[T];
	size_t i;

	table_init(t, "Ranks", head, "rllrrrrr");
	for (i = 0; i < rep->nranks; i++) {
		r = rep->ranks[i];
		add_cell(t, "%s", r->label);
		add_cell(t, "%s", r->path);
		add_cell(t, "%s", r->kind);
		add_cell(t, "%s", r->wall_ns == RP_NONE ? "-" :
			 rp_fmt_ns(w, T, r->wall_ns));
		add_cell(t, "%" PRIu64, r->events);
		add_cell(t, "%" PRIu64, r->dropped);
		add_cell(t, "%" PRIu64, r->steps_count);
		add_cell(t, "%s", rp_mem_peak(r) == RP_NONE ? "-" :
			 rp_fmt_bytes(w, T, rp_mem_peak(r)));
		end_row(t, 0);
	}
}

static void t_names(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"category", "name", "ranks", "mean total", "std", "min", "max",
		"mean call", "slowest rank", "imbalance", "flag",
	};
	const struct rp_name *nm;
	char w[6][T];
	size_t i;

	table_init(t, "Top names across ranks", head, "llrrrrrrrrl");
	t->note = "Per (category, name), the statistics of each rank's total "
		  "time, over the ranks that have it; mean call: all calls of "
		  "those ranks pooled; imbalance: max / mean total; "
		  "straggler: on 2 ranks or more, imbalance >= 1.10 and "
		  "max - mean >= 1 ms.";
	t->empty = "No calls.";
	for (i = 0; i < rep->nnames && i < RP_TOP_NAMES; i++) {
		nm = &rep->names[i];
		add_cell(t, "%s", nm->cat);
		add_cell(t, "%s", nm->name);
		add_cell(t, "%zu/%zu", nm->present, rep->nranks);
		add_cell(t, "%s", rp_fmt_ns(w[0], T, nm->mean_total));
		add_cell(t, "%s", rp_fmt_ns(w[1], T, nm->std_total));
		add_cell(t, "%s", rp_fmt_ns(w[2], T, nm->min_total));
		add_cell(t, "%s", rp_fmt_ns(w[3], T, nm->max_total));
		add_cell(t, "%s", rp_fmt_ns(w[4], T, nm->mean_call));
		add_cell(t, "%s", rep->ranks[nm->slowest]->label);
		add_cell(t, "%s", rp_fmt_ratio(w[5], T, nm->imbalance));
		add_cell(t, "%s", nm->straggler ? "straggler" : "");
		end_row(t, nm->straggler);
	}
}

static void t_detail(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"category", "name", "rank", "count", "total", "mean",
	};
	const struct rp_name *nm;
	const struct rp_row *row;
	char w[2][T];
	size_t i, e;

	table_init(t, "Per-rank detail (top 10 names)", head, "llrrrr");
	t->empty = "No calls.";
	for (i = 0; i < rep->nnames && i < RP_TOP_DETAIL; i++) {
		nm = &rep->names[i];
		for (e = 0; e < rep->nranks; e++) {
			row = nm->rows[e];
			if (!row)
				continue;
			add_cell(t, "%s", nm->cat);
			add_cell(t, "%s", nm->name);
			add_cell(t, "%s", rep->ranks[e]->label);
			add_cell(t, "%" PRIu64, row->count);
			add_cell(t, "%s", rp_fmt_ns(w[0], T, row->total));
			add_cell(t, "%s", row->count ? rp_fmt_ns(w[1], T,
				 (long double)row->total / row->count) : "-");
			end_row(t, 0);
		}
	}
}

static void t_steps(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "steps", "mean", "p50", "max", "vs fastest", "flag",
	};
	const struct rp_steps *st;
	char w[4][T];
	size_t e;

	table_init(t, "Steps", head, "rrrrrrl");
	t->empty = "No steps (ProfilerStep#N) in any rank.";
	if (!rep->with_steps)
		return;
	snprintf(t->note_buf, sizeof(t->note_buf), "Verdict: each rank's "
		 "median step, its first step left out as start-up (the "
		 "first two from %d steps); a rank whose verdict is >= 1.10 "
		 "times the median rank's, %s, is a straggler. p50: the "
		 "ceil(n/2)-th shortest step.", RP_WARMUP_MORE,
		 rp_fmt_ns(w[0], T, rep->steps_reference));
	t->note = t->note_buf;
	for (e = 0; e < rep->nranks; e++) {
		st = &rep->steps[e];
		add_cell(t, "%s", rep->ranks[e]->label);
		add_cell(t, "%zu", st->n);
		add_cell(t, "%s", st->n ? rp_fmt_ns(w[0], T, st->mean) : "-");
		add_cell(t, "%s", st->n ? rp_fmt_ns(w[1], T, st->p50) : "-");
		add_cell(t, "%s", st->n ? rp_fmt_ns(w[2], T, st->max) : "-");
		add_cell(t, "%s", st->n ? rp_fmt_diff(w[3], T, st->vs_fastest) :
			 "-");
		add_cell(t, "%s", st->straggler ? "straggler" : "");
		end_row(t, st->straggler);
	}
}

static void add_line(struct rp_tables *ts, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_line(struct rp_tables *ts, const char *fmt, ...)
{
	va_list ap;
	char **v;

	if (ts->oom)
		return;
	v = realloc(ts->lines, (ts->nlines + 1) * sizeof(*v));
	if (!v) {
		ts->oom = 1;
		return;
	}
	ts->lines = v;
	va_start(ap, fmt);
	if (vasprintf(&ts->lines[ts->nlines], fmt, ap) < 0)
		ts->oom = 1;
	else
		ts->nlines++;
	va_end(ap);
}

static void l_stragglers(const struct rp_report *rep, struct rp_tables *ts)
{
	const struct rp_steps *st;
	const struct rp_name *nm;
	char w[4][T];
	size_t i;

	for (i = 0; i < rep->nranks; i++) {
		st = &rep->steps[i];
		if (st->straggler)
			add_line(ts, "rank %s: median step %s (its first %zu "
				 "left out: start-up) is %s times the median "
				 "rank's %s", rep->ranks[i]->label,
				 rp_fmt_ns(w[0], T, st->verdict), st->warmup,
				 rp_fmt_ratio(w[1], T, (long double)st->verdict /
					      rep->steps_reference),
				 rp_fmt_ns(w[2], T, rep->steps_reference));
	}
	for (i = 0; i < rep->nnames && i < RP_TOP_NAMES; i++) {
		nm = &rep->names[i];
		if (nm->straggler)
			add_line(ts, "%s %s: rank %s's total %s is %s times "
				 "the mean %s (%s)", nm->cat, nm->name,
				 rep->ranks[nm->slowest]->label,
				 rp_fmt_ns(w[0], T, nm->max_total),
				 rp_fmt_ratio(w[1], T, nm->imbalance),
				 rp_fmt_ns(w[2], T, nm->mean_total),
				 rp_fmt_diff(w[3], T, nm->max_total -
					     nm->mean_total));
	}
}

static void t_gpu(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "kernels", "kernel time", "copies", "copy time", "sets",
		"set time", "busy", "GPU span", "busy % of span",
	};
	const struct rp_gpu *g;
	char w[6][T];
	size_t e;

	table_init(t, "GPU time", head, "rrrrrrrrrr");
	t->empty = "No GPU activity in the traces read (summaries written "
		   "at exit do not carry it yet).";
	t->note = "busy: the union over streams of every kernel, copy and "
		  "set; GPU span: from the first one's start to the last "
		  "one's end.";
	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		if (!g->present)
			continue;
		add_cell(t, "%s", rep->ranks[e]->label);
		add_cell(t, "%" PRIu64, g->kernels);
		add_cell(t, "%s", rp_fmt_ns(w[0], T, g->kernel_ns));
		add_cell(t, "%" PRIu64, g->memcpys);
		add_cell(t, "%s", rp_fmt_ns(w[1], T, g->memcpy_ns));
		add_cell(t, "%" PRIu64, g->memsets);
		add_cell(t, "%s", rp_fmt_ns(w[2], T, g->memset_ns));
		add_cell(t, "%s", rp_fmt_ns(w[3], T, g->busy_ns));
		add_cell(t, "%s", rp_fmt_ns(w[4], T, g->span_ns));
		add_cell(t, "%s", rp_fmt_pct(w[5], T, g->busy_ns, g->span_ns));
		end_row(t, 0);
	}
}

static void t_breakdown(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "idle", "compute", "non-compute", "communication",
		"memory", "idle %", "compute %", "non-compute %",
		"comm. overlapped by compute",
	};
	const struct rp_gpu *g;
	char w[9][T];
	size_t e;

	table_init(t, "Temporal breakdown", head, "rrrrrrrrrr");
	t->empty = "No GPU activity in the traces read.";
	t->note = "As HTA's get_temporal_breakdown and get_comm_comp_overlap, "
		  "over the GPU span: idle = span - busy; compute: the union "
		  "of computation kernels; non-compute = span - compute - "
		  "idle; communication (nccl...Kernel) and memory (Memcpy, "
		  "Memset) as unions; the last column: the share of "
		  "communication time during which computation ran.";
	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		if (!g->present)
			continue;
		add_cell(t, "%s", rep->ranks[e]->label);
		add_cell(t, "%s", rp_fmt_ns(w[0], T, g->idle_ns));
		add_cell(t, "%s", rp_fmt_ns(w[1], T, g->compute_ns));
		add_cell(t, "%s", rp_fmt_ns(w[2], T, g->non_compute_ns));
		add_cell(t, "%s", rp_fmt_ns(w[3], T, g->comm_ns));
		add_cell(t, "%s", rp_fmt_ns(w[4], T, g->memory_ns));
		add_cell(t, "%s", rp_fmt_pct(w[5], T, g->idle_ns, g->span_ns));
		add_cell(t, "%s", rp_fmt_pct(w[6], T, g->compute_ns,
					     g->span_ns));
		add_cell(t, "%s", rp_fmt_pct(w[7], T, g->non_compute_ns,
					     g->span_ns));
		add_cell(t, "%s", rp_fmt_pct(w[8], T, g->overlap_ns,
					     g->comm_ns));
		end_row(t, 0);
	}
}

static void t_launch(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "launches", "mean", "min", "p50", "p90", "max",
		"steps CPU-bound", "steps GPU-bound",
	};
	const struct rp_gpu *g;
	char w[5][T];
	size_t e;

	table_init(t, "Launch delay", head, "rrrrrrrrr");
	t->empty = "No GPU work joined to its launch call in the traces read.";
	t->note = "From the end of each runtime or driver call to the start "
		  "of the kernel, copy or set it launched (same correlation "
		  "id), as HTA's get_cuda_kernel_launch_stats: the time work "
		  "waited in the GPU's queue. Long delays: the GPU was busy "
		  "(GPU-bound); short ones with an idle GPU: the CPU did not "
		  "launch fast enough (CPU-bound). p50, p90: nearest rank. "
		  "A step (ProfilerStep#N) is CPU-bound when the GPU was "
		  "busy for less than half of its window: it waited for "
		  "launches; GPU-bound otherwise.";
	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		if (!g->present || !g->launches)
			continue;
		add_cell(t, "%s", rep->ranks[e]->label);
		add_cell(t, "%" PRIu64, g->launches);
		add_cell(t, "%s", rp_fmt_ns(w[0], T, (long double)g->delay_sum /
					    g->launches));
		add_cell(t, "%s", rp_fmt_ns(w[1], T, g->delay_min));
		add_cell(t, "%s", rp_fmt_ns(w[2], T, g->delay_p50));
		add_cell(t, "%s", rp_fmt_ns(w[3], T, g->delay_p90));
		add_cell(t, "%s", rp_fmt_ns(w[4], T, g->delay_max));
		add_cell(t, "%" PRIu64, g->steps_cpu_bound);
		add_cell(t, "%" PRIu64, g->steps_gpu_bound);
		end_row(t, 0);
	}
}

static void t_ranges(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "range", "calls", "CPU time", "GPU time", "GPU/CPU",
	};
	const struct rp_grange *x;
	const struct rp_gpu *g;
	char w[3][T];
	size_t e, i;

	table_init(t, "GPU time per range", head, "rlrrrr");
	t->empty = "No annotated ranges (record_function, NVTX, "
		   "tprof_range) in the traces read.";
	t->note = "Per range name (top 10 per rank by GPU time): the GPU "
		  "time of the kernels, copies and sets launched on the "
		  "range's thread between its start and end (joined by "
		  "correlation id; nested ranges each count what ran inside "
		  "them), against the ranges' own CPU time.";
	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		for (i = 0; g->present && i < g->nranges &&
			    i < RP_TOP_RANGES; i++) {
			x = &g->ranges[i];
			add_cell(t, "%s", rep->ranks[e]->label);
			add_cell(t, "%s", x->name);
			add_cell(t, "%" PRIu64, x->calls);
			add_cell(t, "%s", rp_fmt_ns(w[0], T, x->cpu_ns));
			add_cell(t, "%s", rp_fmt_ns(w[1], T, x->gpu_ns));
			add_cell(t, "%s", x->cpu_ns > 0 ? rp_fmt_ratio(w[2], T,
				 (long double)x->gpu_ns / x->cpu_ns) : "-");
			end_row(t, 0);
		}
	}
}

/* "outer > ... > inner", or "-" when no CPU event held the gap. */
static const char *cpu_path(char *buf, size_t size,
			    const struct tp_json_node *cpu)
{
	const struct tp_json_node *c;
	size_t o = 0;

	buf[0] = 0;
	for (c = cpu ? cpu->child : NULL; c && o < size; c = c->next)
		o += (size_t)snprintf(buf + o, size - o, "%s%s",
				      c == cpu->child ? "" : " > ", c->str);
	return buf[0] ? buf : "-";
}

static void t_gaps(const struct rp_report *rep, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "at", "idle for", "CPU then (outer > inner)",
	};
	const struct rp_gap *x;
	const struct rp_gpu *g;
	char w[2][T], path[512];
	size_t e, i;

	table_init(t, "Idle gaps", head, "rrrl");
	t->empty = "No GPU-idle interval between GPU activity in the traces "
		   "read.";
	t->note = "The longest intervals with no GPU activity on any stream "
		  "between the first and the last, per rank; at: from the "
		  "rank's first GPU activity; CPU then: the (at most 4 "
		  "innermost) CPU events that held the gap's middle.";
	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		for (i = 0; g->present && i < g->ngaps; i++) {
			x = &g->gaps[i];
			add_cell(t, "%s", rep->ranks[e]->label);
			add_cell(t, "%s", rp_fmt_diff(w[0], T,
						      x->start - g->start_ns));
			add_cell(t, "%s", rp_fmt_ns(w[1], T, x->dur));
			add_cell(t, "%s", cpu_path(path, sizeof(path), x->cpu));
			end_row(t, 0);
		}
	}
}

int rp_tables_build(const struct rp_report *rep, struct rp_tables *ts)
{
	size_t i;

	memset(ts, 0, sizeof(*ts));
	snprintf(ts->intro, sizeof(ts->intro), "%zu rank%s (%zu from "
		 "summaries, %zu from traces)", rep->nranks,
		 rep->nranks == 1 ? "" : "s",
		 count_kind(rep, "summary"), count_kind(rep, "trace"));
	t_ranks(rep, &ts->t[RP_T_RANKS]);
	t_names(rep, &ts->t[RP_T_NAMES]);
	t_detail(rep, &ts->t[RP_T_DETAIL]);
	t_steps(rep, &ts->t[RP_T_STEPS]);
	t_gpu(rep, &ts->t[RP_T_GPU]);
	t_breakdown(rep, &ts->t[RP_T_BREAKDOWN]);
	t_launch(rep, &ts->t[RP_T_LAUNCH]);
	t_ranges(rep, &ts->t[RP_T_RANGES]);
	t_gaps(rep, &ts->t[RP_T_GAPS]);
	l_stragglers(rep, ts);
	for (i = 0; i < RP_N_TABLES; i++)
		ts->oom |= ts->t[i].oom;
	return ts->oom ? -1 : 0;
}

void rp_tables_free(struct rp_tables *ts)
{
	size_t i, k, n;

	for (i = 0; i < RP_N_TABLES; i++) {
		n = ts->t[i].nrows * ts->t[i].ncols + ts->t[i].fill;
		for (k = 0; k < n; k++)
			free(ts->t[i].cells[k]);
		free(ts->t[i].cells);
		free(ts->t[i].flag);
	}
	for (i = 0; i < ts->nlines; i++)
		free(ts->lines[i]);
	free(ts->lines);
}
