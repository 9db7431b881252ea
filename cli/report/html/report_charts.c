/* tprof report --html: the three kinds of chart.
 *
 * Histograms come from each rank's "hist" buckets as they are (the
 * layout is fixed, summary/hist.h), drawn as step outlines on a log time
 * axis. Step times and memory are drawn point by point; long step lists
 * are thinned to MAX_POINTS, keeping each group's longest step so that
 * a slow step still shows. With many ranks a chart draws a few: the
 * slowest, the median and the fastest (rp_chart_ranks), and says so.
 *
 * Called by the page (report_html.c); calls only down, into the chart
 * primitives (report_svg.c), the escaping (report_xml.c), the
 * formatting helpers (report_fmt.c) and the histogram layout
 * (summary/hist.c).
 */
#include "report_charts.h"
#include "report_svg.h"
#include "report_xml.h"

#include <stdio.h>
#include <string.h>

#include "summary/hist.h"

#define MAX_POINTS 2000
/* Lines a chart draws: every rank up to CHART_ALL; past it the
 * CHART_SLOW slowest, the median and the CHART_FAST fastest. */
#define CHART_ALL 10
#define CHART_SLOW 5
#define CHART_FAST 2

size_t rp_chart_ranks(const struct rp_report *rep, size_t *sel)
{
	size_t i, n = rep->nranks, k = 0;

	if (n <= CHART_ALL) {
		for (i = 0; i < n; i++)
			sel[i] = i;
		return n;
	}
	for (i = 0; i < CHART_SLOW; i++)
		sel[k++] = rep->order[i];
	sel[k++] = rep->order[n / 2];
	for (i = n - CHART_FAST; i < n; i++)
		sel[k++] = rep->order[i];
	return k;
}

/* Under a chart of a few of many ranks: which. */
static void chart_sel_note(struct tp_buf *b, const struct rp_report *rep,
			   size_t nsel)
{
	if (nsel < rep->nranks)
		rp_bprintf(b, "<p class=\"note\">%zu of the %zu ranks: the %d "
			   "slowest, the median one and the %d fastest.</p>\n",
			   nsel, rep->nranks, CHART_SLOW, CHART_FAST);
}

static double bucket_lo(uint32_t b)
{
	return b ? (double)tp_hist_lower(b) : 0.5;	/* log axis: no 0 */
}

static double bucket_hi(uint32_t b)
{
	return (double)(tp_hist_lower(b) + tp_hist_width(b));
}

static void hist_range(const struct rp_report *rep, const struct rp_name *nm,
		       struct rp_chart *c)
{
	const struct rp_row *row;
	size_t e, k;

	c->xmin = 1e300;
	c->xmax = 0;
	c->ymin = 0;
	c->ymax = 1;
	for (e = 0; e < rep->nranks; e++) {
		row = nm->rows[e];
		for (k = 0; row && k < row->nhist; k++) {
			if (bucket_lo(row->hist[k].b) < c->xmin)
				c->xmin = bucket_lo(row->hist[k].b);
			if (bucket_hi(row->hist[k].b) > c->xmax)
				c->xmax = bucket_hi(row->hist[k].b);
			if ((double)row->hist[k].n > c->ymax)
				c->ymax = (double)row->hist[k].n;
		}
	}
	if (c->xmax <= c->xmin) {
		c->xmin = 1;
		c->xmax = 1e3;
	}
}

/* The outline of one rank's histogram, down to 0 between gaps. */
static void hist_series(struct rp_chart *c, const struct rp_row *row)
{
	double lo, hi, prev = -1, n;
	size_t k;

	for (k = 0; k < row->nhist; k++) {
		lo = bucket_lo(row->hist[k].b);
		hi = bucket_hi(row->hist[k].b);
		n = (double)row->hist[k].n;
		if (prev != lo) {
			if (prev >= 0)
				rp_chart_point(c, prev, 0);
			rp_chart_point(c, lo, 0);
		}
		rp_chart_point(c, lo, n);
		rp_chart_point(c, hi, n);
		prev = hi;
	}
	if (prev >= 0)
		rp_chart_point(c, prev, 0);
}

