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

static size_t count_kind(const struct rp_report *rep, const char *kind)
{
	size_t i, n = 0;

	for (i = 0; i < rep->nranks; i++)
		n += !strcmp(rep->ranks[i]->kind, kind);
	return n;
}

static void t_ranks(const struct rp_report *rep, struct rp_tables *ts)
{
	struct rp_table *t = &ts->t[RP_T_RANKS];
	static const char *const head[] = {
		"rank", "file", "source", "wall", "events", "dropped", "steps",
		"peak GPU memory",
	};
	const struct rp_rank *r;
	char w[T];
	size_t i;

	rp_table_init(t, "Inputs", head, "rllrrrrr");
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (i = 0; i < ts->nsel; i++) {
		r = rep->ranks[ts->sel[i]];
		rp_add_cell(t, "%s", r->label);
		rp_add_cell(t, "%s", r->path);
		rp_add_cell(t, "%s", r->kind);
		rp_add_cell(t, "%s", r->wall_ns == RP_NONE ? "-" :
			 rp_fmt_ns(w, T, r->wall_ns));
		rp_add_cell(t, "%" PRIu64, r->events);
		rp_add_cell(t, "%" PRIu64, r->dropped);
		rp_add_cell(t, "%" PRIu64, r->steps_count);
		rp_add_cell(t, "%s", rp_mem_peak(r) == RP_NONE ? "-" :
			 rp_fmt_bytes(w, T, rp_mem_peak(r)));
		rp_end_row(t, 0);
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

	rp_table_init(t, "Top names across ranks", head, "llrrrrrrrrl");
	snprintf(t->title_buf, sizeof(t->title_buf), "Top %zu names across "
		 "ranks", rep->top);
	t->title = t->title_buf;
	t->note = "Per (category, name), the statistics of each rank's total "
		  "time, over the ranks that have it; mean call: all calls of "
		  "those ranks pooled; imbalance: max / mean total; "
		  "straggler: on 2 ranks or more, imbalance >= 1.10 and "
		  "max - mean >= 1 ms.";
	t->empty = "No calls.";
	for (i = 0; i < rep->nnames && i < rep->top; i++) {
		nm = &rep->names[i];
		rp_add_cell(t, "%s", nm->cat);
		rp_add_cell(t, "%s", nm->name);
		rp_add_cell(t, "%zu/%zu", nm->present, rep->nranks);
		rp_add_cell(t, "%s", rp_fmt_ns(w[0], T, nm->mean_total));
		rp_add_cell(t, "%s", rp_fmt_ns(w[1], T, nm->std_total));
		rp_add_cell(t, "%s", rp_fmt_ns(w[2], T, nm->min_total));
		rp_add_cell(t, "%s", rp_fmt_ns(w[3], T, nm->max_total));
		rp_add_cell(t, "%s", rp_fmt_ns(w[4], T, nm->mean_call));
		rp_add_cell(t, "%s", rep->ranks[nm->slowest]->label);
		rp_add_cell(t, "%s", rp_fmt_ratio(w[5], T, nm->imbalance));
		rp_add_cell(t, "%s", nm->straggler ? "straggler" : "");
		rp_end_row(t, nm->straggler);
	}
}

static void t_detail(const struct rp_report *rep, struct rp_tables *ts)
{
	struct rp_table *t = &ts->t[RP_T_DETAIL];
	static const char *const head[] = {
		"category", "name", "rank", "count", "total", "mean",
	};
	const struct rp_name *nm;
	const struct rp_row *row;
	char w[2][T];
	size_t i, k, e;

	rp_table_init(t, "Per-rank detail (top 10 names)", head, "llrrrr");
	t->empty = "No calls.";
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (i = 0; i < rep->nnames && i < RP_TOP_DETAIL && i < rep->top;
	     i++) {
		nm = &rep->names[i];
		for (k = 0; k < ts->nsel; k++) {
			e = ts->sel[k];
			row = nm->rows[e];
			if (!row)
				continue;
			rp_add_cell(t, "%s", nm->cat);
			rp_add_cell(t, "%s", nm->name);
			rp_add_cell(t, "%s", rep->ranks[e]->label);
			rp_add_cell(t, "%" PRIu64, row->count);
			rp_add_cell(t, "%s", rp_fmt_ns(w[0], T, row->total));
			rp_add_cell(t, "%s", row->count ? rp_fmt_ns(w[1], T,
				 (long double)row->total / row->count) : "-");
			rp_end_row(t, 0);
		}
	}
}

static void t_steps(const struct rp_report *rep, struct rp_tables *ts)
{
	struct rp_table *t = &ts->t[RP_T_STEPS];
	static const char *const head[] = {
		"rank", "steps", "mean", "p50", "max", "vs fastest", "flag",
	};
	const struct rp_steps *st;
	char w[4][T];
	size_t e, k;

	rp_table_init(t, "Steps", head, "rrrrrrl");
	t->sel_note = ts->many ? ts->sel_note : NULL;
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
	for (k = 0; k < ts->nsel; k++) {
		e = ts->sel[k];
		st = &rep->steps[e];
		rp_add_cell(t, "%s", rep->ranks[e]->label);
		rp_add_cell(t, "%zu", st->n);
		rp_add_cell(t, "%s", st->n ? rp_fmt_ns(w[0], T, st->mean) : "-");
		rp_add_cell(t, "%s", st->n ? rp_fmt_ns(w[1], T, st->p50) : "-");
		rp_add_cell(t, "%s", st->n ? rp_fmt_ns(w[2], T, st->max) : "-");
		rp_add_cell(t, "%s", st->n ? rp_fmt_diff(w[3], T, st->vs_fastest) :
			 "-");
		rp_add_cell(t, "%s", st->straggler ? "straggler" : "");
		rp_end_row(t, st->straggler);
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
	for (i = 0; i < rep->nnames && i < rep->top; i++) {
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

/* "4 ranks (4 from summaries, 0 from traces); median step 13.000 ms." */
static void intro(const struct rp_report *rep, struct rp_tables *ts)
{
	char w[T];
	int n;

	n = snprintf(ts->intro, sizeof(ts->intro), "%zu rank%s (%zu from "
		     "summaries, %zu from traces)", rep->nranks,
		     rep->nranks == 1 ? "" : "s",
		     count_kind(rep, "summary"), count_kind(rep, "trace"));
	if (rep->with_steps && n > 0 && (size_t)n < sizeof(ts->intro))
		snprintf(ts->intro + n, sizeof(ts->intro) - (size_t)n,
			 "; median step %s", rp_fmt_ns(w, T,
						      rep->steps_reference));
}

int rp_tables_build(const struct rp_report *rep, struct rp_tables *ts)
{
	size_t i;

	memset(ts, 0, sizeof(*ts));
	intro(rep, ts);
	rp_select_ranks(rep, ts);
	rp_overview_tables(rep, ts);
	t_ranks(rep, ts);
	t_names(rep, &ts->t[RP_T_NAMES]);
	t_detail(rep, ts);
	t_steps(rep, ts);
	rp_gpu_tables(rep, ts);
	rp_health_table(rep, ts);
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
