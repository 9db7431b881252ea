/* tprof report --html: the three kinds of chart.
 *
 * Histograms come from each rank's "hist" buckets as they are (the
 * layout is fixed, summary/hist.h), drawn as step outlines on a log time
 * axis. Step times and memory are drawn point by point; long step lists
 * are thinned to MAX_POINTS, keeping each group's longest step so that
 * a slow step still shows.
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
	char legend[64];
	size_t e;

	hist_range(rep, nm, &c);
	rp_chart_open(&c, "hist", "data-name", nm->name, nm->name);
	rp_chart_axes(&c, "duration (log scale)", "calls");
	for (e = 0; e < rep->nranks; e++) {
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
	char legend[64];
	size_t e;

	steps_range(rep, &c);
	rp_chart_open(&c, "steps", NULL, NULL, "Step time per rank");
	rp_chart_axes(&c, "step (kept steps, in order)", "step time");
	for (e = 0; e < rep->nranks; e++) {
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
	char legend[80];
	int64_t t0 = memory_range(rep, &c);
	size_t e, m;

	rp_chart_open(&c, "memory", NULL, NULL,
		      "Device memory in use per rank and device");
	rp_chart_axes(&c, "time since the earliest point", "allocated");
	for (e = 0; e < rep->nranks; e++) {
		r = rep->ranks[e];
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
}

/* One bar per rank with GPU activity: idle, compute and non-compute as
 * shares of its GPU span, left to right, on a 0-100 % axis. Each part is
 * <rect class="idle|compute|noncompute" data-rank="R" data-ns="N">. */
#define BAR_W 560.0
#define BAR_H 18.0
#define BAR_X 60.0

static void bar_part(struct tp_buf *b, const char *cls, const char *label,
		     double y, double *x, int64_t ns, int64_t span)
{
	double w = span > 0 ? BAR_W * (double)ns / (double)span : 0;

	rp_bprintf(b, "<rect class=\"%s\" data-rank=\"%s\" data-ns=\"%lld\" "
		   "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.0f\"/>\n",
		   cls, label, (long long)ns, *x, y, w, BAR_H);
	*x += w;
}

void rp_svg_breakdown(struct tp_buf *b, const struct rp_report *rep)
{
	const struct rp_gpu *g;
	size_t e, n = 0;
	double x, y;

	for (e = 0; e < rep->nranks; e++)
		n += (size_t)rep->ranks[e]->gpu.present;
	if (!n)
		return;
	rp_bprintf(b, "<svg class=\"breakdown\" xmlns=\"http://www.w3.org/2000/"
		   "svg\" width=\"%.0f\" height=\"%.0f\"><title>Temporal "
		   "breakdown per rank: idle (grey), compute (green), "
		   "non-compute (orange)</title>\n", BAR_X + BAR_W + 20,
		   (double)n * (BAR_H + 6) + 10);
	for (e = 0, y = 5; e < rep->nranks; e++) {
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
	tp_buf_lit(b, "</svg>\n");
}

/* x: time from the rank's first GPU activity to each part's middle;
 * y: the part's busy share, in %. One polyline per rank. */
void rp_svg_utilisation(struct tp_buf *b, const struct rp_report *rep)
{
	struct rp_chart c = {
		.b = b, .xfmt = rp_fmt_time_axis, .yfmt = rp_fmt_count_axis,
		.xmin = 0, .xmax = 1, .ymin = 0, .ymax = 100,
	};
	const struct rp_gpu *g;
	char legend[64];
	double part, busy;
	size_t e, i;

	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		if (g->present && g->nutil && (double)g->span_ns > c.xmax)
			c.xmax = (double)g->span_ns;
	}
	rp_chart_open(&c, "utilisation", NULL, NULL,
		      "GPU busy % over time per rank (100 parts of its GPU "
		      "span)");
	rp_chart_axes(&c, "time since the rank's first GPU activity",
		      "busy %");
	for (e = 0; e < rep->nranks; e++) {
		g = &rep->ranks[e]->gpu;
		if (!g->present || !g->nutil)
			continue;
		snprintf(legend, sizeof(legend), "rank %s",
			 rep->ranks[e]->label);
		rp_chart_series(&c, rep->ranks[e]->label, -1, legend);
		part = (double)g->span_ns / (double)g->nutil;
		for (i = 0; i < g->nutil; i++) {
			busy = part > 0 ? 100.0 * (double)g->util[i] / part : 0;
			rp_chart_point(&c, part * ((double)i + 0.5),
				       busy > 100 ? 100 : busy);
		}
		rp_chart_series_end(&c);
	}
	if (!c.nseries)
		rp_chart_note(&c, "no GPU activity in the traces read");
	rp_chart_close(&c);
}

/* Horizontal bars: one <rect class="bar" data-name=".." data-ns=".."> per
 * item, longest 100 % of the width, with its label and time. */
#define HB_MAX 20
#define HB_LABEL 300.0

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
		   "width=\"%.0f\" height=\"%.0f\"><title>", cls,
		   HB_LABEL + BAR_W + 100, (double)n * (BAR_H + 6) + 10);
	rp_xml_text(b, title);
	tp_buf_lit(b, "</title>\n");
	for (i = 0; i < n; i++) {
		w = top > 0 ? (double)(BAR_W * v[i].ns / top) : 0;
		rp_bprintf(b, "<text x=\"%.0f\" y=\"%.2f\" class=\"ty\">",
			   HB_LABEL - 6, 5 + i * (BAR_H + 6) + BAR_H - 5);
		rp_xml_text(b, v[i].label);
		tp_buf_lit(b, "</text>\n<rect class=\"bar\" data-name=\"");
		rp_xml_text(b, v[i].name);
		rp_bprintf(b, "\" data-ns=\"%.0Lf\" x=\"%.0f\" y=\"%.2f\" "
			   "width=\"%.2f\" height=\"%.0f\"/>\n<text x=\"%.2f\" "
			   "y=\"%.2f\">%s</text>\n", v[i].ns, HB_LABEL,
			   5 + i * (BAR_H + 6), w, BAR_H, HB_LABEL + w + 4,
			   5 + i * (BAR_H + 6) + BAR_H - 5,
			   rp_fmt_ns(t, sizeof(t), v[i].ns));
	}
	tp_buf_lit(b, "</svg>\n");
}

/* Kernels by their mean total over the ranks that ran them. */
void rp_svg_top_kernels(struct tp_buf *b, const struct rp_report *rep)
{
	struct hbar v[HB_MAX];
	size_t i, n = 0;

	for (i = 0; i < rep->nnames && i < RP_TOP_NAMES && n < HB_MAX; i++) {
		if (strcmp(rep->names[i].cat, "kernel"))
			continue;
		v[n].label = v[n].name = rep->names[i].name;
		v[n].ns = rep->names[i].mean_total;
		n++;
	}
	if (n)
		hbars(b, "kernels", "Top kernels by GPU time (mean total over "
		      "the ranks that ran them)", v, n);
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
		hbars(b, "ranges", "GPU time per annotated range", v, n);
}