void rp_svg_hist(struct tp_buf *b, const struct rp_report *rep,
		 const struct rp_name *nm)
{
	struct rp_chart c = {
		.b = b, .logx = 1, .yint = 1, .xfmt = rp_fmt_time_axis,
		.yfmt = rp_fmt_count_axis,
	};
	const struct rp_row *row;
	size_t sel[CHART_ALL], nsel = rp_chart_ranks(rep, sel), i, e;
	char legend[64];

	hist_range(rep, nm, &c);
	rp_chart_open(&c, "hist", "data-name", nm->name, nm->name);
	rp_chart_axes(&c, "duration of one call (log scale)",
		      "calls per bucket");
	for (i = 0; i < nsel; i++) {
		e = sel[i];
		row = nm->rows[e];
		if (!row || !row->nhist)
			continue;
		snprintf(legend, sizeof(legend), "rank %s",
			 rep->ranks[e]->label);
		rp_chart_series(&c, rep->ranks[e]->label, RP_NONE, legend);
		hist_series(&c, row);
		rp_chart_series_end(&c);
	}
	if (!c.nseries)
		rp_chart_note(&c, "no histogram in the inputs");
	rp_chart_close(&c);
	chart_sel_note(b, rep, nsel);
}

static void steps_range(const struct rp_report *rep, struct rp_chart *c)
{
	const struct rp_rank *r;
	size_t e, i;

	c->xmin = 0;
	c->xmax = 1;
	c->ymin = 0;
	c->ymax = 1;
	for (e = 0; e < rep->nranks; e++) {
		r = rep->ranks[e];
		if (r->nsteps > 1 && (double)(r->nsteps - 1) > c->xmax)
			c->xmax = (double)(r->nsteps - 1);
		for (i = 0; i < r->nsteps; i++)
			if ((double)r->steps[i].dur > c->ymax)
				c->ymax = (double)r->steps[i].dur;
	}
}

static void steps_series(struct rp_chart *c, const struct rp_rank *r)
{
	size_t group = (r->nsteps + MAX_POINTS - 1) / MAX_POINTS, i, k;
	int64_t d;

	for (i = 0; i < r->nsteps; i += group) {
		d = r->steps[i].dur;
		for (k = i + 1; k < i + group && k < r->nsteps; k++)
			if (r->steps[k].dur > d)
				d = r->steps[k].dur;
		rp_chart_point(c, (double)i, (double)d);
	}
}

void rp_svg_steps(struct tp_buf *b, const struct rp_report *rep)
{
	struct rp_chart c = {
		.b = b, .xint = 1, .xfmt = rp_fmt_count_axis,
		.yfmt = rp_fmt_time_axis,
	};
	size_t sel[CHART_ALL], nsel = rp_chart_ranks(rep, sel), i, e;
	char legend[64];

	steps_range(rep, &c);
	rp_chart_open(&c, "steps", NULL, NULL, "Step time per rank");
	rp_chart_axes(&c, "step (the kept steps, in order)",
		      "step time (wall clock)");
	for (i = 0; i < nsel; i++) {
		e = sel[i];
		if (!rep->ranks[e]->nsteps)
			continue;
		snprintf(legend, sizeof(legend), "rank %s",
			 rep->ranks[e]->label);
		rp_chart_series(&c, rep->ranks[e]->label, RP_NONE, legend);
		steps_series(&c, rep->ranks[e]);
		rp_chart_series_end(&c);
	}
	if (!c.nseries)
		rp_chart_note(&c, "no steps in the inputs");
	rp_chart_close(&c);
	chart_sel_note(b, rep, nsel);
}

/* Times of all ranks on one axis: base time + ts, from the earliest. */
static int64_t abs_ts(const struct rp_rank *r, int64_t ts)
{
	return (r->base_ns == RP_NONE ? 0 : r->base_ns) + ts;
}

static int64_t memory_range(const struct rp_report *rep, struct rp_chart *c)
{
	const struct rp_rank *r;
	int64_t t0 = INT64_MAX, t1 = INT64_MIN, t;
	size_t e, m, i;

	c->ymin = 0;
	c->ymax = 1;
	for (e = 0; e < rep->nranks; e++) {
		r = rep->ranks[e];
		for (m = 0; m < r->nmem; m++)
			for (i = 0; i < r->mem[m].npts; i++) {
				t = abs_ts(r, r->mem[m].pts[i].ts);
				t0 = t < t0 ? t : t0;
				t1 = t > t1 ? t : t1;
				if ((double)r->mem[m].pts[i].bytes > c->ymax)
					c->ymax = (double)r->mem[m].pts[i].bytes;
			}
	}
	if (t0 > t1)
		t0 = t1 = 0;
	c->xmin = 0;
	c->xmax = t1 > t0 ? (double)(t1 - t0) : 1;
	return t0;
}

/* Memory holds its value until the next point: a step line. */
static void memory_series(struct rp_chart *c, const struct rp_rank *r,
			  const struct rp_mem *m, int64_t t0)
{
	double x;
	size_t i;

	for (i = 0; i < m->npts; i++) {
		x = (double)(abs_ts(r, m->pts[i].ts) - t0);
		if (i)
			rp_chart_point(c, x, (double)m->pts[i - 1].bytes);
		rp_chart_point(c, x, (double)m->pts[i].bytes);
	}
}

