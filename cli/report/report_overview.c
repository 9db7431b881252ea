/* tprof report: one row per rank, right after the findings: its step,
 * its GPU's busy and idle time, computation, communication and the part
 * of it not overlapped, per step, and the findings about it. With many
 * ranks the per-rank tables list the slowest and the fastest, and a
 * distribution table gives every rank's figures as percentiles.
 *
 * Called by report_tables.c; calls the cell helpers (report_cells.c),
 * the formatting helpers and the findings' labels.
 */
#include "report_tables.h"
#include "findings/findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T 40	/* room for one formatted time */

void rp_select_ranks(const struct rp_report *rep, struct rp_tables *ts)
{
	size_t i, n = rep->nranks;

	ts->many = n > RP_ALL_RANKS;
	if (!ts->many) {
		for (i = 0; i < n; i++)
			ts->sel[i] = i;
		ts->nsel = n;
		return;
	}
	for (i = 0; i < RP_SLOWEST; i++)
		ts->sel[i] = rep->order[i];
	for (i = 0; i < RP_FASTEST; i++)
		ts->sel[RP_SLOWEST + i] = rep->order[n - RP_FASTEST + i];
	ts->nsel = RP_SLOWEST + RP_FASTEST;
	snprintf(ts->sel_note, sizeof(ts->sel_note), "Listed: the %d slowest "
		 "and the %d fastest of the %zu ranks (by step less waiting "
		 "in collectives), slowest first; the distribution table "
		 "covers every rank, and --json lists each.", RP_SLOWEST,
		 RP_FASTEST, n);
}

/* "12.000 ms (45.00%)": a time per step and its share of the step. */
static void time_pct(struct rp_table *t, long double ns, long double step)
{
	char a[T], b[T];

	rp_add_cell(t, "%s (%s)", rp_fmt_ns(a, T, ns),
		    rp_fmt_pct(b, T, llroundl(ns), llroundl(step)));
}

static void findings_cell(const struct rp_report *rep, struct rp_table *t,
			  const struct rp_rankm *m)
{
	struct tp_buf b = { 0 };
	const struct rp_finding *f;
	size_t i;

	for (i = 0; i < m->nfindings; i++) {
		f = &rep->fs->v[m->findings[i] - 1];
		rp_bprintf(&b, "%s#%zu %s", i ? "; " : "", f->id,
			   rp_fkind_label(f->kind));
	}
	tp_buf_char(&b, 0);
	rp_add_cell(t, "%s", b.oom ? "?" : b.p);
	tp_buf_free(&b);
}

/* Flagged: a finding about this rank, not about every rank. */
static int own_finding(const struct rp_report *rep, const struct rp_rankm *m)
{
	size_t i;

	for (i = 0; i < m->nfindings; i++)
		if (rep->fs->v[m->findings[i] - 1].nranks < rep->nranks)
			return 1;
	return 0;
}

static void t_overview(const struct rp_report *rep, struct rp_tables *ts)
{
	static const char *const head[] = {
		"rank", "step", "vs median", "GPU busy", "GPU idle",
		"computation", "communication", "not overlapped", "findings",
	};
	struct rp_table *t = &ts->t[RP_T_OVERVIEW];
	const struct rp_rankm *m;
	char w[4][T];
	size_t i, e, k;

	rp_table_init(t, "Ranks", head, "rrrrrrrrl");
	t->note = "Per step (per run for a rank without steps): the rank's "
		  "median step after its first ones (start-up), against "
		  "the median rank's; its GPU's busy and idle time, "
		  "computation, communication, and the communication no "
		  "computation overlapped (waiting in collectives shows "
		  "there), each the run's total divided by its steps.";
	t->sel_note = ts->many ? ts->sel_note : NULL;
	for (i = 0; i < ts->nsel; i++) {
		e = ts->sel[i];
		m = &rep->m[e];
		rp_add_cell(t, "%s", rep->ranks[e]->label);
		rp_add_cell(t, "%s", m->step > 0 ? rp_fmt_ns(w[0], T, m->step) :
			    "-");
		rp_add_cell(t, "%s", m->step > 0 && rep->ref.step > 0 ?
			    rp_fmt_diff(w[1], T, m->step - rep->ref.step) :
			    "-");
		if (m->has_gpu) {
			time_pct(t, m->busy, m->step);
			time_pct(t, m->idle, m->step);
			rp_add_cell(t, "%s", rp_fmt_ns(w[0], T, m->compute));
			rp_add_cell(t, "%s", rp_fmt_ns(w[1], T, m->comm));
			rp_add_cell(t, "%s", rp_fmt_ns(w[2], T, m->exposed));
		} else {
			for (k = 0; k < 5; k++)
				rp_add_cell(t, "-");
		}
		findings_cell(rep, t, m);
		rp_end_row(t, own_finding(rep, m));
	}
}

static int cmp_ld(const void *a, const void *b)
{
	long double x = *(const long double *)a, y = *(const long double *)b;

	return x < y ? -1 : x > y;
}

#define NCOLS 6
#define NPCT 5

/* Nearest-rank percentiles of each figure over the ranks that have it. */
static void t_dist(const struct rp_report *rep, struct rp_tables *ts,
		   long double *v)
{
	static const char *const head[] = {
		"", "step", "GPU busy", "GPU idle", "computation",
		"communication", "not overlapped",
	};
	static const unsigned pct[NPCT] = { 0, 10, 50, 90, 100 };
	static const char *const label[NPCT] = {
		"min", "p10", "median", "p90", "max",
	};
	struct rp_table *t = &ts->t[RP_T_DIST];
	const struct rp_rankm *m;
	size_t c, e, n[NCOLS], k, p;
	long double x;
	char w[T];

	rp_table_init(t, "Distribution over the ranks", head, "lrrrrrr");
	t->empty = "Every rank is listed in the Ranks table.";
	if (!ts->many)
		return;
	snprintf(t->note_buf, sizeof(t->note_buf), "Each figure of the Ranks "
		 "table over the %zu ranks that have it: nearest-rank "
		 "percentiles.", rep->nranks);
	t->note = t->note_buf;
	for (c = 0; c < NCOLS; c++) {
		long double *col = v + c * rep->nranks;

		n[c] = 0;
		for (e = 0; e < rep->nranks; e++) {
			m = &rep->m[e];
			if (c ? !m->has_gpu : m->step <= 0)
				continue;
			x = c == 0 ? m->step : c == 1 ? m->busy :
			    c == 2 ? m->idle : c == 3 ? m->compute :
			    c == 4 ? m->comm : m->exposed;
			col[n[c]++] = x;
		}
		qsort(col, n[c], sizeof(*col), cmp_ld);
	}
	for (p = 0; p < NPCT; p++) {
		rp_add_cell(t, "%s", label[p]);
		for (c = 0; c < NCOLS; c++) {
			if (!n[c]) {
				rp_add_cell(t, "-");
				continue;
			}
			k = pct[p] ? (n[c] * pct[p] + 99) / 100 - 1 : 0;
			rp_add_cell(t, "%s", rp_fmt_ns(w, T,
						       v[c * rep->nranks + k]));
		}
		rp_end_row(t, 0);
	}
}

void rp_overview_tables(const struct rp_report *rep, struct rp_tables *ts)
{
	long double *v = malloc((rep->nranks ? rep->nranks : 1) * NCOLS *
				sizeof(*v));

	t_overview(rep, ts);
	if (!v) {
		ts->oom = 1;
		return;
	}
	t_dist(rep, ts, v);
	free(v);
}
