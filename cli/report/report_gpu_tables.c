/* tprof report: the GPU analyses' tables (GPU time, temporal breakdown,
 * launch delay, GPU time per range, idle gaps) as plain text cells, from
 * each rank's "gpu" member (summary/gpu_*.c computed it, at exit or
 * from the trace).
 *
 * Called by report_tables.c; calls only down: the cell helpers
 * (report_cells.c) and the formatting helpers (report_fmt.c).
 */
#include "report_tables.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define T 40	/* room for one formatted time */

static void t_gpu(const struct rp_report *rep,
		 const struct rp_tables *ts, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "kernels", "kernel time", "copies", "copy time", "sets",
		"set time", "busy", "GPU span", "busy % of span",
	};
	const struct rp_gpu *g;
	char w[6][T];
	size_t e, k;

	rp_table_init(t, "GPU time", head, "rrrrrrrrrr");
	t->empty = "No GPU activity in the inputs read (summaries of "
		   "schema_version 1 written at exit do not carry it: "
		   "--traces reads the traces).";
	t->note = "busy: the union over streams of every kernel, copy and "
		  "set; GPU span: from the first one's start to the last "
		  "one's end.";
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (k = 0; k < ts->nsel; k++) {
		e = ts->sel[k];
		g = &rep->ranks[e]->gpu;
		if (!g->present)
			continue;
		rp_add_cell(t, "%s", rep->ranks[e]->label);
		rp_add_cell(t, "%" PRIu64, g->kernels);
		rp_add_cell(t, "%s", rp_fmt_ns(w[0], T, g->kernel_ns));
		rp_add_cell(t, "%" PRIu64, g->memcpys);
		rp_add_cell(t, "%s", rp_fmt_ns(w[1], T, g->memcpy_ns));
		rp_add_cell(t, "%" PRIu64, g->memsets);
		rp_add_cell(t, "%s", rp_fmt_ns(w[2], T, g->memset_ns));
		rp_add_cell(t, "%s", rp_fmt_ns(w[3], T, g->busy_ns));
		rp_add_cell(t, "%s", rp_fmt_ns(w[4], T, g->span_ns));
		rp_add_cell(t, "%s", rp_fmt_pct(w[5], T, g->busy_ns, g->span_ns));
		rp_end_row(t, 0);
	}
}

static void t_breakdown(const struct rp_report *rep,
		 const struct rp_tables *ts, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "idle", "compute", "non-compute", "communication",
		"memory", "idle %", "compute %", "non-compute %",
		"comm. overlapped by compute",
	};
	const struct rp_gpu *g;
	char w[9][T];
	size_t e, k;

	rp_table_init(t, "Temporal breakdown", head, "rrrrrrrrrr");
	t->empty = "No GPU activity in the traces read.";
	t->note = "As HTA's get_temporal_breakdown and get_comm_comp_overlap, "
		  "over the GPU span: idle = span - busy; compute: the union "
		  "of computation kernels; non-compute = span - compute - "
		  "idle; communication (nccl...Kernel) and memory (Memcpy, "
		  "Memset) as unions; the last column: the share of "
		  "communication time during which computation ran.";
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (k = 0; k < ts->nsel; k++) {
		e = ts->sel[k];
		g = &rep->ranks[e]->gpu;
		if (!g->present)
			continue;
		rp_add_cell(t, "%s", rep->ranks[e]->label);
		rp_add_cell(t, "%s", rp_fmt_ns(w[0], T, g->idle_ns));
		rp_add_cell(t, "%s", rp_fmt_ns(w[1], T, g->compute_ns));
		rp_add_cell(t, "%s", rp_fmt_ns(w[2], T, g->non_compute_ns));
		rp_add_cell(t, "%s", rp_fmt_ns(w[3], T, g->comm_ns));
		rp_add_cell(t, "%s", rp_fmt_ns(w[4], T, g->memory_ns));
		rp_add_cell(t, "%s", rp_fmt_pct(w[5], T, g->idle_ns, g->span_ns));
		rp_add_cell(t, "%s", rp_fmt_pct(w[6], T, g->compute_ns,
					     g->span_ns));
		rp_add_cell(t, "%s", rp_fmt_pct(w[7], T, g->non_compute_ns,
					     g->span_ns));
		rp_add_cell(t, "%s", rp_fmt_pct(w[8], T, g->overlap_ns,
					     g->comm_ns));
		rp_end_row(t, 0);
	}
}