void rp_svg_memory(struct tp_buf *b, const struct rp_report *rep)
{
	struct rp_chart c = {
		.b = b, .xfmt = rp_fmt_time_axis, .yfmt = rp_fmt_bytes_axis,
	};
	const struct rp_rank *r;
	size_t sel[CHART_ALL], nsel = rp_chart_ranks(rep, sel), i, m;
	char legend[80];
	int64_t t0 = memory_range(rep, &c);

	rp_chart_open(&c, "memory", NULL, NULL,
		      "Device memory in use per rank and device");
	rp_chart_axes(&c, "time since the earliest point (wall clock)",
		      "allocated");
	for (i = 0; i < nsel; i++) {
		r = rep->ranks[sel[i]];
		for (m = 0; m < r->nmem; m++) {
			if (!r->mem[m].npts)
				continue;
			snprintf(legend, sizeof(legend), "rank %s GPU %lld",
				 r->label, (long long)r->mem[m].device);
			rp_chart_series(&c, r->label, r->mem[m].device, legend);
			memory_series(&c, r, &r->mem[m], t0);
			rp_chart_series_end(&c);
		}
	}
	if (!c.nseries)
		rp_chart_note(&c, "no device memory in the inputs");
	rp_chart_close(&c);
	chart_sel_note(b, rep, nsel);
}

/* One bar per rank with GPU activity: idle, compute and non-compute as
 * shares of its GPU span, left to right, on a 0-100 % axis, with a
 * legend. Each part is
 * <rect class="idle|compute|noncompute" data-rank="R" data-ns="N">. */
#define BW 1200.0	/* viewBox width */
#define BAR_X 110.0
#define BAR_W (BW - BAR_X - 30)
#define BAR_H 18.0
#define BAR_T 60.0	/* title and legend above the bars */

static void bar_part(struct tp_buf *b, const char *cls, const char *label,
		     double y, double *x, int64_t ns, int64_t span)
{
	double w = span > 0 ? BAR_W * (double)ns / (double)span : 0;

	rp_bprintf(b, "<rect class=\"%s\" data-rank=\"%s\" data-ns=\"%lld\" "
		   "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.0f\"/>\n",
		   cls, label, (long long)ns, *x, y, w, BAR_H);
	*x += w;
}

static void bar_legend(struct tp_buf *b)
{
	static const char *const cls[] = { "idle", "compute", "noncompute" };
	static const char *const what[] = {
		"idle", "computation",
		"non-compute: communication, copies and sets not under "
		"computation",
	};
	double x = BAR_X;
	int i;

	for (i = 0; i < 3; i++) {
		rp_bprintf(b, "<rect class=\"%s\" x=\"%.0f\" y=\"28\" "
			   "width=\"14\" height=\"14\"/><text x=\"%.0f\" "
			   "y=\"40\">%s</text>\n", cls[i], x, x + 18, what[i]);
		x += 18 + 7.0 * (double)strlen(what[i]) + 24;
	}
}

static void bar_axis(struct tp_buf *b, double y)
{
	double x;
	int i;

	for (i = 0; i <= 4; i++) {
		x = BAR_X + BAR_W * i / 4;
		rp_bprintf(b, "<line class=\"tk\" x1=\"%.1f\" y1=\"%.1f\" "
			   "x2=\"%.1f\" y2=\"%.1f\"/><text class=\"tx\" "
			   "x=\"%.1f\" y=\"%.1f\">%d %%</text>\n", x, y, x,
			   y + 4, x, y + 16, 25 * i);
	}
	rp_bprintf(b, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">share of "
		   "the rank's GPU span (its first GPU activity to its "
		   "last)</text>\n", BAR_X + BAR_W / 2, y + 32);
}

void rp_svg_breakdown(struct tp_buf *b, const struct rp_report *rep)
{
	size_t sel[CHART_ALL], nsel = rp_chart_ranks(rep, sel), i, e, n = 0;
	const struct rp_gpu *g;
	double x, y;

	for (i = 0; i < nsel; i++)
		n += (size_t)rep->ranks[sel[i]]->gpu.present;
	if (!n)
		return;
	rp_bprintf(b, "<svg class=\"breakdown\" xmlns=\"http://www.w3.org/2000/"
		   "svg\" width=\"100%%\" viewBox=\"0 0 %.0f %.0f\"><title>"
		   "Temporal breakdown per rank</title>\n<text class=\"ct\" "
		   "x=\"%.0f\" y=\"18\">Temporal breakdown per rank: where its "
		   "GPU span went</text>\n", BW,
		   BAR_T + (double)n * (BAR_H + 6) + 44, BAR_X);
	bar_legend(b);
	for (i = 0, y = BAR_T; i < nsel; i++) {
		e = sel[i];
		g = &rep->ranks[e]->gpu;
		if (!g->present)
			continue;
		rp_bprintf(b, "<text x=\"%.0f\" y=\"%.2f\" class=\"ty\">"
			   "rank %s</text>\n", BAR_X - 6, y + BAR_H - 5,
			   rep->ranks[e]->label);
		x = BAR_X;
		bar_part(b, "idle", rep->ranks[e]->label, y, &x, g->idle_ns,
			 g->span_ns);
		bar_part(b, "compute", rep->ranks[e]->label, y, &x,
			 g->compute_ns, g->span_ns);
		bar_part(b, "noncompute", rep->ranks[e]->label, y, &x,
			 g->non_compute_ns, g->span_ns);
		y += BAR_H + 6;
	}
	bar_axis(b, y);
	tp_buf_lit(b, "</svg>\n");
	chart_sel_note(b, rep, nsel);
}

/* Horizontal bars: one <rect class="bar" data-name=".." data-ns=".."> per
 * item, longest 100 % of the width, with its label and time. */
#define HB_MAX 20
#define HB_LABEL 420.0
#define HB_W (BW - HB_LABEL - 130)
#define HB_T 30.0

struct hbar {
	const char *label, *name;
	long double ns;
};

static void hbars(struct tp_buf *b, const char *cls, const char *title,
		  const struct hbar *v, size_t n)
{
	long double top = 0;
	char t[40];
	size_t i;
	double w;

	for (i = 0; i < n; i++)
		top = v[i].ns > top ? v[i].ns : top;
	rp_bprintf(b, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "width=\"100%%\" viewBox=\"0 0 %.0f %.0f\"><title>", cls, BW,
		   HB_T + (double)n * (BAR_H + 6) + 10);
	rp_xml_text(b, title);
	rp_bprintf(b, "</title>\n<text class=\"ct\" x=\"%.0f\" y=\"18\">",
		   HB_LABEL);
	rp_xml_text(b, title);
	tp_buf_lit(b, "</text>\n");
	for (i = 0; i < n; i++) {
		double y = HB_T + (double)i * (BAR_H + 6);

		w = top > 0 ? (double)(HB_W * v[i].ns / top) : 0;
		rp_bprintf(b, "<text x=\"%.0f\" y=\"%.2f\" class=\"ty\">",
			   HB_LABEL - 6, y + BAR_H - 5);
		rp_xml_text(b, v[i].label);
		tp_buf_lit(b, "</text>\n<rect class=\"bar\" data-name=\"");
		rp_xml_text(b, v[i].name);
		rp_bprintf(b, "\" data-ns=\"%.0Lf\" x=\"%.0f\" y=\"%.2f\" "
			   "width=\"%.2f\" height=\"%.0f\"/>\n<text x=\"%.2f\" "
			   "y=\"%.2f\">%s</text>\n", v[i].ns, HB_LABEL, y, w,
			   BAR_H, HB_LABEL + w + 4, y + BAR_H - 5,
			   rp_fmt_ns(t, sizeof(t), v[i].ns));
	}
	tp_buf_lit(b, "</svg>\n");
}

/* Kernels by their mean total over the ranks that ran them. */
void rp_svg_top_kernels(struct tp_buf *b, const struct rp_report *rep)
{
	struct hbar v[HB_MAX];
	size_t i, n = 0;

	for (i = 0; i < rep->nnames && i < rep->top && n < HB_MAX; i++) {
		if (strcmp(rep->names[i].cat, "kernel"))
			continue;
		v[n].label = v[n].name = rep->names[i].name;
		v[n].ns = rep->names[i].mean_total;
		n++;
	}
	if (n)
		hbars(b, "kernels", "Top kernels by GPU time (the mean over "
		      "the ranks that ran them of each one's total)", v, n);
}

/* The table's rows: per rank, its ranges by GPU time. */
void rp_svg_ranges(struct tp_buf *b, const struct rp_report *rep)
{
	char labels[HB_MAX][128];
	const struct rp_gpu *g;
	struct hbar v[HB_MAX];
	size_t e, i, n = 0;

	for (e = 0; e < rep->nranks && n < HB_MAX; e++) {
		g = &rep->ranks[e]->gpu;
		for (i = 0; g->present && i < g->nranges &&
			    i < RP_TOP_RANGES && n < HB_MAX; i++, n++) {
			snprintf(labels[n], sizeof(labels[n]), "rank %s: %.80s",
				 rep->ranks[e]->label, g->ranges[i].name);
			v[n].label = labels[n];
			v[n].name = g->ranges[i].name;
			v[n].ns = g->ranges[i].gpu_ns;
		}
	}
	if (n)
		hbars(b, "ranges", "GPU time per annotated range (the work "
		      "launched inside it)", v, n);
}