static void t_launch(const struct rp_report *rep,
		 const struct rp_tables *ts, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "launches", "mean", "min", "p50", "p90", "max",
		"steps CPU-bound", "steps GPU-bound",
	};
	const struct rp_gpu *g;
	char w[5][T];
	size_t e, k;

	rp_table_init(t, "Launch delay", head, "rrrrrrrrr");
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
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (k = 0; k < ts->nsel; k++) {
		e = ts->sel[k];
		g = &rep->ranks[e]->gpu;
		if (!g->present || !g->launches)
			continue;
		rp_add_cell(t, "%s", rep->ranks[e]->label);
		rp_add_cell(t, "%" PRIu64, g->launches);
		rp_add_cell(t, "%s", rp_fmt_ns(w[0], T, (long double)g->delay_sum /
					    g->launches));
		rp_add_cell(t, "%s", rp_fmt_ns(w[1], T, g->delay_min));
		rp_add_cell(t, "%s", rp_fmt_ns(w[2], T, g->delay_p50));
		rp_add_cell(t, "%s", rp_fmt_ns(w[3], T, g->delay_p90));
		rp_add_cell(t, "%s", rp_fmt_ns(w[4], T, g->delay_max));
		rp_add_cell(t, "%" PRIu64, g->steps_cpu_bound);
		rp_add_cell(t, "%" PRIu64, g->steps_gpu_bound);
		rp_end_row(t, 0);
	}
}

static void t_ranges(const struct rp_report *rep,
		 const struct rp_tables *ts, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "range", "calls", "CPU time", "GPU time", "GPU/CPU",
	};
	const struct rp_grange *x;
	const struct rp_gpu *g;
	char w[3][T];
	size_t e, i, k;

	rp_table_init(t, "GPU time per range", head, "rlrrrr");
	t->empty = "No annotated ranges (record_function, NVTX, "
		   "tprof_range) in the traces read.";
	t->note = "Per range name (top 10 per rank by GPU time): the GPU "
		  "time of the kernels, copies and sets launched on the "
		  "range's thread between its start and end (joined by "
		  "correlation id; nested ranges each count what ran inside "
		  "them), against the ranges' own CPU time.";
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (k = 0; k < ts->nsel; k++) {
		e = ts->sel[k];
		g = &rep->ranks[e]->gpu;
		for (i = 0; g->present && i < g->nranges &&
			    i < RP_TOP_RANGES; i++) {
			x = &g->ranges[i];
			rp_add_cell(t, "%s", rep->ranks[e]->label);
			rp_add_cell(t, "%s", x->name);
			rp_add_cell(t, "%" PRIu64, x->calls);
			rp_add_cell(t, "%s", rp_fmt_ns(w[0], T, x->cpu_ns));
			rp_add_cell(t, "%s", rp_fmt_ns(w[1], T, x->gpu_ns));
			rp_add_cell(t, "%s", x->cpu_ns > 0 ? rp_fmt_ratio(w[2], T,
				 (long double)x->gpu_ns / x->cpu_ns) : "-");
			rp_end_row(t, 0);
		}
	}
}

/* "outer > ... > inner", or "-" when no CPU event held the gap. */
static const char *cpu_path(char *buf, size_t size, const struct rp_gap *x)
{
	size_t o = 0, k;

	buf[0] = 0;
	for (k = 0; k < x->ncpu && o < size; k++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s",
				      k ? " > " : "", x->cpu[k]);
	return buf[0] ? buf : "-";
}

static void t_gaps(const struct rp_report *rep,
		 const struct rp_tables *ts, struct rp_table *t)
{
	static const char *const head[] = {
		"rank", "at", "idle for", "CPU then (outer > inner)",
	};
	const struct rp_gap *x;
	const struct rp_gpu *g;
	char w[2][T], path[512];
	size_t e, i, k;

	rp_table_init(t, "Idle gaps", head, "rrrl");
	t->empty = "No GPU-idle interval between GPU activity in the traces "
		   "read.";
	t->note = "The longest intervals with no GPU activity on any stream "
		  "between the first and the last, per rank; at: from the "
		  "rank's first GPU activity; CPU then: the (at most 4 "
		  "innermost) CPU events that held the gap's middle.";
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (k = 0; k < ts->nsel; k++) {
		e = ts->sel[k];
		g = &rep->ranks[e]->gpu;
		for (i = 0; g->present && i < g->ngaps; i++) {
			x = &g->gaps[i];
			rp_add_cell(t, "%s", rep->ranks[e]->label);
			rp_add_cell(t, "%s", rp_fmt_diff(w[0], T,
						      x->start - g->start_ns));
			rp_add_cell(t, "%s", rp_fmt_ns(w[1], T, x->dur));
			rp_add_cell(t, "%s", cpu_path(path, sizeof(path), x));
			rp_end_row(t, 0);
		}
	}
}

void rp_gpu_tables(const struct rp_report *rep, struct rp_tables *ts)
{
	t_gpu(rep, ts, &ts->t[RP_T_GPU]);
	t_breakdown(rep, ts, &ts->t[RP_T_BREAKDOWN]);
	t_launch(rep, ts, &ts->t[RP_T_LAUNCH]);
	t_ranges(rep, ts, &ts->t[RP_T_RANGES]);
	t_gaps(rep, ts, &ts->t[RP_T_GAPS]);
}
